#!/usr/bin/env bash
# Slow clients and bounded uploads (issue 54), each beside a baseline in the same run:
#   GET / p99 (16 connections) and contact submissions/s (32 connections) while 2,000 connections
#   trickle a request head one byte every 20 s to Ebb (benches/trickle.py reopens any the server
#   closes), beside the same two runs while the same trickler sends to a sink that only reads
#   (benches/sink.py): the trickler's own CPU is in both, so the ratio is Ebb's cost of holding the
#   slow connections. The sink closes an unfinished head after Ebb's header read timeout
#   (server/src/http.rs, HEADER_READ_TIMEOUT), as Ebb does, so the trickler reconnects as often in
#   both runs (without it, the baseline's trickler never reconnected). Rounds alternate (baseline, slow, baseline, slow…; BENCH_EDGE_ROUNDS, 3) and
#   the medians are compared. Goal: within 1.2×.
#   Disk high-water while 50 clients upload a file of the request's full size to one file request
#   at once, beside the request's limit. Goal: ≤ 2 × the limit (one upload at a time holds the
#   request's lease; the others get 409 before a byte is stored).
# Expects: scripts/env.sh sourced, the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_PORT:-3200}
SECS=${BENCH_SECONDS:-10}
SLOW=${BENCH_SLOW_CONNECTIONS:-2000}
ROUNDS=${BENCH_EDGE_ROUNDS:-3}
SINK_PORT=$((PORT + 1))
LIMIT_MB=${BENCH_EDGE_UPLOAD_MB:-64}
BIN=$CARGO_TARGET_DIR/release/ebb
LOG=$CARGO_TARGET_DIR/bench-edge.log
URL=$(bash scripts/fresh-db.sh ebb_bench_edge)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-edge.XXXXXX")
STORE=$WORK/blobs; mkdir -p "$STORE"
: > "$LOG"
cleanup() {
  [ -n "${TRICKLE_PID:-}" ] && kill "$TRICKLE_PID" 2>/dev/null; [ -n "${SINK_PID:-}" ] && kill "$SINK_PID" 2>/dev/null
  [ -n "${EBB_PID:-}" ] && kill "$EBB_PID" 2>/dev/null; wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "bench: $*" >&2; tail -n 20 "$LOG" >&2 2>/dev/null || true; exit 1; }
# The load generators and the trickler need more descriptors than the default 1,024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

env DATABASE_URL="$URL" EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT EBB_TRUSTED_PROXY_HOPS=1 RUST_LOG=warn \
  EBB_STORAGE_DIR="$STORE" "$BIN" serve >>"$LOG" 2>&1 &
EBB_PID=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 || fail "Ebb did not become ready"

