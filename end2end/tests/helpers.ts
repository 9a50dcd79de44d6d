import { test as base, Browser, expect, Locator, Page, Response } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { databaseUrl, serverBin, startServer, stopServer, storeURL } from './server';

export { expect, databaseUrl, storeURL };

/** Resolves once `count` live-stock streams (`/live`) of pages at a path matching
 *  `onPage` have started (answered 200; the Referer says which page opened a stream, so
 *  a stream of the page before, answered late, is not counted). Each starts at the
 *  store's latest event when the server takes it, so a change the page should show live
 *  must come after: call before the navigation that opens them, await before making the
 *  change. (The pet page opens two, the catalog one.) */
export function liveStreams(page: Page, count: number, onPage: RegExp): Promise<void> {
  let seen = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${seen} of ${count} live streams opened in 15 s`)), 15_000);
    const onResponse = async (response: Response) => {
      if (new URL(response.url()).pathname !== '/live' || response.status() !== 200) return;
      const referer = await response.request().headerValue('referer');
      if (referer === null || !onPage.test(new URL(referer).pathname)) return;
      if (++seen === count) {
        clearTimeout(timer);
        page.off('response', onResponse);
        resolve();
      }
    };
    page.on('response', onResponse);
  });
}

/** What went wrong in the pages of the running test (see `failOnPageErrors`). */
const pageProblems: string[] = [];

/** `test` that fails a test in whose pages a script threw or the Content-Security-Policy
 *  blocked something, listing what happened (a listener that throws would only be
 *  logged, and the test would fail later and less clearly, if at all). Without a store
 *  server: for the dev loop's test, which runs `cargo leptos watch` instead. */
export const testWithoutStore = base.extend<{ pageProblemsChecked: void }>({
  pageProblemsChecked: [
    async ({}, use) => {
      pageProblems.length = 0;
      await use();
      expect(pageProblems, 'script errors or CSP violations in the pages').toEqual([]);
    },
    { auto: true },
  ],
});

/** `testWithoutStore` with this worker's own store server (./server.ts), started before
 *  its first test, as every page's `baseURL`. */
export const test = testWithoutStore.extend<{}, { storeServer: string }>({
  storeServer: [
    async ({}, use) => {
      const server = await startServer();
      await use(storeURL);
      await stopServer(server);
    },
    { scope: 'worker', timeout: 90_000 },
  ],
  baseURL: async ({ storeServer }, use) => use(storeServer),
});

/** Records any script error of the page (a page that throws has not really hydrated)
 *  and anything the Content-Security-Policy blocked; the test fails on them. */
export function failOnPageErrors(page: Page) {
  // A Rust panic reaches the page as `unreachable`; its message went to the console
  // just before (console_error_panic_hook), so report that too.
  let lastConsoleError = '';
  page.on('pageerror', (error) => {
    pageProblems.push(`page error on ${page.url()}: ${error.message} (last console error: ${lastConsoleError || 'none'})`);
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    lastConsoleError = message.text();
    if (/Content[ -]Security[ -]Policy/i.test(message.text())) {
      pageProblems.push(`CSP violation on ${page.url()}: ${message.text()}`);
    }
  });
}

/** Waits until the page's islands run (the WASM entry point, frontend/src/lib.rs, sets
 *  this attribute once they are hydrated). */
export async function hydrated(page: Page) {
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

/** Lays out the whole page: the docs' cards are drawn only near the screen
 *  (`content-visibility: auto`), and a check of where things are, or of their colours,
 *  must see all of them. */
export async function drawEverything(page: Page) {
  await page.evaluate(() => {
    for (const element of document.querySelectorAll<HTMLElement>('body *')) {
      if (getComputedStyle(element).contentVisibility === 'auto') element.style.contentVisibility = 'visible';
    }
  });
}

/** A key made with the server's own CLI over this worker's database. */
export function cliKey(role: 'admin' | 'customer', name: string): string {
  const root = path.resolve(__dirname, '../..');
  return execFileSync(serverBin, ['keys', 'create', '--name', name, '--role', role, '--plan', 'pro'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  }).trim();
}

/** Signs this page's browser context in with a key, through the sign-in page. */
export async function signIn(page: Page, key: string) {
  await page.goto('/sign-in');
  await hydrated(page);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await signedInElsewhere(page);
}

/** A sign-in sends the browser on from /sign-in. Waiting for that, not for the header's
 *  "Signed in" (which a browser already signed in shows at once), keeps the next `goto`
 *  from racing the sign-in's own navigation. */
async function signedInElsewhere(page: Page) {
  await page.waitForURL((url) => url.pathname !== '/sign-in');
  await expect(page.locator('.who')).toBeVisible();
}

/** A signed-in page of a fresh context, at `size`, with or without JavaScript (without
 *  it, the sign-in form is sent as a plain form post). */
export async function signedInPage(browser: Browser, key: string, size: { width: number; height: number }, javaScript = true) {
  const context = await browser.newContext({ viewport: size, javaScriptEnabled: javaScript });
  const page = await context.newPage();
  failOnPageErrors(page);
  if (javaScript) {
    await signIn(page, key);
  } else {
    await page.goto('/sign-in');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await signedInElsewhere(page);
  }
  return page;
}

/** `base` with a suffix of this run, so that a test can run again over the same
 *  database (`--repeat-each`) without colliding with what it made before. */
export function unique(base: string): string {
  return `${base} ${Math.random().toString(36).slice(2, 7)}`;
}

/** A new pet of the demo's Fish category with `stock` units, made through the API. */
export async function stockedPet(page: Page, admin: string, name: string, stock: number): Promise<number> {
  const headers = { 'X-API-Key': admin };
  const categories = await (await page.request.get('/api/v1/categories?limit=100', { headers })).json();
  const fish = categories.find((c: { name: string }) => c.name === 'Fish');
  const created = await page.request.post('/api/v1/pets', { headers, data: { name, categoryId: fish.id } });
  expect(created.status()).toBe(201);
  const pet = await created.json();
  const stocked = await page.request.put(`/api/v1/store/inventory/${pet.id}`, { headers, data: { quantity: stock } });
  expect(stocked.status()).toBe(200);
  return pet.id;
}

/** Orders of one pet as its key sees them through the API. */
export async function ordersOf(page: Page, key: string, petId: number): Promise<{ id: number; quantity: number }[]> {
  const listed = await page.request.get(`/api/v1/store/orders?petId=${petId}&limit=100`, { headers: { 'X-API-Key': key } });
  expect(listed.status()).toBe(200);
  return listed.json();
}

/** The two widths every flow is tried at (the issue's: a laptop and a phone). */
export const WIDTHS = { desktop: { width: 1366, height: 900 }, phone: { width: 390, height: 844 } };

/** A screenshot of the page as it is, for reviewers, in target/screenshots/. */
export async function shoot(page: Page, name: string) {
  await page.screenshot({ path: path.resolve(__dirname, `../../target/screenshots/${name}.png`), fullPage: true });
}

/** Opens the header's menu when it is folded (a phone's width, once hydrated), so that
 *  its links can be clicked as a person would. */
export async function openMenu(page: Page) {
  const toggle = page.getByRole('button', { name: 'Menu' });
  if ((await toggle.isVisible()) && (await toggle.getAttribute('aria-expanded')) === 'false') {
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  }
}

/** The text colour of `element` beside the colour the stylesheet's `variable` (such as
 *  `--error-text`) names, both as the browser computes them, for comparing. */
export async function colourAndVariable(element: Locator, variable: string): Promise<[string, string]> {
  return element.evaluate((drawn, name) => {
    const probe = document.createElement('span');
    probe.style.color = `var(${name})`;
    document.body.append(probe);
    const colours: [string, string] = [getComputedStyle(drawn).color, getComputedStyle(probe).color];
    probe.remove();
    return colours;
  }, variable);
}
