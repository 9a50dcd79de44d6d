import { WIDTHS, cliKey, colourAndVariable, expect, failOnPageErrors, hydrated, shoot, signIn, stockedPet, test, unique } from './helpers';

// The smaller things shoppers and staff noticed (issue 50, point 13): the paw in the
// header takes the brand's colour in both themes, a pet's id reads as a number, a
// console page refused to a visitor still has a title and a way back, and a failed
// webhook delivery looks failed. And the dashboard leads with what an owner looks for,
// its charts legible on a phone (point 10).

test.beforeEach(async ({ page }) => failOnPageErrors(page));

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`the paw follows the brand's colour, light and dark; a pet's id is plain text (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    const pet = await stockedPet(page, cliKey('admin', 'e2e details admin'), 'Detail fish', 2);
    for (const theme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: theme });
      await page.goto(`/pets/${pet}`);
      const [brand, paw] = await page.locator('.nav .brand').evaluate((brand) => {
        const paw = brand.querySelector('svg.paw');
        return [getComputedStyle(brand).color, paw ? getComputedStyle(paw).fill : 'no paw'];
      });
      expect(paw, `the paw on the ${theme} header`).toBe(brand);
    }
    const id = page.locator('.facts dt', { hasText: 'Pet id' }).locator('xpath=following-sibling::dd[1]');
    await expect(id).toHaveText(String(pet));
    await expect(id.locator('code')).toHaveCount(0);
    await context.close();
  });

  test(`a console page refused says so in its title and leads back after signing in (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    const signedOut = await page.goto('/admin/inventory');
    expect(signedOut?.status()).toBe(401);
    await expect(page).toHaveTitle('Staff only · Pet Store');
    await page.getByRole('alert').getByRole('link', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fadmin%2Finventory$/);
    await hydrated(page);
    await page.getByLabel('API key').fill(cliKey('customer', 'e2e details shopper'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/admin\/inventory$/);
    // A customer's key: 403, with the title still there.
    const refused = await page.reload();
    expect(refused?.status()).toBe(403);
    await expect(page).toHaveTitle('Staff only · Pet Store');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Staff only');
    await context.close();
  });
}

/** An amount as the store writes it ("€1,234.50"), as a number. */
function amount(text: string | null): number {
  return Number((text ?? '').replace(/[^0-9.]/g, ''));
}

for (const [width, size] of Object.entries(WIDTHS)) {
  test(`the dashboard leads with revenue, open orders and pets running low (${width})`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: size });
    const page = await context.newPage();
    failOnPageErrors(page);
    const admin = cliKey('admin', 'e2e dashboard admin');
    const headers = { 'X-API-Key': admin };
    const name = unique('Sales fish');
    const pet = await stockedPet(page, admin, name, 3);
    const { categoryId } = await (await page.request.get(`/api/v1/pets/${pet}`, { headers })).json();
    const priced = await page.request.put(`/api/v1/pets/${pet}`, { headers, data: { name, categoryId, price: 1234 } });
    expect(priced.status()).toBe(200);
    await signIn(page, admin);
    await page.goto('/admin');
    const sales = page.getByRole('region', { name: 'Sales' });
    const revenue = sales.locator('dt', { hasText: 'Revenue today' }).locator('xpath=following-sibling::dd[1]');
    const before = amount(await revenue.textContent());
    const open = sales.getByRole('link', { name: /^\d+ →$/ });
    const openBefore = amount(await open.textContent());
    await expect(sales.getByRole('link', { name })).toHaveCount(0);

    const shopper = { 'X-API-Key': cliKey('customer', 'e2e dashboard shopper') };
    const ordered = await page.request.post('/api/v1/store/orders', { headers: shopper, data: { petId: pet, quantity: 2 } });
    expect(ordered.status()).toBe(201);
    await page.reload();
    expect(amount(await revenue.textContent())).toBeCloseTo(before + 24.68, 2);
    expect(amount(await open.textContent())).toBe(openBefore + 1);
    // One left: the newest of the fewest, so at the top of the list.
    await expect(sales.locator('.low-stock-list li').first()).toContainText(`${name} 1 left`);
    await shoot(page, `dashboard-sales-${width}`);
    // The charts' words are read at 12 px or more, and none covers another.
    const texts = await page.locator('svg.chart').evaluateAll((charts) =>
      charts.flatMap((chart) => {
        const svg = chart as SVGSVGElement;
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return [...svg.querySelectorAll('text')]
          .filter((text) => getComputedStyle(text).display !== 'none' && text.textContent !== '')
          .map((text) => {
            const box = text.getBoundingClientRect();
            const px = parseFloat(getComputedStyle(text).fontSize) * scale;
            return { text: text.textContent, px, left: box.left, right: box.right, top: box.top, bottom: box.bottom };
          });
      }),
    );
    expect(texts.length).toBeGreaterThan(6);
    for (const text of texts) expect(text.px, `"${text.text}" in px`).toBeGreaterThanOrEqual(12);
    for (const [i, a] of texts.entries()) {
      for (const b of texts.slice(i + 1)) {
        const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
        expect(apart, `"${a.text}" and "${b.text}" do not overlap`).toBe(true);
      }
    }
    await sales.getByRole('link', { name }).click();
    await expect(page).toHaveURL(new RegExp(`/admin/pets/${pet}$`));
    await page.goBack();
    await open.click();
    await expect(page).toHaveURL(/\/admin\/orders\?state=open$/);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('All orders');
    await context.close();
  });
}

test('a failed delivery is marked in the error colour, its event id on one line', async ({ page }) => {
  const admin = cliKey('admin', 'e2e details webhooks');
  // Nothing listens on the discard port: every attempt fails at once.
  const data = { url: 'http://127.0.0.1:9/details', events: ['*'], description: 'Details check' };
  const made = await page.request.post('/api/v1/webhooks', { headers: { 'X-API-Key': admin }, data });
  expect(made.status()).toBe(201);
  const hook = (await made.json()).id;
  const ping = await page.request.post(`/api/v1/webhooks/${hook}/test`, { headers: { 'X-API-Key': admin } });
  expect(ping.ok()).toBe(true);
  await page.setViewportSize(WIDTHS.phone);
  await signIn(page, admin);
  const failed = page.locator('tr[data-delivery-id] .badge', { hasText: 'Failed' }).first();
  await expect(async () => {
    await page.goto(`/admin/webhooks/${hook}`);
    await expect(failed).toBeVisible({ timeout: 500 });
  }).toPass({ timeout: 10_000 });
  const [badge, error] = await colourAndVariable(failed, '--error-text');
  expect(badge).toBe(error);
  const id = page.locator('tr[data-delivery-id] .event-id').first();
  await expect(id).toHaveText(/^evt_[0-9a-f]{24}$/);
  const lines = await id.evaluate((span) => span.getClientRects().length);
  expect(lines, 'the event id is not broken across lines').toBe(1);
});
