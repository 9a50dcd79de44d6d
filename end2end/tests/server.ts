import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

// Each Playwright worker runs its own release server over its own fresh database, so
// that workers never see each other's keys, orders, limits or live events: the tests of
// one worker meet the store as a single-worker run does (a worker started again after a
// failure starts over a fresh store). Worker N (its parallel index) serves on the port
// of E2E_ADDR plus 100 N (clear of the other suites' 3012 to 3014), over
// target/e2e/petstore-N.db; with E2E_DATABASE_URL (an empty PostgreSQL database) there
// is one worker, over it.

const root = path.resolve(__dirname, '../..');
const [host, firstPort] = (process.env.E2E_ADDR ?? '127.0.0.1:3011').split(':');
const index = Number(process.env.TEST_PARALLEL_INDEX ?? '0');

/** This worker's server address, `host:port`, and its URL (every test's `baseURL`). */
export const addr = `${host}:${Number(firstPort) + 100 * index}`;
export const storeURL = `http://${addr}`;
/** Where this worker's server keeps the store. */
export const databaseUrl = process.env.E2E_DATABASE_URL ?? `sqlite://target/e2e/petstore-${index}.db`;
/** The release binary the tests run (and make keys with). */
export const serverBin = process.env.SERVER_BIN ?? path.join(root, 'target/release/server');

/** Starts this worker's server and resolves once `/readyz` answers 200. */
export async function startServer(): Promise<ChildProcess> {
  if (!process.env.E2E_DATABASE_URL) {
    const file = path.join(root, databaseUrl.slice('sqlite://'.length));
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }
  const server = spawn(serverBin, [], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LEPTOS_SITE_ADDR: addr,
      LEPTOS_SITE_ROOT: 'target/site',
      LEPTOS_ENV: 'PROD',
      PETSTORE_DEMO_DATA: 'true',
      // Not a terminal: the first admin key goes to this file (0600), not the repository.
      PETSTORE_FIRST_ADMIN_KEY_FILE: `target/e2e/first-admin-key-${index}`,
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
  });
  const exited = new Promise<never>((_, reject) =>
    server.once('exit', (code, signal) => reject(new Error(`the server on ${addr} exited (${code ?? signal}) before it was ready`))),
  );
  exited.catch(() => {});
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ready = await Promise.race([
      fetch(`http://${addr}/readyz`).then((r) => r.status === 200, () => false),
      exited,
    ]);
    if (ready) return server;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  server.kill('SIGKILL');
  throw new Error(`the server on ${addr} was not ready within 60 s`);
}

/** Stops the server as an operator would (SIGTERM), and waits for it to end. */
export async function stopServer(server: ChildProcess) {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const ended = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
  await ended;
  clearTimeout(timer);
}
