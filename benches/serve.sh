# Sourced by bench scripts: starts `$BIN serve` on 127.0.0.1:$PORT against database $URL with blobs
# in $WORK/blobs, logging to $LOG, and waits until it is ready. Sets PID (the caller's cleanup
# kills it). Expects fail() to be defined.
start_ebb() {
  mkdir -p "$WORK/blobs"
  DATABASE_URL=$URL EBB_STORAGE_DIR=$WORK/blobs EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT \
    EBB_PUBLIC_URL=http://localhost:$PORT LEPTOS_SITE_ROOT=$LEPTOS_SITE_ROOT RUST_LOG=warn "$BIN" serve >"$LOG" 2>&1 &
  PID=$!
  for _ in $(seq 1 150); do
    curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$PID" 2>/dev/null || { tail -n 20 "$LOG" >&2; fail "the server exited (log: $LOG)"; }
    sleep 0.2
  done
  fail "the server is not ready (log: $LOG)"
}
