import { execFileSync } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, runJobs, waitForAdminHydration } from '../pages/admin';

function psql(sql: string): string {
  return execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c', sql]).toString().trim();
}

function monthLabel(d: Date): string {
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

test('an archived month is downloaded through a 15-minute link with a reason; an expired export shows no link', { tag: '@server' }, async ({ page }) => {
  const tag = `arch-${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Ana ${tag}`), `Ana ${tag}`);

  // A month 30 months back, archived as in production: upkeep detaches it, the archive writes,
  // verifies and drops it.
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 30, 1));
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 29, 1));
  const month = monthLabel(start);
  psql(`create table if not exists audit_events_${month.replace('-', '_')} partition of audit_events
        for values from ('${month}-01 00:00:00+00') to ('${monthLabel(next)}-01 00:00:00+00')`);
  psql(`insert into audit_events (occurred_at, kind, subject_type, subject_id)
        select '${month}-01 00:00:00+00'::timestamptz + i * interval '1 minute', 'share.create', 'share', '${tag}-' || i
        from generate_series(1, 42) i`);
  const out = runJobs('audit_upkeep', 'audit_archive');
  expect(out).toContain('audit_archive: completed');

  await page.goto('/admin/audit');
  await waitForAdminHydration(page);
  await page.getByTestId('archive-nav').click();
  await expect(page.getByRole('heading', { name: 'Archive and exports' })).toBeVisible();
  const row = page.locator(`[data-testid="archive-month"][data-month="${month}"]`);
  await expect(row).toHaveAttribute('data-status', 'verified');
  await expect(row).toContainText('42');
  await expect(row).toContainText('no longer in the database');

  // The reason is required: 10 to 256 characters, said beside the field.
  await page.getByLabel('Month', { exact: true }).selectOption(month);
  await page.getByLabel('Why do you need it?').fill('because');
  await page.getByRole('button', { name: 'Get a 15-minute link' }).click();
  await expect(page.getByTestId('archive-reason-error')).toContainText('10 to 256 characters');
  await expect(page.getByTestId('archive-download')).toHaveCount(0);

  const reason = `Auditor request ${tag}`;
  await page.getByLabel('Why do you need it?').fill(reason);
  await page.getByRole('button', { name: 'Get a 15-minute link' }).click();
  const link = page.getByTestId('archive-download');
  await expect(link).toContainText(`${month}.csv.gz`);
  await expect(page.getByTestId('archive-reason-error')).toBeEmpty();
  // The link downloads the month, by name, as gzip'd CSV.
  const res = await page.request.get((await link.getAttribute('href'))!);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-disposition']).toContain(`${month}.csv.gz`);
  const body = await res.body();
  expect([body[0], body[1]]).toEqual([0x1f, 0x8b]);
  // The retrieval is listed with who and why.
  await expect(page.getByTestId('archive-retrievals')).toContainText(reason);
  await expect(page.getByTestId('archive-retrievals')).toContainText(`Ana ${tag}`);

  // An export of today: written in the background, then linked.
  const today = now.toISOString().slice(0, 10);
  await page.getByLabel('From', { exact: true }).fill(today);
  await page.getByLabel('To', { exact: true }).fill(today);
  await page.getByRole('button', { name: 'Request export' }).click();
  const request = page.getByTestId('export-request').first();
  await expect(request).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await request.getByTestId('export-get-link').click();
  const exportLink = request.getByTestId('export-download');
  await expect(exportLink).toContainText(`audit-${today}_to_${today}.csv.gz`);
  expect((await page.request.get((await exportLink.getAttribute('href'))!)).status()).toBe(200);

  // From day 8 the request still shows, but as expired and without a link.
  psql(`update audit_export_requests set started_at = now() - interval '8 days'`);
  await page.reload();
  await waitForAdminHydration(page);
  const expired = page.getByTestId('export-request').first();
  await expect(expired).toHaveAttribute('data-expired', 'true');
  await expect(expired).toContainText('Expired');
  await expect(expired.getByTestId('export-get-link')).toHaveCount(0);
  await expect(expired.getByTestId('export-download')).toHaveCount(0);

  if (process.env.SCREENSHOT_DIR) {
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/archive.png`, fullPage: true });
  }

  // The dashboard counts the archived months.
  await page.goto('/admin');
  await waitForAdminHydration(page);
  await expect(page.getByTestId('months-archived')).toHaveText(/^[1-9]\d*$/);
  await expect(page.getByTestId('months-failed')).toHaveText('0');
});
