import { Page } from '@playwright/test';
import { expect, test, cliKey, failOnPageErrors, hydrated, signIn, unique } from './helpers';

// The staff console: what staff do in it, and that nobody else gets in.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

async function staffPage(page: Page, path: string) {
  await page.goto(path);
  await hydrated(page);
}

test('staff create a category and a pet, set its stock, and a shopper sees it', async ({ page, browser }) => {
  await signIn(page, cliKey('admin', 'e2e console'));
  const category = unique('Ferrets');
  const pet = unique('Noodle');

  await staffPage(page, '/admin/categories');
  const newCategory = page.getByRole('region', { name: 'New category' });
  await newCategory.getByLabel('Name').fill(category);
  await newCategory.getByLabel('Description').fill('Playful and curious.');
  await newCategory.getByRole('button', { name: 'Create category' }).click();
  await expect(newCategory.getByRole('status')).toContainText(`Created ${category} (category #`);
  await expect(newCategory.getByLabel('Name')).toHaveValue('');
  await expect(page.getByRole('listitem', { name: `Category ${category}` })).toBeVisible();

  await staffPage(page, '/admin/pets');
  const newPet = page.getByRole('region', { name: 'New pet' });
  // An inline error from the Error object first: no name.
  await newPet.getByLabel('Name').fill('   ');
  await newPet.getByLabel('Category').selectOption({ label: category });
  await newPet.getByRole('button', { name: 'Create pet' }).click();
  await expect(newPet.getByRole('alert')).toContainText('Name must not be empty.');
  await expect(newPet.getByRole('alert').locator('.error-code')).toHaveText('validation_failed');
  await expect(newPet.getByLabel('Name')).toHaveAttribute('aria-invalid', 'true');

  await newPet.getByLabel('Name').fill(pet);
  await newPet.getByRole('button', { name: 'Create pet' }).click();
  await expect(newPet.getByRole('status')).toContainText(`Created ${pet} (pet #`);
  await expect(newPet.getByRole('link', { name: 'Edit it' })).toBeVisible();
  await expect(newPet.getByLabel('Name')).toHaveValue('');

  // A new available pet starts with one unit; make it 7.
  // Fewer than 100 pets: all on the first page.
  await staffPage(page, '/admin/inventory');
  const row = page.locator('tr', { hasText: pet });
  await expect(row).toHaveClass(/low-stock/);
  await row.getByLabel(`Stock of ${pet}`).fill('7');
  await row.getByRole('button', { name: 'Set' }).click();
  await expect(row.getByRole('status')).toHaveText('Saved.');
  await expect(row).not.toHaveClass(/low-stock/);

  const shopper = await (await browser.newContext()).newPage();
  failOnPageErrors(shopper);
  await shopper.goto(`/?q=${encodeURIComponent(pet)}`);
  const card = shopper.locator('.card', { hasText: pet });
  await expect(card).toContainText(category);
  await expect(card).toContainText('7 in stock');
  await expect(card).toContainText('Available');
  await shopper.context().close();

  // The category now has a pet, so it cannot go, and says why.
  await staffPage(page, '/admin/categories');
  const ferrets = page.getByRole('listitem', { name: `Category ${category}` });
  // (Deleting it would be refused: it is not offered.)
  await expect(ferrets).toContainText('1 pet is in it');
  await expect(ferrets.locator('summary')).toHaveCount(0);
});

test('staff edit and delete a pet', async ({ page }) => {
  const key = cliKey('admin', 'e2e editor');
  await signIn(page, key);
  const before = unique('Temporary');
  const after = unique('Goldie');
  await staffPage(page, '/admin/pets');
  const newPet = page.getByRole('region', { name: 'New pet' });
  await newPet.getByLabel('Name').fill(before);
  await newPet.getByLabel('Category').selectOption({ label: 'Fish' });
  await newPet.getByRole('button', { name: 'Create pet' }).click();
  await expect(newPet.getByRole('status')).toContainText(`Created ${before}`);

  await staffPage(page, `/admin/pets?q=${encodeURIComponent(before)}`);
  await page.getByRole('link', { name: before }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Edit ${before}`);
  await hydrated(page);
  await page.getByLabel('Name').fill(after);
  await page.getByLabel('Status').selectOption('pending');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Edit ${after}`);
  await expect(page.getByText('Saved.')).toBeVisible();

  await page.locator('summary', { hasText: `Delete ${after}…` }).click();
  await page.getByRole('button', { name: `Yes, delete ${after}` }).click();
  await expect(page).toHaveURL(/\/admin\/pets$/);
  await expect(page.getByRole('status')).toContainText('was deleted.');
  const gone = await page.request.get(`/api/v1/pets?q=${encodeURIComponent(after)}`, { headers: { 'X-API-Key': key } });
  expect(await gone.json()).toEqual([]);
});

