import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { Page } from '@playwright/test';
import { cliKey, expect, hydrated, signIn, test } from './helpers';

// The WASM, JavaScript and CSS every page links, and the lazy islands' files (the staff
// console's, the sign-in and sign-up forms', the passkey buttons' and the docs' try-it
// panels', split into WASM files of their own: app/Cargo.toml), are compressed once,
// when the release is built (scripts/precompress.sh: brotli 11 and gzip 9 beside each
// file), and sent as they are: a download costs the server no compression. The proof:
// what it sends is, byte for byte, the file compressed at build time (compressing per
// request, at tower-http's quality, gives other bytes).

const pkg = path.resolve(__dirname, '../../target/site/pkg');

/** The built files the catalog page links (`/pkg/petstore.<hash>.<kind>`). */
async function linkedAssets(baseURL: string): Promise<string[]> {
  const page = await (await fetch(new URL('/', baseURL))).text();
  const assets = [...new Set(page.match(/\/pkg\/petstore\.[\w-]+\.(?:wasm|js|css)/g))];
  expect(assets.map((asset) => path.extname(asset)).sort()).toEqual(['.css', '.js', '.wasm']);
  return assets;
}

/** One GET, its body left as sent (Node's http never decodes it). */
function download(url: URL, acceptEncoding: string): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { 'Accept-Encoding': acceptEncoding } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

/** That `asset` goes out as the build's file and its compressed copies, byte for byte. */
async function expectSentAsBuilt(asset: string, baseURL: string) {
  const file = path.join(pkg, path.basename(asset));
  for (const [accepted, encoding, suffix] of [
    // What Chromium sends: brotli is chosen.
    ['gzip, deflate, br, zstd', 'br', '.br'],
    ['gzip', 'gzip', '.gz'],
    ['identity', undefined, ''],
  ] as const) {
    const { headers, body } = await download(new URL(asset, baseURL), accepted);
    expect(headers['content-encoding'], `${asset} for "${accepted}"`).toBe(encoding);
    expect(headers['vary'], asset).toMatch(/accept-encoding/i);
    expect(headers['cache-control'], asset).toContain('immutable');
    const built = fs.readFileSync(file + suffix);
    expect(body.length, `${asset}${suffix}: the build's ${built.length} bytes`).toBe(built.length);
    expect(body.equals(built), `${asset}${suffix} is the file built`).toBe(true);
  }
  // The build's copies hold the file itself (none left over from another build).
  const raw = fs.readFileSync(file);
  expect(zlib.brotliDecompressSync(fs.readFileSync(file + '.br')).equals(raw), `${asset}.br`).toBe(true);
  expect(zlib.gunzipSync(fs.readFileSync(file + '.gz')).equals(raw), `${asset}.gz`).toBe(true);
}

/** The paths of the scripts and WASM files `path` fetches until its islands have started, sorted. */
async function scriptsFetched(page: Page, path: string): Promise<string[]> {
  const fetched: string[] = [];
  const listener = (request: { url(): string }) => {
    const { pathname } = new URL(request.url());
    if (/\.(wasm|js)$/.test(pathname)) fetched.push(pathname);
  };
  page.on('request', listener);
  await page.goto(path);
  await hydrated(page);
  page.off('request', listener);
  return [...new Set(fetched)].sort();
}

test('the built files go out as compressed at build time, byte for byte', async ({ baseURL }) => {
  for (const asset of await linkedAssets(baseURL!)) await expectSentAsBuilt(asset, baseURL!);
});

