import { expect, test, type Page } from '@playwright/test';
import { ContactPage } from '../pages/contact-page';
import { ShareLandingPage } from '../pages/shares';
import { AdminShell, InvitePage, VirtualAuthenticator, liveStreamReply, newInviteLink, waitForAdminHydration } from '../pages/admin';

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
  // The sign-in page loads no wasm at all: its passkey ceremony is a small script of its own,
  // and a press on its button fetches none either (in a browser that has not cached it yet).
  const fresh = await (await browser.newContext({ baseURL })).newPage();
  const signin = await wasmFetched(fresh, async () => {
    await fresh.goto('/signin');
    await expect(fresh.getByTestId('signin')).toBeEnabled();
  });
  expect(signin, '/signin fetches no wasm').toEqual([]);
  const pressed = await wasmFetched(fresh, async () => {
    await fresh.getByTestId('signin').hover();
    await fresh.mouse.down();
    await fresh.waitForLoadState('networkidle');
  });
  expect(pressed, 'pressing the button fetches no wasm').toEqual([]);
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

test('an admin who signs in lands on a working dashboard with no wasm fetched, and its client comes on first use', async ({ page, browser, baseURL }) => {
  const authenticator = await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink('Cached Cai'), 'Cached Cai');
  const [credential] = await authenticator.credentials();
  expect(credential).toBeTruthy();
  // The admin signs in from a browser that has never loaded the app's client (the join above
  // did), with the same passkey.
  const fresh = await (await browser.newContext({ baseURL })).newPage();
  const passkey = await VirtualAuthenticator.attach(fresh);
  await passkey.cdp.send('WebAuthn.addCredential', { authenticatorId: passkey.id, credential });
  // No change may reach the dashboard's live stream (another test's would start its client).
  await quietLiveStream(fresh);
  // Signing in and looking at the dashboard: no wasm at all. The virtual passkey answers at
  // once; a person takes seconds, which the pause between press and release stands for (the
  // browser fetches in that time whatever the page asks it to).
  const signedIn = await wasmFetched(fresh, async () => {
    await fresh.goto('/signin');
    const button = fresh.getByTestId('signin');
    await expect(button).toBeEnabled();
    await button.hover();
    await fresh.mouse.down();
    await fresh.waitForLoadState('networkidle');
    await fresh.waitForTimeout(500);
    await fresh.mouse.up();
    await fresh.waitForURL(/\/admin$/);
    await expect(fresh.getByRole('heading', { name: 'Dashboard', exact: true })).toBeVisible();
    await expect(fresh.getByTestId('count-total')).toHaveText(/^\d[\d,]*$/);
  });
  expect(signedIn, 'signing in and seeing the dashboard fetches no wasm').toEqual([]);
  await expect(fresh.locator('.admin')).toHaveAttribute('data-hydrated', 'false');
  // The admin's first use brings the main and admin modules, and the dashboard hydrates.
  const used = await wasmFetched(fresh, async () => {
    await waitForAdminHydration(fresh);
  });
  expect(used).toEqual(expect.arrayContaining(['ebb_bg.wasm', 'split_ebb_admin.wasm']));
  await new AdminShell(fresh).expectSignedInAs('Cached Cai');
  await fresh.context().close();
});

/** Answers the page's live stream with "ready" only, and asks the browser to come back in ten
 *  minutes: no change reaches the page (other tests' changes would start its client). */
async function quietLiveStream(page: Page) {
  await page.route('**/admin/live', (route) => route.fulfill(liveStreamReply(600_000)));
}

