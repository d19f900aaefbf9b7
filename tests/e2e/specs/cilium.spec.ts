// The fifth mode: Cilium's kube-proxy replacement. The Cilium preset opens
// in it (its cilium-config replaces kube-proxy); the mode looks like itself
// with its words hidden (its glyph, its BPF pipeline); a Pod's connection is
// translated at its socket, so no node rule rewrites a packet on the wire;
// and the compare view puts it beside kube-proxy's modes.
import { test, expect } from '@playwright/test';
import { App } from './app';

test('the Cilium preset opens in Cilium mode, drawn with its own glyph and BPF pipeline', async ({ page }) => {
  const problems = App.watch(page);
  const app = new App(page);
  await app.open('/?scenario=cilium&lang=en');
  await expect(app.byId('mode-select')).toHaveValue('cilium');
  const glyphs = app.byId('mode-glyph');
  await expect(glyphs).toHaveCount(3);
  for (const g of await glyphs.all()) await expect(g).toHaveAttribute('data-mode', 'cilium');
  // From outside: the node's device program, the services map, the Maglev
  // pick and the backends map, in that order.
  await app.send();
  expect(await app.outcome()).toBe('delivered');
  await app.pause();
  const strip = app.byId('node-pipeline').first();
  await expect(strip).toHaveAttribute('data-mode', /cilium/);
  const steps = await strip.getByTestId('pipeline-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-step')));
  expect(steps.slice(0, 4)).toEqual(['bpf-hook', 'lb-service', 'lb-select', 'lb-backend']);
  expect(problems).toEqual([]);
});

test('a Pod\'s connection is translated at its socket: the packet leaves already addressed to a Pod', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=cilium&lang=en');
  await app.byId('origin-select').selectOption('pod:default/shell');
  await app.selectTarget(/ClusterIP/);
  await app.send();
  expect(await app.outcome()).toBe('delivered');
  await app.pause();
  const hops = await app.hops.evaluateAll((els) => els.map((e) => [e.getAttribute('data-hop'), e.textContent ?? '']));
  const kinds = hops.map((h) => h[0]);
  // The socket's lookups come right after the connect (Send) and before
  // the packet crosses the Pod network; nothing after it is a rule.
  const send = kinds.indexOf('send');
  const firstRule = kinds.indexOf('rule');
  const lastRule = kinds.lastIndexOf('rule');
  expect(send).toBeGreaterThanOrEqual(0);
  expect(firstRule).toBe(send + 1);
  expect(hops[firstRule][1]).toContain('bpf sock');
  expect(kinds.slice(lastRule + 1)).not.toContain('rule');
  expect(hops.some((h) => h[0] === 'rule' && /DNAT/.test(h[1]) && /cilium_lb4_backends/.test(h[1]))).toBe(true);
  // The same connection under kube-proxy: its node rewrites the packet.
  await app.selectMode('iptables');
  await app.send();
  expect(await app.outcome()).toBe('delivered');
  const kp = await app.hops.evaluateAll((els) => els.map((e) => e.textContent ?? ''));
  expect(kp.some((t) => /KUBE-SEP/.test(t))).toBe(true);
  expect(kp.some((t) => /bpf sock/.test(t))).toBe(false);
});

test('the compare view puts Cilium beside kube-proxy\'s modes, with a pipeline of its own', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=cilium&lang=en');
  await app.send();
  await app.outcome();
  await app.byId('compare-toggle').click();
  const view = page.getByTestId('compare-view');
  await expect(view.getByTestId('compare-mode')).toHaveCount(4, { timeout: 20_000 });
  const cols = await view.getByTestId('compare-mode').evaluateAll((els) => els.map((e) => [e.getAttribute('data-mode'), Array.from(e.querySelectorAll('li')).map((li) => li.getAttribute('data-step')).join(',')]));
  const cilium = cols.find((c) => c[0] === 'cilium');
  expect(cilium, JSON.stringify(cols)).toBeTruthy();
  expect(cilium![1]).toContain('bpf-hook');
  expect(cols.filter((c) => c[1] === cilium![1])).toHaveLength(1);
});
