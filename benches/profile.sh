#!/usr/bin/env bash
# Where a workload's time goes: a system-wide CPU profile (perf, software clock: these machines
# have no hardware counters) of the release server under the benchmark's load. Prints each
# process's share of the CPU samples (the load generator, ebb, postgres, the kernel), then ebb's
# busiest functions.
#   bash benches/profile.sh contact   wrk posting the contact form at 32 connections
#   bash benches/profile.sh ssr       wrk asking for GET / (the rendered home page) at 32 connections
#   bash benches/profile.sh export    curl downloading the CSV export of 1,000,000 inquiries
# After `make bench` or `cargo build --release -p server` (and, for ssr, the client built by
# scripts/build-client.sh); needs perf (Debian's linux-perf) and root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
eval "$(bash scripts/test-db.sh)"
fail() { echo "profile: $*" >&2; exit 1; }
WHAT=${1:-contact}
case $WHAT in contact | ssr | export) ;; *) fail "usage: benches/profile.sh contact|ssr|export" ;; esac
command -v perf >/dev/null || fail "perf is not installed (apt-get install linux-perf)"
BIN=$CARGO_TARGET_DIR/release/ebb
[ -x "$BIN" ] || fail "no release build at $BIN (cargo build --release -p server --bin ebb)"
PORT=${BENCH_PORT:-3210}
SECS=${PROFILE_SECONDS:-10}
WORK=$(mktemp -d)
LOG=$WORK/server.log
URL=$(bash scripts/fresh-db.sh ebb_profile)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
. benches/serve.sh
# The benchmark's clients each come from their own address (one trusted proxy hop).
export EBB_TRUSTED_PROXY_HOPS=1
if [ "$WHAT" = export ]; then
  ROWS=${PROFILE_ROWS:-1000000}
  echo "profile: adding $ROWS inquiries"
  psql -q "$URL" -c "insert into inquiries (name, email, message, created_at)
    select 'Visitor ' || g, 'visitor' || g || '@example.org',
           repeat('A message of moderate length, with a comma, and \"quotes\". ', 4) || g,
           now() - make_interval(secs => g)
    from generate_series(1, $ROWS) g" -c "analyze inquiries"
  COOKIE=$(bash benches/admin-session.sh "$URL")
fi
start_ebb
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
case $WHAT in
  contact)
    wrk -t2 -c32 -d3s -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" >/dev/null
    perf record -q -a -e cpu-clock -F 499 -o "$WORK/perf.data" -- \
      wrk -t2 -c32 -d"${SECS}s" -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" | grep '^BENCH' | sed 's/^/  /' ;;
  ssr)
    wrk -t2 -c32 -d3s "http://127.0.0.1:$PORT/" >/dev/null
    perf record -q -a -e cpu-clock -F 499 -o "$WORK/perf.data" -- \
      wrk -t2 -c32 -d"${SECS}s" -s benches/ssr.lua "http://127.0.0.1:$PORT/" | grep '^BENCH' | sed 's/^/  /' ;;
  export)
    perf record -q -a -e cpu-clock -F 499 -o "$WORK/perf.data" -- \
      sh -c "curl -fsS --max-redirs 0 -H '$COOKIE' 'http://127.0.0.1:$PORT/admin/inbox/export.csv' | wc -c" | sed 's/^/  bytes: /' ;;
esac
# Kept for a further look (perf report -i …, with --call-graph, by symbol or by caller).
cp "$WORK/perf.data" "/tmp/perf-$WHAT.data" && echo "profile: samples kept in /tmp/perf-$WHAT.data"
echo "CPU samples by process (all of the machine's cores):"
perf report -q -i "$WORK/perf.data" --sort comm --stdio 2>/dev/null | sed 's/^/  /' | head -12
echo "ebb's busiest functions (self time, share of ebb's samples):"
perf report -q -i "$WORK/perf.data" --comm ebb,tokio-rt-worker --sort dso,sym --stdio 2>/dev/null | sed 's/^/  /' | head -${PROFILE_TOP:-60}
