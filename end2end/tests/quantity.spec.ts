import { Browser, Page } from '@playwright/test';
import { WIDTHS, cliKey, expect, failOnPageErrors, hydrated, ordersOf, shoot, signedInPage, test, unique } from './helpers';

// The pet page's quantity, as a shopper types it: the total follows what is typed, and
// every refusal says what is wrong with the quantity, with JavaScript and without.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

/** A new pet at €12.50 with `stock` units, made through the API. */
async function pricedPet(page: Page, admin: string, name: string, stock: number): Promise<number> {
  const headers = { 'X-API-Key': admin };
  const categories = await (await page.request.get('/api/v1/categories?limit=100', { headers })).json();
  const fish = categories.find((c: { name: string }) => c.name === 'Fish');
  const created = await page.request.post('/api/v1/pets', { headers, data: { name, categoryId: fish.id, price: 1250 } });
  expect(created.status()).toBe(201);
  const pet = (await created.json()).id;
  const stocked = await page.request.put(`/api/v1/store/inventory/${pet}`, { headers, data: { quantity: stock } });
  expect(stocked.status()).toBe(200);
  return pet;
}

/** A shopper's page of a fresh context at `size`, signed in, with or without JavaScript. */
async function shopper(browser: Browser, size: { width: number; height: number }, javaScript: boolean) {
  const key = cliKey('customer', 'e2e quantity shopper');
  return { page: await signedInPage(browser, key, size, javaScript), key };
}

/** Sends the order form as typed, past the browser's own check (as a browser without
 *  one, or a hand-made request, would send it). */
async function orderPastTheBrowsersCheck(page: Page, typed: string) {
  await page.getByLabel('Quantity').fill(typed);
  await page.locator('form.order-form').evaluate((form: HTMLFormElement) => (form.noValidate = true));
  await page.getByRole('button', { name: 'Order' }).click();
}

const refusals: [string, string][] = [
  ['2.5', 'Quantity must be a whole number from 1 to 1,000.'],
  ['0', 'Quantity must be at least 1.'],
  ['-3', 'Quantity must be at least 1.'],
  ['', 'Quantity must be filled in: a whole number from 1 to 1,000.'],
  ['1001', 'Quantity must be at most 1,000 in one order.'],
];

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`the total follows the quantity typed, and a refusal names what is wrong (${width})`, async ({ browser }) => {
    const admin = cliKey('admin', 'e2e quantity admin');
    const { page, key } = await shopper(browser, size, true);
    const name = unique('Counted');
    const pet = await pricedPet(page, admin, name, 20);
    await page.goto(`/pets/${pet}`);
    await hydrated(page);
    const total = page.locator('.order-form .total');
    await expect(total).toHaveText('Total €12.50');
    // What a browser's number field lets through is read as the browser reads it.
    for (const [typed, shown] of [['2.0', 'Total €25.00'], ['1e1', 'Total €125.00'], ['3', 'Total €37.50']]) {
      await page.getByLabel('Quantity').fill(typed);
      await expect(total).toHaveText(shown);
    }
    for (const [typed, problem] of refusals) {
      await page.getByLabel('Quantity').fill(typed);
      await expect(total).toHaveText(problem);
    }
    // Each refusal, sent past the browser's check, is the store's, in the same words,
    // and orders nothing.
    for (const [typed, problem] of refusals) {
      await orderPastTheBrowsersCheck(page, typed);
      await expect(page.getByRole('alert')).toHaveText(problem);
    }
    expect(await ordersOf(page, key, pet)).toHaveLength(0);
    await shoot(page, `quantity-refused-${width}`);
    // "2.0" orders two.
    await page.getByLabel('Quantity').fill('2.0');
    await page.getByRole('button', { name: 'Order' }).click();
    await expect(page.getByRole('status')).toContainText(`Ordered 2 × ${name}`);
    expect((await ordersOf(page, key, pet)).map((order) => order.quantity)).toEqual([2]);
    await page.context().close();
  });

  test(`without JavaScript, a refused order keeps the quantity and says why in words (${width})`, async ({ browser }) => {
    const admin = cliKey('admin', 'e2e quantity admin');
    const { page, key } = await shopper(browser, size, false);
    const name = unique('Scarce');
    const pet = await pricedPet(page, admin, name, 1);
    await page.goto(`/pets/${pet}`);
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Order' }).click();
    await expect(page).toHaveURL(new RegExp(`/pets/${pet}$`));
    await expect(page.getByRole('alert')).toHaveText('Only 1 in stock, 2 ordered.');
    await expect(page.getByText('insufficient_stock')).toHaveCount(0);
    await expect(page.getByLabel('Quantity')).toHaveValue('2');
    await expect(page.locator('.order-form .total')).toHaveText('Total €25.00');
    await shoot(page, `quantity-no-js-refused-${width}`);
    for (const [typed, problem] of refusals) {
      await orderPastTheBrowsersCheck(page, typed);
      await expect(page.getByRole('alert')).toHaveText(problem);
      await expect(page.getByLabel('Quantity')).toHaveValue(typed);
    }
    expect(await ordersOf(page, key, pet)).toHaveLength(0);
    // What the browser lets through orders as many as it says.
    await page.getByLabel('Quantity').fill('1.0');
    await page.getByRole('button', { name: 'Order' }).click();
    await expect(page.getByRole('status')).toContainText(`Ordered 1 × ${name}`);
    expect((await ordersOf(page, key, pet)).map((order) => order.quantity)).toEqual([1]);
    await page.context().close();
  });
}
