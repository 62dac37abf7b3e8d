import { expect, test, type Locator, type Page } from '@playwright/test';
import { AdminShell, InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { SharesPage } from '../pages/shares';

/** Presses Tab until `target` has the focus (at most 60 times), as a keyboard user moves. */
async function tabTo(page: Page, target: Locator) {
  for (let i = 0; i < 60; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${target}`);
}

/** The focused element shows where the focus is (an outline or a box shadow). */
async function expectVisibleFocus(target: Locator) {
  const style = await target.evaluate((el) => {
    const s = getComputedStyle(el);
    return { outline: s.outlineStyle, width: parseFloat(s.outlineWidth), shadow: s.boxShadow };
  });
  expect(style.outline !== 'none' && style.width > 0 ? true : style.shadow !== 'none', `focus visible: ${JSON.stringify(style)}`).toBe(true);
}

test('the contact form is filled in and sent with the keyboard alone, and its errors are announced', async ({ page }) => {
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  // The first Tab reaches the skip link; it jumps over the header to the page.
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expectVisibleFocus(skip);
  await page.keyboard.press('Enter');
  await tabTo(page, contact.name);
  await expectVisibleFocus(contact.name);
  await page.keyboard.type('Keyboard User');
  await page.keyboard.press('Tab');
  await expect(contact.email).toBeFocused();
  await page.keyboard.type('keyboard@');
  await page.keyboard.press('Tab');
  await expect(contact.message).toBeFocused();
  // The email's error appears as the focus leaves it, in a live region the field points to.
  const emailError = page.locator('#contact-email-error');
  await expect(emailError).not.toBeEmpty();
  await expect(emailError).toHaveAttribute('aria-live', 'polite');
  await expect(contact.email).toHaveAttribute('aria-invalid', 'true');
  await expect(contact.email).toHaveAttribute('aria-describedby', 'contact-email-error');
  await page.keyboard.type('Typed without a mouse.');
  await page.keyboard.press('Shift+Tab');
  await expect(contact.email).toBeFocused();
  // Tabbing into a field selects its text: go to its end before typing.
  await page.keyboard.press('End');
  await page.keyboard.type('example.org');
  await expect(contact.email).toHaveValue('keyboard@example.org');
  await tabTo(page, contact.send);
  await expectVisibleFocus(contact.send);
  await page.keyboard.press('Enter');
  await expect(contact.success).toBeVisible();
});

test('an admin signs in, uploads a share and deletes an inquiry (with its confirmation) by keyboard', async ({ page, browser }) => {
  test.setTimeout(60_000);
  const tag = `Keys ${Date.now().toString(36)}`;
  // An inquiry to delete, from a visitor.
  const visitorContext = await browser.newContext();
  const visitor = new ContactPage(await visitorContext.newPage());
  await visitor.open();
  await visitor.waitForHydration();
  await visitor.fill({ name: tag, email: 'keys@example.org', message: 'Delete me by keyboard.' });
  await visitor.send.click();
  await expect(visitor.success).toBeVisible();
  await visitorContext.close();

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(tag), tag);
  await new AdminShell(page).signOut();

  // Sign in: Tab to the button, Enter; the passkey does the rest.
  const signIn = page.getByTestId('signin');
  await expect(signIn).toBeEnabled();
  await tabTo(page, signIn);
  await expectVisibleFocus(signIn);
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/admin$/);

  // Upload: the file field opens its chooser from the keyboard; the expiry is a select.
  const shares = new SharesPage(page);
  await shares.open();
  const fileInput = page.getByLabel('File', { exact: true });
  await tabTo(page, fileInput);
  const chooser = page.waitForEvent('filechooser');
  await page.keyboard.press('Space');
  await (await chooser).setFiles({ name: `${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('keyboard') });
  const expiry = page.getByLabel('Link expires after');
  await tabTo(page, expiry);
  await page.keyboard.press('ArrowDown');
  const upload = page.getByRole('button', { name: 'Upload and create link' });
  await tabTo(page, upload);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('share-created')).toBeVisible();
  await expect(shares.row(`${tag}.txt`)).toBeVisible();

  // Delete an inquiry: Tab to its Delete button, Enter, confirm.
  await page.goto('/admin/inbox');
  await waitForAdminHydration(page);
  const row = page.getByTestId('inquiry-row').filter({ hasText: tag });
  const del = row.getByRole('button', { name: 'Delete' });
  await tabTo(page, del);
  await expectVisibleFocus(del);
  // Another inquiry arriving meanwhile (the list updates live) leaves the focus where it was:
  // the table is kept and only its rows change.
  const other = `Later ${Date.now().toString(36)}`;
  const laterContext = await browser.newContext();
  const later = new ContactPage(await laterContext.newPage());
  await later.open();
  await later.waitForHydration();
  await later.fill({ name: other, email: 'later@example.org', message: 'Arriving while you work.' });
  await later.send.click();
  await expect(later.success).toBeVisible();
  await laterContext.close();
  await expect(page.getByTestId('inquiry-row').filter({ hasText: other })).toBeVisible();
  await expect(del).toBeFocused();
  let asked = '';
  page.once('dialog', async (d) => {
    asked = d.message();
    await d.accept();
  });
  await page.keyboard.press('Enter');
  await expect(row).toHaveCount(0);
  expect(asked).toBe('Delete this inquiry? This cannot be undone.');
  await expect(page.getByText('1 inquiry deleted.')).toBeVisible();
});
