import { expect, test, type Page } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { ShareLandingPage, SharesPage } from '../pages/shares';

/** Console errors (a hydration mismatch is one) collected while the page is used. */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

test('a Japanese browser gets the visitor pages in Japanese, and the contact form works in them', async ({ browser }) => {
  const context = await browser.newContext({ locale: 'ja-JP' });
  const page = await context.newPage();
  const errors = consoleErrors(page);
  await page.goto('/');
  await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('お問い合わせ');
  await new ContactPage(page).waitForHydration();
  // Validation in Japanese, in the browser...
  await page.getByLabel('お名前').fill('山田 花子');
  await page.getByLabel('メールアドレス').fill('hanako@');
  await page.getByLabel('メッセージ').fill('資料を送ってください。');
  await page.getByRole('button', { name: '送信する' }).click();
  await expect(page.locator('#contact-email-error')).toHaveText('name@example.org のような正しいメールアドレスを入力してください。');
  // ...and the sent message.
  await page.getByLabel('メールアドレス').fill('hanako@example.jp');
  await page.getByRole('button', { name: '送信する' }).click();
  await expect(page.getByTestId('contact-success')).toContainText('ありがとうございます。メッセージを送信しました。');
  await page.goto('/retention');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('データの保管期間');
  await expect(page.getByTestId('promise-messages')).toContainText(/\d+ 日間保管され/);
  await page.goto('/signin');
  await expect(page.getByRole('button', { name: 'パスキーでサインイン' })).toBeEnabled();
  expect(errors, 'no hydration or other errors in the console').toEqual([]);

  // The server's own validation answers in Japanese too (a plain form post, no JavaScript).
  const plain = await browser.newContext({ locale: 'ja-JP', javaScriptEnabled: false });
  const noJs = await plain.newPage();
  await noJs.goto('/');
  await noJs.getByLabel('お名前').fill('山田');
  // Passes the browser's own check (no JavaScript: no novalidate), fails the server's (no TLD).
  await noJs.getByLabel('メールアドレス').fill('hanako@localhost');
  await noJs.getByLabel('メッセージ').fill('こんにちは');
  await noJs.getByRole('button', { name: '送信する' }).click();
  await expect(noJs.getByTestId('contact-error')).toHaveText('エラーが表示された項目を修正してください。');
  await expect(noJs.locator('#contact-email-error')).toHaveText('name@example.org のような正しいメールアドレスを入力してください。');
  await plain.close();
  await context.close();
});

test('the language switch overrides the browser language, is remembered, and works without JavaScript', async ({ browser, baseURL }) => {
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  const errors = consoleErrors(page);
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  const switcher = page.getByTestId('lang-switch');
  await expect(switcher.getByRole('button', { name: 'English' })).toHaveAttribute('aria-pressed', 'true');
  await switcher.getByRole('button', { name: '日本語' }).click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('お問い合わせ');
  await expect(page.getByTestId('lang-switch').getByRole('button', { name: '日本語' })).toHaveAttribute('aria-pressed', 'true');
  const cookie = (await context.cookies()).find((c) => c.name === 'ebb_lang');
  expect(cookie?.value).toBe('ja');
  expect(cookie?.httpOnly).toBe(true);
  // Remembered on the next page, whatever the browser asks for.
  await page.goto('/retention');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('データの保管期間');
  await expect(page.locator('#contact form')).toHaveCount(0);
  await page.goto('/');
  await new ContactPage(page).waitForHydration();
  await page.getByTestId('lang-switch').getByRole('button', { name: 'English' }).click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Get in touch');
  expect(errors).toEqual([]);
  await context.close();

  // Without JavaScript the switch is a form: the server sets the cookie and sends the page back.
  const plain = await browser.newContext({ locale: 'en-US', javaScriptEnabled: false, baseURL });
  const noJs = await plain.newPage();
  await noJs.goto('/retention');
  await noJs.getByTestId('lang-switch').getByRole('button', { name: '日本語' }).click();
  await expect(noJs).toHaveURL(/\/retention$/);
  await expect(noJs.locator('html')).toHaveAttribute('lang', 'ja');
  await expect(noJs.getByRole('heading', { level: 1 })).toHaveText('データの保管期間');
  await plain.close();
});

test('a shared file is downloaded from the Japanese page', async ({ page, browser }) => {
  const tag = `ja-${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(tag), tag);
  const shares = new SharesPage(page);
  await shares.open();
  const link = await shares.share({ name: `${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('日本語のファイル') });

  const context = await browser.newContext({ locale: 'ja' });
  const recipient = await context.newPage();
  const errors = consoleErrors(recipient);
  await recipient.goto(link);
  await expect(recipient.getByRole('heading', { level: 1 })).toHaveText('ファイルが共有されました');
  await new ShareLandingPage(recipient).waitForHydration();
  const download = recipient.waitForEvent('download');
  await recipient.getByRole('button', { name: 'ダウンロード' }).click();
  expect((await download).suggestedFilename()).toBe(`${tag}.txt`);
  await expect(recipient.getByText('ダウンロードを開始しました。')).toBeVisible();
  await recipient.reload();
  await expect(recipient.getByRole('heading', { level: 1 })).toHaveText('このファイルはすでにダウンロードされています');
  expect(errors.filter((e) => !e.includes('410'))).toEqual([]);
  await context.close();
});

