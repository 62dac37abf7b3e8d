#!/usr/bin/env bash
# Inquiry CSV export: rows/s and the server's peak RSS for 100,000 and 1,000,000 rows, beside
# psql's \copy of the same query on the same data, in the same run, and beside pgbench running
# the export's page query back to back (the bound of a paged export).
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built (or BIN=another).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_PORT:-3200}
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
URL=$(bash scripts/fresh-db.sh ebb_bench_export)
DATABASE_URL=$URL "$BIN" migrate >/dev/null

COOKIE=$(bash benches/admin-session.sh "$URL")

seed() { # seed N: add N inquiries with realistic sizes
  psql -q "$URL" -c "insert into inquiries (name, email, message, created_at)
    select 'Visitor ' || g, 'visitor' || g || '@example.org',
           repeat('A message of moderate length, with a comma, and \"quotes\". ', 4) || g,
           now() - make_interval(secs => g)
    from generate_series(1, $1) g" -c "analyze inquiries"
}

run() { # run LABEL: export through Ebb (fresh process, so VmHWM is this export's peak) and through psql
  local rows; rows=$(psql -tAq "$URL" -c "select count(*) from inquiries")
  DATABASE_URL=$URL EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT RUST_LOG=warn EBB_STORAGE_DIR=$(mktemp -d) "$BIN" serve >"$CARGO_TARGET_DIR/bench-export.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  local idle_rss; idle_rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  local t0 t1; t0=$(date +%s.%N)
  local bytes; bytes=$(curl -fsS --max-redirs 0 -H "$COOKIE" "http://127.0.0.1:$PORT/admin/inbox/export.csv" | wc -c)
  t1=$(date +%s.%N)
  local peak; peak=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  kill $pid; wait $pid 2>/dev/null || true
  local p0 p1 prss; p0=$(date +%s.%N)
  prss=$( { /usr/bin/time -f "%M" psql -q "$URL" -c "\copy (select id, created_at, name, email, message from inquiries order by created_at, id) to stdout csv header" >/dev/null; } 2>&1 | tail -n 1)
  p1=$(date +%s.%N)
  awk -v label="$1" -v rows="$rows" -v bytes="$bytes" -v t="$(echo "$t1 - $t0" | bc)" -v pt="$(echo "$p1 - $p0" | bc)" \
      -v idle="$idle_rss" -v peak="$peak" -v prss="$prss" 'BEGIN {
    printf "%-12s %10d rows %8.1f MB | Ebb %9.0f rows/s, %6.2f s, server RSS idle %4.0f MB peak %4.0f MB | psql \\copy %9.0f rows/s, %6.2f s, psql RSS %4.0f MB\n",
      label, rows, bytes / 1e6, rows / t, t, idle / 1024, peak / 1024, rows / pt, pt, prss / 1024 }'
}

echo "bench: CSV export (200-row pages) vs psql \\copy, same data"
seed 100000
run "100k"
seed 900000
run "1M"
# Where the limit is: Ebb reads the table in 200-row pages, one after the other on one
# connection (keyset: each page starts after the last row of the one before). The same page
# query run back to back by pgbench is the fastest any such export can go on this database.
# Pages start at a random second of the span the seeded rows cover (the two seeds overlap).
SPAN=$(psql -tAq "$URL" -c "select floor(extract(epoch from now() - min(created_at)))::bigint from inquiries")
PAGES=$(pgbench -n -M prepared -c 1 -T "${BENCH_SECONDS:-10}" -D span="$SPAN" -f benches/export-page.sql "$URL" 2>&1)
awk -v tps="$(echo "$PAGES" | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1)" \
    -v lat="$(echo "$PAGES" | sed -nE 's/^latency average = ([0-9.]+) ms/\1/p')" 'BEGIN {
  printf "%-12s pgbench, the same 200-row page query back to back (1 client): %.0f pages/s = %.0f rows/s, %.3f ms a page\n",
    "pages", tps, tps * 200, lat }'
