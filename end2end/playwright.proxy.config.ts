import { defineConfig, devices } from '@playwright/test';
import { chromiumLaunch } from './playwright.config';

// Ebb behind nginx over https (scripts/proxy-e2e.sh starts nginx, two Ebb instances and a local
// CA that Chromium trusts through its NSS database). One worker: the specs share one rate budget.
export default defineConfig({
  testDir: './proxy',
  timeout: 240_000,
  expect: { timeout: 15_000 },
  workers: 1,
  retries: 0,
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report-proxy' }]],
  use: {
    ...devices['Desktop Chrome'],
    baseURL: process.env.BASE_URL,
    launchOptions: chromiumLaunch,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
