// Manifests of the shapes people paste (tests/corpus/), pasted as a newcomer
// would: each applies, says each warning once, starts settled, and its first
// entry point delivers; from creation, the demo's frontend names why it has
// no endpoints yet.
import { test, expect } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { App } from './app';

const CORPUS = path.join(__dirname, '../../corpus');
const FILES = ['microservices', 'versions', 'guestbook', 'gateway-quickstart', 'ingress-tls', 'helm-output', 'ipv6-only'];

async function paste(app: App, name: string) {
  const text = fs.readFileSync(path.join(CORPUS, `${name}.yaml`), 'utf8');
  await app.open();
  await app.byId('yaml-editor').fill(text);
  await expect(app.byId('yaml-apply')).toBeEnabled({ timeout: 15_000 });
  await app.byId('yaml-apply').click();
  await expect(app.byId('yaml-error')).toHaveCount(0);
  return text;
}

for (const name of FILES) {
  test(`${name}: pasted, it applies, repeats no warning, and its first entry point delivers`, async ({ page }) => {
    const problems = App.watch(page);
    const app = new App(page);
    await paste(app, name);
    const warnings = await app.byId('yaml-warning').allInnerTexts();
    expect(new Set(warnings).size, warnings.join('\n')).toBe(warnings.length);
    expect(warnings.filter((w) => w.includes('supported kinds')).length).toBeLessThanOrEqual(1);
    await app.send();
    expect(await app.outcome(), await app.verdict.innerText()).toBe('delivered');
    expect(problems).toEqual([]);
  });
}

test('the microservice demo starts settled with an assumed load balancer; from creation its frontend says why it has no endpoints', async ({ page }) => {
  const app = new App(page);
  await paste(app, 'microservices');
  await expect(app.byId('load-balancer')).toContainText(/assumed/);
  // Settled: the storefront's first probe is at 10 s.
  await expect.poll(() => app.clockMs()).toBeGreaterThanOrEqual(11_000);
  await expect(app.byId('load-balancer')).toContainText(/203\.0\.113\./);
  const warnings = (await app.byId('yaml-warning').allInnerTexts()).join('\n');
  expect(warnings).toMatch(/ServiceAccount.*11 objects skipped/);
  expect(warnings).toMatch(/assuming 3 nodes: node-1/);
  // Pods spread over the three assumed nodes.
  for (const node of ['node-1', 'node-2', 'node-3']) {
    await expect(page.locator(`[data-testid="node-${node}"]`)).toHaveCount(1);
  }

  await app.byId('reset').click();
  expect(await app.clockMs()).toBe(0);
  await app.pause();
  await app.send();
  expect(await app.outcome()).toBe('rejected');
  const why = app.byId('verdict-why');
  await expect(why).toBeVisible();
  await expect(why).toContainText('storefront-public');
  await expect(why).toContainText(/initialDelaySeconds/);
  await expect(why).toContainText(/t = 11\.1 s/);
});

test('in Korean, the live chips on the demo\'s Services and Pods never cover their names: beside them, or below them in a narrow box', async ({ page }) => {
  const app = new App(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  const text = fs.readFileSync(path.join(CORPUS, 'microservices.yaml'), 'utf8');
  await app.open('/?lang=ko');
  await app.byId('yaml-editor').fill(text);
  await expect(app.byId('yaml-apply')).toBeEnabled({ timeout: 15_000 });
  await app.byId('yaml-apply').click();
  // From creation: the Pods' first probes pass and their Services' endpoints change.
  await app.byId('reset').click();
  await app.speed('4');
  await app.byId('play-pause').click();
  const chips = page.locator('[data-testid=endpoints-chip], [data-testid=probe-chip]');
  await expect(chips.first()).toBeVisible({ timeout: 20_000 });
  await app.pause();
  const overlaps = await page.evaluate(() => {
    const out: string[] = [];
    for (const chip of document.querySelectorAll('.live-chip')) {
      const owner = chip.getAttribute('data-owner');
      const kind = chip.getAttribute('data-testid');
      const box = document.querySelector(kind === 'probe-chip' ? `g[data-testid="pod-${owner}"]` : `g[data-testid="service-${owner}"]`);
      const name = box?.querySelector(kind === 'probe-chip' ? 'text.strong' : 'text.title');
      const rect = chip.querySelector('rect');
      const text = chip.querySelector('text');
      if (!name || !rect || !text) { out.push(`${owner}: no name or chip`); continue; }
      const [a, b, c] = [rect.getBoundingClientRect(), name.getBoundingClientRect(), text.getBoundingClientRect()];
      // Beside the name, or in a box too narrow for both, on the line below it.
      // (A text's box reaches below its baseline by the font's descent, 2 px or so.)
      if (a.left < b.right && b.left < a.right && a.top < b.bottom - 2 && b.top < a.bottom) out.push(`${owner}: chip over its name`);
      // The name keeps at least four characters (three and "…").
      if ([...name.textContent!].length < 4) out.push(`${owner}: name cut to "${name.textContent}"`);
      // The chip's words stay inside its own box.
      if (c.left < a.left - 0.5 || c.right > a.right + 0.5) out.push(`${owner}: "${text.textContent}" wider than its chip`);
    }
    return out;
  });
  expect(await chips.count()).toBeGreaterThan(0);
  expect(overlaps).toEqual([]);
});
