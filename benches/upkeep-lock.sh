#!/usr/bin/env bash
# Audit upkeep detaching a month of 1,000,000 events while audited actions go on: the longest
# wait of an event insert (what every share download, sign-in and admin action does), measured by
# pgbench's per-transaction log. Before: the month's bounds CHECK added and validated, and the
# month detached, in one transaction (how upkeep did it: the scan ran under the parent table's
# lock once a month was detached). Now: `ebb maintenance run audit_upkeep` (CHECK added
# `not valid`, validated under a lock on that partition only, then a short detach). Same
# database, same run. Goal: the longest wait under 100 ms.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the binary built (BIN, release by default).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
ROWS=${BENCH_UPKEEP_ROWS:-1000000}
URL=$(bash scripts/fresh-db.sh ebb_bench_upkeep)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-upkeep.XXXXXX")
mkdir -p "$WORK/blobs"
trap 'rm -rf "$WORK"' EXIT

echo "bench: upkeep lock: four months of $ROWS events each, 26 to 29 months back"
PGOPTIONS="-c bench.rows=$ROWS" psql -q "$URL" <<'SQL'
do $$
declare back int;
declare m date;
begin
  for back in 26..29 loop
    m := date_trunc('month', now() at time zone 'UTC') - make_interval(months => back);
    execute format('create table %I partition of audit_events for values from (%L) to (%L)',
      'audit_events_' || to_char(m, 'YYYY_MM'), m::timestamp at time zone 'UTC', (m + interval '1 month')::timestamp at time zone 'UTC');
    execute format($q$insert into audit_events (occurred_at, kind, subject_type, subject_id)
      select %L::timestamptz + (i %% 2000000) * interval '1 second', 'share.create', 'share', 's' || i from generate_series(1, %s) i$q$,
      m::timestamp at time zone 'UTC', current_setting('bench.rows'));
  end loop;
end $$;
vacuum analyze audit_events;
SQL
# Before: months 29 and 28 in one transaction, as upkeep did (the second month's CHECK is
# validated while the first detach holds the log's lock). Now: upkeep detaches 27 and 26.
OLD_TX=$(psql -qAt "$URL" <<'SQL'
select 'begin; ' || string_agg(format(
  'alter table %1$I add constraint audit_month_bounds check (occurred_at >= %2$L and occurred_at < %3$L); alter table audit_events detach partition %1$I; alter table %1$I set schema audit_pending;',
  'audit_events_' || to_char(m, 'YYYY_MM'), m::timestamp at time zone 'UTC', (m + interval '1 month')::timestamp at time zone 'UTC'), ' ' order by m desc) || ' commit;'
from (select (date_trunc('month', now() at time zone 'UTC') - make_interval(months => b))::date as m from generate_series(28, 29) b) x;
SQL
)
echo "insert into audit_events (occurred_at, kind, subject_type, subject_id) values (clock_timestamp(), 'share.download', 'share', '1');" >"$WORK/insert.sql"

# Inserts for 12 s from 2 clients, the detach starting after 2 s; prints the longest and the
# 99th-percentile wait in ms.
measure() {
  local name=$1; shift
  rm -f "$WORK"/pgbench_log.*
  (cd "$WORK" && pgbench -n -c 2 -j 2 -T 12 -l -f insert.sql "$URL" >/dev/null 2>&1) &
  local pgb=$!
  sleep 2
  "$@" >/dev/null 2>&1 || echo "  ($name: the detach command failed)"
  wait $pgb
  cat "$WORK"/pgbench_log.* | awk '{print $3 / 1000}' | sort -n | awk '{a[NR] = $1} END {printf "%.1f %.1f %d\n", a[NR], a[int(NR * 0.99)], NR}'
}

BEFORE=$(measure before psql -q "$URL" -c "$OLD_TX")
NOW=$(measure now env DATABASE_URL="$URL" EBB_STORAGE_DIR="$WORK/blobs" RUST_LOG=warn "$BIN" maintenance run audit_upkeep --force)
read -r B_MAX B_P99 B_N <<<"$BEFORE"
read -r N_MAX N_P99 N_N <<<"$NOW"
printf "\n%-58s %12s %12s\n" "event inserts while two months of $ROWS events are detached" "one tx" "upkeep now"
printf "%-58s %12s %12s\n" "longest wait (ms)" "$B_MAX" "$N_MAX"
printf "%-58s %12s %12s\n" "99th percentile (ms)" "$B_P99" "$N_P99"
printf "%-58s %12s %12s\n" "inserts in 12 s" "$B_N" "$N_N"
psql -qAt "$URL" -c "select 'detached now: ' || string_agg(tablename, ', ' order by tablename) from pg_tables where schemaname = 'audit_pending'" | sed 's/^/  /'
