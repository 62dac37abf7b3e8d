import { expect, test } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { SharesPage, ShareLandingPage } from '../pages/shares';

test('the dashboard and the inbox update without a reload when an inquiry arrives or a share is downloaded', async ({ page, browser }) => {
  test.setTimeout(60_000);
  const tag = `Live ${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(tag), tag);
  const shares = new SharesPage(page);
  await shares.open();
  const link = await shares.share({ name: `${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('live') });

  await page.goto('/admin');
  await waitForAdminHydration(page);
  await expect(page.locator('html')).toHaveAttribute('data-live', 'on');
  const total = page.getByTestId('count-total');
  const before = Number(await total.textContent());
  const activeBefore = Number(await page.getByTestId('shares-active').textContent());
  // Nothing reloads the page below: a marker set now would be gone after a reload.
  await page.evaluate(() => ((window as any).__notReloaded = true));

  // A visitor in another browser sends a message.
  const visitorContext = await browser.newContext();
  const contact = new ContactPage(await visitorContext.newPage());
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: tag, email: 'live@example.com', message: 'Does the dashboard see me?' });
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  // (Other tests run meanwhile: at least this one more.)
  await expect.poll(async () => Number(await total.textContent())).toBeGreaterThan(before);

  // A recipient downloads the shared file: the active links go down by one.
  const recipient = await visitorContext.newPage();
  await recipient.goto(link);
  const landing = new ShareLandingPage(recipient);
  await landing.waitForHydration();
  const download = recipient.waitForEvent('download');
  await landing.download().click();
  await download;
  await expect.poll(async () => Number(await page.getByTestId('shares-active').textContent())).not.toBe(activeBefore);
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);

  // The inbox shows a new inquiry as it arrives.
  await page.getByRole('link', { name: 'Inbox', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Inbox', exact: true })).toBeVisible();
  await page.evaluate(() => ((window as any).__notReloaded = true));
  const second = `${tag} second`;
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: second, email: 'live2@example.com', message: 'And the inbox?' });
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  await expect(page.getByTestId('inquiry-row').filter({ hasText: second })).toBeVisible();
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
  await visitorContext.close();
});
