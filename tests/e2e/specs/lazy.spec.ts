// Every mode is a file of its own in the release build, fetched on first
// use. While the mode in use is on its way the diagram, the caption and the
// rules say so and nothing is computed without it; when it cannot come the
// reader is told, in their language, with a Retry, and nothing else
// changes. An iptables page fetches only the iptables file as it starts;
// the others are prefetched once the first screen is drawn.
import { test, expect, Page, Route } from '@playwright/test';
import { App } from './app';

const shots = 'artifacts/screens';
const IPVS = '**/split_kpv_ipvs-*.wasm';
const NFT = '**/split_kpv_nftables-*.wasm';

/** Hold every request to `pattern` until the returned function is called. */
async function hold(page: Page, pattern: string): Promise<() => void> {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => { release = resolve; });
  await page.route(pattern, async (route: Route) => { await held; await route.continue(); });
  return release;
}

/** Record, from the first script on, every text the rules view and the
 * verdict ever show, and when the diagram is first in the page. */
async function record(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __rules: string[]; __outcomes: string[]; __diagramAt: number };
    w.__rules = [];
    w.__outcomes = [];
    w.__diagramAt = -1;
    new MutationObserver(() => {
      if (w.__diagramAt < 0 && document.querySelector('[data-testid=diagram]')) w.__diagramAt = performance.now();
      const rules = document.querySelector('[data-testid=rules-view]');
      const text = rules?.textContent ?? '';
      if (rules && w.__rules[w.__rules.length - 1] !== text) w.__rules.push(text);
      const outcome = document.querySelector('[data-testid=verdict]')?.getAttribute('data-outcome') ?? '';
      if (outcome && w.__outcomes[w.__outcomes.length - 1] !== outcome) w.__outcomes.push(outcome);
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

for (const lang of ['en', 'ko'] as const) {
  test(`?mode=ipvs says it is loading the mode (${lang}), then shows IPVS rules and a trace through IPVS, nothing in between`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await record(page);
    const release = await hold(page, IPVS);
    await page.goto(`/?mode=ipvs&step=3&lang=${lang}`);
    const loading = page.getByTestId('mode-loading');
    await expect(loading).toBeVisible();
    await expect(loading).toContainText(lang === 'en' ? 'Loading the IPVS mode' : 'IPVS 모드를 불러오는 중');
    await expect(page.getByTestId('rules-mode-loading')).toBeVisible();
    await expect(page.getByTestId('mode-select')).toHaveAttribute('aria-busy', 'true');
    await expect(page.getByTestId('mode-busy')).toBeVisible();
    expect((await page.getByTestId('mode-busy').boundingBox())!.width).toBeGreaterThan(10);
    await expect(page.getByTestId('hop-caption')).toContainText(lang === 'en' ? 'Loading the IPVS mode' : 'IPVS 모드를 불러오는 중');
    // Nothing is traced or drawn from a mode without its code.
    await expect(page.getByTestId('packet')).toHaveCount(0);
    await expect(page.getByTestId('rules-view')).not.toContainText('*nat');
    await page.screenshot({ path: `${shots}/lazy-mode-loading-${lang}.png` });

    release();
    await expect(loading).toHaveCount(0);
    await expect(page.getByTestId('rules-view')).toContainText('ipvsadm');
    await expect(page.getByTestId('mode-select')).toHaveAttribute('aria-busy', 'false');
    await expect(page.getByTestId('node-pipeline')).toHaveAttribute('data-mode', 'ipvs');
    // The address's step=3 is applied once the trace exists.
    await expect(page.getByTestId('hop-caption')).toContainText(lang === 'en' ? 'Hop 3 of' : '단계 중 3단계');
    await page.getByTestId('play-pause').click();
    const app = new App(page);
    expect(await app.outcome()).toBe('delivered');
    await expect(page.locator('[data-testid=pipeline-step][data-step^=ipvs-]').first()).toBeAttached();

    const seen = await page.evaluate(() => {
      const w = window as unknown as { __rules: string[]; __outcomes: string[] };
      return { rules: w.__rules, outcomes: w.__outcomes };
    });
    // Every text the rules view showed: nothing, or IPVS's (never an empty
    // ruleset's "no rules" nor iptables').
    for (const text of seen.rules) expect(text === '' || text.includes('ipvsadm'), text.slice(0, 80)).toBe(true);
    expect(seen.rules.some((t) => t.includes('ipvsadm'))).toBe(true);
    // The packet was never shown with another outcome on the way.
    for (const o of seen.outcomes) expect(['empty', 'in-flight', 'delivered']).toContain(o);
  });

  test(`a mode whose code cannot come is explained (${lang}) with a Retry; the editor text stays; after Retry the mode works`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    let fail = true;
    await page.route(IPVS, (route) => (fail ? route.abort('internetdisconnected') : route.continue()));
    const app = new App(page);
    await app.open(`/?lang=${lang}`);
    const editor = app.byId('yaml-editor');
    await editor.fill((await editor.inputValue()) + '\n# my own note\n');
    const typed = await editor.inputValue();
    await app.selectMode('ipvs');
    const error = app.byId('mode-error');
    await expect(error).toBeVisible();
    await expect(error).toContainText(lang === 'en' ? 'The IPVS mode did not load' : 'IPVS 모드를 불러오지 못했습니다');
    await expect(app.byId('rules-mode-error')).toBeVisible();
    await expect(app.byId('mode-loading')).toHaveCount(0);
    await expect(app.byId('mode-select')).toHaveValue('ipvs');
    // Sending waits: no packet runs through a mode that is not there.
    await app.send();
    await page.waitForTimeout(300);
    await expect(page.getByTestId('packet')).toHaveCount(0);
    await page.screenshot({ path: `${shots}/lazy-mode-error-${lang}.png` });

    fail = false;
    await app.byId('mode-retry').first().click();
    await expect(error).toHaveCount(0);
    await expect(app.rules).toContainText('ipvsadm');
    expect(await app.outcome()).toBe('delivered');
    await expect(app.byId('node-pipeline')).toHaveAttribute('data-mode', 'ipvs');
    await expect(editor).toHaveValue(typed);
    await expect(app.byId('scenario-select')).toHaveValue('alpaca-bandicoot');
  });
}

