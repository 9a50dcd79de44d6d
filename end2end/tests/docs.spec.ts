import { expect, test, cliKey, drawEverything, failOnPageErrors, hydrated, signIn, unique } from './helpers';

// /docs: the API reference drawn from the live OpenAPI document, and its try-it panels.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

test('the reference reads without JavaScript, from the live document', async ({ browser, request }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const response = await page.goto('/docs');
  expect(response?.status()).toBe(200);
  const document = await (await request.get('/api/v1/openapi.json')).json();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`${document.info.title} ${document.info.version}`);

  // Every operation of the document is on the page, grouped by its tag.
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      const article = page.locator(`article#op-${operation.operationId}`);
      await expect(article.locator('h4')).toContainText(`${method.toUpperCase()} /api/v1${path}`);
      const group = page.getByRole('region', { name: operation.tags?.[0] ?? 'Other', exact: true });
      await expect(group.locator(`article#op-${operation.operationId}`)).toHaveCount(1);
      // A deprecated operation is badged so, and not also "Stable".
      const stability: string = operation['x-stability'];
      const badge = operation.deprecated ? 'Deprecated' : stability[0].toUpperCase() + stability.slice(1);
      await expect(article.locator('.badges .badge')).toHaveText([badge]);
    }
  }
  // Inside each tag, by resource.
  const store = page.getByRole('region', { name: 'Store', exact: true });
  await expect(store.locator('.docs-resource > h3')).toHaveText(['Orders', 'Inventory', 'Keys', 'Events', 'Webhooks']);
  await expect(store.locator('.docs-resource', { hasText: 'Orders' }).first().locator('article#op-placeOrder')).toHaveCount(1);

  // Parameters, bodies, statuses with their Error codes.
  const getPet = page.locator('article#op-getPetById');
  await expect(getPet.getByRole('cell', { name: 'petId (required)' })).toBeVisible();
  await expect(getPet.locator('tr', { hasText: '404' })).toContainText('not_found');
  // The errors any operation may answer are described once, in the guide's Errors,
  // and each operation links there rather than repeating them.
  const generalRows = page.locator('article.operation table.responses tbody tr').filter({ hasText: /^(400|401|403|405|408|413|415|429|500|503|507)/ });
  await expect(generalRows).toHaveCount(0);
  const placeOrder = page.locator('article#op-placeOrder');
  await expect(placeOrder.locator('table.responses tbody tr td:first-child')).toHaveText(['201', '409', '422']);
  await expect(placeOrder.locator('.general-errors')).toContainText('401 · 403');
  await expect(placeOrder.locator('.general-errors').getByRole('link', { name: 'general errors' })).toHaveAttribute('href', '#errors');
  await expect(page.locator('#errors')).toHaveText('Errors');
  await expect(page.locator('article.operation table.responses', { hasText: 'rate_limited' })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Guide' }).getByRole('row', { name: /429 rate_limited/ })).toHaveCount(1);
  await expect(page.locator('article#op-createPet')).toContainText('Request body');
  await expect(page.locator('article#op-createPet').getByRole('link', { name: 'NewPet' })).toHaveAttribute('href', '#schema-NewPet');
  await expect(page.locator('#schema-NewPet')).toContainText('max length 100');

  // The deprecation notice, with the sunset date and the successor.
  const sunset = document.paths['/pets/{petId}'].get['x-sunset'];
  await expect(getPet.getByRole('note')).toContainText(`It stops working on ${sunset}`);
  await expect(getPet.getByRole('note')).toContainText('Use GET /pets?ids={petId} instead.');
  await expect(page.locator('article#op-createKey .badge').first()).toHaveText('Beta');

  // The guide is docs/api.md's: authentication, the plan table, errors, versioning.
  const guide = page.getByRole('region', { name: 'Guide' });
  for (const heading of ['Your first authenticated call', 'Rate limits', 'Errors', 'Versioning']) {
    await expect(guide.getByRole('heading', { name: heading })).toBeVisible();
  }
  await expect(guide.getByRole('row', { name: /Business 1,000 100,000/ })).toBeVisible();
  // Its examples use this store's own address, and its headings follow the page's.
  await expect(guide).toContainText(`curl -s -X POST ${new URL(page.url()).host}/api/v1/keys`);
  await expect(guide).not.toContainText('localhost:3000');
  await expect(guide.locator('h2', { hasText: 'Rate limits' })).toHaveCount(1);
  // Written for the developers who call the API: none of the server's insides.
  for (const internal of ['quick_cache', 'TinyLFU', 'Debian', 'contract.md', 'target/release', 'SQLite']) {
    await expect(page.locator('body')).not.toContainText(internal);
  }
  // The contents name the guide's sections, each tag's resources and the operations.
  const contents = page.getByRole('navigation', { name: 'Contents' });
  await expect(contents.getByRole('link', { name: 'Errors', exact: true })).toHaveAttribute('href', '#errors');
  await expect(contents.getByRole('link', { name: 'Webhooks', exact: true })).toHaveAttribute('href', '#res-Store-Webhooks');

  // Without JavaScript an opened panel shows the request as a curl line.
  const panel = page.locator('article#op-listPets .try-it');
  await panel.locator('summary').click();
  await expect(panel.locator('.curl')).toContainText(`curl -i -X GET '${new URL(page.url()).origin}/api/v1/pets' -H "X-API-Key: $KEY"`);
  await context.close();
});

