#!/usr/bin/env bash
# A local S3 server (garage 2.5.0, one node, no system service), for `make test` (a throwaway one)
# and for `EBB_STORAGE=s3 make run` (a persistent one in .data/garage).
#   scripts/s3-local.sh install               → cargo-installs garage 2.5.0 into ~/.cargo/bin if missing
#                                               (a debug build: quick to build, about 16 MB/s)
#   scripts/s3-local.sh start DIR [PORT_BASE] → starts the garage of DIR (created, configured and given
#                                               key `ebb` and bucket `ebb` on first use); writes DIR/env
#   scripts/s3-local.sh stop DIR              → stops it and waits until the process has exited
#   scripts/s3-local.sh env DIR               → prints DIR/env (EBB_S3_* lines, secret included)
# Ports: PORT_BASE (default 3900) is the S3 API, +1 garage's RPC, +3 its admin API; all on 127.0.0.1.
# EBB_GARAGE_PROFILE=release (set by `make bench`): the same version built with cargo's release
# profile into ~/.cache/ebb/garage-release (built once, kept), used by install and start alike, so
# the S3 benches measure Ebb and curl rather than a debug build of the server they both talk to.
set -euo pipefail
GARAGE_VERSION=2.5.0
GARAGE_PROFILE=${EBB_GARAGE_PROFILE:-debug}
case "$GARAGE_PROFILE" in
  debug) GARAGE_ROOT=$HOME/.cargo; PROFILE_ARGS=(--debug) ;;
  release) GARAGE_ROOT=$HOME/.cache/ebb/garage-release; PROFILE_ARGS=() ;;
  *) echo "s3-local: EBB_GARAGE_PROFILE must be debug or release, not '$GARAGE_PROFILE'" >&2; exit 2 ;;
esac
export PATH="$GARAGE_ROOT/bin:$HOME/.cargo/bin:$PATH"
START_TIMEOUT_SECS=${EBB_S3_LOCAL_START_TIMEOUT_SECS:-30}

die() { echo "s3-local: $*" >&2; exit 1; }

# Any garage of the version on PATH will do for tests; the benches want the release build itself.
have_garage() {
  { [ "$GARAGE_PROFILE" = debug ] || [ "$(command -v garage 2>/dev/null)" = "$GARAGE_ROOT/bin/garage" ]; } &&
    garage --version 2>/dev/null | grep -Eq "(^|[^0-9.])${GARAGE_VERSION//./\\.}([^0-9.]|$)"
}

random_hex() {
  if command -v openssl >/dev/null 2>&1; then openssl rand -hex 32
  else od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; echo; fi
}

# The pid of DIR's garage when it is running (a live, non-zombie garage process), else nothing.
running_pid() {
  local dir=$1 pid state
  [ -f "$dir/garage.pid" ] || return 0
  pid=$(cat "$dir/garage.pid" 2>/dev/null || true)
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  [ -r "/proc/$pid/stat" ] || return 0
  state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1 || true)
  [ -n "$state" ] && [ "$state" != Z ] || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "garage -c $dir/garage.toml server" || return 0
  echo "$pid"
}

g() { garage -c "$CONF" "$@"; }

# Writes DIR/env from key `ebb` (the secret goes only into this file, mode 600).
write_env() {
  local info key_id secret tmp
  info=$(g key info ebb --show-secret 2>/dev/null) || die "cannot read key ebb (garage key info)"
  key_id=$(awk -F': *' '/^Key ID:/ {print $2; exit}' <<<"$info" | tr -d '[:space:]')
  secret=$(awk -F': *' '/^Secret key:/ {print $2; exit}' <<<"$info" | tr -d '[:space:]')
  [[ "$key_id" =~ ^GK[0-9a-f]+$ ]] || die "unexpected output of 'garage key info': no key id"
  [[ "$secret" =~ ^[0-9a-f]+$ ]] || die "unexpected output of 'garage key info': no secret key"
  tmp=$(mktemp "$DIR/env.XXXXXX")
  chmod 600 "$tmp"
  cat >"$tmp" <<EOF
EBB_S3_ENDPOINT=http://127.0.0.1:$S3_PORT
EBB_S3_REGION=us-east-1
EBB_S3_BUCKET=ebb
EBB_S3_PATH_STYLE=true
EBB_S3_ACCESS_KEY_ID=$key_id
EBB_S3_SECRET_ACCESS_KEY=$secret
EOF
  mv "$tmp" "$DIR/env"
}

