#!/usr/bin/env bash
# One-time shares:
#   download of a 1 GiB share through Ebb (token → claim → stream): MB/s and the server's peak RSS,
#   beside Debian's nginx serving the same file from the same disk, in the same run;
#   the GC query's time with 1,000,000 purged shares (and 5 live ones), beside the same query
#   with the partial index dropped (what the index saves).
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_PORT:-3200}
NGINX_PORT=${BENCH_NGINX_PORT:-3201}
SIZE_MB=${BENCH_SHARE_MB:-1024}
ROUNDS=${BENCH_SHARE_ROUNDS:-3}
BIN=$CARGO_TARGET_DIR/release/ebb

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "bench: installing Debian's nginx (baseline only; its own service is not started)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  # policy-rc.d keeps the package from starting a system nginx on port 80.
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null; $SUDO chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nginx-light >/dev/null 2>&1 || {
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nginx-light >/dev/null
  }
  $SUDO rm -f /usr/sbin/policy-rc.d
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

URL=$(bash scripts/fresh-db.sh ebb_bench_shares)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-shares.XXXXXX")
STORE=$WORK/blobs; WWW=$WORK/www; mkdir -p "$STORE/shares" "$WWW"
cleanup() { [ -n "${EBB_PID:-}" ] && kill "$EBB_PID" 2>/dev/null; [ -n "${NGINX_PID:-}" ] && kill "$NGINX_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

echo "bench: writing a ${SIZE_MB} MiB file"
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom > "$WWW/file.bin"
EXPECTED=$(stat -c %s "$WWW/file.bin")

# nginx: a minimal static server (sendfile on, as Debian ships it), foreground, unprivileged port.
cat > "$WORK/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $WORK/nginx.pid; error_log $WORK/nginx-error.log;
events { worker_connections 64; }
http { access_log off; sendfile on; tcp_nopush on; client_body_temp_path $WORK;
  proxy_temp_path $WORK; fastcgi_temp_path $WORK; uwsgi_temp_path $WORK; scgi_temp_path $WORK;
  server { listen 127.0.0.1:$NGINX_PORT; root $WWW; } }
CONF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" & NGINX_PID=$!

DATABASE_URL=$URL EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT RUST_LOG=warn EBB_STORAGE_DIR=$STORE "$BIN" serve >"$CARGO_TARGET_DIR/bench-shares.log" 2>&1 &
EBB_PID=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
for _ in $(seq 1 50); do curl -fsS -o /dev/null "http://127.0.0.1:$NGINX_PORT/file.bin" -r 0-0 2>/dev/null && break; sleep 0.1; done
IDLE_RSS=$(awk '/VmRSS/ {print $2}' /proc/$EBB_PID/status)

# A share per download (each is used up): the same bytes, hard-linked into the store.
new_share() { # prints the token
  local token key; token=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-43)
  key=$(cat /proc/sys/kernel/random/uuid | tr -d '-')
  ln "$WWW/file.bin" "$STORE/shares/$key"
  psql -q "$URL" -c "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
    values (sha256(convert_to('$token', 'UTF8')), 'shares/$key', 'file.bin', $EXPECTED, 'application/octet-stream', now() + interval '1 hour')"
  echo "$token"
}

cat /dev/null > "$WORK/ebb.times"; cat /dev/null > "$WORK/nginx.times"
echo "bench: $ROUNDS downloads each, alternating (curl, output discarded)"
for i in $(seq 1 "$ROUNDS"); do
  token=$(new_share)
  curl -fsS -X POST -o /dev/null -w '%{size_download} %{time_total}\n' "http://127.0.0.1:$PORT/s/$token" >> "$WORK/ebb.times"
  curl -fsS -o /dev/null -w '%{size_download} %{time_total}\n' "http://127.0.0.1:$NGINX_PORT/file.bin" >> "$WORK/nginx.times"
done
PEAK_RSS=$(awk '/VmHWM/ {print $2}' /proc/$EBB_PID/status)
NGINX_WORKER=$(pgrep -P "$NGINX_PID" | head -n 1)
NGINX_RSS=$(awk '/VmHWM/ {print $2}' /proc/"$NGINX_WORKER"/status 2>/dev/null || echo 0)
awk -v n="$ROUNDS" -v expected="$EXPECTED" -v idle="$IDLE_RSS" -v peak="$PEAK_RSS" -v nrss="$NGINX_RSS" -v mb="$SIZE_MB" '
  FNR == 1 { f++ }
  { if ($1 != expected) { bad = 1 } if (f == 1) { et += $2; if (!eb || $2 < eb) eb = $2 } else { nt += $2; if (!nb || $2 < nb) nb = $2 } }
  END {
    if (bad) { print "bench: a download was incomplete"; exit 1 }
    printf "\n%-44s %16s %16s\n", "download of a " mb " MiB share", "Ebb", "nginx (static)";
    printf "%-44s %16.0f %16.0f\n", "MB/s, mean of " n, n * expected / 1e6 / et, n * expected / 1e6 / nt;
    printf "%-44s %16.0f %16.0f\n", "MB/s, best", expected / 1e6 / eb, expected / 1e6 / nb;
    printf "%-44s %16.1f %16.1f\n", "peak RSS (MB; Ebb idle " sprintf("%.1f", idle / 1024) ")", peak / 1024, nrss / 1024;
  }' "$WORK/ebb.times" "$WORK/nginx.times"
kill $EBB_PID; wait $EBB_PID 2>/dev/null || true; EBB_PID=

echo
echo "bench: GC query with 1,000,000 purged shares and 5 live ones"
psql -q "$URL" -c "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, status, expires_at, consumed_at, purged_at, created_at)
  select sha256(int8send(g)), 'purged' || g, 'f.bin', 1, 'application/octet-stream', 'purged',
         now() - interval '30 days', now() - interval '29 days', now() - interval '29 days', now() - interval '31 days'
  from generate_series(1, 1000000) g" \
  -c "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
  select sha256(int8send(-g)), 'live' || g, 'f.bin', 1, 'application/octet-stream', now() + interval '1 day' from generate_series(1, 5) g" \
  -c "vacuum analyze shares"
# The GC's own query (app/src/shares/lifecycle.rs select_purgeable), limit 5, grace 15 min.
GC_SQL="select id, blob_key from shares where status <> 'purged' and (next_purge_attempt_at is null or next_purge_attempt_at <= now())
  and ((status = 'consumed' and consumed_at <= now() - make_interval(secs => 900)) or (status <> 'consumed' and expires_at <= now()))
  order by next_purge_attempt_at nulls first, id limit 5"
cat > "$WORK/gc.sql" <<SQL
$GC_SQL;
SQL
gc_time() { pgbench -n -c 1 -T 5 -f "$WORK/gc.sql" "$URL" 2>&1 | sed -nE 's/^latency average = ([0-9.]+) ms/\1/p'; }
PLAN=$(psql -tAq "$URL" -c "explain $GC_SQL" | head -n 3 | tr '\n' ' ')
WITH=$(gc_time)
psql -q "$URL" -c "drop index shares_purgeable_idx"
WITHOUT=$(gc_time)
awk -v w="$WITH" -v wo="$WITHOUT" 'BEGIN {
  printf "%-44s %16s %16s\n", "GC select (limit 5), 1,000,005 rows", "partial index", "index dropped";
  printf "%-44s %16.3f %16.3f\n", "mean latency (ms, pgbench 5 s)", w, wo; }'
echo "  plan with the index: $PLAN"
