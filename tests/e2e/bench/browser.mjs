// Browser benchmark of the release build (run by `cargo xtask bench`):
//   start-up  — navigation to the diagram drawn, median of 7 fresh loads;
//   frames    — 500 packets in flight on the alpaca/bandicoot scenario,
//               requestAnimationFrame intervals sampled for 5 seconds:
//               median, 95th percentile and dropped frames.
//   history   — a session that has already sent 10,000 packets (the link of
//               HISTORY_FRAGMENT, its clock moved past the last one): frame
//               intervals for 5 s of continuous traffic, and the latency of
//               one Send (click to the page idle again), median and max of 15.
//   typing    — an 8 MB text in the editor: from a key press at its end to
//               the first frame after it, median and max of 15 keys.
// Usage: node bench/browser.mjs DIST_DIR SHARE_FRAGMENT [HISTORY_FRAGMENT_FILE]
// Prints one `BENCH name value unit` line per figure for xtask to report.
import { chromium } from 'playwright';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const [dist, fragment, historyFile] = process.argv.slice(2);
const history = historyFile ? fs.readFileSync(historyFile, 'utf8').trim() : undefined;
if (!dist || !fragment) {
  console.error('usage: node bench/browser.mjs DIST_DIR SHARE_FRAGMENT');
  process.exit(2);
}

const root = path.resolve(dist);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const file = path.join(root, url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname));
  if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; };

