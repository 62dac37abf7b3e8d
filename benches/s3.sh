#!/usr/bin/env bash
# Shares on S3 (EBB_STORAGE=s3, a throwaway garage on 127.0.0.1):
#   upload of a 1 GiB file through Ebb (multipart form → streamed multipart upload to S3): MB/s and
#   the server's peak RSS above idle, beside a direct streamed PUT of the same file to the same
#   garage with curl (SigV4, unsigned payload), alternated in the same run;
#   download of that share through Ebb (token → claim → stream from S3), beside a direct GET of the
#   same object from the garage with curl.
# Goals: upload ≥ 0.7 × direct, download ≥ 0.8 × direct, peak RSS ≤ 64 MiB above idle.
# Expects: scripts/env.sh sourced, DATABASE_URL (admin), the release binary built.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${BENCH_PORT:-3200}
S3_PORT_BASE=${BENCH_S3_PORT_BASE:-3930}
SIZE_MB=${BENCH_S3_MB:-1024}
ROUNDS=${BENCH_S3_ROUNDS:-2}
BIN=$CARGO_TARGET_DIR/release/ebb
LOG=$CARGO_TARGET_DIR/bench-s3.log

bash scripts/s3-local.sh install
URL=$(bash scripts/fresh-db.sh ebb_bench_s3)
DATABASE_URL=$URL "$BIN" migrate >/dev/null

COOKIE=$(bash benches/admin-session.sh "$URL")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-bench-s3.XXXXXX")
GARAGE=$WORK/garage
mkdir -p "$WORK/blobs"
: > "$LOG"
cleanup() {
  [ -n "${EBB_PID:-}" ] && kill "$EBB_PID" 2>/dev/null; wait 2>/dev/null
  bash scripts/s3-local.sh stop "$GARAGE" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "bench: $*" >&2; echo "bench: the end of $LOG:" >&2; tail -n 20 "$LOG" >&2 2>/dev/null || true; exit 1; }

echo "bench: starting a throwaway garage, ${EBB_GARAGE_PROFILE:-debug} build (S3 API on 127.0.0.1:$S3_PORT_BASE)"
bash scripts/s3-local.sh start "$GARAGE" "$S3_PORT_BASE"
set -a; . "$GARAGE/env"; set +a

