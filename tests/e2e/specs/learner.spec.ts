// The learner's view, measured as a trainer projects it: the diagram's share
// of the screen, the smallest text drawn (font size × the SVG's screen scale),
// what is on the first screen with it, every hop visibly changing something,
// the modes' different pipelines, the trail left behind, the embed that can
// send, and Korean without English prose. Screenshots go to artifacts/.
import { test, expect, Locator, Page } from '@playwright/test';
import { App, inViewport } from './app';
import * as fs from 'fs';
import * as path from 'path';

const shots = 'artifacts/screens';

/** The diagram's box and the smallest rendered font in it (px), split by role. */
async function measure(page: Page) {
  return page.getByTestId('diagram').evaluate((svg: SVGSVGElement) => {
    const scale = svg.getScreenCTM()?.a ?? 0;
    const box = svg.getBoundingClientRect();
    let smallest = Infinity;
    let card = Infinity;
    let smallestText = '';
    for (const t of Array.from(svg.querySelectorAll('text'))) {
      if (!t.textContent || !t.textContent.trim()) continue;
      const r = t.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (t.closest('[data-testid=packet-card]')) card = Math.min(card, px);
      else if (!t.closest('[data-testid=packet]')) {
        if (px < smallest) { smallest = px; smallestText = t.textContent; }
      }
    }
    return { x: box.x, y: box.y, w: box.width, h: box.height, scale, smallest, smallestText, card };
  });
}