test('a share link in nftables mode opens in the embed with nftables rules, after saying it is loading them', async ({ page, browser }) => {
  const app = new App(page);
  await app.openAndSend('nodeport', 'nftables');
  const src = await app.embedSrc();

  const fresh = await (await browser.newContext({ viewport: { width: 720, height: 405 } })).newPage();
  const problems = App.watch(fresh);
  const release = await hold(fresh, NFT);
  await fresh.goto(src);
  await expect(fresh.getByTestId('mode-loading')).toBeVisible();
  await expect(fresh.getByTestId('mode-loading')).toContainText('nftables');
  await expect(fresh.getByTestId('packet')).toHaveCount(0);
  await fresh.screenshot({ path: `${shots}/lazy-mode-loading-embed.png` });
  release();
  await expect(fresh.getByTestId('mode-loading')).toHaveCount(0);
  await expect(fresh.getByTestId('node-pipeline')).toHaveAttribute('data-mode', 'nftables');
  await expect(fresh.getByTestId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
  await expect(fresh.locator('[data-testid=pipeline-step][data-step^=nft-]').first()).toBeAttached();
  await fresh.screenshot({ path: `${shots}/lazy-mode-loaded-embed.png` });
  expect(problems).toEqual([]);
});

test('in the embed a mode that cannot come is explained in Korean with a Retry, and the Retry brings it', async ({ page, browser }) => {
  const app = new App(page);
  await app.openAndSend('nodeport', 'nftables');
  const src = (await app.embedSrc()).replace('lang=en', 'lang=ko');
  const fresh = await (await browser.newContext({ viewport: { width: 720, height: 405 } })).newPage();
  let fail = true;
  await fresh.route(NFT, (route) => (fail ? route.abort('internetdisconnected') : route.continue()));
  await fresh.goto(src);
  const error = fresh.getByTestId('mode-error');
  await expect(error).toContainText('nftables 모드를 불러오지 못했습니다');
  await expect(fresh.getByTestId('packet')).toHaveCount(0);
  await fresh.screenshot({ path: `${shots}/lazy-mode-error-embed-ko.png` });
  fail = false;
  await fresh.getByTestId('mode-retry').click();
  await expect(error).toHaveCount(0);
  await expect(fresh.locator('[data-testid=pipeline-step][data-step^=nft-]').first()).toBeAttached();
});

test('an iptables page fetches only its own mode file before its first screen is drawn, and prefetches the others after it', async ({ page }) => {
  await record(page);
  const asked: string[] = [];
  page.on('request', (r) => { if (/\/(split|chunk)_[^/]*\.wasm$/.test(r.url())) asked.push(r.url()); });
  const app = new App(page);
  await app.open('/');
  // The prefetch comes once the browser is idle: all four other mode files.
  await expect.poll(() => asked.filter((u) => /split_kpv_(ipvs|nftables|cilium|userspace)-/.test(u)).length, { timeout: 15_000 }).toBe(4);
  const timing = await page.evaluate(() => {
    const w = window as unknown as { __diagramAt: number };
    const splits = performance.getEntriesByType('resource')
      .filter((e) => /\/(split|chunk)_[^/]*\.wasm$/.test(e.name))
      .map((e) => ({ name: e.name, at: e.startTime }));
    return { diagramAt: w.__diagramAt, splits };
  });
  expect(timing.diagramAt).toBeGreaterThan(0);
  expect(timing.splits.length).toBeGreaterThanOrEqual(3);
  // The mode in use is fetched as the page starts (the diagram does not wait
  // for it); every other file only after the diagram is drawn.
  for (const s of timing.splits.filter((x) => !/split_kpv_iptables-/.test(x.name))) expect(s.at, s.name).toBeGreaterThan(timing.diagramAt);
  expect(asked.filter((u) => /split_kpv_iptables-/.test(u)).length).toBe(1);
  // And a click on another mode then needs no fetch of its own.
  const before = asked.length;
  await app.selectMode('nftables');
  await expect(app.byId('node-pipeline')).toHaveAttribute('data-mode', 'nftables');
  await expect(app.byId('mode-loading')).toHaveCount(0);
  expect(asked.length).toBe(before);
});

test('a ?step= link whose mode failed to load stops at its step once Retry brings the mode', async ({ page }) => {
  let fail = true;
  await page.route(IPVS, (route) => (fail ? route.abort('internetdisconnected') : route.continue()));
  await page.goto('/?mode=ipvs&step=3&lang=en');
  await expect(page.getByTestId('mode-error')).toBeVisible();
  await expect(page.getByTestId('packet')).toHaveCount(0);
  fail = false;
  await page.getByTestId('mode-retry').first().click();
  await expect(page.getByTestId('mode-error')).toHaveCount(0);
  await expect(page.getByTestId('hop-caption')).toContainText('Hop 3 of');
  await expect(page.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
});
