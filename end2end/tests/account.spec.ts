import { expect, test, cliKey, failOnPageErrors, hydrated } from './helpers';

// Keys, sessions and the staff page, in the browser.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

const adminKey = () => cliKey('admin', 'e2e staff');

test('sign up shows a Free key once, signs in, and the key works on the API', async ({ page, context }) => {
  await page.goto('/sign-up');
  await hydrated(page);
  await page.getByRole('button', { name: 'Create my key' }).click();
  const key = (await page.locator('#new-key').textContent())!.trim();
  expect(key).toMatch(/^psk_[0-9a-f]{10}_/);
  await page.getByRole('button', { name: 'Copy' }).click();
  await expect(page.getByRole('button', { name: 'Copied' })).toBeVisible();
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');

  // The session cookie is HttpOnly and SameSite=Lax; the key is nowhere in storage.
  const cookie = (await context.cookies()).find((c) => c.name === 'petstore_session')!;
  expect(cookie.httpOnly).toBe(true);
  expect(cookie.sameSite).toBe('Lax');
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  expect(stored).not.toContain(key);

  const api = await page.request.get('/api/v1/pets?limit=1', { headers: { 'X-API-Key': key } });
  expect(api.status()).toBe(200);
  expect(api.headers()['x-ratelimit-remaining']).toBe('59');

  // Customers see no staff link and are refused the staff page by the server.
  await expect(page.getByRole('link', { name: 'Staff' })).toHaveCount(0);
  const refused = await page.goto('/admin');
  expect(refused?.status()).toBe(403);
  await expect(page.getByRole('heading', { name: 'Staff only' })).toBeVisible();

  await hydrated(page);
  await page.getByRole('button', { name: 'Sign out' }).click();
  // The nav's link (the refusal page in <main> may still offer one while it goes).
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toBeVisible();
  const anonymous = await page.goto('/admin');
  expect(anonymous?.status()).toBe(401);
});

test('staff sign in with a key and see every key with its usage', async ({ page }) => {
  const key = adminKey();
  await page.goto('/sign-in');
  await hydrated(page);
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toHaveAttribute('aria-current', 'page');
  await page.getByLabel('API key').fill('psk_0000000000_wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('That key is not recognised');

  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('.who')).toHaveText('Signed in · Admin');
  await page.getByRole('link', { name: 'Staff' }).click();
  await expect(page).toHaveURL(/\/admin$/);
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  // The header marks the page it links to.
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Staff' })).toHaveAttribute('aria-current', 'page');
  await expect(nav.getByRole('link', { name: 'Orders' })).not.toHaveAttribute('aria-current', 'page');
  await page.getByRole('navigation', { name: 'Staff console' }).getByRole('link', { name: 'Keys' }).click();
  await expect(page.locator('table.keys')).toContainText('e2e staff');
});

test('signing in works without JavaScript', async ({ browser }) => {
  const key = adminKey();
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  // Signing up works too: the answer is the sign-up page itself, drawn with the key
  // (never carried in a cookie), and the browser is signed in with it.
  await page.goto('/sign-up');
  await page.getByRole('button', { name: 'Create my key' }).click();
  await expect(page.locator('#new-key')).toContainText('psk_');
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
  const shown = (await page.locator('#new-key').textContent())!.trim();
  const cookies = await context.cookies();
  for (const cookie of cookies) {
    expect(Buffer.from(cookie.value, 'base64url').toString() + cookie.value).not.toContain(shown.slice(0, 12));
  }
  await page.goto('/sign-in');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('.who')).toHaveText('Signed in · Admin');
  const staff = await page.goto('/admin');
  expect(staff?.status()).toBe(200);
  await context.close();
});
