#!/usr/bin/env bash
# `make bench`: figures printed beside a baseline measured on the same machine, in the same run.
#   contact: submissions/s and latency at 32 connections (wrk → release server → PostgreSQL),
#   beside pgbench's single-row INSERT rate on the same database with 32 clients, and pgbench
#   running Ebb's own submission statement (rate-limit hit + insert): what the database alone pays.
#   Then both again with other work beside them on the same server for the whole run: GET /
#   (server-rendered) at 16 connections, then an admin's CSV exports of the inbox on a fixed schedule.
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

# With other work beside it, on the same server for the whole run, beside Ebb's contact run and,
# the same way, beside pgbench's INSERT: visitors loading the home page (GET /, server-rendered),
# then an admin exporting the inbox as CSV every few seconds (every inquiry the runs above stored,
# 200-row pages on one connection).
BESIDE_CONNS=${BENCH_BESIDE_CONNECTIONS:-16}
home_pages() { wrk -t1 -c"$BESIDE_CONNS" -d"$((SECS + 2))s" -s benches/ssr.lua "http://127.0.0.1:$PORT/" | grep '^BENCH' | sed 's/^/GET \/ | /'; }
COOKIE=$(bash benches/admin-session.sh "$BENCH_URL")
# The exports run on a fixed schedule (one every BENCH_EXPORT_EVERY s, default 3, starting at once
# if the one before is still running), so Ebb and pgbench have the same work beside them: back to
# back, the exports would get more done beside whichever leaves them more of the database.
exports() { # prints how many, the rows they moved and their mean duration
  local every_ns=$(( ${BENCH_EXPORT_EVERY:-3} * 1000000000 )) end_ns n=0 rows=0 busy_ns=0 t0 t1 wait_ns
  t0=$(date +%s%N); end_ns=$(( (SECS + 2) * 1000000000 ))
  while [ $(( n * every_ns )) -lt $end_ns ]; do
    wait_ns=$(( t0 + n * every_ns - $(date +%s%N) ))
    [ $wait_ns -le 0 ] || sleep "$(awk -v ns=$wait_ns 'BEGIN { printf "%.3f", ns / 1e9 }')"
    t1=$(date +%s%N)
    rows=$((rows + $(curl -fsS -H "$COOKIE" "http://127.0.0.1:$PORT/admin/inbox/export.csv" | wc -l) - 1)); n=$((n + 1))
    busy_ns=$((busy_ns + $(date +%s%N) - t1))
  done
  awk -v n="$n" -v rows="$rows" -v busy="$busy_ns" -v every="${BENCH_EXPORT_EVERY:-3}" 'BEGIN {
    printf "CSV export | %d exports (one every %s s), %d rows, %.2f s each, %.0f rows/s while exporting\n", n, every, rows, busy / n / 1e9, rows / (busy / 1e9) }'
}
# beside LABEL WORK: the contact run and pgbench's INSERT, each with WORK running beside it;
# appends the comparison to $BESIDE.
BESIDE=""
beside() {
  local file wrkb line pgb bpid; file=$(mktemp)
  echo "bench: contact form beside $1, ${SECS} s"
  $2 >"$file" & bpid=$!; sleep 1
  wrkb=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/contact.lua "http://127.0.0.1:$PORT/api/contact")
  wait $bpid; echo "$wrkb" | grep -E 'Requests/sec|99%' | sed 's/^/  wrk | /'; sed 's/^/  beside: /' "$file"
  line=$(echo "$wrkb" | grep '^BENCH')
  echo "bench: pgbench single-row INSERT beside $1, ${SECS} s"
  $2 >"$file" & bpid=$!; sleep 1
  pgb=$(pgbench -n -c "$CONNS" -j 2 -T "$SECS" -f benches/insert.sql "$BENCH_URL" 2>&1)
  wait $bpid; echo "$pgb" | grep -E 'tps|latency' | sed 's/^/  pgbench | /'; sed 's/^/  beside: /' "$file"; rm -f "$file"
  BESIDE+=$(awk -v req="$(kv requests "$line")" -v dur="$(kv duration_us "$line")" -v p99="$(kv p99_us "$line")" \
      -v pgtps="$(tps_of "$pgb")" -v pglat="$(lat_of "$pgb")" -v label="$1" -v key="$3" 'BEGIN {
    rps = req / (dur / 1e6);
    printf "%-44s %14.0f %14.0f\n", "per second, beside " label, rps, pgtps;
    printf "%-44s %14.2f %14.2f\n", "  latency p99 / pgbench average (ms)", p99 / 1000, pglat;
    printf "%-44s %14.1f%%\n", "  Ebb as a share of the INSERT rate beside it", 100 * rps / pgtps;
    printf "%-44s %14s\n", "  p99 within 3 x pgbench average", (p99 / 1000 <= 3 * pglat) ? "yes" : "NO";
    printf "BENCH contact_beside_%s_ratio=%.3f contact_beside_%s_p99_ms=%.2f\n", key, rps / pgtps, key, p99 / 1000;
  }')$'\n'
}
if [ -f "$LEPTOS_SITE_ROOT/pkg/ASSETS" ]; then
  beside "GET / ($BESIDE_CONNS conns)" home_pages home
else
  echo "bench: no client in $LEPTOS_SITE_ROOT, so no run beside GET / (bash scripts/build-client.sh)"
fi
beside "CSV exports" exports export

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
[ -z "$BESIDE" ] || printf "%s" "$BESIDE"
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
echo; bash benches/tlog.sh
echo; bash benches/requests.sh
echo; bash benches/first-visit.sh
echo; python3 benches/client-size.py "$LEPTOS_SITE_ROOT/pkg/$(cat "$LEPTOS_SITE_ROOT/pkg/ASSETS")"
echo; bash benches/lighthouse.sh
echo; bash benches/ssr.sh
echo; bash benches/edge.sh
