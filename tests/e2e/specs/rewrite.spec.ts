// ingress-nginx's rewrite-target and regular-expression paths in the app:
// the proxy's filters hop says what path the backend gets, the Routing tab
// lists the locations as nginx writes them, and an Ingress its admission
// webhook denies is listed as denied rather than vanishing.
import { test, expect, Page } from '@playwright/test';
import { App } from './app';

const shots = 'test-results/screens';
const AT = '  name: test-ingress\n  namespace: default\n';
const API = '          - path: /api\n            pathType: Prefix\n';

async function rewriteIngress(page: Page, lang: string, pathType: string) {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open(`/?scenario=ingress&lang=${lang}`);
  const yaml = await app.byId('yaml-editor').inputValue();
  expect(yaml).toContain(AT);
  expect(yaml).toContain(API);
  await app.byId('yaml-editor').fill(yaml
    .replace(AT, `${AT}  annotations:\n    nginx.ingress.kubernetes.io/use-regex: "true"\n    nginx.ingress.kubernetes.io/rewrite-target: /$2\n`)
    .replace(API, `          - path: /api(/|$)(.*)\n            pathType: ${pathType}\n`));
  await app.byId('yaml-apply').click();
  await expect(app.byId('errors')).toHaveCount(0);
  // Applied: the page shows the user's own YAML (loading it resets the form).
  await expect(app.byId('scenario-select')).toHaveValue('custom');
  await page.evaluate(() => window.scrollTo(0, 0));
  return app;
}

async function request(app: App, url: string) {
  await app.byId('request-url').fill(url);
  await expect(app.byId('request-url')).toHaveValue(url);
  await app.send();
}

for (const lang of ['en', 'ko']) {
  test(`rewrite-target (${lang}): the backend gets the rewritten path, and the Routing tab shows nginx's locations`, async ({ page }) => {
    const app = await rewriteIngress(page, lang, 'ImplementationSpecific');
    await request(app, 'https://testhost.com/API/v1?x=1');
    expect(await app.outcome()).toBe('delivered');
    const hops = (await app.hops.allInnerTexts()).join('\n');
    const filters = lang === 'en'
      ? 'Filters applied: rewrite-target · path /API/v1?x=1 → /v1?x=1'
      : '적용된 필터: rewrite-target · 경로 /API/v1?x=1 → /v1?x=1';
    expect(hops).toContain(filters);
    await app.byId('tab-routing').click();
    const rows = page.getByTestId('routing-rule');
    const matched = page.locator('[data-testid=routing-rule][data-matched=true]');
    await expect(matched).toHaveCount(1);
    await expect(matched).toContainText('~* ^/api(/|$)(.*) → default/service-api:80 · rewrite /$2');
    // Every path of the host is a location now, `/` last.
    const texts = await rows.allInnerTexts();
    const root = texts.findIndex((t) => t.includes('~* ^/ → default/service-test:80'));
    const api = texts.findIndex((t) => t.includes('~* ^/api(/|$)(.*)'));
    expect(api, texts.join('\n')).toBeGreaterThanOrEqual(0);
    expect(root, texts.join('\n')).toBeGreaterThan(api);
    await page.screenshot({ path: `${shots}/rewrite-${lang}.png` });
  });
}

test('a regular expression under pathType Prefix: the Ingress is denied, the controller answers 404, and the Routing tab says why', async ({ page }) => {
  const app = await rewriteIngress(page, 'en', 'Prefix');
  await request(app, 'https://testhost.com/api/v1');
  expect(await app.outcome()).not.toBe('delivered');
  await expect(app.verdict).toContainText('404');
  await app.byId('tab-routing').click();
  const denied = page.getByTestId('routing-rule').filter({ hasText: 'denied by the admission webhook' });
  await expect(denied).toHaveCount(1);
  await expect(denied).toContainText('path /api(/|$)(.*) cannot be used with pathType Prefix');
  await page.screenshot({ path: `${shots}/rewrite-denied.png` });
});
