// HTTP routing in the app: per preset, an HTTPS request goes client → load
// balancer → node → kube-proxy → the controller's proxy Pod, where TLS ends
// and a rule matches (highlighted in the routing table), then a second
// connection from the proxy Pod reaches a backend Pod; an HTTP request to a
// TLS host ends at the proxy with its redirect; the view stays legible at
// 1280×720 with the proxy drawn; Korean hops are Korean. Screenshots go to
// artifacts/screens.
import { test, expect, Page } from '@playwright/test';
import { App, currentStep, stepUntil } from './app';

const shots = 'artifacts/screens';

const presets = [
  { key: 'ingress', entry: 'ingressclass/nginx', url: 'https://testhost.com/anything', cert: 'default/my-ssl-secret', pods: /^(test-1|test-2)$/, match: 'Prefix /' },
  { key: 'gateway-api', entry: 'gateway/default/web', url: 'https://www.example.com/store', cert: 'default/example-cert', pods: /^store-v[12]-[ab]$/, match: 'PathPrefix /store' },
  { key: 'article-ingress', entry: 'ingressclass/gce', url: 'https://testhost.com/anything', cert: 'default/my-ssl-secret', pods: /^test-/, match: 'ImplementationSpecific /*' },
];

for (const p of presets) {
  test(`${p.key}: an HTTPS request ends TLS at the proxy, matches a rule and reaches a backend Pod on a second connection`, async ({ page }) => {
    const problems = App.watch(page);
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?scenario=${p.key}&lang=en`);
    // The entry point is the first target, with a request filled in.
    await expect(app.byId('request-form')).toBeVisible();
    await expect(app.byId('target-select')).toHaveValue(`http:${p.entry}`);
    await expect(app.byId('send-packet').first()).toHaveText('Send request');
    await app.byId('request-url').fill(p.url);
    await app.send();
    await app.pause();
    // Step to the proxy's listener: TLS ends there with the host's certificate.
    expect(await stepUntil(app, async () => (await currentStep(page)) === 'listener')).toBe(true);
    const listener = page.locator('[data-testid=pipeline-step][data-step=listener]');
    await expect(listener).toContainText('TLS ends · ');
    await expect(listener.locator('title')).toContainText(p.cert);
    await expect(app.byId('node-pipeline')).toContainText('Inside proxy Pod');
    await expect(app.byId('hop-caption')).toContainText('TLS ends at the proxy');
    await expect(app.byId('request-card')).toContainText(p.url.replace(/^https:\/\/[^/]+/, ''));
    await page.screenshot({ path: `${shots}/http-${p.key}-tls.png` });
    // Then route, rule and backend, in order.
    const seen: string[] = [];
    await stepUntil(app, async () => {
      const s = await currentStep(page);
      if (s && seen[seen.length - 1] !== s) seen.push(s);
      return s === 'backend';
    });
    expect(seen.filter((s) => ['listener', 'route', 'rule', 'filters', 'backend'].includes(s))).toEqual(
      expect.arrayContaining(['listener', 'route', 'rule', 'backend']));
    // The second connection: from the proxy Pod's own address to a Pod.
    const card = app.byId('packet-card');
    await expect(card).toContainText('✎');
    await expect(app.byId('hop-caption')).toContainText('connects straight to Pod');
    await expect(app.byId('request-card')).toContainText('x-forwarded-proto: https');
    // The routing table highlights the rule that decided.
    await app.byId('tab-routing').click();
    const matched = page.locator('[data-testid=routing-rule][data-matched=true]');
    await expect(matched).toHaveCount(1);
    await expect(matched).toContainText(p.match);
    await page.screenshot({ path: `${shots}/http-${p.key}-backend.png` });
    // Delivered to a backend Pod.
    await app.byId('play-pause').click();
    expect(await app.outcome()).toBe('delivered');
    const verdict = await app.verdict.innerText();
    const pod = verdict.match(/\b((?:test|store|home)[-\w]*)\b/);
    expect(pod, verdict).not.toBeNull();
    expect(pod![1]).toMatch(p.pods);
    await expect(page.getByTestId('path-trail')).toBeVisible();
    expect(problems).toEqual([]);
  });
}

for (const r of [
  { key: 'ingress', url: 'http://testhost.com/', status: '308', location: 'https://testhost.com/' },
  { key: 'gateway-api', url: 'http://www.example.com/store?x=1', status: '301', location: 'https://www.example.com/store?x=1' },
]) {
  test(`${r.key}: HTTP to a TLS host ends at the proxy with a ${r.status} redirect`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?scenario=${r.key}&lang=en`);
    await app.byId('request-url').fill(r.url);
    await app.send();
    await app.pause();
    expect(await stepUntil(app, async () => (await currentStep(page)) === 'backend')).toBe(true);
    await expect(page.locator('[data-testid=pipeline-step][data-step=backend]')).toContainText(`answers ${r.status}`);
    await expect(app.byId('hop-caption')).toContainText(`answers ${r.status} itself`);
    await expect(app.byId('request-card')).toContainText(`→ ${r.location}`);
    await page.screenshot({ path: `${shots}/http-${r.key}-redirect.png` });
    await app.byId('play-pause').click();
    expect(await app.outcome()).toBe('delivered');
    // The connection ended at the proxy Pod: no backend Pod got it.
    const hops = await app.hops.allInnerTexts();
    expect(hops.join('\n')).not.toMatch(/Proxy \S+ connects/);
  });
}

