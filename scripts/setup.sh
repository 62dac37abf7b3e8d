#!/usr/bin/env bash
# Installs everything Ebb needs to build, run and test on a fresh Debian 12 machine (run as root,
# or as a user with sudo). Idempotent: a second run checks and changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen pinned in Cargo.toml / Cargo.lock

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_pkgs=()
for p in rustc-web cargo-web rust-web-src libstd-rust-web-dev rust-web-llvm lld-22 rustfmt-web rust-web-clippy \
         chromium postgresql postgresql-client wrk pkg-config curl ca-certificates gzip brotli time bc python3-aiosmtpd python3-cryptography fonts-noto-cjk; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
# Node.js may come from elsewhere (these machines ship Node 20 + npm 11); only add Debian's when absent.
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_pkgs[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_pkgs[@]}"
fi

# One compiler (Debian's 1.96, which matches the wasm32 std sources) for server and client.
if command -v rustup >/dev/null 2>&1; then
  rustup toolchain list | grep -q '^debian-1.96' || rustup toolchain link debian-1.96 /usr
fi
export RUSTUP_TOOLCHAIN=debian-1.96

if ! command -v wasm-bindgen >/dev/null 2>&1 || \
   [ "$(wasm-bindgen --version | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  echo "setup: installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (5-10 minutes once)"
  # Not --locked: its lockfile wants a webpki-roots version that crates.io no longer serves.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

if [ ! -x tools/node_modules/.bin/wasm-opt ] || [ ! -x tools/node_modules/.bin/esbuild ]; then
  echo "setup: installing binaryen (wasm-opt) and esbuild from tools/package-lock.json"
  (cd tools && npm ci --no-audit --no-fund >/dev/null)
fi

if [ -f end2end/package-lock.json ] && [ ! -d end2end/node_modules/playwright-core ]; then
  echo "setup: installing end2end npm packages"
  (cd end2end && npm ci --no-audit --no-fund >/dev/null)
fi
# The local S3 server (garage) for `make test` and `EBB_STORAGE=s3 make run`.
bash scripts/s3-local.sh install
echo "setup: ok"
