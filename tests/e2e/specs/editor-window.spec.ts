// A large text is edited through a window of lines around the caret: every
// typed character arrives in the text that is applied, the gutter numbers the
// window's real lines, a diagnostic's line can be jumped to, and the textarea
// holds a small part of the text (Chromium's textarea is what made typing in
// megabytes slow). Timings are printed by the bench, not asserted here.
import { test, expect, Page } from '@playwright/test';
import { App } from './app';

async function paste(page: Page, text: string) {
  await page.evaluate((t) => {
    const area = document.querySelector('[data-testid=yaml-editor]') as HTMLTextAreaElement;
    area.value = t;
    area.setSelectionRange(t.length, t.length);
    area.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
}

const firstGutterLine = (page: Page) => page.locator('.editor .gutter').evaluate((g) => parseInt(g.textContent!.trim().split('\n')[0], 10));

test('typing at the end of a 3 MB text: every character arrives, and the applied scenario has it', async ({ page }) => {
  test.setTimeout(180_000);
  const app = new App(page);
  const problems = App.watch(page);
  await app.open();
  const base = await app.byId('yaml-editor').inputValue();
  const filler = Array.from({ length: 50_000 }, (_, i) => `# filler line ${i} ........................................\n`).join('');
  const text = base + '\n' + filler;
  expect(text.length).toBeGreaterThan(3_000_000);
  await paste(page, text);
  // The textarea holds only a window, ending where the text ends.
  const shown = await app.byId('yaml-editor').inputValue();
  expect(shown.length).toBeLessThan(200_000);
  expect(text.endsWith(shown)).toBe(true);
  const totalLines = text.split('\n').length - 1;
  const windowLines = shown.split('\n').length - 1;
  expect(await firstGutterLine(page)).toBe(totalLines - windowLines + 1);
  // Type a whole Service at the end, key by key.
  const typed = '---\napiVersion: v1\nkind: Service\nmetadata: {name: typed-svc}\nspec: {selector: {app: alpaca}, ports: [{port: 81}]}\n';
  await app.byId('yaml-editor').focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(typed);
  expect((await app.byId('yaml-editor').inputValue()).endsWith(typed)).toBe(true);
  await app.byId('yaml-apply').click();
  await expect(app.byId('yaml-status')).toContainText(/Applied/, { timeout: 120_000 });
  await expect(page.getByTestId('service-typed-svc')).toBeVisible();
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

test('in a large text the window follows a jump to a diagnostic and typing there lands on that line', async ({ page }) => {
  test.setTimeout(180_000);
  const app = new App(page);
  await app.open();
  const base = await app.byId('yaml-editor').inputValue();
  const filler = Array.from({ length: 12_000 }, (_, i) => `# filler line ${i} ........................................\n`).join('');
  // A mistake after the filler: line numbers must come out right.
  const text = base + '\n' + filler + '---\napiVersion: v1\nkind: Service\nmetadata: {name: bad-svc}\nspec: {ports: [{port: 99999}]}\n' + filler;
  await paste(page, text);
  await app.byId('yaml-check').click();
  const err = page.getByTestId('yaml-error').first();
  await expect(err).toBeVisible({ timeout: 60_000 });
  const line = Number(await err.getAttribute('data-line'));
  const wantLine = text.split('\n').findIndex((l) => l.includes('99999')) + 1;
  expect(line).toBe(wantLine);
  await err.click();
  // The window now holds that line, the gutter numbers it, and the caret is on it.
  const where = await app.byId('yaml-editor').evaluate((a: HTMLTextAreaElement) => {
    const before = a.value.slice(0, a.selectionStart);
    return { row: before.split('\n').length - 1, line: a.value.split('\n')[before.split('\n').length - 1] };
  });
  expect(where.line).toContain('99999');
  expect((await firstGutterLine(page)) + where.row).toBe(wantLine);
  // Fix it there, key by key; the text applies.
  await page.keyboard.press('End');
  for (let i = 0; i < 6; i++) await page.keyboard.press('Backspace');
  await page.keyboard.type('80}]}');
  await app.byId('yaml-apply').click();
  await expect(app.byId('yaml-status')).toContainText(/Applied/, { timeout: 120_000 });
  await expect(page.getByTestId('service-bad-svc')).toBeVisible();
});

test('a single line of megabytes is shown in part, numbered as line 1, and typing at its end arrives', async ({ page }) => {
  test.setTimeout(120_000);
  const app = new App(page);
  await app.open();
  const text = '# ' + 'x'.repeat(6 * 1024 * 1024);
  await paste(page, text);
  const shown = await app.byId('yaml-editor').inputValue();
  expect(shown.length).toBeLessThan(200_000);
  expect(text.endsWith(shown)).toBe(true);
  expect(await firstGutterLine(page)).toBe(1);
  await app.byId('yaml-editor').focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('abc');
  const after = await app.byId('yaml-editor').inputValue();
  expect(after.slice(-20)).toBe('xxxxxxxxxxxxxxxxxabc'.slice(-20));
  // The whole text is kept: the status counts its size.
  await expect(app.byId('yaml-status')).toContainText('6.0 MB');
});

test('select all in a large text, then typing, replaces the whole text, not only the window', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await paste(page, '# filler\n'.repeat(60_000));
  await expect(app.byId('yaml-status')).toContainText('Large text');
  await app.byId('yaml-editor').focus();
  await page.keyboard.press('Control+a');
  await page.keyboard.type('a: 1');
  await expect(app.byId('yaml-editor')).toHaveValue('a: 1');
  await expect(app.byId('yaml-status')).not.toContainText('Large text');
  expect(await firstGutterLine(page)).toBe(1);
});

test('Ctrl+Z in a large text undoes the last typing after the window moved, and Ctrl+Shift+Z redoes it', async ({ page }) => {
  test.setTimeout(120_000);
  const app = new App(page);
  await app.open();
  const base = await app.byId('yaml-editor').inputValue();
  const filler = Array.from({ length: 8_000 }, (_, i) => `# filler line ${i} ........................................\n`).join('');
  await paste(page, base + '\n' + filler);
  const area = app.byId('yaml-editor');
  await area.focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('# typed at the end');
  await expect.poll(() => area.inputValue()).toMatch(/# typed at the end$/);
  // Up to the window's first line: the window moves up the text (which
  // clears the browser's own undo stack) and no longer holds the typing.
  const before = await firstGutterLine(page);
  await page.keyboard.press('Control+Home');
  await expect.poll(() => firstGutterLine(page)).toBeLessThan(before);
  expect(await area.inputValue()).not.toContain('# typed at the end');
  await page.keyboard.press('Control+z');
  // The typed run is gone, and the window shows where it was.
  await expect.poll(() => area.inputValue()).toMatch(/\.{10}\n$/);
  expect(await area.inputValue()).not.toContain('# typed');
  await page.keyboard.press('Control+Shift+z');
  await expect.poll(() => area.inputValue()).toMatch(/# typed at the end$/);
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  // Undone past the paste: the preset's own text again, whole.
  await expect.poll(() => area.inputValue()).toBe(base);
});
