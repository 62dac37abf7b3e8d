import { expect, test } from '@playwright/test';
import { ContactPage, uniqueInquiry } from '../pages/contact-page';

test('hydration happened: the character counter follows typing', async ({ page }) => {
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  await contact.message.fill('Hello');
  // Only the hydrated client updates the counter; the server-rendered page says 0.
  await expect(contact.counter).toHaveText('5 / 5000 characters');
});

test('a hydrated submission shows success without reloading the page', async ({ page }) => {
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  // A marker on window survives only if the page is not reloaded.
  await page.evaluate(() => ((window as any).__noReload = true));

  // Hold the request to see the pending state.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/api/contact', async (route) => {
    await held;
    await route.continue();
  });

  await contact.fill(uniqueInquiry('hydrated'));
  await contact.send.click();
  await expect(page.getByRole('button', { name: 'Sending…' })).toBeDisabled();
  release();

  await expect(contact.success).toContainText('your message was sent');
  expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
  await expect(page).toHaveURL(/\/$/);
});

test('invalid fields show their errors beside them and nothing is sent', async ({ page }) => {
  const contact = new ContactPage(page);
  await contact.open();
  await contact.waitForHydration();
  const posts: string[] = [];
  page.on('request', (r) => r.method() === 'POST' && posts.push(r.url()));

  await contact.email.fill('not-an-address');
  await contact.send.click();
  await expect(contact.fieldError('name')).toHaveText('Please enter your name.');
  await expect(contact.fieldError('email')).toContainText('valid email address');
  await expect(contact.fieldError('message')).toHaveText('Please write a message.');
  await expect(contact.email).toHaveAttribute('aria-invalid', 'true');
  expect(posts).toEqual([]);

  // Fixing a field clears its error as you type.
  await contact.name.fill('Ann');
  await expect(contact.fieldError('name')).toBeEmpty();
});

test.describe('with JavaScript disabled', () => {
  test.use({ javaScriptEnabled: false });

  test('the form still posts and the server shows the thank-you message', async ({ page }) => {
    const contact = new ContactPage(page);
    await contact.open();
    await contact.fill(uniqueInquiry('nojs'));
    // No client runs: the counter stays as the server rendered it.
    await expect(contact.counter).toHaveText('0 / 5000 characters');
    await contact.send.click();
    await expect(page).toHaveURL(/\?sent=1/);
    await expect(contact.success).toContainText('your message was sent');
  });

  test('server-side field errors are shown beside the field', async ({ page }) => {
    const contact = new ContactPage(page);
    await contact.open();
    // The browser's own check accepts "a@localhost"; Ebb's parse function requires a domain.
    await contact.fill({ ...uniqueInquiry('nojs-invalid'), email: 'someone@localhost' });
    await contact.send.click();
    await expect(contact.fieldError('email')).toContainText('valid email address');
    await expect(contact.error).toContainText('Please correct the fields');
  });
});

test('what a visitor types before the page has hydrated is kept', async ({ page }) => {
  const contact = new ContactPage(page);
  // The client is held back until the form is filled in, as on a slow connection.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/ebb_bg.wasm', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto('/');
  await contact.name.fill('Early Bird');
  await contact.email.fill('early@example.com');
  await contact.message.fill('Typed while loading');
  await expect(contact.form).not.toHaveAttribute('data-hydrated', 'true');
  release();
  await contact.waitForHydration();
  // Hydration neither wiped the fields nor left the counter at the server's 0.
  await expect(contact.name).toHaveValue('Early Bird');
  await expect(contact.email).toHaveValue('early@example.com');
  await expect(contact.message).toHaveValue('Typed while loading');
  await expect(contact.counter).toHaveText('19 / 5000 characters');
  await contact.message.fill('Typed while loading, and after');
  await expect(contact.counter).toHaveText('30 / 5000 characters');
});

test('the home page fetches its client when first used, and a message sent before it arrives is sent as a plain form', async ({ page }) => {
  const contact = new ContactPage(page);
  const wasm: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('.wasm')) wasm.push(r.url());
  });
  // The client never arrives, as on a connection that stalls.
  await page.route('**/ebb_bg.wasm', () => new Promise<void>(() => {}));
  await contact.open();
  await page.waitForLoadState('networkidle');
  expect(wasm, 'a visitor who only reads fetches no wasm').toEqual([]);
  await contact.fill(uniqueInquiry('before-client'));
  // The glue is imported on the first key, then it requests the wasm: wait for that request
  // (the request event comes after the typing returns), and there is exactly one.
  await expect.poll(() => wasm.length, { message: 'typing fetches the client' }).toBe(1);
  await expect(contact.form).not.toHaveAttribute('data-hydrated', 'true');
  await contact.send.click();
  await expect(page).toHaveURL(/\?sent=1/);
  await expect(contact.success).toContainText('your message was sent');
});
