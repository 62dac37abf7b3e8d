#!/usr/bin/env bash
# Where the contact form's time goes: a system-wide CPU profile (perf, software clock: these
# machines have no hardware counters) while wrk posts the contact form at 32 connections to the
# release server. Prints each process's share of the CPU samples (wrk, ebb, postgres, kernel),
# then ebb's busiest functions. Usage: bash benches/contact-profile.sh (after `make bench` or
# `cargo build --release -p server`); needs perf (Debian's linux-perf) and root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
eval "$(bash scripts/test-db.sh)"
fail() { echo "profile: $*" >&2; exit 1; }
command -v perf >/dev/null || fail "perf is not installed (apt-get install linux-perf)"
BIN=$CARGO_TARGET_DIR/release/ebb
[ -x "$BIN" ] || fail "no release build at $BIN (cargo build --release -p server --bin ebb)"
PORT=${BENCH_PORT:-3210}
SECS=${PROFILE_SECONDS:-10}
WORK=$(mktemp -d)
LOG=$WORK/server.log
URL=$(bash scripts/fresh-db.sh ebb_profile)
. benches/serve.sh
# The benchmark's clients each come from their own address (one trusted proxy hop).
export EBB_TRUSTED_PROXY_HOPS=1
start_ebb
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
wrk -t2 -c32 -d3s -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" >/dev/null
perf record -q -a -e cpu-clock -F 499 -o "$WORK/perf.data" -- \
  wrk -t2 -c32 -d"${SECS}s" -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" | grep '^BENCH' | sed 's/^/  /'
echo "CPU samples by process (all of the machine's cores):"
perf report -q -i "$WORK/perf.data" --sort comm --stdio 2>/dev/null | sed 's/^/  /' | head -12
echo "ebb's busiest functions (self time, share of ebb's samples):"
perf report -q -i "$WORK/perf.data" --comm ebb,tokio-rt-worker --sort dso,sym --stdio 2>/dev/null | sed 's/^/  /' | head -60
