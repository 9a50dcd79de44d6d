import { Browser, Page } from '@playwright/test';
import * as path from 'node:path';
import { expect, test, cliKey, failOnPageErrors, hydrated, ordersOf, signIn, stockedPet, storeURL, unique, WIDTHS } from './helpers';

const SHOTS = path.resolve(__dirname, '../../target/screenshots');

// Accounts with passkeys, in Chromium's virtual authenticator (the DevTools protocol's
// WebAuthn domain): a platform authenticator with user verification that keeps
// discoverable passkeys, as a phone or a laptop does. A relying party cannot be an IP
// address: the store serves on 127.0.0.1, its relying party is localhost on that port,
// so these pages are opened at http://localhost:<port>.

// Each browser here speaks for a client address of its own (the tests' server trusts
// loopback's X-Forwarded-For): an account is a sign-up, and one address may make five a
// minute, which this file alone would pass on the tests' one address.
let lastAddress = Math.floor(Math.random() * 200);
function ownAddress(): { 'X-Forwarded-For': string } {
  lastAddress = (lastAddress + 1) % 250;
  return { 'X-Forwarded-For': `192.0.2.${lastAddress + 1}` };
}

test.beforeEach(async ({ page }) => {
  failOnPageErrors(page);
  await page.setExtraHTTPHeaders(ownAddress());
});

/** A page in a browser of its own, from an address of its own. */
async function newBrowser(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext({ extraHTTPHeaders: ownAddress() })).newPage();
  failOnPageErrors(page);
  return page;
}

function localhost(): string {
  const url = new URL(storeURL);
  url.hostname = 'localhost';
  return url.origin;
}

/**
 * A virtual authenticator for `page`, answering every ceremony as a user would. It
 * answers an autofill request (conditional mediation) at once, as a shopper picking
 * the passkey from the list, so these pages stand for a browser without passkey
 * autofill unless `autofill` is set: the tests that press the buttons press them.
 */
async function withAuthenticator(page: Page, { autofill = false } = {}) {
  if (!autofill) {
    await page.addInitScript(() => {
      Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: async () => false });
    });
  }
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
}

/** Makes an account on /sign-up with the page's authenticator; its recovery codes. */
async function signUp(page: Page): Promise<string[]> {
  await page.goto(`${localhost()}/sign-up`);
  await hydrated(page);
  await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
  const codes = page.locator('.recovery-codes code');
  await expect(codes).toHaveCount(10);
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
  return codes.allTextContents();
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toBeVisible();
}

test('a shopper makes an account with a passkey, signs in with it after signing out, and orders', async ({ page }) => {
  const passkeys = await withAuthenticator(page);
  const codes = await signUp(page);
  expect(new Set(codes).size).toBe(10);
  for (const code of codes) expect(code).toMatch(/^[2-9a-z]{4}-[2-9a-z]{4}-[2-9a-z]{4}$/);
  const stored = await passkeys();
  expect(stored).toHaveLength(1);
  expect(stored[0].isResidentCredential, 'a discoverable passkey: signing in needs no user name').toBe(true);
  expect(stored[0].rpId).toBe('localhost');
  await signOut(page);

  const pet = await stockedPet(page, cliKey('admin', 'e2e passkeys'), unique('Passkey pet'), 3);
  await page.goto(`${localhost()}/sign-in?next=${encodeURIComponent(`/pets/${pet}`)}`);
  await hydrated(page);
  await page.getByRole('button', { name: 'Continue with a passkey' }).click();
  await expect(page).toHaveURL(new RegExp(`/pets/${pet}$`));
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
  await hydrated(page);
  await page.getByLabel('Quantity').fill('1');
  await page.getByRole('button', { name: 'Order' }).click();
  await expect(page.getByRole('status')).toContainText('Ordered 1');
  await page.goto(`${localhost()}/orders`);
  await expect(page.locator('main')).toContainText('Passkey pet');
  await page.screenshot({ path: path.join(SHOTS, 'passkeys-orders.png'), fullPage: true });
});

