import { expect, Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/** Fails the test on any script error (a page that throws has not really hydrated) and
 *  on anything the Content-Security-Policy blocked. */
export function failOnPageErrors(page: Page) {
  // A Rust panic reaches the page as `unreachable`; its message went to the console
  // just before (console_error_panic_hook), so report that too.
  let lastConsoleError = '';
  page.on('pageerror', (error) => {
    throw new Error(`page error: ${error.message} (last console error: ${lastConsoleError || 'none'})`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') lastConsoleError = message.text();
    if (message.type() === 'error' && /Content[ -]Security[ -]Policy/i.test(message.text())) {
      throw new Error(`CSP violation: ${message.text()}`);
    }
  });
}

/** Waits until the WASM has taken over the page (the app sets this attribute). */
export async function hydrated(page: Page) {
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

/** A key made with the server's own CLI over the test database. */
export function cliKey(role: 'admin' | 'customer', name: string): string {
  const root = path.resolve(__dirname, '../..');
  const bin = process.env.SERVER_BIN ?? path.join(root, 'target/release/server');
  return execFileSync(bin, ['keys', 'create', '--name', name, '--role', role, '--plan', 'pro'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: 'sqlite://target/e2e/petstore.db' },
    encoding: 'utf8',
  }).trim();
}

/** Signs this page's browser context in with a key, through the sign-in page. */
export async function signIn(page: Page, key: string) {
  await page.goto('/sign-in');
  await hydrated(page);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('.who')).toBeVisible();
}
