#!/usr/bin/env bash
# The audit archive on S3 (a throwaway garage on 127.0.0.1):
#   one month of BENCH_ARCHIVE_ROWS (default 1,000,000) audit events, detached by upkeep, archived
#   by `ebb maintenance run audit_archive` (export in pages + gzip + multipart upload with CRC32C +
#   verification + drop; the whole command, start-up included): rows/s and peak RSS;
#   beside the baseline of the same month: `psql -c "\copy (select …) to stdout csv" | gzip` to a
#   file, then a PUT of that file to the same garage with curl — in the same run, each round on a
#   fresh month (the baseline first: the archive drops the table).
# Goal: Ebb's throughput ≥ 0.5 × the baseline's.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${BENCH_ARCHIVE_ROWS:-1000000}
ROUNDS=${BENCH_ARCHIVE_ROUNDS:-2}
S3_PORT=${BENCH_ARCHIVE_S3_PORT:-3940}
BIN=$CARGO_TARGET_DIR/release/ebb
LOG=$CARGO_TARGET_DIR/bench-archive.log

bash scripts/s3-local.sh install
URL=$(bash scripts/fresh-db.sh ebb_bench_archive)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-archive.XXXXXX")
GARAGE=$WORK/garage
mkdir -p "$WORK/blobs"
: > "$LOG"
cleanup() { bash scripts/s3-local.sh stop "$GARAGE" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "bench: $*" >&2; tail -n 20 "$LOG" >&2 2>/dev/null || true; exit 1; }

echo "bench: starting a throwaway garage, ${EBB_GARAGE_PROFILE:-debug} build (S3 API on 127.0.0.1:$S3_PORT)"
bash scripts/s3-local.sh start "$GARAGE" "$S3_PORT" >>"$LOG" 2>&1
set -a; . "$GARAGE/env"; set +a
S3_CURL=(--aws-sigv4 "aws:amz:$EBB_S3_REGION:s3" --user "$EBB_S3_ACCESS_KEY_ID:$EBB_S3_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
ebb() { DATABASE_URL=$URL EBB_STORAGE=s3 EBB_S3_PREFIX=bench/ EBB_STORAGE_DIR="$WORK/blobs" EBB_METRICS_BIND= RUST_LOG=warn "$BIN" "$@"; }

# A month `back` months ago with $ROWS events (admins, subjects, details and client hashes of
# realistic length), detached into audit_pending by upkeep as in production. Prints its table.
make_month() {
  local back=$1 m next table
  m=$(psql -tAq "$URL" -c "select to_char(date_trunc('month', now() at time zone 'UTC') - interval '$back months', 'YYYY-MM')")
  next=$(psql -tAq "$URL" -c "select to_char(date '$m-01' + interval '1 month', 'YYYY-MM')")
  table="audit_events_${m/-/_}"
  psql -q "$URL" -v ON_ERROR_STOP=1 >>"$LOG" <<SQL
create table $table partition of audit_events for values from ('$m-01 00:00:00+00') to ('$next-01 00:00:00+00');
insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
select '$m-01 00:00:00+00'::timestamptz + (i * interval '2 seconds'),
       (array['share.create','share.download','inquiry.delete','auth.signin','maintenance.run'])[1 + i % 5],
       case when i % 5 = 4 then null else md5((i % 7)::text)::uuid end,
       case when i % 5 = 4 then null else 'Admin ' || (i % 7) end,
       'share', (100000 + i)::text,
       case when i % 3 = 0 then 'ok (ticker): gc.purged=' || (i % 50) else null end,
       substr(md5(i::text), 1, 32)
from generate_series(1, $ROWS) i;
SQL
  ebb maintenance run audit_upkeep --force >>"$LOG" 2>&1 || fail "upkeep did not detach $m"
  psql -tAq "$URL" -c "select count(*) from pg_tables where schemaname = 'audit_pending' and tablename = '$table'" | grep -qx 1 || fail "$table was not detached"
  echo "$table"
}

baseline() { # baseline TABLE → "seconds gz_bytes"
  local t0 t1
  t0=$(date +%s.%N)
  psql -q "$URL" -c "\\copy (select id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash from audit_pending.$1 order by id) to stdout csv header" \
    | gzip > "$WORK/month.csv.gz"
  curl -fsS "${S3_CURL[@]}" -T "$WORK/month.csv.gz" -o /dev/null "$EBB_S3_ENDPOINT/$EBB_S3_BUCKET/baseline/$1.csv.gz" || fail "the baseline upload failed"
  t1=$(date +%s.%N)
  echo "$(echo "$t1 - $t0" | bc) $(stat -c %s "$WORK/month.csv.gz")"
}

archive() { # archive TABLE → "seconds peak_rss_kb gz_bytes"
  local t0 t1 bytes rss
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$WORK/time.txt" env DATABASE_URL="$URL" EBB_STORAGE=s3 EBB_S3_PREFIX=bench/ EBB_STORAGE_DIR="$WORK/blobs" \
    EBB_METRICS_BIND= RUST_LOG=warn "$BIN" maintenance run audit_archive --force >>"$LOG" 2>&1 || fail "the archive run failed"
  t1=$(date +%s.%N)
  psql -tAq "$URL" -c "select count(*) from pg_tables where schemaname = 'audit_pending' and tablename = '$1'" | grep -qx 0 || fail "$1 was not archived and dropped"
  bytes=$(psql -tAq "$URL" -c "select bytes from audit_partition_archives where table_name = '$1' and status = 'verified'")
  rss=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+).*/\1/p' "$WORK/time.txt")
  echo "$(echo "$t1 - $t0" | bc) $rss $bytes"
}

command -v /usr/bin/time >/dev/null || fail "/usr/bin/time is missing (Debian package time)"
: > "$WORK/results"
for r in $(seq 1 "$ROUNDS"); do
  echo "bench: round $r: making a month of $ROWS events and detaching it"
  T=$(make_month $((29 + r)))
  # The baseline reads the table first (the archive drops it); each round has a fresh month.
  B=$(baseline "$T"); A=$(archive "$T")
  echo "round $r: baseline $B | ebb $A" | tee -a "$LOG"
  echo "$B $A" >> "$WORK/results"
done

awk -v rows="$ROWS" '
  NF >= 5 { bs += $1; bz = $2; es += $3; rss = ($4 > rss ? $4 : rss); ez = $5; n++ }
  END {
    if (n == 0) { print "bench: no complete round"; exit 1 }
    brate = rows / (bs / n); erate = rows / (es / n);
    printf "\n%-52s %14s %14s\n", "audit archive of one month (" rows " events), S3", "Ebb", "psql|gzip+PUT";
    printf "%-52s %14.2f %14.2f\n", "seconds (mean of " n ")", es / n, bs / n;
    printf "%-52s %14.0f %14.0f\n", "events per second", erate, brate;
    printf "%-52s %14d %14d\n", "compressed bytes", ez, bz;
    printf "%-52s %14.1f %14s\n", "peak RSS of the ebb process (MiB)", rss / 1024, "-";
    printf "%-52s %14.2f %14s\n", "throughput ratio Ebb / baseline (goal >= 0.5)", erate / brate, "";
  }' "$WORK/results"
