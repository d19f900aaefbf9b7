// HTTP routing, seen whole: the request card in the side column is fully on
// screen and uncovered at 1280×720 for every HTTP preset in English and
// Korean (the embed leaves it out); the routing table keeps the deciding row
// in its own scroll box; ingress-nginx's service-upstream sends the proxy's
// second connection to the ClusterIP and through kube-proxy, via the
// Service; each connection of the journey is its own line of the trail.
// Screenshots go to artifacts/screens.
import { test, expect, Page } from '@playwright/test';
import { App, currentStep, stepUntil } from './app';

const shots = 'artifacts/screens';

/** The element's box is inside the viewport and nothing else is drawn over
 * it: the topmost element at points across it belongs to it. */
async function wholeAndUncovered(page: Page, testId: string) {
  return page.getByTestId(testId).evaluate((el) => {
    const r = el.getBoundingClientRect();
    const inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5;
    const covered: string[] = [];
    for (const fx of [0.05, 0.5, 0.95]) {
      for (const fy of [0.05, 0.5, 0.95]) {
        const x = r.left + r.width * fx;
        const y = r.top + r.height * fy;
        const hit = document.elementFromPoint(x, y);
        if (!hit || !el.contains(hit)) covered.push(`${Math.round(x)},${Math.round(y)}: ${hit?.outerHTML.slice(0, 80)}`);
      }
    }
    const px = Array.from(el.querySelectorAll('p')).map((p) => parseFloat(getComputedStyle(p).fontSize));
    return { box: [r.left, r.top, r.width, r.height].map(Math.round), inside, covered, smallest: Math.min(...px) };
  });
}

const presets = [
  { key: 'ingress', url: 'https://testhost.com/anything' },
  { key: 'gateway-api', url: 'https://www.example.com/store' },
  { key: 'article-ingress', url: 'https://testhost.com/anything' },
];

for (const p of presets) {
  for (const lang of ['en', 'ko']) {
    test(`${p.key} (${lang}): the request card is whole and uncovered at 1280×720 once the backend is chosen`, async ({ page }) => {
      await page.setViewportSize({ width: 1280, height: 720 });
      const app = new App(page);
      await app.open(`/?scenario=${p.key}&lang=${lang}`);
      await app.byId('request-url').fill(p.url);
      await app.send();
      await app.pause();
      expect(await stepUntil(app, async () => (await currentStep(page)) === 'backend')).toBe(true);
      // Both halves: what the client sent and what the backend gets.
      await expect(app.byId('request-card')).toContainText(p.url);
      await expect(app.byId('request-card')).toContainText('x-forwarded-proto: https');
      const m = await wholeAndUncovered(page, 'request-card');
      expect(m.inside, `request card at ${m.box}`).toBe(true);
      expect(m.covered, `request card at ${m.box}`).toEqual([]);
      expect(m.smallest, 'request card text').toBeGreaterThanOrEqual(18);
      // The page itself did not scroll.
      expect(await page.evaluate(() => document.scrollingElement?.scrollTop ?? 0)).toBe(0);
      await page.screenshot({ path: `${shots}/http-view-card-${p.key}-${lang}.png` });
    });
  }
}

test('in the embed (720×405) the request card is deliberately absent: the diagram and its packet card tell the journey', async ({ page }) => {
  await page.setViewportSize({ width: 720, height: 405 });
  const app = new App(page);
  await app.open('/embed/?scenario=gateway-api&lang=en');
  await app.send();
  await app.pause();
  expect(await stepUntil(app, async () => (await currentStep(page)) === 'backend')).toBe(true);
  // The packet card carries the hop's sentence, on up to three lines.
  const said = (await app.byId('packet-card').locator('text').allTextContents()).join(' ');
  expect(said).toContain('connects straight to Pod');
  await expect(app.byId('hop-caption')).toHaveText(/^Hop \d+ of \d+$/);
  await expect(app.byId('request-card')).toHaveCount(0);
  await page.screenshot({ path: `${shots}/http-view-embed.png` });
});

test('the routing table scrolls its own box, not the page, to the row that decided', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open('/?scenario=gateway-api&lang=en');
  await app.speed('4');
  // The tab is open before the request is decided: the row comes into view
  // when the decision is made.
  await app.byId('tab-routing').click();
  await app.byId('request-url').fill('https://www.example.com/');
  await app.send();
  await app.outcome();
  const matched = page.locator('[data-testid=routing-rule][data-matched=true]');
  await expect(matched).toHaveCount(1);
  await expect(matched).toContainText('home');
  const inView = () => page.getByTestId('routing-rules').evaluate((ol) => {
    const row = ol.querySelector('li.matched') as HTMLElement;
    const c = ol.getBoundingClientRect();
    const r = row.getBoundingClientRect();
    return {
      scrolls: ol.scrollHeight > ol.clientHeight + 1,
      // At the top of the list the row would be out of sight.
      hiddenAtTop: row.offsetTop + row.offsetHeight > ol.clientHeight,
      visible: r.top >= c.top - 0.5 && r.bottom <= c.bottom + 0.5,
      page: document.scrollingElement?.scrollTop ?? 0,
    };
  });
  await expect.poll(async () => (await inView()).visible).toBe(true);
  const v = await inView();
  expect(v.scrolls, 'the table is longer than its box').toBe(true);
  expect(v.hiddenAtTop, 'the row is below the first rows').toBe(true);
  expect(v.page).toBe(0);
  // A request decided by an early rule brings its row back into view.
  await app.byId('request-url').fill('https://www.example.com/store');
  await app.send();
  await app.pause();
  await expect(matched).toContainText('PathPrefix /store');
  await expect.poll(async () => (await inView()).visible).toBe(true);
  // Opened again after the decision, the tab shows the row at once.
  await app.byId('request-url').fill('https://www.example.com/');
  await app.send();
  await app.pause();
  await app.byId('tab-hops').click();
  await app.byId('tab-routing').click();
  await expect(matched).toContainText('home');
  await expect.poll(async () => (await inView()).visible).toBe(true);
  expect((await inView()).page).toBe(0);
  await page.screenshot({ path: `${shots}/http-view-routing.png` });
});

