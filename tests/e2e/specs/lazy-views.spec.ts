// The full app's parts below the first screen (Pods, exports, rules,
// endpoints, the editor, the labs) and the compare view are code loaded on
// first use: the first screen is drawn and works without them, the parts
// below are fetched once it is drawn, the compare view when asked for. A
// part whose file fails says so in both languages with a Retry that works,
// and the editor's text is never lost on the way.
import { test, expect, Page } from '@playwright/test';
import { App, MINE } from './app';

/** The split files of the parts (the modes' files are not among them). */
const PART_FILE = /\/split_kpv_(panels|exports|editor|labs|compare)-[0-9a-f]+\.wasm$/;
const partOf = (url: string) => PART_FILE.exec(new URL(url).pathname)?.[1] ?? null;


/** Record, in the page, when the diagram first appears. */
async function markDiagram(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __diagramAt?: number };
    new MutationObserver((_, obs) => {
      if (document.querySelector('[data-testid=diagram]')) {
        w.__diagramAt = performance.now();
        obs.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
}

test('the first screen is drawn and works with every part\'s file blocked; the parts below say what failed', async ({ page }) => {
  const asked = new Set<string>();
  await page.route(PART_FILE, (route) => {
    asked.add(partOf(route.request().url())!);
    return route.abort();
  });
  const app = new App(page);
  await page.goto('/?lang=en');
  await expect(app.byId('diagram')).toBeVisible();
  await app.send();
  expect(await app.outcome()).toBe('delivered');
  await expect(app.hops).not.toHaveCount(0);
  // Every part below the first screen was asked for without any scrolling,
  // and shows its error; the compare view was not asked for.
  const errors = page.getByTestId('lazy-error');
  // Six: the Pods, exports, rules, endpoints, editor and load-balancing lab
  // (the scaling lab opens in the diagram's place when asked for).
  await expect(errors).toHaveCount(6);
  expect([...asked].sort()).toEqual(['editor', 'exports', 'labs', 'panels']);
  await expect(page.getByTestId('lazy-loading')).toHaveCount(0);
  await expect(app.byId('yaml-editor')).toHaveCount(0);
});

test('the parts below are fetched after the diagram is drawn, appear on scrolling, and the compare view is fetched when asked for', async ({ page }) => {
  const problems = App.watch(page);
  await markDiagram(page);
  const app = new App(page);
  await app.open('/?lang=en');
  const seen = await page.evaluate(() => ({
    diagramAt: (window as unknown as { __diagramAt?: number }).__diagramAt ?? -1,
    files: performance.getEntriesByType('resource').map((e) => ({ name: e.name, start: e.startTime })),
  }));
  expect(seen.diagramAt).toBeGreaterThan(0);
  const parts = seen.files.filter((f) => partOf(f.name));
  expect(parts.map((f) => partOf(f.name)).sort()).toEqual(['editor', 'exports', 'labs', 'panels']);
  for (const f of parts) expect(f.start, `${f.name} asked for before the diagram was drawn`).toBeGreaterThanOrEqual(seen.diagramAt);

  // Each part is there on scrolling down, never a placeholder.
  const below = ['pod-', 'share-link', 'rules-view', 'endpoint-list', 'yaml-editor', 'lab-run'];
  for (const id of below) {
    // A Pod's row: its readiness button (`pod-<name>-readiness`).
    const sel = id === 'pod-' ? '[data-testid^="pod-"][data-testid$="-readiness"]' : `[data-testid="${id}"]`;
    const el = page.locator(sel).first();
    await el.scrollIntoViewIfNeeded();
    await expect(el).toBeVisible();
  }
  await expect(app.byId('rules-view')).toContainText('KUBE-SERVICES');

  // The compare view: fetched on request, once.
  await page.evaluate(() => window.scrollTo(0, 0));
  await app.byId('compare-toggle').click();
  await expect(app.byId('compare-view')).toBeVisible();
  await app.byId('compare-toggle').click();
  await expect(app.byId('diagram')).toBeVisible();
  await app.byId('compare-toggle').click();
  await expect(app.byId('compare-view')).toBeVisible();
  const compare = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
  expect(compare.filter((n) => partOf(n) === 'compare')).toHaveLength(1);
  expect(problems).toEqual([]);
});

for (const lang of ['en', 'ko'] as const) {
  test(`a part whose file fails says so (${lang}) with a Retry that loads it; the editor's text survives`, async ({ page }) => {
    const app = new App(page);
    // The user's own text, saved as the editor saves it.
    await app.open(`/?lang=${lang}`);
    await app.byId('yaml-editor').fill(MINE);
    await expect.poll(() => page.evaluate(() => localStorage.getItem('kpv.editor.v1'))).toContain('name: mine');

    let fail = true;
    await page.route(PART_FILE, (route) => (fail && partOf(route.request().url()) !== null ? route.abort() : route.continue()));
    await page.reload();
    await expect(app.byId('diagram')).toBeVisible();
    const error = page.locator('[data-testid=lazy-error][data-part=editor]');
    await expect(error).toBeVisible();
    await expect(error).toContainText(lang === 'en' ? 'could not be loaded' : '불러오지 못했습니다');
    await expect(error).toContainText(lang === 'en' ? 'Your manifests (YAML)' : '내 매니페스트 (YAML)');
    // Nothing can be typed into an editor that is not there; the stored text is kept.
    await expect(app.byId('yaml-editor')).toHaveCount(0);
    expect(await page.evaluate(() => localStorage.getItem('kpv.editor.v1'))).toContain('name: mine');
    await error.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `artifacts/screens/lazy-failed-${lang}.png` });

    // The compare view, asked for while its file fails.
    await page.evaluate(() => window.scrollTo(0, 0));
    await app.byId('compare-toggle').click();
    const compareError = page.locator('[data-testid=lazy-error][data-part=compare]');
    await expect(compareError).toBeVisible();
    await page.screenshot({ path: `artifacts/screens/lazy-compare-failed-${lang}.png` });

    fail = false;
    await compareError.getByTestId('lazy-retry').click();
    await expect(app.byId('compare-view')).toBeVisible();
    await app.byId('compare-toggle').click();
    await expect(app.byId('diagram')).toBeVisible();

    await error.getByTestId('lazy-retry').click();
    await expect(app.byId('yaml-editor')).toHaveValue(MINE);
    await expect(error).toHaveCount(0);
    // Retry in one place leaves the others to their own Retry, and each works.
    for (let i = 0; i < 10 && (await page.getByTestId('lazy-retry').count()) > 0; i++) {
      await page.getByTestId('lazy-retry').first().click();
      await expect(page.getByTestId('lazy-loading')).toHaveCount(0);
    }
    await expect(page.getByTestId('lazy-error')).toHaveCount(0);
    await expect(app.byId('rules-view')).toBeVisible();
    await expect(app.byId('lab-run')).toBeVisible();
    // The loaded editor is the one the user had: own text, saved, typed into.
    await app.byId('yaml-editor').fill(MINE + '# more\n');
    await expect.poll(() => page.evaluate(() => localStorage.getItem('kpv.editor.v1'))).toContain('# more');
  });
}
