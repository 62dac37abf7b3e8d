#!/usr/bin/env bash
# Ebb behind a reverse proxy over https, tested with Playwright (end2end/proxy/): the operator guide's
# configuration for Debian's nginx (scripts/dist/nginx-ebb.conf) or Debian's Caddy
# (scripts/dist/Caddyfile), with a certificate from a local CA made here, in front of two Ebb
# instances on one database and one storage folder.
#   scripts/proxy-e2e.sh nginx|caddy path/to/ebb [Playwright arguments]
# DATABASE_URL must name a PostgreSQL whose role may create databases.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
PROXY=${1:?usage: proxy-e2e.sh nginx|caddy path/to/ebb [Playwright arguments]}
BIN=$(readlink -f "${2:?usage: proxy-e2e.sh nginx|caddy path/to/ebb}")
shift 2
: "${DATABASE_URL:?DATABASE_URL must be set}"
HOST=ebb.localhost               # Chromium resolves *.localhost to this machine
PORT=${E2E_PROXY_PORT:-8443}
HTTP_PORT=${E2E_PROXY_HTTP_PORT:-8080}
BASE=https://$HOST:$PORT
RATE=3
W=$(mktemp -d "${TMPDIR:-/tmp}/ebb-proxy.XXXXXX")
PIDS=()
stop() {
  if [ -f "$W/nginx.pid" ]; then kill "$(cat "$W/nginx.pid")" 2>/dev/null || true; fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap stop EXIT

# A local CA, and the site's certificate signed by it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=Ebb test CA" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
  -keyout "$W/ca.key" -out "$W/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$HOST" -keyout "$W/site.key" -out "$W/site.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$HOST" >"$W/site.ext"
openssl x509 -req -in "$W/site.csr" -CA "$W/ca.pem" -CAkey "$W/ca.key" -CAcreateserial -days 2 -extfile "$W/site.ext" -out "$W/site.pem" 2>/dev/null
# Chromium trusts the CA through the NSS database of the HOME it runs with (the test's own);
# Node (the rate-limit test's requests) through NODE_EXTRA_CA_CERTS.
mkdir -p "$W/home/.pki/nssdb"
certutil -d "sql:$W/home/.pki/nssdb" -N --empty-password
certutil -d "sql:$W/home/.pki/nssdb" -A -t "C,," -n "Ebb test CA" -i "$W/ca.pem"

# Two instances, one database, one storage folder; one trusted proxy hop.
DB_URL=$(bash scripts/fresh-db.sh ebb_proxy)
psql -q "$DB_URL" -c "alter database ebb_proxy set synchronous_commit = off"
mkdir -p "$W/blobs"
for port in 3401 3402; do
  DATABASE_URL=$DB_URL EBB_STORAGE_DIR=$W/blobs EBB_METRICS_BIND= EBB_BIND=127.0.0.1:$port EBB_PUBLIC_URL=$BASE \
    EBB_TRUSTED_PROXY_HOPS=1 EBB_CONTACT_RATE_LIMIT=$RATE EBB_AUTH_RATE_LIMIT=10000 EBB_SHARE_MAX_BYTES=2147483648 \
    EBB_SPAM_POW_DIFFICULTY=100000 RUST_LOG=${RUST_LOG:-info} "$BIN" serve >"$W/ebb-$port.log" 2>&1 &
  PIDS+=($!)
  # The first instance migrates before the second starts.
  for _ in $(seq 1 150); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$W/ebb-$port.log" >&2; exit 1; }
done

if [ "$PROXY" = nginx ]; then
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
  # the operator guide's nginx configuration, with this test's names, ports, certificate and folders.
  sed -e "s/ebb.example.org/$HOST/g" -e "s/listen 443 /listen $PORT /; s/listen 80;/listen $HTTP_PORT;/" \
      -e '/listen \[::\]/d' -e "s#127.0.0.1:3000#127.0.0.1:3401#; s#127.0.0.1:3001#127.0.0.1:3402#" \
      -e "s#/etc/ssl/ebb/fullchain.pem#$W/site.pem#; s#/etc/ssl/ebb/privkey.pem#$W/site.key#" \
      scripts/dist/nginx-ebb.conf >"$W/site.conf"
  mkdir -p "$W/tmp"
  cat >"$W/nginx.conf" <<CONF
user root;
worker_processes 2;
pid $W/nginx.pid;
error_log $W/proxy-error.log warn;
events { worker_connections 512; }
http {
    access_log $W/proxy-access.log;
    client_body_temp_path $W/tmp/body;
    proxy_temp_path $W/tmp/proxy;
    fastcgi_temp_path $W/tmp/fastcgi;
    uwsgi_temp_path $W/tmp/uwsgi;
    scgi_temp_path $W/tmp/scgi;
    include $W/site.conf;
}
CONF
  "$NGINX" -t -q -p "$W" -c "$W/nginx.conf"
  "$NGINX" -p "$W" -c "$W/nginx.conf"
elif [ "$PROXY" = caddy ]; then
  # The operator guide's Caddyfile: this test's name and port, its certificate instead of Caddy's own.
  { printf '{\n\tadmin off\n\tauto_https off\n\thttp_port %s\n}\n' "$HTTP_PORT"
    sed -e "s#^ebb.example.org {#https://$HOST:$PORT {\n\ttls $W/site.pem $W/site.key#" \
        -e "s#127.0.0.1:3000 127.0.0.1:3001#127.0.0.1:3401 127.0.0.1:3402#" scripts/dist/Caddyfile
  } >"$W/Caddyfile"
  XDG_DATA_HOME=$W XDG_CONFIG_HOME=$W caddy run --adapter caddyfile --config "$W/Caddyfile" >"$W/proxy-error.log" 2>&1 &
  PIDS+=($!)
else
  echo "proxy-e2e: the proxy is nginx or caddy, not $PROXY" >&2; exit 2
fi
for _ in $(seq 1 50); do curl -fsS -o /dev/null --cacert "$W/ca.pem" --resolve "$HOST:$PORT:127.0.0.1" "$BASE/readyz" 2>/dev/null && break; sleep 0.2; done
curl -fsS --cacert "$W/ca.pem" --resolve "$HOST:$PORT:127.0.0.1" "$BASE/readyz" >/dev/null

cd end2end
[ -d node_modules/@playwright/test ] || npm ci --no-audit --no-fund
HOME=$W/home NODE_EXTRA_CA_CERTS=$W/ca.pem BASE_URL=$BASE EBB_BIN=$BIN E2E_DATABASE_URL=$DB_URL \
  E2E_CONTACT_RATE_LIMIT=$RATE E2E_PROXY=$PROXY npx playwright test -c playwright.proxy.config.ts "$@" || {
    echo "proxy-e2e: failed behind $PROXY; the instances' warnings and errors:"
    grep -hE 'WARN|ERROR' "$W"/ebb-*.log | tail -n 40 || true
    tail -n 20 "$W/proxy-error.log" || true
    exit 1
  }
