import { Page } from '@playwright/test';
import { WIDTHS, cliKey, colourAndVariable, expect, failOnPageErrors, hydrated, shoot, signIn, stockedPet, test } from './helpers';

// The console's and the order list's layout, as drawn: tables whose rows line up, and
// no page wider than a phone's screen.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

/** Staff's data for the pages below: an order (open, so it has actions) and a webhook
 *  endpoint. Returns the new pet's id. */
async function someOfEverything(page: Page, admin: string, shopper: string): Promise<number> {
  const pet = await stockedPet(page, admin, 'Layout fish', 5);
  const ordered = await page.request.post('/api/v1/store/orders', {
    headers: { 'X-API-Key': shopper },
    data: { petId: pet, quantity: 1 },
  });
  expect(ordered.status()).toBe(201);
  const data = { url: 'http://127.0.0.1:9/layout', events: ['*'], description: 'Layout check' };
  const hook = await page.request.post('/api/v1/webhooks', { headers: { 'X-API-Key': admin }, data });
  expect(hook.status()).toBe(201);
  return pet;
}

/** Each body row's cells share their top and bottom (as a table's rows must: a cell
 *  drawn as a box of its own ends out of line with its neighbours). */
async function rowsLineUp(page: Page, path: string) {
  await page.goto(path);
  await hydrated(page);
  const rows = page.locator('table tbody tr');
  expect(await rows.count(), `${path} has rows`).toBeGreaterThan(0);
  const misaligned = await rows.evaluateAll((trs) =>
    trs.flatMap((tr, n) => {
      const cells = [...tr.children].map((cell) => cell.getBoundingClientRect());
      const [first] = cells;
      return cells.some((cell) => Math.abs(cell.top - first.top) > 1 || Math.abs(cell.bottom - first.bottom) > 1)
        ? [`row ${n}: ${cells.map((cell) => `${cell.top.toFixed(1)}–${cell.bottom.toFixed(1)}`).join(', ')}`]
        : [];
    }),
  );
  expect(misaligned, `${path}: cells out of line`).toEqual([]);
}

test('table rows line up, actions column included (desktop)', async ({ browser }) => {
  const context = await browser.newContext({ viewport: WIDTHS.desktop });
  const page = await context.newPage();
  failOnPageErrors(page);
  const admin = cliKey('admin', 'e2e layout admin');
  const shopper = cliKey('customer', 'e2e layout shopper');
  await someOfEverything(page, admin, shopper);
  await signIn(page, shopper);
  await rowsLineUp(page, '/orders');
  await signIn(page, admin);
  for (const path of ['/admin/orders', '/admin/keys', '/admin/webhooks', '/admin/inventory', '/admin/pets']) {
    await rowsLineUp(page, path);
  }
  await context.close();
});

