import { defineConfig, devices } from '@playwright/test';
import { chromiumLaunch } from '../chromium';

// The contributor's loop (`make test-dev-loop`): `cargo leptos watch` over a scratch copy
// of the workspace, edited while a page is open. The test starts the watcher itself
// (there is no webServer here) and may wait for a cold debug build, hence the long
// timeout. Debian's Chromium (../chromium.ts), as for the other browser tests.
export default defineConfig({
  testDir: '.',
  outputDir: '../test-results/dev-loop',
  timeout: 60 * 60_000,
  expect: { timeout: 10_000 },
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  use: {
    trace: 'retain-on-failure',
    launchOptions: chromiumLaunch,
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
