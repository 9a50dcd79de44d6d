import { expect, test, failOnPageErrors, hydrated } from './helpers';

// The demo catalog as `make run` loads it. Files run in name order on one worker, and
// this one runs before orders.spec.ts changes any stock.
test.beforeEach(async ({ page }) => failOnPageErrors(page));

test('the catalog lists the demo pets with category, status and stock', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveTitle('Catalog · Pet Store');
  const rex = page.locator('.card', { hasText: 'Rex' });
  await expect(rex).toContainText('Dogs');
  await expect(rex).toContainText('Available');
  await expect(rex).toContainText('3 in stock');
  // 13 demo pets, 12 a page: a next page exists and holds the rest.
  await expect(page.locator('.cards .card')).toHaveCount(12);
  await page.getByRole('link', { name: 'Next page →' }).click();
  await expect(page.locator('.cards .card')).toHaveCount(1);
});

test('filters and the search work as a plain form, without JavaScript', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto('/');
  await page.getByLabel('Status').selectOption('sold');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/status=sold/);
  const cards = page.locator('.cards .card');
  await expect(cards).toHaveCount(2);
  await expect(cards.filter({ hasText: 'Luna' })).toHaveCount(1);
  await expect(cards.filter({ hasText: 'Kiwi' })).toHaveCount(1);

  // The search box looks in names, categories and descriptions, whatever the case.
  await page.goto('/');
  await page.getByLabel('Search').fill('FISH');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/q=FISH/);
  await expect(page.locator('.cards .card h2')).toHaveText(['Nemo', 'Bubbles']);
  await expect(page.getByLabel('Search')).toHaveValue('FISH');
  await page.goto('/?q=orange');
  await expect(page.locator('.cards .card h2')).toHaveText(['Whiskers', 'Nemo']);
  await page.goto('/?q=cat');
  await expect(page.locator('.cards .card h2')).toHaveText(['Whiskers', 'Misty', 'Shadow']);
  // Shorter than three characters: a scan, the same rule ("shorthair", "sheet", "Fish").
  await page.goto('/?q=sh');
  await expect(page.locator('.cards .card h2')).toHaveText(['Misty', 'Shadow', 'Tweety', 'Nemo', 'Bubbles', 'Shelly']);
  await context.close();
});

test('once hydrated, choosing a category applies it without pressing Apply', async ({ page }) => {
  await page.goto('/');
  await hydrated(page);
  await page.getByLabel('Category').selectOption({ label: 'Cats' });
  // Only the WASM reacts to a change event; without it nothing would navigate.
  await expect(page).toHaveURL(/category=\d+/);
  await expect(page.locator('.cards .card h2')).toHaveText(['Whiskers', 'Misty', 'Shadow']);
  // A new page (the filter loads it): its pickers react once it is hydrated too.
  await hydrated(page);
  await page.getByLabel('Status').selectOption('pending');
  await expect(page).toHaveURL(/status=pending/);
  await expect(page.locator('.cards .card h2')).toHaveText(['Shadow']);
});

test('a pet page shows the pet and links back to its category', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('link', { name: 'Tweety' }).click();
  await expect(page).toHaveURL(/\/pets\/\d+$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Tweety');
  await expect(page).toHaveTitle('Tweety · Pet Store');
  await expect(page.locator('.facts')).toContainText('Birds');
  await expect(page.locator('.facts .stock')).toHaveText('8');
  await page.locator('.crumbs').getByRole('link', { name: 'Birds' }).click();
  await expect(page.locator('.cards .card h2')).toHaveText(['Tweety', 'Kiwi']);
});

test('an unknown pet is a 404 page', async ({ page }) => {
  const response = await page.goto('/pets/999999');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Pet not found');
});

test('the categories page counts pets and links to them', async ({ page }) => {
  await page.goto('/categories');
  await expect(page).toHaveTitle('Categories · Pet Store');
  const dogs = page.locator('.card', { hasText: 'Dogs' });
  await expect(dogs).toContainText('4 pets');
  await dogs.getByRole('link', { name: 'Dogs' }).click();
  await expect(page.locator('.cards .card h2')).toHaveText(['Rex', 'Bella', 'Max', 'Luna']);
});
