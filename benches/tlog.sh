#!/usr/bin/env bash
# The transparency log as its clients see it (issue 53): `GET /audit/checkpoint` and one inclusion
# proof (every hash tile from a random entry to the root, fetched in turn over one connection) in
# a log of BENCH_TLOG_ENTRIES (10,000,000) entries, beside the same number of `GET /healthz` (the
# floor of any request through Ebb, on the same connection, in the same run). Goal: p99 ≤ 5 ms.
# The log is filled in SQL (entries, hashes and head as sealing writes them; the hashes need
# not match: only how fast they are served is measured).
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$CARGO_TARGET_DIR/release/ebb}
N=${BENCH_TLOG_ENTRIES:-10000000}
SAMPLES=${BENCH_TLOG_SAMPLES:-2000}
PORT=${BENCH_PORT:-3200}
URL=$(bash scripts/fresh-db.sh ebb_bench_tlog)
STORE=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-tlog.XXXXXX")
LOG=$CARGO_TARGET_DIR/bench-tlog.log
PID=""
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; wait 2>/dev/null; rm -rf "$STORE"' EXIT
DATABASE_URL=$URL "$BIN" migrate >/dev/null

echo "bench: filling a log of $N entries"
START=$(date +%s)
psql -q -v ON_ERROR_STOP=1 "$URL" -v n="$N" <<'SQL'
insert into audit_tlog_entries (index, entry)
  select i, '2026-12 ' || (i + 1) || ' ' || (i + 1) || ' ' || encode(sha256(int8send(i)), 'hex') from generate_series(0, :n - 1) i;
-- A tree of n leaves keeps 2n - popcount(n) hashes, numbered densely from 0.
insert into audit_tlog_hashes (index, hash)
  select i, sha256(int8send(-i)) from generate_series(0, 2 * :n - length(replace((:n)::bit(64)::text, '0', '')) - 1) i;
update audit_tlog_head set size = :n, root = sha256('bench'::bytea);
insert into audit_tlog_checkpoints (size, root, note)
  values (:n, sha256('bench'::bytea), 'localhost/audit' || chr(10) || :n || chr(10) || encode(sha256('bench'::bytea), 'base64') || chr(10) || chr(10) || '— localhost/audit AAAAAA==' || chr(10));
vacuum analyze audit_tlog_entries, audit_tlog_hashes;
SQL
echo "  filled in $(( $(date +%s) - START )) s"

DATABASE_URL=$URL EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT RUST_LOG=warn EBB_STORAGE_DIR=$STORE "$BIN" serve >"$LOG" 2>&1 &
PID=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
LINE=$(python3 benches/tlog-proofs.py 127.0.0.1 "$PORT" "$N" "$SAMPLES" /healthz)
echo "$LINE" | sed 's/^/  client | /'
kv() { echo "$LINE" | tr ' ' '\n' | grep "^$1=" | cut -d= -f2; }
awk -v n="$N" -v t="$(kv tiles_per_proof)" -v c50="$(kv checkpoint_p50_us)" -v c99="$(kv checkpoint_p99_us)" -v p50="$(kv proof_p50_us)" \
    -v p99="$(kv proof_p99_us)" -v f50="$(kv floor_p50_us)" -v f99="$(kv floor_p99_us)" -v s="$SAMPLES" 'BEGIN {
  printf "\n%-52s %12s %12s %16s\n", "transparency log of " n " entries, " s " samples", "checkpoint", "proof (" t " tiles)", t " x GET /healthz";
  printf "%-52s %12.2f %12.2f %16.2f\n", "p50 (ms)", c50 / 1000, p50 / 1000, f50 / 1000;
  printf "%-52s %12.2f %12.2f %16.2f\n", "p99 (ms; goal <= 5)", c99 / 1000, p99 / 1000, f99 / 1000;
}'
