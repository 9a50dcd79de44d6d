import { Page } from '@playwright/test';
import { WIDTHS, cliKey, expect, failOnPageErrors, hydrated, shoot, signIn, test } from './helpers';

// Pages hold still while they load and hydrate, on a phone's network and CPU: the
// server draws each page as it will look once its scripts run (the header's menu
// folded on a phone), so nothing moves under a reader's thumb.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

/** Slows the page's network and CPU as Lighthouse's mobile run does (a slow 4G
 *  connection, a CPU four times slower), through the DevTools protocol: on loopback
 *  and a fast CPU the WASM runs before the first frame and no shift would show. */
async function asAPhone(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 150,
    downloadThroughput: (1.6 * 1024 * 1024) / 8,
    uploadThroughput: (750 * 1024) / 8,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
}

/** Sums the page's layout shifts from the first frame (as CLS counts them: not those
 *  right after the reader's own input). */
async function countShifts(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __shift: number };
    w.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as { value: number; hadRecentInput: boolean }[]) {
        if (!entry.hadRecentInput) w.__shift += entry.value;
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
}

const pages = ['/', '/pets/1', '/docs', '/orders', '/categories'];

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`pages do not move while they load and hydrate (${width})`, async ({ browser }) => {
    test.setTimeout(120_000);
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    await signIn(page, cliKey('customer', 'e2e steady shopper'));
    await countShifts(page);
    await asAPhone(page);
    for (const path of pages) {
      await page.goto(path);
      // The WASM takes seconds on such a network (the first page fetches it).
      await expect(page.locator('body'), `${path} hydrates`).toHaveAttribute('data-hydrated', 'true', { timeout: 60_000 });
      // A moment after hydration, for anything the islands draw late.
      await page.waitForTimeout(500);
      const shift = await page.evaluate(() => (window as unknown as { __shift: number }).__shift);
      expect(shift, `layout shift on ${path}`).toBeLessThan(0.05);
    }
    await context.close();
  });
}

test('on a phone the header is one row, folded, whoever is signed in, down to 360 px', async ({ browser }) => {
  const context = await browser.newContext({ viewport: WIDTHS.phone });
  const page = await context.newPage();
  failOnPageErrors(page);
  /** The header's brand, account chip (or "Sign in") and Menu button share one row. */
  async function oneRow(account: string) {
    const middle = async (selector: string) => {
      const box = await page.locator(selector).first().boundingBox();
      expect(box, `${selector} is shown`).not.toBeNull();
      return box!.y + box!.height / 2;
    };
    const brand = await middle('.nav .brand');
    expect(Math.abs((await middle(account)) - brand)).toBeLessThan(8);
    expect(Math.abs((await middle('.menu-toggle')) - brand)).toBeLessThan(8);
    await expect(page.locator('.menu-links')).toBeHidden();
  }
  await page.goto('/');
  await hydrated(page);
  await oneRow('.account .sign-in');
  // On the catalog, "Catalog" is marked as the page, not the brand beside it too.
  const underline = (name: string) => page.getByRole('link', { name, exact: true }).first()
    .evaluate((link) => getComputedStyle(link).textDecorationLine);
  expect(await underline('Pet Store')).toBe('none');
  // "Customer" is the longest role.
  for (const role of ['customer', 'admin'] as const) {
    await signIn(page, cliKey(role, `e2e steady ${role}`));
    await page.goto('/');
    await hydrated(page);
    await oneRow('.account .who');
    await shoot(page, `header-${role}-phone`);
  }
  // A narrower phone too (the button is then its icon, still named "Menu").
  await page.setViewportSize({ width: 360, height: 740 });
  await oneRow('.account .who');
  await page.setViewportSize(WIDTHS.phone);
  // The menu opens and folds again.
  await page.getByRole('button', { name: 'Menu' }).click();
  await expect(page.getByRole('link', { name: 'Categories' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Staff' })).toBeVisible();
  await page.getByRole('button', { name: 'Menu' }).click();
  await expect(page.getByRole('link', { name: 'Categories' })).toBeHidden();
  await context.close();
});

test('without scripting a phone lists the header links and no menu button', async ({ browser }) => {
  const context = await browser.newContext({ viewport: WIDTHS.phone, javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto('/');
  await expect(page.getByRole('link', { name: 'Categories' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Sign in' })).toBeVisible();
  await expect(page.locator('.menu-toggle')).toBeHidden();
  await context.close();
});
