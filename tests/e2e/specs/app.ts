// Page object for the visualizer: stable data-testid locators only.
import { expect, Page } from '@playwright/test';

export class App {
  constructor(readonly page: Page) {}

  static watch(page: Page): string[] {
    const problems: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    return problems;
  }

  async open(path = '/') {
    await this.page.goto(path);
    await expect(this.page.getByTestId('diagram')).toBeVisible();
    await this.loaded();
    await this.parts();
  }

  /** Wait for the parts below the first screen (loaded when the browser is idle after drawing it). */
  async parts() { await expect(this.page.getByTestId('lazy-loading')).toHaveCount(0, { timeout: 20_000 }); }

  /** Wait for a preset or lesson being fetched (`?scenario=`, `?lesson=`, a pick) to be loaded. */
  async loaded() { await expect(this.page.getByTestId('data-loading')).toHaveCount(0, { timeout: 20_000 }); }

  byId(id: string) { return this.page.getByTestId(id); }
  get verdict() { return this.byId('verdict'); }
  get hops() { return this.page.getByTestId('hop'); }
  get rules() { return this.byId('rules-view'); }
  get clock() { return this.byId('sim-clock'); }
  alpacaPods() { return this.page.locator('g[data-testid^="pod-alpaca-prod-"]'); }

  async clockMs(): Promise<number> {
    const text = await this.clock.innerText();
    return Math.round(parseFloat(text.replace(/[^0-9.]/g, '')) * 1000);
  }

  async selectScenario(key: string) { await this.byId('scenario-select').selectOption(key); await this.loaded(); }
  async selectMode(mode: string) { await this.byId('mode-select').selectOption(mode); }
  async selectTarget(labelPart: RegExp) {
    const options = await this.byId('target-select').locator('option').allInnerTexts();
    const label = options.find((o) => labelPart.test(o));
    expect(label, `a target matching ${labelPart} among ${options.join(' | ')}`).toBeTruthy();
    await this.byId('target-select').selectOption({ label: label! });
  }
  async speed(x: string) { await this.byId('speed').selectOption(x); }
  async send() { await this.byId('send-packet').click(); }

  /** Wait for the latest packet's outcome. */
  async outcome(): Promise<string> {
    await expect(this.verdict).not.toHaveAttribute('data-outcome', /in-flight|empty/, { timeout: 20_000 });
    return (await this.verdict.getAttribute('data-outcome')) ?? '';
  }

  /** Open the app on `scenario` in `mode` and send one packet; its outcome. */
  async openAndSend(scenario: string, mode: string): Promise<string> {
    await this.open();
    await this.selectScenario(scenario);
    await this.selectMode(mode);
    await this.send();
    return this.outcome();
  }

  /** The `src` of the iframe the "Embed code" dialog offers. */
  async embedSrc(): Promise<string> {
    await this.byId('embed-snippet').click();
    const code = await this.byId('embed-code').inputValue();
    const src = code.match(/src="([^"]+)"/)?.[1]?.replaceAll('&amp;', '&');
    expect(src, code).toBeTruthy();
    return src!;
  }

  async pause() {
    if ((await this.byId('play-pause').getAttribute('aria-pressed')) === 'true') await this.byId('play-pause').click();
  }
}

/** The element with `testId` lies wholly inside the viewport. */
export async function inViewport(page: Page, testId: string) {
  const b = await page.getByTestId(testId).first().boundingBox();
  const vp = page.viewportSize()!;
  expect(b, testId).not.toBeNull();
  expect(b!.y, `${testId} top`).toBeGreaterThanOrEqual(0);
  expect(b!.y + b!.height, `${testId} bottom`).toBeLessThanOrEqual(vp.height + 0.5);
  expect(b!.x + b!.width, `${testId} right`).toBeLessThanOrEqual(vp.width + 0.5);
}

/** Step until `pred` holds for the current hop (at most `max` steps). */
export async function stepUntil(app: App, pred: () => Promise<boolean>, max = 80) {
  for (let i = 0; i < max; i++) {
    if (await pred()) return true;
    await app.byId('step-forward').click();
  }
  return pred();
}

/** The pipeline step the packet is at now (`data-step`), or null. */
export const currentStep = (page: Page) =>
  page.locator('[data-testid=pipeline-step][data-current=true]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-step'))[0] ?? null);

/** A small scenario of the user's own, typed into the editor by the specs. */
export const MINE = `apiVersion: v1
kind: Service
metadata:
  name: mine
spec:
  selector:
    app: mine
  ports:
    - port: 80
`;
