// The README's screenshots (`make screenshots`, into end2end/screenshots): the main pages in both languages, light and
// dark, taken from a freshly started Ebb. Not part of `make test` (the project exists only when
// SCREENSHOTS is set; see playwright.config.ts).
import { expect, test, type Browser, type Page } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { SharesPage } from '../pages/shares';

const OUT = 'screenshots';

async function shoot(page: Page, name: string, fullPage = false) {
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: `${OUT}/${name}.png`, fullPage });
}

async function visitor(browser: Browser, locale: string, colorScheme: 'light' | 'dark') {
  const context = await browser.newContext({ locale, colorScheme, viewport: { width: 1000, height: 760 } });
  return { context, page: await context.newPage() };
}

test('screenshots of the main pages in English and Japanese', async ({ browser }) => {
  test.setTimeout(120_000);
  // An admin with something to show.
  const adminContext = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const admin = await adminContext.newPage();
  await VirtualAuthenticator.attach(admin);
  const contact = new ContactPage(admin);
  for (const [name, email, message] of [
    ['Hanako Yamada', 'hanako@example.jp', 'Could you send me the product brochure?'],
    ['Ann Lee', 'ann@example.org', 'Hello! I would like to book a demo next week.'],
  ]) {
    await contact.open();
    await contact.waitForHydration();
    await contact.fill({ name, email, message });
    await contact.send.click();
    await contact.success.waitFor();
  }
  await new InvitePage(admin).join(newInviteLink('Ada'), 'Ada');
  const shares = new SharesPage(admin);
  await shares.open();
  const link = await shares.share({ name: 'Quarterly report.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(240_000, 7) }, '1 day', 'For Ann');
  await shoot(admin, 'admin-shares-en', true);
  // A bot's submission (no proof of work, a link farm) for the Spam tab.
  await admin.request.post('/api/contact', {
    form: { name: 'Win Big', email: 'promo@example.net', message: 'Cheap watches http://a.example http://b.example http://c.example' },
    headers: { accept: 'application/json' },
  });
  await admin.goto('/admin');
  await waitForAdminHydration(admin);
  await shoot(admin, 'admin-dashboard-en');
  await admin.goto('/admin/inbox?tab=spam');
  await waitForAdminHydration(admin);
  await shoot(admin, 'admin-spam-en');
  // The audit log after "Verify now": what was checked, and how.
  await admin.goto('/admin/audit');
  await waitForAdminHydration(admin);
  await admin.getByTestId('verify-trail').click();
  await expect(admin.getByTestId('verify-result')).toContainText(/The audit trail (verifies|does NOT verify)/, { timeout: 30_000 });
  await shoot(admin, 'admin-audit-verify-en', true);
  await admin.emulateMedia({ colorScheme: 'dark' });
  await admin.goto('/admin/inbox');
  await waitForAdminHydration(admin);
  await shoot(admin, 'admin-inbox-en-dark');
  // The same pages in Japanese (the language switch's cookie).
  await adminContext.addCookies([{ name: 'ebb_lang', value: 'ja', url: new URL('/', admin.url()).toString() }]);
  await admin.emulateMedia({ colorScheme: 'light' });
  await admin.goto('/admin');
  await waitForAdminHydration(admin);
  await shoot(admin, 'admin-dashboard-ja');
  await admin.goto('/admin/shares');
  await waitForAdminHydration(admin);
  await shoot(admin, 'admin-shares-ja', true);
  await admin.emulateMedia({ colorScheme: 'dark' });
  await admin.goto('/admin/inbox');
  await waitForAdminHydration(admin);
  await shoot(admin, 'admin-inbox-ja-dark');
  await adminContext.close();

  for (const [lang, locale] of [['en', 'en-US'], ['ja', 'ja-JP']]) {
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page } = await visitor(browser, locale, scheme);
      await page.goto('/');
      await new ContactPage(page).waitForHydration();
      await shoot(page, `contact-${lang}-${scheme}`);
      if (scheme === 'light') {
        await page.goto(link);
        await shoot(page, `share-${lang}`);
        await page.goto('/signin');
        await shoot(page, `signin-${lang}`);
        await page.goto('/retention');
        await shoot(page, `retention-${lang}`);
      }
      await context.close();
    }
  }
});
