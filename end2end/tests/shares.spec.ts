import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { AdminShell, InvitePage, VirtualAuthenticator, newInviteLink } from '../pages/admin';
import { ShareLandingPage, SharesPage } from '../pages/shares';

function tagged() {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

test('an admin shares a file; a recipient downloads it once, and the second download is refused', async ({ page, browser }) => {
  const tag = tagged();
  // 3 MiB of non-repeating bytes: a truncated or shifted download would not compare equal.
  const bytes = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 12)) % 251;
  const fileName = `Quarterly report ${tag} — ü.pdf`;

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  await new AdminShell(page).expectSignedInAs(`Admin ${tag}`);

  const shares = new SharesPage(page);
  await shares.open();
  const link = await shares.share({ name: fileName, mimeType: 'application/pdf', buffer: bytes }, '1 day', `for ${tag}`);
  expect(link).toMatch(/^http:\/\/localhost:\d+\/s\/[A-Za-z0-9_-]{43}$/);
  // The same link as a QR code, for a phone in the room.
  expect(await shares.qrCodeText()).toBe(link);
  await expect(shares.row(fileName).getByTestId('share-status')).toHaveText('Active');

  // The recipient: a fresh browser context, no session.
  const recipientContext = await browser.newContext();
  const recipient = await recipientContext.newPage();
  const landing = new ShareLandingPage(recipient);
  await recipient.goto(link);
  await expect(recipient.getByRole('heading', { name: 'A file was shared with you' })).toBeVisible();
  await expect(recipient.getByTestId('share-file-name')).toHaveText(fileName);
  await expect(recipient.getByTestId('share-size')).toHaveText('3.0 MiB');
  // Opening the page (even twice) did not use the link up.
  await recipient.reload();
  await expect(landing.download()).toBeVisible();
  await landing.waitForHydration();

  const downloadEvent = recipient.waitForEvent('download');
  await landing.download().click();
  const download = await downloadEvent;
  expect(download.suggestedFilename()).toBe(fileName);
  const received = await readFile(await download.path());
  expect(received.equals(bytes)).toBe(true);
  await expect(recipient.getByText('Your download has started.')).toBeVisible();

  // A second download: the 410 page says it was already downloaded.
  const second = recipient.waitForResponse((r) => r.request().method() === 'POST' && r.url() === link);
  await landing.download().click();
  expect((await second).status()).toBe(410);
  await expect(recipient.getByRole('heading', { name: 'This file was already downloaded' })).toBeVisible();
  await recipientContext.close();

  // The admin's list shows it as downloaded.
  await page.reload();
  await expect(shares.row(fileName).getByTestId('share-status')).toHaveText('Downloaded');
});

test('an upload over the limit is refused in the browser before it starts, and a revoked link stops working', async ({ page, browser }) => {
  const tag = tagged();
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  const shares = new SharesPage(page);
  await shares.open();

  // scripts/e2e.sh limits shares to 8 MiB.
  await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(9 * 1024 * 1024) });
  await page.getByRole('button', { name: 'Upload and create link' }).click();
  await expect(page.locator('#share-file-error')).toHaveText('This file is 9.0 MiB; the limit is 8.0 MiB.');

  const link = await shares.share({ name: `note-${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('hello') });
  page.once('dialog', (d) => d.accept());
  await shares.row(`note-${tag}.txt`).getByRole('button', { name: 'Revoke' }).click();
  await expect(page.getByTestId('shares-message')).toContainText('was revoked');
  await expect(shares.row(`note-${tag}.txt`).getByTestId('share-status')).toHaveText(/Expired/);

  const recipient = await browser.newPage();
  const res = await recipient.goto(link);
  expect(res?.status()).toBe(410);
  await expect(recipient.getByRole('heading', { name: 'This link has expired' })).toBeVisible();
  await recipient.close();
});

test('an upload shows its progress, and a cancelled upload leaves no file behind', { tag: '@server' }, async ({ page }) => {
  const tag = tagged();
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  const shares = new SharesPage(page);
  await shares.open();
  const storage = process.env.E2E_STORAGE_DIR;
  if (!storage) throw new Error('E2E_STORAGE_DIR must name the server storage folder (scripts/e2e.sh sets it)');

  // A slow uplink (1 MB/s) so the upload is still running when we look.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 10_000_000, uploadThroughput: 1_000_000 });
  await page.getByLabel('File', { exact: true }).setInputFiles({ name: `slow-${tag}.bin`, mimeType: 'application/octet-stream', buffer: Buffer.alloc(6 * 1024 * 1024, 1) });
  await page.getByRole('button', { name: 'Upload and create link' }).click();
  const progress = page.getByTestId('upload-progress');
  await expect(progress).toContainText(/[1-9]\d? % · [\d.]+ (KiB|MiB) of 6\.0 MiB/);
  await expect(page.getByRole('button', { name: 'Upload and create link' })).toBeDisabled();

  await page.getByRole('button', { name: 'Cancel upload' }).click();
  await expect(page.getByTestId('upload-error')).toHaveText('The upload was cancelled; nothing was shared.');
  await expect(progress).toHaveCount(0);
  // The server removes the partial file when the connection drops (other tests upload into the
  // same folder, so look for partial files and for a file of this upload's size).
  // Share files live in the folder's shares/ namespace.
  const leftovers = async () => {
    const folder = join(storage, 'shares');
    const names = await readdir(folder).catch(() => [] as string[]);
    const sizes = await Promise.all(names.map(async (n) => (await stat(join(folder, n)).catch(() => null))?.size ?? 0));
    return names.filter((n, i) => n.endsWith('.part') || sizes[i] === 6 * 1024 * 1024);
  };
  await expect.poll(leftovers).toEqual([]);
  await expect(shares.row(`slow-${tag}.bin`)).toHaveCount(0);
});
