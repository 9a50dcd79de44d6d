import { WIDTHS, cliKey, expect, failOnPageErrors, hydrated, ordersOf, signIn, stockedPet, test, unique } from './helpers';

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
