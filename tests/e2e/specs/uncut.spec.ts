// Nothing the diagram says is cut: at every hop of the presets, the pipeline
// strip, the packet card and the hop caption show their values whole (a
// kube-proxy chain's hash may be shortened: it carries no answer), at
// 1280×720 with and without Large text, in a 720×405 embed and on a pasted
// IPv6-only cluster in every mode; the packet
// never sits on the diagram's corner.
import { test, expect, Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { App } from './app';

const shots = 'artifacts/screens';
/** A chain whose hash was shortened on the card (`KUBE-SEP-OAIG…`, nftables' `endpoint-H37Y…`). */
const HASH = /(KUBE-[A-Z]+-|(service|endpoint|external|firewall)-)[A-Z0-9]{4,}…$/;

/** What is cut on screen now: texts ending in `…`, a caption that overflows. */
async function cuts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    // A chipless box's chain name (`.chain`) says where the packet is and
    // may be shortened; values may not.
    const strip = '[data-testid=pipeline-step] text:not(.chain)';
    const texts = document.querySelectorAll(`${strip}, [data-testid=packet-card] text`);
    for (const t of Array.from(texts)) {
      const own = Array.from(t.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
      if (own.endsWith('…')) out.push(own);
    }
    const cap = document.querySelector('[data-testid=hop-caption]') as HTMLElement | null;
    if (cap && (cap.scrollHeight > cap.clientHeight + 1 || cap.scrollWidth > cap.clientWidth + 1)) out.push(`caption: ${cap.innerText}`);
    return out;
  });
}

/** The focused packet's position in the diagram's units, if one is drawn. */
async function packetAt(page: Page): Promise<[number, number] | null> {
  const t = await page.locator('[data-testid=packet].focused').getAttribute('transform').catch(() => null);
  const m = t?.match(/translate\(([-\d.]+)[ ,]+([-\d.]+)\)/);
  return m ? [parseFloat(m[1]), parseFloat(m[2])] : null;
}

/** Step through every hop from the first; the cuts seen, with their hop. */
async function everyHop(page: Page, app: App, label: string): Promise<string[]> {
  // Back to the first hop (the embed has no Home key).
  for (let i = 0; i < 60; i++) {
    const before = await app.clockMs();
    await app.byId('step-back').click();
    if ((await app.clockMs()) === before) break;
  }
  const seen: string[] = [];
  for (let i = 0; i < 60; i++) {
    for (const c of await cuts(page)) if (!HASH.test(c)) seen.push(`${label} hop ${i + 1}: ${c}`);
    const at = await packetAt(page);
    if (at) expect(at[0] > 4 || at[1] > 4, `${label} hop ${i + 1}: the packet at the diagram's corner`).toBe(true);
    const before = await app.clockMs();
    await app.byId('step-forward').click();
    if ((await app.clockMs()) === before) break;
  }
  return seen;
}

const cases: [string, string][] = [
  ['loadbalancer-cluster', 'iptables'],
  ['loadbalancer-cluster', 'ipvs'],
  ['loadbalancer-cluster', 'nftables'],
  ['ingress', 'iptables'],
  ['gateway-api', 'iptables'],
  ['nodeport', 'userspace'],
  ['cilium', 'cilium'],
];

for (const [scenario, mode] of cases) {
  test(`${scenario} in ${mode} at 1280×720: strip, card and caption are never cut`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const app = new App(page);
    await app.open(`/?scenario=${scenario}&mode=${mode}&lang=en`);
    await app.send();
    await app.outcome();
    await app.pause();
    const seen = await everyHop(page, app, `${scenario}/${mode}`);
    await page.screenshot({ path: `${shots}/uncut-${scenario}-${mode}.png` });
    expect(seen).toEqual([]);
  });
}

test('with Large text and in Korean the LoadBalancer preset cuts nothing either', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  for (const lang of ['en', 'ko']) {
    await app.open(`/?scenario=loadbalancer-cluster&lang=${lang}`);
    if (lang === 'en') await app.byId('large-text').check();
    await app.send();
    await app.outcome();
    await app.pause();
    expect(await everyHop(page, app, `large/${lang}`)).toEqual([]);
    await page.screenshot({ path: `${shots}/uncut-${lang}.png` });
  }
});

for (const scenario of ['loadbalancer-cluster', 'ingress', 'cilium']) {
  test(`a 720×405 embed of ${scenario} cuts nothing`, async ({ page }) => {
    await page.setViewportSize({ width: 720, height: 405 });
    const app = new App(page);
    await page.goto(`/embed/?scenario=${scenario}&lang=en`);
    await expect(app.byId('diagram')).toBeVisible();
    await app.loaded();
    await app.send();
    await page.waitForTimeout(1500);
    await app.pause();
    expect(await everyHop(page, app, `embed/${scenario}`)).toEqual([]);
    await page.screenshot({ path: `${shots}/uncut-embed-${scenario}.png` });
  });
}

test('an IPv6-only cluster pasted from kubectl cuts nothing in any mode: its longer addresses stay whole in the strip and the card', async ({ page }) => {
  test.setTimeout(150_000);
  await page.setViewportSize({ width: 1280, height: 720 });
  const app = new App(page);
  await app.open('/?lang=en');
  await app.byId('yaml-editor').fill(fs.readFileSync(path.join(__dirname, '../../corpus/ipv6-only.yaml'), 'utf8'));
  await expect(app.byId('yaml-apply')).toBeEnabled({ timeout: 15_000 });
  await app.byId('yaml-apply').click();
  await expect(app.byId('yaml-error')).toHaveCount(0);
  for (const mode of ['iptables', 'ipvs', 'nftables', 'userspace', 'cilium']) {
    await app.selectMode(mode);
    await app.send();
    expect(await app.outcome(), mode).toBe('delivered');
    await app.pause();
    expect(await everyHop(page, app, `ipv6/${mode}`)).toEqual([]);
  }
  await page.screenshot({ path: `${shots}/uncut-ipv6.png` });
});
