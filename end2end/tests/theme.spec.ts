import { expect, test, failOnPageErrors, hydrated } from './helpers';

// The header's theme switch: light or dark whatever the system's setting, kept for the
// next pages, and applied before the page is drawn.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

const background = (page: import('@playwright/test').Page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor);

test('the switch picks the theme whatever the system says, and the next pages keep it', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto('/');
  await hydrated(page);
  const light = await background(page);
  const toggle = page.getByRole('button', { name: 'Dark theme' });
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  const dark = await background(page);
  expect(dark).not.toBe(light);

  // Another page is dark from the start: the page's first script does it, with no
  // WASM at all (the browser's own here, without failOnPageErrors, as it is blocked).
  const bare = await page.context().newPage();
  await bare.route('**/pkg/*.wasm', (route) => route.abort());
  await bare.emulateMedia({ colorScheme: 'light' });
  await bare.goto('/categories');
  await expect(bare.locator('html')).toHaveAttribute('data-theme', 'dark');
  expect(await background(bare)).toBe(dark);
  await bare.close();

  // The system turning dark changes nothing chosen; choosing light holds against it.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto('/docs');
  await hydrated(page);
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  expect(await background(page)).toBe(light);
  await page.reload();
  await hydrated(page);
  expect(await background(page)).toBe(light);
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
});

test('on a phone the switch is in the menu; without scripting there is none', async ({ page, browser }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await hydrated(page);
  const toggle = page.getByRole('button', { name: 'Dark theme' });
  await expect(toggle).toBeHidden();
  await page.getByRole('button', { name: 'Menu' }).click();
  await expect(toggle).toBeVisible();

  // Without scripting the system's theme is the page's, and no dead button is shown.
  const context = await browser.newContext({ javaScriptEnabled: false, colorScheme: 'dark' });
  const plain = await context.newPage();
  await plain.goto('/');
  await expect(plain.getByRole('button', { name: 'Dark theme' })).toHaveCount(0);
  expect(await background(plain)).toBe('rgb(14, 20, 19)');
  await context.close();
});
