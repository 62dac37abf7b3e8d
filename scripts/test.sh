#!/usr/bin/env bash
# `make test`: install what is missing, then run every layer: unit, database and HTTP tests
# (cargo test, real PostgreSQL), then Playwright end-to-end tests in Debian's Chromium against a
# freshly built server. Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
# The tests' client goes to its own site folder: a `make run` serving target/site from this
# checkout keeps its release client while the tests build theirs.
export LEPTOS_SITE_ROOT=$CARGO_TARGET_DIR/test-site

# Tests need a PostgreSQL role that may create databases (#[sqlx::test] makes one per test).
eval "$(bash scripts/test-db.sh)"
echo "test: database $(echo "$DATABASE_URL" | sed 's#//[^@/]*@#//#')"

echo "== format and lints (cargo fmt --check, cargo clippy -D warnings)"
cargo fmt --all --check
python3 scripts/check-layers.py
cargo clippy -q -p app -p server --all-targets -- -D warnings

echo "== unit, database and HTTP tests (cargo test)"
# SQLX_OFFLINE=true (scripts/env.sh): a query without .sqlx data fails this build.
cargo test -p app -p server --no-fail-fast

echo "== client build"
bash scripts/build-client.sh --fast

echo "== end-to-end tests (Playwright, Debian's Chromium)"
cargo build -q -p server --bin ebb
bash scripts/e2e.sh "$CARGO_TARGET_DIR/debug/ebb"