for (const lang of ['en', 'ko']) {
  test(`service-upstream (${lang}): the proxy's second connection goes to the ClusterIP, through kube-proxy, via the Service`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?scenario=ingress&lang=${lang}`);
    const yaml = await app.byId('yaml-editor').inputValue();
    const at = '  name: test-ingress\n  namespace: default\n';
    expect(yaml).toContain(at);
    await app.byId('yaml-editor').fill(yaml.replace(at,
      `${at}  annotations:\n    nginx.ingress.kubernetes.io/service-upstream: "true"\n`));
    await app.byId('yaml-apply').click();
    await expect(app.byId('errors')).toHaveCount(0);
    await page.evaluate(() => window.scrollTo(0, 0));
    await app.byId('request-url').fill('https://testhost.com/anything');
    await app.send();
    await app.pause();
    // Step to the first hop after the proxy's new connection.
    expect(await stepUntil(app, async () => (await currentStep(page)) === 'backend')).toBe(true);
    const words = lang === 'en'
      ? { connect: 'to ClusterIP 10.96.10.10:80', again: 'through kube-proxy again', dnat: /destination rewritten to 10\.244\.\d+\.\d+:8080 \(DNAT\)/ }
      : { connect: 'ClusterIP 10.96.10.10:80(으)로 새 연결', again: '다시 kube-proxy를 거침', dnat: /목적지를 10\.244\.\d+\.\d+:8080\(으\)로 변경 \(DNAT\)/ };
    await expect(app.byId('hop-caption')).toContainText(words.connect);
    await expect(app.byId('hop-caption')).toContainText(words.again);
    // Then the node's kube-proxy rules, while the packet is addressed to
    // the Service: its box is lit, and a DNAT sends it to a Pod.
    expect(await stepUntil(app, async () => (await app.byId('service-service-test').getAttribute('data-via')) === 'true', 10)).toBe(true);
    await expect(page.locator('[data-testid=pipeline-step][data-step=KUBE-SERVICES]')).toHaveCount(1);
    expect(await stepUntil(app, async () => /DNAT/.test(await app.byId('hop-caption').innerText()), 20)).toBe(true);
    await expect(app.byId('hop-caption')).toContainText(words.dnat);
    await page.screenshot({ path: `${shots}/http-view-upstream-${lang}.png` });
    await app.byId('play-pause').click();
    expect(await app.outcome()).toBe('delivered');
    const hops = (await app.hops.allInnerTexts()).join('\n');
    const connect = hops.indexOf(words.connect);
    expect(connect, hops).toBeGreaterThanOrEqual(0);
    expect(hops.slice(connect)).toMatch(words.dnat);
    // In the event list too: after the new connection, hops addressed to the ClusterIP.
    const stages = await app.hops.evaluateAll((els, connect) => {
      const at = els.findIndex((e) => (e.textContent ?? '').includes(connect));
      return els.slice(at + 1).map((e) => e.getAttribute('data-stage'));
    }, words.connect);
    expect(stages).toContain('cluster-ip');
  });
}

test('each connection of the journey is its own line: the current one strong, the earlier one faint, both numbered', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open('/?scenario=ingress&lang=en');
  await app.byId('request-url').fill('https://testhost.com/anything');
  await app.send();
  await app.pause();
  // On the client's connection: one line, no numbers.
  expect(await stepUntil(app, async () => (await currentStep(page)) === 'listener')).toBe(true);
  await expect(page.getByTestId('path-trail')).toHaveAttribute('data-connection', '1');
  await expect(page.getByTestId('path-trail-earlier')).toHaveCount(0);
  await expect(page.getByTestId('trail-number')).toHaveCount(0);
  // On the proxy's connection to the backend: the first is faint.
  expect(await stepUntil(app, async () => /Proxy \S+ connects/.test(await app.byId('hop-caption').innerText()))).toBe(true);
  await app.byId('step-forward').click();
  await app.byId('step-forward').click();
  await expect(page.getByTestId('path-trail')).toHaveAttribute('data-connection', '2');
  await expect(page.getByTestId('path-trail-earlier')).toHaveAttribute('data-connection', '1');
  const look = await page.evaluate(() => {
    const op = (id: string) => parseFloat(getComputedStyle(document.querySelector(`[data-testid=${id}]`)!).strokeOpacity);
    return { now: op('path-trail'), earlier: op('path-trail-earlier') };
  });
  expect(look.earlier * 2, JSON.stringify(look)).toBeLessThan(look.now);
  await expect(page.getByTestId('trail-number')).toHaveCount(2);
  await expect(page.locator('[data-testid=trail-number][data-connection="2"]')).toHaveText('2');
  await page.screenshot({ path: `${shots}/http-view-trail.png` });
});
