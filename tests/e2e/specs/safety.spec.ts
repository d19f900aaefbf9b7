// Nothing leaves the browser; user text is shown as text.
import { test, expect } from '@playwright/test';
import { App } from './app';
import { ROOT } from '../ports';

test('a whole session makes requests only to the app\'s own origin', async ({ page }) => {
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const app = new App(page);
  await app.open();
  await app.speed('4');
  await app.send();
  await app.outcome();
  for (const mode of ['ipvs', 'nftables', 'userspace']) await app.selectMode(mode);
  await app.selectScenario('loadbalancer-local');
  await app.byId('yaml-editor').fill('apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 80}]}\n');
  await app.byId('yaml-apply').click();
  await app.byId('lang-select').selectOption('ko');
  await page.reload();
  await expect(app.byId('diagram')).toBeVisible();
  // Share link (copied, then opened), a lesson, a lab run, the exports.
  await app.byId('share-link').click();
  const link = await app.byId('share-url').inputValue();
  await page.goto('about:blank');
  await app.open(link);
  await app.byId('lesson-select').selectOption('readiness');
  await app.byId('lesson-next').click();
  await page.getByTestId('lesson-choice').first().check();
  await app.byId('lesson-check').click();
  await expect(app.byId('lesson-result')).toBeVisible();
  await app.byId('lab-n').fill('100');
  await app.byId('lab-n').press('Tab');
  await app.byId('lab-run').click();
  await expect(app.byId('lab-progress-text')).toHaveText('100 / 100');
  await Promise.all([page.waitForEvent('download'), app.byId('export-svg').click()]);
  await Promise.all([page.waitForEvent('download'), app.byId('export-png').click()]);
  await app.byId('embed-snippet').click();
  // blob: and data: URLs are made in the page (downloads, the PNG export): not network.
  const foreign = requests.filter((u) => !u.startsWith(`${ROOT}/`)
    && !u.startsWith(`blob:${ROOT}/`) && !u.startsWith('data:'));
  expect(foreign).toEqual([]);
  expect(requests.length).toBeGreaterThan(3);
});

test('names, labels and control characters from user YAML are shown as text', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await page.evaluate(() => { (window as any).pwned = false; });
  // The API server refuses such label values, so the editor reports them —
  // quoting the user's text as text, never as markup.
  const yaml = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: "<script>window.pwned=true</script>", quote: "a\\"b'c", ctl: "x\\u0007\\u202Ey"}
spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: "<script>window.pwned=true</script>"}
  ports: [{port: 80}]
`;
  await app.byId('yaml-editor').fill(yaml);
  await expect(app.byId('yaml-apply')).toBeDisabled();
  await expect(page.getByTestId('yaml-error').first()).toContainText('<script>window.pwned=true</script>');
  expect(await page.locator('[data-testid=app] script').count()).toBe(0);
  expect(await page.evaluate(() => (window as any).pwned)).toBe(false);
  // Valid names with characters HTML cares about still reach the diagram as text.
  await app.byId('yaml-editor').fill(yaml
    .replace(/labels: \{[^\n]*\}/, 'labels: {app: a-b_c.d}\n  annotations: {note: "<b>x</b>"}')
    .replace('selector: {app: "<script>window.pwned=true</script>"}', 'selector: {app: a-b_c.d}'));
  await app.byId('yaml-apply').click();
  await expect(page.getByTestId('pod-web')).toBeVisible();
  expect(await page.locator('[data-testid=app] b').count()).toBe(0);
  expect(await page.evaluate(() => (window as any).pwned)).toBe(false);
});
