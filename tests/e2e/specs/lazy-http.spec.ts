// HTTP routing (Ingress, Gateway API) is a file of its own, fetched when a
// scenario first has routing objects: the default scenario never fetches it;
// while it is on its way the HTTP parts say "loading" (never a wrong or empty
// journey); once in, the request goes through the proxy as before; a fetch
// that fails says so, and Retry recovers without losing anything.
import { test, expect, Page, Route } from '@playwright/test';
import { App, currentStep, stepUntil } from './app';

const shots = 'artifacts/screens';
const HTTP_FILE = /kpv_http[^/]*\.wasm$/;

const presets = [
  { key: 'ingress', entry: 'ingressclass/nginx', url: 'https://testhost.com/anything' },
  { key: 'gateway-api', entry: 'gateway/default/web', url: 'https://www.example.com/store' },
];

/** Hold the routing file's response until the returned function is called. */
async function holdHttpFile(page: Page): Promise<{ release: () => void; asked: string[] }> {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => { release = r; });
  const asked: string[] = [];
  await page.route(HTTP_FILE, async (route: Route) => {
    asked.push(new URL(route.request().url()).pathname);
    await gate;
    await route.continue();
  });
  return { release, asked };
}

for (const p of presets) {
  for (const lang of ['en', 'ko'] as const) {
    test(`${p.key} (${lang}): HTTP parts say loading until the routing file arrives, then the real journey`, async ({ page }) => {
      const problems = App.watch(page);
      await page.setViewportSize({ width: 1280, height: 720 });
      const held = await holdHttpFile(page);
      const app = new App(page);
      await app.open(`/?scenario=${p.key}&lang=${lang}`);

      // Loading: said in the side column and in the targets list; no entry
      // point, no request form, no request card, no proxy hop yet.
      const loading = app.byId('http-loading');
      await expect(loading).toBeVisible();
      await expect(loading).toContainText(lang === 'en' ? 'Loading HTTP routing' : 'HTTP 라우팅');
      await expect(app.byId('target-http-loading')).toHaveCount(1);
      await expect(app.byId('request-form')).toHaveCount(0);
      await expect(app.byId('request-card')).toHaveCount(0);
      await expect(page.locator('[data-testid=hop][data-hop^=http-]')).toHaveCount(0);
      // The Routing tab is there and says loading too.
      await app.byId('tab-routing').click();
      await expect(page.locator('.side-list [data-testid=http-loading]')).toBeVisible();
      expect(held.asked.length).toBe(1);
      // Send waits for the entry point rather than send to another target.
      await expect(app.byId('send-packet')).toBeDisabled();
      // The target shown is the entry point's "loading" line, not another target.
      expect(await app.byId('target-select').evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.dataset.testid)).toBe('target-http-loading');
      await page.screenshot({ path: `${shots}/lazy-http-${p.key}-loading-${lang}.png` });

      held.release();
      await expect(loading).toHaveCount(0, { timeout: 20_000 });
      await expect(app.byId('send-packet')).toBeEnabled();
      await expect(app.byId('target-select')).toHaveValue(`http:${p.entry}`);
      await expect(app.byId('request-form')).toBeVisible();
      await expect(app.byId('routing-rules')).toBeVisible();
      await app.byId('tab-hops').click();
      await app.byId('request-url').fill(p.url);
      await app.send();
      await app.pause();
      await expect(app.byId('request-card')).toContainText(p.url.replace(/^https:\/\/[^/]+/, ''));
      await expect.poll(async () => page.locator('[data-testid=hop][data-hop^=http-]').count(), { timeout: 20_000 })
        .toBeGreaterThanOrEqual(4);
      await page.screenshot({ path: `${shots}/lazy-http-${p.key}-loaded-${lang}.png` });
      expect(problems).toEqual([]);
    });
  }
}

test('a routing file that cannot be fetched is reported with a Retry that recovers; the typed request stays', async ({ page }) => {
  let fail = true;
  const asked: string[] = [];
  await page.route(HTTP_FILE, (route) => {
    asked.push(new URL(route.request().url()).pathname);
    return fail ? route.abort() : route.continue();
  });
  const app = new App(page);
  await app.open('/?scenario=ingress&lang=en');
  const error = app.byId('http-load-error');
  await expect(error).toBeVisible({ timeout: 20_000 });
  await expect(error).toContainText('could not be loaded');
  await expect(app.byId('request-card')).toHaveCount(0);
  // The rest of the scenario is drawn and works meanwhile.
  await expect(app.byId('service-service-api')).toBeVisible();
  await page.screenshot({ path: `${shots}/lazy-http-failed-en.png` });

  fail = false;
  await app.byId('http-retry').click();
  await expect(error).toHaveCount(0, { timeout: 20_000 });
  await expect(app.byId('target-select')).toHaveValue('http:ingressclass/nginx');
  await app.byId('request-url').fill('https://testhost.com/anything');
  await app.send();
  await app.pause();
  await expect(app.byId('request-card')).toContainText('/anything');
  expect(asked.length).toBeGreaterThanOrEqual(2);
});

test('in Korean a failed routing file says so in Korean', async ({ page }) => {
  await page.route(HTTP_FILE, (route) => route.abort());
  const app = new App(page);
  await app.open('/?scenario=gateway-api&lang=ko');
  const error = app.byId('http-load-error');
  await expect(error).toBeVisible({ timeout: 20_000 });
  await expect(error).toContainText('불러오지 못했습니다');
  await expect(app.byId('http-retry')).toHaveText('다시 시도');
  await page.screenshot({ path: `${shots}/lazy-http-failed-ko.png` });
});

