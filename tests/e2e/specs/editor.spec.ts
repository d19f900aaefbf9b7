// Bring your own YAML, embedding, and languages.
import { test, expect } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { App } from './app';
import { ROOT } from '../ports';

const SERVICE = `apiVersion: v1
kind: Node
metadata: {name: solo}
spec: {podCIDR: 10.244.9.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.7.7}]}
---
apiVersion: v1
kind: Pod
metadata: {name: echo-1, labels: {app: echo}}
spec: {nodeName: solo, containers: [{name: c, ports: [{containerPort: 5678}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  selector: {app: echo}
  ports:
  - port: 80
    targetPort: 5678
`;

test('a broken YAML shows its error line while the old diagram stays; fixed, it is drawn; reload keeps the text', async ({ page }) => {
  const app = new App(page);
  await app.open();
  const editor = app.byId('yaml-editor');
  const broken = SERVICE.replace('port: 80', 'port: 80800');
  await editor.fill(broken);
  const error = page.getByTestId('yaml-error');
  await expect(error).toHaveCount(1);
  await expect(error).toHaveAttribute('data-line', '18');
  await expect(error).toContainText('spec.ports[0].port');
  await expect(app.byId('yaml-apply')).toBeDisabled();
  // The previous scenario is still drawn.
  await expect(page.getByTestId('service-alpaca-service')).toBeVisible();

  await editor.fill(SERVICE);
  await expect(error).toHaveCount(0);
  await app.byId('yaml-apply').click();
  await expect(page.getByTestId('service-echo')).toBeVisible();
  await expect(page.getByTestId('pod-echo-1')).toBeVisible();
  await expect(page.getByTestId('service-alpaca-service')).toHaveCount(0);

  await page.reload();
  await expect(app.byId('yaml-editor')).toHaveValue(SERVICE);
});

test('a saved editor value this version cannot read is reported and kept until the user has downloaded or replaced it', async ({ page }) => {
  const unreadable = '{"version": 2, "yaml": ';
  await page.goto('/');
  await expect(page.getByTestId('diagram')).toBeVisible();
  await page.evaluate((v) => localStorage.setItem('kpv.editor.v1', v), unreadable);
  await page.reload();
  await expect(page.getByTestId('storage-notice')).toBeVisible();
  await expect(page.getByTestId('yaml-editor')).toHaveValue(/alpaca-prod/);
  // Starting the app did not overwrite it (it may be a newer version's text).
  expect(await page.evaluate(() => localStorage.getItem('kpv.editor.v1'))).toBe(unreadable);
  // Typing does not overwrite it silently: saving waits for the user's choice.
  await page.getByTestId('yaml-editor').fill(SERVICE);
  await expect(page.getByTestId('editor-held')).toBeVisible();
  await page.waitForTimeout(600);
  expect(await page.evaluate(() => localStorage.getItem('kpv.editor.v1'))).toBe(unreadable);
  // It can be downloaded as it was, then replaced.
  const download = page.waitForEvent('download');
  await page.getByTestId('stored-download').click();
  const file = await (await download).path();
  expect(fs.readFileSync(file!, 'utf8')).toBe(unreadable);
  await page.getByTestId('stored-replace').click();
  await expect(page.getByTestId('storage-notice')).toHaveCount(0);
  await expect.poll(() => page.evaluate(() => localStorage.getItem('kpv.editor.v1'))).toContain('echo-1');
});

test('the embed build shows only the diagram and playback, and ignores keys pressed outside it', async ({ page }) => {
  await page.setContent(`<html><body><p>docs page</p><input id="outside"><iframe id="kpv" src="${ROOT}/embed/?scenario=nodeport&mode=ipvs" style="width:800px;height:600px"></iframe></body></html>`);
  const frame = page.frameLocator('#kpv');
  await expect(frame.getByTestId('diagram')).toBeVisible();
  await expect(frame.getByTestId('yaml-editor')).toHaveCount(0);
  await expect(frame.getByTestId('rules-view')).toHaveCount(0);
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  await page.locator('#outside').focus();
  await page.keyboard.press(' ');
  await page.keyboard.press('ArrowRight');
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  await expect(page.locator('#outside')).toHaveValue(' ');
  // Keys inside the embedded visualizer work.
  await frame.getByTestId('app').focus();
  await page.keyboard.press(' ');
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'true');
});

