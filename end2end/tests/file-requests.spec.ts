import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { AdminShell, InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { SharesPage } from '../pages/shares';

function tagged() {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

test('an admin requests a file; a visitor uploads it with progress and cancel; the admin downloads it', async ({ page, browser }) => {
  test.setTimeout(120_000);
  const tag = tagged();
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  await new AdminShell(page).expectSignedInAs(`Admin ${tag}`);
  const shares = new SharesPage(page);
  await shares.open();

  // The admin makes the upload link, with a note for the sender.
  const card = page.getByTestId('file-requests');
  await card.getByLabel(/Note for the sender/).fill(`Please send the signed form ${tag}`);
  await card.getByRole('button', { name: 'Create upload link' }).click();
  await expect(page.getByTestId('request-created')).toBeVisible();
  const link = await page.getByTestId('request-url').inputValue();
  expect(link).toMatch(/^http:\/\/localhost:\d+\/r\/[A-Za-z0-9_-]{43}$/);
  await expect(page.getByTestId('request-row').first().getByTestId('request-status')).toHaveText('Waiting for a file');

  // The visitor: a fresh browser, no session. Opening the page twice does not use the link up.
  const visitorContext = await browser.newContext();
  const visitor = await visitorContext.newPage();
  await visitor.goto(link);
  await visitor.reload();
  await expect(visitor.getByRole('heading', { name: 'Send a file' })).toBeVisible();
  await expect(visitor.getByTestId('request-note')).toHaveText(`Please send the signed form ${tag}`);
  await expect(visitor.locator('.page[data-hydrated]')).toHaveAttribute('data-hydrated', 'true');
  if (process.env.SCREENSHOT_DIR) await visitor.screenshot({ path: `${process.env.SCREENSHOT_DIR}/file-request-upload-en.png`, fullPage: true });

  // An upload held back by the network can be cancelled; nothing is received.
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await visitor.route('**/r/*', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    await held;
    await route.abort().catch(() => {}); // the browser may have dropped it already (cancelled)
  });
  const bytes = Buffer.alloc(2 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 10)) % 253;
  await visitor.getByLabel('File to send').setInputFiles({ name: `signed ${tag}.pdf`, mimeType: 'application/pdf', buffer: bytes });
  await visitor.getByTestId('send-file').click();
  await expect(visitor.getByTestId('upload-progress')).toBeVisible();
  await visitor.getByTestId('cancel-upload').click();
  await expect(visitor.getByTestId('upload-error')).toContainText('The upload was cancelled');
  release();
  await visitor.unroute('**/r/*');

  // Sent for real: the progress shows, then the thank-you.
  await visitor.getByTestId('send-file').click();
  await expect(visitor.getByTestId('request-thanks')).toContainText(`signed ${tag}.pdf`, { timeout: 30_000 });
  // The link is used up: a second look says so.
  await visitor.reload();
  await expect(visitor.getByTestId('request-used')).toBeVisible();
  await visitorContext.close();

  // The admin's list shows the received file (live), and it downloads whole.
  const row = shares.row(`signed ${tag}.pdf`);
  await expect(row.getByTestId('received-badge')).toBeVisible({ timeout: 15_000 });
  const downloadEvent = page.waitForEvent('download');
  await row.getByTestId('received-download').click();
  const download = await downloadEvent;
  expect(download.suggestedFilename()).toBe(`signed ${tag}.pdf`);
  expect((await readFile(await download.path())).equals(bytes)).toBe(true);
  await expect(page.getByTestId('request-row').first().getByTestId('request-status')).toHaveText('File received');
  if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/admin-shares-received-en.png`, fullPage: true });
});

test('the upload page works in Japanese and without JavaScript', async ({ browser, page }) => {
  const tag = tagged();
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  await page.goto('/admin/shares');
  await waitForAdminHydration(page);
  await page.getByTestId('file-requests').getByRole('button', { name: 'Create upload link' }).click();
  const link = await page.getByTestId('request-url').inputValue();

  const context = await browser.newContext({ locale: 'ja-JP', javaScriptEnabled: false });
  const visitor = await context.newPage();
  await visitor.goto(link);
  await expect(visitor.getByRole('heading', { name: 'ファイルを送信' })).toBeVisible();
  await visitor.getByLabel('送信するファイル').setInputFiles({ name: `報告 ${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('no script needed') });
  await visitor.getByRole('button', { name: 'ファイルを送信' }).click();
  await expect(visitor.getByRole('heading', { name: 'ありがとうございます。ファイルを受け取りました' })).toBeVisible();
  await context.close();

  await page.reload();
  await waitForAdminHydration(page);
  await expect(new SharesPage(page).row(`報告 ${tag}.txt`).getByTestId('received-badge')).toBeVisible();
});