test('the default scenario never fetches the routing file; the embed fetches it for an Ingress', async ({ page }) => {
  const wasm: string[] = [];
  page.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(new URL(r.url()).pathname); });
  const app = new App(page);
  await app.open('/?lang=en');
  await expect(app.alpacaPods().first()).toBeVisible();
  await app.send();
  await app.outcome();
  expect(wasm.filter((w) => HTTP_FILE.test(w))).toEqual([]);

  await page.setViewportSize({ width: 720, height: 405 });
  await page.goto('/embed/?scenario=ingress&lang=en');
  await expect(page.getByTestId('diagram')).toBeVisible();
  await expect.poll(() => wasm.filter((w) => HTTP_FILE.test(w)).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
  await expect(app.byId('http-loading')).toHaveCount(0, { timeout: 20_000 });
  await expect(app.byId('http-load-error')).toHaveCount(0);
  await page.screenshot({ path: `${shots}/lazy-http-embed.png` });
});

test('in the embed, Send and Play wait for routing (disabled, saying why), then the request takes the HTTP journey', async ({ page }) => {
  const problems = App.watch(page);
  await page.setViewportSize({ width: 720, height: 405 });
  const held = await holdHttpFile(page);
  const app = new App(page);
  await page.goto('/embed/?scenario=gateway-api&lang=en');
  await expect(app.byId('diagram')).toBeVisible();
  const send = app.byId('send-packet');
  await expect(send).toBeDisabled();
  await expect(send).toHaveAttribute('title', /Loading HTTP routing/);
  await expect(app.byId('play-pause')).toBeDisabled();
  // A click that gets through anyway sends nothing.
  await send.dispatchEvent('click');
  await expect(app.byId('hop-caption')).not.toContainText('connects');
  await page.screenshot({ path: `${shots}/lazy-http-embed-send-waits.png` });

  held.release();
  await expect(send).toBeEnabled({ timeout: 20_000 });
  await expect(app.byId('play-pause')).toBeEnabled();
  await app.send();
  await app.pause();
  expect(await stepUntil(app, async () => (await currentStep(page)) === 'backend')).toBe(true);
  expect(problems).toEqual([]);
});

test('a ?step= link to an HTTP scenario waits for routing and stops where it would with routing at hand, in the embed and the full app', async ({ page }) => {
  for (const path of ['/embed/', '/']) {
    const url = `${path}?scenario=gateway-api&step=6&lang=en`;
    const app = new App(page);
    const at = async () => ({
      step: await currentStep(page),
      caption: await app.byId('hop-caption').innerText(),
    });
    // Where the link stops when routing is fetched at once (the release
    // build still fetches it; the journey is the request's).
    await page.goto(url);
    await expect.poll(() => currentStep(page), { timeout: 20_000 }).not.toBeNull();
    const want = await at();
    // It is the request's journey: stepping on reaches the proxy's listener.
    expect(await stepUntil(app, async () => (await currentStep(page)) === 'listener', 40), path).toBe(true);

    // The same link with routing held back: nothing is sent meanwhile, and
    // once it is in the packet stops at the same hop, paused.
    const held = await holdHttpFile(page);
    await page.goto(url);
    await expect(app.byId('diagram')).toBeVisible();
    await expect(app.byId('http-loading').first()).toBeAttached();
    expect(await currentStep(page)).toBeNull();
    held.release();
    await expect.poll(at, { timeout: 20_000 }).toEqual(want);
    await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
    await page.unroute(HTTP_FILE);
  }
});

test('a ?step= link still waiting for routing gives way when the reader picks a target of their own', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const held = await holdHttpFile(page);
  const app = new App(page);
  await page.goto('/?scenario=gateway-api&step=6&lang=en');
  await expect(app.byId('http-loading').first()).toBeVisible();
  await app.parts();
  // The reader picks a Service while the link's packet waits.
  await app.selectTarget(/store-v1/);
  held.release();
  await expect(app.byId('http-loading')).toHaveCount(0, { timeout: 20_000 });
  await page.waitForTimeout(500);
  // Nothing was sent for them: no packet, no hop.
  await expect(app.verdict).toHaveAttribute('data-outcome', 'empty');
  await expect(app.byId('hop-caption')).not.toContainText('Hop ');
});

test('an Ingress typed in the editor fetches routing\'s code and is checked once it is here', async ({ page }) => {
  const problems = App.watch(page);
  const held = await holdHttpFile(page);
  const app = new App(page);
  await app.open('/');
  expect(held.asked).toEqual([]);
  const editor = app.byId('yaml-editor');
  const text = await editor.inputValue();
  const ingress = 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec:\n  rules:\n  - host: UPPER.example\n';
  await editor.fill(`${text.trimEnd()}\n---\n${ingress}`);
  // The check asks for the code the Ingress needs.
  await expect.poll(() => held.asked.length, { timeout: 10_000 }).toBe(1);
  held.release();
  // Once it is here the text is checked again, with the API server's words.
  const error = page.getByTestId('yaml-error');
  await expect(error).toHaveCount(1, { timeout: 20_000 });
  await expect(error).toContainText('spec.rules[0].host');
  await expect(app.byId('yaml-apply')).toBeDisabled();
  // The text typed is unchanged.
  await expect(editor).toHaveValue(`${text.trimEnd()}\n---\n${ingress}`);
  expect(problems).toEqual([]);
});