test('GET /store/orders has no try-it panel, but a note', async ({ page }) => {
  await page.goto('/docs');
  const listOrders = page.locator('article#op-listOrders');
  await expect(listOrders.locator('.try-it')).toHaveCount(0);
  await expect(listOrders.locator('.try-it-hidden')).toContainText('x-hideTryItPanel');
  await expect(page.locator('article#op-listPets .try-it')).toHaveCount(1);
});

test('try it: GET /pets with the signed-in key answers 200 with the rate-limit headers', async ({ page }) => {
  await signIn(page, cliKey('customer', 'e2e docs reader'));
  await page.goto('/docs#op-listPets');
  await hydrated(page);
  const panel = page.locator('article#op-listPets .try-it');
  // A closed panel is a summary alone: its form is drawn when it is first opened.
  await expect(panel.locator('input, select, textarea, button')).toHaveCount(0);
  await panel.getByText('Try it').click();
  await expect(page.getByLabel('My signed-in key')).toBeChecked();
  await expect(panel.locator('.sent-with')).toContainText('Sent with your signed-in key.');
  await panel.getByLabel(/^limit/).fill('2');
  // A parameter of a few values is a picker.
  await panel.getByLabel(/^status/).selectOption('available');
  // The request it makes, and the same with curl (the key as $KEY, never shown).
  await expect(panel.locator('.request')).toHaveText('Request: GET /api/v1/pets?status=available&limit=2');
  const origin = new URL(page.url()).origin;
  await expect(panel.locator('.curl')).toHaveText(`curl -i -X GET '${origin}/api/v1/pets?status=available&limit=2' -H "X-API-Key: $KEY"`);
  await panel.getByRole('button', { name: 'Send' }).click();
  await expect(panel.locator('.status-code')).toHaveText('200');
  const remaining = panel.locator('tr[data-header="x-ratelimit-remaining"]');
  await expect(remaining).toHaveClass(/highlight/);
  await expect(remaining.locator('td')).toHaveText(/^\d+ ★$/);
  // The reset is also said as a time of day.
  await expect(panel.locator('tr[data-header="x-ratelimit-reset"] td')).toHaveText(/^\d+ \(.*\d.*\) ★$/);
  const body = JSON.parse((await panel.locator('pre.body').textContent())!);
  expect(body).toHaveLength(2);
  // The body comes before the headers.
  const bodyFirst = await panel.locator('pre.body').evaluate(
    (pre) => !!(pre.compareDocumentPosition(pre.parentElement!.querySelector('table.headers')!) & Node.DOCUMENT_POSITION_FOLLOWING),
  );
  expect(bodyFirst).toBe(true);

  // Signed in but with "A pasted key" chosen and none pasted, the panel says it sends no
  // key, and it does not: the session's cookie stays behind too.
  await page.getByLabel('A pasted key').check();
  await expect(panel.locator('.sent-with')).toContainText('Sent without a key: paste one above, or sign in.');
  await panel.getByRole('button', { name: 'Send' }).click();
  await expect(panel.locator('.status-code')).toHaveText('401');
  await expect(panel.locator('pre.body')).toContainText('"code": "missing_api_key"');
});

