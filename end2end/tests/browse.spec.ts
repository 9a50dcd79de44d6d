import { Page } from '@playwright/test';
import { WIDTHS, cliKey, expect, failOnPageErrors, hydrated, openMenu, shoot, signIn, test } from './helpers';

// Shopping the demo catalog as a new shopper would: photos, prices and descriptions,
// the sort, the pet page, the header at a phone's width, and what a first visit to
// the catalog costs in bytes. Runs before catalog.spec.ts and changes nothing.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

/** Waits until an `<img>` has loaded a picture, after scrolling to it, and returns the
 *  stored width the browser chose from its `srcset` (320, 640 or 1280). */
async function loaded(page: Page, selector: string, index = 0): Promise<number> {
  const img = page.locator(selector).nth(index);
  await img.scrollIntoViewIfNeeded();
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => (el.complete ? el.naturalWidth : 0))).toBeGreaterThan(0);
  const chosen = await img.evaluate((el: HTMLImageElement) => el.currentSrc);
  return Number(chosen.match(/-(\d+)\.webp$/)![1]);
}

/** The cards' prices as numbers of euros. */
async function prices(page: Page): Promise<number[]> {
  const texts = await page.locator('.cards .card .price').allTextContents();
  return texts.map((text) => Number(text.replace(/[€,]/g, '')));
}

test('catalog cards show each pet with its photo, price and the start of its description', async ({ page }) => {
  await page.goto('/');
  const rex = page.locator('.card', { hasText: 'Rex' });
  const photo = rex.locator('img.photo');
  await expect(photo).toHaveAttribute('alt', 'Photo of Rex');
  await expect(photo).toHaveAttribute('loading', 'lazy');
  await expect(photo).toHaveAttribute('srcset', /-320\.webp 320w, \S+-640\.webp 640w, \S+-1280\.webp 1280w/);
  await expect(photo).toHaveAttribute('sizes', /.+/);
  await expect(rex.locator('.price')).toHaveText('€450.00');
  await expect(rex.locator('.blurb')).toHaveText(/^A cheerful beagle with a nose for adventure\..*…$/);
  // A fixed 4:3 box, whether or not the picture is in yet.
  const box = (await photo.boundingBox())!;
  expect(Math.abs(box.width * 0.75 - box.height)).toBeLessThan(2);
  // Every card of the page has its picture, the narrowest width at this size.
  const count = await page.locator('.cards .card').count();
  expect(count).toBe(12);
  for (let i = 0; i < count; i++) {
    expect(await loaded(page, '.cards .card img.photo', i)).toBe(320);
  }
  await shoot(page, 'shop-catalog-desktop');
});