// Start-up: the first moment a Service box is in the diagram, on the page's clock
// (whose origin is the navigation start).
const startups = [];
for (let i = 0; i < 7; i++) {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (document.querySelector('svg[data-testid=diagram] g.service')) {
        window.__drawnAt = performance.now();
        obs.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(base);
  await page.waitForFunction(() => window.__drawnAt !== undefined, null, { timeout: 30_000 });
  startups.push(await page.evaluate(() => window.__drawnAt));
  await ctx.close();
}
console.log(`BENCH startup_median ${median(startups).toFixed(1)} ms`);

// Frames: open the 500-packet link, play, sample for 5 s.
const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const page = await ctx.newPage();
await page.goto(`${base}#${fragment}`);
await page.waitForSelector('svg[data-testid=diagram] g.service', { timeout: 30_000 });
const sent = await page.locator('[data-testid=packet]').count();
await page.getByTestId('play-pause').click();
await page.waitForTimeout(500);
const result = await page.evaluate(() => new Promise((done) => {
  const inFlight = () => [...document.querySelectorAll('[data-testid=packet]')]
    .filter((p) => !/delivered|dropped|rejected|timed-out/.test(p.getAttribute('class') ?? '')).length;
  const startInFlight = inFlight();
  const intervals = [];
  let last;
  const t0 = performance.now();
  const tick = (ts) => {
    if (last !== undefined) intervals.push(ts - last);
    last = ts;
    if (ts - t0 < 5000) requestAnimationFrame(tick);
    else done({ intervals, startInFlight, endInFlight: inFlight() });
  };
  requestAnimationFrame(tick);
}));
const frame = 1000 / 60;
const dropped = result.intervals.reduce((n, x) => n + Math.max(0, Math.round(x / frame) - 1), 0);
console.log(`BENCH packets_drawn ${sent} packets`);
console.log(`BENCH in_flight_start ${result.startInFlight} packets`);
console.log(`BENCH in_flight_end ${result.endInFlight} packets`);
console.log(`BENCH frame_median ${median(result.intervals).toFixed(2)} ms`);
console.log(`BENCH frame_p95 ${pct(result.intervals, 0.95).toFixed(2)} ms`);
console.log(`BENCH frames_sampled ${result.intervals.length} frames`);
console.log(`BENCH frames_dropped ${dropped} frames`);

if (history) {
  // The link's packets were sent from time 0; move the clock past the last
  // one, so they are history (delivered) and new traffic comes after them.
  const b64 = history.replace(/^v1\./, '').replace(/-/g, '+').replace(/_/g, '/');
  const state = JSON.parse(zlib.inflateRawSync(Buffer.from(b64, 'base64')).toString('utf8'));
  const last = state.p.reduce((m, p) => Math.max(m, p.at_ms), 0);
  state.t = last + 10_000;
  state.v = 100;
  delete state.f;
  const packed = zlib.deflateRawSync(Buffer.from(JSON.stringify(state)), { level: 9 });
  const link = 'v1.' + packed.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const hctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const hpage = await hctx.newPage();
  await hpage.goto(`${base}#${link}`);
  await hpage.waitForSelector('svg[data-testid=diagram] g.service', { timeout: 60_000 });
  console.log(`BENCH history_packets ${state.p.length} packets`);
  // Send latency: from the click to the page being idle again (the click's
  // handler, the replay, and the effects that draw it), paused in between.
  const sends = [];
  for (let i = 0; i < 15; i++) {
    if (await hpage.getByTestId('play-pause').getAttribute('aria-pressed') === 'true') {
      await hpage.getByTestId('play-pause').click();
    }
    sends.push(await hpage.evaluate(() => new Promise((done) => {
      const button = document.querySelector('[data-testid=send-packet]');
      const t0 = performance.now();
      button.click();
      setTimeout(() => done(performance.now() - t0), 0);
    })));
    await hpage.waitForTimeout(100);
  }
  console.log(`BENCH send_median ${median(sends).toFixed(2)} ms`);
  console.log(`BENCH send_max ${Math.max(...sends).toFixed(2)} ms`);
  // Continuous traffic on top of that history.
  const cont = hpage.getByTestId('continuous');
  if (!(await cont.isChecked())) await cont.check();
  await hpage.waitForTimeout(500);
  const hist = await hpage.evaluate(() => new Promise((done) => {
    const intervals = [];
    let last;
    const t0 = performance.now();
    const tick = (ts) => {
      if (last !== undefined) intervals.push(ts - last);
      last = ts;
      if (ts - t0 < 5000) requestAnimationFrame(tick);
      else done(intervals);
    };
    requestAnimationFrame(tick);
  }));
  console.log(`BENCH history_frame_median ${median(hist).toFixed(2)} ms`);
  console.log(`BENCH history_frame_p95 ${pct(hist, 0.95).toFixed(2)} ms`);
  // A send every 0.9 s is a few frames in 300: the longest shows a stall.
  console.log(`BENCH history_frame_max ${Math.max(...hist).toFixed(2)} ms`);
  const histDropped = hist.reduce((n, x) => n + Math.max(0, Math.round(x / frame) - 1), 0);
  console.log(`BENCH history_frames_dropped ${histDropped} frames`);
  await hctx.close();
}

// Typing in an 8 MB text (the reader's limit): the editor holds a window of it.
{
  const tctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await tctx.newPage();
  await page.goto(base);
  await page.waitForSelector('[data-testid=yaml-editor]');
  await page.evaluate(async () => {
    const line = '# a comment line of the size of a manifest line, more or less\n';
    const area = document.querySelector('[data-testid=yaml-editor]');
    const text = line.repeat(Math.floor((8 * 1024 * 1024 - 1024) / line.length));
    area.value = text;
    area.setSelectionRange(text.length, text.length);
    area.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((ok) => setTimeout(ok, 500));
  });
  await page.locator('[data-testid=yaml-editor]').focus();
  await page.keyboard.press('Control+End');
  await page.evaluate(() => {
    window.__lat = [];
    document.querySelector('[data-testid=yaml-editor]').addEventListener('keydown', (ev) => {
      const t0 = ev.timeStamp;
      requestAnimationFrame(() => setTimeout(() => window.__lat.push(performance.now() - t0), 0));
    });
  });
  for (let i = 0; i < 15; i++) {
    await page.keyboard.press('x');
    await page.waitForFunction((k) => window.__lat.length > k, i, { timeout: 60_000 });
    await page.waitForTimeout(30);
  }
  const typed = await page.evaluate(() => window.__lat);
  console.log(`BENCH type_8mb_median ${median(typed).toFixed(1)} ms`);
  console.log(`BENCH type_8mb_max ${Math.max(...typed).toFixed(1)} ms`);
  await tctx.close();
}
await browser.close();
server.close();
