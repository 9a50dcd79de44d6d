import { defineConfig, devices } from '@playwright/test';
import * as os from 'node:os';
import { chromiumLaunch } from './chromium';

// Each worker starts its own release server over a fresh SQLite file with the demo
// catalog, on a port of its own (tests/server.ts), using Debian's Chromium. Never run
// `npx playwright install`: it downloads a browser, which this network refuses.
// With E2E_DATABASE_URL (an empty PostgreSQL database) one worker runs over it instead:
// `make test-e2e` runs the tests tagged @postgres so.
const postgres = process.env.E2E_DATABASE_URL;
// One worker per two cores, or E2E_WORKERS: a worker (its Chromium and its server) kept
// 80 % of this 2-core machine busy, and `make test` runs the Rust suites beside it. Two
// workers there took 8.4 min against one's 10.1, alone on the machine; beside the Rust
// suites they would only share the same cores.
const workers = Number(process.env.E2E_WORKERS ?? Math.max(1, Math.floor(os.availableParallelism() / 2)));

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: postgres ? 1 : workers,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  use: {
    trace: 'retain-on-failure',
    launchOptions: chromiumLaunch,
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
});