test('no console page is wider than a 390 px phone', async ({ browser }) => {
  test.setTimeout(90_000);
  const context = await browser.newContext({ viewport: WIDTHS.phone });
  const page = await context.newPage();
  failOnPageErrors(page);
  const admin = cliKey('admin', 'e2e layout admin');
  const pet = await someOfEverything(page, admin, cliKey('customer', 'e2e layout shopper'));
  await signIn(page, admin);
  const pages = ['/admin', '/admin/pets', `/admin/pets/${pet}`, '/admin/pets/new', '/admin/categories',
    '/admin/inventory', '/admin/orders', '/admin/keys', '/admin/webhooks', '/orders'];
  for (const path of pages) {
    await page.goto(path);
    await hydrated(page);
    const wide = await page.evaluate(() => {
      const screen = document.documentElement.clientWidth;
      return [...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > screen + 0.5)
        // Taken out of the flow on purpose (a table's header kept for screen readers).
        .filter((element) => {
          for (let at: Element | null = element; at; at = at.parentElement) {
            if (['absolute', 'fixed'].includes(getComputedStyle(at).position)) return false;
          }
          return true;
        })
        .slice(0, 5)
        .map((element) => `${element.tagName.toLowerCase()}.${element.className} right ${element.getBoundingClientRect().right.toFixed(0)}`);
    });
    expect(wide, `${path}: elements wider than the screen`).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${path} scrolls sideways`).toBeLessThanOrEqual(390);
  }
  await shoot(page, 'layout-orders-phone');
  await context.close();
});

/** The gap in px between two elements' boxes, `a` above or left of `b`. */
async function gap(page: Page, a: string, b: string, axis: 'x' | 'y'): Promise<number> {
  const [first, second] = [await page.locator(a).first().boundingBox(), await page.locator(b).first().boundingBox()];
  expect(first && second, `${a} and ${b} are shown`).toBeTruthy();
  return axis === 'y' ? second!.y - (first!.y + first!.height) : second!.x - (first!.x + first!.width);
}

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`cards, panels and forms keep their room (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    const admin = cliKey('admin', 'e2e layout admin');
    const pet = await stockedPet(page, admin, 'Roomy fish', 5);
    await signIn(page, admin);
    // The categories' cards have padding.
    await page.goto('/categories');
    const card = await page.locator('.cards.categories .card').first().boundingBox();
    const title = await page.locator('.cards.categories .card h2').first().boundingBox();
    expect(title!.x - card!.x, 'room left of a category card\'s name').toBeGreaterThanOrEqual(8);
    expect(title!.y - card!.y, 'room above a category card\'s name').toBeGreaterThanOrEqual(8);
    // The pet editor's panels do not touch; it offers one file picker; its Delete
    // starts out looking dangerous.
    await page.goto(`/admin/pets/${pet}`);
    await hydrated(page);
    const panels = page.locator('.panel');
    expect(await panels.count()).toBe(3);
    for (const n of [0, 1]) {
      const [upper, lower] = [await panels.nth(n).boundingBox(), await panels.nth(n + 1).boundingBox()];
      expect(lower!.y - (upper!.y + upper!.height), `room below panel ${n}`).toBeGreaterThanOrEqual(8);
    }
    // The file input is kept for keyboards and screen readers, drawn as nothing.
    const input = await page.locator('input[type="file"]').boundingBox();
    expect(input!.width * input!.height, 'the file input is not drawn as a second picker').toBeLessThanOrEqual(1);
    await expect(page.getByText('choose a file')).toBeVisible();
    const [deleteColour, danger] = await colourAndVariable(page.locator('.panel.danger summary'), '--error-text');
    expect(deleteColour, 'the Delete button is drawn in the error colour').toBe(danger);
    // Inventory: the stock field and its button stand apart; a held-back pending pet
    // is not "Low", one that ran out is "Out".
    const headers = { 'X-API-Key': admin };
    const { categoryId } = await (await page.request.get(`/api/v1/pets/${pet}`, { headers })).json();
    const held = await page.request.put(`/api/v1/pets/${pet}`, { headers, data: { name: 'Roomy fish', categoryId, status: 'pending' } });
    expect(held.status()).toBe(200);
    await page.goto('/admin/inventory');
    await hydrated(page);
    const row = page.locator(`tr[data-pet-id="${pet}"]`);
    expect(await gap(page, `tr[data-pet-id="${pet}"] .stock-form input[type="number"]`, `tr[data-pet-id="${pet}"] .stock-form button`, 'x')).toBeGreaterThanOrEqual(4);
    await expect(row.locator('.badge-low')).toHaveCount(0);
    // Back on sale with one unit, which a shopper orders: it ran out.
    await row.getByLabel(/^Stock of/).fill('1');
    await row.getByRole('button', { name: 'Set' }).click();
    await expect(row.getByRole('status')).toHaveText('Saved.');
    // The form's own navigation back to the page may still be under way once the status
    // shows; a reload then would collide with it.
    await page.waitForLoadState('networkidle');
    const shopper = { 'X-API-Key': cliKey('customer', 'e2e layout shopper') };
    const ordered = await page.request.post('/api/v1/store/orders', { headers: shopper, data: { petId: pet, quantity: 1 } });
    expect(ordered.status()).toBe(201);
    await page.reload();
    await expect(page.locator(`tr[data-pet-id="${pet}"]`)).toContainText('Pending');
    await expect(page.locator(`tr[data-pet-id="${pet}"] .badge-low`)).toHaveText('Out');
    await shoot(page, `layout-inventory-${width}`);
    await context.close();
  });
}
