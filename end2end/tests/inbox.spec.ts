import { expect, test } from '@playwright/test';
import { AdminShell, InvitePage, VirtualAuthenticator, newInviteLink, sql, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { InboxPage } from '../pages/inbox';

test('an admin finds a just-submitted inquiry, reads it as text, exports it and deletes it', async ({ page, browser }) => {
  const tag = `inbox-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const message = `Hello <b>${tag}</b>,\nsecond line`;

  // A visitor writes in (their own browser).
  const visitor = await browser.newPage();
  const contact = new ContactPage(visitor);
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: `Visitor ${tag}`, email: `${tag}@example.org`, message });
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  await visitor.close();

  // An admin signs in with a passkey.
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  await new AdminShell(page).expectSignedInAs(`Admin ${tag}`);

  const inbox = new InboxPage(page);
  await inbox.open();
  await inbox.search(tag);
  await expect(inbox.rows()).toHaveCount(1);
  await expect(inbox.rows().first()).toContainText(`Visitor ${tag}`);

  // The message is text: the <b> is shown, not made bold; line breaks are kept.
  await inbox.rows().first().getByRole('button', { name: 'Open' }).click();
  const shown = page.getByTestId('inquiry-message');
  await expect(shown).toHaveText(message);
  await expect(shown.locator('b')).toHaveCount(0);

  // Export the search result.
  const csv = await inbox.exportCsv();
  const lines = csv.split('\r\n');
  expect(lines[0]).toBe('id,received_at,name,email,message');
  expect(csv).toContain(`Visitor ${tag},${tag}@example.org,"Hello <b>${tag}</b>,\nsecond line"`);
  expect(lines.filter((l) => l.includes(`Visitor ${tag}`))).toHaveLength(1);

  // Delete it; the list and the counts follow without a reload. The total counts every inquiry,
  // and specs running beside this one add and delete theirs, so the shown total is compared with
  // the database's own count (our inquiry gone) rather than with the total before minus one.
  const ours = `name = 'Visitor ${tag}'`;
  expect(sql(`select count(*) from inquiries where ${ours}`)).toBe('1');
  page.once('dialog', (d) => d.accept());
  await page.evaluate(() => ((window as any).__noReload = true));
  await inbox.rows().first().getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByTestId('inbox-message')).toHaveText('1 inquiry deleted.');
  await expect(inbox.rows()).toHaveCount(0);
  expect(sql(`select count(*) from inquiries where ${ours}`)).toBe('0');
  await expect
    .poll(async () => Number(await inbox.total().textContent()) - Number(sql('select count(*) from inquiries')), {
      message: 'the shown total is the number of inquiries in the database',
    })
    .toBe(0);
  expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
});

test('the settings page shows the effect of a retention value before saving', { tag: '@server' }, async ({ page }) => {
  const tag = `settings-${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  await page.goto('/admin/settings');
  await waitForAdminHydration(page);
  const days = page.getByLabel('Keep inquiries for (days)');
  await expect(days).toHaveValue(/^\d+$/);
  await days.fill('0');
  await expect(page.locator('#retention-error')).toContainText('1 to 3,650');
  await expect(page.getByRole('button', { name: 'Save' })).toBeDisabled();
  await days.fill('3650');
  await expect(page.getByTestId('retention-effect')).toHaveText(/^Inquiries older than 3650 days are deleted; \d+ would be deleted now\.$/);
  // Every job of the registry is listed with its last run and a Run now button.
  await expect(page.getByTestId('job-prune')).toBeVisible();
  await expect(page.getByTestId('job-share_gc')).toBeVisible();
  // Traffic may have run prune already (its claim lasts an hour): free the claim, so the button's
  // run is due and must start.
  sql("delete from settings where key = 'last_cleanup_at'");
  await page.getByTestId('run-job-prune').click();
  await expect(page.getByTestId('jobs-message')).toHaveText('Prune ran now. Its results are below.');
  await expect(page.getByTestId('job-status-prune')).toContainText(/Last run: .*completed/);
  // Clicked again within the hour, it honours the claim and says when it may run next.
  await page.getByTestId('run-job-prune').click();
  await expect(page.getByTestId('jobs-message')).toContainText('Prune ran less than its interval ago, so it did not start again.');
});
