// Presets and lessons are files of the site, fetched when chosen: the first
// download carries only the default scenario. A fetch that fails says so,
// offers a retry that works, and leaves the scenario and the editor's text
// as they were.
import { test, expect } from '@playwright/test';
import { App, MINE } from './app';


for (const lang of ['en', 'ko'] as const) {
  test(`a preset that cannot be fetched is reported (${lang}), the editor text stays, and a retry loads it`, async ({ page }) => {
    const app = new App(page);
    let fail = true;
    const asked: string[] = [];
    await page.route('**/data/scenarios/nodeport.yaml', (route) => {
      asked.push(new URL(route.request().url()).pathname);
      return fail ? route.fulfill({ status: 404, body: 'not found' }) : route.continue();
    });
    await app.open(`/?lang=${lang}`);
    await app.byId('yaml-editor').fill(MINE);
    await app.byId('scenario-select').selectOption('nodeport');

    const error = app.byId('data-error');
    await expect(error).toBeVisible();
    await expect(error).toContainText(lang === 'en' ? 'could not be loaded' : '불러오지 못했습니다');
    await expect(error).toContainText('data/scenarios/nodeport.yaml: HTTP 404');
    // Nothing changed: the default scenario is still drawn, the text is the user's.
    await expect(app.alpacaPods().first()).toBeVisible();
    await expect(app.byId('service-web')).toHaveCount(0);
    await expect(app.byId('yaml-editor')).toHaveValue(MINE);
    await expect(app.byId('scenario-select')).toHaveValue('alpaca-bandicoot');
    await error.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `artifacts/screens/ondemand-failed-${lang}.png` });

    fail = false;
    await app.byId('data-retry').click();
    await app.loaded();
    await expect(error).toHaveCount(0);
    await expect(app.byId('service-web')).toBeVisible();
    await expect(app.byId('scenario-select')).toHaveValue('nodeport');
    await expect(app.byId('yaml-editor')).toHaveValue(MINE);
    // Fetched from the app's own folder, once per try.
    expect(asked).toEqual(['/data/scenarios/nodeport.yaml', '/data/scenarios/nodeport.yaml']);
  });
}

test('the default scenario starts without a fetch; a lesson fetches its file and its scenario', async ({ page }) => {
  const fetched: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/data/')) fetched.push(new URL(r.url()).pathname); });
  const app = new App(page);
  await app.open('/?lang=en');
  await expect(app.alpacaPods().first()).toBeVisible();
  expect(fetched).toEqual([]);

  await app.open('/?lesson=nodeport-loadbalancer&page=2&lang=en');
  await expect(app.byId('lesson-progress')).toHaveText('Step 2 / 2');
  await expect(app.byId('scenario-select')).toHaveValue('loadbalancer-cluster');
  expect(fetched).toEqual(['/data/lessons/nodeport-loadbalancer.yaml', '/data/scenarios/loadbalancer-cluster.yaml']);
});

test('a preset the address names is shown in the editor once it arrives', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=nodeport&lang=en');
  await expect(app.byId('service-web')).toBeVisible();
  // The editor holds the drawn scenario's text, not the default one.
  await expect(app.byId('yaml-editor')).toHaveValue(/name: web/);
  await expect(app.byId('yaml-editor')).not.toHaveValue(/alpaca/);
});

test('a preset that arrives after the user typed leaves the typed text alone', async ({ page }) => {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => { release = r; });
  await page.route('**/data/scenarios/nodeport.yaml', async (route) => { await held; await route.continue(); });
  const app = new App(page);
  await page.goto('/?scenario=nodeport&lang=en');
  await expect(app.byId('data-loading')).toBeVisible();
  await app.byId('yaml-editor').fill(MINE);
  release();
  await app.loaded();
  await expect(app.byId('service-web')).toBeVisible();
  await expect(app.byId('yaml-editor')).toHaveValue(MINE);
});
