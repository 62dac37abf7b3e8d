import { defineConfig, devices } from '@playwright/test';

// Debian's Chromium, never a downloaded browser. The flags keep it from reaching for the network.
export const chromiumLaunch = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

// Against a running Ebb (`BASE_URL=… E2E_INVITE_CMD=… make e2e`) the tests that need the
// server's own database, files or binary (tagged @server) are left out.
const remote = !process.env.E2E_DATABASE_URL;

export default defineConfig({
  testDir: './tests',
  grepInvert: remote ? /@server/ : undefined,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  workers: 2,
  forbidOnly: !!process.env.CI,
  retries: 0,
  // The HTML report (end2end/playwright-report) keeps each failure's trace and screenshot:
  // `npx playwright show-report` opens it.
  reporter: [['list'], ['html', { open: 'never' }]],
  use: {
    baseURL: process.env.BASE_URL ?? 'http://localhost:3100',
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      testIgnore: [/flood\.spec\.ts/, /screenshots\.spec\.ts/],
      use: { ...devices['Desktop Chrome'], launchOptions: chromiumLaunch },
    },
    {
      // Spends the server's sign-in budgets: after everything else.
      name: 'flood',
      testMatch: /flood\.spec\.ts/,
      dependencies: ['chromium'],
      use: { ...devices['Desktop Chrome'], launchOptions: chromiumLaunch },
    },
    // `make screenshots` only: the README's pictures.
    ...(process.env.SCREENSHOTS
      ? [{ name: 'screenshots', testMatch: /screenshots\.spec\.ts/, use: { ...devices['Desktop Chrome'], launchOptions: chromiumLaunch } }]
      : []),
  ],
});
