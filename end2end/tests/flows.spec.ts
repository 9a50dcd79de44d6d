import {
  WIDTHS, cliKey, expect, failOnPageErrors, hydrated, openMenu, ordersOf, shoot, signedInPage, stockedPet, test, unique,
} from './helpers';

// The flows shoppers and staff must be able to trust, at a laptop's width and a
// phone's, with JavaScript and without it where the flow exists. Every test leaves a
// screenshot in target/screenshots/flow-<name>-<width>.png.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

const as = signedInPage;

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`a double-click on Order places one order (${width})`, async ({ browser }) => {
    const admin = cliKey('admin', 'e2e flows admin');
    const key = cliKey('customer', 'e2e double-clicker');
    const page = await as(browser, key, size);
    const name = unique('Double');
    const pet = await stockedPet(page, admin, name, 12);
    await page.goto(`/pets/${pet}`);
    await hydrated(page);
    // Orders are sent by the island (\`post_form\`): the page is never loaded again.
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    await page.getByRole('button', { name: 'Order' }).dblclick();
    await expect(page.getByRole('status')).toContainText(`Ordered 1 × ${name} (order #`);
    await expect(page.locator('.facts .stock')).toHaveText('11');
    expect(await ordersOf(page, key, pet)).toHaveLength(1);
    // A slower double click, on a store that answers fast: the second click comes
    // after the first order's answer, once the form has moved on to its next key.
    await page.getByRole('button', { name: 'Order' }).click();
    await expect(page.getByRole('status')).toContainText(`Ordered 1 × ${name} (order #`);
    await expect(page.locator('.facts .stock')).toHaveText('10');
    const box = (await page.getByRole('button', { name: 'Order' }).boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down({ clickCount: 2 });
    await page.mouse.up({ clickCount: 2 });
    // Ordering again on purpose is a new order (and the only one since: an order
    // that second click had sent would be in the count; it goes out at the click).
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Order' }).click();
    await expect(page.getByRole('status')).toContainText(`Ordered 2 × ${name}`);
    await expect(page.locator('.facts .stock')).toHaveText('8');
    expect(await ordersOf(page, key, pet)).toHaveLength(3);
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    await shoot(page, `flow-order-${width}`);
    await page.context().close();
  });

  test(`without JavaScript, an order is confirmed and sending it again makes no second one (${width})`, async ({ browser }) => {
    const admin = cliKey('admin', 'e2e flows admin');
    const key = cliKey('customer', 'e2e no-js shopper');
    const page = await as(browser, key, size, false);
    const name = unique('Plain');
    const pet = await stockedPet(page, admin, name, 5);
    await page.goto(`/pets/${pet}`);
    const form = page.locator('form.order-form');
    const fields = {
      pet_id: await form.locator('[name="pet_id"]').inputValue(),
      idempotency_key: await form.locator('[name="idempotency_key"]').inputValue(),
      quantity: '1',
    };
    await page.getByRole('button', { name: 'Order' }).click();
    await expect(page).toHaveURL(new RegExp(`/pets/${pet}$`));
    await expect(page.getByRole('status')).toContainText(`Ordered 1 × ${name} (order #`);
    await expect(page.locator('.facts .stock')).toHaveText('4');
    // Reloading shows the page again (the form was answered with a redirect) ...
    await page.reload();
    await expect(page.locator('.facts .stock')).toHaveText('4');
    // ... and the same form sent again (as a browser resubmitting it would) is
    // answered with the first order.
    const again = await page.request.post('/_app/place_order', {
      form: fields,
      headers: { Accept: 'text/html', Referer: page.url() },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(303);
    const orders = await ordersOf(page, key, pet);
    expect(orders).toHaveLength(1);
    await shoot(page, `flow-order-no-js-${width}`);
    await page.context().close();
  });

  test(`cancelling asks first, two quick clicks cancel one order, and the row stays (${width})`, async ({ browser }) => {
    const admin = cliKey('admin', 'e2e flows admin');
    const key = cliKey('customer', 'e2e canceller');
    const page = await as(browser, key, size);
    const name = unique('Cancel');
    const pet = await stockedPet(page, admin, name, 10);
    const headers = { 'X-API-Key': key };
    const ids: number[] = [];
    for (let n = 0; n < 3; n++) {
      const placed = await page.request.post('/api/v1/store/orders', { headers, data: { petId: pet, quantity: 1 } });
      ids.push((await placed.json()).id);
    }
    await page.goto(`/orders?pet=${encodeURIComponent(name)}`);
    await hydrated(page);
    const rows = page.locator('tbody tr');
    await expect(rows).toHaveCount(3);
    const newest = page.locator(`tr[data-order-id="${ids[2]}"]`);
    await newest.locator('summary', { hasText: 'Cancel…' }).click();
    await expect(newest.getByText(`Cancel order #${ids[2]} (1 × ${name})?`)).toBeVisible();
    await newest.getByRole('button', { name: `Yes, cancel order #${ids[2]}` }).dblclick();
    // One cancel; whichever answer is shown last says it in words, not as an error.
    await expect(page.getByRole('status')).toContainText(new RegExp(`[Oo]rder #${ids[2]} \\(1 × ${name}\\)`));
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(rows).toHaveCount(3);
    await expect(newest.locator('.order-status')).toHaveText('Cancelled');
    const open = await ordersOf(page, key, pet);
    expect(open.map((o) => o.id).sort()).toEqual([ids[0], ids[1]].sort());
    await shoot(page, `flow-cancel-${width}`);

    // Without JavaScript the confirmation is the same disclosure, and the page says what happened.
    const plain = await as(browser, key, size, false);
    await plain.goto(`/orders?pet=${encodeURIComponent(name)}`);
    const row = plain.locator(`tr[data-order-id="${ids[1]}"]`);
    await row.locator('summary', { hasText: 'Cancel…' }).click();
    await row.getByRole('button', { name: `Yes, cancel order #${ids[1]}` }).click();
    await expect(plain.getByRole('status')).toContainText(`Cancelled order #${ids[1]} (1 × ${name})`);
    await expect(plain.locator(`tr[data-order-id="${ids[1]}"] .order-status`)).toHaveText('Cancelled');
    await shoot(plain, `flow-cancel-no-js-${width}`);
    await plain.context().close();
    await page.context().close();
  });

  test(`signing in and out comes back to the page (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    await page.goto('/?q=tweety');
    await page.getByRole('link', { name: 'Tweety' }).click();
    const petPage = page.url();
    await hydrated(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' }).click();
    await hydrated(page);
    await page.getByLabel('API key').fill(cliKey('customer', 'e2e returner'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(petPage);
    await expect(page.locator('.who')).toBeVisible();
    await hydrated(page);
    await openMenu(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(petPage);
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toBeVisible();
    await shoot(page, `flow-return-${width}`);
    // Only this site's own pages: anything else goes to the catalog.
    await page.goto('/sign-in?next=//evil.example/');
    await hydrated(page);
    await page.getByLabel('API key').fill(cliKey('customer', 'e2e returner'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/127\.0\.0\.1:\d+\/$/);
    await context.close();
  });

  test(`Back after signing out shows nothing private (${width})`, async ({ browser }) => {
    const page = await as(browser, cliKey('customer', 'e2e back button'), size);
    await page.goto('/orders');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('My orders');
    await page.goto('/categories');
    await hydrated(page);
    await openMenu(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toBeVisible();
    await page.goBack();
    await expect(page).toHaveURL(/\/orders$/);
    await expect(page.getByText('Sign in to see your orders')).toBeVisible();
    await expect(page.locator('.who')).toHaveCount(0);
    await page.context().close();
  });
}

test('a signed-in shopper on the sign-up page is told what a new key means first', async ({ browser }) => {
  for (const [width, size] of Object.entries(WIDTHS)) {
    const page = await as(browser, cliKey('customer', 'e2e second key'), size);
    await page.goto('/sign-up');
    await hydrated(page);
    await expect(page.getByRole('note')).toContainText('You are signed in');
    await page.getByRole('button', { name: 'Create my key' }).click();
    // The box must be ticked first: nothing was made.
    await expect(page.locator('#new-key')).toHaveCount(0);
    await page.getByLabel('Yes, make a new key and switch this browser to it').check();
    await page.getByRole('button', { name: 'Create my key' }).click();
    await expect(page.locator('#new-key')).toContainText('psk_');
    await shoot(page, `flow-sign-up-signed-in-${width}`);
    await page.context().close();
  }
});

test('choosing a category by keyboard waits for Enter', async ({ page }) => {
  await page.goto('/');
  await hydrated(page);
  const category = page.getByLabel('Category');
  await category.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.waitForTimeout(300);
  expect(new URL(page.url()).search).toBe('');
  await expect(category).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\?category=\d+$/);
});

test('pages have one address: a trailing slash or an empty filter is sent on with 308', async ({ page }) => {
  for (const [from, to] of [['/docs/', '/docs'], ['/sign-in/', '/sign-in'], ['/admin/', '/admin'], ['/?category=&status=sold&q=', '/?status=sold']]) {
    const response = await page.request.get(from, { maxRedirects: 0 });
    expect(response.status(), from).toBe(308);
    expect(response.headers()['location'], from).toBe(to);
  }
  const pet = await page.goto('/pets/1/');
  expect(pet?.status()).toBe(200);
  await expect(page).toHaveURL(/\/pets\/1$/);
  // No filter matches: the way back is offered.
  await page.goto('/?q=no-such-pet-anywhere');
  await page.getByRole('link', { name: 'Clear the filters' }).click();
  await expect(page).toHaveURL(/127\.0\.0\.1:\d+\/$/);
  // The whole card opens the pet.
  await page.locator('.card', { hasText: 'Rex' }).first().click({ position: { x: 12, y: 70 } });
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Rex');
});

test('on a phone the first pet card shows without scrolling', async ({ browser }) => {
  for (const path of ['/', '/?category=1&status=available']) {
    const context = await browser.newContext({ viewport: WIDTHS.phone });
    const page = await context.newPage();
    await page.goto(path);
    const first = await page.locator('.cards .card').first().boundingBox();
    expect(first, path).not.toBeNull();
    expect(first!.y + 40, `${path}: the first card's name is above the fold`).toBeLessThan(WIDTHS.phone.height);
    await shoot(page, `flow-catalog-phone${path === '/' ? '' : '-filtered'}`);
    await context.close();
  }
});

