import { expect, test, type Page } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';

/** The wasm files a page fetched while `action` ran. */
async function wasmFetched(page: Page, action: () => Promise<void>): Promise<string[]> {
  const files: string[] = [];
  const seen = (r: { url(): string }) => {
    const name = new URL(r.url()).pathname.split('/').pop()!;
    if (name.endsWith('.wasm')) files.push(name);
  };
  page.on('request', seen);
  await action();
  await page.waitForLoadState('networkidle');
  page.off('request', seen);
  return files;
}

test('public pages never load the admin UI; an admin page loads its chunk when opened directly or by navigation', async ({ page }) => {
  // The visitor's pages: `/` the main module only; the sign-in page its own chunk, no admin page.
  const admin = /^split___(dashboard|inbox|shares|audit|archive|settings|account)_route_view/;
  const home = await wasmFetched(page, async () => {
    await page.goto('/');
  });
  expect(home).toContain('ebb_bg.wasm');
  expect(home.filter((f) => f.startsWith('split_')), '/ loads only the main module').toEqual([]);
  const signin = await wasmFetched(page, async () => {
    await page.goto('/signin');
  });
  expect(signin.some((f) => f.startsWith('split___sign_in_route_view'))).toBe(true);
  expect(signin.filter((f) => admin.test(f)), '/signin loads no admin page').toEqual([]);

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink('Lazy Lu'), 'Lazy Lu');

  // Opened directly: the page's own chunk, and it works (hydrated: the filter responds).
  const direct = await wasmFetched(page, async () => {
    await page.goto('/admin/audit');
    await waitForAdminHydration(page);
  });
  expect(direct.some((f) => f.startsWith('split___audit_route_view'))).toBe(true);
  expect(direct.some((f) => f.startsWith('split___inbox_route_view'))).toBe(false);
  await page.getByLabel('From').fill('2026-02-01');
  await page.getByLabel('To').fill('2026-01-01');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByText('The end date must not be before the start date.')).toBeVisible();

  // By navigation: the inbox's chunk arrives when its link is followed, and the page works.
  const navigated = await wasmFetched(page, async () => {
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Inbox' }).click();
    await expect(page.getByRole('heading', { name: 'Inbox' })).toBeVisible();
  });
  expect(navigated.some((f) => f.startsWith('split___inbox_route_view'))).toBe(true);
  expect(navigated).not.toContain('ebb_bg.wasm');
});
