#!/usr/bin/env bash
# File requests and resumed downloads (issue 33), each beside a baseline in the same run:
#   upload of a file through a file request (POST /r/{token}, multipart, streamed), on the local
#   backend beside curl PUT to nginx's WebDAV writing to the same disk, and on S3 (a
#   throwaway garage) beside curl's own SigV4 PUT to the same garage; Ebb's peak RSS above idle;
#   a download broken at half and resumed with its receipt (curl -C -), beside Debian's nginx
#   serving the same range of the same file from the same disk.
# Goals: upload ≥ 0.7 × the baseline, resumed download ≥ 0.8 × nginx, peak RSS flat (≤ 64 MiB
# above idle). Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_PORT:-3200}
NGINX_PORT=${BENCH_NGINX_PORT:-3201}
S3_PORT_BASE=${BENCH_S3_PORT_BASE:-3940}
SIZE_MB=${BENCH_REQUEST_MB:-1024}
ROUNDS=${BENCH_REQUEST_ROUNDS:-2}
BIN=$CARGO_TARGET_DIR/release/ebb
LOG=$CARGO_TARGET_DIR/bench-file-requests.log

bash scripts/s3-local.sh install
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "bench: nginx is missing (benches/shares.sh installs it)"; exit 1; }
URL=$(bash scripts/fresh-db.sh ebb_bench_requests)
DATABASE_URL=$URL "$BIN" migrate >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-requests.XXXXXX")
GARAGE=$WORK/garage; STORE=$WORK/blobs; WWW=$WORK/www; SINK=$WORK/sink
mkdir -p "$STORE/shares" "$WWW" "$SINK"
: > "$LOG"
cleanup() {
  [ -n "${EBB_PID:-}" ] && kill "$EBB_PID" 2>/dev/null; [ -n "${NGINX_PID:-}" ] && kill "$NGINX_PID" 2>/dev/null; wait 2>/dev/null
  bash scripts/s3-local.sh stop "$GARAGE" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "bench: $*" >&2; tail -n 20 "$LOG" >&2 2>/dev/null || true; exit 1; }

echo "bench: writing a ${SIZE_MB} MiB file"
FILE=$WWW/file.bin
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom > "$FILE"
EXPECTED=$(stat -c %s "$FILE")
LIMIT=$(( SIZE_MB * 1048576 > 4294967296 ? SIZE_MB * 1048576 : 4294967296 ))

start_ebb() { # start_ebb [ENV=VALUE…]: a fresh process, so VmHWM at the end is its peak
  env DATABASE_URL="$URL" EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT RUST_LOG=warn EBB_SHARE_MAX_BYTES=$LIMIT EBB_STORAGE_DIR="$STORE" "$@" "$BIN" serve >>"$LOG" 2>&1 &
  EBB_PID=$!
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 || fail "Ebb did not become ready"
  sleep 1
  IDLE_RSS=$(awk '/VmRSS/ {print $2}' /proc/$EBB_PID/status)
}
stop_ebb() { PEAK_RSS=$(awk '/VmHWM/ {print $2}' /proc/$EBB_PID/status); kill "$EBB_PID"; wait "$EBB_PID" 2>/dev/null || true; EBB_PID=; }
new_token() { head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-43; }
new_request() { # → a token of an open file request taking the whole file
  local token; token=$(new_token)
  psql -q "$URL" -c "insert into file_requests (token_hash, max_bytes, expires_at)
    values (sha256(convert_to('$token', 'UTF8')), $LIMIT, now() + interval '1 hour')"
  echo "$token"
}
ebb_upload() { # → "bytes seconds"
  local token out; token=$(new_request)
  out=$(curl -sS -H 'accept: application/json' -F "file=@$FILE;type=application/octet-stream" -o "$WORK/up.json" \
    -w '%{http_code} %{size_upload} %{time_total}' "http://127.0.0.1:$PORT/r/$token") || fail "the upload through Ebb failed"
  [ "${out%% *}" = 201 ] || fail "the upload answered ${out%% *}: $(cat "$WORK/up.json")"
  # The multipart framing is not the file: count the file's bytes.
  echo "$EXPECTED ${out##* }"
}
ratio_table() { # ratio_table TITLE BASELINE GOAL EBB_TIMES BASE_TIMES IDLE PEAK
  awk -v title="$1" -v base="$2" -v goal="$3" -v n="$ROUNDS" -v expected="$EXPECTED" -v idle="$6" -v peak="$7" '
    FNR == 1 { f++ }
    { bytes = $1; if (f == 1) { et += $2; eb += bytes } else { bt += $2; bb += bytes } }
    END {
      e = eb / 1e6 / et; b = bb / 1e6 / bt; above = (peak - idle) / 1024;
      printf "\n%-46s %12s %26s\n", title, "Ebb", base;
      printf "%-46s %12.1f %26.1f\n", "MB/s, mean of " n, e, b;
      printf "%-46s %12.1f %26s\n", "peak RSS above idle (MiB; idle " sprintf("%.1f", idle / 1024) ")", above, "-";
      printf "Ebb / baseline = %.2f (goal ≥ %s: %s); peak RSS %s\n", e / b, goal, e / b >= goal ? "met" : "NOT met", above <= 64 ? "flat (≤ 64 MiB above idle)" : "NOT flat";
    }' "$4" "$5"
}

