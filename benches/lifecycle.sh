#!/usr/bin/env bash
# The after-every-response job check (issue 9), measured beside the same run without it:
#   1. contact submissions/s with EBB_AFTER_RESPONSE_JOBS=true vs false (two servers, same
#      binary, same database server, alternated A B A B so drift hits both);
#   2. submission p99 while a prune of a 1,000,000-row backlog runs vs p99 when nothing is due.
# Called by benches/run.sh; expects scripts/env.sh sourced and DATABASE_URL set.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNS=${BENCH_CONNECTIONS:-32}
SECS=${BENCH_SECONDS:-10}
BIN=$CARGO_TARGET_DIR/release/ebb

start() { # start NAME PORT AFTER_RESPONSE → sets PID_<NAME> and URL_<NAME>
  local url; url=$(bash scripts/fresh-db.sh "ebb_bench_$1")
  eval "URL_$1='$url'"
  mkdir -p "$CARGO_TARGET_DIR/bench-$1-blobs"; rm -rf "$CARGO_TARGET_DIR/bench-$1-blobs"/*
  DATABASE_URL=$url EBB_BIND=127.0.0.1:$2 EBB_TRUSTED_PROXY_HOPS=1 EBB_CONTACT_RATE_LIMIT=100000 EBB_METRICS_BIND= \
    EBB_AFTER_RESPONSE_JOBS=$3 RUST_LOG=warn EBB_STORAGE_DIR="$CARGO_TARGET_DIR/bench-$1-blobs" "$BIN" serve >"$CARGO_TARGET_DIR/bench-$1.log" 2>&1 &
  eval "PID_$1=$!"
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$2/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
}
rps() { # rps PORT → "requests_per_s p99_ms"
  wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s benches/contact.lua "http://127.0.0.1:$1/api/contact" | grep '^BENCH' |
    awk '{for(i=2;i<=NF;i++){split($i,kv,"=");v[kv[1]]=kv[2]} printf "%.0f %.2f\n", v["requests"]/(v["duration_us"]/1e6), v["p99_us"]/1000}'
}

start on 3201 true; start off 3202 false
trap 'kill $PID_on $PID_off 2>/dev/null || true' EXIT
wrk -t2 -c"$CONNS" -d3s -s benches/contact.lua "http://127.0.0.1:3201/api/contact" >/dev/null
wrk -t2 -c"$CONNS" -d3s -s benches/contact.lua "http://127.0.0.1:3202/api/contact" >/dev/null
declare -a ON OFF
for round in 1 2; do
  ON+=("$(rps 3201 | cut -d' ' -f1)"); OFF+=("$(rps 3202 | cut -d' ' -f1)")
done
awk -v a1="${ON[0]}" -v a2="${ON[1]}" -v b1="${OFF[0]}" -v b2="${OFF[1]}" -v c="$CONNS" 'BEGIN {
  on = (a1 + a2) / 2; off = (b1 + b2) / 2;
  printf "\n%-52s %12s %12s\n", "contact submissions/s, " c " connections", "check on", "check off";
  printf "%-52s %12.0f %12.0f\n", "round 1", a1, b1;
  printf "%-52s %12.0f %12.0f\n", "round 2", a2, b2;
  printf "%-52s %12.0f %12.0f\n", "mean", on, off;
  printf "%-52s %11.2f%%   (target: within 2%%)\n", "with the check, relative to without", 100 * (on - off) / off;
}'

# 2. p99 while prune works through a 1,000,000-row backlog, beside p99 with nothing due.
kill $PID_off 2>/dev/null || true
echo
echo "bench: loading 1,000,000 inquiries older than the retention period (server 'on')"
psql -q "$URL_on" -c "delete from inquiries" -c "insert into inquiries (name, email, message, created_at)
  select 'Old ' || g, 'old' || g || '@example.org', 'old message', now() - interval '400 days' - make_interval(secs => g)
  from generate_series(1, 1000000) g" -c "vacuum analyze inquiries" -c "checkpoint"
# (the vacuum and the checkpoint: the rounds below do not pay for the load's writes)
BUSY_ROUNDS=0
idle() { # nothing is due: the last prune run has finished (it outlasts a round) and the claim was just taken
  for _ in $(seq 1 120); do
    [ "$(psql -qtA "$URL_on" -c "select count(*) from maintenance_runs where job = 'prune' and finished_at is not null")" -ge "$BUSY_ROUNDS" ] && break
    sleep 1
  done
  # The rows the prune before deleted are vacuumed now, not by autovacuum during the round.
  psql -q "$URL_on" -c "vacuum inquiries"
  psql -q "$URL_on" -c "insert into settings (key, value) values ('last_cleanup_at', ((extract(epoch from clock_timestamp()) * 1000)::bigint)::text)
    on conflict (key) do update set value = excluded.value"
  psql -q "$URL_on" -c "checkpoint"
  RESULT=$(rps 3201)
}
busy() { # a stale claim and a fresh process: the first response starts prune in the background
  kill $PID_on; wait $PID_on 2>/dev/null || true
  psql -q "$URL_on" -c "update settings set value = '0' where key = 'last_cleanup_at'"
  DATABASE_URL=$URL_on EBB_BIND=127.0.0.1:3201 EBB_TRUSTED_PROXY_HOPS=1 EBB_CONTACT_RATE_LIMIT=100000 EBB_METRICS_BIND= \
    RUST_LOG=warn EBB_STORAGE_DIR="$CARGO_TARGET_DIR/bench-on-blobs" "$BIN" serve >"$CARGO_TARGET_DIR/bench-on.log" 2>&1 &
  PID_on=$!
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:3201/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
  BUSY_ROUNDS=$((BUSY_ROUNDS + 1))
  psql -q "$URL_on" -c "checkpoint"
  RESULT=$(rps 3201)
}
# Every round starts just after a checkpoint: after one, the first write to each page logs the
# whole page (full_page_writes), and the submissions' inserts touch pages all over the address
# indexes, so a round's p99 otherwise depends on how long ago the last checkpoint was.
# Alternated (nothing due, prune runs, nothing due, …) so drift hits both; BENCH_LIFECYCLE_ROUNDS
# of each (default 3), the median reported: with no prune at all, one 10-second round's p99 moved
# from 6 to 23 ms between rounds on these machines (December 2026).
ROUNDS=${BENCH_LIFECYCLE_ROUNDS:-3}
IDLE_ROUNDS=""; BUSY_ROUNDS_OUT=""
for _ in $(seq 1 "$ROUNDS"); do
  idle; IDLE_ROUNDS+="$RESULT"$'\n'; busy; BUSY_ROUNDS_OUT+="$RESULT"$'\n'
done
idle
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
IDLE="$(echo -n "$IDLE_ROUNDS" | cut -d' ' -f1 | median) $(echo -n "$IDLE_ROUNDS" | cut -d' ' -f2 | median)"
BUSY="$(echo -n "$BUSY_ROUNDS_OUT" | cut -d' ' -f1 | median) $(echo -n "$BUSY_ROUNDS_OUT" | cut -d' ' -f2 | median)"
echo "  rounds (per second, p99 ms): nothing due $(echo -n "$IDLE_ROUNDS" | paste -sd'|'); prune runs $(echo -n "$BUSY_ROUNDS_OUT" | paste -sd'|')"
RUN=$(psql -qtA "$URL_on" -c "select extract(epoch from finished_at - started_at)::numeric(10,2) || ' s, ' || (steps->0->'counts'->0->>1) || ' rows deleted'
  from maintenance_runs where job = 'prune' and finished_at is not null order by started_at desc limit 1")
LEFT=$(psql -qtA "$URL_on" -c "select count(*) from inquiries where name like 'Old %'")
awk -v i="$IDLE" -v b="$BUSY" -v rounds="$ROUNDS" -v run="$RUN" -v left="$LEFT" 'BEGIN {
  split(i, I, " "); split(b, B, " ");
  printf "\n%-52s %12s %12s\n", "contact submissions", "nothing due", "prune runs";
  printf "%-52s %12.0f %12.0f\n", "per second, median", I[1], B[1];
  printf "%-52s %12.2f %12.2f\n", "latency p99 (ms), median of " rounds " rounds", I[2], B[2];
  printf "%-52s %12.2fx   (target: within 1.1x)\n", "p99 while prune runs, relative to nothing due", B[2] / I[2];
  printf "%-52s %s; %s old rows left for later runs\n", "the last prune run (bounded per run)", run, left;
}'
