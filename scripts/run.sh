#!/usr/bin/env bash
# `make run`: install what is missing, build (release), migrate and serve on http://localhost:3000.
# With DATABASE_URL unset, a project-local PostgreSQL cluster is created and started; with
# EBB_STORAGE=s3 and EBB_S3_ENDPOINT unset, a project-local S3 server (garage) too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
if [ -z "${DATABASE_URL:-}" ]; then
  eval "$(bash scripts/pg-local.sh start)"
  echo "run: using the project-local PostgreSQL (.data/postgres)"
fi
export DATABASE_URL
# EBB_STORAGE=s3 with EBB_S3_ENDPOINT unset: a project-local garage in .data/garage (S3 API on
# 127.0.0.1:3900), left running like the PostgreSQL. EBB_S3_ENDPOINT= (set, empty) means AWS.
if [ "${EBB_STORAGE:-local}" = s3 ] && [ -z "${EBB_S3_ENDPOINT+set}" ]; then
  bash scripts/s3-local.sh start .data/garage 3900
  set -a; . .data/garage/env; set +a
  echo "run: using the project-local S3 server (garage, .data/garage)"
fi
# Shared files live outside the served folder; created here, never by Ebb itself.
export EBB_STORAGE_DIR=${EBB_STORAGE_DIR:-$PWD/.data/blobs}
mkdir -p "$EBB_STORAGE_DIR"
bash scripts/build-client.sh
cargo build -q --release -p server --bin ebb
echo "run: Ebb on ${EBB_PUBLIC_URL:-http://localhost:3000} (Ctrl-C stops it)"
exec "$CARGO_TARGET_DIR/release/ebb" serve