test('a panel opened before hydration shows its form once hydrated', async ({ page }) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/pkg/*.wasm', async (route) => {
    await gate;
    await route.continue();
  });
  await page.goto('/docs', { waitUntil: 'domcontentloaded' });
  const panel = page.locator('article#op-listPets .try-it');
  await panel.locator('summary').click();
  await expect(panel.locator('.curl')).toBeVisible();
  release();
  await hydrated(page);
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  // Closed and opened again, it is the same one panel: started once.
  await panel.locator('summary').click();
  await panel.locator('summary').click();
  await expect(panel.locator('.try-it-form')).toHaveCount(1);
  await expect(panel.getByRole('button', { name: 'Send' })).toHaveCount(1);
});

test('one pasted key for the whole page, by keyboard alone; a bad key shows the Error object', async ({ page }) => {
  const key = cliKey('admin', 'e2e pasted');
  await page.goto('/docs');
  await hydrated(page);
  // Not signed in: the key bar offers the pasted key, once for every panel.
  await expect(page.getByLabel('A pasted key')).toBeChecked();
  await expect(page.getByLabel('My signed-in key (sign in first)')).toBeDisabled();
  await page.getByLabel('API key to send').focus();
  await page.keyboard.type('psk_0000000000_not-a-key');

  const panel = page.locator('article#op-createCategory .try-it');
  // Keyboard only: focus the panel's summary, open it, fill it, send it.
  await panel.locator('summary').focus();
  await page.keyboard.press('Enter');
  const body = panel.getByLabel('Body (JSON)');
  await expect(body).toHaveValue(/"name": "Dogs"/);
  await expect(panel.locator('.sent-with')).toContainText('Sent with the key pasted above.');
  await body.focus();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type(JSON.stringify({ name: unique('Axolotls') }));
  await page.keyboard.press('Tab');
  await expect(panel.getByRole('link', { name: 'Change the key' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(panel.locator('.status-code')).toHaveText('401');
  await expect(panel.locator('pre.body')).toContainText('"code": "invalid_api_key"');

  // The key changed once, above, is what every panel sends from then on.
  await page.getByLabel('API key to send').fill(key);
  await panel.getByRole('button', { name: 'Send' }).click();
  await expect(panel.locator('.status-code')).toHaveText('201');
  await expect(panel.locator('tr[data-header="location"] td')).toHaveText(/\/categories\/\d+/);
  const keys = page.locator('article#op-listKeys .try-it');
  await keys.getByText('Try it').click();
  await keys.getByRole('button', { name: 'Send' }).click();
  await expect(keys.locator('.status-code')).toHaveText('200');
  // With no key at all, a panel says what it will send.
  await page.getByLabel('API key to send').fill('');
  await expect(keys.locator('.sent-with')).toContainText('Sent without a key: paste one above, or sign in.');
});

test('the contents keep long paths whole, and a phone gets no wider than its screen', async ({ page }) => {
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto('/docs');
  const cut = await page.locator('nav.docs-toc a').evaluateAll((links) =>
    links
      .filter((a) => a.scrollWidth > a.clientWidth + 1 || a.getBoundingClientRect().right > a.closest('nav')!.getBoundingClientRect().right + 1)
      .map((a) => a.textContent),
  );
  expect(cut).toEqual([]);
  // The cards far down are drawn only when near the screen: a link to the last one
  // still lands on it.
  const lastLink = page.locator('nav.docs-toc a[href^="#op-"]').last();
  const target = (await lastLink.getAttribute('href'))!;
  await lastLink.click();
  await expect(page.locator(`article${target}`)).toBeInViewport();
  await expect(page.locator(`article${target} h4`)).toBeInViewport();
  const tall = await page.evaluate(() => document.documentElement.scrollHeight);
  console.log(`/docs at 1366 px: ${tall} px tall`);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/docs');
  await hydrated(page);
  await drawEverything(page);
  const wide = await page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && e.getClientRects().length > 0)
      .map((e) => e.tagName + '.' + e.className)
      .slice(0, 5),
  );
  expect(wide).toEqual([]);
  // On a phone the contents name sections and resources, not each of the operations.
  await expect(page.locator('nav.docs-toc .toc-operations').first()).toBeHidden();
  console.log(`/docs at 390 px: ${await page.evaluate(() => document.documentElement.scrollHeight)} px tall`);
});
