import { execFileSync } from 'node:child_process';
import { expect, test, type Page } from '@playwright/test';
import { InvitePage, VirtualAuthenticator, liveStreamReply, newInviteLink, waitForAdminHydration } from '../pages/admin';
import { ContactPage } from '../pages/contact-page';
import { SharesPage, ShareLandingPage } from '../pages/shares';

function psql(sql: string): string {
  return execFileSync('psql', ['-tAq', process.env.E2E_DATABASE_URL!, '-c', sql]).toString().trim();
}

/** Records every live event the page's EventSource receives (type and data), from its load. */
async function recordLiveEvents(page: Page) {
  await page.addInitScript(() => {
    const w = window as any;
    w.__live = [];
    const Original = w.EventSource;
    w.EventSource = class extends Original {
      constructor(url: string, init?: EventSourceInit) {
        super(url, init);
        for (const type of ['inquiry', 'share', 'job', 'resync']) {
          this.addEventListener(type, (e: MessageEvent) => w.__live.push({ type, data: e.data }));
        }
      }
    };
  });
}

/** Waits until the page received the live event of `type` naming `id` (not any other change). */
async function expectLiveEvent(page: Page, type: string, id: string) {
  await expect
    .poll(() =>
      page.evaluate(
        ([t, i]) =>
          (window as any).__live.some((e: any) => {
            const d = JSON.parse(e.data);
            return e.type === t && (String(d.id) === i || (d.also ?? []).map(String).includes(i));
          }),
        [type, id],
      ),
    )
    .toBe(true);
}