test('the dashboard works before its client: none until used, a change it shows brings it, a press waits for it', async ({ page, browser, baseURL }) => {
  test.setTimeout(60_000);
  const tag = `Dash ${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(tag), tag);
  const admin = page.locator('.admin');
  /** A visitor in a browser of their own sends a message; returns when they pressed Send. */
  const visitorSends = async (name: string, message: string) => {
    const context = await browser.newContext({ baseURL });
    const contact = new ContactPage(await context.newPage());
    await contact.open();
    await contact.waitForHydration();
    await contact.fill({ name, email: 'dash@example.com', message });
    const at = Date.now();
    await contact.send.click();
    await expect(contact.success).toBeVisible();
    await context.close();
    return at;
  };

  // Opened directly and only looked at: the dashboard with its figures, no wasm at all.
  await quietLiveStream(page);
  const looked = await wasmFetched(page, async () => {
    await page.goto('/admin');
    await expect(page.getByRole('heading', { name: 'Dashboard', exact: true })).toBeVisible();
    await expect(page.getByTestId('count-total')).toHaveText(/^\d[\d,]*$/);
    await expect(page.getByTestId('job-prune')).toContainText('Prune');
  });
  expect(looked, '/admin fetches no wasm before the admin uses it').toEqual([]);
  await expect(admin).toHaveAttribute('data-hydrated', 'false');

  // A press before the client: held, the client comes, and the press does what it does on a
  // hydrated page (the answer of "Run now" is shown by the client only).
  const pressed = await wasmFetched(page, async () => {
    await page.getByTestId('run-job-share_gc').click();
    await expect(page.getByTestId('jobs-message')).toContainText('Share GC');
  });
  expect(pressed).toContain('ebb_bg.wasm');
  expect(pressed).toContain('split_ebb_admin.wasm');
  await expect(admin).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('html')).not.toHaveAttribute('data-client', 'loading');
  await page.unroute('**/admin/live');

  // Nobody touches the page: a visitor's message reaches it through the live stream, which brings
  // the client, and the counts are asked for again and shown — without a reload.
  const answers: { at: number; body: any }[] = [];
  page.on('response', async (r) => {
    if (r.request().method() === 'POST' && r.url().endsWith('/api/admin/inbox/counts')) answers.push({ at: Date.now(), body: await r.json().catch(() => null) });
  });
  await page.goto('/admin');
  await expect(page.locator('html')).toHaveAttribute('data-live', 'on');
  await page.evaluate(() => ((window as any).__notReloaded = true));
  const sent = await visitorSends(tag, 'Seen before the dashboard was used?');
  await expect(admin).toHaveAttribute('data-hydrated', 'true');
  await expect.poll(() => answers.some((a) => a.at > sent && a.body)).toBe(true);
  const latest = () => answers.filter((a) => a.body).at(-1)!.body.total as number;
  await expect.poll(async () => (await page.getByTestId('count-total').textContent())?.replace(/,/g, '') === String(latest())).toBe(true);
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);

  // The hand-over, with every stream played by the test (nothing else reaches the page): a message
  // arrives after the page was rendered, the dashboard's script hears of it and brings the client,
  // whose own stream then hears nothing more — the client still asks for the counts again, as the
  // script heard of a change, and shows the new ones.
  let streams = 0;
  let heard!: () => void;
  const sayChanged = new Promise<void>((resolve) => (heard = resolve));
  await page.route('**/admin/live', async (route) => {
    streams += 1;
    if (streams === 1) {
      await sayChanged;
      await route.fulfill(liveStreamReply(600_000, 'event: inquiry\ndata: {"topic":"inquiry","id":"0"}\n\n'));
    } else {
      await route.fulfill(liveStreamReply(600_000));
    }
  });
  await page.goto('/admin');
  await expect(page.getByTestId('count-total')).toBeVisible();
  await expect.poll(() => streams).toBe(1);
  await visitorSends(`${tag} later`, 'Sent after the dashboard was rendered.');
  const told = Date.now();
  heard();
  await expect(admin).toHaveAttribute('data-hydrated', 'true');
  await expect.poll(() => answers.some((a) => a.at > told && a.body), 'the client asks for the counts again').toBe(true);
  await expect.poll(async () => (await page.getByTestId('count-total').textContent())?.replace(/,/g, '') === String(latest())).toBe(true);
});
