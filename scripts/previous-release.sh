#!/usr/bin/env bash
# Builds the previous release's `ebb` (scripts/PREVIOUS_RELEASE: its tag and commit) once, for the
# upgrade test, and prints the binary's path. The source is taken with `git archive` from the
# commit (the tag when the clone has it) into the cargo target folder, so later runs reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
read -r TAG COMMIT < <(grep -v '^#' scripts/PREVIOUS_RELEASE)
REF=$COMMIT
git rev-parse -q --verify "refs/tags/$TAG^{commit}" >/dev/null && REF=$TAG
[ "$(git rev-parse "$REF^{commit}")" = "$COMMIT" ] || { echo "previous-release: $TAG is not $COMMIT" >&2; exit 1; }
BASE=$CARGO_TARGET_DIR/previous/$TAG
BIN=$BASE/target/debug/ebb
if [ ! -x "$BIN" ] || [ "$(cat "$BASE/COMMIT" 2>/dev/null)" != "$COMMIT" ]; then
  echo "previous-release: building Ebb $TAG ($COMMIT) for the upgrade test (once; about 8 minutes)" >&2
  rm -rf "$BASE/src"; mkdir -p "$BASE/src"
  git archive "$COMMIT" | tar -x -C "$BASE/src"
  (cd "$BASE/src" && SQLX_OFFLINE_DIR="$BASE/src/.sqlx" cargo build -q -p server --bin ebb --target-dir "$BASE/target")
  echo "$COMMIT" >"$BASE/COMMIT"
fi
echo "$BIN"