test('the dashboard and the inbox update without a reload when an inquiry arrives or a share is downloaded', { tag: '@server' }, async ({ page, browser }) => {
  test.setTimeout(60_000);
  const tag = `Live ${Date.now().toString(36)}`;
  await recordLiveEvents(page);
  await VirtualAuthenticator.attach(page);
  await new InvitePage(page).join(newInviteLink(tag), tag);
  const shares = new SharesPage(page);
  await shares.open();
  const link = await shares.share({ name: `${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('live') });

  await page.goto('/admin');
  await waitForAdminHydration(page);
  await expect(page.locator('html')).toHaveAttribute('data-live', 'on');
  // Every answer the page gets for its counts, with when it came. Other specs add and delete
  // inquiries and shares meanwhile, so the numbers may go either way: what must hold is that
  // the page asks again after this test's change, by itself, and shows the answer.
  const answers: { at: number; url: string; body: any }[] = [];
  page.on('response', async (r) => {
    if (r.request().method() === 'POST' && /\/api\/admin\/(inbox\/counts|shares\/overview)$/.test(r.url())) {
      answers.push({ at: Date.now(), url: r.url(), body: await r.json().catch(() => null) });
    }
  });
  const answerAfter = async (since: number, path: string) => {
    await expect.poll(() => answers.some((a) => a.at > since && a.url.endsWith(path) && a.body)).toBe(true);
    return answers.filter((a) => a.at > since && a.url.endsWith(path) && a.body).at(-1)!.body;
  };
  // Nothing reloads the page below: a marker set now would be gone after a reload.
  await page.evaluate(() => ((window as any).__notReloaded = true));

  // A visitor in another browser sends a message.
  const visitorContext = await browser.newContext();
  const contact = new ContactPage(await visitorContext.newPage());
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: tag, email: 'live@example.com', message: 'Does the dashboard see me?' });
  // (The page may ask again before this test sees the visitor's success: count from the click.)
  const sent = Date.now();
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  // The notification of this very inquiry reached the page (another spec's change would not do).
  await expectLiveEvent(page, 'inquiry', psql(`select id from inquiries where name = '${tag}'`));
  const counts = await answerAfter(sent, '/inbox/counts');
  expect(counts.total).toBeGreaterThan(0);
  const latest = (path: string) => answers.filter((a) => a.url.endsWith(path) && a.body).at(-1)!.body;
  const total = page.getByTestId('count-total');
  await expect.poll(async () => (await total.textContent()) === String(latest('/inbox/counts').total)).toBe(true);

  // A recipient downloads the shared file: the page asks for the share counts again.
  const recipient = await visitorContext.newPage();
  await recipient.goto(link);
  const landing = new ShareLandingPage(recipient);
  await landing.waitForHydration();
  const download = recipient.waitForEvent('download');
  const downloaded = Date.now();
  await landing.download().click();
  await download;
  await expectLiveEvent(page, 'share', psql(`select id from shares where file_name = '${tag}.txt'`));
  await answerAfter(downloaded, '/shares/overview');
  const active = page.getByTestId('shares-active');
  await expect.poll(async () => (await active.textContent()) === String(latest('/shares/overview').active)).toBe(true);
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);

  // The inbox shows a new inquiry as it arrives.
  await page.getByRole('link', { name: 'Inbox', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Inbox', exact: true })).toBeVisible();
  await page.evaluate(() => ((window as any).__notReloaded = true));
  const second = `${tag} second`;
  await contact.open();
  await contact.waitForHydration();
  await contact.fill({ name: second, email: 'live2@example.com', message: 'And the inbox?' });
  await contact.send.click();
  await expect(contact.success).toBeVisible();
  await expect(page.getByTestId('inquiry-row').filter({ hasText: second })).toBeVisible();
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
  await visitorContext.close();
});

// The dashboard before its client (its first stream is dashboard_on_first_use.js's, and the
// reconnection brings the client), and the inbox, hydrated at once (the client's own stream).
for (const [path, hydrate] of [['/admin', false], ['/admin/inbox', true]] as const) {
  test(`after a dropped live connection the page reconnects by itself and fetches what it missed (${path})`, async ({ page, browser }) => {
    test.setTimeout(60_000);
    const tag = `Reconnect ${Date.now().toString(36)}`;
    await VirtualAuthenticator.attach(page);
    await new InvitePage(page).join(newInviteLink(tag), tag);

    // The first stream says "ready" and then ends, as a dropped connection (a proxy's timeout, a
    // restarted instance) would. The browser's reconnection is held back until a visitor has sent
    // a message the page could not hear about; then it goes through to the real stream.
    let streams = 0;
    let missed!: () => void;
    const visitorSent = new Promise<void>((resolve) => (missed = resolve));
    await page.route('**/admin/live', async (route) => {
      streams += 1;
      if (streams === 1) {
        await route.fulfill(liveStreamReply(300));
      } else {
        if (streams === 2) await visitorSent;
        await route.continue();
      }
    });
    const answers: { at: number; body: any }[] = [];
    page.on('response', async (r) => {
      if (r.request().method() === 'POST' && r.url().endsWith('/api/admin/inbox/counts')) answers.push({ at: Date.now(), body: await r.json().catch(() => null) });
    });
    await page.goto(path);
    if (hydrate) await waitForAdminHydration(page);
    await expect.poll(() => streams).toBeGreaterThanOrEqual(2);
    await expect(page.locator('html')).toHaveAttribute('data-live', 'reconnecting');
    await page.evaluate(() => ((window as any).__notReloaded = true));

    const visitorContext = await browser.newContext();
    const contact = new ContactPage(await visitorContext.newPage());
    await contact.open();
    await contact.waitForHydration();
    await contact.fill({ name: tag, email: 'reconnect@example.com', message: 'Sent while the dashboard was offline.' });
    await contact.send.click();
    await expect(contact.success).toBeVisible();
    await visitorContext.close();
    const sent = Date.now();
    missed();

    // Reconnected: live again, and the counts are asked for again and shown.
    await expect(page.locator('html')).toHaveAttribute('data-live', 'on');
    await expect.poll(() => answers.some((a) => a.at > sent && a.body)).toBe(true);
    const total = page.getByTestId('count-total');
    const latest = () => answers.filter((a) => a.body).at(-1)!.body.total as number;
    await expect.poll(async () => (await total.textContent())?.replace(/,/g, '') === String(latest())).toBe(true);
    expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
  });
}
