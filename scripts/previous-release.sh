#!/usr/bin/env bash
# Builds the previous release's `ebb` (scripts/PREVIOUS_RELEASE: its tag and commit) once, for the
# upgrade test, and prints the binary's path. The source is taken with `git archive` from the
# commit (the tag when the clone has it) into the cargo target folder, so later runs reuse it.
#
# It builds in the same target folder as the tests, with the same features as `cargo test`
# resolves (the workspace with the failpoints feature; `--test metrics` makes cargo resolve the
# dev-dependencies' features too, as a test build does). So every dependency the two versions
# share is compiled once for both: only the previous release's own crates and the few
# dependencies whose versions moved are compiled for it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
read -r TAG COMMIT < <(grep -v '^#' scripts/PREVIOUS_RELEASE)
REF=$COMMIT
git rev-parse -q --verify "refs/tags/$TAG^{commit}" >/dev/null && REF=$TAG
[ "$(git rev-parse "$REF^{commit}")" = "$COMMIT" ] || { echo "previous-release: $TAG is not $COMMIT" >&2; exit 1; }
BASE=$CARGO_TARGET_DIR/previous/$TAG
BIN=$BASE/ebb
if [ ! -x "$BIN" ] || [ "$(cat "$BASE/COMMIT" 2>/dev/null)" != "$COMMIT" ]; then
  echo "previous-release: building Ebb $TAG ($COMMIT) for the upgrade test (once)" >&2
  start=$SECONDS
  rm -rf "$BASE"; mkdir -p "$BASE/src"
  git archive "$COMMIT" | tar -x -C "$BASE/src"
  (cd "$BASE/src" && SQLX_OFFLINE_DIR="$BASE/src/.sqlx" cargo build -q --workspace --exclude frontend --exclude wasm-split \
    --features server/failpoints --bin ebb --test metrics --target-dir "$CARGO_TARGET_DIR")
  cp "$CARGO_TARGET_DIR/debug/ebb" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
  # The shared folder's debug/ebb is now the previous release's: remove it, so that nothing runs
  # it by mistake; the next cargo build or test of this checkout puts its own back.
  rm -f "$CARGO_TARGET_DIR/debug/ebb"
  echo "$COMMIT" >"$BASE/COMMIT"
  echo "previous-release: built in $((SECONDS - start)) s" >&2
fi
echo "$BIN"
