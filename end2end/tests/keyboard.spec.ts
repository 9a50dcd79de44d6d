import { WIDTHS, cliKey, expect, failOnPageErrors, hydrated, openMenu, ordersOf, signIn, stockedPet, test, unique } from './helpers';

// Keyboard use: the focus stays somewhere useful after an action, and a question can be
// put away with Escape or a "keep" button.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`by keyboard: order, then put a cancel question away (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    const key = cliKey('customer', 'e2e keyboard shopper');
    const name = unique('Keys');
    const pet = await stockedPet(page, cliKey('admin', 'e2e keyboard admin'), name, 5);
    await signIn(page, key);
    await page.goto(`/pets/${pet}`);
    await hydrated(page);
    await page.getByLabel('Quantity').focus();
    await page.keyboard.press('Tab');
    await expect(page.getByRole('button', { name: 'Order' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('status')).toContainText(`Ordered 1 × ${name}`);
    // The answer holds the focus, not the page's body.
    await expect(page.locator('.order-outcome')).toBeFocused();

    await page.goto(`/orders?pet=${encodeURIComponent(name)}`);
    await hydrated(page);
    const summary = page.locator('tbody tr').first().locator('summary', { hasText: 'Cancel…' });
    const question = page.getByText(/^Cancel order #\d+/);
    await summary.focus();
    await page.keyboard.press('Enter');
    await expect(question).toBeVisible();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape');
    await expect(question).toBeHidden();
    await expect(summary).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(question).toBeVisible();
    await page.getByRole('button', { name: 'No, keep it' }).click();
    await expect(question).toBeHidden();
    await expect(summary).toBeFocused();
    const orders = await ordersOf(page, key, pet);
    expect(orders).toHaveLength(1);
    await expect(page.locator('tbody tr').first().locator('.order-status')).not.toHaveText('Cancelled');
    await context.close();
  });
}

for (const [width, size] of Object.entries(WIDTHS)) {
  for (const javaScript of [true, false]) {
    const how = javaScript ? 'with JavaScript' : 'without JavaScript';
    test(`the answer holds the focus after signing in, cancelling and signing out, ${how} (${width})`, async ({ browser }) => {
      const context = await browser.newContext({ viewport: size, javaScriptEnabled: javaScript });
      const page = await context.newPage();
      failOnPageErrors(page);
      const key = cliKey('customer', 'e2e focus shopper');
      const name = unique('Focus');
      const pet = await stockedPet(page, cliKey('admin', 'e2e focus admin'), name, 5);
      const ordered = await page.request.post('/api/v1/store/orders', { headers: { 'X-API-Key': key }, data: { petId: pet, quantity: 1 } });
      expect(ordered.status()).toBe(201);
      const order = (await ordered.json()).id;

      // Signing in by keyboard lands on the page it came from, on "You are signed in".
      await page.goto(`/sign-in?next=${encodeURIComponent(`/pets/${pet}`)}`);
      if (javaScript) await hydrated(page);
      await page.getByLabel('API key').fill(key);
      await page.keyboard.press('Enter');
      await expect(page).toHaveURL(new RegExp(`/pets/${pet}$`));
      await expect(page.getByRole('status').filter({ hasText: 'You are signed in.' })).toBeFocused();

      // Cancelling by keyboard: the page is shown again with its answer focused.
      await page.goto(`/orders?pet=${encodeURIComponent(name)}`);
      if (javaScript) await hydrated(page);
      const row = page.locator(`tr[data-order-id="${order}"]`);
      await row.locator('summary', { hasText: 'Cancel…' }).focus();
      await page.keyboard.press('Enter');
      await row.getByRole('button', { name: `Yes, cancel order #${order}` }).focus();
      await page.keyboard.press('Enter');
      await expect(page.locator(`tr[data-order-id="${order}"] .order-status`)).toHaveText('Cancelled');
      await expect(page.getByRole('status').filter({ hasText: `Cancelled order #${order}` })).toBeFocused();

      // Signing out: the sign-in page says so, and that is where the focus is.
      if (javaScript && width === 'phone') await openMenu(page);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect(page).toHaveURL(/\/sign-in\?signed_out=1/);
      await expect(page.getByRole('status').filter({ hasText: 'You are signed out' })).toBeFocused();
      await context.close();
    });
  }

  test(`staff see "Saved." where they saved, not at the top of the page (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    await signIn(page, cliKey('admin', 'e2e focus staff'));
    await page.goto('/admin/inventory');
    await hydrated(page);
    // The page's last row: below the first screen on either width.
    const row = page.locator('tbody tr').last();
    const pet = await row.getAttribute('data-pet-id');
    await row.getByLabel(/^Stock of/).fill('9');
    await row.getByRole('button', { name: 'Set' }).click();
    const saved = page.locator(`tr[data-pet-id="${pet}"]`).getByRole('status');
    await expect(saved).toHaveText('Saved.');
    await expect(saved).toBeFocused();
    await expect(saved).toBeInViewport();
    await expect(page.locator(`tr[data-pet-id="${pet}"]`).getByLabel(/^Stock of/)).toHaveValue('9');
    await context.close();
  });
}