test('at a phone width no table control is out of sight', async ({ browser }) => {
  const admin = cliKey('admin', 'e2e phone staff');
  const page = await as(browser, admin, WIDTHS.phone);
  const pet = await stockedPet(page, admin, unique('Phone'), 3);
  await page.request.post('/api/v1/store/orders', { headers: { 'X-API-Key': admin }, data: { petId: pet, quantity: 1 } });
  for (const path of ['/orders', '/admin/inventory', '/admin/keys', '/admin/pets']) {
    await page.goto(path);
    await hydrated(page);
    const outside = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      return [...document.querySelectorAll('table button, table summary, table input, table a, table select')]
        .filter((el) => {
          const box = el.getBoundingClientRect();
          return box.width > 0 && (box.right > width + 0.5 || box.left < -0.5);
        })
        .map((el) => el.outerHTML.slice(0, 80));
    });
    expect(outside, path).toEqual([]);
    await shoot(page, `flow-phone-${path.replaceAll('/', '-').replace(/^-/, '')}`);
  }
  await page.context().close();
});

test('staff: destructive actions ask first and say what happened', async ({ browser }) => {
  for (const [width, size] of Object.entries(WIDTHS)) {
    const key = cliKey('admin', unique('e2e destroyer'));
    const page = await as(browser, key, size);
    const name = unique('Doomed');
    const pet = await stockedPet(page, key, name, 1);
    await page.goto(`/admin/pets/${pet}`);
    await hydrated(page);
    await page.locator('summary', { hasText: `Delete ${name}…` }).click();
    await expect(page.getByText(`Delete ${name} (pet #${pet}) for good?`)).toBeVisible();
    await shoot(page, `flow-delete-pet-${width}`);
    await page.getByRole('button', { name: `Yes, delete ${name}` }).click();
    await expect(page).toHaveURL(/\/admin\/pets$/);
    await expect(page.getByRole('status')).toHaveText(`Pet #${pet} was deleted.`);

    // A category with pets offers no delete; it says why.
    await page.goto('/admin/categories');
    await hydrated(page);
    const fish = page.getByRole('listitem', { name: 'Category Fish' });
    await expect(fish).toContainText(/pets? (is|are) in it/);
    await expect(fish.locator('summary')).toHaveCount(0);

    // Revoking asks first; the staff member's own key warns that it signs them out.
    await page.goto('/admin/keys');
    await hydrated(page);
    const own = page.locator('tr', { hasText: '(you)' });
    await own.locator('summary').click();
    await expect(own).toContainText('is the one you are signed in with');
    const other = cliKey('customer', unique('e2e to revoke'));
    await page.reload();
    await hydrated(page);
    const otherRow = page.locator('tbody tr').last();
    const otherId = await otherRow.getAttribute('data-key-id');
    await otherRow.locator('summary').click();
    await otherRow.getByRole('button', { name: `Yes, revoke key ${otherId}` }).click();
    await expect(page.getByRole('status')).toContainText(`Revoked key #${otherId}`);
    const after = await page.request.get('/api/v1/pets?limit=1', { headers: { 'X-API-Key': other } });
    expect(after.status()).toBe(401);
    await shoot(page, `flow-revoke-${width}`);
    await page.context().close();
  }
});

test('without JavaScript, a staff error shows under the one form that failed and keeps what was typed', async ({ browser }) => {
  for (const [width, size] of Object.entries(WIDTHS)) {
    const page = await as(browser, cliKey('admin', 'e2e plain staff'), size, false);
    await page.goto('/admin/categories');
    const cats = page.getByRole('listitem', { name: 'Category Cats' });
    // Renaming Cats to an existing name: refused.
    await cats.getByLabel('Name').fill('dogs');
    await cats.getByRole('button', { name: 'Save' }).click();
    await expect(page).toHaveURL(/\/admin\/categories$/);
    await expect(page.getByRole('alert')).toHaveCount(1);
    await expect(cats.getByRole('alert')).toContainText('already exists');
    await expect(cats.getByLabel('Name')).toHaveValue('dogs');
    await shoot(page, `flow-staff-error-no-js-${width}`);
    // A success says so, under its form.
    const description = unique('Independent');
    await cats.getByLabel('Name').fill('Cats');
    await cats.getByLabel('Description').fill(description);
    await cats.getByRole('button', { name: 'Save' }).click();
    await expect(cats.getByRole('status')).toHaveText('Saved.');
    await expect(cats.getByLabel('Description')).toHaveValue(description);
    await page.context().close();
  }
});
