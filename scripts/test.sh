#!/usr/bin/env bash
# `make test`: install what is missing, then run every layer: unit, database and HTTP tests
# (cargo test, real PostgreSQL; the upgrade test against the previous release's binary), then
# Playwright end-to-end tests in Debian's Chromium against a freshly built server, the same
# behind nginx over https, and the release artefacts (tarball, .deb, image) of that build. S3
# tests run against a throwaway local garage (scripts/s3-local.sh).
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each layer's heading says how long `make test` has been running, so a slow layer shows.
section() { echo "== $1 [$((SECONDS / 60)) min $((SECONDS % 60)) s]"; }
bash scripts/setup.sh
. scripts/env.sh
# The tests' client goes to its own site folder: a `make run` serving target/site from this
# checkout keeps its release client while the tests build theirs.
export LEPTOS_SITE_ROOT=$CARGO_TARGET_DIR/test-site

# Tests need a PostgreSQL role that may create databases (#[sqlx::test] makes one per test).
eval "$(bash scripts/test-db.sh)"
echo "test: database $(echo "$DATABASE_URL" | sed 's#//[^@/]*@#//#')"

# S3 tests get a throwaway garage (its own temp folder, ports 3910/3911/3913, so a `make run`
# garage on 3900 is left alone); stopped and removed on exit, failure or Ctrl-C.
S3_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ebb-test-s3.XXXXXX")
stop_s3() { bash scripts/s3-local.sh stop "$S3_DIR" || true; rm -rf "$S3_DIR"; }
trap stop_s3 EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
bash scripts/s3-local.sh start "$S3_DIR" 3910
while IFS='=' read -r name value; do
  case $name in
    EBB_S3_ENDPOINT|EBB_S3_REGION|EBB_S3_BUCKET|EBB_S3_ACCESS_KEY_ID|EBB_S3_SECRET_ACCESS_KEY)
      export "EBB_TEST_${name#EBB_}=$value" ;;
  esac
done <"$S3_DIR/env"
echo "test: S3 (garage 2.5.0) on $EBB_TEST_S3_ENDPOINT"

section "format and lints (cargo fmt --check, cargo clippy -D warnings, docs links)"
cargo fmt --all --check
python3 scripts/check-cycles.py
python3 scripts/check-cycles.py --functions --max 80
# The README and the docs/ book: no dead link, no stale path.
python3 scripts/check-docs.py
# Each domain names only its own tables (docs/developer.md, "Table owners").
python3 scripts/check-tables.py --self-test
python3 scripts/check-tables.py
# Every server-side crate of the workspace (the browser's entry point and the splitter aside:
# the client is built below, on its own).
SERVER_CRATES=(--workspace --exclude frontend --exclude wasm-split)
cargo clippy -q "${SERVER_CRATES[@]}" --all-targets --features server/failpoints -- -D warnings

section "the previous release (for the upgrade test)"
EBB_PREVIOUS_BIN=$(bash scripts/previous-release.sh)
export EBB_PREVIOUS_BIN

section "unit, database and HTTP tests (cargo test)"
# SQLX_OFFLINE=true (scripts/env.sh): a query without .sqlx data fails this build.
# The failpoints feature lets the crash tests pause a real `ebb` at a chosen point and kill it;
# release builds (make run) leave it off, and the points compile to nothing.
# Snapshots (insta) are compared, never written: a changed format fails until its .snap is
# reviewed and committed (INSTA_UPDATE=always once, locally).
INSTA_UPDATE=no cargo test "${SERVER_CRATES[@]}" --features server/failpoints --no-fail-fast

section "client build"
bash scripts/build-client.sh --fast

section "end-to-end tests (Playwright, Debian's Chromium)"
# The `ebb` that `cargo test` built above for the HTTP tests (with their features): building it
# again with `cargo build` would resolve the features differently and recompile the workspace.
test -x "$CARGO_TARGET_DIR/debug/ebb"
bash scripts/e2e.sh "$CARGO_TARGET_DIR/debug/ebb"

section "behind nginx, then Caddy, over https, two instances (Playwright)"
bash scripts/proxy-e2e.sh nginx "$CARGO_TARGET_DIR/debug/ebb"
# The 1 GiB round trip once (behind nginx) is enough: Caddy streams the same way.
bash scripts/proxy-e2e.sh caddy "$CARGO_TARGET_DIR/debug/ebb" --grep-invert "1 GiB"

section "release artefacts: tarball, Debian package, container image (of the tests' build)"
EBB_DIST_DIRTY=1 EBB_DIST_BIN="$CARGO_TARGET_DIR/debug/ebb" EBB_DIST_SITE="$LEPTOS_SITE_ROOT" bash scripts/dist.sh
bash scripts/dist-test.sh
bash scripts/deb-chroot-test.sh
