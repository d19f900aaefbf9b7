// Bring your own YAML, embedding, and languages.
import { test, expect } from '@playwright/test';
import { App } from './app';

const SERVICE = `apiVersion: v1
kind: Node
metadata: {name: solo}
spec: {podCIDR: 10.244.9.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.7.7}]}
---
apiVersion: v1
kind: Pod
metadata: {name: echo-1, labels: {app: echo}}
spec: {nodeName: solo, containers: [{name: c, ports: [{containerPort: 5678}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  selector: {app: echo}
  ports:
  - port: 80
    targetPort: 5678
`;

test('a broken YAML shows its error line while the old diagram stays; fixed, it is drawn; reload keeps the text', async ({ page }) => {
  const app = new App(page);
  await app.open();
  const editor = app.byId('yaml-editor');
  const broken = SERVICE.replace('port: 80', 'port: 80800');
  await editor.fill(broken);
  const error = page.getByTestId('yaml-error');
  await expect(error).toHaveCount(1);
  await expect(error).toHaveAttribute('data-line', '18');
  await expect(error).toContainText('spec.ports[0].port');
  await expect(app.byId('yaml-apply')).toBeDisabled();
  // The previous scenario is still drawn.
  await expect(page.getByTestId('service-alpaca-service')).toBeVisible();

  await editor.fill(SERVICE);
  await expect(error).toHaveCount(0);
  await app.byId('yaml-apply').click();
  await expect(page.getByTestId('service-echo')).toBeVisible();
  await expect(page.getByTestId('pod-echo-1')).toBeVisible();
  await expect(page.getByTestId('service-alpaca-service')).toHaveCount(0);

  await page.reload();
  await expect(app.byId('yaml-editor')).toHaveValue(SERVICE);
});

test('a corrupt saved editor value is reported and ignored', async ({ page }) => {
  await page.goto('/');
  await page.evaluate(() => localStorage.setItem('kpv.editor.v1', '{"version": 1, "yaml": '));
  await page.reload();
  await expect(page.getByTestId('storage-notice')).toBeVisible();
  await expect(page.getByTestId('yaml-editor')).toHaveValue(/alpaca-prod/);
});

test('?embed=1 shows only the diagram and playback, and ignores keys pressed outside it', async ({ page }) => {
  await page.setContent(`<html><body><p>docs page</p><input id="outside"><iframe id="kpv" src="http://127.0.0.1:4173/?embed=1&scenario=nodeport&mode=ipvs" style="width:800px;height:600px"></iframe></body></html>`);
  const frame = page.frameLocator('#kpv');
  await expect(frame.getByTestId('diagram')).toBeVisible();
  await expect(frame.getByTestId('yaml-editor')).toHaveCount(0);
  await expect(frame.getByTestId('rules-view')).toHaveCount(0);
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  await page.locator('#outside').focus();
  await page.keyboard.press(' ');
  await page.keyboard.press('ArrowRight');
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'false');
  await expect(page.locator('#outside')).toHaveValue(' ');
  // Keys inside the embedded visualizer work.
  await frame.getByTestId('app').focus();
  await page.keyboard.press(' ');
  await expect(frame.getByTestId('play-pause')).toHaveAttribute('aria-pressed', 'true');
});

test('in Korean, no English UI string is left on screen', async ({ page }) => {
  const app = new App(page);
  await app.open('/?lang=ko');
  await app.send();
  await app.outcome();
  // Words from the English table that must not appear once in Korean.
  const english = ['Send packet', 'Send burst', 'Play', 'Pause', 'Step back', 'Step forward', 'Reset', 'Scenario',
    'Latest packet', 'Hops', 'Node rules', 'Pods and probes', 'Fail readiness', 'Take app down', 'Delivered to',
    'Load balancer', 'External client', 'Burst size', 'Continuous traffic', 'Your manifests', 'Apply', 'Language', 'Theme',
    'outside the cluster', 'Ready', 'NotReady', 'last probe', 'no readiness probe', 'app healthy', 'Simulated time', 'Speed', 'From', 'To'];
  const text = await page.evaluate(() => {
    const walker = document.createTreeWalker(document.querySelector('[data-testid=app]')!, NodeFilter.SHOW_TEXT);
    const out: string[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement!;
      // Rules and manifests are data, not UI strings.
      if (el.closest('[data-testid=rules-view], textarea, .hop-addr, .mono')) continue;
      if (el.closest('option') && !(el.closest('select') as HTMLSelectElement).selectedOptions[0]?.contains(n)) continue;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden' || el.closest('.sr-only')) continue;
      out.push(n.textContent ?? '');
    }
    return out.join('\n');
  });
  for (const w of english) {
    expect(text, `English "${w}" left on screen`).not.toMatch(new RegExp(`(^|[^A-Za-z])${w}([^A-Za-z]|$)`));
  }
  await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
  await page.screenshot({ path: 'artifacts/korean.png', fullPage: true });
});
