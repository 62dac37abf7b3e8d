# Sourced by the other scripts: one compiler (Debian's 1.96, whose sources build the wasm32 std),
# offline sqlx data, and the project's tools on PATH.
export RUSTUP_TOOLCHAIN=debian-1.96
export SQLX_OFFLINE=true
# One folder of offline query data for every crate of the workspace.
export SQLX_OFFLINE_DIR="$PWD/.sqlx"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
export PATH="$PWD/tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export LEPTOS_SITE_ROOT=${LEPTOS_SITE_ROOT:-$PWD/target/site}
