#!/usr/bin/env bash
# Regenerates .sqlx/ (the offline query data that lets `query!` compile without a database).
# Run after changing a query or a migration. Needs a PostgreSQL reachable at PREPARE_ADMIN_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
ADMIN_URL=${PREPARE_ADMIN_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
DB=ebb_sqlx_prepare
psql -q "$ADMIN_URL" -c "drop database if exists $DB with (force)" -c "create database $DB"
URL="${ADMIN_URL%/*}/$DB"
for f in migrations/*.sql; do psql -q -v ON_ERROR_STOP=1 "$URL" -f "$f"; done
rm -rf .sqlx && mkdir -p .sqlx
# Touch the crates that hold queries so the macros run again and write their data.
touch app/src/lib.rs app/kernel/src/lib.rs app/domains/*/src/lib.rs server/src/lib.rs
SQLX_OFFLINE=false SQLX_OFFLINE_DIR="$PWD/.sqlx" DATABASE_URL="$URL" \
  cargo check -q -p server --all-targets
echo "sqlx-prepare: $(ls .sqlx | wc -l) queries in .sqlx/"
