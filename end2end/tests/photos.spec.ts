import { Page } from '@playwright/test';
import { cliKey, expect, failOnPageErrors, hydrated, shoot, signIn, stockedPet, test, unique } from './helpers';

// Staff give a pet its photo in the console (a file picked, or dropped), see the upload
// go, replace and remove it, and edit its description and price; shoppers see the
// result. Runs after the catalog's own specs (it adds a pet).

test.beforeEach(async ({ page }) => failOnPageErrors(page));

/** A JPEG drawn by the browser itself: `width` × `height` of noise (which compresses
 *  badly, so the file is large enough for its upload to be watched). */
async function noiseJpeg(page: Page, width: number, height: number): Promise<Buffer> {
  const base64 = await page.evaluate(
    async ([w, h]) => {
      const canvas = document.createElement('canvas');
      canvas.width = w;
      canvas.height = h;
      const context = canvas.getContext('2d')!;
      const pixels = context.createImageData(w, h);
      for (let i = 0; i < pixels.data.length; i++) pixels.data[i] = (i % 4 === 3) ? 255 : Math.floor(Math.random() * 256);
      context.putImageData(pixels, 0, 0);
      const blob: Blob = await new Promise((done) => canvas.toBlob((b) => done(b!), 'image/jpeg', 0.95));
      const bytes = new Uint8Array(await blob.arrayBuffer());
      let text = '';
      for (const byte of bytes) text += String.fromCharCode(byte);
      return btoa(text);
    },
    [width, height],
  );
  return Buffer.from(base64, 'base64');
}

test('staff upload, replace and remove a photo, and edit the description and price', async ({ page }) => {
  test.setTimeout(90_000);
  const admin = cliKey('admin', 'e2e photo staff');
  await signIn(page, admin);
  const name = unique('Snap');
  const pet = await stockedPet(page, admin, name, 2);

  // Before: the shop draws a placeholder, and says so.
  await page.goto(`/pets/${pet}`);
  await expect(page.locator('.pet-photo .photo.placeholder')).toHaveAttribute('aria-label', `No photo of ${name} yet`);

  await page.goto(`/admin/pets/${pet}`);
  await hydrated(page);
  // A slow connection, so that the upload's progress can be seen.
  const network = await page.context().newCDPSession(page);
  await network.send('Network.enable');
  await network.send('Network.emulateNetworkConditions', {
    offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 600 * 1024,
  });
  const jpeg = await noiseJpeg(page, 1600, 1200);
  expect(jpeg.length).toBeGreaterThan(1_000_000);
  await page.getByLabel(/choose a file/).setInputFiles({ name: 'snap.jpg', mimeType: 'image/jpeg', buffer: jpeg });
  // The chosen file shows at once, and the bar moves while it goes.
  await expect(page.locator('.photo-current img')).toHaveAttribute('src', /^blob:/);
  const bar = page.locator('.upload-progress progress');
  await expect(bar).toBeVisible();
  await expect.poll(async () => Number(await bar.getAttribute('value') ?? 0)).toBeGreaterThan(0);
  await shoot(page, 'console-photo-uploading');
  await expect(page.getByRole('status').filter({ hasText: 'Photo saved.' })).toBeVisible({ timeout: 30_000 });
  await network.send('Network.emulateNetworkConditions', {
    offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1,
  });

  // Stored: the console's table and the shop show it.
  const stored = await (await page.request.get(`/api/v1/pets?ids=${pet}`, { headers: { 'X-API-Key': admin } })).json();
  const firstUrls: string[] = stored[0].photoUrls;
  expect(firstUrls).toHaveLength(3);
  await page.goto(`/admin/pets?q=${encodeURIComponent(name)}`);
  await expect(page.locator(`tr[data-pet-id="${pet}"] td.thumb img`)).toHaveAttribute('src', firstUrls[0]);
  await page.goto(`/pets/${pet}`);
  await expect(page.locator('.pet-photo img.photo')).toHaveAttribute('srcset', new RegExp(firstUrls[2]));

  // Replaced by dropping a file on the zone.
  await page.goto(`/admin/pets/${pet}`);
  await hydrated(page);
  const png = Buffer.from(await (await page.request.get(firstUrls[1])).body());
  const drop = await page.evaluateHandle((base64) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], 'again.webp', { type: 'image/webp' }));
    return data;
  }, png.toString('base64'));
  await page.locator('.dropzone').dispatchEvent('dragover', { dataTransfer: drop });
  await expect(page.locator('.dropzone')).toHaveClass(/dragging/);
  await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: drop });
  await expect(page.getByRole('status').filter({ hasText: 'Photo saved.' })).toBeVisible();
  const replaced = await (await page.request.get(`/api/v1/pets?ids=${pet}`, { headers: { 'X-API-Key': admin } })).json();
  expect(replaced[0].photoUrls[0]).not.toEqual(firstUrls[0]);
  expect((await page.request.get(firstUrls[0])).status()).toBe(404);

  // A file that is not what it says is refused, in words, and the photo stays.
  await page.getByLabel(/choose a file/).setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not a picture') });
  await expect(page.locator('.photo-actions .form-error')).toHaveText('That photo cannot be used: the file is not a PNG image.');
  const after = await (await page.request.get(`/api/v1/pets?ids=${pet}`, { headers: { 'X-API-Key': admin } })).json();
  expect(after[0].photoUrls).toEqual(replaced[0].photoUrls);

  // Description and price, typed in euros.
  await page.reload();
  await hydrated(page);
  await page.getByLabel('Price (EUR)').fill('19.99');
  await page.getByLabel('Description').fill('Quick and curious.\n\nLoves a warm rock.');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  // The form's own navigation back to the staff page may still be under way once the
  // status shows; a `goto` then would be interrupted by it.
  await page.waitForLoadState('networkidle');
  await page.goto(`/pets/${pet}`);
  await expect(page.locator('.pet-about .price')).toHaveText('€19.99');
  await expect(page.locator('.description p')).toHaveText(['Quick and curious.', 'Loves a warm rock.']);

  // Removed, after a confirmation: the placeholder again.
  await page.goto(`/admin/pets/${pet}`);
  await hydrated(page);
  await page.getByText('Remove the photo…').click();
  await page.getByRole('button', { name: 'Yes, remove it' }).click();
  await expect(page.locator('.photo-current .photo.placeholder')).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'The photo was removed.' })).toBeVisible();
  const removed = await (await page.request.get(`/api/v1/pets?ids=${pet}`, { headers: { 'X-API-Key': admin } })).json();
  expect(removed[0].photoUrls).toEqual([]);
  await shoot(page, 'console-photo-removed');
});