kv() { echo "$2" | tr ' ' '\n' | grep "^$1=" | cut -d= -f2; }
measure() { # → "get_p99_ms contact_per_s"
  local get contact
  get=$(wrk -t2 -c16 -d"${SECS}s" --latency -s benches/ssr.lua "http://127.0.0.1:$PORT/" | grep '^BENCH' || true)
  contact=$(wrk -t2 -c32 -d"${SECS}s" --latency -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" | grep '^BENCH')
  local p99 rate
  p99=$(awk -v us="$(kv p99_us "$get")" 'BEGIN { printf "%.1f", us / 1000 }')
  rate=$(awk -v n="$(kv requests "$contact")" -v d="$(kv duration_us "$contact")" 'BEGIN { printf "%.0f", n / (d / 1e6) }')
  echo "$p99 $rate"
}
echo "bench: slow clients — warm-up, then $ROUNDS rounds of GET / and the contact form while $SLOW connections trickle to a sink, then to Ebb"
HEAD_TIMEOUT=$(sed -n 's/^pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(\([0-9]*\));/\1/p' server/src/http.rs)
[ -n "$HEAD_TIMEOUT" ] || fail "HEADER_READ_TIMEOUT not found in server/src/http.rs"
python3 benches/sink.py 127.0.0.1 "$SINK_PORT" "$HEAD_TIMEOUT" 2>>"$LOG" &
SINK_PID=$!
wrk -t2 -c16 -d3s "http://127.0.0.1:$PORT/" >/dev/null
trickle_to() { # port → starts the trickler, waits until its connections are open
  python3 benches/trickle.py 127.0.0.1 "$1" "$SLOW" 20 2>>"$LOG" &
  TRICKLE_PID=$!
  sleep 15
}
stop_trickle() { kill "$TRICKLE_PID"; wait "$TRICKLE_PID" 2>/dev/null || true; TRICKLE_PID=; sleep 2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$WORK/base"; : > "$WORK/slow"
for round in $(seq 1 "$ROUNDS"); do
  trickle_to "$SINK_PORT"; measure >> "$WORK/base"; stop_trickle
  trickle_to "$PORT"; measure >> "$WORK/slow"
  [ "$round" = 1 ] && OPEN=$(grep -c . /proc/$EBB_PID/net/tcp 2>/dev/null || echo '?')
  stop_trickle
  echo "  round $round: without $(tail -1 "$WORK/base"), with $(tail -1 "$WORK/slow") (GET / p99 ms, contact/s)"
done
# The sink is done: nothing may be left running that the uploads' `wait` below could wait for.
kill "$SINK_PID" 2>/dev/null; wait "$SINK_PID" 2>/dev/null || true; SINK_PID=
BASE_P99=$(cut -d' ' -f1 "$WORK/base" | median); SLOW_P99=$(cut -d' ' -f1 "$WORK/slow" | median)
BASE_RATE=$(cut -d' ' -f2 "$WORK/base" | median); SLOW_RATE=$(cut -d' ' -f2 "$WORK/slow" | median)
printf '  %-44s %12s %12s %8s\n' "medians of $ROUNDS rounds" "to a sink" "to Ebb" "ratio"
printf '  %-44s %10s ms %10s ms %8s\n' "GET / p99 (16 connections)" "$BASE_P99" "$SLOW_P99" "$(awk -v a="$SLOW_P99" -v b="$BASE_P99" 'BEGIN { printf "%.2f", a / b }')"
printf '  %-44s %12s %12s %8s\n' "contact submissions/s (32 connections)" "$BASE_RATE" "$SLOW_RATE" "$(awk -v a="$BASE_RATE" -v b="$SLOW_RATE" 'BEGIN { printf "%.2f", a / b }')"
echo "  (goal: both ratios ≤ 1.2; sockets in the server's network namespace while trickling: $OPEN)"

echo "bench: 50 parallel uploads of ${LIMIT_MB} MiB to one file request"
head -c "$((LIMIT_MB * 1048576))" /dev/urandom > "$WORK/file.bin"
TOKEN=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-43)
psql -q "$URL" -c "insert into file_requests (token_hash, max_bytes, expires_at)
  values (sha256(convert_to('$TOKEN', 'UTF8')), $((LIMIT_MB * 1048576)), now() + interval '1 hour')"
( peak=0; while [ -e "$WORK/file.bin" ]; do n=$(du -sb "$STORE" | cut -f1); [ "$n" -gt "$peak" ] && peak=$n && echo "$peak" > "$WORK/peak"; sleep 0.05; done ) &
WATCH=$!
UPLOADS=()
for i in $(seq 1 50); do
  curl -sS -o /dev/null -w '%{http_code}\n' -H 'accept: application/json' -F "file=@$WORK/file.bin;type=application/octet-stream" \
    "http://127.0.0.1:$PORT/r/$TOKEN" >> "$WORK/codes" 2>/dev/null &
  UPLOADS+=($!)
done
# The uploads only (the server and the watcher run on).
wait "${UPLOADS[@]}" 2>/dev/null || true
sleep 0.3; PEAK=$(cat "$WORK/peak" 2>/dev/null || echo 0); mv "$WORK/file.bin" "$WORK/done.bin"; kill "$WATCH" 2>/dev/null || true
printf '  %-44s %12s %12s %8s\n' "disk high-water (bytes)" "limit" "peak" "ratio"
printf '  %-44s %12s %12s %8s\n' "" "$((LIMIT_MB * 1048576))" "$PEAK" "$(awk -v a="$PEAK" -v b="$((LIMIT_MB * 1048576))" 'BEGIN { printf "%.2f", a / b }')"
echo "  answers: $(sort "$WORK/codes" | uniq -c | tr '\n' ' ')(goal: ratio ≤ 2; one 201)"
