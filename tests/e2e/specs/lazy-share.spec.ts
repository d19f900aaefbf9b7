// The code that reads share links is fetched when a link is first opened
// (release build: a split file of its own), not with the first download.
// While it comes the page says so; when it cannot come the reader is told,
// the default scenario stays, and a retry opens the link.
import { test, expect, Page } from '@playwright/test';
import { App } from './app';

const SPLIT = '**/split_kpv_share_open-*.wasm';

/** A share link of the nodeport preset, written by the app itself. */
async function makeLink(page: Page): Promise<string> {
  const app = new App(page);
  await app.openAndSend('nodeport', 'iptables');
  await app.byId('share-link').click();
  const url = await app.byId('share-url').inputValue();
  expect(url).toContain('#v1.');
  return url;
}

test('the first download of a page without a link fetches no share-link code', async ({ page }) => {
  const asked: string[] = [];
  page.on('request', (r) => { if (/split_kpv_share_open-/.test(r.url())) asked.push(r.url()); });
  const app = new App(page);
  await app.open('/');
  await page.waitForTimeout(500);
  expect(asked).toEqual([]);
});

for (const lang of ['en', 'ko'] as const) {
  test(`a link whose reader code cannot load is explained (${lang}), the default stays, and a retry opens it`, async ({ page, browser }) => {
    const url = await makeLink(page);
    const fresh = await (await browser.newContext()).newPage();
    let fail = true;
    const asked: string[] = [];
    await fresh.route(SPLIT, (route) => {
      asked.push(route.request().url());
      return fail ? route.abort('internetdisconnected') : route.continue();
    });
    const other = new App(fresh);
    const withLang = url.replace('/#', `/?lang=${lang}#`);
    await other.open(withLang);
    const error = other.byId('share-error');
    await expect(error).toBeVisible();
    await expect(error).toContainText(lang === 'en' ? 'did not load' : '불러오지 못했습니다');
    await expect(other.byId('scenario-select')).toHaveValue('alpaca-bandicoot');
    expect(asked.length).toBeGreaterThan(0);

    fail = false;
    await other.byId('share-retry').click();
    await expect(other.byId('scenario-select')).toHaveValue('nodeport');
    await expect(error).toHaveCount(0);
    await expect(other.byId('share-opening')).toHaveCount(0);
  });
}

test('while the reader code is on its way the page says the link is being opened', async ({ page, browser }) => {
  const url = await makeLink(page);
  const fresh = await (await browser.newContext()).newPage();
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => { release = resolve; });
  await fresh.route(SPLIT, async (route) => { await held; await route.continue(); });
  await fresh.goto(url);
  await expect(fresh.getByTestId('share-opening')).toBeVisible();
  release();
  await expect(fresh.getByTestId('share-opening')).toHaveCount(0);
  await expect(fresh.getByTestId('scenario-select')).toHaveValue('nodeport');
  await expect(fresh.getByTestId('share-error')).toHaveCount(0);
});
