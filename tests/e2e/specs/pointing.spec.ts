// A lesson points at the diagram: each marked noun highlights the element it
// names (a thick halo, measured on screen, not colour alone) on hover and on
// focus, and a step's nouns light up briefly when it opens; in both languages.
import { test, expect, Page } from '@playwright/test';
import { App } from './app';

const shots = 'artifacts/screens';

/** The on-screen stroke width (px) of a diagram element's box. */
async function haloPx(page: Page, ref: string): Promise<number> {
  return page.locator(`[data-testid=diagram] [data-ref="${ref}"]`).first().evaluate((g) => {
    const rect = g.querySelector(':scope > rect') as SVGRectElement;
    const style = getComputedStyle(rect);
    const width = parseFloat(style.strokeWidth);
    // A non-scaling stroke is drawn at its CSS width; any other is scaled with the SVG.
    const scale = style.getPropertyValue('vector-effect') === 'non-scaling-stroke' ? 1 : ((g.ownerSVGElement?.getScreenCTM()?.a) ?? 1);
    return width * scale;
  });
}

async function inViewport(page: Page, ref: string) {
  const b = await page.locator(`[data-testid=diagram] [data-ref="${ref}"]`).first().boundingBox();
  const vp = page.viewportSize()!;
  expect(b, ref).not.toBeNull();
  expect(b!.y).toBeGreaterThanOrEqual(0);
  expect(b!.y + b!.height).toBeLessThanOrEqual(vp.height + 0.5);
}

for (const lang of ['en', 'ko']) {
  test(`lesson nouns highlight their diagram element (${lang})`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    const problems = App.watch(page);
    await app.open(`/?lesson=traffic-policy-local&page=1&lang=${lang}`);
    const nouns = page.getByTestId('lesson-noun');
    // The load balancer and worker-1 and worker-2, in either language.
    await expect(nouns).toHaveCount(3);
    const refs = await nouns.evaluateAll((els) => els.map((e) => e.getAttribute('data-ref')));
    expect(refs).toEqual(['lb', 'node:worker-1', 'node:worker-2']);
    // When the step opens, its nouns light up for a moment, then go out.
    await expect(page.locator('[data-testid=diagram] .pointed')).toHaveCount(3);
    await expect(page.locator('[data-testid=diagram] .pointed')).toHaveCount(0, { timeout: 5_000 });
    const rest = await haloPx(page, 'node:worker-1');
    // Hover: only what the noun names is highlighted, with a ≥ 3 px halo.
    await nouns.nth(1).hover();
    await expect(page.locator('[data-testid=diagram] .pointed')).toHaveCount(1);
    await expect(page.locator('[data-testid=diagram] [data-ref="node:worker-1"]')).toHaveClass(/pointed/);
    const lit = await haloPx(page, 'node:worker-1');
    expect(lit, 'halo width on screen').toBeGreaterThanOrEqual(3);
    expect(lit, 'thicker than at rest').toBeGreaterThan(rest + 1);
    await inViewport(page, 'node:worker-1');
    await page.screenshot({ path: `${shots}/noun-hover-${lang}.png` });
    await page.mouse.move(5, 5);
    await expect(page.locator('[data-testid=diagram] .pointed')).toHaveCount(0);
    // Keyboard: focus highlights too.
    await nouns.nth(0).focus();
    await expect(page.locator('[data-testid=diagram] [data-ref=lb]')).toHaveClass(/pointed/);
    expect(await haloPx(page, 'lb')).toBeGreaterThanOrEqual(3);
    await nouns.nth(0).blur();
    await expect(page.locator('[data-testid=diagram] .pointed')).toHaveCount(0);
    expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
  });
}

test('a noun can name a Pod and a pipeline step', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open('/?lesson=readiness&page=1&lang=ko');
  const noun = page.getByTestId('lesson-noun').first();
  await expect(noun).toHaveText('첫 번째 alpaca Pod');
  const ref = (await noun.getAttribute('data-ref'))!;
  expect(ref).toMatch(/^pod:default\/alpaca-prod-/);
  await noun.hover();
  await expect(page.locator(`[data-testid=diagram] [data-ref="${ref}"]`)).toHaveClass(/pointed/);
  expect(await haloPx(page, ref)).toBeGreaterThanOrEqual(3);
  // A step's noun names a box of the open node's pipeline.
  await app.open('/?lesson=modes-compared&page=2&lang=en');
  const step = page.locator('[data-testid=lesson-noun][data-ref="step:KUBE-SERVICES"]');
  await expect(step).toHaveCount(1);
  // Answer, so packets go through a node and its pipeline is drawn.
  await page.getByTestId('lesson-choice').first().check();
  await page.getByTestId('lesson-check').click();
  await expect(page.locator('[data-testid=diagram] [data-ref="step:KUBE-SERVICES"]')).toHaveCount(1, { timeout: 20_000 });
  await step.hover();
  await expect(page.locator('[data-testid=diagram] [data-ref="step:KUBE-SERVICES"]')).toHaveClass(/pointed/);
});
