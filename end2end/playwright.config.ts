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

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  workers: 2,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL: process.env.BASE_URL ?? 'http://localhost:3100',
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      testIgnore: /flood\.spec\.ts/,
      use: { ...devices['Desktop Chrome'], launchOptions: chromiumLaunch },
    },
    {
      // Spends the server's sign-in budgets: after everything else.
      name: 'flood',
      testMatch: /flood\.spec\.ts/,
      dependencies: ['chromium'],
      use: { ...devices['Desktop Chrome'], launchOptions: chromiumLaunch },
    },
  ],
});
