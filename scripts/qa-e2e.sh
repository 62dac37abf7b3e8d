#!/usr/bin/env bash
# `make e2e`: the Playwright suite on its own, for QA.
#   Without BASE_URL: builds Ebb (debug, with the crash-test failpoints, as `make test` does),
#   starts it on a fresh database and a fresh storage folder on port 3100, runs every spec.
#   With BASE_URL (a running Ebb): runs the specs that need no access to the server's database or
#   files; E2E_INVITE_CMD must print an invite link there (it gets `--name NAME` appended).
# Arguments go to Playwright. The HTML report lands in end2end/playwright-report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
if [ -n "${BASE_URL:-}" ]; then
  : "${E2E_INVITE_CMD:?with BASE_URL, E2E_INVITE_CMD must be a command printing an invite link on that server}"
  cd end2end
  [ -d node_modules/@playwright/test ] || npm ci --no-audit --no-fund
  unset E2E_DATABASE_URL EBB_BIN
  echo "e2e: against $BASE_URL (tests tagged @server left out)"
  exec npx playwright test "$@"
fi
export LEPTOS_SITE_ROOT=$CARGO_TARGET_DIR/test-site
eval "$(bash scripts/test-db.sh)"
bash scripts/build-client.sh --fast
cargo build -q -p server --bin ebb --features server/failpoints
bash scripts/e2e.sh "$CARGO_TARGET_DIR/debug/ebb" "$@"