# The baseline: curl's own SigV4 against the same garage. Garage wants x-amz-content-sha256 on
# every request; UNSIGNED-PAYLOAD lets curl stream the body without hashing it first.
S3_CURL=(--aws-sigv4 "aws:amz:$EBB_S3_REGION:s3" --user "$EBB_S3_ACCESS_KEY_ID:$EBB_S3_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
direct_put() { # direct_put KEY FILE → "bytes seconds"
  curl -fsS "${S3_CURL[@]}" -T "$2" -o /dev/null -w '%{size_upload} %{time_total}\n' "$EBB_S3_ENDPOINT/$EBB_S3_BUCKET/$1"
}
direct_get() { # direct_get KEY → "bytes seconds" (body discarded)
  curl -fsS "${S3_CURL[@]}" -o /dev/null -w '%{size_download} %{time_total}\n' "$EBB_S3_ENDPOINT/$EBB_S3_BUCKET/$1"
}

start_ebb() { # a fresh process, so VmHWM at the end is the peak of what ran in between
  DATABASE_URL=$URL EBB_STORAGE=s3 EBB_S3_PREFIX=bench/ EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$PORT RUST_LOG=warn \
    EBB_SHARE_MAX_BYTES=$(( SIZE_MB * 1048576 > 4294967296 ? SIZE_MB * 1048576 : 4294967296 )) \
    EBB_STORAGE_DIR="$WORK/blobs" "$BIN" serve >>"$LOG" 2>&1 &
  EBB_PID=$!
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 || fail "Ebb (EBB_STORAGE=s3) did not become ready"
  sleep 1
  IDLE_RSS=$(awk '/VmRSS/ {print $2}' /proc/$EBB_PID/status)
  START_HWM=$(awk '/VmHWM/ {print $2}' /proc/$EBB_PID/status)
}
stop_ebb() { # → PEAK_RSS (kB), then the process is gone
  PEAK_RSS=$(awk '/VmHWM/ {print $2}' /proc/$EBB_PID/status)
  kill "$EBB_PID"; wait "$EBB_PID" 2>/dev/null || true; EBB_PID=
}
ebb_upload() { # → "bytes seconds"; appends "id token" to $WORK/shares
  local out code secs body id token size
  out=$(curl -sS -H "$COOKIE" -H "accept: application/json" -F expires_hours=24 -F "file=@$FILE;type=application/octet-stream" \
    -o "$WORK/upload.json" -w '%{http_code} %{time_total}' "http://127.0.0.1:$PORT/api/admin/shares/upload") || fail "the upload through Ebb failed"
  code=${out% *}; secs=${out#* }; body=$(cat "$WORK/upload.json")
  [ "$code" = 201 ] || fail "the upload through Ebb answered $code: $body"
  id=$(sed -nE 's/.*"id":([0-9]+).*/\1/p' <<<"$body")
  token=$(sed -nE 's#.*"url":"[^"]*/s/([A-Za-z0-9_-]+)".*#\1#p' <<<"$body")
  size=$(sed -nE 's/.*"size_bytes":([0-9]+).*/\1/p' <<<"$body")
  [ -n "$id" ] && [ -n "$token" ] || fail "unexpected answer to the upload: $body"
  echo "$id $token" >> "$WORK/shares"
  echo "$size $secs"
}

echo "bench: writing a ${SIZE_MB} MiB file"
FILE=$WORK/file.bin
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom > "$FILE"
EXPECTED=$(stat -c %s "$FILE")
: > "$WORK/shares"; : > "$WORK/ebb-up.times"; : > "$WORK/direct-up.times"; : > "$WORK/ebb-down.times"; : > "$WORK/direct-down.times"

echo "bench: $ROUNDS uploads each, alternating (Ebb's admin upload; curl PUT to the garage)"
start_ebb
UP_IDLE=$IDLE_RSS; UP_START_HWM=$START_HWM
for i in $(seq 1 "$ROUNDS"); do
  if [ $((i % 2)) = 1 ]; then
    ebb_upload >> "$WORK/ebb-up.times"; direct_put "direct/file-$i.bin" "$FILE" >> "$WORK/direct-up.times"
  else
    direct_put "direct/file-$i.bin" "$FILE" >> "$WORK/direct-up.times"; ebb_upload >> "$WORK/ebb-up.times"
  fi
done
stop_ebb; UP_PEAK=$PEAK_RSS

echo "bench: $ROUNDS downloads each, alternating (Ebb's share link; curl GET of the same object from the garage)"
start_ebb
DOWN_IDLE=$IDLE_RSS; DOWN_START_HWM=$START_HWM
i=0
while read -r id token <&3; do
  i=$((i + 1))
  key=bench/$(psql -tAq "$URL" -c "select blob_key from shares where id = $id")
  if [ $((i % 2)) = 1 ]; then
    direct_get "$key" >> "$WORK/direct-down.times"
    curl -fsS -X POST -o /dev/null -w '%{size_download} %{time_total}\n' "http://127.0.0.1:$PORT/s/$token" >> "$WORK/ebb-down.times" || fail "the download through Ebb failed"
  else
    curl -fsS -X POST -o /dev/null -w '%{size_download} %{time_total}\n' "http://127.0.0.1:$PORT/s/$token" >> "$WORK/ebb-down.times" || fail "the download through Ebb failed"
    direct_get "$key" >> "$WORK/direct-down.times"
  fi
done 3< "$WORK/shares"
stop_ebb; DOWN_PEAK=$PEAK_RSS

summary() { # summary WHAT TITLE GOAL IDLE START_HWM PEAK EBB_TIMES DIRECT_TIMES
  awk -v what="$1" -v title="$2" -v goal="$3" -v idle="$4" -v starthwm="$5" -v peak="$6" -v n="$ROUNDS" -v expected="$EXPECTED" '
    FNR == 1 { f++ }
    { if ($1 != expected) { bad = bad sprintf("  %s: %s bytes instead of %s\n", f == 1 ? "Ebb" : "direct", $1, expected) }
      if (f == 1) { et += $2; if (!eb || $2 < eb) eb = $2 } else { dt += $2; if (!db || $2 < db) db = $2 } }
    END {
      if (bad) { printf "bench: a %s had the wrong size:\n%s", what, bad; exit 1 }
      e = n * expected / 1e6 / et; d = n * expected / 1e6 / dt; above = (peak - idle) / 1024;
      printf "\n%-44s %16s %s\n", title, "Ebb", "  direct (curl → garage)";
      printf "%-44s %16.1f %24.1f\n", "MB/s, mean of " n, e, d;
      printf "%-44s %16.1f %24.1f\n", "MB/s, best", expected / 1e6 / eb, expected / 1e6 / db;
      printf "%-44s %16.1f %24s\n", "peak RSS above idle (MiB; idle " sprintf("%.1f", idle / 1024) ")", above, "-";
      printf "%s: Ebb / direct = %.2f (goal ≥ %s: %s)\n", what, e / d, goal, e / d >= goal ? "met" : "NOT met";
      printf "%s: Ebb peak RSS %.1f MiB above idle (goal ≤ 64 MiB: %s)\n", what, above, above <= 64 ? "met" : "NOT met";
      if (peak <= starthwm) printf "  (the peak is the start-up peak: the %ss stayed below it)\n", what;
    }' "$7" "$8"
}
summary upload "upload of a $SIZE_MB MiB file to S3" 0.7 "$UP_IDLE" "$UP_START_HWM" "$UP_PEAK" "$WORK/ebb-up.times" "$WORK/direct-up.times"
summary download "download of a $SIZE_MB MiB share from S3" 0.8 "$DOWN_IDLE" "$DOWN_START_HWM" "$DOWN_PEAK" "$WORK/ebb-down.times" "$WORK/direct-down.times"
