// User journeys through the visualizer, against the release build.
import { test, expect } from '@playwright/test';
import { App } from './app';

test('a packet to the Service DNS name reaches a Pod and the hops say how', async ({ page }) => {
  const problems = App.watch(page);
  const app = new App(page);
  await app.open();
  await expect(app.verdict).toHaveAttribute('data-outcome', 'empty');
  await app.speed('4');
  await app.send();
  await expect(page.getByTestId('packet').first()).toBeVisible();
  expect(await app.outcome()).toBe('delivered');
  await expect(app.verdict).toContainText(/alpaca-prod-/);
  const hops = await app.hops.evaluateAll((els) => els.map((e) => e.getAttribute('data-hop')));
  expect(hops[0]).toBe('dns');
  expect(hops).toContain('rule');
  expect(hops.indexOf('deliver')).toBeGreaterThan(hops.indexOf('rule'));
  await expect(app.hops.first()).toContainText('alpaca-service.default.svc.cluster.local');
  await expect(page.locator('[data-testid=hop]', { hasText: 'DNAT --to-destination' })).toHaveCount(1);
  expect(problems).toEqual([]);
});

test('switching modes changes the rules panel to that mode\'s format', async ({ page }) => {
  const app = new App(page);
  await app.open();
  const formats: Record<string, RegExp> = {
    iptables: /\*nat[\s\S]*-A KUBE-SERVICES/,
    ipvs: /IP Virtual Server version[\s\S]*TCP\s+10\.\d+\.\d+\.\d+:8080 rr/,
    nftables: /table ip kube-proxy \{[\s\S]*numgen random mod 3/,
    userspace: /removed in Kubernetes 1\.26[\s\S]*KUBE-PORTALS-CONTAINER/,
  };
  for (const [mode, re] of Object.entries(formats)) {
    await app.selectMode(mode);
    await expect(app.rules).toHaveAttribute('data-mode', mode);
    await expect(app.rules).toHaveText(re);
  }
  // The rule the packet matched is highlighted, in the chosen mode too.
  await app.selectMode('nftables');
  await app.speed('4');
  await app.send();
  await app.outcome();
  await app.pause();
  await app.byId('step-back').click();
  await expect(page.locator('[data-testid=rules-view] [data-matched=true]')).toHaveCount(1);
});

test('failing a readiness probe removes the endpoint after the probe lag, and passing brings it back', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.speed('4');
  const pod = app.alpacaPods().first();
  const name = (await pod.getAttribute('data-testid'))!.replace(/^pod-/, '');
  const ip = (await pod.locator('text').nth(1).textContent())!.trim();
  const endpoint = page.locator(`[data-testid=endpoint][data-ip="${ip}"]`);
  await expect(endpoint).toHaveAttribute('data-ready', 'true');

  await app.byId(`pod-${name}-readiness`).click();
  const failedAt = await app.clockMs();
  // periodSeconds 2 × failureThreshold 3: NotReady only after the third failed probe.
  await expect(pod).toHaveAttribute('data-ready', 'false', { timeout: 20_000 });
  const notReadyAt = await app.clockMs();
  expect(notReadyAt - failedAt).toBeGreaterThanOrEqual(4_000);
  await expect(endpoint).toHaveAttribute('data-ready', 'false');
  await expect(endpoint).toHaveAttribute('data-serving', 'false');
  // Let kube-proxy sync (1 s after the slice), then new packets avoid the Pod.
  await page.waitForFunction(([t]) => {
    const c = document.querySelector('[data-testid=sim-clock]')?.textContent ?? '';
    return parseFloat(c.replace(/[^0-9.]/g, '')) * 1000 > t + 1_500;
  }, [notReadyAt]);
  const before = Number(await pod.getAttribute('data-received'));
  await app.byId('burst-size').fill('12');
  await app.byId('burst-size').dispatchEvent('change');
  await app.byId('send-burst').click();
  await expect.poll(async () => {
    const all = await app.alpacaPods().evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-received'))));
    return all.reduce((a, b) => a + b, 0);
  }, { timeout: 20_000 }).toBeGreaterThanOrEqual(before + 12);
  expect(Number(await pod.getAttribute('data-received'))).toBe(before);

  // Pass the probe again: Ready at the next success, endpoint back.
  await app.byId(`pod-${name}-readiness`).click();
  await expect(pod).toHaveAttribute('data-ready', 'true', { timeout: 20_000 });
  await expect(endpoint).toHaveAttribute('data-ready', 'true', { timeout: 20_000 });
});

