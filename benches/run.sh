#!/usr/bin/env bash
# `make bench`: figures printed beside a baseline measured on the same machine, in the same run.
#   contact: submissions/s and latency at 32 connections (wrk → release server → PostgreSQL),
#   beside pgbench's single-row INSERT rate on the same database with 32 clients, and pgbench
#   running Ebb's own submission statement (rate-limit hit + insert): what the database alone pays.
#   Then both again with other work beside them: GET / (server-rendered) at 16 connections on the
#   same server for the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
# The S3 benches talk to a release build of garage (built once into ~/.cache/ebb/garage-release):
# the debug build that `make test` uses moves about 16 MB/s and would bound both Ebb and curl.
export EBB_GARAGE_PROFILE=${EBB_GARAGE_PROFILE:-release}
eval "$(bash scripts/test-db.sh)"
CONNS=${BENCH_CONNECTIONS:-32}
SECS=${BENCH_SECONDS:-10}
PORT=${BENCH_PORT:-3200}

# BENCH_ONLY=contact: only the contact comparison (no client build, no other benches).
ONLY=${BENCH_ONLY:-}
echo "bench: building the release client and server"
[ "$ONLY" = contact ] || bash scripts/build-client.sh
cargo build -q --release -p server --bin ebb
BENCH_URL=$(bash scripts/fresh-db.sh ebb_bench)
LOG=$CARGO_TARGET_DIR/bench-server.log
DATABASE_URL=$BENCH_URL EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT EBB_TRUSTED_PROXY_HOPS=1 RUST_LOG=warn \
  EBB_STORAGE_DIR=$(mktemp -d) "$CARGO_TARGET_DIR/release/ebb" serve >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done

echo "bench: warm-up (3 s)"
wrk -t2 -c"$CONNS" -d3s -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact" >/dev/null
echo "bench: contact form, $CONNS connections, ${SECS} s"
WRK=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact")
echo "$WRK" | sed 's/^/  wrk | /'
LINE=$(echo "$WRK" | grep '^BENCH')
# kv KEY [LINE]: a value of wrk's BENCH line (the contact run's by default).
kv() { echo "${2:-$LINE}" | tr ' ' '\n' | grep "^$1=" | cut -d= -f2; }
# pgbench's tps and mean latency, from its output.
tps_of() { echo "$1" | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1; }
lat_of() { echo "$1" | sed -nE 's/^latency average = ([0-9.]+) ms/\1/p'; }

echo "bench: pgbench single-row INSERT, $CONNS clients, ${SECS} s (same database)"
PGB=$(pgbench -n -c "$CONNS" -j 2 -T "$SECS" -f benches/insert.sql "$BENCH_URL" 2>&1)
echo "$PGB" | grep -E 'tps|latency' | sed 's/^/  pgbench | /'
PG_TPS=$(tps_of "$PGB")
PG_LAT=$(lat_of "$PGB")
echo "bench: pgbench running Ebb's own submission statement, $CONNS clients, ${SECS} s (same database)"
# Prepared, as sqlx sends it (the plain INSERT above keeps the simple protocol it always used).
PGS=$(pgbench -n -M prepared -c "$CONNS" -j 2 -T "$SECS" -f benches/submit.sql "$BENCH_URL" 2>&1)
echo "$PGS" | grep -E 'tps|latency' | sed 's/^/  pgbench | /'
PGS_TPS=$(tps_of "$PGS")