/** Where the focused packet is and which pipeline step is current. */
async function look(page: Page) {
  const transform = await page.locator('[data-testid=packet].focused').getAttribute('transform').catch(() => null);
  const step = await page.locator('[data-testid=pipeline-step][data-current=true]').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('data-step')}@${Array.from(e.parentElement!.children).indexOf(e)}`).join(','));
  const node = await page.getByTestId('node-pipeline').getAttribute('data-node');
  return `${transform}|${node}|${step}`;
}

for (const [w, h] of [[1280, 720], [1920, 1080]]) {
  test(`at ${w}×${h} the diagram fills the first screen with play, caption and readiness beside it, in projector-sized text`, async ({ page }) => {
    await page.setViewportSize({ width: w, height: h });
    const app = new App(page);
    await app.open('/?scenario=loadbalancer-cluster&lang=en');
    await app.send();
    await app.pause();
    for (let i = 0; i < 8; i++) await app.byId('step-forward').click();
    const m = await measure(page);
    const share = (m.w * m.h) / (w * h);
    expect(share, `diagram share ${share.toFixed(3)}`).toBeGreaterThanOrEqual(0.65);
    expect(m.y, 'controls above the diagram').toBeLessThanOrEqual(64);
    expect(m.smallest, `smallest diagram text "${m.smallestText}"`).toBeGreaterThanOrEqual(16);
    expect(m.card, 'packet card text').toBeGreaterThanOrEqual(18);
    for (const id of ['play-pause', 'step-forward', 'step-back', 'hop-caption', 'send-packet', 'node-pipeline']) await inViewport(page, id);
    // A Pod's readiness control: the Pod opens its controls on the diagram.
    const pod = page.locator('g[data-testid^="pod-web-"]').first();
    const name = (await pod.getAttribute('data-testid'))!.replace(/^pod-/, '');
    await pod.click();
    await inViewport(page, `pod-${name}-controls`);
    await expect(page.getByTestId(`pod-${name}-controls`).locator('button[data-action=readiness]')).toBeVisible();
    // The event list shows the whole packet without scrolling the page.
    expect(await page.evaluate(() => document.scrollingElement!.scrollTop)).toBe(0);
    await page.screenshot({ path: `${shots}/learner-${w}x${h}.png` });
  });
}

test('every hop of a LoadBalancer trace moves the packet or the current pipeline step, in every mode', async ({ page }) => {
  const app = new App(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  await app.open('/?scenario=loadbalancer-cluster&lang=en');
  for (const mode of ['iptables', 'ipvs', 'nftables', 'userspace']) {
    await app.selectMode(mode);
    await app.send();
    await app.pause();
    // Back to the first hop, then forward one hop at a time.
    for (let i = 0; i < 40; i++) {
      if ((await app.hops.first().getAttribute('aria-current')) === 'step') break;
      await app.byId('step-back').click();
    }
    const n = await app.hops.count();
    expect(n).toBeGreaterThan(10);
    let before = await look(page);
    for (let i = 1; i < n; i++) {
      await app.byId('step-forward').click();
      await expect(app.hops.nth(i)).toHaveAttribute('aria-current', 'step');
      const now = await look(page);
      expect(now, `${mode}: hop ${i + 1} changes nothing on the diagram`).not.toBe(before);
      before = now;
    }
    // Passed hops are ticked, numbered from 1 with whole ordinals.
    await expect(app.hops.first().locator('.hop-ordinal')).toHaveText('1.');
    await expect(app.hops.nth(n - 1).locator('.hop-ordinal')).toHaveText(`${n}.`);
    await expect(app.hops.first().locator('.hop-n')).toHaveText('✓');
    await page.screenshot({ path: `${shots}/pipeline-${mode}.png` });
  }
});

test('the four modes draw different pipelines, at rest and for the same packet', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=en');
  await app.speed('4');
  const rest: string[] = [];
  const sent: string[] = [];
  const glyphs: string[] = [];
  for (const mode of ['iptables', 'ipvs', 'nftables', 'userspace']) {
    await app.byId('reset').click();
    await app.selectMode(mode);
    const steps = () => page.getByTestId('pipeline-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-step')).join(' → '));
    rest.push(await steps());
    glyphs.push((await page.getByTestId('mode-glyph').first().textContent()) ?? '');
    await app.send();
    await app.outcome();
    sent.push(await steps());
  }
  expect(new Set(rest).size, rest.join('\n')).toBe(4);
  expect(new Set(sent).size, sent.join('\n')).toBe(4);
  expect(new Set(glyphs).size, glyphs.join(' | ')).toBe(4);
  expect(sent[0]).toContain('KUBE-SERVICES → KUBE-NODEPORTS → KUBE-EXT → KUBE-SVC → KUBE-SEP');
  expect(sent[1]).toContain('ipvs-virtual-server → ipvs-real-server');
  expect(sent[2]).toContain('nft-services-map');
  expect(sent[3]).toContain('kube-proxy-process');
});

test('the packet\'s route stays drawn after delivery, with marks where its header changed', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=en');
  await app.speed('4');
  await app.send();
  await app.outcome();
  // Past the end of the flight and its linger: the packet is gone, the trail is not.
  await expect(page.getByTestId('packet')).toHaveCount(0, { timeout: 20_000 });
  const d = await page.getByTestId('path-trail').getAttribute('d');
  expect((d ?? '').split('L').length).toBeGreaterThan(10);
  // Drawn above every box, in a colour of its own (not the Service → Pod edges' blue).
  const look = await page.evaluate(() => {
    const trail = document.querySelector('[data-testid=path-trail]')!;
    const boxes = [...document.querySelectorAll('.diagram .node, .diagram .pod, .diagram .service, .diagram .node-pipeline')];
    const above = boxes.every((b) => b.compareDocumentPosition(trail) & Node.DOCUMENT_POSITION_FOLLOWING);
    const edge = document.querySelector('.diagram .edge');
    return {
      above, boxes: boxes.length,
      trail: getComputedStyle(trail).stroke,
      edge: edge ? getComputedStyle(edge).stroke : '',
    };
  });
  expect(look.boxes).toBeGreaterThan(5);
  expect(look.above, JSON.stringify(look)).toBe(true);
  expect(look.trail).not.toBe(look.edge);
  // Measured: points every 4 units along it, the share where the trail is
  // what the reader sees on top (nothing drawn over it there).
  await page.addStyleTag({ content: '.path-trail { pointer-events: stroke !important; }' });
  const seen = await page.evaluate(() => {
    const trail = document.querySelector('[data-testid=path-trail]') as SVGPathElement;
    const m = trail.getScreenCTM()!;
    const total = trail.getTotalLength();
    let shown = 0, all = 0;
    for (let l = 0; l <= total; l += 4) {
      const p = trail.getPointAtLength(l);
      const x = m.a * p.x + m.c * p.y + m.e, y = m.b * p.x + m.d * p.y + m.f;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) { all++; continue; }
      all++;
      if (document.elementFromPoint(x, y) === trail) shown++;
    }
    return { shown, all };
  });
  expect(seen.shown / seen.all, JSON.stringify(seen)).toBeGreaterThanOrEqual(0.8);
  expect(await page.getByTestId('trail-change').count()).toBeGreaterThanOrEqual(2);
  // Static wires: client → load balancer → every node.
  expect(await page.getByTestId('link').count()).toBeGreaterThanOrEqual(4);
  // The next send starts a new trail.
  await app.send();
  await app.pause();
  const d2 = await page.getByTestId('path-trail').getAttribute('d').catch(() => null);
  expect(d2 ?? '').not.toBe(d);
});

test('a preset embed at 720×405 can send a packet and reads at 12 px, with a caption of at least 14 px', async ({ page }) => {
  await page.setViewportSize({ width: 720, height: 405 });
  const app = new App(page);
  await app.open('/embed/?scenario=loadbalancer-local&mode=iptables&lang=en');
  await inViewport(page, 'send-packet');
  await inViewport(page, 'hop-caption');
  const capPx = await page.getByTestId('hop-caption').evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
  expect(capPx).toBeGreaterThanOrEqual(14);
  // At rest the mode's pipeline is drawn (the embed is not an empty
  // diagram), with the poster's packet on it.
  await expect(page.getByTestId('pipeline-step').first()).toBeVisible();
  await expect(page.getByTestId('packet')).toHaveCount(1);
  const poster = await page.locator('[data-testid=packet].focused').getAttribute('data-id');
  await app.byId('send-packet').click();
  await expect(page.locator('[data-testid=packet].focused')).not.toHaveAttribute('data-id', poster!);
  await page.waitForTimeout(1500);
  const m = await measure(page);
  expect(m.smallest, `smallest "${m.smallestText}"`).toBeGreaterThanOrEqual(12);
  // Which hop (the card carries the sentence).
  await expect(page.getByTestId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
  await page.screenshot({ path: `${shots}/embed-720x405.png` });
  // The Gateway preset (four Pods on one node, two side by side) reads at
  // 12 px too, every Pod's address whole.
  await app.open('/embed/?scenario=gateway-api&lang=en');
  const g = await measure(page);
  expect(g.smallest, `smallest "${g.smallestText}"`).toBeGreaterThanOrEqual(12);
  const podTexts = await page.locator('[data-testid^=pod-] text.mono').allTextContents();
  expect(podTexts.length).toBeGreaterThanOrEqual(6);
  for (const ip of podTexts) expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  // Play at rest plays the poster's packet on from its hop.
  await page.goto('/embed/?scenario=loadbalancer-cluster&lang=en');
  await expect(page.getByTestId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
  const at = await app.clockMs();
  await app.byId('play-pause').click();
  await expect.poll(() => app.clockMs()).toBeGreaterThan(at);
  await expect(page.getByTestId('packet')).toHaveCount(1);
});

test('in Korean the hop descriptions, caption and pipeline words are Korean', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=ko');
  await app.speed('4');
  for (const mode of ['iptables', 'ipvs', 'nftables', 'userspace']) {
    await app.selectMode(mode);
    await app.send();
    await app.outcome();
    const texts = await page.locator('[data-testid=hop] .hop-title').allInnerTexts();
    texts.push(await app.byId('hop-caption').innerText());
    texts.push(...await page.locator('[data-testid=pipeline-step] text').evaluateAll((els) => els.map((e) => e.textContent ?? '')));
    for (const t of texts) {
      // Names stay as they are: chains, objects and addresses are tokens
      // with a dash, slash, dot, colon or digit (KUBE-SVC-…, web-3,
      // 10.244.2.5:8080, filter-prerouting); upper-case words are kernel names.
      const prose = t.split(/\s+/)
        .filter((tok) => !/[-/.:0-9@_]/.test(tok))
        .flatMap((tok) => tok.match(/[a-z]{3,}/g) ?? [])
        .filter((w) => !['ipvs', 'conntrack', 'eth', 'dnat', 'masq', 'kube', 'proxy', 'goto', 'jump', 'tcp', 'udp', 'services', 'masquerading', 'nodeports', 'ips', 'http', 'default', 'external', 'service', 'endpoint', 'firewall'].includes(w));
      expect(prose, `${mode}: "${t}"`).toEqual([]);
    }
  }
  await page.screenshot({ path: `${shots}/learner-ko.png` });
});

test('in Korean the packet card is as wide as its text and stays inside the diagram at every hop', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=ko&mode=iptables');
  await app.speed('4');
  await app.send();
  await app.outcome();
  await app.pause();
  const card = app.byId('packet-card');
  let seen = 0;
  for (let i = 0; i < 60; i++) {
    if (await card.isVisible()) {
      const fit = await card.evaluate((g) => {
        const svg = g.closest('svg')!.getBoundingClientRect();
        const box = g.querySelector('rect')!.getBoundingClientRect();
        const texts = [...g.querySelectorAll('text')].map((t) => ({ text: t.textContent ?? '', r: t.getBoundingClientRect() }));
        return { svgRight: svg.right, box: { left: box.left, right: box.right }, texts: texts.map((t) => ({ text: t.text, left: t.r.left, right: t.r.right })) };
      });
      expect(fit.box.right, 'card inside the diagram').toBeLessThanOrEqual(fit.svgRight + 0.5);
      for (const t of fit.texts.filter((t) => t.text.trim() !== '')) {
        expect(t.right, `"${t.text}" inside its card`).toBeLessThanOrEqual(fit.box.right + 0.5);
        expect(t.left, `"${t.text}" inside its card`).toBeGreaterThanOrEqual(fit.box.left - 0.5);
      }
      if (fit.texts.some((t) => /[\uAC00-\uD7AF]/.test(t.text))) seen++;
    }
    const before = await app.clockMs();
    await app.byId('step-back').click();
    if ((await app.clockMs()) === before) break;
  }
  expect(seen, 'hops with Korean words on the card').toBeGreaterThan(3);
});

test('?step=N stops at hop N counted from 1, as the event list numbers it', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&step=3&lang=en');
  await expect(page.locator('[data-testid=hop][aria-current=step] .hop-ordinal')).toHaveText('3.');
  await expect(app.byId('hop-caption')).toContainText('Hop 3 of');
});

/** The two elements' boxes do not overlap. */
async function apart(a: Locator, b: Locator) {
  const [p, q] = [await a.boundingBox(), await b.boundingBox()];
  expect(p && q).toBeTruthy();
  const overlap = p!.x < q!.x + q!.width && q!.x < p!.x + p!.width && p!.y < q!.y + q!.height && q!.y < p!.y + p!.height;
  expect(overlap, `${JSON.stringify(p)} over ${JSON.stringify(q)}`).toBe(false);
}

/** The seed at 1280×720, 4× speed, with the first alpaca Pod's controls open. */
async function alpacaControls(page: Page) {
  const app = new App(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  await app.open('/?lang=en');
  await app.speed('4');
  const pod = app.alpacaPods().first();
  const name = (await pod.getAttribute('data-testid'))!.replace(/^pod-/, '');
  await pod.click();
  return { app, pod, name, controls: page.getByTestId(`pod-${name}-controls`) };
}

test('readiness on the diagram: a Pod\'s controls fail its probe, the probe count, the Service\'s endpoint change and the Events feed follow, and back', async ({ page }) => {
  const { app, pod, name, controls } = await alpacaControls(page);
  await controls.locator('button[data-action=readiness]').click();
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'true');
  // No packet was sent: the side column shows the Events feed, not an empty hop list.
  await expect(app.byId('tab-events')).toHaveAttribute('aria-selected', 'true');
  // The probe counts up on the Pod, then the endpoint leaves the Service.
  await expect(page.locator(`[data-testid=probe-chip][data-owner="${name}"]`)).toContainText('/3 ✖', { timeout: 20_000 });
  await expect(pod).toHaveAttribute('data-ready', 'false', { timeout: 30_000 });
  await expect(page.locator('[data-testid=endpoints-chip][data-owner=alpaca-service]')).toContainText('endpoints 3 → 2', { timeout: 10_000 });
  await app.byId('tab-events').click();
  const events = page.getByTestId('events');
  await expect(events.locator('[data-testid=event][data-kind=probe]').first()).toContainText('Readiness probe failed');
  await expect(events.locator('[data-testid=event][data-kind=endpoints]').first()).toContainText('alpaca-service');
  await expect(events.locator('[data-testid=event][data-kind=sync]').first()).toBeVisible({ timeout: 10_000 });
  await inViewport(page, 'tab-events');
  const firstEvent = await events.locator('[data-testid=event]').first().boundingBox();
  expect(firstEvent!.y + firstEvent!.height).toBeLessThanOrEqual(720);
  await page.screenshot({ path: `${shots}/readiness-events.png` });
  // And back (its controls are still open): the Pod passes again and the
  // endpoint returns.
  await controls.locator('button[data-action=readiness]').click();
  await expect(pod).toHaveAttribute('data-ready', 'true', { timeout: 30_000 });
  await expect(page.locator('[data-testid=endpoints-chip][data-owner=alpaca-service]')).toContainText('endpoints 2 → 3', { timeout: 10_000 });
});

test('liveness on the diagram: a failing liveness check restarts the Pod once, it leaves the Service only at the restart and the new container is healthy', async ({ page }) => {
  const { app, pod, name, controls } = await alpacaControls(page);
  const liveness = controls.locator('button[data-action=liveness]');
  // Every control is inside the diagram's popup, whole.
  for (const b of await controls.locator('button').all()) await expect(b).toBeInViewport({ ratio: 1 });
  await expect(liveness).toHaveText('Fail liveness');
  await liveness.click();
  await expect(liveness).toHaveAttribute('aria-pressed', 'true');
  // The chip counts the liveness failures, beside the Pod's name, not over it.
  const chip = page.locator(`[data-testid=probe-chip][data-owner="${name}"]`);
  await expect(chip).toContainText('liveness', { timeout: 20_000 });
  await app.pause();
  await apart(chip.locator('rect'), pod.locator('text.strong').first());
  await app.byId('play-pause').click();
  // The kubelet restarts the container after three failed liveness probes:
  // the Events feed says so in its words, the Pod is NotReady and back.
  await app.byId('tab-events').click();
  const events = page.getByTestId('events');
  await expect(events.locator('[data-testid=event]').filter({ hasText: 'failed liveness probe, will be restarted' })).toHaveCount(1, { timeout: 40_000 });
  const endpoints = page.locator('[data-testid=endpoints-chip][data-owner=alpaca-service]');
  await expect(endpoints).toContainText('endpoints 2 → 3', { timeout: 20_000 });
  await app.pause();
  await apart(endpoints.locator('rect'), page.locator('[data-testid=service-alpaca-service] text.title'));
  await app.byId('play-pause').click();
  await expect(pod).toHaveAttribute('data-ready', 'true');
  // The new process is healthy: the button is no longer pressed, and no
  // second restart follows.
  await expect(liveness).toHaveAttribute('aria-pressed', 'false');
  await expect(liveness).toHaveText('Fail liveness');
  await page.waitForTimeout(6_000);
  await expect(events.locator('[data-testid=event]').filter({ hasText: 'will be restarted' })).toHaveCount(1);
});

test('an app taken down does not answer: the Events feed says the kubelet\'s probe timed out, in its words, and the Pod goes NotReady', async ({ page }) => {
  const { app, pod, controls } = await alpacaControls(page);
  await controls.locator('button[data-action=app]').click();
  await app.byId('tab-events').click();
  const failed = page.getByTestId('events').locator('[data-testid=event]').filter({ hasText: 'Readiness probe failed' });
  await expect(failed.first()).toContainText(
    /Get "http:\/\/10\.244\.\d+\.\d+:8080\/ready": context deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)/,
    { timeout: 20_000 });
  await expect(pod).toHaveAttribute('data-ready', 'false', { timeout: 20_000 });
});

test('the readiness lesson\'s liveness page: restarted once, the Pod gets connections again, in both languages', async ({ page }) => {
  const app = new App(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  for (const [lang, right] of [['en', 'the restarted container is healthy'], ['ko', '재시작된 컨테이너는 정상']]) {
    await app.open(`/?lesson=readiness&page=3&lang=${lang}`);
    await expect(app.byId('lesson-progress')).toContainText('3 / 3');
    await page.locator('label.check').filter({ hasText: right }).getByTestId('lesson-choice').check();
    await app.byId('lesson-check').click();
    await expect(app.byId('lesson-result')).toHaveAttribute('data-correct', 'true');
  }
});

test('the compare view plays the focused packet in each mode with its own pipeline and rule count', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=en');
  await app.send();
  await app.outcome();
  await app.byId('compare-toggle').click();
  const view = page.getByTestId('compare-view');
  await expect(view.getByTestId('compare-mode')).toHaveCount(4);
  const totals = await view.getByTestId('compare-mode').evaluateAll((els) => els.map((e) => [e.getAttribute('data-mode'), e.getAttribute('data-total'), Array.from(e.querySelectorAll('li')).map((li) => li.getAttribute('data-step')).join(',')]));
  expect(new Set(totals.map((t) => t[2])).size).toBe(4);
  for (const [mode, total] of totals) expect(Number(total), `${mode}`).toBeGreaterThan(0);
  await page.getByTestId('compare-cilium').uncheck();
  await expect(view.getByTestId('compare-mode')).toHaveCount(3);
  await view.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/compare.png` });
});

