import { Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, test, cliKey, drawEverything, failOnPageErrors, hydrated, signIn } from './helpers';

// Accessibility (axe: no serious or critical violations, colour contrast included), in
// the light theme and the dark one (the system's setting), keyboard reach, and a
// screenshot of every page at desktop and phone widths in both themes for reviewers,
// in target/screenshots/ (<page>-<desktop|phone>-<light|dark>.png).

const SHOTS = path.resolve(__dirname, '../../target/screenshots');
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const THEMES = ['light', 'dark'] as const;

const SHOPPER_PAGES: Record<string, string> = {
  catalog: '/',
  pet: '/pets/1',
  categories: '/categories',
  'sign-in': '/sign-in',
  'sign-up': '/sign-up',
  orders: '/orders',
  account: '/account',
  help: '/help',
};
const STAFF_PAGES: Record<string, string> = {
  'console-dashboard': '/admin',
  'console-pets': '/admin/pets',
  'console-pet-editor': '/admin/pets/1',
  'console-categories': '/admin/categories',
  'console-inventory': '/admin/inventory',
  'console-orders': '/admin/orders',
  'console-keys': '/admin/keys',
};

// A failing test's trace keeps its actions and network, but not a DOM snapshot per action:
// on the docs page (7,000 elements) each snapshot costs ~80 ms, and the keyboard walk
// alone is 450 actions.
test.use({ trace: { mode: 'retain-on-failure', snapshots: false } });

test.beforeAll(() => fs.mkdirSync(SHOTS, { recursive: true }));
test.beforeEach(async ({ page }) => failOnPageErrors(page));

async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Tabs through the page and returns the visible controls focus never reached. */
async function unreachableByKeyboard(page: Page): Promise<string[]> {
  const total = await page.evaluate(() => {
    const controls = [
      ...document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary'),
    ].filter((el) => {
      const html = el as HTMLInputElement;
      // Of a radio group only the checked radio is in the tab order (arrows move within).
      const otherRadio = html.type === 'radio' && !html.checked;
      // Inside a closed <details> a control is laid out but not shown (nor focusable).
      const shown = html.checkVisibility ? html.checkVisibility() : html.offsetParent !== null;
      return !html.disabled && !otherRadio && shown && html.tabIndex >= 0;
    });
    controls.forEach((el, i) => el.setAttribute('data-kb', `${i}: ${el.outerHTML.slice(0, 80)}`));
    return controls.length;
  });
  // Where focus is once each Tab is done is recorded in the page, so that a Tab costs
  // one round trip to the browser, not two: the docs page has hundreds of controls.
  await page.evaluate(() => {
    const seen = new Set<string>();
    (window as unknown as { kbSeen: Set<string> }).kbSeen = seen;
    const record = (e: KeyboardEvent) => {
      const mark = e.key === 'Tab' ? document.activeElement?.getAttribute('data-kb') : null;
      if (mark) seen.add(mark);
    };
    document.addEventListener('keyup', record, true);
  });
  await page.locator('body').focus();
  const reachedCount = () => page.evaluate(() => (window as unknown as { kbSeen: Set<string> }).kbSeen.size);
  for (let i = 0; i < total + 15; i++) {
    await page.keyboard.press('Tab');
    if (i % 25 === 24 && (await reachedCount()) >= total) break;
  }
  return page.evaluate(() => {
    const seen = (window as unknown as { kbSeen: Set<string> }).kbSeen;
    return [...document.querySelectorAll('[data-kb]')].map((el) => el.getAttribute('data-kb')!).filter((m) => !seen.has(m));
  });
}

async function check(page: Page, name: string, url: string) {
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    for (const [width, viewport] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(viewport);
      const response = await page.goto(url);
      expect(response?.status(), `${url} answers 200`).toBe(200);
      await hydrated(page);
      // Every lazy picture in, so that what is checked and shot is what people see.
      await page.evaluate(() => document.querySelectorAll('img[loading="lazy"]').forEach((img) => img.setAttribute('loading', 'eager')));
      // And every card of the docs, which are drawn only near the screen.
      await drawEverything(page);
      await page.waitForLoadState('networkidle');
      expect(await seriousViolations(page), `${name} at ${width} width, ${theme}`).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${theme}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await unreachableByKeyboard(page), `${name}: every control reachable with Tab`).toEqual([]);
}

test('shopper pages: no serious violations, all reachable by keyboard', async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, cliKey('customer', 'e2e a11y shopper'));
  for (const [name, url] of Object.entries(SHOPPER_PAGES)) await check(page, name, url);
});

// The docs page alone: it is the largest page by far (every operation with its try-it
// panel), and axe and a full-page shot of it take seconds each.
test('the docs: no serious violations, all reachable by keyboard, a try-it panel answered', async ({ page }) => {
  test.setTimeout(300_000);
  await signIn(page, cliKey('customer', 'e2e a11y docs reader'));
  await check(page, 'docs', '/docs');

  await page.setViewportSize(VIEWPORTS.desktop);
  await page.goto('/docs');
  await hydrated(page);
  const panel = page.locator('article#op-listPets .try-it');
  await panel.getByText('Try it').click();
  await panel.getByRole('button', { name: 'Send' }).click();
  await expect(panel.locator('.status-code')).toHaveText('200');
  await drawEverything(page);
  expect(await seriousViolations(page), 'docs with an answer').toEqual([]);
  await panel.screenshot({ path: path.join(SHOTS, 'docs-try-it-desktop.png') });
});

test('staff console pages: no serious violations, all reachable by keyboard', async ({ page }) => {
  test.setTimeout(360_000);
  const admin = cliKey('admin', 'e2e a11y staff');
  await signIn(page, admin);
  // A webhook endpoint with an attempt in its log (refused: nothing listens on port 9).
  const headers = { 'X-API-Key': admin };
  const data = { url: 'http://127.0.0.1:9/hook', events: ['*'], description: 'Accessibility check' };
  const hook = await (await page.request.post('/api/v1/webhooks', { headers, data })).json();
  expect((await page.request.post(`/api/v1/webhooks/${hook.id}/test`, { headers })).status()).toBe(202);
  const pages = { ...STAFF_PAGES, 'console-webhooks': '/admin/webhooks', 'console-webhook': `/admin/webhooks/${hook.id}` };
  for (const [name, url] of Object.entries(pages)) await check(page, name, url);
});
