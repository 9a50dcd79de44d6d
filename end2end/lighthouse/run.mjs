// make bench's Lighthouse rows: Lighthouse (pinned in package-lock.json) with its default
// mobile settings (a mid-range phone, simulated slow 4G and a 4× slower CPU) in
// Debian's Chromium, against the release server as `make run` starts it (over a fresh
// SQLite file with the demo catalog). Four pages a shopper or a developer opens first:
// the catalog, a pet, the API's docs, and My orders signed in (with one order). Each is
// measured three times; the median run (by performance score) is reported. Prints a
// table, writes target/bench/lighthouse.json, and exits 1 when a budget is missed
// (docs/PERFORMANCE.md, "Budgets"); each run's whole report is kept in
// target/bench/lighthouse/. Usage: SERVER_BIN=… node end2end/lighthouse/run.mjs
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const serverBin = process.env.SERVER_BIN ?? path.join(root, 'target/release/server');
const addr = process.env.LIGHTHOUSE_ADDR ?? '127.0.0.1:3019';
const base = `http://${addr}`;
const runs = Number(process.env.LIGHTHOUSE_RUNS ?? 3);
const work = path.join(root, 'target/bench/lighthouse');
const databaseUrl = `sqlite://${work}/petstore.db`;

const BUDGET_SCORE = 95;
const BUDGET_DOCS_TBT_MS = 200;

fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const server = spawn(serverBin, [], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    LEPTOS_SITE_ADDR: addr,
    LEPTOS_SITE_ROOT: 'target/site',
    LEPTOS_ENV: 'PROD',
    PETSTORE_DEMO_DATA: 'true',
    PETSTORE_FIRST_ADMIN_KEY_FILE: path.join(work, 'first-admin-key'),
    RUST_LOG: 'warn',
  },
});
let chrome;
const stop = async () => {
  server.kill('SIGTERM');
  await chrome?.kill();
};
process.on('SIGINT', () => stop().then(() => process.exit(130)));

try {
  await ready();
  const cookie = await shopperWithAnOrder();
  chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // LIGHTHOUSE_PAGES=/docs,/orders measures those alone (while working on one page).
  const only = process.env.LIGHTHOUSE_PAGES?.split(',');
  const pages = [
    { name: 'catalog', path: '/' },
    { name: 'a pet', path: '/pets/1' },
    { name: 'docs', path: '/docs' },
    { name: 'My orders, signed in', path: '/orders', cookie },
  ].filter((page) => !only || only.includes(page.path));
  const results = [];
  for (const page of pages) {
    const measured = [];
    for (let run = 0; run < runs; run++) {
      const { lhr } = await lighthouse(base + page.path, {
        port: chrome.port,
        output: 'json',
        logLevel: 'error',
        onlyCategories: ['performance'],
        ...(page.cookie ? { extraHeaders: { Cookie: page.cookie } } : {}),
      });
      if (lhr.runtimeError) throw new Error(`${page.path}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
      if (new URL(lhr.finalDisplayedUrl).pathname !== page.path) {
        throw new Error(`${page.path} ended at ${lhr.finalDisplayedUrl}`);
      }
      // The whole report of each run, for finding what a figure is made of.
      const file = `${page.path.replace(/\W+/g, '-').replace(/^-|-$/g, '') || 'catalog'}-${run + 1}.json`;
      fs.writeFileSync(path.join(work, file), JSON.stringify(lhr));
      measured.push({
        score: Math.round(lhr.categories.performance.score * 100),
        fcpMs: lhr.audits['first-contentful-paint'].numericValue,
        lcpMs: lhr.audits['largest-contentful-paint'].numericValue,
        tbtMs: lhr.audits['total-blocking-time'].numericValue,
        // Not in the score since Lighthouse 10, but what a shopper waits for before the
        // islands answer (the page's forms work before then, without JavaScript).
        interactiveMs: lhr.audits['interactive']?.numericValue,
        cls: lhr.audits['cumulative-layout-shift'].numericValue,
        bytes: lhr.audits['total-byte-weight'].numericValue,
      });
    }
    const median = [...measured].sort((a, b) => a.score - b.score)[Math.floor(measured.length / 2)];
    results.push({ ...page, cookie: undefined, median, runs: measured });
  }

  console.log(`\nLighthouse ${JSON.parse(fs.readFileSync(path.join(root, 'end2end/node_modules/lighthouse/package.json'))).version}, mobile (its defaults), ${chromeVersion()}, median of ${runs} runs by score:`);
  console.log('| page | performance | FCP | LCP | TBT | CLS | interactive | bytes on the wire | scores of the runs |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const { name, path: at, median, runs: all } of results) {
    console.log(`| ${name} \`${at}\` | ${median.score} | ${(median.fcpMs / 1000).toFixed(1)} s | ${(median.lcpMs / 1000).toFixed(1)} s | ${Math.round(median.tbtMs)} ms | ${median.cls.toFixed(3)} | ${(median.interactiveMs / 1000).toFixed(1)} s | ${Math.round(median.bytes).toLocaleString('en')} | ${all.map((r) => r.score).join(', ')} |`);
  }
  const budgets = [
    ...results.map(({ path: at, median }) => [`Lighthouse mobile performance of ${at} ≥ ${BUDGET_SCORE} (median of ${runs})`, median.score >= BUDGET_SCORE]),
    ...results.filter((r) => r.path === '/docs').map(({ median }) =>
      [`Lighthouse total blocking time of /docs < ${BUDGET_DOCS_TBT_MS} ms`, median.tbtMs < BUDGET_DOCS_TBT_MS]),
  ];
  console.log('\nbudgets:');
  for (const [budget, met] of budgets) console.log(`  ${met ? 'met   ' : 'MISSED'} ${budget}`);
  fs.writeFileSync(path.join(root, 'target/bench/lighthouse.json'),
    JSON.stringify({ chromium: chromeVersion(), runs, pages: results, budgets: budgets.map(([budget, met]) => ({ budget, met })) }, null, 2));
  process.exitCode = budgets.every(([, met]) => met) ? 0 : 1;
} finally {
  await stop();
}

async function ready() {
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode})`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server at ${base} was not ready within 30 s`);
}

/** A customer key (by the server's own CLI), one order with it by the REST API, and a
 *  session cookie from the sign-in form as a browser without JavaScript sends it. */
async function shopperWithAnOrder() {
  const key = execFileSync(serverBin, ['keys', 'create', '--name', 'lighthouse', '--role', 'customer', '--plan', 'pro'], {
    cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8',
  }).trim().split('\n').at(-1);
  const ordered = await fetch(`${base}/api/v1/store/orders`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ petId: 1, quantity: 1 }),
  });
  if (ordered.status !== 201) throw new Error(`the order: ${ordered.status} ${await ordered.text()}`);
  const signedIn = await fetch(`${base}/_app/sign_in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base },
    body: new URLSearchParams({ key, next: '/orders' }),
  });
  const cookie = signedIn.headers.getSetCookie().map((line) => line.split(';')[0]).find((pair) => pair.startsWith('petstore_session='));
  if (!cookie) throw new Error(`signing in: ${signedIn.status}, no cookie`);
  return cookie;
}

function chromeVersion() {
  return execFileSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim();
}
