import { expect, test } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, runJobs, sql, waitForAdminHydration } from '../pages/admin';
import { InboxPage } from '../pages/inbox';
import { SharesPage } from '../pages/shares';

test('legal hold: a held old inquiry survives prune, and goes with the first prune after the lift', { tag: '@server' }, async ({ page }) => {
  test.setTimeout(90_000);
  const tag = `hold-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  // An inquiry far older than any retention in use (at most 3,650 days).
  sql(`insert into inquiries (name, email, message, created_at) values ('Visitor ${tag}', '${tag}@example.org', 'Please keep this', now() - interval '4000 days')`);

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);

  // Hold it from the inbox, with a reason.
  const inbox = new InboxPage(page);
  await inbox.open();
  await inbox.search(tag);
  await expect(inbox.rows()).toHaveCount(1);
  await inbox.rows().first().getByRole('button', { name: 'Open' }).click();
  const detail = page.getByTestId('inquiry-detail');
  await detail.getByText('Legal hold…').click();
  await detail.getByLabel('Legal hold reason').fill('short');
  await detail.getByRole('button', { name: 'Hold this inquiry' }).click();
  await expect(detail.locator('.field-error')).toContainText('10 to 256 characters');
  await detail.getByLabel('Legal hold reason').fill(`Case ${tag}: keep until the court decides`);
  await detail.getByRole('button', { name: 'Hold this inquiry' }).click();
  await expect(page.getByTestId('inbox-message')).toContainText('Placed on legal hold');
  await expect(page.getByTestId('inquiry-held')).toBeVisible();
  await expect(detail.getByRole('button', { name: 'Delete' })).toBeDisabled();
  await expect(inbox.rows().first().getByTestId('held-badge')).toHaveText('On legal hold');

  // Prune runs: the held inquiry stays.
  runJobs('prune');
  await inbox.open();
  await inbox.search(tag);
  await expect(inbox.rows()).toHaveCount(1);

  // The retention page (opened by navigation: a lazily loaded page) lists the hold; lift it.
  await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Retention' }).click();
  await expect(page.getByRole('heading', { name: 'Retention', exact: true })).toBeVisible();
  await expect(page.getByTestId('retention-row').and(page.locator('[data-kind="inquiries"]')).getByTestId('held')).not.toHaveText('0');
  const hold = page.getByTestId('hold-row').filter({ hasText: `Case ${tag}` });
  await expect(hold).toContainText(`the inquiry from Visitor ${tag}`);
  page.once('dialog', (d) => d.accept());
  await hold.getByRole('button', { name: /Lift/ }).click();
  await expect(page.getByTestId('holds-message')).toContainText('Hold lifted');
  await expect(hold).toHaveCount(0);

  // The first prune after the lift deletes it.
  runJobs('prune');
  await inbox.open();
  await inbox.search(tag);
  await expect(inbox.rows()).toHaveCount(0);
  const story = sql(`select string_agg(kind, ',' order by occurred_at, id) from audit_events where kind like 'hold.%' and subject_id = (select subject_id from audit_events where kind = 'hold.place' and detail like '%Case ${tag}%')`);
  expect(story).toBe('hold.place,hold.lift');
});

test('the retention page proves every promise and offers the report as a download', async ({ page }) => {
  const tag = `report-${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  // Opened directly.
  await page.goto('/admin/retention');
  await waitForAdminHydration(page);
  for (const kind of ['inquiries', 'share_files', 'sessions', 'audit_events', 'export_files', 'run_records']) {
    await expect(page.locator(`[data-testid="retention-row"][data-kind="${kind}"]`)).toBeVisible();
  }
  await expect(page.getByTestId('retention-summary')).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('retention-download').click()]);
  expect(download.suggestedFilename()).toMatch(/^ebb-retention-\d{8}T\d{6}Z\.json$/);
  const fs = await import('node:fs/promises');
  const report = JSON.parse(await fs.readFile((await download.path())!, 'utf8'));
  expect(report.kinds.map((k: { kind: string }) => k.kind)).toContain('inquiries');

  // The visitor's page, linked from the contact form.
  await page.goto('/');
  await page.getByRole('link', { name: 'How long we keep your message' }).click();
  await expect(page.getByRole('heading', { name: 'How long we keep your data' })).toBeVisible();
  await expect(page.getByTestId('promise-messages')).toContainText(/kept for \d+ days?/);
});

test('legal hold on a share: held from the shares list, its link still works once, lifted on the retention page', { tag: '@server' }, async ({ page, browser }) => {
  test.setTimeout(90_000);
  const tag = `sharehold-${Date.now().toString(36)}`;
  const fileName = `${tag}.txt`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  const shares = new SharesPage(page);
  await shares.open();
  const link = await shares.share({ name: fileName, mimeType: 'text/plain', buffer: Buffer.from('evidence') });
  const row = shares.row(fileName);
  await row.getByText('Legal hold…').click();
  await row.getByLabel('Legal hold reason').fill(`Case ${tag}: keep the evidence file`);
  await row.getByRole('button', { name: "Hold this share's file" }).click();
  await expect(page.getByTestId('shares-message')).toContainText('Placed on legal hold');
  await expect(shares.row(fileName).getByTestId('held-badge')).toHaveText('On legal hold');

  // The recipient still downloads it once.
  const recipient = await browser.newPage();
  await recipient.goto(link);
  const [download] = await Promise.all([recipient.waitForEvent('download'), recipient.getByTestId('download').click()]);
  expect(download.suggestedFilename()).toBe(fileName);
  await recipient.close();
  // Long past its grace, the GC keeps the held file (the share is not purged).
  // The share's id: once purged, its file name is forgotten.
  const shareId = sql(`select id from shares where file_name = '${fileName}'`);
  sql(`update shares set consumed_at = now() - interval '2 hours' where file_name = '${fileName}'`);
  runJobs('share_gc');
  expect(sql(`select status || ',' || held::text from shares where file_name = '${fileName}'`)).toBe('consumed,true');

  // Lifted on the retention page: the next GC run deletes the file.
  await page.goto('/admin/retention');
  await waitForAdminHydration(page);
  const hold = page.getByTestId('hold-row').filter({ hasText: fileName });
  page.once('dialog', (d) => d.accept());
  await hold.getByRole('button', { name: /Lift/ }).click();
  await expect(page.getByTestId('holds-message')).toContainText('Hold lifted');
  runJobs('share_gc');
  expect(sql(`select status from shares where id = ${shareId}`)).toBe('purged');
});
