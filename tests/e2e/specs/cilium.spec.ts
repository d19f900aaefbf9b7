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
  // At a socket step, the pipeline is the shell Pod's socket, not its node's rules.
  await app.byId('step-back').click();
  for (let i = 0; i < 40 && !(await app.byId('pipeline-heading').textContent())?.includes('socket'); i++) {
    await app.byId('step-back').click();
  }
  await expect(app.byId('pipeline-heading')).toHaveText(/^shell's socket: cilium at connect\(\), before any packet$/);
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

test('Maglev\'s table view: every one of the M slots names a backend, and IPVS\'s mh has one too', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=cilium&lang=en');
  const view = app.byId('maglev-view');
  await view.scrollIntoViewIfNeeded();
  await expect(view).toBeVisible();
  const sum = async () => {
    const m = Number(await app.byId('maglev-sum').getAttribute('data-m'));
    const slots = await app.byId('maglev-share').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-slots'))));
    return [m, slots.reduce((a, b) => a + b, 0), slots.length];
  };
  // The preset's table size, 1021, among its three backends.
  expect(await sum()).toEqual([1021, 1021, 3]);
  // The NodePort and the load balancer's frontend each have a table.
  const fronts = await app.byId('maglev-frontend').locator('option').allTextContents();
  expect(fronts).toEqual(['192.168.49.11:30080/TCP', '203.0.113.10:80/TCP']);
  await app.byId('maglev-frontend').selectOption({ index: 1 });
  expect(await sum()).toEqual([1021, 1021, 3]);
  await page.screenshot({ path: 'artifacts/screens/maglev-view.png', fullPage: true });
  // kube-proxy's iptables picks at random: no table to show.
  await app.selectMode('iptables');
  await expect(view).toHaveCount(0);
  // IPVS with the mh scheduler: Maglev in the kernel, 4093 slots.
  await app.selectMode('ipvs');
  await app.byId('scheduler-select').selectOption('mh');
  await expect(view).toBeVisible();
  const [m, filled, n] = await sum();
  expect([m, filled, n]).toEqual([4093, 4093, 3]);
});

test('the lesson\'s Maglev page: web-3 fails its readiness, its slots go to web-1 and web-2', async ({ page }) => {
  const app = new App(page);
  await app.open('/?lesson=kube-proxy-vs-cilium&page=5&lang=en');
  await page.locator('[data-testid=lesson-choice][data-answer=watched-avoided]').check();
  await page.getByTestId('lesson-check').click();
  await expect(page.getByTestId('lesson-result')).toHaveAttribute('data-correct', 'true');
  // The rules panel's table, rebuilt without web-3: 1021 slots in two shares.
  const view = app.byId('maglev-view');
  await view.scrollIntoViewIfNeeded();
  await expect(app.byId('maglev-share')).toHaveCount(2);
  const slots = await app.byId('maglev-share').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-slots'))).sort());
  expect(slots).toEqual([510, 511]);
  await expect(app.byId('maglev-share').first()).not.toContainText('10.244.2.5');
  await expect(app.byId('maglev-share').last()).not.toContainText('10.244.2.5');
});

test('a DSR reply leaves the backend\'s node straight for the client, skipping the node the request came in by', async ({ page }) => {
  const app = new App(page);
  await app.open('/?scenario=cilium&lang=en');
  let seen = 0;
  for (let i = 0; i < 12 && seen < 2; i++) {
    await app.send();
    await app.outcome();
    await app.pause();
    const texts = await app.hops.evaluateAll((els) => els.map((e) => [e.getAttribute('data-hop'), e.textContent ?? '']));
    const entry = texts.find((h) => h[0] === 'arrive')?.[1].match(/Arrives at (\S+) eth0/)?.[1];
    const reply = texts.find((h) => h[0] === 'reply')?.[1] ?? '';
    expect(entry).toBeTruthy();
    const dsr = reply.match(/Reply leaves (\S+) straight for the client \(DSR\)/);
    if (!dsr) {
      // A backend on the entry node: the reply goes back the way it came.
      expect(reply).toContain('conntrack reverses the NAT');
      continue;
    }
    seen++;
    expect(dsr[1]).not.toBe(entry);
    // The Pod network carried the request to the backend's node.
    expect(texts.some((h) => h[0] === 'pod-network' && h[1].includes(`to ${dsr[1]}`))).toBe(true);
  }
  expect(seen).toBeGreaterThan(0);
});
