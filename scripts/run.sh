#!/usr/bin/env bash
# `make run`: install what is missing, build (profile `fast-release`), migrate and serve on http://localhost:3000.
# With DATABASE_URL unset, a project-local PostgreSQL cluster is created and started; with
# EBB_STORAGE=s3 and EBB_S3_ENDPOINT unset, a project-local S3 server (garage) too.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
elapsed() { local s=$(( $(date +%s) - T0 )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
# Only what running needs: no test browser, and garage only for EBB_STORAGE=s3 without an endpoint.
bash scripts/setup.sh --run
. scripts/env.sh
if [ -z "${DATABASE_URL:-}" ]; then
  eval "$(bash scripts/pg-local.sh start)"
  echo "run: using the project-local PostgreSQL (.data/postgres)"
fi
export DATABASE_URL
# EBB_STORAGE=s3 with EBB_S3_ENDPOINT unset: a project-local garage in .data/garage (S3 API on
# 127.0.0.1:3900), left running like the PostgreSQL. EBB_S3_ENDPOINT= (set, empty) means AWS.
if [ "${EBB_STORAGE:-local}" = s3 ] && [ -z "${EBB_S3_ENDPOINT+set}" ]; then
  bash scripts/s3-local.sh start .data/garage 3900
  set -a; . .data/garage/env; set +a
  echo "run: using the project-local S3 server (garage, .data/garage)"
fi
# Shared files live outside the served folder; created here, never by Ebb itself.
export EBB_STORAGE_DIR=${EBB_STORAGE_DIR:-$PWD/.data/blobs}
mkdir -p "$EBB_STORAGE_DIR"
# The audit trail's signing key: a file of its own, outside the database and the store (Ebb
# creates it, owner-only, on the first start; a key kept in the database before is moved here).
export EBB_AUDIT_SIGNING_KEY_FILE=${EBB_AUDIT_SIGNING_KEY_FILE:-$PWD/.data/keys/audit-signing-key}
mkdir -p -m 700 "$(dirname "$EBB_AUDIT_SIGNING_KEY_FILE")"
# The client (wasm) and the server build side by side: each ends in a long single-threaded step
# (whole-program optimisation, linking) that leaves a core free for the other.
# The server's profile: `fast-release` (quicker to compile; see Cargo.toml) unless EBB_BUILD_PROFILE says.
PROFILE=${EBB_BUILD_PROFILE:-fast-release}
if [ -x "$CARGO_TARGET_DIR/$PROFILE/ebb" ]; then
  echo "run: [$(elapsed)] checking the client and server builds (seconds when nothing changed)"
else
  echo "run: [$(elapsed)] building the client and the server side by side (first run: about 17 minutes on 2 cores; cargo shows its progress)"
fi
CLIENT_LOG=$(mktemp "${TMPDIR:-/tmp}/ebb-client-build.XXXXXX")
bash scripts/build-client.sh >"$CLIENT_LOG" 2>&1 &
CLIENT_PID=$!
if ! cargo build --profile "$PROFILE" -p server --bin ebb; then
  kill "$CLIENT_PID" 2>/dev/null || true
  echo "run: the server did not build (above)" >&2; exit 1
fi
echo "run: [$(elapsed)] server built; waiting for the client"
if ! wait "$CLIENT_PID"; then
  cat "$CLIENT_LOG" >&2; echo "run: the client did not build (above)" >&2; exit 1
fi
cat "$CLIENT_LOG"; rm -f "$CLIENT_LOG"
echo "run: [$(elapsed)] Ebb on ${EBB_PUBLIC_URL:-http://localhost:3000} (Ctrl-C stops it)"
exec "$CARGO_TARGET_DIR/$PROFILE/ebb" serve