test('staff filter orders by state and pet, and complete one in one click', async ({ page }) => {
  const shopper = cliKey('customer', 'e2e filtered shopper');
  const headers = { 'X-API-Key': shopper };
  const [bubbles] = await (await page.request.get('/api/v1/pets?q=bubbles', { headers })).json();
  const placed = await page.request.post('/api/v1/store/orders', { headers, data: { petId: bubbles.id, quantity: 2 } });
  expect(placed.status()).toBe(201);
  const order = await placed.json();

  await signIn(page, cliKey('admin', 'e2e order filter'));
  await staffPage(page, '/admin/orders');
  await page.getByLabel('State').selectOption('open');
  await page.getByLabel('Pet', { exact: true }).fill('Bubbles');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/state=open&pet=Bubbles/);
  await hydrated(page);
  const rows = page.locator('tbody tr');
  await expect(rows).toHaveCount(1);
  const row = page.locator(`tr[data-order-id="${order.id}"]`);
  await expect(row.locator('.order-status')).toHaveText('Open');
  await row.getByRole('button', { name: 'Complete' }).click();
  // The page is shown again and says so; the order no longer matches "Open".
  await expect(page.getByRole('status')).toHaveText(`Completed order #${order.id}.`);
  await expect(rows).toHaveCount(0);

  await staffPage(page, '/admin/orders?state=completed&pet=Bubbles');
  await expect(page.getByLabel('State')).toHaveValue('completed');
  await expect(page.locator(`tr[data-order-id="${order.id}"] .order-status`)).toHaveText('Completed');
});

test('staff create a key (shown once), see its usage, and revoke it: its next call fails', async ({ page }) => {
  await signIn(page, cliKey('admin', 'e2e keys'));
  await staffPage(page, '/admin/keys');
  const form = page.getByRole('region', { name: 'New key' });
  const name = unique('partner app');
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Plan').selectOption('enterprise');
  await form.getByRole('button', { name: 'Create key' }).click();
  // Enterprise needs its limits: an inline error first.
  await expect(form.getByRole('alert')).toContainText('Per minute must be');
  await form.getByLabel('Per minute (Enterprise)').fill('500');
  await form.getByLabel('Per day (Enterprise)').fill('50000');
  await form.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.locator('#new-key').textContent())!.trim();
  expect(key).toMatch(/^psk_/);

  const before = await page.request.get('/api/v1/pets?limit=1', { headers: { 'X-API-Key': key } });
  expect(before.status()).toBe(200);
  await page.reload();
  await hydrated(page);
  const row = page.locator('tr', { hasText: name });
  await expect(row).toContainText('1 / 50000');

  await row.locator('summary', { hasText: /Revoke key/ }).click();
  await row.getByRole('button', { name: /Yes, revoke key/ }).click();
  await expect(row).toContainText('Revoked');
  const after = await page.request.get('/api/v1/pets?limit=1', { headers: { 'X-API-Key': key } });
  expect(after.status()).toBe(401);
  expect((await after.json()).code).toBe('invalid_api_key');
});

test('the dashboard draws stock, orders and API traffic', async ({ page }) => {
  await signIn(page, cliKey('admin', 'e2e dashboard'));
  const busy = unique('e2e busy key');
  const key = cliKey('customer', busy);
  for (let i = 0; i < 5; i++) {
    expect((await page.request.get('/api/v1/pets?limit=1', { headers: { 'X-API-Key': key } })).status()).toBe(200);
  }
  await staffPage(page, '/admin');
  await expect(page.getByRole('img', { name: /^Pets by status\. available: \d+ pets/ })).toBeVisible();
  await expect(page.getByRole('img', { name: /^Orders placed per hour today/ })).toBeVisible();
  await expect(page.getByRole('img', { name: /^API requests per minute, last hour: \d+ in all/ })).toBeVisible();
  await expect(page.getByText(new RegExp(`${busy} \\(key \\d+\\): [5-9]\\d* requests in the last hour`))).toBeVisible();
  // The test server takes no scheduled backups: the dashboard says so, with where to read how.
  await expect(page.getByText(/Scheduled backups are off \(start the server with --backup-dir/)).toBeVisible();
});

test('console forms work without JavaScript', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto('/sign-in');
  await page.getByLabel('API key').fill(cliKey('admin', 'e2e no js'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('.who')).toHaveText('Signed in · Admin');
  await page.goto('/admin/categories');
  const category = unique('Hamsters');
  const form = page.getByRole('region', { name: 'New category' });
  await form.getByLabel('Name').fill(category);
  await form.getByRole('button', { name: 'Create category' }).click();
  await expect(page).toHaveURL(/\/admin\/categories/);
  await expect(page.getByRole('listitem', { name: `Category ${category}` })).toBeVisible();
  // A new key: the answer is the keys page itself, with the key once; no cookie holds it.
  await page.goto('/admin/keys');
  const keys = page.getByRole('region', { name: 'New key' });
  const name = unique('no-js partner');
  await keys.getByLabel('Name').fill(name);
  await keys.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.locator('#new-key').textContent())!.trim();
  expect(key).toMatch(/^psk_/);
  await expect(page.locator('table.keys')).toContainText(name);
  for (const cookie of await context.cookies()) {
    expect(Buffer.from(cookie.value, 'base64url').toString() + cookie.value).not.toContain(key.slice(0, 12));
  }
  await context.close();
});

test('customers and strangers are refused every console page by the server', async ({ page }) => {
  for (const path of ['/admin', '/admin/pets', '/admin/keys']) {
    const anonymous = await page.goto(path);
    expect(anonymous?.status()).toBe(401);
    await expect(page.getByRole('heading', { name: 'Staff only' })).toBeVisible();
  }
  await signIn(page, cliKey('customer', 'e2e nosy customer'));
  for (const path of ['/admin', '/admin/inventory', '/admin/keys']) {
    const refused = await page.goto(path);
    expect(refused?.status()).toBe(403);
    await expect(page.getByRole('heading', { name: 'Staff only' })).toBeVisible();
    await expect(page.locator('table')).toHaveCount(0);
  }
  // The server functions behind the console refuse the customer's session too.
  const call = await page.request.post('/_app/staff_delete_category', { form: { id: '1' } });
  expect(call.status()).toBe(403);
});