test("times are shown in the reader's time zone once the page has hydrated, and in UTC without JavaScript", async ({ browser, baseURL }) => {
  const tag = `tz-${Date.now().toString(36)}`;
  const context = await browser.newContext({ timezoneId: 'Asia/Tokyo', locale: 'en-US' });
  const page = await context.newPage();
  await VirtualAuthenticator.attach(page);
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: tag, email: 'tz@example.org', message: 'What time is it?' });
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  await new InvitePage(page).join(newInviteLink(tag), tag);
  await page.goto('/admin/inbox');
  const time = page.getByTestId('inquiry-row').filter({ hasText: tag }).locator('time');
  await expect(time).toHaveText(/GMT\+9|JST/);
  await expect(time).toHaveAttribute('title', /UTC$/);
  const instant = Date.parse((await time.getAttribute('datetime'))!);
  expect(Math.abs(Date.now() - instant)).toBeLessThan(10 * 60_000);
  const cookie = (await context.cookies()).find((c) => c.name === 'ebb_session')!;

  // Without JavaScript: the server's UTC.
  const plain = await browser.newContext({ javaScriptEnabled: false, baseURL, timezoneId: 'Asia/Tokyo' });
  await plain.addCookies([{ name: 'ebb_session', value: cookie.value, url: baseURL! }]);
  const noJs = await plain.newPage();
  await noJs.goto('/admin/inbox');
  await expect(noJs.getByTestId('inquiry-row').filter({ hasText: tag }).locator('time')).toHaveText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  await plain.close();
  await context.close();
});

test('an admin works in Japanese: navigation, inbox delete with its confirmation, share upload', async ({ page, browser, baseURL }) => {
  test.setTimeout(60_000);
  const tag = `ja-admin-${Date.now().toString(36)}`;
  // An inquiry to delete, from a visitor.
  const visitorContext = await browser.newContext({ locale: 'ja-JP' });
  const contact = new ContactPage(await visitorContext.newPage());
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: tag, email: 'ja-admin@example.jp', message: '管理画面のテストです。' });
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  await visitorContext.close();

  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(tag), tag);
  const errors = consoleErrors(page);
  await page.context().addCookies([{ name: 'ebb_lang', value: 'ja', url: baseURL! }]);
  await page.goto('/admin');
  await waitForAdminHydration(page);
  await expect(page.locator('html')).toHaveAttribute('lang', 'ja');
  await expect(page).toHaveTitle('ダッシュボード — Ebb 管理画面');
  const nav = page.getByRole('navigation', { name: '管理メニュー' });
  for (const name of ['ダッシュボード', '受信箱', '共有ファイル', '監査ログ', '保管期間', '設定', 'アカウント']) {
    await expect(nav.getByRole('link', { name, exact: true })).toBeVisible();
  }
  await expect(page.getByRole('button', { name: 'サインアウト' })).toBeVisible();

  // The inbox, reached by navigation (its lazily loaded chunk), deletes after a Japanese confirmation.
  await nav.getByRole('link', { name: '受信箱', exact: true }).click();
  await expect(page.getByRole('heading', { name: '受信箱', exact: true })).toBeVisible();
  const row = page.getByTestId('inquiry-row').filter({ hasText: tag });
  await expect(row).toBeVisible();
  let asked = '';
  page.once('dialog', async (d) => {
    asked = d.message();
    await d.accept();
  });
  await row.getByRole('button', { name: '削除', exact: true }).click();
  // Written by the task that ran after the server's answer: still in the page's language.
  await expect(page.getByTestId('inbox-message')).toHaveText('お問い合わせを 1 件削除しました。');
  expect(asked).toBe('このお問い合わせを削除しますか？この操作は取り消せません。');
  await expect(row).toHaveCount(0);

  // A share uploaded from the Japanese page.
  await nav.getByRole('link', { name: '共有ファイル', exact: true }).click();
  await expect(page.getByRole('heading', { name: '共有ファイル', exact: true })).toBeVisible();
  await expect(page.getByTestId('upload-form')).toHaveAttribute('data-hydrated', 'true');
  await page.getByRole('button', { name: 'アップロードしてリンクを作成' }).click();
  await expect(page.getByText('共有するファイルを選択してください。')).toBeVisible();
  await page.getByLabel('ファイル', { exact: true }).setInputFiles({ name: `${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('日本語') });
  await page.getByRole('button', { name: 'アップロードしてリンクを作成' }).click();
  await expect(page.getByTestId('share-created')).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('share-row').filter({ hasText: `${tag}.txt` })).toBeVisible();

  // Opened directly (server-rendered), the audit log is Japanese too, and so is what it lists.
  await page.goto('/admin/audit');
  await waitForAdminHydration(page);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('監査ログ');
  expect(errors, 'no hydration or other errors in the console').toEqual([]);
});
