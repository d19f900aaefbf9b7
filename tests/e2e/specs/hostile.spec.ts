// Hostile input: whatever is pasted, opened or linked, the app keeps
// responding and shows an error or the result — never a dead page.
import { test, expect, Page } from '@playwright/test';
import * as zlib from 'zlib';
import { App } from './app';

/** Put text in the editor as a paste would (one input event). */
async function paste(page: Page, text: string) {
  await page.evaluate((t) => {
    const ta = document.querySelector('[data-testid=yaml-editor]') as HTMLTextAreaElement;
    ta.value = t;
    ta.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
}

/** The app still answers: a packet can be sent and gets a verdict. */
async function stillResponds(app: App) {
  await app.send();
  await expect(app.verdict).not.toHaveAttribute('data-outcome', 'empty', { timeout: 20_000 });
}

function billionLaughs(): string {
  let y = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let i = 1; i <= 9; i++) y += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(',')}]\n`;
  return y;
}

function manyServices(n: number): string {
  let y = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.0.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.1}]}\n';
  // One Pod, selected by every seventh Service: 1,429 endpoints for 10,000.
  y += '---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: a0}}\nspec: {nodeName: n1}\nstatus: {podIP: 10.244.0.5, conditions: [{type: Ready, status: "True"}]}\n';
  for (let i = 0; i < n; i++) y += `---\napiVersion: v1\nkind: Service\nmetadata: {name: s-${i}}\nspec: {selector: {app: a${i % 7}}, ports: [{port: 80}]}\n`;
  return y;
}

test('hostile YAML in the editor gets a clear error and the app keeps working', async ({ page }) => {
  test.setTimeout(120_000);
  const app = new App(page);
  const problems = App.watch(page);
  await app.open();
  const cases: [string, string, RegExp][] = [
    ['a 9 MiB input', '#'.repeat(9 * 1024 * 1024), /at most 8388608 bytes/],
    ['flow nesting 10,000 deep', '['.repeat(10_000), /recursion limit exceeded|nested more than 64 levels/],
    ['block nesting 100 deep', Array.from({ length: 100 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' 1\n', /nested more than 64 levels/],
    ['a YAML bomb of aliases', billionLaughs(), /expands to more than 2000000 values/],
    ['an unknown alias', 'a: *nope\n', /unknown anchor/],
    ['binary junk', '\u0000\u0001\u0002\uFFFD\uFFFE'.repeat(1000), /YAML|syntax|kind/i],
  ];
  for (const [what, text, message] of cases) {
    const t0 = Date.now();
    await paste(page, text);
    await expect(page.getByTestId('yaml-error').first(), what).toContainText(message, { timeout: 20_000 });
    expect(Date.now() - t0, `${what}: answered within 10 s`).toBeLessThan(10_000);
    await expect(app.byId('yaml-apply')).toBeDisabled();
    // The last good scenario is still drawn and still works.
    await expect(page.getByTestId('service-alpaca-service')).toBeVisible();
    await stillResponds(app);
  }
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

test('10,000 Services are parsed, drawn and traced; the page stays usable', async ({ page }) => {
  test.setTimeout(180_000);
  const app = new App(page);
  const problems = App.watch(page);
  await app.open();
  await paste(page, manyServices(10_000));
  await expect(app.byId('yaml-apply')).toBeEnabled({ timeout: 30_000 });
  await app.byId('yaml-apply').click({ timeout: 60_000 });
  // The first Services are drawn and one box counts the rest (every one is
  // still compiled into the rules).
  await expect(page.getByTestId('more-services')).toHaveAttribute('data-count', '9989', { timeout: 60_000 });
  await expect(page.getByTestId('service-s-0')).toBeAttached();
  await expect(page.locator('[data-testid^="service-s-"]')).toHaveCount(11);
  // The endpoint list draws 200 rows and counts the rest until asked.
  await expect(app.byId('endpoint')).toHaveCount(200);
  await expect(app.byId('endpoint-more')).toHaveAttribute('data-count', '1229');
  await app.byId('endpoint-show-all').click();
  await expect(app.byId('endpoint')).toHaveCount(1429, { timeout: 30_000 });
  await expect(app.byId('endpoint-more')).toHaveCount(0);
  await stillResponds(app);
  for (const mode of ['ipvs', 'nftables', 'iptables']) {
    await app.selectMode(mode);
    await expect(app.rules).toHaveAttribute('data-mode', mode, { timeout: 30_000 });
  }
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});

test('hostile files and share links are refused with a message', async ({ page }) => {
  const app = new App(page);
  const problems = App.watch(page);
  await app.open();
  await app.byId('yaml-file').setInputFiles({ name: 'huge.yaml', mimeType: 'application/yaml', buffer: Buffer.alloc(9 * 1024 * 1024, 0x23) });
  await expect(app.byId('file-error')).toContainText('huge.yaml: the file is too large');
  await app.byId('yaml-file').setInputFiles({ name: 'bin.yaml', mimeType: 'application/octet-stream', buffer: Buffer.from([0xff, 0xfe, 0x00, 0x80]) });
  await expect(app.byId('file-error')).toContainText('bin.yaml: the file is not UTF-8 text (at byte 0)');

  // A "zip bomb": 9 MiB of zeros (over the 8 MiB a link may inflate to) deflated to a few KB.
  const bomb = zlib.deflateRawSync(Buffer.alloc(9 * 1024 * 1024), { level: 9 }).toString('base64url');
  const links: [string, RegExp][] = [
    [`v1.${bomb}`, /too large/],
    [`v1.${'A'.repeat(1_100_000)}`, /too large/],
    [`v1.${zlib.deflateRawSync(Buffer.from('{"y": 1}')).toString('base64url')}`, /values the app does not accept/],
    [`v1.${zlib.deflateRawSync(Buffer.from('[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[')).toString('base64url')}`, /values the app does not accept/],
  ];
  for (const [fragment, message] of links) {
    await page.goto('about:blank');
    await app.open('/#' + fragment);
    await expect(app.byId('share-error')).toContainText(message);
    await stillResponds(app);
  }
  expect(problems.filter((p) => p.startsWith('pageerror'))).toEqual([]);
});
