import { chromium } from '@playwright/test';
const [,, base, out] = process.argv;
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox','--disable-gpu','--disable-background-networking','--disable-component-update','--disable-sync'] });
const views = [
  ['lb-1280', '/?scenario=loadbalancer-cluster&lang=en', 1280, 720, true],
  ['lb-ko-1280', '/?scenario=loadbalancer-cluster&lang=ko&mode=ipvs', 1280, 720, true],
  ['seed-1920', '/?lang=en', 1920, 1080, false],
  ['embed-720', '/?embed=1&scenario=loadbalancer-local&mode=iptables&lang=en', 720, 405, false],
];
for (const [name, path, w, h, send] of views) {
  const p = await b.newPage({ viewport: { width: w, height: h } });
  await p.goto(base + path);
  await p.getByTestId('diagram').waitFor();
  if (send) { await p.getByTestId('send-packet').click(); await p.waitForTimeout(300); await p.getByTestId('play-pause').click(); for (let i=0;i<10;i++) await p.getByTestId('step-forward').click(); }
  await p.waitForTimeout(300);
  await p.screenshot({ path: `${out}/${name}.png` });
  await p.close();
}
await b.close();