test('the Local and Cluster presets look different at rest: the node the load balancer skips is dimmed with the reason', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-local&lang=en');
  await expect(page.getByTestId('node-worker-3')).toHaveAttribute('data-lb-skipped', 'true');
  await expect(page.getByTestId('node-worker-3').getByTestId('lb-skip-reason')).toContainText('LB skips this node');
  await expect(page.getByTestId('node-worker-1')).toHaveAttribute('data-lb-skipped', 'false');
  await app.open('/?scenario=loadbalancer-cluster&lang=en');
  await expect(page.locator('[data-lb-skipped=true]')).toHaveCount(0);
  // A packet through the load balancer never goes to the skipped node.
  await app.open('/?scenario=loadbalancer-local&lang=en');
  await app.speed('4');
  for (let i = 0; i < 3; i++) {
    await app.send();
    await app.outcome();
    await expect(page.locator('[data-testid=hop][data-hop=load-balancer]')).not.toContainText('worker-3');
  }
  await page.screenshot({ path: `${shots}/lb-local-skipped.png` });
});

test('lesson navigation keeps the language in the address', async ({ page }) => {
  const app = new App(page);
  await app.open('/?lesson=readiness&page=1&lang=ko');
  await app.byId('lesson-next').click();
  await expect.poll(() => page.url()).toContain('lesson=readiness&page=2&lang=ko');
  await page.getByTestId('lang-select').selectOption('en');
  await app.byId('lesson-prev').click();
  await expect.poll(() => page.url()).toContain('lesson=readiness&page=1&lang=en');
  await app.byId('lesson-close').click();
  await expect.poll(() => page.url()).toMatch(/\?lang=en$/);
});

