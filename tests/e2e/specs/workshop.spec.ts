// Share links, lessons, labs, exports and files: the workshop and docs journeys.
import { test, expect } from '@playwright/test';
import * as fs from 'fs';
import { App } from './app';
import { ROOT, SUB, re } from '../ports';

test('a share link opened in a fresh page shows the same scenario, packet and step', async ({ page, browser }) => {
  const app = new App(page);
  await app.openAndSend('loadbalancer-local', 'ipvs');
  await app.send();
  const outcome = await app.outcome();
  // Step back into the middle of the second packet's path.
  for (let i = 0; i < 3; i++) await app.byId('step-back').click();
  const clock = await app.clock.innerText();
  const currentIndex = (p: typeof page) => p.getByTestId('hop').evaluateAll((hs) => hs.findIndex((h) => h.getAttribute('aria-current') === 'step'));
  const current = await currentIndex(page);
  expect(current).toBeGreaterThan(0);
  const hopsBefore = await app.hops.count();
  const packetsBefore = await page.getByTestId('packet').count();
  const focusedBefore = await page.locator('[data-testid=packet].focused').getAttribute('data-id');
  await app.byId('share-link').click();
  const url = await app.byId('share-url').inputValue();
  expect(url).toMatch(new RegExp(`^${re(ROOT)}/#v1\\.`));
  // The author's own address is left alone: a reload there shows their work, not this moment.
  expect(page.url()).not.toContain('#v1.');

  const fresh = await (await browser.newContext()).newPage();
  const other = new App(fresh);
  await other.open(url);
  await expect(other.byId('scenario-select')).toHaveValue('loadbalancer-local');
  await expect(other.byId('mode-select')).toHaveValue('ipvs');
  await expect(other.clock).toHaveText(clock);
  await expect(other.hops).toHaveCount(hopsBefore);
  expect(await currentIndex(fresh)).toBe(current);
  await expect(fresh.getByTestId('packet')).toHaveCount(packetsBefore);
  await expect(fresh.locator('[data-testid=packet].focused')).toHaveAttribute('data-id', focusedBefore!);
  await expect(other.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  // And it plays on from there to the same outcome.
  await other.byId('play-pause').click();
  expect(await other.outcome()).toBe(outcome);
});

test('malformed or tampered share links are explained and the default scenario is shown', async ({ page }) => {
  const app = new App(page);
  const problems = App.watch(page);
  for (const [fragment, message] of [
    ['#v1.AAAA', /damaged or cut short/],
    ['#v1.%%%not-base64', /damaged or cut short/],
    ['#v7.abc', /not in a format/],
    ['#hello', /not in a format/],
  ] as const) {
    await page.goto('about:blank');
    await app.open('/' + fragment);
    await expect(app.byId('share-error')).toContainText(message);
    await expect(app.byId('scenario-select')).toHaveValue('alpaca-bandicoot');
    await expect(page.getByTestId('service-alpaca-service')).toBeVisible();
  }
  // A valid link whose scenario is broken is refused too.
  await app.open('/');
  await app.byId('share-link').click();
  const good = await app.byId('share-url').inputValue();
  const tampered = good.slice(0, -6) + (good.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA');
  await page.goto('about:blank');
  await app.open(tampered.replace(ROOT, ''));
  await expect(app.byId('share-error')).toBeVisible();
  await expect(page.getByTestId('service-alpaca-service')).toBeVisible();
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

test('a lesson opens by URL; its predict question is checked right and wrong against the trace', async ({ page }) => {
  const app = new App(page);
  await app.open('/?lesson=external-database');
  await expect(app.byId('lesson-select')).toHaveValue('external-database');
  await expect(app.byId('lesson-progress')).toContainText('1 / 2');
  await expect(app.byId('lesson-text')).toContainText('orders-db has no selector');
  // Wrong first: the orders Pods.
  await page.locator('[data-testid=lesson-choice][data-answer=spread]').check();
  await app.byId('lesson-check').click();
  await expect(app.byId('lesson-result')).toHaveAttribute('data-correct', 'false');
  await expect(app.byId('lesson-result')).toContainText('To the database outside the cluster');
  // The packets the answer is checked against stop at the hop that settles
  // it (the DNAT to the database); played on, they are answered.
  await expect(app.byId('lesson-settled')).toContainText('172.16.5.20:5432');
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  await app.byId('play-pause').click();
  expect(await app.outcome()).toBe('delivered');
  await expect(app.verdict).toContainText('172.16.5.20:5432');
  // Right.
  await page.locator('[data-testid=lesson-choice][data-answer=outside-cluster]').check();
  await expect(app.byId('lesson-result')).toHaveCount(0);
  await app.byId('lesson-check').click();
  await expect(app.byId('lesson-result')).toHaveAttribute('data-correct', 'true');
  // Next and previous, with the page in the address.
  await app.byId('lesson-next').click();
  await expect(app.byId('lesson-progress')).toContainText('2 / 2');
  await expect(app.byId('lesson-next')).toBeDisabled();
  expect(page.url()).toContain('lesson=external-database&page=2');
  await app.byId('lesson-prev').click();
  await expect(app.byId('lesson-progress')).toContainText('1 / 2');
  // A page number in the URL opens that step; in Korean, the lesson is Korean.
  await app.open('/?lesson=readiness&page=2&lang=ko');
  await expect(app.byId('lesson-progress')).toContainText('2 /');
  await expect(app.byId('lesson-text')).toContainText(/[가-힣]/);
  await app.byId('lesson-close').click();
  await expect(app.byId('lesson-text')).toHaveCount(0);
});

test('every lesson step can be played or checked without errors', async ({ page }) => {
  const app = new App(page);
  const problems = App.watch(page);
  await app.open();
  const ids = await app.byId('lesson-select').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter((v) => v));
  expect(ids.length).toBeGreaterThanOrEqual(6);
  for (const id of ids) {
    await app.byId('lesson-select').selectOption(id);
    await app.loaded();
    for (;;) {
      if (await app.byId('lesson-predict').count()) {
        await page.getByTestId('lesson-choice').first().check();
        await app.byId('lesson-check').click();
        await expect(app.byId('lesson-result')).toBeVisible();
      } else {
        await app.byId('lesson-play').click();
      }
      await expect(page.getByTestId('packet').first()).toBeAttached();
      if (await app.byId('lesson-next').isDisabled()) break;
      await app.byId('lesson-next').click();
    }
  }
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

test('the load-balancing lab measures round robin exactly and iptables near a third', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.selectMode('ipvs');
  await app.byId('scheduler-select').selectOption('rr');
  await app.selectTarget(/alpaca-service — ClusterIP/);
  await app.byId('lab-n').fill('300');
  await app.byId('lab-n').press('Tab');
  await app.byId('lab-run').click();
  await expect(app.byId('lab-progress-text')).toHaveText('300 / 300', { timeout: 30_000 });
  const bars = page.getByTestId('lab-bar');
  await expect(bars).toHaveCount(3);
  expect(await bars.evaluateAll((bs) => bs.map((b) => b.getAttribute('data-count')))).toEqual(['100', '100', '100']);
  await expect(app.byId('lab-expectation')).toContainText('IPVS rr');

  await app.selectMode('iptables');
  await app.byId('lab-n').fill('3000');
  await app.byId('lab-n').press('Tab');
  await app.byId('lab-run').click();
  await expect(app.byId('lab-progress-text')).toHaveText('3000 / 3000', { timeout: 60_000 });
  const counts = (await bars.evaluateAll((bs) => bs.map((b) => Number(b.getAttribute('data-count')))));
  expect(counts.length).toBe(3);
  expect(counts.reduce((a, b) => a + b, 0)).toBe(3000);
  for (const c of counts) expect(c).toBeGreaterThan(850);
  // Seeded: the same seed gives the same chart.
  await app.byId('lab-run').click();
  await expect(app.byId('lab-progress-text')).toHaveText('3000 / 3000', { timeout: 60_000 });
  expect(await bars.evaluateAll((bs) => bs.map((b) => Number(b.getAttribute('data-count'))))).toEqual(counts);
});

test('the scaling lab computes real rulesets in slices, with progress, and the page stays responsive', async ({ page }) => {
  test.setTimeout(180_000);
  const app = new App(page);
  const problems = App.watch(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  await app.open();
  // Reached from the first screen: the lab takes the diagram's place.
  await app.byId('scale-toggle').click();
  await expect(app.byId('diagram')).toHaveCount(0);
  await app.byId('lab-endpoints').selectOption('2');
  await app.byId('scale-run').click();
  // While it computes, the page answers (slices between frames).
  const t0 = Date.now();
  await app.byId('send-packet').click();
  expect(Date.now() - t0).toBeLessThan(2_000);
  const rows = page.getByTestId('scale-row');
  await expect(app.byId('scale-progress-text')).toHaveText('21 / 21', { timeout: 120_000 });
  await expect(rows).toHaveCount(21);
  await expect(app.byId('scale-run')).toBeEnabled();
  const table = await rows.evaluateAll((rs) => rs.map((r) => ({
    mode: r.getAttribute('data-mode'), n: Number(r.getAttribute('data-services')),
    compared: Number(r.getAttribute('data-compared')), rules: Number(r.getAttribute('data-rules')),
  })));
  const at = (mode: string, n: number) => table.find((r) => r.mode === mode && r.n === n)!;
  // iptables compares more rules as Services grow; IPVS and nftables do not.
  expect(at('iptables', 300).compared).toBeGreaterThan(at('iptables', 10).compared * 10);
  expect(at('ipvs', 300).compared).toBe(at('ipvs', 10).compared);
  expect(at('nftables', 300).compared).toBe(at('nftables', 10).compared);
  for (const mode of ['iptables', 'ipvs', 'nftables']) expect(at(mode, 10_000).rules).toBeGreaterThan(at(mode, 10).rules * 500);
  // iptables walks KUBE-SERVICES: the last of 10,000 Services is compared after ~10,000 rules.
  expect(at('iptables', 10_000).compared).toBeGreaterThan(10_000);
  // The charts: plain numbers on both axes (10,000, not 1e4), titles and
  // numbers 16 px or more on screen, all on the first screen.
  const texts = await page.locator('.scale-chart text').allTextContents();
  expect(texts).toContain('10,000');
  expect(texts.filter((t) => /e\d/.test(t))).toEqual([]);
  const smallest = await page.locator('.scale-chart').evaluateAll((figs) => Math.min(...figs.flatMap((f) => {
    const svg = f.querySelector('svg')!;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const caption = parseFloat(getComputedStyle(f.querySelector('figcaption')!).fontSize);
    return [caption, ...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)];
  })));
  expect(smallest).toBeGreaterThanOrEqual(16);
  for (const id of ['scale-compared', 'scale-rules']) await expect(app.byId(id)).toBeInViewport();
  // And back to the diagram.
  await app.byId('scale-toggle').click();
  await expect(app.byId('diagram')).toBeVisible();
  await app.byId('scale-toggle').click();
  // Stop halts a run part-way.
  await app.byId('scale-run').click();
  await app.byId('scale-stop').click();
  await expect(app.byId('scale-run')).toBeEnabled();
  await page.waitForTimeout(1_000);
  const stoppedAt = await app.byId('scale-progress-text').innerText();
  await page.waitForTimeout(1_000);
  await expect(app.byId('scale-progress-text')).toHaveText(stoppedAt);
  // Back to the diagram mid-run: the run ends with its view, and the app goes on.
  await app.byId('scale-run').click();
  await app.byId('scale-toggle').click();
  await page.waitForTimeout(1_000);
  await app.send();
  expect(await app.outcome()).toBe('delivered');
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

test('the diagram exports as SVG and PNG, and the embed button writes an iframe for this view', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.send();
  await app.outcome();
  const [svg] = await Promise.all([page.waitForEvent('download'), app.byId('export-svg').click()]);
  expect(svg.suggestedFilename()).toBe('kube-proxy-diagram.svg');
  const text = fs.readFileSync(await svg.path(), 'utf8');
  expect(text).toMatch(/^<\?xml/);
  expect(text).toContain('xmlns="http://www.w3.org/2000/svg"');
  expect(text).toContain('alpaca-service');
  expect(text).not.toContain('class="');
  expect(text).toMatch(/fill="rgb\(/);
  const [png] = await Promise.all([page.waitForEvent('download'), app.byId('export-png').click()]);
  expect(png.suggestedFilename()).toBe('kube-proxy-diagram.png');
  const bytes = fs.readFileSync(await png.path());
  expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(bytes.length).toBeGreaterThan(10_000);

  await app.byId('embed-snippet').click();
  const code = await app.byId('embed-code').inputValue();
  expect(code).toMatch(new RegExp(`^<iframe src="${re(ROOT)}/embed/\\?lang=en#v1\\.`));
  // A pristine preset is named in the query instead.
  await app.byId('reset').click();
  await app.selectScenario('nodeport');
  await app.byId('embed-snippet').click();
  await expect(app.byId('embed-code')).toHaveValue(/\/embed\/\?lang=en&amp;scenario=nodeport&amp;mode=iptables"/);
  // The iframe's title names its scenario; a theme is pinned only when picked.
  const title = await app.byId('scenario-select').locator('option:checked').innerText();
  await expect(app.byId('embed-code')).toHaveValue(new RegExp(`title="kube-proxy visualizer: ${re(title)}"`));
  await app.byId('theme-select').selectOption('dark');
  await app.byId('embed-snippet').click();
  await expect(app.byId('embed-code')).toHaveValue(/\?lang=en&amp;theme=dark&amp;scenario=nodeport/);
  // An IPVS scheduler other than the scenario's travels in a share link
  // (the query form names no scheduler), and the embed plays with it.
  await app.selectMode('ipvs');
  await app.byId('scheduler-select').selectOption('sh');
  const src = await app.embedSrc();
  expect(src).toContain('#v1.');
  expect(src).not.toContain('scenario=nodeport');
  // The same link opened in the full app shows what it carries.
  await page.goto(src.replace('/embed/', '/'));
  await expect(page.getByTestId('scheduler-select')).toHaveValue('sh', { timeout: 20_000 });
  await expect(page.getByTestId('mode-select')).toHaveValue('ipvs');
});

test('under a sub-path, share links and embed code keep the path', async ({ page }) => {
  const app = new App(page);
  await app.open(`${SUB}/docs/kpv/`);
  await app.byId('share-link').click();
  expect(await app.byId('share-url').inputValue()).toMatch(new RegExp(`^${re(SUB)}/docs/kpv/#v1\\.`));
  const url = await app.byId('share-url').inputValue();
  await page.goto('about:blank');
  await app.open(url);
  await expect(app.byId('share-error')).toHaveCount(0);
});

test('a file opened into the editor replaces the text, can be undone, and a non-UTF-8 file is refused', async ({ page }) => {
  const app = new App(page);
  await app.open();
  const editor = app.byId('yaml-editor');
  // The user's own text is what Restore brings back (a preset can be loaded again).
  await editor.fill('# my own notes\n' + (await editor.inputValue()));
  const before = await editor.inputValue();
  const yaml = 'apiVersion: v1\nkind: Service\nmetadata: {name: from-file}\nspec:\n  ports: [{port: 80}]\n';
  await app.byId('yaml-file').setInputFiles({ name: 'svc.yaml', mimeType: 'application/yaml', buffer: Buffer.from(yaml) });
  await expect(editor).toHaveValue(yaml);
  await app.byId('yaml-restore').click();
  await expect(editor).toHaveValue(before);
  await app.byId('yaml-file').setInputFiles({ name: 'latin1.yaml', mimeType: 'application/yaml', buffer: Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]) });
  await expect(app.byId('file-error')).toContainText('latin1.yaml: the file is not UTF-8 text (at byte 3)');
  await expect(editor).toHaveValue(before);
  // Dropping a file on the editor works like opening it.
  const dt = await page.evaluateHandle((text) => {
    const d = new DataTransfer();
    d.items.add(new File([text], 'dropped.yaml', { type: 'application/yaml' }));
    return d;
  }, yaml.replace('from-file', 'dropped'));
  await page.locator('.editor').dispatchEvent('drop', { dataTransfer: dt });
  await expect(editor).toHaveValue(/name: dropped/);
});

test('full screen shows the diagram with its playback bar', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.byId('fullscreen').click();
  // The first screen goes full screen: the diagram with the controls beside it.
  await expect.poll(() => page.evaluate(() => document.fullscreenElement?.className ?? '')).toContain('first-screen');
  await expect(app.byId('fullscreen')).toHaveAttribute('aria-pressed', 'true');
  await expect(app.byId('play-pause')).toBeVisible();
  await expect(app.byId('diagram')).toBeVisible();
  await page.screenshot({ path: 'artifacts/fullscreen.png' });
  await app.byId('fullscreen').click();
  await expect.poll(() => page.evaluate(() => document.fullscreenElement === null)).toBe(true);
});

test('on a 1024×768 projector and narrower screens, with large text too, nothing is wider than the window', async ({ page }) => {
  for (const [width, large] of [[1024, false], [1024, true], [800, false], [420, false]] as [number, boolean][]) {
    await page.setViewportSize({ width, height: 768 });
    await page.goto('/?scenario=loadbalancer-local');
    await expect(page.getByTestId('diagram')).toBeVisible();
    if (large) await page.getByTestId('large-text').check();
    const [scroll, right] = await page.evaluate(() => [
      document.documentElement.scrollWidth,
      document.querySelector('[data-testid=diagram]')!.getBoundingClientRect().right,
    ]);
    expect(scroll, `page width at ${width} px${large ? ', large text' : ''}`).toBeLessThanOrEqual(width);
    expect(right, `diagram's right edge at ${width} px`).toBeLessThanOrEqual(width);
  }
});

test('projected at 1920×1080 in full screen, the side column\'s caption, controls and hop list are 18 px or more', async ({ page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=en');
  await app.byId('fullscreen').click();
  await expect.poll(() => page.evaluate(() => document.fullscreenElement?.className ?? '')).toContain('first-screen');
  await app.send();
  await app.pause();
  for (let i = 0; i < 8; i++) await app.byId('step-forward').click();
  const small = await page.evaluate(() => {
    const out: string[] = [];
    for (const el of document.querySelectorAll('.side *')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || r.bottom < 0 || r.top > innerHeight) continue;
      if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent!.trim())) continue;
      const px = parseFloat(getComputedStyle(el).fontSize);
      if (px < 18) out.push(`${px.toFixed(1)} px: ${el.tagName.toLowerCase()}.${el.className} "${el.textContent!.trim().slice(0, 30)}"`);
    }
    return out;
  });
  expect(small).toEqual([]);
});
