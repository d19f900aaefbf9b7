// Checking a lesson answer stops at the hop that settles it (the endpoint's
// DNAT for "which Pod", the MASQUERADE for "which source address"), with
// the diagram, the caption and the pipeline on the first screen; and
// kpv-core's warnings about Pods and Nodes are marked on the diagram and in
// the editor's gutter, like a Service's.
import { test, expect, Page } from '@playwright/test';
import { App, inViewport } from './app';

const shots = 'artifacts/screens';

for (const [lesson, page_, step, words] of [
  ['services-basics', 1, 'KUBE-SEP', /DNAT|KUBE-SEP/],
  ['nodeport-loadbalancer', 1, 'POSTROUTING', /MASQUERADE|masquerade/i],
  // An HTTP lesson's request goes through the request form; the proxy's
  // own steps settle its questions.
  ['ingress', 1, 'rule', /Rule .* fits/],
  ['ingress', 3, 'listener', /TLS ends at the proxy/],
] as const) {
  test(`checking an answer in ${lesson} stops at the ${step} hop, diagram in view`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?lesson=${lesson}&page=${page_}&lang=en`);
    await page.getByTestId('lesson-choice').first().check();
    await page.getByTestId('lesson-check').click();
    await expect(page.getByTestId('lesson-result')).toBeVisible();
    // Stopped (not playing on) at the hop that settles the question.
    await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
    await expect(page.locator('[data-testid=pipeline-step][data-current=true]')).toHaveAttribute('data-step', step);
    await expect(page.getByTestId('hop-caption')).toHaveText(words);
    // The lesson card says which hop settled it, in the caption's words.
    const settled = page.getByTestId('lesson-settled');
    await expect(settled).toHaveText(words);
    const n = await settled.getAttribute('data-hop');
    await expect(page.locator('[data-testid=hop].current')).toHaveAttribute('data-n', n!);
    await expect(page.getByTestId('packet-card')).toBeVisible();
    for (const id of ['diagram', 'node-pipeline', 'lesson-result', 'lesson-settled', 'packet-card']) await inViewport(page, id);
    expect(await page.evaluate(() => document.scrollingElement!.scrollTop)).toBe(0);
    await page.screenshot({ path: `${shots}/settle-${lesson}.png` });
  });
}

const WARNED = `apiVersion: v1
kind: Node
metadata: {name: bare}
spec: {podCIDR: 10.244.1.0/24}
---
apiVersion: v1
kind: Node
metadata: {name: full}
spec: {podCIDR: 10.244.2.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.5.5}]}
---
apiVersion: v1
kind: Pod
metadata: {name: probed, labels: {app: a}}
spec:
  nodeName: full
  containers:
  - name: c
    ports: [{containerPort: 80}]
    readinessProbe: {httpGet: {path: /, port: http}}
---
apiVersion: v1
kind: Pod
metadata: {name: fine, labels: {app: a}}
spec: {nodeName: full, containers: [{name: c, ports: [{containerPort: 80}]}]}
`;

test('warnings about Pods and Nodes are marked on the diagram and in the gutter', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await page.evaluate((t) => {
    const area = document.querySelector('[data-testid=yaml-editor]') as HTMLTextAreaElement;
    area.value = t;
    area.dispatchEvent(new Event('input', { bubbles: true }));
  }, WARNED);
  await expect(app.byId('yaml-status')).toContainText(/⚠ 2 warnings/);
  // The gutter marks the two lines the warnings are at.
  const lines = await page.getByTestId('yaml-warning').evaluateAll((els) => els.map((e) => e.getAttribute('data-line')));
  const marked = await page.getByTestId('gutter-warning').allInnerTexts();
  expect(marked.map((t) => t.replace(/\D/g, '')).sort()).toEqual([...lines].sort());
  expect(lines).toContain('20');
  await app.byId('yaml-apply').click();
  await expect(app.byId('yaml-status')).toContainText(/Applied/);
  await expect(page.getByTestId('pod-probed')).toHaveAttribute('data-warning', /port `http`/);
  await expect(page.getByTestId('pod-probed').getByTestId('warning-mark')).toBeVisible();
  await expect(page.getByTestId('pod-fine').getByTestId('warning-mark')).toHaveCount(0);
  await expect(page.getByTestId('node-bare')).toHaveAttribute('data-warning', /status.addresses/);
  await expect(page.getByTestId('node-bare').getByTestId('warning-mark')).toBeVisible();
  await expect(page.getByTestId('node-full').getByTestId('warning-mark')).toHaveCount(0);
  // The Pod whose probe can never pass is not Ready.
  await expect(page.getByTestId('pod-probed')).toHaveAttribute('data-ready', 'false', { timeout: 20_000 });
  await page.getByTestId('diagram').screenshot({ path: `${shots}/warnings-pod-node.png` });
});

for (const lang of ['en', 'ko']) {
  test(`the compare view is on the first screen at 1280×720, legible, each mode with its rule count (${lang})`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?scenario=loadbalancer-cluster&lang=${lang}`);
    await app.send();
    await app.outcome();
    await inViewport(page, 'compare-toggle');
    await app.byId('compare-toggle').click();
    await expect(app.byId('compare-toggle')).toHaveAttribute('aria-pressed', 'true');
    const view = page.getByTestId('compare-view');
    await expect(view.getByTestId('compare-mode')).toHaveCount(4);
    await inViewport(page, 'compare-view');
    for (const m of await view.getByTestId('compare-mode').all()) {
      const b = (await m.boundingBox())!;
      expect(b.y).toBeGreaterThanOrEqual(0);
      expect(b.y + b.height).toBeLessThanOrEqual(720.5);
      await expect(m.getByTestId('compare-count')).toHaveText(/\d/);
      // Its whole pipeline fits its box (nothing cut off below).
      const clipped = await m.evaluate((el) => el.scrollHeight > el.clientHeight + 1);
      expect(clipped, `${await m.getAttribute('data-mode')} fits`).toBe(false);
    }
    const smallest = await view.evaluate((el) => {
      let min = Infinity;
      for (const e of Array.from(el.querySelectorAll('*'))) {
        const own = Array.from(e.childNodes).some((c) => c.nodeType === 3 && c.textContent!.trim());
        if (own) min = Math.min(min, parseFloat(getComputedStyle(e).fontSize));
      }
      return min;
    });
    expect(smallest, 'smallest text in the compare view').toBeGreaterThanOrEqual(12);
    // Play and the caption stay beside it; the clock drives every mode.
    for (const id of ['play-pause', 'hop-caption']) await inViewport(page, id);
    expect(await page.evaluate(() => document.scrollingElement!.scrollTop)).toBe(0);
    await page.screenshot({ path: `${shots}/compare-first-screen-${lang}.png` });
    await app.byId('compare-toggle').click();
    await expect(page.getByTestId('diagram')).toBeVisible();
  });
}
