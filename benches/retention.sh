#!/usr/bin/env bash
# The retention check (hourly inside prune, and every opening of /admin/retention) with
# 5,000,000 inquiries and 10,000,000 audit events over 26 months: `ebb retention report` now,
# beside the same figures read the way the report read them before (whole-table counts with a
# correlated hold check per inquiry row, every audit partition counted), same database, same run.
# Goal: the report in at most 1 s; it should cost what is past each promise, not the tables' size.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the binary built (BIN, release by default).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
INQUIRIES=${BENCH_RETENTION_INQUIRIES:-5000000}
EVENTS=${BENCH_RETENTION_EVENTS:-10000000}
URL=$(bash scripts/fresh-db.sh ebb_bench_retention)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
STORE=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-retention.XXXXXX")
trap 'rm -rf "$STORE"' EXIT

echo "bench: retention report: loading $INQUIRIES inquiries and $EVENTS audit events over 26 months"
psql -q "$URL" -f benches/months.sql
psql -q "$URL" -v inquiries="$INQUIRIES" -v events="$EVENTS" <<'SQL'
-- Within the retention period (nothing past the promise but a handful), a few on hold.
insert into inquiries (name, email, message, created_at)
  select 'Visitor ' || i, 'v' || (i % 400000) || '@example.org', 'A message of ordinary length about an ordinary matter.',
         now() - (i % 170) * interval '1 day' - (i % 86400) * interval '1 second'
  from generate_series(1, :inquiries) i;
insert into inquiries (name, email, message, created_at)
  select 'Old', 'old' || i || '@example.org', 'm', now() - interval '400 days' from generate_series(1, 5) i;
insert into legal_holds (email, reason) values ('v7@example.org', 'Case 2026-17: keep until decided');
-- 24 months of events (none older than the promise).
insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail)
  select now() - (i % (730 * 86400)) * interval '1 second', 'share.create', null, 'Ann', 'share', 's' || i, null
  from generate_series(1, :events) i;
vacuum analyze inquiries;
vacuum analyze audit_events;
SQL

# Before: the report's two largest statements as they were (copied from git history), timed by
# psql over three runs; the least is kept.
before() {
  local best=""
  for _ in 1 2 3; do
    local ms
    ms=$(psql -qAt "$URL" <<'SQL' | sed -nE 's/^Time: ([0-9.]+) ms.*/\1/p' | awk '{s += $1} END {print s}'
\timing on
with f as (select created_at, held or exists (select 1 from legal_holds h where h.email = lower(i.email)) as kept from inquiries i)
select count(*), min(created_at), count(*) filter (where created_at < now() - interval '180 days' and not kept),
       count(*) filter (where created_at < now() - interval '181 days' and not kept), count(*) filter (where kept) from f;
select count(*), min(occurred_at), count(*) filter (where occurred_at < now() - interval '25 months'),
       count(*) filter (where occurred_at < now() - interval '25 months 7 days') from audit_events;
SQL
)
    if [ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$ms; fi
  done
  echo "$best"
}

# Now: the whole report, as `ebb retention report --json` reads it (all its kinds), three runs.
now_ms() {
  local best=""
  for _ in 1 2 3; do
    local start end ms
    start=$(date +%s%N)
    DATABASE_URL=$URL EBB_STORAGE_DIR=$STORE RUST_LOG=warn "$BIN" retention report --json >/dev/null || true
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}

BEFORE=$(before)
NOW=$(now_ms)
printf "\n%-58s %12s %12s\n" "retention report ($INQUIRIES inquiries, $EVENTS events)" "before (ms)" "now (ms)"
printf "%-58s %12.0f %12s\n" "two largest statements before / whole report now, best of 3" "$BEFORE" "$NOW"
echo "  (now includes the process start, migrations check and every other kind of data)"
DATABASE_URL=$URL EBB_STORAGE_DIR=$STORE RUST_LOG=warn "$BIN" retention report | sed 's/^/  report | /' | head -8 || true
