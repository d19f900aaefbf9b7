// The embed build (embed/ beside the app): what the embed snippet points at.
// It opens share links and presets with the diagram, playback and captions,
// and has no editor, labs, lessons, exports or share-link writing.
import { test, expect } from '@playwright/test';
import { App } from './app';
import { ROOT, SUB, CSP, re } from '../ports';

const ABSENT = ['yaml-editor', 'lab-run', 'scale-run', 'lesson-select', 'export-svg', 'share-link', 'embed-snippet', 'scenario-select', 'rules-view'];

test('the embed code opens in the embed build on the same view: scenario, mode, packet and step', async ({ page, browser }) => {
  const app = new App(page);
  await app.openAndSend('loadbalancer-local', 'ipvs');
  await app.byId('step-back').click();
  await app.byId('step-back').click();
  const clock = await app.clock.innerText();
  const focused = await page.locator('[data-testid=packet].focused').getAttribute('data-id');
  const src = await app.embedSrc();
  expect(src).toMatch(new RegExp(`^${re(ROOT)}/embed/\\?lang=en#v1\\.`));

  const fresh = await (await browser.newContext({ viewport: { width: 720, height: 405 } })).newPage();
  const problems = App.watch(fresh);
  const embed = new App(fresh);
  await embed.open(src);
  await expect(embed.byId('share-error')).toHaveCount(0);
  await expect(embed.byId('app')).toHaveClass(/\bembed\b/);
  await expect(embed.clock).toHaveText(clock);
  await expect(fresh.locator('[data-testid=packet].focused')).toHaveAttribute('data-id', focused!);
  // The embed's caption says which hop (the card on
  // the diagram carries the hop's sentence).
  await expect(embed.byId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
  await expect(embed.byId('node-pipeline')).toHaveAttribute('data-mode', 'ipvs');
  for (const id of ABSENT) await expect(embed.byId(id), id).toHaveCount(0);
  // Playback works there: stepping moves the clock.
  await embed.byId('step-forward').click();
  await expect(embed.clock).not.toHaveText(clock);
  // It is a lighter build of its own, not the whole app behind a switch.
  const wasm = await fresh.locator('script[data-kpv-wasm]').getAttribute('data-kpv-wasm');
  expect(wasm).toMatch(/^\/embed\/kpv-web-[0-9a-f]+_bg\.wasm$/);
  expect(problems).toEqual([]);
});

test('a damaged share link in the embed build is reported and the default scenario stays', async ({ page }) => {
  const app = new App(page);
  await app.open('/embed/#v1.not-a-link');
  await expect(app.byId('share-error')).toBeVisible();
  await expect(page.getByTestId('service-alpaca-service')).toBeVisible();
});

test('under a sub-path the embed code points at the embed build under that path, and it opens', async ({ page }) => {
  const app = new App(page);
  await app.open(`${SUB}/docs/kpv/?scenario=nodeport`);
  const src = await app.embedSrc();
  expect(src).toBe(`${SUB}/docs/kpv/embed/?lang=en&scenario=nodeport&mode=iptables`);
  await page.goto('about:blank');
  await app.open(src);
  await expect(page.getByTestId('url-problems')).toHaveCount(0);
  await expect(app.byId('hop-caption')).toContainText('NodePort: a port on every node · iptables');
  for (const id of ABSENT) await expect(app.byId(id), id).toHaveCount(0);
  await app.byId('send-packet').click();
  await expect(page.getByTestId('packet')).toHaveCount(1);
});

for (const path of ['/embed/', '/docs/kpv/embed/']) {
  test(`the embed build runs under the strict Content-Security-Policy at ${path}`, async ({ page }) => {
    const problems = App.watch(page);
    const response = await page.goto(CSP + path + '?scenario=nodeport');
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval'");
    const app = new App(page);
    await expect(app.byId('diagram')).toBeVisible();
    await app.byId('send-packet').click();
    await expect(page.getByTestId('packet')).toHaveCount(1);
    expect(problems).toEqual([]);
  });
}

test('an embed follows the reader\'s colour scheme unless its code pins a theme', async ({ browser }) => {
  for (const [scheme, query, want] of [
    ['dark', '', 'dark'],
    ['light', '', 'light'],
    ['dark', '&theme=light', 'light'],
  ] as const) {
    const ctx = await browser.newContext({ viewport: { width: 720, height: 405 }, colorScheme: scheme });
    const page = await ctx.newPage();
    const app = new App(page);
    await app.open(`/embed/?scenario=nodeport${query}`);
    await expect(app.byId('app'), `${scheme} ${query}`).toHaveAttribute('data-theme', query ? 'light' : 'auto');
    // What the reader sees behind the diagram: the app's own background, else the page's.
    const bg = await page.evaluate(() => {
      const own = getComputedStyle(document.querySelector('[data-testid=app]')!).backgroundColor;
      return own === 'rgba(0, 0, 0, 0)' ? getComputedStyle(document.body).backgroundColor : own;
    });
    const dark = bg.match(/\d+/g)!.slice(0, 3).map(Number).reduce((a, b) => a + b, 0) < 3 * 128;
    expect(dark, `${scheme} ${query}: background ${bg}`).toBe(want === 'dark');
    // The system switching scheme switches an unpinned embed too.
    if (!query) {
      await page.emulateMedia({ colorScheme: scheme === 'dark' ? 'light' : 'dark' });
      await expect.poll(() => page.evaluate(() => {
        const own = getComputedStyle(document.querySelector('[data-testid=app]')!).backgroundColor;
        return own === 'rgba(0, 0, 0, 0)' ? 'light' : 'dark';
      })).toBe(scheme === 'dark' ? 'light' : 'dark');
    }
    await ctx.close();
  }
});

test('an embed fetches only the code of the mode it shows', async ({ page }) => {
  const asked: string[] = [];
  page.on('request', (r) => { if (/\/(split|chunk)_[^/]*\.wasm$/.test(r.url())) asked.push(r.url()); });
  const app = new App(page);
  await app.open('/embed/?scenario=nodeport&mode=ipvs');
  await app.byId('send-packet').click();
  await expect(page.getByTestId('packet')).toHaveCount(1);
  // Long past the idle prefetch of the whole app.
  await page.waitForTimeout(4_000);
  const modes = asked.filter((u) => /split_kpv_(ipvs|nftables|userspace)-/.test(u)).map((u) => u.replace(/.*split_kpv_([a-z]+)-.*/, '$1'));
  expect(modes).toEqual(['ipvs']);
});

test('an embed given lesson= says it shows no lessons, and shows its scenario', async ({ page }) => {
  const app = new App(page);
  await app.open('/embed/?lesson=readiness');
  await expect(app.byId('url-problems')).toContainText('lesson=readiness, but an embed shows no lessons');
  await expect(app.byId('diagram')).toBeVisible();
});
