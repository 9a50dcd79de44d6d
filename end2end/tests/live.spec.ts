import { cliKey, expect, failOnPageErrors, hydrated, liveStreams, signIn, stockedPet, test, unique, shoot } from './helpers';

// Live stock: a pet page and the catalog follow the store's events, so that a pet
// that sells out while a shopper looks at it shows so at once, its order button too.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

test('a pet page and the catalog show a pet selling out through the API, without a reload', async ({ page, browser }) => {
  const admin = cliKey('admin', 'e2e live admin');
  const buyer = cliKey('customer', 'e2e live buyer');
  await signIn(page, cliKey('customer', 'e2e live watcher'));
  const name = unique('Last');
  const pet = await stockedPet(page, admin, name, 2);

  // The order below must come after the pages' streams have started (`liveStreams`).
  const streaming = liveStreams(page, 2, /^\/pets\/\d+$/);
  await page.goto(`/pets/${pet}`);
  await hydrated(page);
  await streaming;
  await expect(page.locator('.facts .stock')).toHaveText('2');
  await expect(page.getByRole('button', { name: 'Order' })).toBeVisible();
  // A visitor without a key, on the catalog page with the pet's card.
  const visitor = await (await browser.newContext()).newPage();
  failOnPageErrors(visitor);
  const visitorStreaming = liveStreams(visitor, 1, /^\/$/);
  await visitor.goto(`/?q=${encodeURIComponent(name)}`);
  await hydrated(visitor);
  await visitorStreaming;
  const card = visitor.locator(`.card[data-pet-id="${pet}"]`);
  await expect(card.locator('.stock')).toHaveText('2 in stock');

  // Someone else buys both through the API.
  const bought = await page.request.post('/api/v1/store/orders', {
    headers: { 'X-API-Key': buyer },
    data: { petId: pet, quantity: 2 },
  });
  expect(bought.status()).toBe(201);

  // Seen at once (the stream, not a reload): the stock, the status, the order box.
  await expect(page.locator('.facts .stock')).toHaveText('0', { timeout: 5_000 });
  await expect(page.locator('.facts .badge')).toHaveText('Pending');
  await expect(page.getByRole('button', { name: 'Order' })).toHaveCount(0);
  await expect(page.getByText('Not available to order right now.')).toBeVisible();
  await expect(card.locator('.stock')).toHaveText('0 in stock', { timeout: 5_000 });
  await expect(card.locator('.badge')).toHaveText('Pending');
  await shoot(page, 'live-sold-out');

  // And back when the order is cancelled.
  const orders = await (await page.request.get(`/api/v1/store/orders?petId=${pet}`, { headers: { 'X-API-Key': buyer } })).json();
  const cancelled = await page.request.delete(`/api/v1/store/orders/${orders[0].id}`, { headers: { 'X-API-Key': buyer } });
  expect(cancelled.status()).toBe(204);
  await expect(page.locator('.facts .stock')).toHaveText('2', { timeout: 5_000 });
  await expect(page.getByRole('button', { name: 'Order' })).toBeVisible();
  await visitor.context().close();
});
