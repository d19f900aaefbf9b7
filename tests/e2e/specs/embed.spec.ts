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
  // At rest: the poster, one packet stopped at its telling hop.
  await expect(page.getByTestId('packet')).toHaveCount(1);
  await expect(app.byId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
  for (const id of ABSENT) await expect(app.byId(id), id).toHaveCount(0);
  const poster = await page.locator('[data-testid=packet].focused').getAttribute('data-id');
  await app.byId('send-packet').click();
  await expect(page.locator('[data-testid=packet].focused')).not.toHaveAttribute('data-id', poster!);
});

for (const path of ['/embed/', '/docs/kpv/embed/']) {
  test(`the embed build runs under the strict Content-Security-Policy at ${path}`, async ({ page }) => {
    const problems = App.watch(page);
    const response = await page.goto(CSP + path + '?scenario=nodeport');
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval'");
    const app = new App(page);
    await expect(app.byId('diagram')).toBeVisible();
    // The poster's packet, then the reader's own.
    await expect(page.getByTestId('packet')).toHaveCount(1);
    const poster = await page.locator('[data-testid=packet].focused').getAttribute('data-id');
    await app.byId('send-packet').click();
    await expect(page.locator('[data-testid=packet].focused')).not.toHaveAttribute('data-id', poster!);
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
  // At rest its poster packet went through IPVS.
  await expect(page.getByTestId('packet')).toHaveCount(1);
  await expect(app.byId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
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

test('at rest an embed is a poster: a packet at its telling hop with its caption, still under reduced motion, playing on when asked', async ({ browser }) => {
  for (const [scenario, mode, card] of [
    ['alpaca-bandicoot', 'iptables', /destination rewritten to\s*10\.244\.\d+\.\d+:8080 \(DNAT\)/],
    ['nodeport', 'ipvs', /10\.244\.\d+\.\d+/],
    ['no-endpoints', 'iptables', /REJECT|refused|no endpoint/i],
  ] as const) {
    const ctx = await browser.newContext({ viewport: { width: 720, height: 405 }, reducedMotion: 'reduce' });
    const page = await ctx.newPage();
    const problems = App.watch(page);
    const app = new App(page);
    await app.open(`/embed/?scenario=${scenario}&mode=${mode}&lang=en`);
    await expect(page.getByTestId('packet')).toHaveCount(1);
    await expect(app.byId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
    const hop = Number((await app.byId('hop-caption').innerText()).replace(/^Hop (\d+) of.*/, '$1'));
    expect(hop, scenario).toBeGreaterThan(1);
    await expect(app.byId('packet-card'), scenario).toContainText(card);
    // Nothing moves by itself.
    const at = await app.clockMs();
    await page.waitForTimeout(1_200);
    expect(await app.clockMs(), scenario).toBe(at);
    await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
    // Asked, it plays on from there.
    await app.byId('play-pause').click();
    await expect.poll(() => app.clockMs()).toBeGreaterThan(at);
    expect(problems).toEqual([]);
    await ctx.close();
  }
});

test('a 400 px wide embed keeps its diagram and a whole caption: the caption takes its own row and the speed choice goes', async ({ browser }) => {
  const ctx = await browser.newContext({ viewport: { width: 400, height: 320 } });
  const page = await ctx.newPage();
  const app = new App(page);
  await app.open('/embed/?lang=en');
  const bar = await page.locator('.playback').evaluate((e) => ({ scroll: e.scrollWidth, client: e.clientWidth }));
  expect(bar.scroll).toBeLessThanOrEqual(bar.client);
  const cap = await app.byId('hop-caption').boundingBox();
  expect(cap!.width).toBeGreaterThan(300);
  expect(cap!.height).toBeLessThan(40);
  await expect(app.byId('speed')).toBeHidden();
  for (const id of ['send-packet', 'play-pause', 'step-back', 'step-forward', 'sim-clock']) {
    const b = await app.byId(id).boundingBox();
    expect(b!.x + b!.width, id).toBeLessThanOrEqual(400);
  }
  const svg = await app.byId('diagram').boundingBox();
  expect(svg!.height, 'the diagram keeps the space above the bar').toBeGreaterThan(150);
  // Too narrow for the whole scene at 12 px: the diagram shows the part
  // around the packet, every text at 12 px or more, the packet and its
  // card inside the frame, and follows the packet as it moves.
  const width = async () => Number((await app.byId('diagram').getAttribute('viewBox'))!.split(' ')[2]);
  expect(await width(), 'a window of the scene').toBeLessThan(840);
  const look = () => page.getByTestId('diagram').evaluate((el: SVGSVGElement) => {
    const scale = el.getScreenCTM()?.a ?? 0;
    let smallest = Infinity;
    for (const t of Array.from(el.querySelectorAll('text'))) {
      if (!t.textContent?.trim() || t.getBoundingClientRect().width === 0) continue;
      if (t.closest('[data-testid=packet]')) continue;
      smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
    }
    const frame = el.getBoundingClientRect();
    const inside = (sel: string) => {
      const b = el.querySelector(sel)?.getBoundingClientRect();
      return !!b && b.x >= frame.x - 1 && b.right <= frame.right + 1 && b.y >= frame.y - 1 && b.bottom <= frame.bottom + 1;
    };
    return { smallest, viewBox: el.getAttribute('viewBox'), packet: inside('[data-testid=packet].focused'), card: inside('[data-testid=packet-card] rect') };
  });
  const first = await look();
  expect(first.smallest).toBeGreaterThanOrEqual(12);
  expect(first.packet, 'the packet is in the frame').toBe(true);
  expect(first.card, 'the packet card is in the frame').toBe(true);
  await app.byId('step-back').click();
  await app.byId('step-back').click();
  await app.byId('step-back').click();
  const back = await look();
  expect(back.packet, 'the packet is in the frame after stepping').toBe(true);
  expect(back.viewBox).not.toBe(first.viewBox);
  // Wide enough again, the whole scene.
  await page.setViewportSize({ width: 1000, height: 700 });
  await expect.poll(width).toBe(840);
  await ctx.close();
});
