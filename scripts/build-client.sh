#!/usr/bin/env bash
# Builds the hydrate client (wasm) and the stylesheet into $LEPTOS_SITE_ROOT/pkg/<hash>/, where
# <hash> is a hash of their contents (written to pkg/ASSETS; the server reads it at start-up), so
# the files can be cached for a year. Each file is also precompressed (.br, .gz).
#   scripts/build-client.sh            release: wasm-release profile + wasm-opt -Oz
#   scripts/build-client.sh --fast     wasm-test profile (no LTO), no wasm-opt (quicker; for tests)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
OPT=1; [ "${1:-}" = "--fast" ] && OPT=0
# --fast (the tests): profile wasm-test, no whole-program optimisation (Cargo.toml).
PROFILE=wasm-release; [ $OPT -eq 0 ] && PROFILE=wasm-test
# Best compression for what visitors download; quick levels for the tests' build.
BR_Q=11; GZ_Q=9; [ $OPT -eq 0 ] && { BR_Q=4; GZ_Q=6; }
FRONT=$CARGO_TARGET_DIR/front
PKG=$LEPTOS_SITE_ROOT/pkg
STAGE=$PKG/.staging
rm -rf "$STAGE"; mkdir -p "$STAGE"
# -Zbuild-std only here: Debian's rustc-web ships the wasm32 std as source. RUSTC_BOOTSTRAP lets
# the stable compiler accept -Z for this one build; never put build-std in .cargo/config.toml.
# --emit-relocs for the final link only (so std and the dependencies are not rebuilt): the
# splitter needs the relocations to cut the admin pages out into chunks.
# Size (the visitor's first visit downloads the main module): a panic stops the client without
# formatting a message (-Cpanic=immediate-abort: no panic machinery, no messages), `{:?}` writes
# nothing (-Zfmt-debug=none: the client never shows Debug output; its few log lines use Display)
# and no source locations are kept (-Zlocation-detail=none): about a third of the main module.
# The tests' client gets the same flags, so the suite runs the code visitors get.
RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none" \
  cargo rustc -q -p frontend --lib --target wasm32-unknown-unknown --profile "$PROFILE" \
  -Zbuild-std=std,panic_abort --target-dir "$FRONT" -- -C link-arg=--emit-relocs
# The splitter builds in the client's own target folder: `make run` builds the server beside the
# client, and a shared folder's lock would make the client wait for the whole server build.
cargo build -q -p wasm-split --release --target-dir "$FRONT"
# Main module + one module per group of lazy routes (app::admin_routes) and the chunks they share,
# the loader, and the manifest the server would read to preload a page's files.
"$FRONT/release/wasm-split" "$FRONT/wasm32-unknown-unknown/$PROFILE/frontend.wasm" \
  "$FRONT/frontend_split.wasm" "$STAGE" ebb >/dev/null
# The chunks import the main module's table, memory and functions through the lld exports.
bash scripts/wasm-bindgen.sh
wasm-bindgen --target web --keep-lld-exports --no-demangle --out-dir "$STAGE" --out-name ebb "$FRONT/frontend_split.wasm"
if [ $OPT -eq 1 ]; then
  # binaryen does not know rustc's label names (name subsection 3) and warns once per chunk; it
  # drops the name section anyway. Other output is shown, and a failure stops the build.
  for f in "$STAGE"/*.wasm; do
    if ! out=$(wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int "$f" -o "$f" 2>&1); then
      echo "$out" >&2; exit 1
    fi
    [ -z "$out" ] || grep -v '^warning: unknown name subsection with id 3 ' <<<"$out" >&2 || true
  done
fi
# The loader scripts minified (wasm-bindgen's glue and the chunk loader; both ES modules, whose
# exported names stay as they are), in the tests' build too.
# wasm-bindgen imports the chunk loader once per chunk under one key: the same module each time.
for f in "$STAGE"/*.js; do
  esbuild "$f" --minify --format=esm --log-level=warning --log-override:duplicate-object-key=silent --outfile="$f.min" && mv "$f.min" "$f"
done
cp style/main.css "$STAGE/ebb.css"
rm -f "$STAGE"/*.d.ts
# The folder's name is the hash of everything in it: a changed file is a new URL.
HASH=$(cd "$STAGE" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
find "$STAGE" -type f \( -name '*.js' -o -name '*.wasm' -o -name '*.css' \) -print0 |
  while IFS= read -r -d '' f; do brotli -q "$BR_Q" -kf "$f"; gzip "-$GZ_Q" -kfn "$f"; done
rm -rf "${PKG:?}/$HASH"
mv "$STAGE" "$PKG/$HASH"
echo "$HASH" > "$PKG/ASSETS.tmp" && mv "$PKG/ASSETS.tmp" "$PKG/ASSETS"
# Keep this build and the one before (pages already open may still ask for it).
for d in "$PKG"/*/; do
  d=${d%/}; n=${d##*/}
  [ "$n" = "$HASH" ] && continue
  [ -f "$PKG/.previous" ] && [ "$n" = "$(cat "$PKG/.previous")" ] && continue
  rm -rf "$d"
done
[ -f "$PKG/.current" ] && [ "$(cat "$PKG/.current")" != "$HASH" ] && cp "$PKG/.current" "$PKG/.previous"
echo "$HASH" > "$PKG/.current"
rm -f "$PKG"/ebb.js "$PKG"/ebb_bg.wasm "$PKG"/ebb.css "$PKG"/*.d.ts
W=$PKG/$HASH/ebb_bg.wasm
echo "client: $(stat -c %s "$W") bytes wasm ($(stat -c %s "$W.gz") gzip, $(stat -c %s "$W.br") brotli) in $PKG/$HASH"
