import { expect, test, cliKey, failOnPageErrors, hydrated, signIn, unique } from './helpers';

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
      await expect(article.locator('h3')).toContainText(`${method.toUpperCase()} /api/v1${path}`);
      const group = page.getByRole('region', { name: operation.tags?.[0] ?? 'Other', exact: true });
      await expect(group.locator(`article#op-${operation.operationId}`)).toHaveCount(1);
      // A deprecated operation is badged so, and not also "Stable".
      const stability: string = operation['x-stability'];
      const badge = operation.deprecated ? 'Deprecated' : stability[0].toUpperCase() + stability.slice(1);
      await expect(article.locator('.badges .badge')).toHaveText([badge]);
    }
  }
  // Parameters, bodies, statuses with their Error codes.
  const getPet = page.locator('article#op-getPetById');
  await expect(getPet.getByRole('cell', { name: 'petId (required)' })).toBeVisible();
  await expect(getPet.locator('tr', { hasText: '404' })).toContainText('not_found');
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
  await panel.getByText('Try it').click();
  await expect(panel.getByLabel('My signed-in key')).toBeChecked();
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
});

test('try it with a pasted key, by keyboard alone; a bad key shows the Error object', async ({ page }) => {
  const key = cliKey('admin', 'e2e pasted');
  await page.goto('/docs');
  await hydrated(page);
  const panel = page.locator('article#op-createCategory .try-it');
  // Keyboard only: focus the panel's summary, open it, fill it, send it.
  await panel.locator('summary').focus();
  await page.keyboard.press('Enter');
  await expect(panel.getByLabel('A pasted key')).toBeChecked();
  const body = panel.getByLabel('Body (JSON)');
  await expect(body).toHaveValue(/"name": "Dogs"/);
  await body.focus();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type(JSON.stringify({ name: unique('Axolotls') }));
  await page.keyboard.press('Tab');
  await expect(panel.getByLabel('A pasted key')).toBeFocused(); // the signed-in one is disabled
  await page.keyboard.press('Tab');
  await expect(panel.getByLabel('API key to send')).toBeFocused();
  await page.keyboard.type('psk_0000000000_not-a-key');
  await page.keyboard.press('Tab');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(panel.locator('.status-code')).toHaveText('401');
  await expect(panel.locator('pre.body')).toContainText('"code": "invalid_api_key"');

  await panel.getByLabel('API key to send').fill(key);
  await panel.getByRole('button', { name: 'Send' }).click();
  await expect(panel.locator('.status-code')).toHaveText('201');
  await expect(panel.locator('tr[data-header="location"] td')).toHaveText(/\/categories\/\d+/);
});
