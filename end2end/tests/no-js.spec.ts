import { expect, test, type Browser } from '@playwright/test';
import { AdminShell, InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { ShareLandingPage, SharesPage } from '../pages/shares';

/** Every admin page and its heading. */
const ADMIN_PAGES: [string, string][] = [
  ['/admin', 'Dashboard'],
  ['/admin/inbox', 'Inbox'],
  ['/admin/shares', 'Shares'],
  ['/admin/audit', 'Audit log'],
  ['/admin/audit/archive', 'Archive and exports'],
  ['/admin/retention', 'Retention'],
  ['/admin/settings', 'Settings'],
  ['/admin/account', 'Account'],
];

/** A browser context without JavaScript, signed in with `cookie` when given. */
async function withoutJavascript(browser: Browser, baseURL: string, cookie?: string) {
  const context = await browser.newContext({ javaScriptEnabled: false, baseURL });
  if (cookie) await context.addCookies([{ name: 'ebb_session', value: cookie, url: baseURL }]);
  return context;
}

test('every page renders without JavaScript and hydrates with it', async ({ page, browser, baseURL }) => {
  test.setTimeout(90_000);
  const name = `NoJS ${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(name), name);
  const shares = new SharesPage(page);
  await shares.open();
  const link = await shares.share({ name: 'no-js.txt', mimeType: 'text/plain', buffer: Buffer.from('served without JavaScript') });
  const cookie = (await new AdminShell(page).sessionCookie())!;

  // With JavaScript (this browser): every admin page hydrates (the dashboard on first use).
  for (const [path, heading] of ADMIN_PAGES) {
    await page.goto(path);
    await expect(page.getByRole('heading', { name: heading, exact: true })).toBeVisible();
    await waitForAdminHydration(page);
  }

  // Without JavaScript: the same pages, rendered by the server.
  const noJs = await withoutJavascript(browser, baseURL!, cookie);
  const plain = await noJs.newPage();
  for (const [path, heading] of ADMIN_PAGES) {
    const res = await plain.goto(path);
    expect(res?.status(), path).toBe(200);
    await expect(plain.getByRole('heading', { name: heading, exact: true })).toBeVisible();
    await expect(plain.locator('.admin')).toHaveAttribute('data-hydrated', 'false');
  }
  await plain.goto('/admin/shares');
  await expect(plain.getByTestId('share-row').filter({ hasText: 'no-js.txt' })).toBeVisible();

  // The visitor's pages without JavaScript: the form, sign-in's notice, an unknown invite, and a
  // share downloaded by its plain form.
  const visitor = await (await withoutJavascript(browser, baseURL!)).newPage();
  await visitor.goto('/');
  await expect(visitor.getByRole('heading', { name: 'Get in touch' })).toBeVisible();
  await expect(visitor.getByRole('button', { name: /send/i })).toBeVisible();
  await visitor.goto('/retention');
  await expect(visitor.getByRole('heading', { name: 'How long we keep your data' })).toBeVisible();
  await expect(visitor.getByTestId('promise-messages')).toContainText(/kept for \d+ days?/);
  await visitor.goto('/signin');
  // A <noscript> notice (Playwright's text search skips <noscript>, so the page source is read).
  await expect(visitor.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect(await visitor.content()).toContain('Passkeys need JavaScript. Please enable it for this site.');
  await visitor.goto('/invite/not-a-real-invite-token');
  await expect(visitor.getByText(/This link is not valid/)).toBeVisible();
  await visitor.goto(link);
  await expect(visitor.getByRole('heading', { name: 'A file was shared with you' })).toBeVisible();
  const [download] = await Promise.all([visitor.waitForEvent('download'), visitor.getByTestId('download').click()]);
  expect(download.suggestedFilename()).toBe('no-js.txt');
  await visitor.goto(link);
  await expect(visitor.getByRole('heading', { name: 'This file was already downloaded' })).toBeVisible();

  // And with JavaScript, the visitor's pages hydrate.
  const hydrated = await browser.newPage({ baseURL });
  await hydrated.goto('/');
  await new ContactPage(hydrated).waitForHydration();
  await hydrated.goto('/signin');
  await expect(hydrated.getByTestId('signin')).toBeEnabled();
  await hydrated.goto(link);
  await new ShareLandingPage(hydrated).waitForHydration();
  await noJs.close();
});
