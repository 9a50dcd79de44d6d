import { Page } from '@playwright/test';
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
  const streaming = liveStreams(page, 1, /^\/pets\/\d+$/);
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

  // Staff hold the pet, its stock untouched: the pet's own event (\`pet.updated\`,
  // read by its \`id\` and \`status\`) changes the page.
  const headers = { 'X-API-Key': admin };
  const { categoryId } = await (await page.request.get(`/api/v1/pets/${pet}`, { headers })).json();
  const held = await page.request.put(`/api/v1/pets/${pet}`, { headers, data: { name, categoryId, status: 'pending' } });
  expect(held.status()).toBe(200);
  await expect(page.locator('.facts .badge')).toHaveText('Pending', { timeout: 5_000 });
  await expect(page.locator('.facts .stock')).toHaveText('2');
  await expect(page.getByText('Not available to order right now.')).toBeVisible();
  await visitor.context().close();
});

/** Sets a pet's stock through the API, as staff. */
async function setStock(page: Page, admin: string, pet: number, quantity: number) {
  const set = await page.request.put(`/api/v1/store/inventory/${pet}`, { headers: { 'X-API-Key': admin }, data: { quantity } });
  expect(set.status()).toBe(200);
}

test('six tabs of one pet page hold one stream each and all see a stock change', async ({ browser }) => {
  const admin = cliKey('admin', 'e2e live tabs admin');
  const context = await browser.newContext();
  const tabs: Page[] = [];
  const streams = new Map<Page, number>();
  const first = await context.newPage();
  const pet = await stockedPet(first, admin, unique('Tabs'), 9);
  await first.close();
  for (let n = 0; n < 6; n++) {
    const tab = await context.newPage();
    failOnPageErrors(tab);
    streams.set(tab, 0);
    tab.on('request', (request) => {
      if (new URL(request.url()).pathname === '/live') streams.set(tab, (streams.get(tab) ?? 0) + 1);
    });
    const streaming = liveStreams(tab, 1, /^\/pets\/\d+$/);
    await tab.goto(`/pets/${pet}`);
    await hydrated(tab);
    await streaming;
    tabs.push(tab);
  }
  await setStock(tabs[0], admin, pet, 4);
  for (const tab of tabs) {
    await expect(tab.locator('.facts .stock')).toHaveText('4', { timeout: 5_000 });
    // The facts and the "More in" cards share the page's one stream.
    expect(streams.get(tab), 'streams this tab opened').toBe(1);
  }
  await context.close();
});

test('a refused stream is tried again, and what it missed is read again', async ({ browser }) => {
  const admin = cliKey('admin', 'e2e live retry admin');
  const context = await browser.newContext();
  const page = await context.newPage();
  failOnPageErrors(page);
  const pet = await stockedPet(page, admin, unique('Retry'), 6);
  let attempts = 0;
  await page.route('**/live', async (route) => {
    attempts += 1;
    if (attempts <= 2) {
      // Refused as the server refuses a network over its share; meanwhile the stock
      // changes, and no stream is there to say so.
      if (attempts === 2) await setStock(page, admin, pet, 3);
      await route.fulfill({ status: 429, headers: { 'Retry-After': '5' }, body: 'too many live streams' });
    } else {
      await route.continue();
    }
  });
  const streaming = liveStreams(page, 1, /^\/pets\/\d+$/);
  await page.goto(`/pets/${pet}`);
  await hydrated(page);
  // The page tries again by itself (after about 1, then 2 seconds), and once its
  // stream opens it reads again what it missed.
  await streaming;
  expect(attempts).toBe(3);
  await expect(page.locator('.facts .stock')).toHaveText('3', { timeout: 5_000 });
  // And from then on follows the stream.
  await setStock(page, admin, pet, 1);
  await expect(page.locator('.facts .stock')).toHaveText('1', { timeout: 5_000 });
  await context.close();
});
