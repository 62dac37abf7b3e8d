// Helper of benches/spam.sh: how long the contact form's proof of work takes in a browser.
//   node benches/spam-solve.mjs BASE_URL ROUNDS
// Each round: a fresh browser context opens /, the visitor moves the pointer (the page fetches its
// client on first use), and the hydrated form fetches a challenge and solves it in the background.
// The solve time is the solver's own `took` (ms, in the payload it puts in the form); the bytes
// are what the challenge request cost on the wire (headers included) and everything the first use
// fetched. Prints `RESULT key value` lines.
// Debian's Chromium through playwright-core from end2end/node_modules; never a downloaded browser.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../end2end/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const [base, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 15);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

const took = [];
const ready = [];
let challengeBytes = 0;
let firstUseBytes = 0;
for (let r = 0; r < rounds; r++) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/`, { waitUntil: 'networkidle' });
  const sizes = [];
  page.on('requestfinished', async (req) => {
    const s = await req.sizes().catch(() => null);
    if (s) sizes.push({ url: req.url(), bytes: s.responseHeadersSize + s.responseBodySize });
  });
  const start = Date.now();
  await page.mouse.move(0, 0);
  await page.getByRole('heading', { level: 1 }).hover();
  const proof = page.getByTestId('contact-proof');
  await page.waitForFunction(() => {
    const el = document.querySelector('[data-testid="contact-proof"]');
    return el && el.getAttribute('data-solving') === 'false' && el.value !== '';
  }, null, { timeout: 60_000 });
  ready.push(Date.now() - start);
  const payload = JSON.parse(Buffer.from(await proof.inputValue(), 'base64').toString());
  took.push(payload.took);
  await page.waitForLoadState('networkidle');
  if (r === 0) {
    challengeBytes = sizes.filter((s) => s.url.includes('/api/contact/challenge')).reduce((a, s) => a + s.bytes, 0);
    firstUseBytes = sizes.reduce((a, s) => a + s.bytes, 0);
  }
  await context.close();
}
await browser.close();
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
console.log(`RESULT rounds ${rounds}`);
console.log(`RESULT solve_median_ms ${median(took)}`);
console.log(`RESULT solve_max_ms ${Math.max(...took)}`);
console.log(`RESULT ready_median_ms ${median(ready)}`);
console.log(`RESULT challenge_bytes ${challengeBytes}`);
console.log(`RESULT first_use_bytes ${firstUseBytes}`);
