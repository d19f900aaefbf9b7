// A documentation page with two embeds, as its author pastes them: the
// embeds follow the page's dark colour scheme, and the host script
// (kpv-embed.js) sizes each iframe to the height it posts for its width.
import { test, expect } from '@playwright/test';
import { ROOT, CSP } from '../ports';

// The docs page is made up by the test (a route), so Chromium counts it as
// a public site, and its local-network checks would stop a public page from
// framing the suite's loopback server. A real docs site embeds a real host,
// where the check does not apply: it is turned off for this spec only.
test.use({
  launchOptions: {
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-features=LocalNetworkAccessChecks'],
  },
});

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Docs</title>
<style>body { background: #111; color: #eee; max-width: 760px; margin: 0 auto; font: 16px sans-serif; }</style>
<script src="${ROOT}/kpv-embed.js" defer></script></head>
<body>
<h1>Services</h1><p>How a NodePort reaches a Pod.</p>
<iframe id="a" src="${ROOT}/embed/?lang=en&scenario=nodeport&mode=iptables" title="kube-proxy visualizer: NodePort"
  style="width:100%;aspect-ratio:16/10;border:0" loading="lazy" allowfullscreen></iframe>
<p>And readiness.</p>
<iframe id="b" src="${ROOT}/embed/?lang=en&scenario=alpaca-bandicoot&mode=ipvs" title="kube-proxy visualizer: readiness"
  style="width:100%;aspect-ratio:16/10;border:0" loading="lazy" allowfullscreen></iframe>
</body></html>`;

test('two embeds on a dark docs page: dark, and each sized to the height it asks for', async ({ browser }) => {
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 900 }, colorScheme: 'dark' });
  const page = await ctx.newPage();
  const messages: number[] = [];
  await page.exposeFunction('kpvSeen', (h: number) => messages.push(h));
  await page.addInitScript(() => {
    window.addEventListener('message', (e) => {
      if (e.data && e.data.kpv === 'height') (window as any).kpvSeen(e.data.height);
    });
  });
  // The docs page is served from another origin than the embeds (the
  // suite's third server, on the same loopback host as a browser requires).
  const host = `${CSP}/docs-page-under-test.html`;
  await page.route(host, (route) => route.fulfill({ contentType: 'text/html', body: PAGE }));
  await page.goto(host);
  for (const id of ['a', 'b']) {
    const frame = page.frameLocator(`#${id}`);
    await expect(frame.getByTestId('diagram')).toBeVisible({ timeout: 20_000 });
    // Dark like its page: the app's own background is the dark theme's.
    await expect.poll(() => frame.getByTestId('app').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(20, 23, 28)');
    // Sized by the host script: no longer the 16:10 fallback.
    await expect.poll(() => page.locator(`#${id}`).evaluate((f: HTMLIFrameElement) => f.style.height)).toMatch(/^\d+px$/);
    const box = (await page.locator(`#${id}`).boundingBox())!;
    // The diagram is drawn at the iframe's full width: nothing letterboxed.
    const svg = (await frame.getByTestId('diagram').boundingBox())!;
    expect(svg.width, `${id}: diagram width`).toBeGreaterThan(box.width - 24);
    expect(box.height, `${id}: frame height`).toBeGreaterThan(svg.height);
    expect(box.height, `${id}: frame height`).toBeLessThan(svg.height + 120);
  }
  expect(messages.length).toBeGreaterThanOrEqual(2);
  await ctx.close();
});

const CLICK_PAGE = (lang: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Docs</title>
<script src="${ROOT}/kpv-embed.js" defer></script></head>
<body style="max-width: 760px; margin: 0 auto">
<h1>Services</h1><p>How a NodePort reaches a Pod.</p>
<div id="c" data-kpv-click="${ROOT}/embed/?lang=${lang}&scenario=nodeport&mode=iptables" title="kube-proxy visualizer: NodePort"></div>
</body></html>`;

test('a click-to-load embed fetches only its poster (under 60 KB) until the reader clicks Play, then plays', async ({ browser }) => {
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await ctx.newPage();
  const fetched: { url: string; bytes: number }[] = [];
  page.on('requestfinished', async (r) => {
    if (!r.url().startsWith(ROOT)) return;
    const s = await r.sizes();
    fetched.push({ url: r.url(), bytes: s.responseBodySize + s.responseHeadersSize });
  });
  const host = `${CSP}/docs-click-under-test.html`;
  await page.route(host, (route) => route.fulfill({ contentType: 'text/html', body: CLICK_PAGE('en') }));
  await page.goto(host);
  const play = page.locator('#c button.kpv-poster');
  await expect(play).toHaveAttribute('aria-label', '▶ Play: kube-proxy visualizer: NodePort');
  // The poster is the preset's own picture, drawn at the column's width.
  await expect.poll(() => page.locator('#c img').evaluate((i: HTMLImageElement) => i.naturalWidth)).toBeGreaterThan(0);
  const img = (await page.locator('#c img').boundingBox())!;
  expect(img.width).toBeGreaterThan(700);
  const svg = await (await page.request.get(`${ROOT}/embed/posters/nodeport.svg`)).text();
  for (const name of ['worker-1', 'worker-3', 'web']) expect(svg).toContain(`>${name}</text>`);
  await page.waitForTimeout(1_000);
  const before = fetched.map((f) => f.url);
  expect(before.filter((u) => /\.(wasm|css)$|loader\.js|\/embed\/(\?|$)/.test(u)), before.join('\n')).toEqual([]);
  const bytes = fetched.reduce((n, f) => n + f.bytes, 0);
  expect(bytes, before.join('\n')).toBeLessThanOrEqual(60_000);
  // The click loads the app in its place, playing (no second click).
  await play.click();
  const frame = page.frameLocator('#c iframe');
  await expect(frame.getByTestId('diagram')).toBeVisible({ timeout: 20_000 });
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('#c iframe')).toHaveAttribute('title', 'kube-proxy visualizer: NodePort');
  expect(fetched.some((f) => f.url.endsWith('.wasm'))).toBe(true);
  // In Korean the button says so.
  await page.route(host, (route) => route.fulfill({ contentType: 'text/html', body: CLICK_PAGE('ko') }));
  await page.goto(host);
  await expect(page.locator('#c button.kpv-poster')).toHaveText('▶ 재생');
  await ctx.close();
});
