// The release build fetches its Korean words (data/i18n/ko.tsv) when Korean
// is first chosen, so an English reader never downloads them. A Korean
// reader sees Korean; when the file cannot come, the page says so in both
// languages, shows English, and a retry brings the Korean.
import { test, expect } from '@playwright/test';
import { App } from './app';

const FILE = '**/data/i18n/ko.tsv';

test('an English first load does not fetch the Korean words; choosing Korean does', async ({ page }) => {
  const asked: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/data/i18n/ko.tsv')) asked.push(r.url()); });
  const app = new App(page);
  await app.open('/?lang=en');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy visualizer');
  await page.waitForTimeout(300);
  expect(asked).toEqual([]);
  await app.byId('lang-select').selectOption('ko');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy 시각화 도구');
  await expect(app.byId('send-packet')).toHaveText(/패킷 보내기/);
  expect(asked.length).toBe(1);
});

test('the embed opened in Korean shows Korean', async ({ page }) => {
  await page.goto('/embed/?scenario=alpaca-bandicoot&lang=ko');
  await expect(page.getByTestId('diagram')).toBeVisible();
  await expect(page.getByTestId('send-packet')).toHaveAttribute('title', /패킷/);
});

test('Korean words that cannot be fetched are said in both languages, English is shown, and a retry brings Korean', async ({ page }) => {
  let fail = true;
  await page.route(FILE, (route) => (fail ? route.fulfill({ status: 503, body: 'down' }) : route.continue()));
  const app = new App(page);
  await app.open('/?lang=ko');
  const error = app.byId('korean-error');
  await expect(error).toBeVisible();
  await expect(error).toContainText('한국어 문구를 불러오지 못해');
  await expect(error).toContainText('The Korean text could not be loaded');
  await expect(error).toContainText('data/i18n/ko.tsv: HTTP 503');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy visualizer');
  fail = false;
  await app.byId('korean-retry').click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy 시각화 도구');
  await expect(error).toHaveCount(0);
});

test('a page opened in Korean never shows English first: its first screen is already Korean', async ({ page }) => {
  // Record every text the page's heading and Send button ever show, from
  // the first script on.
  await page.addInitScript(() => {
    const w = window as unknown as { __seen: string[] };
    w.__seen = [];
    new MutationObserver(() => {
      for (const sel of ['h1', '[data-testid=send-packet]']) {
        const t = document.querySelector(sel)?.textContent ?? '';
        if (t && !w.__seen.includes(t)) w.__seen.push(t);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  // The Korean file is slow: English would have time to show.
  await page.route(FILE, async (route) => { await new Promise((r) => setTimeout(r, 500)); await route.continue(); });
  const app = new App(page);
  await app.open('/?lang=ko');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy 시각화 도구');
  const seen = await page.evaluate(() => (window as unknown as { __seen: string[] }).__seen);
  expect(seen).toContain('kube-proxy 시각화 도구');
  expect(seen.filter((t) => /visualizer|Send/.test(t))).toEqual([]);
});

test('a Korean file that hangs does not hold the page: it starts in English, then turns Korean when the file arrives', async ({ page }) => {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => { release = r; });
  await page.route(FILE, async (route) => { await held; await route.continue(); });
  await page.goto('/?lang=ko');
  // Drawn without the words, well before the file comes.
  await expect(page.getByTestId('diagram')).toBeVisible({ timeout: 5_000 });
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy visualizer');
  release();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('kube-proxy 시각화 도구');
  await expect(page.getByTestId('korean-error')).toHaveCount(0);
});