test('in a 640×400 frame (the README snippet in a documentation column) the embed fits: one row of named icon buttons under the diagram', async ({ page }) => {
  await page.setViewportSize({ width: 640, height: 400 });
  await page.goto('/embed/?scenario=loadbalancer-local&step=3');
  const controls = ['play-pause', 'step-back', 'step-forward', 'restart', 'reset', 'speed', 'fullscreen', 'sim-clock'];
  const boxes = [];
  for (const id of controls) {
    const box = await page.getByTestId(id).boundingBox();
    expect(box, id).not.toBeNull();
    boxes.push(box!);
  }
  for (const [i, b] of boxes.entries()) {
    expect(b.y + b.height, controls[i]).toBeLessThanOrEqual(400);
    expect(b.x + b.width, controls[i]).toBeLessThanOrEqual(640);
    expect(Math.abs(b.y + b.height / 2 - (boxes[0].y + boxes[0].height / 2)), `${controls[i]} is on the first row`).toBeLessThan(6);
  }
  // The diagram takes the rest of the frame.
  const diagram = (await page.getByTestId('diagram').boundingBox())!;
  expect(diagram.height).toBeGreaterThan(300);
  // Names stay for screen readers and tooltips.
  await expect(page.getByRole('button', { name: 'Step back' })).toBeVisible();
  await expect(page.getByTestId('reset')).toHaveAttribute('title', /^Replay from the cluster's creation/);
  // A wide frame keeps the written labels.
  await page.setViewportSize({ width: 1000, height: 625 });
  await expect(page.getByTestId('step-back').locator('.btn-text')).toBeVisible();
});

test('an address value the app does not know is reported with how to fix it; the rest still applies', async ({ page }) => {
  // A documentation author's typo in an embed: the default scenario is shown,
  // but the author is told which parameter was ignored and what it accepts.
  await page.goto('/embed/?scenario=nodeport-local&mode=ipvs&theme=blue&utm_source=docs');
  const problems = page.getByTestId('url-problems').locator('li');
  await expect(problems).toHaveCount(2);
  await expect(problems.nth(0)).toHaveAttribute('data-param', 'scenario');
  await expect(problems.nth(0)).toContainText('scenario=nodeport-local');
  await expect(problems.nth(0)).toContainText('Use one of: alpaca-bandicoot, nodeport,');
  await expect(problems.nth(1)).toContainText('theme=blue');
  await expect(problems.nth(1)).toContainText('Use one of: auto, light, dark.');
  // The valid mode was taken, and the default scenario is drawn.
  await expect(page.getByTestId('mode-glyph').first()).toHaveAttribute('data-mode', 'ipvs');
  await expect(page.getByTestId('node-pipeline')).toHaveAttribute('data-mode', 'ipvs');
  await expect(page.getByTestId('service-alpaca-service')).toBeVisible();

  // The notice follows the language; a value shown is text, never markup.
  await page.goto('/?lang=ko&lesson=%3Cb%3Ex&page=two');
  await expect(page.getByTestId('url-problems').locator('li')).toHaveText([
    '페이지 주소의 lesson=<b>x 값은 알 수 없는 값이라 무시했습니다. 다음 중 하나를 쓰세요: services-basics, modes-compared, nodeport-loadbalancer, traffic-policy-local, readiness, external-database, ingress, gateway-api, kube-proxy-vs-cilium.',
    '페이지 주소의 page=two 값은 알 수 없는 값이라 무시했습니다. 1 이상의 정수를 쓰세요.',
  ]);

  // A page past the lesson's last names the lesson's range and opens its first page.
  await page.goto('/?lesson=readiness&page=9');
  await expect(page.getByTestId('url-problems')).toContainText('page=9');
  await expect(page.getByTestId('url-problems')).toContainText(/Use a whole number from 1 to \d+\./);
  await expect(page.getByTestId('lesson-progress')).toHaveText(/^Step 1 \/ \d+$/);

  // A correct address shows no notice.
  await page.goto('/?scenario=nodeport&mode=nftables');
  await expect(page.getByTestId('service-web')).toBeVisible();
  await expect(page.getByTestId('url-problems')).toHaveCount(0);
});

/** The English texts of the translation table (web/src/i18n/*.rs) that differ from their Korean. */
function englishTable(): string[] {
  // Every table of the full app: its own, HTTP routing's and its parts'.
  const src = ['i18n/mod.rs', 'i18n/http.rs', 'i18n/full.rs']
    .map((f) => fs.readFileSync(path.join(__dirname, '../../../web/src', f), 'utf8'))
    .join('\n');
  const rows: [string, string][] = [];
  const row = /\(\s*"([a-z0-9.-]+)",\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)",?\s*\)/g;
  for (let m = row.exec(src); m; m = row.exec(src)) rows.push([m[2], m[3]]);
  // Words the Korean texts themselves use (kinds such as Pod, IPVS, NodePort)
  // are technical terms, not English left behind.
  const korean = rows.map(([, ko]) => ko).join('\n');
  return rows
    .filter(([en, ko]) => en !== ko && /[a-z]{2}/.test(en))
    .map(([en]) => en)
    .filter((en) => !new RegExp(`(^|[^A-Za-z])${en.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^A-Za-z]|$)`).test(korean));
}

test('in Korean, no English UI string is left on screen', async ({ page }) => {
  const english = englishTable();
  expect(english.length).toBeGreaterThan(150);
  const app = new App(page);
  await app.open('/?lang=ko&lesson=readiness&page=2');
  await app.byId('lesson-play').or(app.byId('lesson-check')).first().isVisible();
  if (await app.byId('lesson-predict').count()) {
    await page.getByTestId('lesson-choice').first().check();
    await app.byId('lesson-check').click();
    await expect(app.byId('lesson-result')).toBeVisible();
  }
  await app.send();
  await app.outcome();
  await app.byId('lab-n').fill('50');
  await app.byId('lab-n').press('Tab');
  await app.byId('lab-run').click();
  await expect(app.byId('lab-progress-text')).toHaveText('50 / 50');
  await app.byId('share-link').click();
  const text = await page.evaluate(() => {
    const walker = document.createTreeWalker(document.querySelector('[data-testid=app]')!, NodeFilter.SHOW_TEXT);
    const out: string[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement!;
      // Rules, manifests, addresses and names are data, not UI strings; lesson
      // text is authored content (both languages are checked by kpv-core's tests,
      // and Korean prose keeps Kubernetes kinds such as Pod in English).
      if (el.closest('[data-testid=rules-view], textarea, .hop-addr, .mono, [data-content=lesson]')) continue;
      if (el.closest('option') && !(el.closest('select') as HTMLSelectElement).selectedOptions[0]?.contains(n)) continue;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden' || el.closest('.sr-only')) continue;
      out.push(n.textContent ?? '');
    }
    return out.join('\n');
  });
  for (const w of english) {
    const escaped = w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(text, `English "${w}" left on screen`).not.toMatch(new RegExp(`(^|[^A-Za-z])${escaped}([^A-Za-z]|$)`));
  }
  await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
  await page.screenshot({ path: 'artifacts/korean.png', fullPage: true });
});

test('a share link with a packet from a Pod its YAML does not have still opens, and says which Pod is missing', async ({ page }) => {
  const app = new App(page);
  const problems = App.watch(page);
  // The packet's origin is a Pod that does not exist: its trace has no hop.
  const state = {
    y: SERVICE, m: 'iptables', r: 1, v: 100, t: 2000, f: 0,
    p: [{ id: 0, at_ms: 0, request: { origin: { kind: 'pod', pod: { namespace: 'default', name: 'ghost' } },
      dst: { kind: 'name', value: 'echo' }, port: 80, protocol: 'TCP', src_port: 40000, keep_open: false }, seed: 1 }],
  };
  const link = 'v1.' + zlib.deflateRawSync(Buffer.from(JSON.stringify(state))).toString('base64url');
  await app.open('/#' + link);
  await expect(page.getByTestId('service-echo')).toBeVisible();
  await expect(app.byId('share-error')).toContainText('start from Pods its scenario does not have');
  await expect(app.byId('share-error')).toContainText('pod:default/ghost');
  await app.byId('play-pause').click();
  await page.waitForTimeout(500);
  await app.send();
  await expect(app.rules).toBeVisible();
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

const ZONES = `apiVersion: v1
kind: Node
metadata: {name: east-1, labels: {topology.kubernetes.io/zone: east}}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.7.1}]}
---
apiVersion: v1
kind: Node
metadata: {name: west-1, labels: {topology.kubernetes.io/zone: west}}
spec: {podCIDR: 10.244.2.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.7.2}]}
---
apiVersion: v1
kind: Pod
metadata: {name: api-east, labels: {app: api}}
spec: {nodeName: east-1, containers: [{name: c, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.244.1.5}
---
apiVersion: v1
kind: Pod
metadata: {name: api-west, labels: {app: api}}
spec: {nodeName: west-1, containers: [{name: c, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.244.2.5}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  trafficDistribution: PreferClose
  ports: [{port: 80, targetPort: 8080}]
`;

test('topology hints: zones on the nodes, hints in the EndpointSlice list, and each node\'s rules keep to its zone', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.byId('yaml-editor').fill(ZONES);
  await app.byId('yaml-apply').click();
  await expect(page.getByTestId('node-east-1')).toContainText('east · 10.244.1.0/24');
  await expect(page.locator('[data-testid=endpoint][data-ip="10.244.1.5"]')).toContainText('forZones: east');
  await expect(page.locator('[data-testid=endpoint][data-ip="10.244.2.5"]')).toContainText('forZones: west');
  await page.getByTestId('rules-node-east-1').click();
  await expect(page.getByTestId('rules-view')).toContainText('--to-destination 10.244.1.5:8080');
  await expect(page.getByTestId('rules-view')).not.toContainText('--to-destination 10.244.2.5:8080');
  await page.getByTestId('rules-node-west-1').click();
  await expect(page.getByTestId('rules-view')).toContainText('--to-destination 10.244.2.5:8080');
  await expect(page.getByTestId('rules-view')).not.toContainText('--to-destination 10.244.1.5:8080');
});

test('a scenario with nothing to send to says so, and Send is off until it has a Service', async ({ page }) => {
  await new App(page).open('/');
  const onlyPod = 'apiVersion: v1\nkind: Pod\nmetadata: {name: lonely, labels: {app: lonely}}\nspec: {containers: [{name: c, image: nginx, ports: [{containerPort: 80}]}]}\n';
  await page.getByTestId('yaml-editor').fill(onlyPod);
  await page.getByTestId('yaml-apply').click();
  await expect(page.getByTestId('verdict')).toContainText('Nothing to send to: no Service in this scenario has a port', { timeout: 10_000 });
  await expect(page.getByTestId('send-packet')).toBeDisabled();
  await expect(page.getByTestId('send-packet')).toHaveAttribute('title', /Nothing to send to/);
  // A Service with a port: Send works again.
  await page.getByTestId('yaml-editor').fill(`${onlyPod}---\napiVersion: v1\nkind: Service\nmetadata: {name: lonely}\nspec: {selector: {app: lonely}, ports: [{port: 80}]}\n`);
  await page.getByTestId('yaml-apply').click();
  await expect(page.getByTestId('send-packet')).toBeEnabled({ timeout: 10_000 });
  await expect(page.getByTestId('verdict')).toContainText('No packet sent yet');
});
