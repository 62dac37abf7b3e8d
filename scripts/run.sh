#!/usr/bin/env bash
# `make run`: install what is missing, build (release), migrate and serve on http://localhost:3000.
# With DATABASE_URL unset, a project-local PostgreSQL cluster is created and started.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
if [ -z "${DATABASE_URL:-}" ]; then
  eval "$(bash scripts/pg-local.sh start)"
  echo "run: using the project-local PostgreSQL (.data/postgres)"
fi
export DATABASE_URL
# Shared files live outside the served folder; created here, never by Ebb itself.
export EBB_STORAGE_DIR=${EBB_STORAGE_DIR:-$PWD/.data/blobs}
mkdir -p "$EBB_STORAGE_DIR"
bash scripts/build-client.sh
cargo build -q --release -p server --bin ebb
echo "run: Ebb on ${EBB_PUBLIC_URL:-http://localhost:3000} (Ctrl-C stops it)"
exec "$CARGO_TARGET_DIR/release/ebb" serve
