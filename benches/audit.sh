#!/usr/bin/env bash
# The audit log:
#   event insert rate through the partitioned table beside the same insert into an unpartitioned
#   copy (same columns and indexes), same run, pgbench 4 clients;
#   the viewer's first page and a filtered page among 10,000,000 events spread over 26 months:
#   mean latency (pgbench, the viewer's own query) and EXPLAIN showing partition pruning and an
#   index scan.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$CARGO_TARGET_DIR/release/ebb
ROWS=${BENCH_AUDIT_ROWS:-10000000}
SECS=${BENCH_AUDIT_SECONDS:-5}
URL=$(bash scripts/fresh-db.sh ebb_bench_audit)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-audit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

psql -q "$URL" -f benches/months.sql
psql -q "$URL" <<'SQL'
create table audit_copy (like audit_events including defaults including constraints);
alter table audit_copy add primary key (id, occurred_at);
create index on audit_copy (occurred_at desc, id desc);
create index on audit_copy (kind, occurred_at desc, id desc);
create index on audit_copy (admin_id, occurred_at desc, id desc);
create index on audit_copy (admin_id, kind, occurred_at desc, id desc);
create index on audit_copy (subject_id, occurred_at desc, id desc);
SQL

cat > "$WORK/part.sql" <<'SQL'
insert into audit_events (kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
values ('share.create', '00000000-0000-0000-0000-000000000001', 'Bench', 'share', (random() * 1e6)::int::text, null, 'abcdef0123456789abcdef0123456789');
SQL
sed 's/insert into audit_events/insert into audit_copy/' "$WORK/part.sql" > "$WORK/copy.sql"
tps() { pgbench -n -c 4 -j 2 -T "$SECS" -f "$1" "$URL" 2>&1 | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1; }
echo "bench: event inserts, 4 clients, ${SECS} s each (partitioned, then the unpartitioned copy, then again)"
P1=$(tps "$WORK/part.sql"); C1=$(tps "$WORK/copy.sql"); P2=$(tps "$WORK/part.sql"); C2=$(tps "$WORK/copy.sql")
awk -v p1="$P1" -v p2="$P2" -v c1="$C1" -v c2="$C2" 'BEGIN {
  printf "\n%-44s %16s %16s\n", "audit event INSERT, 4 clients", "partitioned", "unpartitioned";
  printf "%-44s %16.0f %16.0f\n", "per second (mean of 2 runs)", (p1 + p2) / 2, (c1 + c2) / 2;
  printf "%-44s %15.1f%%\n", "partitioned as a share of unpartitioned", 100 * (p1 + p2) / (c1 + c2); }'

echo
echo "bench: loading $ROWS events over 26 months (8 kinds, 20 admins)"
psql -q "$URL" -c "truncate audit_events" -c "
  insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, client_hash)
  select now() - (g::double precision / $ROWS) * interval '26 months' + interval '1 second',
         (array['auth.signin','share.create','share.revoke','share.download','share.purge','inquiry.delete','passkey.add','maintenance.run'])[1 + g % 8],
         ('00000000-0000-0000-0000-0000000000' || lpad((g % 20)::text, 2, '0'))::uuid, 'Admin ' || (g % 20), 'share', (g % 100000)::text, 'ab'
  from generate_series(1, $ROWS) g" -c "vacuum analyze audit_events"

# The viewer's own query (app/src/audit/db.rs page), first page and filtered by kind and admin.
view_sql() { # kind admin
  echo "select id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash
   from audit_events
   where occurred_at >= greatest(now() - make_interval(months => 24), '-infinity'::timestamptz)
     and ($1::text is null or kind = $1) and ($2::uuid is null or admin_id = $2)
   order by occurred_at desc, id desc limit 50"
}
# Admin 06 has share.revoke events (g ≡ 26 mod 40); admin 07 has none (a pair with no events).
FIRST=$(view_sql "null" "null"); FILTERED=$(view_sql "'share.revoke'" "'00000000-0000-0000-0000-000000000006'")
NONE=$(view_sql "'share.revoke'" "'00000000-0000-0000-0000-000000000007'")
echo "$FIRST;" > "$WORK/first.sql"; echo "$FILTERED;" > "$WORK/filtered.sql"; echo "$NONE;" > "$WORK/none.sql"
lat() { pgbench -n -c 1 -T "$SECS" -f "$1" "$URL" 2>&1 | sed -nE 's/^latency average = ([0-9.]+) ms/\1/p'; }
L1=$(lat "$WORK/first.sql"); L2=$(lat "$WORK/filtered.sql"); L3=$(lat "$WORK/none.sql")
awk -v a="$L1" -v b="$L2" -v c="$L3" -v n="$ROWS" 'BEGIN {
  printf "\n%-44s %14s %14s %14s\n", "viewer page of 50 among " n " events", "first page", "kind + admin", "no such pair";
  printf "%-44s %14.3f %14.3f %14.3f\n", "mean latency (ms, pgbench " '"$SECS"' " s)", a, b, c; }'
echo
echo "EXPLAIN (first page):"
psql -tAq "$URL" -c "explain (analyze, costs off, timing off, summary off) $FIRST" | sed -n 1,12p | sed 's/^/  /'
echo "EXPLAIN (kind + admin):"
psql -tAq "$URL" -c "explain (analyze, costs off, timing off, summary off) $FILTERED" | sed -n 1,12p | sed 's/^/  /'
echo "EXPLAIN (no such pair):"
psql -tAq "$URL" -c "explain (analyze, costs off, timing off, summary off) $NONE" | sed -n 1,8p | sed 's/^/  /'
