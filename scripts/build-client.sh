#!/usr/bin/env bash
# Builds the hydrate client (wasm) and the stylesheet into $LEPTOS_SITE_ROOT/pkg.
#   scripts/build-client.sh            release: wasm-release profile + wasm-opt -Oz
#   scripts/build-client.sh --fast     same profile, no wasm-opt (quicker; for tests)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
OPT=1; [ "${1:-}" = "--fast" ] && OPT=0
FRONT=$CARGO_TARGET_DIR/front
PKG=$LEPTOS_SITE_ROOT/pkg
mkdir -p "$PKG"
# -Zbuild-std only here: Debian's rustc-web ships the wasm32 std as source. RUSTC_BOOTSTRAP lets
# the stable compiler accept -Z for this one build; never put build-std in .cargo/config.toml.
RUSTC_BOOTSTRAP=1 cargo build -q -p frontend --lib --target wasm32-unknown-unknown --profile wasm-release \
  -Zbuild-std=std,panic_abort --target-dir "$FRONT"
wasm-bindgen --target web --out-dir "$PKG" --out-name ebb \
  "$FRONT/wasm32-unknown-unknown/wasm-release/frontend.wasm"
if [ $OPT -eq 1 ]; then
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
    "$PKG/ebb_bg.wasm" -o "$PKG/ebb_bg.wasm"
fi
cp style/main.css "$PKG/ebb.css"
echo "client: $(stat -c %s "$PKG/ebb_bg.wasm") bytes wasm ($(gzip -9c "$PKG/ebb_bg.wasm" | wc -c) gzipped) in $PKG"