test('a bad request keeps its text and says where it is wrong', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=ingress&lang=en');
  await app.byId('request-url').fill('testhost.com/anything');
  await app.send();
  await expect(app.byId('request-error')).toContainText('URL, column 1: start with http:// or https://');
  await expect(app.byId('request-url')).toHaveValue('testhost.com/anything');
  await app.byId('request-url').fill('https://testhost.com/');
  await app.byId('request-headers').fill('env canary');
  await app.send();
  await expect(app.byId('request-error')).toContainText('header line 1, column 11');
  await app.byId('request-headers').fill('env: canary');
  await app.send();
  await expect(app.byId('request-error')).toHaveCount(0);
});

test('at 1280×720 with the proxy drawn the diagram keeps its share and projector-sized text', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open('/?scenario=gateway-api&lang=en');
  await app.send();
  await app.pause();
  await stepUntil(app, async () => (await currentStep(page)) === 'rule');
  const m = await page.getByTestId('diagram').evaluate((svg: SVGSVGElement) => {
    const scale = svg.getScreenCTM()?.a ?? 0;
    const box = svg.getBoundingClientRect();
    let smallest = Infinity;
    let text = '';
    let card = Infinity;
    for (const t of Array.from(svg.querySelectorAll('text'))) {
      if (!t.textContent || !t.textContent.trim()) continue;
      const r = t.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (t.closest('[data-testid=packet-card],[data-testid=request-card]')) card = Math.min(card, px);
      else if (!t.closest('[data-testid=packet]') && px < smallest) { smallest = px; text = t.textContent; }
    }
    return { w: box.width, h: box.height, y: box.y, smallest, text, card };
  });
  const share = (m.w * m.h) / (1280 * 720);
  expect(share, `diagram share ${share.toFixed(3)}`).toBeGreaterThanOrEqual(0.65);
  expect(m.smallest, `smallest diagram text "${m.text}"`).toBeGreaterThanOrEqual(16);
  expect(m.card, 'packet and request card text').toBeGreaterThanOrEqual(18);
  // The proxy Pod and its Service are drawn like any other.
  await expect(page.locator('g[data-testid^="pod-envoy-default-web-"]')).toHaveCount(1);
  await page.screenshot({ path: `${shots}/http-1280x720.png` });
});

test('in Korean the proxy\'s hops are Korean', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open('/?scenario=ingress&lang=ko');
  await expect(app.byId('send-packet').first()).toHaveText('요청 보내기');
  await app.send();
  await app.pause();
  expect(await stepUntil(app, async () => (await currentStep(page)) === 'listener')).toBe(true);
  await expect(app.byId('hop-caption')).toContainText('프록시에서 TLS 종료');
  await expect(page.locator('[data-testid=pipeline-step][data-step=listener]')).toContainText('TLS 종료 · ');
  await app.byId('play-pause').click();
  await app.outcome();
  const proxy = await page.locator('[data-testid=hop][data-hop^=http-]').allInnerTexts();
  expect(proxy.length).toBeGreaterThanOrEqual(4);
  for (const h of proxy) {
    expect(h).toMatch(/[가-힣]/);
    const english = h.split(/\s+/)
      .filter((tok) => !/[-/.:0-9@_]/.test(tok))
      .flatMap((tok) => tok.split(/[^A-Za-z]+/))
      .filter((w) => w.length >= 3 && /^[a-z]+$/.test(w) && !['tls', 'sni'].includes(w));
    expect(english, h).toEqual([]);
  }
  await page.screenshot({ path: `${shots}/http-ko.png` });
});
