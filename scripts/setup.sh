#!/usr/bin/env bash
# Installs what Ebb needs on a fresh Debian 12 machine (run as root, or as a user with sudo).
# Idempotent: a second run checks and changes nothing.
#   scripts/setup.sh           → everything: build, run, test, bench, dist (the test browser,
#                                Playwright, garage, cargo-deb, cargo-about, podman, nginx)
#   scripts/setup.sh --run     → only what `make run` needs: no test or release tools, and the
#                                local S3 server (garage) only when EBB_STORAGE=s3 with no endpoint
# Each step says what it does and roughly how long it takes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=all; [ "${1:-}" = "--run" ] && MODE=run
step() { echo "setup: $*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_pkgs=()
# Building and running: the compiler with the wasm32 std sources, the linker, PostgreSQL, brotli.
pkgs=(rustc-web cargo-web rust-web-src libstd-rust-web-dev rust-web-llvm lld-22 postgresql postgresql-client
      pkg-config curl ca-certificates gzip brotli)
# Testing and benchmarks: lints, the browser and its fonts, load generators, the SMTP test server.
[ "$MODE" = run ] || pkgs+=(rustfmt-web rust-web-clippy chromium wrk time bc python3-aiosmtpd python3-cryptography fonts-noto-cjk wget)
# The transparency log's independent check: the Go reference code (x/mod's sumdb/tlog and note).
[ "$MODE" = run ] || pkgs+=(golang-go golang-golang-x-mod-dev)
# Release artefacts and their tests: the container tool, dpkg's helpers, the TLS proxy.
[ "$MODE" = run ] || pkgs+=(podman dpkg-dev binutils nginx-light caddy openssl libnss3-tools)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
# Node.js may come from elsewhere (these machines ship Node 20 + npm 11); only add Debian's when absent.
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  step "installing Debian packages (1-3 minutes): ${need_pkgs[*]}"
  APT_LOG=$(mktemp "${TMPDIR:-/tmp}/ebb-apt.XXXXXX")
  { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_pkgs[@]}"; } >"$APT_LOG" 2>&1 ||
    { cat "$APT_LOG" >&2; step "apt-get failed (above)"; exit 1; }
  rm -f "$APT_LOG"
fi

# One compiler (Debian's 1.96, which matches the wasm32 std sources) for server and client.
if command -v rustup >/dev/null 2>&1; then
  rustup toolchain list | grep -q '^debian-1.96' || rustup toolchain link debian-1.96 /usr
fi
export RUSTUP_TOOLCHAIN=debian-1.96

# wasm-bindgen-cli: `make run` leaves it to the client's build, which installs it after compiling
# the client, while the server still compiles (scripts/wasm-bindgen.sh).
[ "$MODE" = run ] || bash scripts/wasm-bindgen.sh

if [ ! -x tools/node_modules/.bin/wasm-opt ] || [ ! -x tools/node_modules/.bin/esbuild ]; then
  step "installing binaryen (wasm-opt) and esbuild from tools/package-lock.json (under a minute)"
  (cd tools && npm ci --no-audit --no-fund >/dev/null)
fi

if [ "$MODE" != run ] && [ -f end2end/package-lock.json ] && [ ! -d end2end/node_modules/playwright-core ]; then
  step "installing the end-to-end tests' npm packages (under a minute)"
  (cd end2end && npm ci --no-audit --no-fund >/dev/null)
fi
# The local S3 server (garage): for `make test`, and for `EBB_STORAGE=s3 make run` without an
# endpoint of its own. A local-folder installation never uses it.
if [ "$MODE" != run ] || { [ "${EBB_STORAGE:-local}" = s3 ] && [ -z "${EBB_S3_ENDPOINT+set}" ]; }; then
  bash scripts/s3-local.sh install
fi
# The release tools (`make dist`), pinned.
if [ "$MODE" != run ]; then
  command -v cargo-deb >/dev/null 2>&1 && [ "$(cargo-deb --version | awk '{print $2}')" = 3.6.2 ] || {
    step "installing cargo-deb 3.6.2 (about 2 minutes, once)"; cargo install -q --locked cargo-deb --version 3.6.2; }
  command -v cargo-about >/dev/null 2>&1 && [ "$(cargo-about --version | awk '{print $2}')" = 0.8.4 ] || {
    step "installing cargo-about 0.8.4 (about 4 minutes, once)"; cargo install -q --locked cargo-about --version 0.8.4; }
fi
step "ok"
