// Playwright runs the release build (dist/ and the sub-path build) in Debian's
// Chromium. Browsers are never downloaded: executablePath points at /usr/bin/chromium.
import { defineConfig } from '@playwright/test';
import { PORT, ROOT, SUB, CSP } from './ports';

export default defineConfig({
  testDir: './specs',
  outputDir: './artifacts/results',
  timeout: 30_000,
  retries: 0,
  workers: 1,
  reporter: [['list'], ['json', { outputFile: 'artifacts/report.json' }]],
  use: {
    baseURL: ROOT,
    viewport: { width: 1400, height: 900 },
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: [
    {
      command: `python3 -m http.server ${PORT} --bind 127.0.0.1 --directory ../../dist`,
      url: `${ROOT}/`,
      reuseExistingServer: false,
      timeout: 20_000,
    },
    {
      // The build made with --public-url /docs/kpv/, served from its parent.
      command: `python3 -m http.server ${PORT + 1} --bind 127.0.0.1 --directory ../../target/site`,
      url: `${SUB}/docs/kpv/`,
      reuseExistingServer: false,
      timeout: 20_000,
    },
    {
      // Both builds again (dist/ at /, the sub-path build under /docs/kpv/),
      // with a strict Content-Security-Policy header (specs/csp.spec.ts).
      command: `python3 csp_server.py ${PORT + 2} ../../dist ../../target/site`,
      url: `${CSP}/`,
      reuseExistingServer: false,
      timeout: 20_000,
    },
  ],
});
