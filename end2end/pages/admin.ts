import { execFileSync } from 'node:child_process';
import { expect, type CDPSession, type Page } from '@playwright/test';

/** Chromium's virtual authenticator (CDP WebAuthn domain): a platform passkey with user verification. */
export class VirtualAuthenticator {
  private constructor(readonly cdp: CDPSession, readonly id: string) {}

  /**
   * Attaches an authenticator to `page`. Chromium's virtual authenticator answers a passkey
   * autofill (conditional) request at once, which would sign in before a test clicks anything;
   * unless `autofill` is asked for, the page is told autofill is unavailable so tests drive the
   * button flow deterministically.
   */
  static async attach(page: Page, { autofill = false } = {}): Promise<VirtualAuthenticator> {
    if (!autofill) {
      await page.addInitScript(() => {
        if (window.PublicKeyCredential) {
          (window.PublicKeyCredential as any).isConditionalMediationAvailable = async () => false;
        }
      });
    }
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return new VirtualAuthenticator(cdp, authenticatorId);
  }

  async credentials() {
    const { credentials } = await this.cdp.send('WebAuthn.getCredentials', { authenticatorId: this.id });
    return credentials;
  }

  async remove() {
    await this.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: this.id });
  }
}

/**
 * A fresh one-time invite link, as an operator gets it: from `E2E_INVITE_CMD` when set (QA
 * against a running Ebb: any shell command printing an invite link, e.g.
 * `ssh ebb-host ebb admin invite`), else from the `ebb admin invite` of the server scripts/e2e.sh
 * started. The admin's name, when given, is passed as `--name`.
 */
export function newInviteLink(name?: string): string {
  const nameArgs = name ? ['--name', name] : [];
  let out: string;
  if (process.env.E2E_INVITE_CMD) {
    const quoted = nameArgs.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    out = execFileSync('sh', ['-c', `${process.env.E2E_INVITE_CMD} ${quoted}`]).toString();
  } else {
    const bin = process.env.EBB_BIN;
    if (!bin) throw new Error('set E2E_INVITE_CMD (a command printing an invite link) or EBB_BIN (scripts/e2e.sh sets it)');
    out = execFileSync(bin, ['admin', 'invite', ...nameArgs], { env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL } }).toString();
  }
  const link = out.split('\n').find((l) => l.startsWith('http'));
  if (!link) throw new Error(`no link in: ${out}`);
  // The invite is for the server under test, whatever public URL printed it.
  const base = process.env.BASE_URL;
  return base ? new URL(new URL(link.trim()).pathname, base).toString() : link.trim();
}

/** Runs SQL on the server's database as an operator would with psql (test set-up only). */
export function sql(statement: string): string {
  const url = process.env.E2E_DATABASE_URL;
  if (!url) throw new Error('E2E_DATABASE_URL must name the server\'s database (scripts/e2e.sh sets it)');
  return execFileSync('psql', [url, '-XAtq', '-v', 'ON_ERROR_STOP=1', '-c', statement]).toString().trim();
}

/**
 * `ebb maintenance run JOB… --force` against the server's database and storage: the job has run
 * to its end when this returns. Tests that need a run at a known moment use this rather than the
 * settings page's "Run now", which honours the job's interval: the server also starts due jobs
 * after its responses (other tests' requests included), so a claim freed for "Run now" can be
 * taken by such a run first.
 */
export function runJobs(...jobs: string[]): string {
  return execFileSync(process.env.EBB_BIN!, ['maintenance', 'run', ...jobs, '--force'], {
    env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL!, EBB_STORAGE_DIR: process.env.E2E_STORAGE_DIR! },
  }).toString();
}

export class InvitePage {
  constructor(readonly page: Page) {}
  async join(link: string, name: string, passkeyName = 'Virtual key') {
    await this.page.goto(link);
    await expect(this.page.getByRole('heading', { name: 'Join Ebb as an admin' })).toBeVisible();
    // The button is enabled once the page has hydrated; typing earlier would be overwritten.
    await expect(this.page.getByRole('button', { name: 'Create passkey and join' })).toBeEnabled();
    await this.page.getByLabel('Your name').fill(name);
    await this.page.getByLabel('Name for this passkey').fill(passkeyName);
    await this.page.getByRole('button', { name: 'Create passkey and join' }).click();
    await this.page.waitForURL(/\/admin$/);
    // The dashboard it lands on is loaded in full (its module, its live stream), so what a test
    // does next is not mixed up with this page's requests.
    await waitForAdminHydration(this.page);
  }
}

export class SignInPage {
  constructor(readonly page: Page) {}
  async signIn() {
    const button = this.page.getByTestId('signin');
    await expect(button).toBeEnabled();
    await button.click();
  }
}

/** A reply to a page's live stream (`/admin/live`) played by a test: "ready", then `events`
 *  (server-sent event text), then the end of the stream; the browser comes back after `retryMs`. */
export function liveStreamReply(retryMs: number, events = '') {
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: `retry: ${retryMs}\nevent: ready\ndata: \n\n${events}` };
}

/** Admin pages are usable once the shell has hydrated. The dashboard opened by a page load
 *  hydrates when first used (app/src/dashboard_on_first_use.js): a key press (Shift, which does
 *  nothing else) is that use. */
export async function waitForAdminHydration(page: Page) {
  if (new URL(page.url()).pathname === '/admin') await page.keyboard.press('Shift');
  await expect(page.locator('.admin')).toHaveAttribute('data-hydrated', 'true');
}

export class AdminShell {
  constructor(readonly page: Page) {}
  async expectSignedInAs(name: string) {
    await expect(this.page.getByTestId('admin-name')).toHaveText(name);
  }
  async signOut() {
    await this.page.getByTestId('signout').click();
    await this.page.waitForURL(/\/signin/);
  }
  async sessionCookie(): Promise<string | undefined> {
    const cookies = await this.page.context().cookies();
    return cookies.find((c) => c.name === 'ebb_session')?.value;
  }
}

export class AccountPage {
  constructor(readonly page: Page) {}
  rows() {
    return this.page.getByTestId('passkey-row');
  }
  async open() {
    await this.page.goto('/admin/account');
    await expect(this.page.getByRole('heading', { name: 'Account' })).toBeVisible();
    await waitForAdminHydration(this.page);
  }
  async addPasskey(name: string) {
    await this.page.getByLabel('Name for a new passkey').fill(name);
    await this.page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect(this.page.getByTestId('account-message')).toHaveText('Passkey added.');
  }
  removeButton(name: string) {
    return this.rows().filter({ hasText: name }).getByRole('button', { name: 'Remove' });
  }
}
