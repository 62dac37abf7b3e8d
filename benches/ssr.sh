#!/usr/bin/env bash
# Server-side rendering: GET / (the landing page) at 32 connections with wrk for 10 s: requests/s and
# latency p50 / p99, beside Debian's nginx serving the same rendered HTML (fetched once with curl) as
# a static index.html, in the same run. No Accept-Encoding on either. Ebb is measured twice: `/`
# (from its page cache, `server::page_cache`: a new nonce and stamp filled in per answer) and
# `/?render` (a query is never cached: Leptos renders the same page for every request).
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the server binary (BIN, default the
# release one) and the client built into $LEPTOS_SITE_ROOT (scripts/build-client.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_SSR_PORT:-3259}
NGINX_PORT=${BENCH_SSR_NGINX_PORT:-3260}
CONNS=${BENCH_CONNECTIONS:-32}
SECS=${BENCH_SECONDS:-10}
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
LOG=$CARGO_TARGET_DIR/bench-ssr.log

fail() { echo "bench: $*" >&2; exit 1; }
[ -x "$BIN" ] || fail "no server binary at $BIN"
[ -f "$LEPTOS_SITE_ROOT/pkg/ASSETS" ] || fail "no client in $LEPTOS_SITE_ROOT (bash scripts/build-client.sh)"
command -v wrk >/dev/null || fail "wrk is missing (Debian package wrk)"
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "bench: installing Debian's nginx (baseline only; its own service is not started)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  # policy-rc.d keeps the package from starting a system nginx on port 80.
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null; $SUDO chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nginx >/dev/null 2>&1 || {
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nginx >/dev/null
  }
  $SUDO rm -f /usr/sbin/policy-rc.d
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

URL=$(bash scripts/fresh-db.sh ebb_bench_ssr)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-ssr.XXXXXX")
mkdir -p "$WORK/blobs" "$WORK/www"
PID= NGINX_PID=
cleanup() {
  for p in $PID $NGINX_PID; do kill "$p" 2>/dev/null || true; done
  for p in $PID $NGINX_PID; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

. benches/serve.sh
start_ebb

# The same rendered HTML, as a static file (nginx's built-in types map .html to text/html).
curl -fsS -o "$WORK/www/index.html" "http://127.0.0.1:$PORT/" || fail "GET / failed"
HTML_BYTES=$(stat -c %s "$WORK/www/index.html")
cat > "$WORK/nginx.conf" <<CONF
daemon off; worker_processes auto; pid $WORK/nginx.pid; error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on;
  client_body_temp_path $WORK; proxy_temp_path $WORK; fastcgi_temp_path $WORK; uwsgi_temp_path $WORK; scgi_temp_path $WORK;
  server { listen 127.0.0.1:$NGINX_PORT; root $WORK/www; index index.html; } }
CONF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" & NGINX_PID=$!
for _ in $(seq 1 50); do curl -fsS -o /dev/null "http://127.0.0.1:$NGINX_PORT/" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "http://127.0.0.1:$NGINX_PORT/" || fail "nginx is not serving (log: $WORK/nginx-error.log)"

run() { # name url → BENCH line
  wrk -t2 -c"$CONNS" -d2s "$2" >/dev/null
  local out; out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/ssr.lua "$2")
  echo "$out" | grep -E 'Requests/sec|^ +Latency +[0-9]' | sed "s/^/  wrk $1 | /" >&2
  echo "$out" | grep '^BENCH'
}
echo "bench: GET / at $CONNS connections, ${SECS} s each (2 s warm-up): Ebb (SSR), then nginx (static, $HTML_BYTES bytes)"
EBB=$(run ebb "http://127.0.0.1:$PORT/")
RENDER=$(run ebb-render "http://127.0.0.1:$PORT/?render")
NGX=$(run nginx "http://127.0.0.1:$NGINX_PORT/")
kv() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }

awk -v c="$CONNS" -v s="$SECS" -v html="$HTML_BYTES" \
    -v er="$(kv "$EBB" requests)" -v ed="$(kv "$EBB" duration_us)" -v e50="$(kv "$EBB" p50_us)" -v e99="$(kv "$EBB" p99_us)" \
    -v ebad="$(( $(kv "$EBB" non2xx) + $(kv "$EBB" errors) ))" \
    -v rr="$(kv "$RENDER" requests)" -v rd="$(kv "$RENDER" duration_us)" -v r50="$(kv "$RENDER" p50_us)" -v r99="$(kv "$RENDER" p99_us)" \
    -v rbad="$(( $(kv "$RENDER" non2xx) + $(kv "$RENDER" errors) ))" \
    -v nr="$(kv "$NGX" requests)" -v nd="$(kv "$NGX" duration_us)" -v n50="$(kv "$NGX" p50_us)" -v n99="$(kv "$NGX" p99_us)" \
    -v nbad="$(( $(kv "$NGX" non2xx) + $(kv "$NGX" errors) ))" 'BEGIN {
  erps = er / (ed / 1e6); nrps = nr / (nd / 1e6); rrps = rr / (rd / 1e6);
  printf "\n%-44s %16s %16s %16s\n", "GET / (" html " bytes), " c " connections, " s " s", "Ebb (cached)", "Ebb (rendered)", "nginx (static)";
  printf "%-44s %16.0f %16.0f %16.0f\n", "requests per second", erps, rrps, nrps;
  printf "%-44s %16.2f %16.2f %16.2f\n", "latency p50 (ms)", e50 / 1000, r50 / 1000, n50 / 1000;
  printf "%-44s %16.2f %16.2f %16.2f\n", "latency p99 (ms)", e99 / 1000, r99 / 1000, n99 / 1000;
  printf "%-44s %15.1f%% %15.1f%%\n", "Ebb as a share of the static rate", 100 * erps / nrps, 100 * rrps / nrps;
  printf "%-44s %16d %16d %16d\n", "non-2xx responses / socket errors", ebad, rbad, nbad;
}'