# nginx: the static baseline for resumed downloads, and a WebDAV PUT into a folder on the same
# disk as Ebb's store (the local backend's upload baseline: HTTP in, file written, renamed).
mkdir -p "$WORK/nginx-tmp"
# nginx's worker may run as another user (when started as root): let it write the sink.
chmod 755 "$WORK" && chmod 777 "$SINK" "$WORK/nginx-tmp"
cat > "$WORK/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $WORK/nginx.pid; error_log $WORK/nginx-error.log;
events { worker_connections 64; }
http { access_log off; sendfile on; tcp_nopush on; client_body_temp_path $WORK/nginx-tmp;
  proxy_temp_path $WORK; fastcgi_temp_path $WORK; uwsgi_temp_path $WORK; scgi_temp_path $WORK;
  server { listen 127.0.0.1:$NGINX_PORT; root $WWW;
    location /sink/ { root $WORK; dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0; } } }
CONF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" & NGINX_PID=$!
for _ in $(seq 1 50); do curl -fsS -o /dev/null "http://127.0.0.1:$NGINX_PORT/file.bin" -r 0-0 2>/dev/null && break; sleep 0.1; done

echo "bench: $ROUNDS uploads each through a file request, local backend (baseline: curl PUT to nginx WebDAV on the same disk)"
start_ebb
: > "$WORK/ebb-local.times"; : > "$WORK/disk.times"
for i in $(seq 1 "$ROUNDS"); do
  ebb_upload >> "$WORK/ebb-local.times"
  curl -fsS -T "$FILE" -o /dev/null -w '%{size_upload} %{time_total}\n' "http://127.0.0.1:$NGINX_PORT/sink/copy-$i.bin" >> "$WORK/disk.times"
  rm -f "$SINK/copy-$i.bin"
done
stop_ebb
ratio_table "upload of a $SIZE_MB MiB file, local" "curl PUT → nginx WebDAV" 0.7 "$WORK/ebb-local.times" "$WORK/disk.times" "$IDLE_RSS" "$PEAK_RSS"

echo
echo "bench: starting a throwaway garage, ${EBB_GARAGE_PROFILE:-debug} build (S3 API on 127.0.0.1:$S3_PORT_BASE)"
bash scripts/s3-local.sh start "$GARAGE" "$S3_PORT_BASE" >/dev/null
set -a; . "$GARAGE/env"; set +a
# The same database meets a new store: Ebb adopts it only once told the old one is gone on purpose.
psql -q "$URL" -c "delete from settings where key = 'storage_marker_id'" -c "delete from shares"
S3_CURL=(--aws-sigv4 "aws:amz:$EBB_S3_REGION:s3" --user "$EBB_S3_ACCESS_KEY_ID:$EBB_S3_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
echo "bench: $ROUNDS uploads each through a file request, S3 (baseline: curl SigV4 PUT to the same garage)"
start_ebb EBB_STORAGE=s3 EBB_S3_PREFIX=bench/
: > "$WORK/ebb-s3.times"; : > "$WORK/put.times"
for i in $(seq 1 "$ROUNDS"); do
  ebb_upload >> "$WORK/ebb-s3.times"
  curl -fsS "${S3_CURL[@]}" -T "$FILE" -o /dev/null -w '%{size_upload} %{time_total}\n' "$EBB_S3_ENDPOINT/$EBB_S3_BUCKET/direct/file-$i.bin" >> "$WORK/put.times"
done
stop_ebb
ratio_table "upload of a $SIZE_MB MiB file, S3" "curl PUT → garage" 0.7 "$WORK/ebb-s3.times" "$WORK/put.times" "$IDLE_RSS" "$PEAK_RSS"

# Resumed downloads: a share per round (the file hard-linked into the store), broken at half by
# the client, then resumed with its receipt; nginx serves the same second half.
HALF=$((EXPECTED / 2))
psql -q "$URL" -c "delete from settings where key = 'storage_marker_id'" -c "delete from shares"
rm -rf "$STORE" && mkdir -p "$STORE/shares"
echo
echo "bench: $ROUNDS downloads broken at half and resumed (curl -C -), beside nginx serving bytes $HALF- of the same file"
start_ebb
: > "$WORK/resume.times"; : > "$WORK/nginx.times"
for i in $(seq 1 "$ROUNDS"); do
  token=$(new_token); key=$(cat /proc/sys/kernel/random/uuid | tr -d '-')
  ln "$FILE" "$STORE/shares/$key"
  psql -q "$URL" -c "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
    values (sha256(convert_to('$token', 'UTF8')), 'shares/$key', 'file.bin', $EXPECTED, 'application/octet-stream', now() + interval '1 hour')"
  rm -f "$WORK/part.bin" "$WORK/jar"
  # The client goes away after half the file (head closes the pipe; curl stops).
  { curl -sS -X POST -c "$WORK/jar" -A bench "http://127.0.0.1:$PORT/s/$token" 2>/dev/null || true; } | head -c "$HALF" > "$WORK/part.bin"
  [ "$(stat -c %s "$WORK/part.bin")" = "$HALF" ] || fail "the first half did not arrive"
  out=$(curl -fsS -X POST -b "$WORK/jar" -A bench -C - -o "$WORK/part.bin" -w '%{http_code} %{size_download} %{time_total}' "http://127.0.0.1:$PORT/s/$token") || fail "the resume failed"
  [ "${out%% *}" = 206 ] || fail "the resume answered ${out%% *}"
  cmp -s "$WORK/part.bin" "$FILE" || fail "the resumed file differs from the original"
  echo "${out#* }" >> "$WORK/resume.times"
  curl -fsS -r "$HALF-" -o /dev/null -w '%{size_download} %{time_total}\n' "http://127.0.0.1:$NGINX_PORT/file.bin" >> "$WORK/nginx.times"
done
stop_ebb
ratio_table "resumed download (second half of $SIZE_MB MiB)" "nginx (same range)" 0.8 "$WORK/resume.times" "$WORK/nginx.times" "$IDLE_RSS" "$PEAK_RSS"
echo "  every resumed file equals the original (cmp)"