test("the sign-in page offers the account's passkey in the browser's autofill", async ({ page }) => {
  await withAuthenticator(page, { autofill: true });
  await signUp(page);
  await signOut(page);
  // The field the browser's autofill offers passkeys in, as the server sends it (read
  // apart: in the page, the authenticator may have signed in and gone on before a
  // look at the field).
  const html = await (await page.request.get(`${localhost()}/sign-in`)).text();
  expect(html).toMatch(/<input[^>]*autocomplete="username webauthn"/);
  // The authenticator picks the account's passkey at once, as a shopper would from
  // the list, and no button is pressed.
  await page.goto(`${localhost()}/sign-in?next=%2Forders`);
  await expect(page).toHaveURL(/\/orders$/);
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
});

test("a press of the button ends the autofill's waiting request before its own ceremony", async ({ browser }) => {
  const maker = await newBrowser(browser);
  const passkeys = await withAuthenticator(maker);
  await signUp(maker);
  const [passkey] = await passkeys();
  await maker.context().close();

  // A browser whose autofill request waits, as a shopper's does until they pick a
  // passkey (no virtual authenticator yet: Chromium's own, which leaves it open).
  const page = await newBrowser(browser);
  await page.goto(`${localhost()}/sign-in`);
  await hydrated(page);
  await expect(page.locator('form.passkey-sign-in')).toHaveAttribute('data-autofill', 'waiting');
  // The account's passkey, now in this browser's authenticator. A browser takes one
  // request at a time: the button's would fail ("A request is already pending") had
  // the waiting one not been ended.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: passkey });
  await page.getByRole('button', { name: 'Continue with a passkey' }).click();
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
  await page.context().close();
});

test('without JavaScript, the passkey button keeps the page to go on to', async ({ browser }) => {
  // No ceremony runs without JavaScript: the form asks for the same page again, which
  // must still lead on to where the shopper was going once they sign in another way.
  const context = await browser.newContext({ javaScriptEnabled: false, extraHTTPHeaders: ownAddress() });
  const page = await context.newPage();
  await page.goto(`${localhost()}/sign-in?next=%2Forders`);
  await page.getByRole('button', { name: 'Continue with a passkey' }).click();
  await expect(page).toHaveURL(/\/sign-in\?(.*&)?next=%2Forders(&|$)/);
  await expect(page.getByRole('link', { name: 'Create one' })).toHaveAttribute('href', '/sign-up?next=%2Forders');
  await context.close();
});

test('a recovery code signs in once; a passkey from no account here does not sign in', async ({ browser }) => {
  const maker = await newBrowser(browser);
  await withAuthenticator(maker);
  const codes = await signUp(maker);
  await maker.context().close();

  // Another browser, with no passkey of this account.
  const page = await newBrowser(browser);
  const context = page.context();
  await withAuthenticator(page);
  await page.goto(`${localhost()}/sign-in`);
  await hydrated(page);
  // Its authenticator has no passkey for this store: nothing to sign in with.
  await page.getByRole('button', { name: 'Continue with a passkey' }).click();
  await expect(page.getByRole('alert')).toContainText('No passkey was used');
  await expect(page.locator('.who')).toHaveCount(0);

  await page.getByText('Lost your passkey? Use a recovery code').click();
  await page.getByLabel('Recovery code').fill(codes[2].toUpperCase());
  await page.getByRole('button', { name: 'Use the code' }).click();
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
  await signOut(page);

  await page.goto(`${localhost()}/sign-in`);
  await page.getByText('Lost your passkey? Use a recovery code').click();
  await page.getByLabel('Recovery code').fill(codes[2]);
  await page.getByRole('button', { name: 'Use the code' }).click();
  await expect(page.getByRole('alert')).toContainText('That recovery code did not work');
  await expect(page.getByLabel('Recovery code')).toHaveValue('');
  await expect(page.locator('.who')).toHaveCount(0);
  await context.close();
});

