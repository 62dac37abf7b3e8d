#!/usr/bin/env bash
# Spam defence (issue 34), beside baselines measured on the same machine in the same run:
#   contact submissions/s with the proof of work checked (each request a distinct visitor with
#   its own solved challenge: verification, the single-use insert, the inbox), beside the same
#   form without a proof (no verification: the quarantine path) and beside pgbench's single-row
#   INSERT (32 connections/clients). Goal: the check costs <= 5 %.
#   The browser's side: the median solve time in headless Chromium at the default difficulty
#   (goal <= 1 s on these machines) and the bytes it adds to a visitor's first use of the page.
# The server runs at difficulty 1,000 for the throughput runs (the proofs are solved beforehand
# by benches/spam-proofs.py; verifying costs one SHA-256 and one HMAC at any difficulty) and at
# the default for the browser runs.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release server and client built.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_SPAM_PORT:-3260}
CONNS=${BENCH_CONNECTIONS:-32}
SECS=${BENCH_SPAM_SECONDS:-5}
PROOFS=${BENCH_SPAM_PROOFS:-60000}
ROUNDS=${BENCH_SPAM_ROUNDS:-15}
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
LOG=$CARGO_TARGET_DIR/bench-spam.log
[ -x "$BIN" ] || { echo "bench: no server binary at $BIN" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-spam.XXXXXX")
PID=
cleanup() { [ -n "$PID" ] && { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }; rm -rf "$WORK"; }
trap cleanup EXIT

start() { # difficulty
  URL=$(bash scripts/fresh-db.sh ebb_bench_spam)
  DATABASE_URL=$URL "$BIN" migrate >/dev/null
  mkdir -p "$WORK/blobs"
  DATABASE_URL=$URL EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT EBB_TRUSTED_PROXY_HOPS=1 RUST_LOG=warn \
    EBB_CONTACT_RATE_LIMIT=100000 EBB_SPAM_POW_DIFFICULTY=$1 EBB_PUBLIC_URL=http://localhost:$PORT \
    EBB_STORAGE_DIR=$WORK/blobs "$BIN" serve >"$LOG" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && return; sleep 0.2; done
  echo "bench: the server did not start (see $LOG)" >&2; exit 1
}
stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }
kv() { echo "$1" | grep '^BENCH' | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }

start 1000
echo "bench: spam — solving $PROOFS challenges beforehand (difficulty 1,000)"
python3 benches/spam-proofs.py "http://127.0.0.1:$PORT" "$PROOFS" "$WORK/proofs.txt"
echo "bench: spam — warm-up (3 s, no proof)"
wrk -t2 -c"$CONNS" -d3s -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" >/dev/null
echo "bench: spam — contact form without a proof (quarantine path), $CONNS connections, ${SECS} s"
NOPROOF=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact")
echo "bench: spam — contact form with a proof (checked, spent, inbox), $CONNS connections, ${SECS} s"
WITH=$(BENCH_PROOFS=$WORK/proofs.txt wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/contact-proofs.lua "http://127.0.0.1:$PORT/api/contact")
INBOX=$(psql -tAq "$URL" -c "select count(*) from inquiries")
echo "bench: spam — pgbench single-row INSERT, $CONNS clients, ${SECS} s (same database)"
PGB=$(pgbench -n -c "$CONNS" -j 2 -T "$SECS" -f benches/insert.sql "$URL" 2>&1)
PG_TPS=$(echo "$PGB" | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1)
stop

start 100000
echo "bench: spam — solving in headless Chromium at the default difficulty (100,000), $ROUNDS rounds"
SOLVE=$(node benches/spam-solve.mjs "http://localhost:$PORT" "$ROUNDS")
stop
r() { echo "$SOLVE" | awk -v k="$1" '$1 == "RESULT" && $2 == k { print $3 }'; }

awk -v nreq="$(kv "$NOPROOF" requests)" -v ndur="$(kv "$NOPROOF" duration_us)" -v np99="$(kv "$NOPROOF" p99_us)" \
    -v wreq="$(kv "$WITH" requests)" -v wdur="$(kv "$WITH" duration_us)" -v wp99="$(kv "$WITH" p99_us)" -v pool="$(kv "$WITH" pool)" \
    -v wbad="$(kv "$WITH" non2xx)" -v inbox="$INBOX" -v pgtps="$PG_TPS" -v c="$CONNS" \
    -v med="$(r solve_median_ms)" -v max="$(r solve_max_ms)" -v ready="$(r ready_median_ms)" -v rounds="$(r rounds)" \
    -v cb="$(r challenge_bytes)" -v fu="$(r first_use_bytes)" 'BEGIN {
  w = wreq / (wdur / 1e6); n = nreq / (ndur / 1e6);
  printf "\n%-52s %12s %12s %12s\n", "contact submissions, " c " connections", "with proof", "no proof", "pgbench";
  printf "%-52s %12.0f %12.0f %12.0f\n", "per second", w, n, pgtps;
  printf "%-52s %12.2f %12.2f %12s\n", "latency p99 (ms)", wp99 / 1000, np99 / 1000, "-";
  printf "%-52s %11.1f%% %12s %12s\n", "cost of the check (1 - with / without)", 100 * (1 - w / n), "goal <= 5 %", "";
  printf "%-52s %11.1f%% %11.1f%% %12s\n", "share of the INSERT rate", 100 * w / pgtps, 100 * n / pgtps, "";
  printf "%-52s %12d %12s\n", "reached the inbox (distinct proofs used / pool)", inbox, wreq <= pool ? "all fresh" : "POOL RAN OUT";
  printf "%-52s %12d\n", "non-2xx with proof", wbad;
  printf "\n%-52s %12s %12s\n", "proof of work in headless Chromium (" rounds " rounds)", "Ebb", "goal";
  printf "%-52s %12d %12s\n", "median solve time, default difficulty (ms)", med, "<= 1000";
  printf "%-52s %12d\n", "slowest solve (ms)", max;
  printf "%-52s %12d\n", "median pointer-to-proof-ready, incl. client (ms)", ready;
  printf "%-52s %12d\n", "bytes of the challenge request (headers incl.)", cb;
  printf "%-52s %12d\n", "bytes of the whole first use (client + challenge)", fu;
}'
