#!/usr/bin/env bash
# Prints `export DATABASE_URL=...` naming a PostgreSQL whose role may create databases: the
# caller's DATABASE_URL, else the one on 127.0.0.1:5432 when it answers, else the project-local
# cluster (started on demand).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${DATABASE_URL:-}" ]; then
  echo "export DATABASE_URL='$DATABASE_URL'"
elif pg_isready -q -h 127.0.0.1 -p 5432 && psql -q "postgresql://postgres@127.0.0.1:5432/postgres" -c "select 1" >/dev/null 2>&1; then
  echo "export DATABASE_URL='postgresql://postgres@127.0.0.1:5432/postgres'"
else
  bash scripts/pg-local.sh start
fi
