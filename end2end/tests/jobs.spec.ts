import { execFileSync } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';

function psql(sql: string): string {
  return execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c', sql]).toString().trim();
}

test('the dashboard shows every job with its last run, runs one now, and shows an alert until it is resolved', { tag: '@server' }, async ({ page }) => {
  const tag = `jobs-${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(`Admin ${tag}`), `Admin ${tag}`);
  // An alert raised by the server (as the alert helper writes it), unique to this test.
  psql(`insert into alerts (kind, subject, message, details) values ('job.failing', '${tag}', 'The job “${tag}” failed twice in a row.',
        'write (failed): 2024-05: writing audit-archive/2024-05.csv.gz failed: the storage service failed')`);

  await page.goto('/admin');
  await waitForAdminHydration(page);
  const banner = page.getByTestId('alerts');
  await expect(banner).toContainText(`The job “${tag}” failed twice in a row.`);
  // The details sit under the headline, folded until asked for.
  const mineAlert = banner.locator('.alert', { hasText: tag });
  await expect(mineAlert.getByTestId('alert-details')).toBeHidden();
  await mineAlert.getByText('Details').click();
  await expect(mineAlert.getByTestId('alert-details')).toContainText('writing audit-archive/2024-05.csv.gz failed');
  await expect(page.getByTestId('job-prune')).toContainText('Prune');
  await expect(page.getByTestId('job-share_gc')).toContainText('Share GC');

  // The claim was just taken (as by a run a moment ago): "Run now" must say so, and nothing
  // else — a run in progress is waited for, then the claim answers. (inbox.spec.ts sees the
  // "ran now" answer of a job whose claim is free.)
  psql(`insert into settings (key, value, updated_at) values ('share_gc_sweep_at', (extract(epoch from clock_timestamp()) * 1000)::bigint::text, clock_timestamp())
        on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at`);
  await page.getByTestId('run-job-share_gc').click();
  await expect(page.getByTestId('jobs-message')).toContainText('Share GC ran less than its interval ago, so it did not start again.');
  await expect(page.getByTestId('job-status-share_gc')).toContainText(/Last run: /);
  await expect(page.getByTestId('job-status-share_gc')).toContainText(/files of used or expired shares: /);
  if (process.env.SCREENSHOT_DIR) {
    await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/dashboard.png`, fullPage: true });
  }

  const mine = banner.locator('.alert', { hasText: tag });
  await mine.getByRole('button', { name: 'Mark resolved' }).click();
  await expect(page.getByText(`The job “${tag}” failed twice in a row.`)).toHaveCount(0);
  expect(psql(`select resolved_by is not null from alerts where subject = '${tag}'`)).toBe('t');
});
