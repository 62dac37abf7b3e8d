import AxeBuilder from '@axe-core/playwright';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { ShareLandingPage, SharesPage } from '../pages/shares';

/** WCAG 2.1 A and AA, the rules axe-core checks automatically. */
async function expectNoViolations(page: Page, what: string) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  const found = results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(found, `${what}: axe violations`).toEqual([]);
}

const SCHEMES = ['light', 'dark'] as const;

/** A live share link for the recipient's page (made by an admin in another context). */
async function liveShareLink(browser: Browser, tag: string): Promise<string> {
  const adminContext = await browser.newContext();
  const admin = await adminContext.newPage();
  const name = `A11y ${tag} ${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(admin);
  await new InvitePage(admin).join(newInviteLink(name), name);
  const shares = new SharesPage(admin);
  await shares.open();
  const link = await shares.share({ name: 'a11y.txt', mimeType: 'text/plain', buffer: Buffer.from('accessible') });
  await adminContext.close();
  return link;
}

/** An open file request's upload page (its row written directly: only the token's hash is kept). */
function liveRequestLink(): string {
  const token = randomBytes(32).toString('base64url');
  const hash = createHash('sha256').update(token).digest('hex');
  execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c',
    `insert into file_requests (token_hash, note, max_bytes, expires_at)
     values (decode('${hash}', 'hex'), 'Please send the signed form.', 10485760, now() + interval '1 day')`]);
  return `/r/${token}`;
}

// One test per language (they run in parallel), each page in both colour schemes.
for (const locale of ['en-US', 'ja-JP']) {
  test(`axe finds no violations on the visitor pages (${locale}), in both colour schemes`, async ({ browser }) => {
    test.setTimeout(120_000);
    const link = await liveShareLink(browser, locale);
    const pages: [string, (p: Page) => Promise<void>][] = [
      ['/', async (p) => new ContactPage(p).waitForHydration()],
      ['/signin', async (p) => expect(p.getByTestId('signin')).toBeEnabled()],
      ['/retention', async (p) => expect(p.getByTestId('promise-messages')).toBeVisible()],
      [link, async (p) => new ShareLandingPage(p).waitForHydration()],
      ['/s/not-a-real-share-token', async (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible()],
      [liveRequestLink(), async (p) => expect(p.locator('.page[data-hydrated]')).toHaveAttribute('data-hydrated', 'true')],
      ['/r/not-a-real-request-token', async (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible()],
      ['/invite/not-a-real-invite-token', async (p) => expect(p.getByTestId('invite-invalid')).toBeVisible()],
      ['/no-such-page', async (p) => expect(p.getByRole('heading', { level: 1 })).toBeVisible()],
    ];
    const context = await browser.newContext({ locale });
    const visitor = await context.newPage();
    for (const scheme of SCHEMES) {
      await visitor.emulateMedia({ colorScheme: scheme });
      for (const [path, ready] of pages) {
        await visitor.goto(path);
        await ready(visitor);
        await expectNoViolations(visitor, `${path} (${locale}, ${scheme})`);
      }
      // The contact form's error state (announced, fields marked) is checked too.
      const contact = new ContactPage(visitor);
      await contact.open();
      await contact.waitForHydration();
      await contact.send.click();
      await expect(contact.fieldError('email')).not.toBeEmpty();
      await expectNoViolations(visitor, `/ with errors (${locale}, ${scheme})`);
    }
    await context.close();
  });
}

// One test per language (in parallel), every admin page in both colour schemes.
for (const lang of ['en', 'ja']) {
  test(`axe finds no violations on the admin pages (${lang}), in both colour schemes`, async ({ page, baseURL }) => {
    test.setTimeout(120_000);
    const name = `A11y admin ${lang} ${Date.now().toString(36)}`;
    await VirtualAuthenticator.attach(page);
    // Something in the inbox and the shares list, so their tables are checked too.
    const contact = new ContactPage(page);
    await contact.open();
    await contact.waitForHydration();
    await contact.fill({ name: 'Ada <b>Lovelace</b>', email: 'ada@example.com', message: 'Checking the inbox table for accessibility.' });
    await contact.send.click();
    await expect(contact.success).toBeVisible();
    await new InvitePage(page).join(newInviteLink(name), name);
    const shares = new SharesPage(page);
    await shares.open();
    await shares.share({ name: 'a11y-admin.txt', mimeType: 'text/plain', buffer: Buffer.from('accessible') });
    // The upload's result (link and QR code) is part of the page too.
    if (lang === 'en') await expectNoViolations(page, '/admin/shares after an upload');
    await page.context().addCookies([{ name: 'ebb_lang', value: lang, url: baseURL! }]);

    // A data request for the address above (its page lists the inquiry; its dry run is a page too).
    const request = execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c',
      `insert into data_requests (kind, email, email_hash, received_on, due_on, note)
       values ('erasure', 'ada@example.com', md5('${name}'), current_date, current_date + 30, 'a11y') returning id`]).toString().trim();
    // A suspected spam row, so the Spam tab shows its table and its signals.
    execFileSync('psql', ['-qc', `insert into suspected_spam (id, name, email, message, signals, score)
       values (gen_random_uuid(), 'Spam ${lang}', 'spam@example.org', '<a href=x>cheap</a>', '{proof_missing,markup}', 14)`, process.env.E2E_DATABASE_URL!]);
    const paths = ['/admin', '/admin/inbox', '/admin/inbox?tab=spam', '/admin/shares', '/admin/audit', '/admin/audit/archive', '/admin/retention', '/admin/settings', '/admin/account',
      '/admin/requests', `/admin/requests/${request}`, `/admin/requests/${request}?step=preview`];
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const path of paths) {
        await page.goto(path);
        await waitForAdminHydration(page);
        await expect(page.locator('html')).toHaveAttribute('lang', lang);
        await expect(page.getByText(/^(Loading…|読み込み中…)$/)).toHaveCount(0);
        await expectNoViolations(page, `${path} (${lang}, ${scheme})`);
      }
    }
  });
}

/** The page's background colour, as the browser computed it. */
async function background(page: Page): Promise<string> {
  return page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
}

test('the colour scheme follows the system until the switch overrides it, and the choice is remembered', async ({ page, browser, baseURL }) => {
  const contact = new ContactPage(page);
  await page.emulateMedia({ colorScheme: 'dark' });
  await contact.open();
  await contact.waitForHydration();
  const switcher = page.getByTestId('theme-switch');
  await expect(switcher.getByRole('button', { name: 'Auto' })).toHaveAttribute('aria-pressed', 'true');
  const systemDark = await background(page);
  await page.emulateMedia({ colorScheme: 'light' });
  const systemLight = await background(page);
  expect(systemDark).not.toBe(systemLight);

  // "Dark" overrides a light system at once, without a reload (the typed message stays).
  await contact.name.fill('Kept while switching');
  await switcher.getByRole('button', { name: 'Dark' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  expect(await background(page)).toBe(systemDark);
  await expect(switcher.getByRole('button', { name: 'Dark' })).toHaveAttribute('aria-pressed', 'true');
  await expect(contact.name).toHaveValue('Kept while switching');

  // Remembered: the server renders the next page dark from its first byte.
  await expect.poll(async () => (await page.context().cookies()).find((c) => c.name === 'ebb_theme')?.value).toBe('dark');
  const cookie = (await page.context().cookies()).find((c) => c.name === 'ebb_theme')!;
  expect(cookie.httpOnly).toBe(true);
  expect(cookie.sameSite).toBe('Lax');
  const html = await (await page.request.get('/')).text();
  expect(html).toMatch(/<html[^>]*data-theme="dark"/);
  await page.goto('/retention');
  expect(await background(page)).toBe(systemDark);

  // "Light" overrides a dark system; "Auto" gives the choice back to the system.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByTestId('theme-switch').getByRole('button', { name: 'Light' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  expect(await background(page)).toBe(systemLight);
  await page.getByTestId('theme-switch').getByRole('button', { name: 'Auto' }).click();
  await expect(page.locator('html')).not.toHaveAttribute('data-theme', /.*/);
  expect(await background(page)).toBe(systemDark);
  await expect.poll(async () => (await page.context().cookies()).some((c) => c.name === 'ebb_theme')).toBe(false);

  // Without JavaScript the switch is a form: the server sets the cookie and sends the browser back.
  const plain = await browser.newContext({ javaScriptEnabled: false, baseURL, colorScheme: 'light' });
  const visitor = await plain.newPage();
  await visitor.goto('/retention');
  await visitor.getByTestId('theme-switch').getByRole('button', { name: 'Dark' }).click();
  await expect(visitor).toHaveURL(/\/retention$/);
  await expect(visitor.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(visitor.getByTestId('theme-switch').getByRole('button', { name: 'Dark' })).toHaveAttribute('aria-pressed', 'true');
  await plain.close();
});
