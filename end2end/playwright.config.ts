import { defineConfig, devices } from '@playwright/test';
import { chromiumLaunch } from './chromium';

// The tests start the release server themselves (see webServer) over a fresh SQLite
// file with the demo catalog, on their own port, using Debian's Chromium. Never run
// `npx playwright install`: it downloads a browser, which this network refuses.
// With E2E_DATABASE_URL (an empty PostgreSQL database) the server runs over it instead:
// `make test-e2e` runs the tests tagged @postgres so.
const addr = process.env.E2E_ADDR ?? '127.0.0.1:3011';
const serverBin = process.env.SERVER_BIN ?? '../target/release/server';
const dbFile = 'target/e2e/petstore.db';
const postgres = process.env.E2E_DATABASE_URL;

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL: `http://${addr}`,
    trace: 'retain-on-failure',
    launchOptions: chromiumLaunch,
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],
  webServer: {
    // From the workspace root, where target/site (the WASM, CSS and assets) lives.
    command: postgres ? `exec ${serverBin}` : `rm -f ${dbFile} ${dbFile}-wal ${dbFile}-shm && exec ${serverBin}`,
    cwd: '..',
    url: `http://${addr}/readyz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'pipe',
    env: {
      DATABASE_URL: postgres ?? `sqlite://${dbFile}`,
      LEPTOS_SITE_ADDR: addr,
      LEPTOS_SITE_ROOT: 'target/site',
      LEPTOS_ENV: 'PROD',
      PETSTORE_DEMO_DATA: 'true',
      // Not a terminal: the first admin key goes to this file (0600), not the repository.
      PETSTORE_FIRST_ADMIN_KEY_FILE: 'target/e2e/first-admin-key',
      // The webhook tests' receivers listen on loopback.
      PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'true',
      // Loopback is trusted as a proxy: a test may then speak for a client address of
      // its own (X-Forwarded-For), as the throttling test does, so that its refusals
      // leave the other tests' address alone. Requests without the header are the
      // peer's, as before.
      PETSTORE_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      // Warnings and errors only: one line per request would bury the test report
      // (E2E_RUST_LOG=info to see them).
      RUST_LOG: process.env.E2E_RUST_LOG ?? 'warn',
    },
  },
});