test('the sign-up and sign-in pages lead with passkeys at both widths', async ({ page }) => {
  for (const [width, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    for (const pagePath of ['/sign-up', '/sign-in']) {
      await page.goto(`${localhost()}${pagePath}`);
      await hydrated(page);
      const passkey = page.getByRole('button', { name: /passkey/ });
      await expect(passkey).toBeVisible();
      // Above the API key's form, in the first screenful.
      const keyForm = page.getByRole('heading', { name: /API key/ });
      expect((await passkey.boundingBox())!.y).toBeLessThan((await keyForm.boundingBox())!.y);
      expect((await passkey.boundingBox())!.y).toBeLessThan(size.height);
      await page.screenshot({ path: path.join(SHOTS, `passkeys${pagePath.replace('/', '-')}-${width}.png`), fullPage: true });
    }
  }
});

// Tagged @postgres: the account page over PostgreSQL too (make test-e2e).
test('a recovery code leads to adding a passkey; removing the first signs its browser out, and it signs in no more', { tag: '@postgres' }, async ({ browser }) => {
  // The phone: the account is made there.
  const phone = await newBrowser(browser);
  await withAuthenticator(phone);
  const codes = await signUp(phone);
  await phone.goto(`${localhost()}/account`);
  const phoneRows = phone.locator('.passkey-list li');
  await expect(phoneRows).toHaveCount(1);
  await expect(phoneRows.first()).toContainText('This browser');
  await expect(phone.locator('.recovery-left')).toHaveText('10 recovery codes left.');

  // The laptop has no passkey yet: a recovery code signs it in, on the account page.
  const laptop = await newBrowser(browser);
  await withAuthenticator(laptop);
  await laptop.goto(`${localhost()}/sign-in`);
  await laptop.getByText('Lost your passkey? Use a recovery code').click();
  await laptop.getByLabel('Recovery code').fill(codes[0]);
  await laptop.getByRole('button', { name: 'Use the code' }).click();
  await expect(laptop).toHaveURL(/\/account$/);
  await expect(laptop.getByRole('status').first()).toContainText('Add a passkey for this device');
  await hydrated(laptop);
  await laptop.getByLabel('Name of the new passkey').fill('Laptop');
  await laptop.getByRole('button', { name: 'Add a passkey' }).click();
  await expect(laptop).toHaveURL(/\/account\?added=1$/);
  const rows = laptop.locator('.passkey-list li');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toContainText('Laptop');
  await expect(laptop.locator('.recovery-left')).toHaveText('9 recovery codes left.');
  await laptop.screenshot({ path: path.join(SHOTS, 'passkeys-account.png'), fullPage: true });

  // The first passkey removed from the laptop: the phone's session, which it opened, ends.
  await laptop.getByRole('button', { name: 'Remove “The passkey this account was made with”' }).click();
  await expect(laptop.getByRole('status').first()).toContainText('the browser it signed in is signed out');
  await expect(rows).toHaveCount(1);
  await expect(laptop.locator('.who')).toHaveText('Signed in · Customer');
  await phone.reload();
  await expect(phone.locator('.who')).toHaveCount(0);
  // Its passkey is still on the phone, but the store no longer knows it.
  await phone.goto(`${localhost()}/sign-in`);
  await hydrated(phone);
  await phone.getByRole('button', { name: 'Continue with a passkey' }).click();
  await expect(phone.getByRole('alert')).toContainText('That passkey did not sign you in');
  await expect(phone.locator('.who')).toHaveCount(0);

  // The laptop's own passkey signs it in again.
  await signOut(laptop);
  await laptop.goto(`${localhost()}/sign-in`);
  await hydrated(laptop);
  await laptop.getByRole('button', { name: 'Continue with a passkey' }).click();
  await expect(laptop.locator('.who')).toHaveText('Signed in · Customer');
  await phone.context().close();
  await laptop.context().close();
});

test("the account's API key: a new one is shown once, orders through the API as the account, and the old one stops", async ({ page, browser }) => {
  await withAuthenticator(page);
  await signUp(page);
  const name = unique('Key pet');
  const pet = await stockedPet(page, cliKey('admin', 'e2e passkeys'), name, 4);
  await page.goto(`${localhost()}/pets/${pet}`);
  await hydrated(page);
  await page.getByRole('button', { name: 'Order' }).click();
  await expect(page.getByRole('status')).toContainText(`Ordered 1 × ${name}`);

  await page.goto(`${localhost()}/account`);
  await expect(page.locator('.key-start')).toHaveText(/^psk_[0-9a-f]+_$/);
  const newKey = async () => {
    await page.getByLabel(/Yes, make a new key/).check();
    await page.getByRole('button', { name: 'Show a new key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    expect(key).toMatch(/^psk_[0-9a-f]+_/);
    return key;
  };
  const first = await newKey();
  // The account's orders, through the API with its key.
  const orders = await ordersOf(page, first, pet);
  expect(orders.map((order) => order.quantity)).toEqual([1]);
  // This browser stays signed in; another new key makes the first stop working.
  await page.goto(`${localhost()}/account`);
  await expect(page.locator('.who')).toHaveText('Signed in · Customer');
  const second = await newKey();
  expect(second).not.toBe(first);
  const refused = await page.request.get(`/api/v1/store/orders?petId=${pet}`, { headers: { 'X-API-Key': first } });
  expect(refused.status()).toBe(401);
  expect(await ordersOf(page, second, pet)).toEqual(orders);

  // Whoever holds the key signs in with it, but cannot change the account's passkeys or key.
  const holder = await newBrowser(browser);
  await signIn(holder, second);
  // (At the address the key signed in on: a session cookie belongs to its host.)
  await holder.goto('/account');
  await expect(holder.getByRole('note')).toContainText('You signed in with your API key');
  await expect(holder.getByRole('button', { name: /Remove|Show a new key|Add a passkey/ })).toHaveCount(0);
  const origin = { Origin: new URL(storeURL).origin };
  for (const [fn, form] of [['new_api_key', { confirm: 'yes' }], ['remove_passkey', { id: '1' }]] as const) {
    const answer = await holder.request.post(`/_app/${fn}`, { form, headers: origin });
    expect(answer.status(), fn).toBe(403);
    expect(await answer.text(), fn).toContain('sign in with a passkey or a recovery code');
  }
  expect(await ordersOf(page, second, pet)).toEqual(orders);
  await holder.context().close();
});

test('failed sign-ins with recovery codes are throttled for the address they come from', async ({ browser }) => {
  // From an address of its own (the tests' server trusts loopback's X-Forwarded-For),
  // so that the refusals leave every other test's address alone.
  const address = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
  const context = await browser.newContext({ extraHTTPHeaders: { 'X-Forwarded-For': address } });
  const page = await context.newPage();
  failOnPageErrors(page);
  // A Free key's minute of failed attempts (60), sent as the form would send them.
  for (let n = 0; n < 60; n++) {
    const answer = await page.request.post(`${localhost()}/_app/recover`, { form: { code: `nope-nope-${n}` } });
    expect(answer.status(), `attempt ${n + 1}`).toBe(401);
  }
  await page.goto(`${localhost()}/sign-in`);
  await page.getByText('Lost your passkey? Use a recovery code').click();
  await page.getByLabel('Recovery code').fill('nope-nope-nope');
  await page.getByRole('button', { name: 'Use the code' }).click();
  await expect(page.getByRole('alert')).toContainText(/too many/i);
  await context.close();
});

test('staff issue a one-time sign-in link from the console; it signs the shopper in once, on the account page', async ({ browser }) => {
  // A shopper with an account, who tells staff their key's number.
  const shopper = await newBrowser(browser);
  await withAuthenticator(shopper);
  await signUp(shopper);
  await shopper.goto(`${localhost()}/account`);
  const keyId = (await shopper.locator('.key-id').textContent())!.replace('#', '');
  await shopper.context().close();

  const staff = await newBrowser(browser);
  await signIn(staff, cliKey('admin', 'e2e sign-in links'));
  await staff.goto('/admin/keys');
  await staff.getByRole('button', { name: `Sign-in link for key ${keyId}` }).click();
  await expect(staff.getByRole('status').first()).toContainText(`A sign-in link for key #${keyId}`);
  const link = (await staff.locator('#sign-in-link').textContent())!;
  expect(link).toMatch(new RegExp(`^${localhost()}/sign-in\\?code=[2-9a-z-]{24}$`));
  // Shown once: the page again has no link.
  await staff.goto('/admin/keys');
  await expect(staff.locator('#sign-in-link')).toHaveCount(0);
  await staff.context().close();

  // Opened on a new device: the code is filled in; sending it signs in, on the account page.
  const device = await newBrowser(browser);
  const opened = await device.goto(link);
  expect(opened!.headers()['cache-control']).toBe('no-store');
  await expect(device.getByLabel('Recovery code')).toBeVisible();
  await device.getByRole('button', { name: 'Use the code' }).click();
  await expect(device).toHaveURL(/\/account$/);
  await expect(device.locator('.key-id')).toHaveText(`#${keyId}`);
  await signOut(device);
  // Once only.
  await device.goto(link);
  await device.getByRole('button', { name: 'Use the code' }).click();
  await expect(device.getByRole('alert')).toContainText('That recovery code did not work');
  await device.context().close();
});
