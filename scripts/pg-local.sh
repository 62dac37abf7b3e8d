#!/usr/bin/env bash
# A project-local PostgreSQL cluster (Debian's binaries, no system service), for `make run` and
# for `make test` on a machine without a PostgreSQL on 127.0.0.1:5432.
#   scripts/pg-local.sh start   → starts it if needed and prints `export DATABASE_URL=...`
#   scripts/pg-local.sh stop
# initdb/postgres refuse to run as root, so as root the cluster runs as the `postgres` user.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PORT=${EBB_PG_PORT:-54329}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PGBIN" ] || { echo "pg-local: PostgreSQL server binaries not found; run scripts/setup.sh" >&2; exit 1; }

RUN_AS=()
if [ "$(id -u)" -eq 0 ]; then
  RUN_AS=(runuser -u postgres --)
fi

# The data lives in .data/postgres (git-ignored) when the cluster's user can reach the checkout;
# otherwise (a checkout under a private home) in /var/tmp, linked from .data/postgres.
mkdir -p .data
if [ -L .data/postgres ] || [ -d .data/postgres ]; then
  DATA=$(readlink -f .data/postgres)
elif [ ${#RUN_AS[@]} -eq 0 ] || "${RUN_AS[@]}" test -x "$REPO/.data"; then
  DATA=$REPO/.data/postgres
else
  DATA=/var/tmp/ebb-pg-$(echo "$REPO" | sha256sum | cut -c1-12)
  ln -sfn "$DATA" .data/postgres
fi
SOCK=$DATA/run

case "${1:-start}" in
  start)
    if [ ! -f "$DATA/PG_VERSION" ]; then
      mkdir -p "$DATA"
      [ ${#RUN_AS[@]} -eq 0 ] || chown postgres: "$DATA"
      chmod 700 "$DATA"
      "${RUN_AS[@]}" "$PGBIN/initdb" -D "$DATA" -A trust -U ebb -E UTF8 --no-instructions >"$DATA.initdb.log" 2>&1 \
        || { cat "$DATA.initdb.log" >&2; exit 1; }
      "${RUN_AS[@]}" mkdir -p "$SOCK"
    fi
    if ! "${RUN_AS[@]}" "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
      "${RUN_AS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -w -l "$DATA/server.log" \
        -o "-k $SOCK -p $PORT -c listen_addresses=''" start >/dev/null \
        || { tail -n 20 "$DATA/server.log" >&2; exit 1; }
      "$PGBIN/psql" -q "postgresql:///postgres?host=$SOCK&port=$PORT&user=ebb" -tc \
        "select 1 from pg_database where datname = 'ebb'" | grep -q 1 \
        || "$PGBIN/psql" -q "postgresql:///postgres?host=$SOCK&port=$PORT&user=ebb" -c "create database ebb"
    fi
    echo "export DATABASE_URL='postgresql:///ebb?host=$SOCK&port=$PORT&user=ebb'"
    ;;
  stop)
    "${RUN_AS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
