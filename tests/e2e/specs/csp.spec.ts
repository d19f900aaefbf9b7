// The release build under a strict Content-Security-Policy, as a documentation
// site may serve it: no inline script or style, no eval; only WebAssembly
// compilation is allowed ('wasm-unsafe-eval'). csp_server.py sends the header.
import { test, expect, Page } from '@playwright/test';
import { App } from './app';
import { CSP as CSP_ORIGIN } from '../ports';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const ORIGIN = CSP_ORIGIN;

/** Record every `securitypolicyviolation` event from the first script on. */
async function watchViolations(page: Page) {
  // Init scripts come from the browser's DevTools protocol, not the page, so CSP does not block them.
  await page.addInitScript(() => {
    (window as any).__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as any).__violations.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
}

const violations = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).__violations);

for (const path of ['/', '/docs/kpv/']) {
  test(`the app runs under a strict Content-Security-Policy at ${path}`, async ({ page }) => {
    const problems = App.watch(page);
    await watchViolations(page);
    const response = await page.goto(ORIGIN + path);
    expect(response?.headers()['content-security-policy']).toBe(CSP);
    const app = new App(page);
    await expect(app.byId('diagram')).toBeVisible();
    await expect(app.alpacaPods()).toHaveCount(3);
    await app.speed('4');
    await app.send();
    expect(await app.outcome()).toBe('delivered');
    await app.byId('lang-select').selectOption('ko');
    await app.byId('theme-select').selectOption('dark');
    expect(await violations(page)).toEqual([]);
    expect(problems).toEqual([]);

    // The detector works: an inline style is refused and reported.
    await page.evaluate(() => {
      const s = document.createElement('style');
      s.textContent = 'body { color: red }';
      document.head.append(s);
    });
    await expect.poll(() => violations(page)).toContainEqual(expect.stringContaining('style-src'));
  });
}
