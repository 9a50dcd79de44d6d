import { Page } from '@playwright/test';
import { expect, test, cliKey, failOnPageErrors, hydrated, liveStreams, signIn } from './helpers';

// Ordering in the browser: the state table as a shopper and the staff see it.
// Runs after catalog.spec.ts (name order, one worker): it changes the demo stock.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

async function petPage(page: Page, name: string) {
  await page.goto('/');
  await page.getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);
  await hydrated(page);
}

// Tagged @postgres: also the smoke test against PostgreSQL (make test-e2e).
test('a shopper orders the last unit (pending), staff complete it (sold)', { tag: '@postgres' }, async ({ browser }) => {
  const shopper = await (await browser.newContext()).newPage();
  failOnPageErrors(shopper);
  await signIn(shopper, cliKey('customer', 'e2e shopper'));
  // Spike (Reptiles) has exactly one unit in the demo catalog.
  await petPage(shopper, 'Spike');
  await expect(shopper.locator('.facts .stock')).toHaveText('1');
  await shopper.getByLabel('Quantity').fill('1');
  await shopper.getByRole('button', { name: 'Order' }).click();
  await expect(shopper.getByRole('status')).toContainText('Ordered 1');
  await expect(shopper.locator('.facts .stock')).toHaveText('0');
  await expect(shopper.locator('.facts .badge')).toHaveText('Pending');
  await expect(shopper.getByText('Not available to order right now.')).toBeVisible();

  // The catalog follows at once.
  await shopper.goto('/?q=spike');
  await expect(shopper.locator('.card', { hasText: 'Spike' })).toContainText('Pending');
  await expect(shopper.locator('.card', { hasText: 'Spike' })).toContainText('0 in stock');

  const staff = await (await browser.newContext()).newPage();
  failOnPageErrors(staff);
  await signIn(staff, cliKey('admin', 'e2e staff orders'));
  await staff.goto('/orders');
  await hydrated(staff);
  await expect(staff.getByRole('heading', { level: 1 })).toHaveText('All orders');
  const row = staff.locator('tr', { hasText: 'Spike' });
  await row.getByRole('button', { name: 'Complete' }).click();
  await expect(row.locator('.order-status')).toHaveText('Completed');

  await petPage(shopper, 'Spike');
  await expect(shopper.locator('.facts .badge')).toHaveText('Sold');
  await shopper.goto('/orders');
  await expect(shopper.locator('tr', { hasText: 'Spike' }).locator('.order-status')).toHaveText('Completed');
});

test('stock that ran out is a clear error; cancelled orders give their stock back', async ({ page }) => {
  const key = cliKey('customer', 'e2e canceller');
  await signIn(page, key);
  // Misty (Cats) has 5 units. The order through the API below must come after the
  // page's streams have started (`liveStreams`).
  const streaming = liveStreams(page, 1, /^\/pets\/\d+$/);
  await petPage(page, 'Misty');
  await streaming;
  await page.getByLabel('Quantity').fill('2');
  await page.getByRole('button', { name: 'Order' }).click();
  await expect(page.locator('.facts .stock')).toHaveText('3');

  // Someone else (here: the same key through the API) takes 2 more while the page is open.
  const petId = page.url().split('/').pop();
  const api = await page.request.post('/api/v1/store/orders', {
    headers: { 'X-API-Key': key },
    data: { petId: Number(petId), quantity: 2 },
  });
  expect(api.status()).toBe(201);
  const { total } = await api.json();
  expect(total).toBeGreaterThan(0);
  // The list shows each order's total as fixed when it was placed (two of Misty each).
  const amount = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2 }).format(total / 100);
  // The page shows it (live stock); ordering 2 of the 1 left is refused in words.
  await expect(page.locator('.facts .stock')).toHaveText('1');
  await page.getByLabel('Quantity').fill('2');
  await page.getByRole('button', { name: 'Order' }).click();
  await expect(page.getByRole('alert')).toContainText('Only 1 in stock, 2 ordered.');
  await expect(page.locator('.facts .stock')).toHaveText('1');

  await page.goto('/orders');
  await hydrated(page);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('My orders');
  const rows = page.locator('tr', { hasText: 'Misty' });
  const open = rows.filter({ has: page.locator('.badge-open') });
  await expect(rows).toHaveCount(2);
  await expect(open).toHaveCount(2);
  await expect(rows.locator('td[data-label="Total"]')).toHaveText([new RegExp(`\\b${amount}$`), new RegExp(`\\b${amount}$`)]);
  for (const left of [1, 0]) {
    const row = open.first();
    await row.locator('summary', { hasText: 'Cancel…' }).click();
    await row.getByRole('button', { name: /^Yes, cancel order #\d+$/ }).click();
    await expect(open).toHaveCount(left);
  }
  // Cancelled orders stay listed, marked so.
  await expect(rows.filter({ has: page.locator('.badge-cancelled') })).toHaveCount(2);

  await petPage(page, 'Misty');
  await expect(page.locator('.facts .stock')).toHaveText('5');
  await expect(page.locator('.facts .badge')).toHaveText('Available');
});
