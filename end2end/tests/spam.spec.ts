import { expect, test } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage, uniqueInquiry } from '../pages/contact-page';

test('a person typing at normal speed sends without noticing the puzzle, and the message reaches the inbox', async ({ page, browser }) => {
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  const inquiry = uniqueInquiry('typed');
  // About 25 characters a second, as people type.
  await contact.name.pressSequentially(inquiry.name, { delay: 40 });
  await contact.email.pressSequentially(inquiry.email, { delay: 40 });
  await contact.message.pressSequentially(inquiry.message, { delay: 40 });
  // The proof of work was found in the background while the visitor typed.
  const proof = page.getByTestId('contact-proof');
  await expect(proof).toHaveAttribute('data-solving', 'false');
  expect(await proof.inputValue()).not.toBe('');
  // Every keystroke reached the field (nothing blocked typing).
  await expect(contact.message).toHaveValue(inquiry.message);
  await contact.send.click();
  await expect(contact.success).toContainText('your message was sent');

  // The admin finds it in the inbox, and not in the Spam tab.
  const admin = await (await browser.newContext()).newPage();
  await VirtualAuthenticator.attach(admin);
  await new InvitePage(admin).join(newInviteLink('Spam admin'), 'Spam admin');
  await admin.goto('/admin/inbox');
  await waitForAdminHydration(admin);
  await admin.getByLabel('Search name, email and message').fill(inquiry.email);
  await admin.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(admin.getByTestId('inquiry-row')).toHaveCount(1);
  await admin.getByTestId('spam-tab').click();
  await expect(admin.getByTestId('spam-intro')).toBeVisible();
  await expect(admin.getByTestId('spam-row').filter({ hasText: inquiry.email })).toHaveCount(0);
});

test('without JavaScript the form still sends; the message waits under Spam until "Not spam" moves it to the inbox', async ({ page, browser }) => {
  const plain = await browser.newContext({ javaScriptEnabled: false });
  const visitor = await plain.newPage();
  const contact = new ContactPage(visitor);
  await contact.open();
  const inquiry = uniqueInquiry('nojs-spam');
  await contact.fill(inquiry);
  await contact.send.click();
  // The same thank-you as everyone else.
  await expect(visitor).toHaveURL(/\?sent=1/);
  await expect(contact.success).toContainText('your message was sent');
  await plain.close();

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink('Spam reviewer'), 'Spam reviewer');
  await page.goto('/admin/inbox?tab=spam');
  await waitForAdminHydration(page);
  const row = page.getByTestId('spam-row').filter({ hasText: inquiry.email });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('spam-signals')).toContainText('No proof of work (no JavaScript)');
  await row.getByRole('button', { name: 'Not spam' }).click();
  await expect(page.getByTestId('spam-message')).toContainText('Moved to the inbox.');
  await expect(row).toHaveCount(0);

  await page.goto('/admin/inbox');
  await waitForAdminHydration(page);
  await page.getByLabel('Search name, email and message').fill(inquiry.email);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(page.getByTestId('inquiry-row')).toHaveCount(1);

  // The dashboard's figures for today show the quarantine and its signal.
  await page.goto('/admin');
  await waitForAdminHydration(page);
  const today = page.getByTestId('figures-row').first();
  await expect(today.getByTestId('fig-signals')).toContainText('No proof of work');
});
