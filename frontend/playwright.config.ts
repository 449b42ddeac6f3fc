// End-to-end tests run in Debian's Chromium (never a downloaded browser) against a running
// hostbench at HOSTBENCH_URL; the caller starts the real backend and a runner.
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { ADMIN_STATE } from './e2e/auth';

// `./hostbench test` gives each run its own state folder: results and report go there, so two runs
// in one checkout (two people, or CI beside a developer) never delete each other's traces.
const state = process.env.HOSTBENCH_TEST_STATE;
const outputDir = state ? join(state, 'playwright-results') : 'test-results';
const reportDir = state ? join(state, 'playwright-report') : 'playwright-report';

export default defineConfig({
  testDir: './e2e',
  timeout: 300_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: process.env.CI ? [['list']] : [['list'], ['html', { open: 'never', outputFolder: reportDir }]],
  outputDir,
  use: {
    baseURL: process.env.HOSTBENCH_URL ?? 'http://127.0.0.1:8000',
    headless: true,
    viewport: { width: 1280, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
  // Every page needs a session: `setup` signs in as the e2e admin through the sign-in page and saves
  // the cookies; every spec starts from them (a spec that signs in as someone else clears them).
  projects: [
    { name: 'setup', testMatch: /auth\.setup\.ts$/ },
    { name: 'dashboard', dependencies: ['setup'], testIgnore: /auth\.setup\.ts$/, use: { storageState: ADMIN_STATE } },
  ],
});
