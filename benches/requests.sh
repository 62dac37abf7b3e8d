#!/usr/bin/env bash
# Data requests (issue 32): *find* and *copy* for an address with 100,000 inquiries among
# 5,000,000, as `ebb requests find` and `ebb requests export --out` (the same code as the admin
# page and its download), beside `psql \copy` of the same rows to a file — same database, same
# run. Goal: psql's time / Ebb's ≥ 0.7 for the copy, and the peak RSS flat (the same for 10,000
# and 100,000 matching inquiries).
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the binary built (BIN, release by default).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
INQUIRIES=${BENCH_REQUEST_INQUIRIES:-5000000}
MATCHING=${BENCH_REQUEST_MATCHING:-100000}
SMALL=$(( MATCHING / 10 ))
URL=$(bash scripts/fresh-db.sh ebb_bench_requests)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
STORE=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-requests.XXXXXX")
OUT=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-requests-out.XXXXXX")
trap 'rm -rf "$STORE" "$OUT"' EXIT

echo "bench: data requests: loading $INQUIRIES inquiries ($MATCHING from the person, $SMALL from another)"
psql -q "$URL" -v total="$INQUIRIES" -v matching="$MATCHING" -v small="$SMALL" <<'SQL'
insert into inquiries (name, email, message, created_at)
  select 'Visitor ' || i, 'v' || (i % 400000) || '@example.org', 'A message of ordinary length about an ordinary matter.',
         now() - (i % 170) * interval '1 day' - (i % 86400) * interval '1 second'
  from generate_series(1, :total - :matching - :small) i;
insert into inquiries (name, email, message, created_at)
  select 'Pat Person', 'pat.person@example.org', 'A message of ordinary length about an ordinary matter, number ' || i,
         now() - (i % 170) * interval '1 day' - (i % 86400) * interval '1 second'
  from generate_series(1, :matching) i;
insert into inquiries (name, email, message, created_at)
  select 'Sam Small', 'sam.small@example.org', 'A message of ordinary length about an ordinary matter, number ' || i,
         now() - (i % 170) * interval '1 day' - (i % 86400) * interval '1 second'
  from generate_series(1, :small) i;
vacuum analyze inquiries;
SQL

# Best of three: seconds, and the peak RSS (KiB) of the best run.
measure() {
  local best="" rss=""
  for _ in 1 2 3; do
    local t
    /usr/bin/time -o "$OUT/time" -f '%e %M' "$@" >/dev/null 2>"$OUT/stderr" || { cat "$OUT/stderr" >&2; exit 1; }
    t=$(tail -n 1 "$OUT/time")
    local secs=${t% *} kib=${t#* }
    if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$secs; rss=$kib; fi
  done
  echo "$best $rss"
}
ebb() { DATABASE_URL=$URL EBB_STORAGE_DIR=$STORE RUST_LOG=warn "$BIN" "$@"; }
export -f ebb
export URL STORE BIN

FIND=$(measure bash -c 'ebb requests find pat.person@example.org')
COPY=$(measure bash -c "ebb requests export pat.person@example.org --out $OUT/copy.json")
COPY_SMALL=$(measure bash -c "ebb requests export sam.small@example.org --out $OUT/small.json")
PSQL=$(measure psql -q "$URL" -c "\\copy (select id, created_at, name, email, message, held, notified from inquiries where lower(email) = 'pat.person@example.org' order by created_at, id) to '$OUT/psql.csv' csv header")
PSQL_COUNT=$(measure psql -qAt "$URL" -c "select count(*), min(created_at), max(created_at) from inquiries where lower(email) = 'pat.person@example.org'")
ITEMS=$(python3 -c "import json,sys; d=json.load(open('$OUT/copy.json')); print(len(d['data']['inquiries']))")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
printf "\n%-62s %10s %10s %8s\n" "data requests ($MATCHING of $INQUIRIES inquiries)" "Ebb (s)" "psql (s)" "ratio"
printf "%-62s %10s %10s %8s\n" "find (ebb requests find) vs select count/min/max" "${FIND% *}" "${PSQL_COUNT% *}" "$(ratio "${PSQL_COUNT% *}" "${FIND% *}")"
printf "%-62s %10s %10s %8s\n" "copy (ebb requests export, JSON) vs psql \\copy (CSV)" "${COPY% *}" "${PSQL% *}" "$(ratio "${PSQL% *}" "${COPY% *}")"
printf "%-62s %10s\n" "peak RSS of the copy, $MATCHING inquiries (KiB)" "${COPY#* }"
printf "%-62s %10s\n" "peak RSS of the copy, $SMALL inquiries (KiB)" "${COPY_SMALL#* }"
printf "%-62s %10s\n" "inquiries in the copy (parsed back)" "$ITEMS"
echo "  (Ebb's times include the process start, migrations check and storage check; goal: ratio >= 0.7, RSS flat)"
