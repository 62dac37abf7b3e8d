import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { AdminShell, InvitePage, SignInPage, VirtualAuthenticator, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage, uniqueInquiry } from '../pages/contact-page';
import { SharesPage, ShareLandingPage } from '../pages/shares';

// Ebb behind nginx (TLS with the test's own CA, two instances, one trusted hop): what an operator
// gets from the README's configuration.

test('a passkey is registered and signs in over https; cookies are Secure and HttpOnly, HSTS is sent', async ({ page }) => {
  const home = await page.goto('/');
  expect(home!.url()).toMatch(/^https:\/\//);
  expect(home!.headers()['strict-transport-security']).toMatch(/max-age=\d+/);
  await VirtualAuthenticator.attach(page);
  const name = `Proxy ${Date.now().toString(36)}`;
  await new InvitePage(page).join(newInviteLink(name), name);
  const session = (await page.context().cookies()).find((c) => c.name === 'ebb_session');
  expect(session, 'a session cookie').toBeTruthy();
  expect(session!.secure).toBe(true);
  expect(session!.httpOnly).toBe(true);
  expect(session!.sameSite).toBe('Lax');
  const shell = new AdminShell(page);
  await shell.signOut();
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin$/);
  await shell.expectSignedInAs(name);
});

test('the dashboard updates live through the proxy (server-sent events, not buffered)', async ({ page, browser }) => {
  await VirtualAuthenticator.attach(page);
  const name = `Live ${Date.now().toString(36)}`;
  await new InvitePage(page).join(newInviteLink(name), name);
  await page.goto('/admin/inbox');
  await waitForAdminHydration(page);
  await expect(page.locator('html')).toHaveAttribute('data-live', 'on');
  // A visitor writes; whichever instance takes it, the page shows it without a reload.
  const visitor = await browser.newPage();
  const contact = new ContactPage(visitor);
  const inquiry = uniqueInquiry('proxy');
  await contact.open();
  await contact.waitForHydration();
  await contact.fill(inquiry);
  await contact.send.click();
  await expect(contact.success).toBeVisible({ timeout: 30_000 });
  await expect(page.getByText(inquiry.name)).toBeVisible();
  await visitor.close();
});

test('a 1 GiB file is uploaded through the proxy and downloaded once, byte for byte', async ({ page, browser }) => {
  const size = 1024 * 1024 * 1024;
  const file = join(tmpdir(), `ebb-proxy-${Date.now()}.bin`);
  // Not all the same byte: a wrong offset anywhere would show in the hash.
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(file);
    const block = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < block.length; i++) block[i] = (i * 31) % 251;
    let written = 0;
    const more = () => {
      while (written < size) {
        block.writeUInt32BE(written / block.length, 0);
        written += block.length;
        if (!out.write(block)) return out.once('drain', more);
      }
      out.end(resolve);
    };
    out.on('error', reject);
    more();
  });
  const sha = async (path: string) => {
    const h = createHash('sha256');
    for await (const chunk of createReadStream(path)) h.update(chunk);
    return h.digest('hex');
  };
  const expected = await sha(file);

  await VirtualAuthenticator.attach(page);
  const name = `Big ${Date.now().toString(36)}`;
  await new InvitePage(page).join(newInviteLink(name), name);
  const shares = new SharesPage(page);
  await shares.open();
  await page.getByLabel('File', { exact: true }).setInputFiles(file);
  await page.getByRole('button', { name: 'Upload and create link' }).click();
  await expect(page.getByTestId('share-created')).toBeVisible({ timeout: 180_000 });
  const link = await page.getByTestId('share-url').inputValue();
  expect(link).toMatch(/^https:\/\/[^/]+\/s\//);

  const recipient = await browser.newPage();
  await recipient.goto(link);
  const landing = new ShareLandingPage(recipient);
  const [download] = await Promise.all([recipient.waitForEvent('download'), landing.download().click()]);
  const saved = await download.path();
  expect(statSync(saved).size).toBe(size);
  expect(await sha(saved)).toBe(expected);
  // Once: the link is used up, on either instance.
  await recipient.goto(link);
  await expect(landing.download()).toHaveCount(0);
  await recipient.close();
});

/** POSTs the contact form from a given local address (a client of its own), through the proxy. */
function postFrom(localAddress: string, extraHeaders: Record<string, string> = {}): Promise<number> {
  const body = new URLSearchParams({ name: 'Rate Test', email: 'rate@example.org', message: 'counting' }).toString();
  const base = new URL(process.env.BASE_URL!);
  return new Promise((resolve, reject) => {
    // Straight to the loopback address (Node does not resolve *.localhost as Chromium does),
    // with the site's name for TLS and for nginx.
    const req = https.request(
      {
        host: '127.0.0.1',
        port: Number(base.port),
        servername: base.hostname,
        path: '/api/contact',
        method: 'POST',
        localAddress,
        headers: {
          host: base.host,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
          ...extraHeaders,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('rate limits count each real client: the address comes from X-Forwarded-For with one trusted hop', async () => {
  const limit = Number(process.env.E2E_CONTACT_RATE_LIMIT);
  expect(limit).toBeGreaterThan(0);
  // Client A (127.0.0.2) uses its budget; a made-up X-Forwarded-For does not give it another.
  for (let i = 0; i < limit; i++) expect(await postFrom('127.0.0.2')).toBeLessThan(400);
  expect(await postFrom('127.0.0.2')).toBe(429);
  expect(await postFrom('127.0.0.2', { 'x-forwarded-for': '203.0.113.9' })).toBe(429);
  // Client B (127.0.0.3), behind the same proxy, has its own.
  expect(await postFrom('127.0.0.3')).toBeLessThan(400);
});
