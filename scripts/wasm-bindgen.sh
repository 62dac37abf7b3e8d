#!/usr/bin/env bash
# Installs wasm-bindgen-cli (the client's JS glue) unless the right version is on PATH. Called by
# setup.sh (`make test`) and by build-client.sh just before it needs it: on a first `make run` it
# compiles while the server does, rather than before either starts.
set -euo pipefail
WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen pinned in Cargo.toml / Cargo.lock
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v wasm-bindgen >/dev/null 2>&1 || \
   [ "$(wasm-bindgen --version | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  echo "setup: installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2 minutes, once)" >&2
  # Not --locked: its lockfile wants a webpki-roots version that crates.io no longer serves.
  # --debug: it compiles in half the time, and still rewrites the client in about a second.
  # --force: cargo may list it as installed while its binary is gone (this runs only then, or for
  # another version).
  cargo install -q --force wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --debug
fi
