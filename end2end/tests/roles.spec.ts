import { expect, test } from '@playwright/test';
import { AccountPage, AdminShell, InvitePage, VirtualAuthenticator, newInviteLink, sql, waitForAdminHydration } from '../pages/admin';

function uniqueName(tag: string) {
  return `${tag} ${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** Makes the admin's sessions' last passkey check older than the step-up window (5 minutes). */
function ageSessions(name: string) {
  sql(`update admin_sessions s set verified_at = now() - interval '10 minutes' from admins a
       where a.id = s.admin_id and a.name = '${name.replace(/'/g, "''")}'`);
}

test('a stale session confirms with its passkey in place before inviting, and the check is recorded', async ({ page }) => {
  const name = uniqueName('Stepper');
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(name), name);
  ageSessions(name);
  const account = new AccountPage(page);
  await account.open();

  await page.getByLabel('Their name (optional)').fill('Newcomer');
  await page.getByRole('button', { name: 'Create invite link' }).click();
  const prompt = page.getByTestId('step-up');
  await expect(prompt).toBeVisible();
  await expect(prompt.getByRole('heading', { name: 'Confirm it is you' })).toBeVisible();
  await expect(page.getByTestId('invite-url')).toHaveCount(0);
  await page.screenshot({ path: 'test-results/roles-step-up.png' });

  await prompt.getByRole('button', { name: 'Confirm with passkey' }).click();
  await expect(page.getByTestId('step-up-status')).toHaveText('Confirmed. Do it again now: it will go through.');
  await expect(prompt).toHaveCount(0);
  await page.getByRole('button', { name: 'Create invite link' }).click();
  await expect(page.getByTestId('invite-url')).toHaveValue(/\/invite\//);
  const recorded = sql(`select count(*) from audit_events e join admins a on a.id = e.admin_id
                        where e.kind = 'auth.step_up' and a.name = '${name.replace(/'/g, "''")}'`);
  expect(Number(recorded)).toBe(1);
});

test('an export asked for by a stale session waits for the passkey, then downloads', async ({ page }) => {
  const name = uniqueName('Exporter');
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(name), name);
  ageSessions(name);
  await page.goto('/admin/inbox');
  await waitForAdminHydration(page);

  await page.getByTestId('export').click();
  const prompt = page.getByTestId('step-up');
  await expect(prompt).toBeVisible();
  const download = page.waitForEvent('download');
  await prompt.getByRole('button', { name: 'Confirm with passkey' }).click();
  expect((await download).suggestedFilename()).toMatch(/\.csv$/);
  await expect(page.getByTestId('step-up-status')).toHaveText('Confirmed. The download starts.');
});

test('an owner invites an auditor, who sees only the auditor pages until the owner makes them an admin', async ({ page, browser }) => {
  const owner = uniqueName('Owner');
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(owner), owner);
  const account = new AccountPage(page);
  await account.open();
  const auditorName = uniqueName('Auditor');
  await page.getByLabel('Their name (optional)').fill(auditorName);
  await page.getByLabel('Their role', { exact: true }).selectOption('auditor');
  await page.getByRole('button', { name: 'Create invite link' }).click();
  const link = await page.getByTestId('invite-url').inputValue();

  const context = await browser.newContext();
  const other = await context.newPage();
  await VirtualAuthenticator.attach(other);
  await new InvitePage(other).join(link, auditorName);
  await expect(other.getByTestId('admin-role')).toHaveText('Auditor');
  const nav = other.getByRole('navigation', { name: 'Admin' });
  await expect(nav.getByRole('link', { name: 'Audit', exact: true })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Inbox' })).toHaveCount(0);
  await expect(nav.getByRole('link', { name: 'Shares' })).toHaveCount(0);
  // The dashboard shows no card about people's data.
  await expect(other.getByRole('heading', { name: 'Inbox' })).toHaveCount(0);
  const refused = await other.goto('/admin/inbox');
  expect(refused?.status()).toBe(403);
  await expect(other.getByRole('heading', { name: 'This page needs the admin role' })).toBeVisible();

  // The owner makes them an admin: their next page has the inbox.
  await page.reload();
  await waitForAdminHydration(page);
  const row = page.getByTestId('admin-row').filter({ hasText: auditorName });
  await expect(row).toHaveAttribute('data-role', 'auditor');
  await row.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'test-results/roles-admins.png', fullPage: true });
  await row.getByLabel(`Role of ${auditorName}`).selectOption('admin');
  await row.getByRole('button', { name: 'Change' }).click();
  await expect(page.getByTestId('account-message')).toHaveText('Role changed.');
  await other.goto('/admin');
  await waitForAdminHydration(other);
  await expect(other.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Inbox' })).toBeVisible();
  await context.close();
});
