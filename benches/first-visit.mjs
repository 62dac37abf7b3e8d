// Helper of benches/first-visit.sh: what a visitor (or a signed-in admin) downloads.
//   node benches/first-visit.mjs BASE_URL PATH…
// For each PATH, in a fresh browser context (empty cache): a first visit, then a second visit in
// a new tab of the same context (warm cache); and in another fresh context, a first visit in
// which the visitor then uses the page (moves the pointer) until it has hydrated. Bytes over the
// wire are the sum of CDP's Network.loadingFinished encodedDataLength (headers included) over
// every request, counted once the network is idle. Prints one `RESULT path visit key value` line
// per figure (read by the shell script) and, for each visit, `  chromium | …` lines: one per
// request.
// Debian's Chromium through playwright-core from end2end/node_modules; never a downloaded browser.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../end2end/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const [base, ...paths] = process.argv.slice(2);
if (!base || paths.length === 0) {
  console.error('usage: node benches/first-visit.mjs BASE_URL PATH…');
  process.exit(2);
}

// The same flags as end2end/playwright.config.ts: nothing reaches for the network on its own.
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

const KINDS = ['document', 'script', 'wasm', 'fetch', 'stylesheet', 'other'];

function kindOf(r) {
  if (r.mime === 'application/wasm' || /\.wasm(\?|$)/.test(r.url)) return 'wasm';
  switch (r.type) {
    case 'Document': return 'document';
    case 'Script': return 'script';
    case 'Stylesheet': return 'stylesheet';
    case 'Fetch': case 'XHR': return 'fetch';
    default: return 'other';
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// `use`: after the load, the pointer moves as a visitor's would, and the visit lasts until the
// page has hydrated (the home page fetches its client on first use).
async function visit(context, url, use = false) {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const reqs = new Map();
  const get = (id) => reqs.get(id) ?? reqs.set(id, { id, bytes: 0, done: false }).get(id);
  cdp.on('Network.requestWillBeSent', (e) => {
    if (e.request.url.startsWith('data:')) return;
    // A redirect reuses the request id: the hop before it counts as its own request.
    if (e.redirectResponse && reqs.has(e.requestId)) {
      const prev = reqs.get(e.requestId);
      prev.bytes = e.redirectResponse.encodedDataLength ?? 0;
      prev.done = true;
      prev.status = e.redirectResponse.status;
      reqs.set(`${e.requestId}:${reqs.size}`, prev);
      reqs.delete(e.requestId);
    }
    const r = get(e.requestId);
    r.url = e.request.url;
    r.type = e.type;
  });
  cdp.on('Network.requestServedFromCache', (e) => { get(e.requestId).cache = 'memory/disk'; });
  cdp.on('Network.responseReceived', (e) => {
    const r = get(e.requestId);
    const h = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    r.url ??= e.response.url;
    r.type = e.type;
    r.mime = e.response.mimeType;
    r.status = e.response.status;
    r.encoding = h['content-encoding'] ?? 'identity';
    r.cacheControl = h['cache-control'] ?? '';
    if (e.response.fromDiskCache) r.cache = 'disk';
    if (e.response.fromMemoryCache) r.cache = 'memory';
  });
  cdp.on('Network.loadingFinished', (e) => { const r = get(e.requestId); r.bytes = e.encodedDataLength; r.done = true; });
  cdp.on('Network.loadingFailed', (e) => { const r = get(e.requestId); r.failed = e.errorText; r.done = true; });
  await cdp.send('Network.enable');

  // An admin page keeps its live stream open (never idle): its load, then a second and a half.
  const live = new URL(url).pathname.startsWith('/admin');
  await page.goto(url, { waitUntil: live ? 'load' : 'networkidle', timeout: 120_000 });
  if (live) await sleep(1500);
  if (use) {
    await page.mouse.move(0, 0);
    await page.mouse.move(120, 160);
    // Hydrated: a `data-hydrated` page says so (the admin frame too); the sign-in button is
    // enabled by the client only.
    await page.waitForSelector('[data-hydrated="true"], [data-testid="signin"]:enabled', { state: 'attached', timeout: 120_000 });
  }
  // Idle as Playwright sees it, then until CDP has finished every request it reported.
  // (The live stream never finishes: it is left out, with the bytes it has not finished with.)
  for (let i = 0; i < 100 && [...reqs.values()].some((r) => r.url && !r.done && r.type !== 'EventSource'); i++) await sleep(100);
  await sleep(300);
  await page.close();

  const list = [...reqs.values()].filter((r) => r.url);
  for (const r of list) r.kind = kindOf(r);
  return list;
}

function report(path, visitName, list) {
  const out = (key, value) => console.log(`RESULT ${path} ${visitName} ${key} ${value}`);
  const total = list.reduce((s, r) => s + r.bytes, 0);
  out('bytes', total);
  out('requests', list.length);
  out('cached', list.filter((r) => r.cache).length);
  out('failed', list.filter((r) => r.failed).length);
  for (const k of KINDS) out(`bytes.${k}`, list.filter((r) => r.kind === k).reduce((s, r) => s + r.bytes, 0));
  // The encodings of what came over the wire, per kind (e.g. document=br,wasm=br).
  const enc = KINDS.map((k) => {
    const e = [...new Set(list.filter((r) => r.kind === k && !r.cache && r.encoding).map((r) => r.encoding))];
    return e.length ? `${k}=${e.join('+')}` : null;
  }).filter(Boolean).join(',');
  out('encodings', enc || '-');
  for (const r of list) {
    const u = new URL(r.url);
    const where = u.origin === new URL(base).origin ? u.pathname + u.search : r.url;
    const note = r.failed ? `failed: ${r.failed}` : r.cache ? `from ${r.cache} cache` : r.encoding ?? '';
    console.log(`  chromium | ${`${path} ${visitName}:`.padEnd(16)}${String(r.bytes).padStart(9)} B  ${r.kind.padEnd(10)} ${String(r.status ?? '-').padEnd(3)} ${note.padEnd(17)} ${where}`);
  }
}

try {
  // Admin pages: signed in with the session `BENCH_ADMIN_COOKIE` names (`ebb_session=…`).
  const signedIn = async (path) => {
    const context = await browser.newContext();
    const cookie = process.env.BENCH_ADMIN_COOKIE;
    if (path.startsWith('/admin') && cookie) {
      const [name, value] = cookie.split('=');
      await context.addCookies([{ name, value, url: base }]);
    }
    return context;
  };
  for (const path of paths) {
    const context = await signedIn(path);
    const url = new URL(path, base).href;
    report(path, 'first', await visit(context, url));
    report(path, 'second', await visit(context, url));
    await context.close();
    const fresh = await signedIn(path);
    report(path, 'used', await visit(fresh, url, true));
    await fresh.close();
  }
} finally {
  await browser.close();
}