test('stepping back and forward walks the hops of the packet', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.send();
  await app.pause();
  const current = () => page.locator('[data-testid=hop].current');
  await app.byId('step-forward').click();
  await app.byId('step-forward').click();
  const a = await current().textContent();
  const t1 = await app.clockMs();
  await app.byId('step-forward').click();
  const b = await current().textContent();
  expect(b).not.toEqual(a);
  expect(await app.clockMs()).toBeGreaterThan(t1);
  await app.byId('step-back').click();
  await expect(current()).toHaveText(a!);
  expect(await app.clockMs()).toBe(t1);
  // Clicking a hop jumps there (its group unfolds first when it is folded).
  if (!(await app.hops.nth(3).isVisible())) {
    await page.locator('xpath=//li[@data-testid="hop"][4]/preceding-sibling::li[@data-testid="hop-group"][1]').locator('button').click();
  }
  await app.hops.nth(3).locator('button').click();
  await expect(app.hops.nth(3)).toHaveClass(/current/);
});

test('keyboard only: tab to the visualizer, space plays and pauses, arrows step', async ({ page }) => {
  const app = new App(page);
  await app.open();
  // Every control is reachable by Tab.
  const reached = new Set<string>();
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement?.getAttribute('data-testid'));
    if (id) reached.add(id);
  }
  for (const id of ['scenario-select', 'mode-select', 'send-packet', 'burst-size', 'send-burst', 'play-pause', 'step-back', 'step-forward', 'speed']) {
    expect(reached, `reached ${id}`).toContain(id);
  }
  // Send with the keyboard, then space on the visualizer toggles playback.
  await app.byId('send-packet').focus();
  await page.keyboard.press('Enter');
  await app.byId('app').focus();
  await page.keyboard.press(' ');
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  const t = await app.clockMs();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  expect(await app.clockMs()).toBeGreaterThan(t);
  const t2 = await app.clockMs();
  await page.keyboard.press('ArrowLeft');
  expect(await app.clockMs()).toBeLessThan(t2);
  await page.keyboard.press(' ');
  await expect(app.byId('play-pause')).toHaveAttribute('aria-pressed', 'true');
});

test('screenshot of the main view mid-flight, for review', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.byId('burst-size').fill('6');
  await app.byId('burst-size').dispatchEvent('change');
  await app.byId('send-burst').click();
  await page.waitForTimeout(1500);
  await app.pause();
  await page.screenshot({ path: 'artifacts/visualizer.png', fullPage: true });
});

test('the target list shows the target a Send goes to from the first screen, and keeps a reader\'s choice', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=loadbalancer-cluster&lang=ko');
  const sel = app.byId('target-select');
  const shown = () => sel.evaluate((s: HTMLSelectElement) => ({ index: s.selectedIndex, value: s.value, first: s.options[0]?.value ?? '' }));
  // Never blank: the first target (where Send goes) is the one shown.
  const start = await shown();
  expect(start.index).toBe(0);
  expect(start.value).toBe(start.first);
  expect(start.value).not.toBe('');
  await app.selectMode('userspace');
  expect((await shown()).index).toBe(0);
  // A target chosen by the reader stays shown across a mode change.
  const second = await sel.evaluate((s: HTMLSelectElement) => s.options[1].value);
  await sel.selectOption(second);
  await app.selectMode('iptables');
  await expect(sel).toHaveValue(second);
});
