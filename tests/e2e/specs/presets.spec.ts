// Journeys through the scenario presets: the paths each one teaches.
import { test, expect } from '@playwright/test';
import { App } from './app';

async function stagesOf(app: App): Promise<string[]> {
  const all = await app.hops.evaluateAll((els) => els.map((e) => e.getAttribute('data-stage') ?? ''));
  return all.filter((s, i) => s !== '' && s !== all.slice(0, i).filter((x) => x !== '').pop());
}

test('LoadBalancer → NodePort → ClusterIP → Pod, and the source the Pod sees', async ({ page }) => {
  const problems = App.watch(page);
  const app = new App(page);
  await app.open();
  await app.selectScenario('loadbalancer-cluster');
  await expect(app.byId('load-balancer')).toContainText('203.0.113.10');
  await app.selectTarget(/LoadBalancer 203\.0\.113\.10:80/);
  await app.speed('4');
  await app.send();
  expect(await app.outcome()).toBe('delivered');
  expect(await stagesOf(app)).toEqual(['load-balancer', 'node-port', 'cluster-ip', 'pod']);
  await expect(page.locator('[data-testid=hop][data-hop=load-balancer]')).toContainText('203.0.113.10:80');

  // externalTrafficPolicy Local: the Pod sees the client's own address.
  await app.selectScenario('loadbalancer-local');
  await app.selectTarget(/LoadBalancer 203\.0\.113\.10:80/);
  await app.speed('4');
  for (let i = 0; i < 3; i++) {
    await app.send();
    expect(await app.outcome()).toBe('delivered');
    await expect(app.verdict).toContainText('198.51.100.7');
  }
  expect(problems).toEqual([]);
});

test('userspace retries another Pod when one does not answer; iptables times out', async ({ page }) => {
  const app = new App(page);
  await app.open();
  await app.selectScenario('userspace-retry');
  await expect(app.byId('mode-select')).toHaveValue('userspace');
  const down = page.locator('g[data-testid^="pod-"][data-testid*="-"]').filter({ hasText: '10.244.' }).first();
  const name = (await down.getAttribute('data-testid'))!.replace(/^pod-/, '');
  await app.byId(`pod-${name}-app`).click();
  await app.speed('4');
  await app.byId('burst-size').fill('6');
  await app.byId('burst-size').dispatchEvent('change');
  await app.byId('send-burst').click();
  const total = async () => {
    const pods = await page.locator('g[data-testid^="pod-"]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-received'))));
    return pods.reduce((a, b) => a + b, 0);
  };
  // Every connection is delivered: the proxy retried past the silent Pod.
  await expect.poll(total, { timeout: 30_000 }).toBe(6);
  expect(Number(await down.getAttribute('data-received'))).toBe(0);
  await expect(page.locator('[data-testid=rules-view]')).toContainText('KUBE-PORTALS-CONTAINER');

  // iptables has no retry: the whole history re-traced in iptables mode, plus
  // 12 more connections; those DNATed to the silent Pod time out.
  await app.selectMode('iptables');
  await app.byId('burst-size').fill('12');
  await app.byId('burst-size').dispatchEvent('change');
  await app.byId('send-burst').click();
  await page.waitForTimeout(1000);
  await app.pause();
  await app.byId('play-pause').click();
  await page.waitForFunction(() => {
    const c = document.querySelector('[data-testid=sim-clock]')?.textContent ?? '';
    return parseFloat(c.replace(/[^0-9.]/g, '')) > 20;
  }, undefined, { timeout: 30_000 });
  const delivered = await total();
  expect(delivered).toBeGreaterThan(0);
  expect(delivered).toBeLessThan(18);
});
