import { Browser } from '@playwright/test';
import { WIDTHS, cliKey, expect, failOnPageErrors, hydrated, openMenu, shoot, signedInPage, test } from './helpers';

// A shopper is never stranded: getting a key from a pet's page leads back to the pet,
// and signing out of a private page lands on a page that says so.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

async function visitor(browser: Browser, size: { width: number; height: number }, javaScript: boolean) {
  const context = await browser.newContext({ viewport: size, javaScriptEnabled: javaScript });
  const page = await context.newPage();
  failOnPageErrors(page);
  return page;
}

for (const [width, size] of Object.entries(WIDTHS)) {
  for (const javaScript of [true, false]) {
    const how = javaScript ? '' : ', without JavaScript';
    test(`getting a key on a pet's page leads back to the pet (${width}${how})`, async ({ browser }) => {
      const page = await visitor(browser, size, javaScript);
      await page.goto('/?q=tweety');
      await page.getByRole('link', { name: 'Tweety' }).click();
      const petPage = page.url();
      if (javaScript) await hydrated(page);
      await page.locator('.order-box').getByRole('link', { name: 'create an account' }).click();
      await expect(page).toHaveURL(/\/sign-up\?next=%2Fpets%2F/);
      if (javaScript) await hydrated(page);
      await page.getByRole('button', { name: 'Create my key' }).click();
      await expect(page.locator('#new-key')).toContainText('psk_');
      await shoot(page, `return-sign-up-${width}${javaScript ? '' : '-no-js'}`);
      await page.getByRole('link', { name: 'Back to the page you came from' }).click();
      await expect(page).toHaveURL(petPage);
      await expect(page.getByRole('button', { name: 'Order' })).toBeVisible();
      await page.context().close();
    });

    test(`signing out of My orders says so, and signing in goes back there (${width}${how})`, async ({ browser }) => {
      const key = cliKey('customer', 'e2e signs out');
      const page = await signedInPage(browser, key, size, javaScript);
      await page.goto('/orders?state=open');
      if (javaScript) {
        await hydrated(page);
        await openMenu(page);
      }
      const answer = page.waitForResponse((response) => new URL(response.url()).pathname === '/sign-in');
      await page.getByRole('button', { name: 'Sign out' }).click();
      expect((await answer).status()).toBe(200);
      await expect(page).toHaveURL(/\/sign-in\?signed_out=1&next=%2Forders%3Fstate%3Dopen$/);
      await expect(page.getByRole('status')).toHaveText('You are signed out. Sign in again to go back.');
      await shoot(page, `return-signed-out-${width}${javaScript ? '' : '-no-js'}`);
      if (javaScript) await hydrated(page);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page).toHaveURL(/\/orders\?state=open$/);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('My orders');
      await page.context().close();
    });
  }
}
