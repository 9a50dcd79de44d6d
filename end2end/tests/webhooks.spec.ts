import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { Page } from '@playwright/test';
import { expect, test, cliKey, failOnPageErrors, hydrated, signIn } from './helpers';

// The console's webhook pages, against a receiver of the test's own (a Node server on
// loopback): staff register an endpoint and copy its secret (shown once), send a test
// ping the receiver verifies as docs/api.md shows, read the delivery log, send an
// attempt again, disable the endpoint and delete it.

test.beforeEach(async ({ page }) => failOnPageErrors(page));

type Received = { headers: http.IncomingHttpHeaders; body: string };

/** A receiver that answers every POST 204 and keeps what it was sent. */
async function receiver(): Promise<{ url: string; got: Received[]; close: () => void }> {
  const got: Received[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      got.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, got, close: () => server.close() };
}

/** Standard Webhooks, by hand: HMAC-SHA256 of `id.timestamp.body` with the secret's key. */
function signed(secret: string, delivery: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const content = `${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`;
  const expected = `v1,${crypto.createHmac('sha256', key).update(content).digest('base64')}`;
  return String(delivery.headers['webhook-signature']).split(' ').includes(expected);
}

async function staffPage(page: Page, path: string) {
  await page.goto(path);
  await hydrated(page);
}

test('staff register an endpoint, copy its secret once, test it and read its log', async ({ page }) => {
  const sink = await receiver();
  try {
    await signIn(page, cliKey('admin', 'e2e webhooks'));
    await staffPage(page, '/admin/webhooks');
    const form = page.getByRole('region', { name: 'New endpoint' });
    // No event type ticked: refused, and what was typed stays.
    await form.getByLabel('URL').fill(sink.url);
    await form.getByLabel('All events').uncheck();
    await form.getByRole('button', { name: 'Register endpoint' }).click();
    await expect(form.getByRole('alert')).toContainText('at least one event type');
    await expect(form.getByLabel('URL')).toHaveValue(sink.url);

    await form.getByLabel('Description').fill('The e2e receiver');
    await form.getByLabel('order.created').check();
    await form.getByLabel('inventory.out_of_stock').check();
    await form.getByRole('button', { name: 'Register endpoint' }).click();
    await expect(form.getByRole('status').first()).toContainText('Registered endpoint #');
    const secret = (await form.locator('#webhook-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    // The page stayed to show the secret (never carried to another page in a cookie).
    await form.getByRole('link', { name: 'Show the list with it' }).click();
    await hydrated(page);
    const row = page.locator('tr[data-webhook-id]', { hasText: sink.url });
    await expect(row).toContainText('inventory.out_of_stock, order.created');
    await expect(row).toContainText('Enabled');

    await row.getByRole('button', { name: 'Send test' }).click();
    await expect(page.getByText('Sent a ping to endpoint')).toBeVisible();
    await expect(page.locator('#webhook-secret'), 'the secret was shown once').toHaveCount(0);
    await expect.poll(() => sink.got.length).toBe(1);
    expect(signed(secret, sink.got[0]), 'signed with the secret shown').toBe(true);
    expect(JSON.parse(sink.got[0].body).type).toBe('ping');

    await page.getByRole('link', { name: 'Its deliveries' }).click();
    await hydrated(page);
    const attempt = page.locator('tr[data-delivery-id]').first();
    // The log is drawn when the page is: show it again until the attempt is in.
    await expect(async () => {
      await page.reload();
      await expect(attempt).toContainText('Delivered', { timeout: 500 });
    }).toPass({ timeout: 10_000 });
    await hydrated(page);
    await expect(attempt).toContainText('ping');
    await expect(attempt).toContainText('HTTP 204');
    // Folded under the attempt: the body it sent, as the receiver got it; a 204 has no answer body.
    const details = page.locator('tr.delivery-more details').first();
    await details.getByText('What was sent and answered').click();
    expect(JSON.parse((await details.locator('pre.payload').textContent())!)).toEqual(JSON.parse(sink.got[0].body));
    await expect(details.locator('.response-body')).toHaveText('No answer body.');
    await attempt.getByRole('button', { name: 'Send again' }).click();
    await expect(page.getByText(/Sending event evt_\w+ again \(attempt 2\)/)).toBeVisible();
    await expect.poll(() => sink.got.length).toBe(2);
    expect(sink.got[1].headers['webhook-id'], 'the same event, the same id').toBe(sink.got[0].headers['webhook-id']);

    await page.getByRole('link', { name: '← All endpoints' }).click();
    await hydrated(page);
    await row.getByRole('button', { name: 'Disable' }).click();
    await expect(row).toContainText('Disabled');
    await row.getByText(/^Delete endpoint \d+…$/).click();
    await row.getByRole('button', { name: /^Yes, delete endpoint/ }).click();
    await expect(page.getByText(/Deleted endpoint #\d+\./)).toBeVisible();
    await expect(row).toHaveCount(0);
  } finally {
    sink.close();
  }
});
