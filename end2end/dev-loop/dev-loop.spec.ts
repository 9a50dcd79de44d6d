import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { expect, failOnPageErrors, hydrated, testWithoutStore as test } from '../tests/helpers';

// `cargo leptos watch` as a contributor uses it (docs/development.md, "The dev loop"):
// a page stays open while a CSS rule and then an island's text are edited, and each
// change must reach that page by itself. The edits go to a scratch copy of the
// workspace (the files git knows, as they are on disk), never to this checkout.
//
// The copy lives at a fixed place with its own target folder, so that a second run
// compiles only the workspace's crates again. Its sources are copied afresh each run,
// with new modification times: cargo judges freshness by time, and a copy keeping the
// checkout's older times could pass for the last run's edited build.

const repo = path.resolve(__dirname, '../..');
const scratch = process.env.DEV_LOOP_DIR ?? path.join(repo, 'target/dev-loop');
const workspace = path.join(scratch, 'workspace');
const log = path.join(scratch, 'watch.log');

/** How long the first build may take: a cold debug build of the server and of the
 *  WASM on a 2-core machine. Polled, not a figure: a ready store ends the wait. */
const FIRST_BUILD = 40 * 60_000;
/** How long a rebuild after an edit may take (the workspace's crates again). */
const REBUILD = 10 * 60_000;

/** Copies the files git knows (tracked, or new and not ignored) into `to`. */
function copyWorkspace(to: string) {
  fs.rmSync(to, { recursive: true, force: true });
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo })
    .toString()
    .split('\0')
    .filter((file) => file !== '' && fs.existsSync(path.join(repo, file)));
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    fs.copyFileSync(path.join(repo, file), path.join(to, file));
  }
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Replaces `from` (which must be there exactly once) with `to` in a file. */
function edit(file: string, from: string, to: string) {
  const text = fs.readFileSync(file, 'utf8');
  expect(text.split(from).length - 1, `"${from}" once in ${file}`).toBe(1);
  fs.writeFileSync(file, text.replace(from, to));
}

function tail(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').slice(-60).join('\n') : '(no log)';
}

let watcher: ChildProcess | undefined;

/** Stops the watcher and the server it started (one process group). */
async function stopWatcher() {
  const child = watcher;
  watcher = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGTERM');
  const late = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  }, 10_000);
  await exited;
  clearTimeout(late);
}

test.afterEach(async ({}, testInfo) => {
  await stopWatcher();
  if (testInfo.status !== testInfo.expectedStatus) console.log(`The watcher's last lines (${log}):\n${tail(log)}`);
});

test('cargo leptos watch applies a CSS change in place and reloads the page for an island change', async ({ page }) => {
  copyWorkspace(workspace);
  fs.mkdirSync(path.join(workspace, 'data'), { recursive: true });
  const [sitePort, reloadPort] = [await freePort(), await freePort()];
  const site = `http://127.0.0.1:${sitePort}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CARGO_TARGET_DIR: path.join(scratch, 'target'),
    // The two settings docs/development.md gives for moving the loop's ports.
    LEPTOS_SITE_ADDR: `127.0.0.1:${sitePort}`,
    LEPTOS_RELOAD_PORT: String(reloadPort),
    DATABASE_URL: 'sqlite://data/petstore.db',
    RUST_LOG: 'warn',
  };
  // What make sets for release builds must not leak into the loop.
  delete env.LEPTOS_HASH_FILES;
  delete env.LEPTOS_SITE_ROOT;
  const out = fs.openSync(log, 'w');
  watcher = spawn('cargo', ['leptos', 'watch'], { cwd: workspace, env, detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);

  // A watcher that stops (a build tool missing, a port taken) fails the test at once.
  const stopped = new Promise<never>((_, reject) =>
    watcher!.once('exit', (code, signal) => reject(new Error(`cargo leptos watch exited (${code ?? signal})`))),
  );
  stopped.catch(() => {});
  const unlessStopped = (wait: Promise<void>) => Promise.race([wait, stopped]);
  const status = (url: string) => fetch(url).then((response) => response.status, () => 0);
  await unlessStopped(expect.poll(() => status(`${site}/readyz`), { timeout: FIRST_BUILD, intervals: [2_000] }).toBe(200));

  // Every WASM the page loads (its path and whether the server sent it whole: the
  // browser's copy of a debug build's WASM is too large for its inspector to keep),
  // and every time the page loads.
  const wasm: { path: string; status: number }[] = [];
  page.on('response', (response) => {
    const file = new URL(response.url()).pathname;
    if (file.endsWith('.wasm')) wasm.push({ path: file, status: response.status() });
  });
  let loads = 0;
  page.on('load', () => loads++);
  failOnPageErrors(page);
  await page.goto(site);
  await hydrated(page);
  expect(loads).toBe(1);

  // A CSS rule: applied where the page stands, without reloading it.
  const marker = `dev-loop-${Date.now().toString(36)}`;
  fs.appendFileSync(path.join(workspace, 'style/main.css'), `\n:root { --dev-loop-marker: "${marker}"; }\n`);
  await unlessStopped(
    expect
      .poll(() => page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--dev-loop-marker')), {
        timeout: REBUILD,
        message: 'the CSS change reached the page',
      })
      .toContain(marker),
  );
  expect(loads, 'a CSS change is applied without a reload').toBe(1);

  // An island's text (the header's menu button): the page reloads by itself once the
  // server and the WASM are rebuilt, and the WASM it then loads is the new one.
  edit(path.join(workspace, 'app/src/ui/mod.rs'), '                "Menu"\n', `                "Menu ${marker}"\n`);
  await unlessStopped(
    expect(page.locator('.menu-toggle'), 'the island change reached the page').toContainText(marker, { timeout: REBUILD }),
  );
  expect(loads, 'the page reloaded itself').toBeGreaterThan(1);
  await hydrated(page);
  expect(wasm.length, 'the reloaded page fetched its WASM again').toBeGreaterThan(1);
  const reloaded = wasm[wasm.length - 1];
  expect(reloaded.status, 'the WASM after the reload came whole from the server, not from a cache').toBe(200);
  const served = Buffer.from(await (await fetch(`${site}${reloaded.path}`)).arrayBuffer());
  expect(served.includes(marker), 'the WASM the page loaded after the reload holds the edited island').toBe(true);
});