test('a shopper\'s pages load one WASM; the docs\' and the console\'s islands come in files of their own', async ({ page, baseURL }) => {
  const main = (await linkedAssets(baseURL!)).filter((asset) => !asset.endsWith('.css'));
  const wasm = main.filter((asset) => asset.endsWith('.wasm'));
  for (const path of ['/', '/pets/1', '/docs']) {
    // (The lazy islands' loader, a small script, is imported by the page's own.)
    const fetched = await scriptsFetched(page, path);
    expect(fetched.filter((asset) => asset.endsWith('.wasm')), path).toEqual(wasm);
  }
  // On the docs, a try-it panel's code comes when a panel is first opened, in files of
  // its own.
  const opened: string[] = [];
  const onRequest = (request: { url(): string }) => {
    const { pathname } = new URL(request.url());
    if (pathname.endsWith('.wasm')) opened.push(pathname);
  };
  page.on('request', onRequest);
  const panel = page.locator('article#op-listPets .try-it');
  await panel.getByText('Try it').click();
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  page.off('request', onRequest);
  expect(opened.some((asset) => /\/split_try_it_loader_\w+\.[\w-]+\.wasm$/.test(asset)), opened.join(' ')).toBe(true);
  for (const asset of new Set(opened)) {
    expect(asset, '/docs, a panel opened').toMatch(/\/(split_try_it_loader_\w+|chunk_\d+)\.[\w-]+\.wasm$/);
    await expectSentAsBuilt(asset, baseURL!);
  }
  // The sign-in and sign-up forms and their passkey buttons are lazy islands too: their
  // own files (and the pieces they share), fetched on the two pages that have them, and
  // sent as built.
  for (const [path, island] of [['/sign-in', 'sign_in'], ['/sign-up', 'sign_up']]) {
    const fetched = (await scriptsFetched(page, path)).filter((asset) => asset.endsWith('.wasm'));
    const lazy = fetched.filter((asset) => !wasm.includes(asset));
    expect(fetched.filter((asset) => wasm.includes(asset)), path).toEqual(wasm);
    for (const loader of [`passkey_${island}`, `${island}_form`]) {
      expect(lazy.some((asset) => new RegExp(`/split_${loader}_loader_\\w+\\.[\\w-]+\\.wasm$`).test(asset)), lazy.join(' ')).toBe(true);
    }
    for (const asset of lazy) {
      expect(asset, path).toMatch(/\/(split_(passkey_sign_(in|up)|sign_(in|up)_form)_loader_\w+|chunk_\d+)\.[\w-]+\.wasm$/);
      await expectSentAsBuilt(asset, baseURL!);
    }
  }
  // The console: a pet editor's islands, fetched when the page has them, and sent as built.
  await signIn(page, cliKey('admin', 'e2e assets'));
  const editor = await scriptsFetched(page, '/admin/pets/1');
  const lazy = editor.filter((asset) => !main.includes(asset));
  expect(lazy.some((asset) => /\/split_pet_edit_form_loader_\w+\.[\w-]+\.wasm$/.test(asset)), editor.join(' ')).toBe(true);
  expect(lazy.some((asset) => /\/__wasm_split\.[\w-]+\.js$/.test(asset)), editor.join(' ')).toBe(true);
  for (const asset of lazy) await expectSentAsBuilt(asset, baseURL!);
  // (console.spec.ts and webhooks.spec.ts use these islands, so fetched.)
});

test('lazy islands start side by side: the sign-in form\'s file is asked for while the passkey button\'s is still on its way', async ({ page }) => {
  // The passkey button comes first in the page; its file is held until the form's is
  // asked for. A walk that awaited each island would never ask, and time out here.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  await page.route(/\/split_passkey_sign_in_loader_\w+\.[\w-]+\.wasm$/, async (route) => {
    await gate;
    await route.continue();
  });
  const form = page.waitForRequest(/\/split_sign_in_form_loader_\w+\.[\w-]+\.wasm$/, { timeout: 10_000 });
  await page.goto('/sign-in');
  await form;
  release();
  await hydrated(page);
});

test('a browser is sent the brotli file', async ({ page }) => {
  const wasm = page.waitForResponse((response) => response.url().endsWith('.wasm'));
  await page.goto('/');
  const response = await wasm;
  expect(await response.headerValue('content-encoding')).toBe('br');
  const file = path.join(pkg, path.basename(new URL(response.url()).pathname));
  expect(Number(await response.headerValue('content-length'))).toBe(fs.statSync(file + '.br').size);
});

test('the WASM is fetched only once the page has loaded and been painted', async ({ page }) => {
  for (const path of ['/', '/pets/1', '/docs']) {
    await page.goto(path);
    await hydrated(page);
    const timings = await page.evaluate(() => {
      const loaded = (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).loadEventEnd;
      const painted = performance.getEntriesByName('first-contentful-paint')[0]?.startTime;
      const wasm = performance.getEntriesByType('resource').find((entry) => entry.name.endsWith('.wasm'))?.startTime;
      return { loaded, painted, wasm };
    });
    expect(timings.wasm, `${path}: the WASM was fetched`).toBeDefined();
    expect(timings.painted, `${path}: the page was painted`).toBeDefined();
    expect(timings.wasm!, `${path}: ${JSON.stringify(timings)}`).toBeGreaterThanOrEqual(timings.loaded);
    expect(timings.wasm!, `${path}: ${JSON.stringify(timings)}`).toBeGreaterThanOrEqual(timings.painted!);
  }
});

test('every island is started once, by the page\'s own script, the last one too', async ({ page }) => {
  await page.goto('/docs');
  await hydrated(page);
  // Leptos's island script (a module script) is left in its template: it would start
  // every island a second time.
  await expect(page.locator('script[type="module"]')).toHaveCount(0);
  // The script yields before each island, and starts a try-it panel when it is first
  // opened: the page's last one too.
  const last = page.locator('details.try-it').last();
  await last.locator('summary').click();
  await expect(last.locator('.try-it-form')).toBeVisible();
  await expect(last.locator('button.send')).toBeEnabled();
});