# The end of DIR/garage.log, without a panic's boilerplate and backtrace (its message is kept).
log_tail() {
  awk '/^Panics are internal errors/ { skip = 1 } !skip && !/^ +([0-9]+: | at |[a-zA-Z_<])/ && NF
       /^BACKTRACE:/ { skip = 0 }' "$DIR/garage.log" 2>/dev/null | tail -n 12 >&2 || true
}

# The port of `api_bind_addr`/`rpc_bind_addr` in section $1 ("" = top level) of the config.
conf_port() {
  awk -v sect="$1" -v key="$2" '
    /^\[/ { cur = $0; gsub(/[][ ]/, "", cur); next }
    cur == sect && $1 == key { v = $0; sub(/^[^"]*"[^"]*:/, "", v); sub(/".*/, "", v); print v; exit }
  ' "$CONF"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Waits until the node answers on RPC (garage status) and on the S3 port (any HTTP answer).
wait_ready() {
  local deadline=$((SECONDS + START_TIMEOUT_SECS))
  while :; do
    if [ -z "$(running_pid "$DIR")" ]; then
      echo "s3-local: garage exited while starting; the end of $DIR/garage.log:" >&2
      log_tail
      exit 1
    fi
    if g status >/dev/null 2>&1 &&
       [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$S3_PORT/" || true)" != 000 ]; then
      return 0
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "s3-local: garage did not answer within ${START_TIMEOUT_SECS} s; the end of $DIR/garage.log:" >&2
      log_tail
      stop_dir
      exit 1
    fi
    sleep 0.3
  done
}

stop_dir() {
  local pid i
  pid=$(running_pid "$DIR")
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 150); do   # up to 30 s for a clean shutdown
      [ -n "$(running_pid "$DIR")" ] || break
      sleep 0.2
    done
    if [ -n "$(running_pid "$DIR")" ]; then
      echo "s3-local: garage (pid $pid) still running after 30 s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      while [ -n "$(running_pid "$DIR")" ]; do sleep 0.2; done
    fi
  fi
  rm -f "$DIR/garage.pid"
}

cmd=${1:-}
case "$cmd" in
  install)
    if have_garage; then exit 0; fi
    if [ "$GARAGE_PROFILE" = release ]; then
      echo "s3-local: building garage $GARAGE_VERSION (release profile) into $GARAGE_ROOT (cargo install, about 15-20 minutes once)"
    else
      echo "s3-local: installing garage $GARAGE_VERSION into ~/.cargo/bin (cargo install, 5-8 minutes once)"
    fi
    # Its own target folder: the build is not mixed with Ebb's (nor does it wait on Ebb's lock).
    build_dir=$HOME/.cache/ebb/garage-$GARAGE_PROFILE-build
    CARGO_TARGET_DIR=$build_dir \
      RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-debian-1.96} cargo install garage --version "$GARAGE_VERSION" --locked \
      "${PROFILE_ARGS[@]}" --root "$GARAGE_ROOT" --no-default-features --features bundled-libs,sqlite,lmdb
    rm -rf "$build_dir"
    have_garage || die "garage $GARAGE_VERSION ($GARAGE_PROFILE) is still not at $GARAGE_ROOT/bin after cargo install"
    exit 0
    ;;
  start|stop|env)
    [ -n "${2:-}" ] || die "usage: $0 $cmd DIR$([ "$cmd" = start ] && echo ' [PORT_BASE]')"
    if [ "$cmd" = start ]; then mkdir -p "$2"; fi
    [ -d "$2" ] || die "no such directory: $2"
    DIR=$(cd "$2" && pwd -P)
    CONF=$DIR/garage.toml
    ;;
  *) echo "usage: $0 install | start DIR [PORT_BASE] | stop DIR | env DIR" >&2; exit 2 ;;
