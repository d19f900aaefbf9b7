// The first slice: the app opens and draws the seed scenario's diagram.
import { test, expect, Page } from '@playwright/test';
import { SUB } from '../ports';

function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return problems;
}

test('draws the alpaca/bandicoot Services with their Pods', async ({ page }) => {
  const problems = watchConsole(page);
  await page.goto('/');
  const diagram = page.getByTestId('diagram');
  await expect(diagram).toBeVisible();
  await expect(page.locator('[data-testid^="node-worker-"]')).toHaveCount(3);
  await expect(page.locator('g[data-testid^="pod-alpaca-prod-"]')).toHaveCount(3);
  await expect(page.locator('g[data-testid^="pod-bandicoot-prod-"]')).toHaveCount(2);
  await expect(page.getByTestId('service-alpaca-service')).toContainText('10.96.');
  await expect(page.getByTestId('service-bandicoot-service')).toContainText('9090/TCP');
  
  expect(problems).toEqual([]);
});

test('works when hosted under a sub-path', async ({ page }) => {
  const problems = watchConsole(page);
  const failed: string[] = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(`${SUB}/docs/kpv/`);
  await expect(page.locator('g[data-testid^="pod-alpaca-prod-"]')).toHaveCount(3);
  expect(failed).toEqual([]);
  expect(problems).toEqual([]);
});
