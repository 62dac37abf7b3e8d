#!/usr/bin/env bash
# How long the server binary takes to rebuild after a one-line change in a domain's UI (issue 30),
# beside the same change in an earlier commit (BASE, default f99bfa3: one app crate before the
# split), same machine, same run, same target folder for the dependencies. Two rounds each.
#   bash benches/rebuild.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
BASE=${1:-f99bfa3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-rebuild.XXXXXX")
trap 'git worktree remove --force "$WORK/base" 2>/dev/null; git worktree remove --force "$WORK/head" 2>/dev/null; rm -rf "$WORK"' EXIT
git worktree add -q --detach "$WORK/base" "$BASE"
git worktree add -q --detach "$WORK/head" HEAD
ui_of() { if [ -f "$1/app/domains/inbox/src/ui.rs" ]; then echo app/domains/inbox/src/ui.rs; else echo app/src/inbox/ui.rs; fi; }
measure() { # tree label
  local dir=$1 file; file=$(ui_of "$dir")
  (cd "$dir" && SQLX_OFFLINE_DIR=$dir/.sqlx cargo build -q -p server --bin ebb)
  sed -i '0,/data-testid="inquiry-row"/s//data-testid="inquiry-row-probe"/' "$dir/$file"
  local t0 t1; t0=$(date +%s.%N)
  (cd "$dir" && SQLX_OFFLINE_DIR=$dir/.sqlx cargo build -q -p server --bin ebb)
  t1=$(date +%s.%N)
  git -C "$dir" checkout -q -- "$file"
  printf '  %-6s %s: one attribute in %s -> ebb rebuilt in %.1f s\n' "$2" "$(git -C "$dir" rev-parse --short HEAD)" "$file" "$(echo "$t1 - $t0" | bc)"
}
echo "bench: rebuild after a one-line UI change (debug server binary)"
for _ in 1 2; do measure "$WORK/base" base; measure "$WORK/head" head; done
