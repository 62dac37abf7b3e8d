import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { AccountPage, AdminShell, InvitePage, SignInPage, VirtualAuthenticator, newInviteLink } from '../pages/admin';

/** A request context with no cookies of its own: only the cookie we hand it is sent. */
async function bareRequest(playwright: any, baseURL: string | undefined): Promise<APIRequestContext> {
  return playwright.request.newContext({ baseURL });
}

/** The stored credential's backup-eligible flag and counter, read from the database. */
function storedCredential(adminName: string): string {
  const sql = `select (p.passkey->'cred'->>'backup_eligible') || '|' || (p.passkey->'cred'->>'counter')
               from passkeys p join admins a on a.id = p.admin_id where a.name = '${adminName.replace(/'/g, "''")}'`;
  return execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c', sql]).toString().trim();
}

function uniqueName(tag: string) {
  return `${tag} ${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

test('signed-out /admin redirects to sign-in and comes back after it', async ({ page }) => {
  await page.goto('/admin/account');
  await expect(page).toHaveURL(/\/signin\?next=%2Fadmin%2Faccount$/);
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
});

test('redeem an invite, sign out, sign in again and reach /admin', async ({ page, playwright, baseURL }) => {
  const name = uniqueName('Admin');
  const authenticator = await VirtualAuthenticator.attach(page);
  const shell = new AdminShell(page);

  await new InvitePage(page).join(newInviteLink(name), name);
  await shell.expectSignedInAs(name);
  expect(await authenticator.credentials()).toHaveLength(1);
  const firstCookie = await shell.sessionCookie();
  expect(firstCookie).toBeTruthy();

  await shell.signOut();
  // The signed-out cookie no longer opens admin pages.
  const api = await bareRequest(playwright, baseURL);
  const stale = await api.get('/admin', { headers: { cookie: `ebb_session=${firstCookie}` }, maxRedirects: 0 });
  expect(stale.status()).toBe(303);

  await page.goto('/signin?next=%2Fadmin%2Faccount');
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin\/account$/);
  await shell.expectSignedInAs(name);
  await expect(page.getByTestId('passkeys')).toContainText('Virtual key');
  await expect(page.getByTestId('session-row').filter({ hasText: 'this browser' })).toHaveCount(1);
});

test('the session id changes at sign-in and the old one is refused', async ({ page, playwright, baseURL }) => {
  const name = uniqueName('Fixation');
  await VirtualAuthenticator.attach(page);
  const shell = new AdminShell(page);
  await new InvitePage(page).join(newInviteLink(name), name);
  const before = await shell.sessionCookie();

  // Sign in again while signed in: a new session id is issued.
  await page.goto('/signin');
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin$/);
  const after = await shell.sessionCookie();
  expect(after).toBeTruthy();
  expect(after).not.toBe(before);

  const api = await bareRequest(playwright, baseURL);
  const old = await api.post('/api/auth/me', { headers: { cookie: `ebb_session=${before}`, accept: 'application/json' } });
  expect(await old.json()).toBeNull();
  const current = await api.post('/api/auth/me', { headers: { cookie: `ebb_session=${after}`, accept: 'application/json' } });
  expect((await current.json()).name).toBe(name);
});

test('add a second passkey, remove one; the last one cannot be removed', async ({ page }) => {
  page.on('dialog', (d) => d.accept());
  const name = uniqueName('Keys');
  const first = await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(name), name, 'First key');
  const account = new AccountPage(page);
  await account.open();
  await expect(account.rows()).toHaveCount(1);
  await expect(account.removeButton('First key')).toBeDisabled();

  // A second device: the first authenticator is put away, a new one registers.
  await first.remove();
  const second = await VirtualAuthenticator.attach(page);
  await account.addPasskey('Second key');
  await expect(account.rows()).toHaveCount(2);
  expect(await second.credentials()).toHaveLength(1);

  await account.removeButton('First key').click();
  await expect(page.getByTestId('account-message')).toHaveText('Passkey removed.');
  await expect(account.rows()).toHaveCount(1);
  await expect(account.removeButton('Second key')).toBeDisabled();

  // The remaining passkey still signs in.
  await new AdminShell(page).signOut();
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin$/);
});

test('a passkey whose backup-eligible flag changed still signs in, and the change is stored', async ({ page }) => {
  const name = uniqueName('Backup');
  const authenticator = await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(name), name);
  await new AdminShell(page).signOut();
  expect(storedCredential(name)).toMatch(/^false\|/);

  const [credential] = await authenticator.credentials();
  await authenticator.cdp.send('WebAuthn.setCredentialProperties', {
    authenticatorId: authenticator.id,
    credentialId: credential.credentialId,
    backupEligibility: true,
    backupState: false,
  });
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin$/);
  // The stored credential was updated after the sign-in (backup eligibility and counter).
  expect(storedCredential(name)).toMatch(/^true\|[1-9]\d*$/);
  // Signing in once more proves the stored credential now carries the new flag.
  await new AdminShell(page).signOut();
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin$/);
});

test('an unknown passkey is refused with a clear message', async ({ page }) => {
  const authenticator = await VirtualAuthenticator.attach(page);
  // A credential for this site that Ebb never registered.
  await authenticator.cdp.send('WebAuthn.addCredential', {
    authenticatorId: authenticator.id,
    credential: {
      credentialId: Buffer.from('not-registered-credential').toString('base64'),
      isResidentCredential: true,
      rpId: 'localhost',
      userHandle: Buffer.from('0123456789abcdef').toString('base64'),
      privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      signCount: 0,
    },
  });
  await page.goto('/signin');
  await new SignInPage(page).signIn();
  await expect(page.getByTestId('signin-error')).toContainText('not accepted');
  await expect(page).toHaveURL(/\/signin$/);
});

test('where the browser offers passkey autofill, picking the passkey signs in without the button', async ({ page }) => {
  const name = uniqueName('Autofill');
  await VirtualAuthenticator.attach(page, { autofill: true });
  await new InvitePage(page).join(newInviteLink(name), name);
  // Signed out by forgetting the session cookie, away from any page: signing out through the
  // page lands on /signin, whose own autofill request would sign in again and race the visit
  // below (its navigation aborted the `goto` once in CI).
  await page.goto('about:blank');
  await page.context().clearCookies();
  // The virtual authenticator answers the autofill request as if the person picked their passkey.
  await page.goto('/signin?next=%2Fadmin%2Fsettings');
  await page.waitForURL(/\/admin\/settings$/);
  await new AdminShell(page).expectSignedInAs(name);
});

test('a used or unknown invite link says so', async ({ page }) => {
  await page.goto('/invite/this-is-not-a-valid-token');
  await expect(page.getByTestId('invite-invalid')).toContainText('not valid');
  // A real link, used once: the second visit is refused the same way (links are single-use).
  const name = uniqueName('Once');
  await VirtualAuthenticator.attach(page);
  const link = newInviteLink(name);
  await new InvitePage(page).join(link, name);
  await new AdminShell(page).expectSignedInAs(name);
  await page.goto(new URL(link).pathname);
  await expect(page.getByTestId('invite-invalid')).toContainText('not valid');
});
