#!/usr/bin/env bash
# Starts the given ebb binary on a fresh database and port 3100, runs the Playwright suite, stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
BIN=$(readlink -f "${1:?usage: e2e.sh path/to/ebb}")
: "${DATABASE_URL:?DATABASE_URL must name a database whose role may create databases}"
PORT=${E2E_PORT:-3100}
DB=ebb_e2e
E2E_DATABASE_URL=$(bash scripts/fresh-db.sh $DB)
# A test database needs no durability. Waiting for the WAL to reach the disk made every write wait
# 30 s once in CI (fdatasync behind the write-back of a just-finished build); a commit that
# returns before its WAL is flushed cannot stall on the disk.
psql -q "$E2E_DATABASE_URL" -c "alter database $DB set synchronous_commit = off"
sync
LOG=$CARGO_TARGET_DIR/e2e-server.log
STORAGE=$(mktemp -d)
# Every test comes from one address: high contact and sign-in limits keep tests independent
# (the limits themselves are covered by the HTTP tests).
# The proof of work at a fifth of the default: the same solver, quicker while two browsers share two cores.
DATABASE_URL=$E2E_DATABASE_URL EBB_STORAGE_DIR=$STORAGE EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT EBB_PUBLIC_URL=http://localhost:$PORT \
  EBB_CONTACT_RATE_LIMIT=10000 EBB_AUTH_RATE_LIMIT=10000 EBB_SHARE_MAX_BYTES=8388608 EBB_SPAM_POW_DIFFICULTY=100000 RUST_LOG=${RUST_LOG:-info} "$BIN" serve >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$STORAGE"' EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  kill -0 $PID 2>/dev/null || { echo "e2e: server exited; log:"; cat "$LOG"; exit 1; }
  sleep 0.2
done
cd end2end
[ -d node_modules/@playwright/test ] || npm ci --no-audit --no-fund
BASE_URL=http://localhost:$PORT EBB_BIN=$BIN E2E_SERVER_LOG=$LOG E2E_DATABASE_URL=$E2E_DATABASE_URL E2E_STORAGE_DIR=$STORAGE \
  EBB_PUBLIC_URL=http://localhost:$PORT npx playwright test "${@:2}" || {
    echo "e2e: failed; server log: $LOG; its warnings and errors:"
    grep -E 'WARN|ERROR' "$LOG" | tail -n 40 || true
    exit 1
  }
