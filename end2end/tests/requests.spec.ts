import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';

function psql(sql: string): string {
  return execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c', sql]).toString().trim();
}

test('an admin records an erasure request, reviews the dry run, erases, and sees the deadline met', { tag: '@server' }, async ({ page }) => {
  const tag = Date.now().toString(36);
  const email = `person-${tag}@example.org`;
  // Two inquiries from the person (one typed in capitals), one of them on legal hold, and one from someone else.
  psql(`insert into inquiries (name, email, message) values ('Pat ${tag}', '${email}', 'first'), ('Pat ${tag}', '${email.toUpperCase()}', 'second'),
        ('Other ${tag}', 'other-${tag}@example.org', 'not theirs')`);
  psql(`insert into legal_holds (inquiry_id, reason) select id, 'Dispute ${tag}: keep this one' from inquiries where email = '${email}'`);
  psql(`update inquiries set held = true where email = '${email}'`);

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Dora ${tag}`), `Dora ${tag}`);
  await page.goto('/admin/requests');
  await waitForAdminHydration(page);
  await expect(page.getByRole('heading', { name: 'Data requests', level: 1 })).toBeVisible();

  // A bad address says what to fix, beside the field.
  await page.getByLabel('Erasure of their data').check();
  await page.getByLabel('Their email address').fill('not-an-address@nowhere');
  await page.getByRole('button', { name: 'Record the request' }).click();
  await expect(page.locator('#request-email-error')).toContainText('valid email address');

  await page.getByLabel('Their email address').fill(`  ${email.replace('person', 'PERSON')} `);
  await page.getByLabel('Note (optional)').fill('Asked by email, identity checked by phone.');
  await page.getByRole('button', { name: 'Record the request' }).click();
  await expect(page).toHaveURL(/\/admin\/requests\/\d+$/);
  await expect(page.getByRole('heading', { name: /^Data request #\d+$/, level: 1 })).toBeVisible();
  await expect(page.getByTestId('request-email')).toHaveText(email);
  await expect(page.getByTestId('request-deadline')).toContainText('30 days left');

  // Find: both inquiries, the held one marked; the hold itself; what cannot be searched.
  const inquiries = page.locator('[data-testid="found-row"][data-kind="inquiries"]');
  await expect(inquiries.getByTestId('found-count')).toHaveText('2');
  await expect(inquiries).toContainText(`Dispute ${tag}`);
  await expect(page.locator('[data-testid="found-row"][data-kind="legal_holds"]').getByTestId('found-count')).toHaveText('1');
  await expect(page.getByTestId('not-searchable')).toContainText('keyed hashes');

  // The copy: everything found, with its cover sheet.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('copy-json').click()]);
  const copy = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(copy.cover.address).toBe(email);
  expect(copy.data.inquiries.map((i: { message: string }) => i.message).sort()).toEqual(['first', 'second']);

  // The dry run: what would go, what stays and why. Nothing is erased yet.
  await page.getByTestId('preview-erasure').click();
  const dryRun = page.getByTestId('dry-run');
  await expect(dryRun).toContainText('Inquiries: 1');
  await expect(dryRun).toContainText(`Dispute ${tag}`);
  expect(psql(`select count(*) from inquiries where lower(email) = '${email}'`)).toBe('2');

  page.once('dialog', (d) => d.accept());
  await page.getByTestId('erase').click();
  await expect(page.getByTestId('request-outcome')).toContainText('Erased: Inquiries 1', { timeout: 30_000 });
  await expect(page.getByTestId('request-outcome')).toContainText('Stayed: Inquiries 1, Legal holds 1');
  await expect(page.getByTestId('request-deadline')).toContainText('Answered on time');
  await expect(page.getByTestId('request-status')).toHaveText('Closed');
  expect(psql(`select count(*) from inquiries where lower(email) = '${email}'`)).toBe('1');
  expect(psql(`select count(*) from inquiries where email = 'other-${tag}@example.org'`)).toBe('1');
  expect(psql(`select count(*) from audit_events where position('${email}' in lower(audit_events::text)) > 0`)).toBe('0');
  // Nor the server's log, after every step above.
  expect(readFileSync(process.env.E2E_SERVER_LOG!, 'utf8').toLowerCase()).not.toContain(`person-${tag}`);

  // The list shows it answered; the dashboard shows the open ones at a glance.
  await page.goto('/admin/requests');
  await waitForAdminHydration(page);
  await expect(page.getByTestId('request-row').filter({ hasText: email })).toContainText('Answered on time');
  if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/requests.png`, fullPage: true });
  await page.goto('/admin');
  await waitForAdminHydration(page);
  await expect(page.getByTestId('requests-overview')).toBeVisible();
  if (process.env.SCREENSHOT_DIR) {
    const id = psql(`select id from data_requests where email = '${email}'`);
    await page.goto(`/admin/requests/${id}`);
    await waitForAdminHydration(page);
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/request.png`, fullPage: true });
  }
});

test('without JavaScript a request is recorded and its dry run shown', { tag: '@server' }, async ({ browser, baseURL }) => {
  const tag = Date.now().toString(36);
  const email = `nojs-${tag}@example.org`;
  psql(`insert into inquiries (name, email, message) values ('No JS ${tag}', '${email}', 'hello')`);
  // Signed in with JavaScript (passkeys need it), then the pages are used without.
  const signIn = await browser.newContext();
  const admin = await signIn.newPage();
  await VirtualAuthenticator.attach(admin);
  await new InvitePage(admin).join(newInviteLink(`Nojs ${tag}`), `Nojs ${tag}`);
  const cookies = await signIn.cookies();
  const context = await browser.newContext({ javaScriptEnabled: false });
  await context.addCookies(cookies);
  const page = await context.newPage();
  await page.goto(`${baseURL}/admin/requests`);
  await page.getByLabel('Access: what is kept about them').check();
  await page.getByLabel('Their email address').fill(email);
  await page.getByRole('button', { name: 'Record the request' }).click();
  await expect(page).toHaveURL(/\/admin\/requests$/);
  const row = page.getByTestId('request-row').filter({ hasText: email });
  await expect(row).toContainText('30 days left');
  await row.getByRole('link').click();
  await expect(page.locator('[data-testid="found-row"][data-kind="inquiries"]').getByTestId('found-count')).toHaveText('1');
  await page.getByTestId('close-request').click();
  await expect(page.getByTestId('request-status')).toHaveText('Closed');
  await signIn.close();
  await context.close();
});