# With other work beside it: visitors loading the home page (GET /, server-rendered) on the same
# server for the whole run, beside Ebb's contact run and, the same way, beside pgbench's INSERT.
BESIDE_CONNS=${BENCH_BESIDE_CONNECTIONS:-16}
BESIDE=""
if [ -f "$LEPTOS_SITE_ROOT/pkg/ASSETS" ]; then
  beside() { wrk -t1 -c"$BESIDE_CONNS" -d"$((SECS + 2))s" -s benches/ssr.lua "http://127.0.0.1:$PORT/" | grep '^BENCH'; }
  echo "bench: contact form beside GET / at $BESIDE_CONNS connections, ${SECS} s"
  BFILE=$(mktemp); beside >"$BFILE" & BPID=$!; sleep 1
  WRKB=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact")
  wait $BPID; echo "$WRKB" | grep -E 'Requests/sec|99%' | sed 's/^/  wrk | /'; sed 's/^/  wrk GET \/ | /' "$BFILE"
  LINEB=$(echo "$WRKB" | grep '^BENCH')
  echo "bench: pgbench single-row INSERT beside GET / at $BESIDE_CONNS connections, ${SECS} s"
  beside >"$BFILE" & BPID=$!; sleep 1
  PGB2=$(pgbench -n -c "$CONNS" -j 2 -T "$SECS" -f benches/insert.sql "$BENCH_URL" 2>&1)
  wait $BPID; echo "$PGB2" | grep -E 'tps|latency' | sed 's/^/  pgbench | /'; sed 's/^/  wrk GET \/ | /' "$BFILE"; rm -f "$BFILE"
  BESIDE=$(awk -v req="$(kv requests "$LINEB")" -v dur="$(kv duration_us "$LINEB")" -v p99="$(kv p99_us "$LINEB")" \
      -v pgtps="$(tps_of "$PGB2")" -v pglat="$(lat_of "$PGB2")" -v b="$BESIDE_CONNS" 'BEGIN {
    rps = req / (dur / 1e6);
    printf "%-44s %14.0f %14.0f\n", "per second, beside GET / (" b " conns)", rps, pgtps;
    printf "%-44s %14.2f %14.2f\n", "  latency p99 / pgbench average (ms)", p99 / 1000, pglat;
    printf "%-44s %14.1f%%\n", "  Ebb as a share of the INSERT rate beside it", 100 * rps / pgtps;
    printf "BENCH contact_beside_ratio=%.3f contact_beside_p99_ms=%.2f\n", rps / pgtps, p99 / 1000;
  }')
else
  echo "bench: no client in $LEPTOS_SITE_ROOT, so no run beside GET / (bash scripts/build-client.sh)"
fi

CONTACT_SUMMARY=$(awk -v req="$(kv requests)" -v dur="$(kv duration_us)" -v non2xx="$(kv non2xx)" -v errs="$(kv errors)" \
    -v p50="$(kv p50_us)" -v p99="$(kv p99_us)" -v pgtps="$PG_TPS" -v pglat="$PG_LAT" -v pgstps="$PGS_TPS" -v c="$CONNS" 'BEGIN {
  rps = req / (dur / 1e6);
  printf "\n%-44s %14s %14s\n", "contact submissions, " c " connections", "Ebb (HTTP)", "pgbench INSERT";
  printf "%-44s %14.0f %14.0f\n", "per second", rps, pgtps;
  printf "%-44s %14.2f %14.2f\n", "latency p50 / average (ms)", p50 / 1000, pglat;
  printf "%-44s %14.2f %14s\n", "latency p99 (ms)", p99 / 1000, "-";
  printf "%-44s %14.1f%%\n", "Ebb as a share of the raw INSERT rate", 100 * rps / pgtps;
  printf "%-44s %14.0f\n", "pgbench, Ebb statement (limit + insert)/s", pgstps;
  printf "%-44s %14.1f%%\n", "that statement as a share of the INSERT rate", 100 * pgstps / pgtps;
  printf "%-44s %14d\n", "non-2xx responses / socket errors", non2xx + errs;
}')
kill $PID 2>/dev/null; wait $PID 2>/dev/null || true
echo "$CONTACT_SUMMARY"
[ -z "$BESIDE" ] || echo "$BESIDE"
[ "$ONLY" = contact ] && exit 0
echo
bash benches/export.sh
echo; bash benches/shares.sh
echo; bash benches/lifecycle.sh
echo; bash benches/s3.sh
echo; bash benches/file-requests.sh
echo; bash benches/spam.sh
echo; bash benches/audit.sh
echo; bash benches/retention.sh
echo; bash benches/upkeep-lock.sh
echo; bash benches/archive.sh
echo; bash benches/audit-chain.sh
echo; bash benches/requests.sh
echo; bash benches/first-visit.sh
echo; python3 benches/client-size.py "$LEPTOS_SITE_ROOT/pkg/$(cat "$LEPTOS_SITE_ROOT/pkg/ASSETS")"
echo; bash benches/lighthouse.sh
echo; bash benches/ssr.sh