esac

case "$cmd" in
  env)
    [ -f "$DIR/env" ] || die "$DIR/env does not exist; run: $0 start $DIR"
    cat "$DIR/env"
    ;;
  stop)
    stop_dir
    ;;
  start)
    have_garage || die "garage $GARAGE_VERSION not found; run: bash scripts/s3-local.sh install"
    if [ ! -f "$CONF" ]; then
      PORT_BASE=${3:-3900}
      [[ "$PORT_BASE" =~ ^[0-9]+$ ]] || die "PORT_BASE must be a number: $PORT_BASE"
      S3_PORT=$PORT_BASE
      RPC_PORT=$((PORT_BASE + 1))
      ADMIN_PORT=$((PORT_BASE + 3))
      mkdir -p "$DIR/meta" "$DIR/data"
      tmp=$(mktemp "$DIR/garage.toml.XXXXXX")
      chmod 600 "$tmp"
      cat >"$tmp" <<EOF
# Written by scripts/s3-local.sh: a one-node garage for development and tests.
metadata_dir = "$DIR/meta"
data_dir = "$DIR/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$RPC_PORT"
rpc_public_addr = "127.0.0.1:$RPC_PORT"
rpc_secret = "$(random_hex)"

[s3_api]
# The default region, "garage", makes SigV4 requests signed for us-east-1 fail.
s3_region = "us-east-1"
api_bind_addr = "127.0.0.1:$S3_PORT"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:$ADMIN_PORT"
admin_token = "$(random_hex)"
EOF
      mv "$tmp" "$CONF"
    fi
    # The ports come from the configuration (PORT_BASE only matters on first use).
    S3_PORT=$(conf_port s3_api api_bind_addr)
    RPC_PORT=$(conf_port "" rpc_bind_addr)
    ADMIN_PORT=$(conf_port admin api_bind_addr)
    for port in "$S3_PORT" "$RPC_PORT" "$ADMIN_PORT"; do
      [[ "$port" =~ ^[0-9]+$ ]] || die "cannot read the ports from $CONF"
    done

    if [ -n "$(running_pid "$DIR")" ]; then
      [ -f "$DIR/env" ] || write_env
      exit 0
    fi

    for port in "$S3_PORT" "$RPC_PORT" "$ADMIN_PORT"; do
      ! port_in_use "$port" ||
        die "port $port on 127.0.0.1 is in use (another garage? scripts/s3-local.sh stop ITS_DIR)"
    done
    # Its own session: a Ctrl-C meant for `make run` must not reach it (like the local PostgreSQL).
    NO_COLOR=1 setsid garage -c "$CONF" server >>"$DIR/garage.log" 2>&1 </dev/null &
    echo $! >"$DIR/garage.pid"
    wait_ready

    # First use: one node with a role, key `ebb`, bucket `ebb`. Each step checks before it acts,
    # so an interrupted first start is completed by the next one.
    layout_version=$(g layout show 2>/dev/null | sed -n 's/^Current cluster layout version: *\([0-9]*\).*/\1/p')
    [ -n "$layout_version" ] || die "cannot read the layout version (garage layout show)"
    if [ "$layout_version" = 0 ]; then
      node_id=$(g node id -q 2>/dev/null | cut -d@ -f1)
      [ -n "$node_id" ] || die "cannot read the node id (garage node id -q)"
      g layout assign -z dc1 -c 1G "$node_id" >/dev/null
      g layout apply --version 1 >/dev/null
    fi
    g key info ebb >/dev/null 2>&1 || g key create ebb >/dev/null
    g bucket info ebb >/dev/null 2>&1 || g bucket create ebb >/dev/null
    g bucket allow --read --write --owner ebb --key ebb >/dev/null
    write_env
    ;;
esac
