import http from 'node:http';
import { expect, test } from '@playwright/test';
import { AdminShell, InvitePage, SignInPage, VirtualAuthenticator, newInviteLink } from '../pages/admin';

// Runs after every other spec (its own project, see playwright.config.ts): the flood spends the
// server's total budget of refused sign-ins for five minutes.

/** One request from the loopback address `from` (every 127.x.y.z is this machine on Linux). */
function post(from: string, path: string, body: string, contentType: string): Promise<number> {
  const target = new URL(process.env.BASE_URL ?? 'http://localhost:3100');
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        path,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': contentType, accept: 'application/json', origin: target.origin },
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

const bogusAnswer = (challenge: string) =>
  JSON.stringify({
    challenge,
    credential: {
      id: 'AAAAAAAAAAAAAAAAAAAAAA',
      rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
      response: { authenticatorData: 'AAAA', clientDataJSON: 'AAAA', signature: 'AAAA', userHandle: 'AAAAAAAAAAAAAAAAAAAAAA' },
      extensions: {},
      type: 'public-key',
    },
  });

test('a sign-in flood from 1,000 addresses does not lock a real admin out', { tag: '@server' }, async ({ page }) => {
  test.setTimeout(180_000);
  const name = `Flooded ${Date.now().toString(36)}`;
  await VirtualAuthenticator.attach(page);
  const shell = new AdminShell(page);
  await new InvitePage(page).join(newInviteLink(name), name);
  await shell.signOut();

  // 1,000 clients, each starting a sign-in and answering it with a passkey Ebb never registered.
  const statuses: Record<string, number> = {};
  const addresses = Array.from({ length: 1000 }, (_, i) => `127.${10 + Math.floor(i / 250)}.${Math.floor(i / 250)}.${(i % 250) + 1}`);
  for (let i = 0; i < addresses.length; i += 50) {
    await Promise.all(
      addresses.slice(i, i + 50).map(async (from) => {
        const start = await post(from, '/api/auth/signin/start', '', 'application/x-www-form-urlencoded');
        const finish = await post(from, '/api/auth/signin/finish', bogusAnswer('00000000-0000-4000-8000-000000000000'), 'application/json');
        for (const s of [`start ${start}`, `finish ${finish}`]) statuses[s] = (statuses[s] ?? 0) + 1;
      }),
    );
  }
  // Every client got its challenge; refusals beyond the total budget were slowed down (429).
  expect(statuses['start 200']).toBe(1000);
  expect(statuses['finish 429']).toBeGreaterThan(0);

  // The real admin, arriving now, signs in.
  await page.goto('/signin');
  await new SignInPage(page).signIn();
  await page.waitForURL(/\/admin$/);
  await shell.expectSignedInAs(name);
});
