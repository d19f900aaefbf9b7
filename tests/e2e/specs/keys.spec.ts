// Keyboard-driven, as a trainer at a projector: S sends, Space plays or
// pauses (never a second Send from a focused button), Home/End go to the
// first and last hop, ? lists the keys.
import { test, expect } from '@playwright/test';
import { App } from './app';

const current = (app: App) => app.page.locator('[data-testid=hop].current').getAttribute('data-n');

test('keys send, play, step to the ends and list themselves', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=nodeport');
  await app.byId('app').focus();
  await page.keyboard.press('s');
  await expect(page.getByTestId('packet')).toHaveCount(1);
  await page.keyboard.press('End');
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  const hops = await app.hops.count();
  await expect.poll(() => current(app)).toBe(String(hops));
  await page.keyboard.press('Home');
  await expect.poll(() => current(app)).toBe('1');

  // Space on the focused Send button plays or pauses; it does not send again.
  await app.byId('send-packet').focus();
  await page.keyboard.press(' ');
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'true');
  await page.keyboard.press(' ');
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  await page.waitForTimeout(300);
  await expect(page.locator('[data-testid=packet][data-id="1"]')).toHaveCount(0);

  await app.byId('app').focus();
  await page.keyboard.press('?');
  const overlay = app.byId('keys-overlay');
  await expect(overlay).toBeVisible();
  await expect(overlay).toContainText('Home End');
  await page.keyboard.press('Escape');
  await expect(overlay).toHaveCount(0);
  // Typing in a form field is left alone.
  await app.byId('yaml-editor').focus();
  await page.keyboard.press('s');
  await page.waitForTimeout(300);
  await expect(page.locator('[data-testid=packet][data-id="1"]')).toHaveCount(0);
});

test('in IPVS mode the scheduler list names each scheduler and one line says how the chosen one picks', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=ipvs-basic');
  await app.selectMode('ipvs');
  const options = await app.byId('scheduler-select').locator('option').allInnerTexts();
  expect(options).toContain('sed · shortest expected delay');
  expect(options).toContain('mh · Maglev hashing');
  await app.byId('scheduler-select').selectOption('sed');
  await expect(app.byId('scheduler-line')).toContainText('IPVS sed');
  await expect(app.byId('scheduler-line')).toContainText('first one wins every tie');
  await app.selectMode('iptables');
  await expect(app.byId('scheduler-line')).toHaveCount(0);
});

test('at most 3 Tab stops from the top to the first control, in the app and in an embed', async ({ page }) => {
  const stops = async (want: RegExp) => {
    for (let i = 1; i <= 3; i++) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '');
      if (want.test(id)) return i;
    }
    return Infinity;
  };
  await page.goto('/');
  await expect(page.getByTestId('diagram')).toBeVisible();
  expect(await stops(/^scenario-select$/)).toBeLessThanOrEqual(3);
  // An embed: its playback bar comes before the Pods it draws, and stays at the bottom.
  await page.goto('/embed/');
  await expect(page.getByTestId('diagram')).toBeVisible();
  expect(await stops(/^(play-pause|send-packet)$/)).toBeLessThanOrEqual(3);
  const [bar, diagram] = [await page.getByTestId('play-pause').boundingBox(), await page.getByTestId('diagram').boundingBox()];
  expect(bar!.y).toBeGreaterThan(diagram!.y + diagram!.height / 2);
});
