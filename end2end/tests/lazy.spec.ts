import { expect, test, type Page } from '@playwright/test';
import { ContactPage } from '../pages/contact-page';
import { ShareLandingPage } from '../pages/shares';
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

test('public pages never load the admin UI; admin pages load their module when opened directly or by navigation', async ({ page, browser, baseURL }) => {
  // Module names (app/src/admin_routes.rs): one per public page, one for the admin pages. Shared
  // code is in chunk_*.wasm files.
  const admin = 'split_ebb_admin.wasm';
  const modules = (files: string[]) => files.filter((f) => f.startsWith('split_'));
  // The visitor's pages: `/` nothing until it is used, then the main module only; the sign-in
  // page none.
  const untouched = await wasmFetched(page, async () => {
    await page.goto('/');
  });
  expect(untouched, '/ fetches no wasm before the visitor uses it').toEqual([]);
  expect(await page.locator('#contact form').getAttribute('data-hydrated')).not.toBe('true');
  const home = await wasmFetched(page, async () => {
    await new ContactPage(page).waitForHydration();
  });
  expect(home).toContain('ebb_bg.wasm');
  expect(modules(home), '/ loads only the main module').toEqual([]);
  expect(home.filter((f) => f.startsWith('chunk_')), '/ loads no shared chunk').toEqual([]);
  // By navigation (client side, from `/`): the retention promises' module arrives when its link
  // is followed, and nothing else.
  const promises = await wasmFetched(page, async () => {
    await page.getByRole('contentinfo').getByRole('link').click();
    await expect(page).toHaveURL(/\/retention$/);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  });
  expect(modules(promises)).toEqual(['split_ebb_public_retention.wasm']);
  expect(promises).not.toContain('ebb_bg.wasm');
  // The sign-in page loads no wasm at all: its passkey ceremony is a small script of its own.
  // The admin's client is prefetched once they start to sign in (a press on the button); in a
  // browser that has not cached it yet.
  const fresh = await (await browser.newContext({ baseURL })).newPage();
  const signin = await wasmFetched(fresh, async () => {
    await fresh.goto('/signin');
    await expect(fresh.getByTestId('signin')).toBeEnabled();
  });
  expect(signin, '/signin fetches no wasm').toEqual([]);
  const pressed = await wasmFetched(fresh, async () => {
    await fresh.getByTestId('signin').hover();
    await fresh.mouse.down();
  });
  expect(pressed, 'pressing the button prefetches the main module').toEqual(['ebb_bg.wasm']);
  await fresh.context().close();

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink('Lazy Lu'), 'Lazy Lu');

  // Opened directly: the admin module, and the page works (hydrated: the filter responds).
  const direct = await wasmFetched(page, async () => {
    await page.goto('/admin/audit');
    await waitForAdminHydration(page);
  });
  expect(modules(direct)).toEqual([admin]);
  await page.getByLabel('From').fill('2026-02-01');
  await page.getByLabel('To').fill('2026-01-01');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByText('The end date must not be before the start date.')).toBeVisible();

  // By navigation: the inbox (a lazy route in the module already loaded) is rendered by the client
  // (no reload, no other download).
  const navigated = await wasmFetched(page, async () => {
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Inbox' }).click();
    await expect(page.getByRole('heading', { name: 'Inbox' })).toBeVisible();
  });
  expect(navigated).toEqual([]);
});

test('a share page fetches no client until the recipient uses it, then the main module only', async ({ page }) => {
  // The shell of /s/{token} is the same for a live, a used and an unknown link.
  const untouched = await wasmFetched(page, async () => {
    await page.goto('/s/not-a-real-share-token');
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  });
  expect(untouched, '/s/… fetches no wasm before the recipient uses it').toEqual([]);
  expect(await page.locator('.page[data-hydrated]').getAttribute('data-hydrated')).not.toBe('true');
  const used = await wasmFetched(page, async () => {
    await new ShareLandingPage(page).waitForHydration();
  });
  expect(used).toContain('ebb_bg.wasm');
  expect(used.filter((f) => f.startsWith('split_ebb_admin')), 'no admin module').toEqual([]);
});
