#!/usr/bin/env bash
# `make test`: install what is missing, then run every layer: unit, database and HTTP tests
# (cargo test, real PostgreSQL), then Playwright end-to-end tests in Debian's Chromium against a
# freshly built server. Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh

# Tests need a PostgreSQL role that may create databases (#[sqlx::test] makes one per test).
if [ -z "${DATABASE_URL:-}" ]; then
  if pg_isready -q -h 127.0.0.1 -p 5432 && psql -q "postgresql://postgres@127.0.0.1:5432/postgres" -c "select 1" >/dev/null 2>&1; then
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
  else
    eval "$(bash scripts/pg-local.sh start)"
  fi
fi
export DATABASE_URL
echo "test: database $(echo "$DATABASE_URL" | sed 's#//[^@/]*@#//#')"

echo "== unit, database and HTTP tests (cargo test)"
# SQLX_OFFLINE=true (scripts/env.sh): a query without .sqlx data fails this build.
cargo test -p app -p server --no-fail-fast

echo "== client build"
bash scripts/build-client.sh --fast

echo "== end-to-end tests (Playwright, Debian's Chromium)"
cargo build -q -p server --bin ebb
bash scripts/e2e.sh "$CARGO_TARGET_DIR/debug/ebb"
