#!/usr/bin/env bash
# What a visitor downloads (headless Debian Chromium through playwright-core, benches/first-visit.mjs):
#   the first visit of / with an empty cache: bytes over the wire (CDP encodedDataLength summed over
#   every request, network idle), the number of requests and the bytes per resource type; the
#   second visit in the same browser context (warm cache: the immutable /pkg/<hash>/ files cost 0);
#   a first visit in which the visitor then uses the page (the pointer moves; `/` fetches its
#   client on first use, app/src/hydrate_on_first_use.js) until it has hydrated;
#   the same for /signin — beside the baseline before hashed, precompressed client files
#   (first visit of / 1,870,000 bytes, of which /pkg/ebb_bg.wasm 1,791,743 sent uncompressed);
#   and for the dashboard /admin, signed in (benches/admin-session.sh): what an admin downloads
#   before the dashboard works (it gets its client on first use, app/src/dashboard_on_first_use.js)
#   beside what it downloads once used — the client that came with every dashboard before.
# Goals: first visit of / <= 150 KB; a second visit <= 10 KB (the HTML only); the dashboard
# interactive with <= 150 KB (issue 36). KB = 1,000 bytes.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the server binary (BIN, default the
# release one) and the client built into $LEPTOS_SITE_ROOT (scripts/build-client.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_VISIT_PORT:-3250}
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
LOG=$CARGO_TARGET_DIR/bench-visit.log
PAGES=(/ /signin /admin)

fail() { echo "bench: $*" >&2; exit 1; }
[ -x "$BIN" ] || fail "no server binary at $BIN"
[ -f "$LEPTOS_SITE_ROOT/pkg/ASSETS" ] || fail "no client in $LEPTOS_SITE_ROOT (bash scripts/build-client.sh)"
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing (Debian package chromium)"
[ -d end2end/node_modules/playwright-core ] || fail "end2end/node_modules/playwright-core is missing (bash scripts/setup.sh)"
HASH=$(cat "$LEPTOS_SITE_ROOT/pkg/ASSETS")

URL=$(bash scripts/fresh-db.sh ebb_bench_visit)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-visit.XXXXXX")
mkdir -p "$WORK/blobs"
PID=
cleanup() { if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi; rm -rf "$WORK"; }
trap cleanup EXIT

echo "bench: first and second visit of ${PAGES[*]} (Chromium, client $HASH from $LEPTOS_SITE_ROOT)"
. benches/serve.sh
start_ebb
COOKIE=$(bash benches/admin-session.sh "$URL")

# Never a browser download: playwright-core only, driving /usr/bin/chromium.
BENCH_ADMIN_COOKIE=${COOKIE#cookie: } PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 node benches/first-visit.mjs "http://localhost:$PORT" "${PAGES[@]}" > "$WORK/out" \
  || { cat "$WORK/out"; fail "benches/first-visit.mjs failed"; }
grep -v '^RESULT ' "$WORK/out" || true

awk '
  $1 == "RESULT" { v[$2 " " $3 " " $4] = $5 }
  function n(p, vis, k) { return v[p " " vis " " k] + 0 }
  function row(label, k, base) {
    printf "%-52s %14d %14d %14s\n", label, n("/", "first", k), n("/signin", "first", k), base;
  }
  function goal(label, value, limit) {
    printf "%-52s %14d %14s\n", label, value, value <= limit ? "met" : "NOT met";
  }
  END {
    if (!(("/ first bytes") in v) || !(("/signin second bytes") in v) || !(("/ used bytes") in v)) { print "bench: no figures"; exit 1 }
    printf "\n%-52s %14s %14s %14s\n", "what a visitor downloads (bytes over the wire)", "/", "/signin", "baseline /";
    row("first visit, empty cache", "bytes", 1870000);
    row("  requests", "requests", "-");
    row("  document (HTML)", "bytes.document", "-");
    row("  script", "bytes.script", "-");
    row("  wasm (fetch)", "bytes.wasm", 1791743);
    row("  other fetch / XHR", "bytes.fetch", "-");
    row("  stylesheet", "bytes.stylesheet", "-");
    row("  other", "bytes.other", "-");
    printf "%-52s %14d %14d %14s\n", "first visit, then used until hydrated", n("/", "used", "bytes"), n("/signin", "used", "bytes"), 1870000;
    printf "%-52s %14d %14d %14s\n", "  wasm (fetch)", n("/", "used", "bytes.wasm"), n("/signin", "used", "bytes.wasm"), 1791743;
    printf "%-52s %14d %14d %14s\n", "second visit, same context (warm cache)", n("/", "second", "bytes"), n("/signin", "second", "bytes"), "-";
    printf "%-52s %14s %14s %14s\n", "  requests (of them from the cache)",
      n("/", "second", "requests") " (" n("/", "second", "cached") ")", n("/signin", "second", "requests") " (" n("/signin", "second", "cached") ")", "-";
    printf "%-52s %14d %14d %14s\n", "  document (HTML)", n("/", "second", "bytes.document"), n("/signin", "second", "bytes.document"), "-";
    goal("goal: first visit of / <= 150 KB", n("/", "first", "bytes"), 150000);
    goal("goal: second visit of / <= 10 KB (HTML only)", n("/", "second", "bytes"), 10000);
    goal("goal: second visit of /signin <= 10 KB", n("/signin", "second", "bytes"), 10000);
    printf "\n%-52s %14s\n", "the dashboard, signed in (bytes over the wire)", "/admin";
    printf "%-52s %14d\n", "opened, not used yet (it works: links, figures)", n("/admin", "first", "bytes");
    printf "%-52s %14d\n", "  document (HTML)", n("/admin", "first", "bytes.document");
    printf "%-52s %14d\n", "  wasm (fetch)", n("/admin", "first", "bytes.wasm");
    printf "%-52s %14d\n", "opened, then used until hydrated: the baseline", n("/admin", "used", "bytes");
    printf "%-52s %14d\n", "  (what every dashboard loaded before) wasm", n("/admin", "used", "bytes.wasm");
    printf "%-52s %14d\n", "second visit, same context (warm cache)", n("/admin", "second", "bytes");
    goal("goal: an interactive dashboard <= 150 KB", n("/admin", "first", "bytes"), 150000);
    printf "BENCH dashboard_interactive_bytes=%d dashboard_used_bytes=%d\n", n("/admin", "first", "bytes"), n("/admin", "used", "bytes");
    printf "%-52s %s\n", "content-encoding, first visit of /", v["/ first encodings"];
    printf "%-52s %s\n", "content-encoding, first visit of /signin", v["/signin first encodings"];
    failed = n("/", "first", "failed") + n("/", "second", "failed") + n("/", "used", "failed") + n("/signin", "first", "failed") + n("/signin", "second", "failed") + n("/signin", "used", "failed");
    if (failed) printf "%-52s %14d\n", "failed requests (see the chromium lines)", failed;
  }' "$WORK/out"