for (const lang of ['en', 'ko']) {
  test(`at 1280×720 in ${lang} the lesson picker's label is one line and the Local preset's skip reason stays inside its node`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?scenario=loadbalancer-local&lang=${lang}`);
    const label = await page.getByTestId('lesson-panel').locator('label.lesson-pick > span').first().evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { h: r.height, line: parseFloat(getComputedStyle(el).lineHeight) || parseFloat(getComputedStyle(el).fontSize) * 1.25, text: el.textContent };
    });
    expect(label.h, `"${label.text}" ${label.h}px for a ${label.line}px line`).toBeLessThan(label.line * 1.5);
    const node = page.getByTestId('node-worker-3');
    await expect(node).toHaveAttribute('data-lb-skipped', 'true');
    const fit = await node.evaluate((g) => {
      const border = g.querySelector('rect.node-box')!.getBoundingClientRect();
      const text = g.querySelector('[data-testid=lb-skip-reason]')!.getBoundingClientRect();
      return { border: [border.left, border.right], text: [text.left, text.right] };
    });
    expect(fit.text[0], JSON.stringify(fit)).toBeGreaterThanOrEqual(fit.border[0]);
    expect(fit.text[1], JSON.stringify(fit)).toBeLessThanOrEqual(fit.border[1] - 4);
    await page.screenshot({ path: `${shots}/local-skip-${lang}.png` });
  });
}

test('the compare view opened before anything was sent sends its packet itself: never a blank view', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=nodeport&lang=en');
  await expect(page.getByTestId('packet')).toHaveCount(0);
  await app.byId('compare-toggle').click();
  await expect(page.getByTestId('compare-view').getByTestId('compare-mode')).toHaveCount(4, { timeout: 20_000 });
});

test('Share from a lesson gives a link that reopens the lesson at its page and language', async ({ page, browser }) => {
  const app = new App(page);
  await app.open('/?lesson=readiness&page=2&lang=ko');
  await expect(app.byId('lesson-progress')).toContainText('2 /');
  await app.byId('share-link').click();
  const url = await app.byId('share-url').inputValue();
  expect(url).toMatch(/\?lesson=readiness&page=2&lang=ko$/);
  const fresh = await (await browser.newContext()).newPage();
  const again = new App(fresh);
  await again.open(url);
  await expect(again.byId('lesson-progress')).toContainText('2 /');
  await expect(fresh.locator('html')).toHaveAttribute('lang', 'ko');
});

test('the DNS tab looks a Service name up as the client Pod\'s resolver does, in both languages', async ({ page }) => {
  const app = new App(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  await app.open('/');
  await app.byId('tab-dns').click();
  const answer = app.byId('dns-answer');
  // The chosen target's Service, short, through the search list.
  await expect(app.byId('dns-name')).toHaveValue(/^alpaca-service\.default$/);
  await expect(answer).toContainText('search default.svc.cluster.local svc.cluster.local cluster.local');
  await expect(answer).toContainText('alpaca-service.default.default.svc.cluster.local. IN A: NXDOMAIN');
  await expect(answer).toContainText(/alpaca-service\.default\.svc\.cluster\.local\.\s+30\s+IN\s+A\s+10\./);
  // SRV by port name, and a name that does not exist.
  await app.byId('dns-type').selectOption('SRV');
  await expect(answer).toContainText(/IN\s+SRV\s+0 100 8080 alpaca-service\.default\.svc\.cluster\.local\./);
  await app.byId('dns-type').selectOption('A');
  await app.byId('dns-name').fill('nope.default.svc.cluster.local.');
  await expect(answer).toContainText('nope.default.svc.cluster.local. IN A: NXDOMAIN');
  await page.screenshot({ path: `${shots}/dns-tab-en.png` });
  await app.open('/?lang=ko');
  await app.byId('tab-dns').click();
  await expect(app.byId('dns-panel')).toContainText('리졸버');
  await page.screenshot({ path: `${shots}/dns-tab-ko.png` });
});

test('at 1280×720 every lesson page has its Check or Play on the first screen, in both languages', async ({ page }) => {
  test.setTimeout(300_000);
  // The lessons and their page counts, as the app's index lists them.
  const index = fs.readFileSync(path.join(__dirname, '../../../web/src/lessons.rs'), 'utf8');
  const lessons = [...index.matchAll(/id: "([a-z-]+)",\s*pages: (\d+)/g)].map((m) => [m[1], Number(m[2])] as [string, number]);
  expect(lessons.length).toBeGreaterThanOrEqual(9);
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  const below: string[] = [];
  for (const lang of ['en', 'ko']) {
    for (const [id, pages] of lessons) {
      for (let p = 1; p <= pages; p++) {
        await app.open(`/?lesson=${id}&page=${p}&lang=${lang}`);
        const b = await app.byId('lesson-check').or(app.byId('lesson-play')).first().boundingBox();
        if (!b || b.y + b.height > 720) below.push(`${lang} ${id} page ${p}: bottom at ${b ? Math.round(b.y + b.height) : 'none'}`);
      }
    }
  }
  expect(below).toEqual([]);
});