test('the pet page shows a large photo, the description, the price, the total and more of its kind', async ({ page }) => {
  await signIn(page, cliKey('customer', 'e2e browser'));
  await page.goto('/?q=rex');
  await page.getByRole('link', { name: 'Rex' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Rex');
  const photo = page.locator('.pet-photo img.photo');
  await expect(photo).toHaveAttribute('loading', 'eager');
  expect(await loaded(page, '.pet-photo img.photo')).toBeGreaterThanOrEqual(640);
  await expect(page.locator('.pet-about .price')).toHaveText('€450.00');
  await expect(page.locator('.description p')).toHaveText([
    /^A cheerful beagle with a nose for adventure\./,
    'Two years old, vaccinated and chipped.',
  ]);
  // The total follows the quantity as it is typed (nothing is ordered here).
  await hydrated(page);
  await expect(page.locator('.order-form .total')).toHaveText('Total €450.00');
  await page.getByLabel('Quantity').fill('3');
  await expect(page.locator('.order-form .total')).toHaveText('Total €1,350.00');
  // More dogs that can be ordered: not Rex itself, not the pending or sold ones.
  await expect(page.getByRole('heading', { name: 'More in Dogs' })).toBeVisible();
  await expect(page.locator('.more .card .card-title')).toHaveText(['Bella']);
  expect(await loaded(page, '.more .card img.photo')).toBeGreaterThan(0);
  await shoot(page, 'shop-pet-desktop');
});

test('the catalog sorts by price, name and newest, with JavaScript and without', async ({ page, browser }) => {
  await page.goto('/');
  await hydrated(page);
  await page.getByLabel('Sort').selectOption({ label: 'Price, lowest first' });
  await expect(page).toHaveURL(/sort=price/);
  await expect(page.locator('.cards .card .card-title').first()).toHaveText('Nemo');
  const first = await prices(page);
  expect(first).toEqual([...first].sort((a, b) => a - b));
  // The next page goes on in the same order.
  await page.getByRole('link', { name: 'Next page →' }).click();
  await expect(page).toHaveURL(/sort=price/);
  const rest = await prices(page);
  expect(Math.min(...rest)).toBeGreaterThanOrEqual(Math.max(...first));

  await page.goto('/');
  await hydrated(page);
  await page.getByLabel('Sort').selectOption({ label: 'Newest first' });
  await expect(page.locator('.cards .card .card-title').first()).toHaveText('Shelly');

  const plain = await browser.newContext({ javaScriptEnabled: false });
  const noScript = await plain.newPage();
  await noScript.goto('/');
  await noScript.getByLabel('Sort').selectOption({ label: 'Name, A to Z' });
  await noScript.getByLabel('Status').selectOption('available');
  await noScript.getByRole('button', { name: 'Apply' }).click();
  await expect(noScript).toHaveURL(/sort=name/);
  const names = await noScript.locator('.cards .card .card-title').allTextContents();
  expect(names).toEqual(['Bella', 'Bubbles', 'Misty', 'Nemo', 'Rex', 'Spike', 'Tweety', 'Whiskers']);
  await plain.close();
});

test('the header at a phone width: a menu, the account in one place, nothing run together', async ({ browser }) => {
  const context = await browser.newContext({ viewport: WIDTHS.phone });
  const page = await context.newPage();
  failOnPageErrors(page);
  await page.goto('/');
  await hydrated(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const menu = nav.getByRole('button', { name: 'Menu' });
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(nav.getByRole('link', { name: 'Categories' })).toBeHidden();
  await expect(nav.getByRole('link', { name: 'Sign in' })).toBeVisible();
  // One line: the first card starts high on the screen.
  expect((await nav.boundingBox())!.height).toBeLessThan(70);
  await shoot(page, 'header-phone-closed');
  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  for (const name of ['Catalog', 'Categories', 'API docs', 'Sign in', 'Sign up']) {
    await expect(nav.getByRole('link', { name })).toBeVisible();
  }
  await expectApart(page, ['Catalog', 'Categories', 'API docs', 'Sign in', 'Sign up']);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(WIDTHS.phone.width);
  await shoot(page, 'header-phone-open');

  // Signed in: who it is stays on the bar; their pages and signing out are in the menu.
  await signIn(page, cliKey('admin', 'e2e phone staff'));
  await hydrated(page);
  await expect(page.locator('.who')).toHaveText('Signed in · Admin');
  await expect(nav.getByRole('button', { name: 'Sign out' })).toBeHidden();
  await openMenu(page);
  for (const name of ['Orders', 'Staff']) await expect(nav.getByRole('link', { name })).toBeVisible();
  await expect(nav.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await expectApart(page, ['Orders', 'Staff']);
  await shoot(page, 'header-phone-signed-in');
  await context.close();

  // Without JavaScript the links stay listed, and no button that would do nothing shows.
  const plain = await browser.newContext({ viewport: WIDTHS.phone, javaScriptEnabled: false });
  const noScript = await plain.newPage();
  await noScript.goto('/');
  const plainNav = noScript.getByRole('navigation', { name: 'Main' });
  await expect(plainNav.getByRole('link', { name: 'Categories' })).toBeVisible();
  await expect(plainNav.getByRole('button', { name: 'Menu' })).toBeHidden();
  await plain.close();
});

test('the header at a desktop width: the links apart, the account at the end', async ({ page }) => {
  await page.setViewportSize(WIDTHS.desktop);
  await page.goto('/');
  await hydrated(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('button', { name: 'Menu' })).toBeHidden();
  await expectApart(page, ['Catalog', 'Categories', 'API docs', 'Sign in', 'Sign up']);
  await signIn(page, cliKey('admin', 'e2e desktop staff'));
  await page.goto('/');
  await expectApart(page, ['Catalog', 'Categories', 'API docs', 'Orders', 'Staff']);
  const who = (await page.locator('.who').boundingBox())!;
  const signOut = (await nav.getByRole('button', { name: 'Sign out' }).boundingBox())!;
  expect(signOut.x).toBeGreaterThan(who.x + who.width);
  await shoot(page, 'header-desktop-signed-in');
});

test('the header between phone and desktop widths, an admin signed in: apart, no sideways scroll, two rows at most', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  failOnPageErrors(page);
  await signIn(page, cliKey('admin', 'e2e tablet staff'));
  await page.goto('/');
  await hydrated(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const header = page.locator('.site-header');
  const signOut = nav.getByRole('button', { name: 'Sign out' });
  // At 1280 px the bar is one row (the brand and signing out side by side): its height
  // is the row the narrower widths are measured in.
  const brand = (await nav.locator('.brand').boundingBox())!;
  const end = (await signOut.boundingBox())!;
  expect(Math.abs(brand.y + brand.height / 2 - (end.y + end.height / 2))).toBeLessThan(8);
  const row = (await header.boundingBox())!.height;

  for (const width of [721, 768]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('/');
    await hydrated(page);
    // Just over the phone layout: no menu, every link and the account on the bar.
    await expect(nav.getByRole('button', { name: 'Menu' })).toBeHidden();
    await expect(page.locator('.who')).toBeVisible();
    await expect(signOut).toBeVisible();
    await expectApart(page, ['Catalog', 'Categories', 'API docs', 'Orders', 'Staff']);
    // Who is signed in and signing out run into no link.
    const links = await Promise.all(
      ['Catalog', 'Categories', 'API docs', 'Orders', 'Staff'].map(
        async (name) => (await nav.getByRole('link', { name, exact: true }).boundingBox())!,
      ),
    );
    for (const account of [(await page.locator('.who').boundingBox())!, (await signOut.boundingBox())!]) {
      for (const link of links) {
        const apart =
          account.x >= link.x + link.width || link.x >= account.x + account.width ||
          account.y >= link.y + link.height || link.y >= account.y + account.height;
        expect(apart, `the account at ${JSON.stringify(account)} overlaps a link at ${JSON.stringify(link)}`).toBe(true);
      }
    }
    const { scrollWidth, clientWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    expect(scrollWidth, `sideways scroll at ${width} px`).toBeLessThanOrEqual(clientWidth);
    const height = (await header.boundingBox())!.height;
    expect(height, `the header at ${width} px against one row of ${row} px`).toBeLessThanOrEqual(2 * row);
    await shoot(page, `header-${width}-signed-in`);
  }
  await context.close();
});

/** The header links named are visible and at least 8 px apart (none run into the next). */
async function expectApart(page: Page, names: string[]) {
  const nav = page.getByRole('navigation', { name: 'Main' });
  const boxes = [];
  for (const name of names) boxes.push((await nav.getByRole('link', { name, exact: true }).boundingBox())!);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      const gapX = Math.max(b.x - (a.x + a.width), a.x - (b.x + b.width));
      const gapY = Math.max(b.y - (a.y + a.height), a.y - (b.y + b.height));
      expect(Math.max(gapX, gapY), `${names[i]} and ${names[j]} apart`).toBeGreaterThanOrEqual(0);
      if (Math.abs(a.y - b.y) < 4) expect(gapX, `${names[i]} and ${names[j]} apart`).toBeGreaterThanOrEqual(8);
    }
  }
}

test('a first visit to the catalog costs under 500 KB, its photos included', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  failOnPageErrors(page);
  const sizes: Promise<{ url: string; bytes: number }>[] = [];
  page.on('requestfinished', (request) => {
    sizes.push(request.sizes().then((s) => ({ url: request.url(), bytes: s.responseBodySize + s.responseHeadersSize })));
  });
  await page.goto('/', { waitUntil: 'networkidle' });
  await hydrated(page);
  await page.waitForLoadState('networkidle');
  const all = await Promise.all(sizes);
  const total = all.reduce((sum, part) => sum + part.bytes, 0);
  const photos = all.filter((part) => part.url.includes('/media/'));
  const kinds = new Map<string, number>();
  for (const part of all) {
    const kind = part.url.includes('/media/') ? 'photos' : (part.url.match(/\.(wasm|js|css)$/)?.[1] ?? 'page');
    kinds.set(kind, (kinds.get(kind) ?? 0) + part.bytes);
  }
  console.log(`catalog first visit: ${total} bytes in ${all.length} responses (${photos.length} photos):`, Object.fromEntries(kinds));
  // The photos in view (at least the first row) are part of it.
  expect(photos.length).toBeGreaterThanOrEqual(4);
  expect(total).toBeLessThan(500_000);
  await context.close();
});
