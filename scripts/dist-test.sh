#!/usr/bin/env bash
# Tests the artefacts `make dist` left in dist/ (run by `make test` after a dist of the tests'
# build; DATABASE_URL must name a PostgreSQL whose role may create databases):
#   1. the tarball, unpacked in an empty folder, serves the site (page and client) on a fresh database;
#   2. the .deb installs with dpkg -i: its user and folders exist, `systemd-analyze verify` accepts
#      the unit, and `ebb --help`, `ebb migrate` and `ebb serve` work from it as the ebb user;
#      then it is purged (the data folder stays, as Debian's policy wants);
#   3. the image's root file system, exported with podman, runs `ebb --version` and
#      `ebb migrate --dry-run` under chroot (containers cannot be started on these machines).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?DATABASE_URL must be set}"
say() { echo "dist-test: $*" >&2; }
fail() { echo "dist-test: FAILED: $*" >&2; exit 1; }
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-dist-test.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  pkill -TERM -u ebb 2>/dev/null || true
  wait 2>/dev/null || true
  if dpkg-query -W -f='${Status}' ebb 2>/dev/null | grep -q installed; then dpkg --purge ebb >/dev/null 2>&1 || true; fi
  # Purging keeps /var/lib/ebb and the signing key (an operator's data and key): what this test
  # made itself goes, or the next run's fresh database would meet this run's signed digests.
  if [ "${OWN_VAR:-0}" = 1 ]; then rm -rf /var/lib/ebb /etc/ebb/audit-signing-key; rmdir /etc/ebb 2>/dev/null || true; fi
  podman rm -f ebb-dist-test >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Waits for Ebb on PORT; then checks the page and the client file it names.
check_site() {
  local port=$1 log=$2 page asset
  for _ in $(seq 1 100); do curl -sf -o /dev/null "http://localhost:$port/readyz" 2>/dev/null && break; sleep 0.2; done
  page=$(curl -sf "http://localhost:$port/") || { cat "$log" >&2; fail "no page on port $port"; }
  grep -q '<form' <<<"$page" || fail "the page on port $port has no contact form"
  asset=$(grep -o '/pkg/[0-9a-f]*/ebb[^"]*\.js' <<<"$page" | head -1)
  [ -n "$asset" ] || fail "the page names no client script"
  curl -sf -o /dev/null "http://localhost:$port$asset" || fail "the client script $asset is not served"
}

say "tarball"
TB=dist/ebb-$VERSION-x86_64-linux.tar.gz
mkdir "$WORK/tar" && tar -xzf "$TB" -C "$WORK/tar"
D=$WORK/tar/ebb-$VERSION-x86_64-linux
for f in bin/ebb site/pkg/ASSETS ebb.env.example ebb.service ebb-after-restore.service README.md docs/operator.md COPYRIGHT THIRD-PARTY-LICENSES.html; do
  [ -e "$D/$f" ] || fail "the tarball lacks $f"
done
# Every dependency's notice: a few crates Ebb certainly links, each with its licence.
for c in tokio axum sqlx leptos webauthn-rs aws-sdk-s3; do
  grep -q "<li>$c [0-9]" "$D/THIRD-PARTY-LICENSES.html" || fail "THIRD-PARTY-LICENSES.html does not list $c"
done
grep -q 'Permission is hereby granted' "$D/THIRD-PARTY-LICENSES.html" || fail "the MIT licence text is missing"
mkdir "$D/blobs"
URL=$(bash scripts/fresh-db.sh ebb_dist_tar)
(cd "$D" && exec env -i PATH=/usr/bin:/bin DATABASE_URL="$URL" LEPTOS_SITE_ROOT=site EBB_STORAGE_DIR=blobs \
  EBB_BIND=127.0.0.1:3301 EBB_PUBLIC_URL=http://localhost:3301 bin/ebb serve >"$WORK/tar.log" 2>&1) &
PIDS+=($!)
check_site 3301 "$WORK/tar.log"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
say "tarball: ok"

say "Debian package"
DEB=$(ls dist/ebb_"$VERSION"+*-1_amd64.deb)
# Each build its own package version: the commit's time and the commit, after the version.
COMMIT=$(git rev-parse --short=12 HEAD)
dpkg-deb -f "$DEB" Version | grep -qE "^$VERSION\+[0-9]{14}\.g$COMMIT-1\$" || fail "the package's version is $(dpkg-deb -f "$DEB" Version), not $VERSION+<commit time>.g$COMMIT-1"
# Only on a machine without Ebb's data: an installation's own is never touched.
[ ! -e /var/lib/ebb ] && [ ! -e /etc/ebb/audit-signing-key ] || fail "/var/lib/ebb or /etc/ebb/audit-signing-key exists (an installation, or an earlier run's leftovers): the package test needs a machine without them"
OWN_VAR=1
dpkg -i "$DEB" >/dev/null
getent passwd ebb >/dev/null || fail "the package made no ebb user"
[ "$(stat -c %U:%a /var/lib/ebb/blobs)" = ebb:750 ] || fail "/var/lib/ebb/blobs is $(stat -c %U:%a /var/lib/ebb/blobs)"
[ "$(stat -c %G:%a /etc/ebb/ebb.env)" = ebb:640 ] || fail "/etc/ebb/ebb.env is $(stat -c %G:%a /etc/ebb/ebb.env)"
[ "$(stat -c %U:%a /etc/ebb/audit-signing-key)" = root:600 ] || fail "/etc/ebb/audit-signing-key is $(stat -c %U:%a /etc/ebb/audit-signing-key 2>&1)"
grep -qE '^[0-9a-f]{64}$' /etc/ebb/audit-signing-key || fail "/etc/ebb/audit-signing-key is not a hex key"
grep -q '^LoadCredential=audit-signing-key:/etc/ebb/audit-signing-key' "$(dpkg -L ebb | grep -E '/systemd/system/ebb\.service$')" || fail "the unit does not load the signing key"
UNIT=$(dpkg -L ebb | grep -E '/systemd/system/ebb\.service$')
out=$(systemd-analyze verify "$UNIT" 2>&1) || { echo "$out" >&2; fail "systemd-analyze verify refused $UNIT"; }
grep -q 'ProtectSystem=strict' "$UNIT" && grep -q '^User=ebb' "$UNIT" || fail "the unit is not sandboxed as its own user"
ebb --help | grep -q 'doctor' || fail "ebb --help"
URL=$(bash scripts/fresh-db.sh ebb_dist_deb)
# As the service runs it: the ebb user, the package's settings file, the package's site.
as_ebb() { runuser -u ebb -- env -i PATH=/usr/bin:/bin $(grep -E '^[A-Z_]+=' /etc/ebb/ebb.env | tr '\n' ' ') DATABASE_URL="$URL" "$@"; }
as_ebb ebb migrate | grep -q 'migrations applied' || fail "ebb migrate from the package"
as_ebb EBB_BIND=127.0.0.1:3302 EBB_PUBLIC_URL=http://localhost:3302 ebb serve >"$WORK/deb.log" 2>&1 &
PIDS+=($!)
check_site 3302 "$WORK/deb.log"
# runuser waits for its child: stop every process of the user, as systemd would.
pkill -TERM -u ebb || true
for _ in $(seq 1 50); do pgrep -u ebb >/dev/null || break; sleep 0.2; done
wait "${PIDS[-1]}" 2>/dev/null || true
dpkg --purge ebb >/dev/null 2>"$WORK/purge.log"
[ ! -e /usr/bin/ebb ] || fail "purging left /usr/bin/ebb"
# The data stays, and so does its owner (no later user can get its uid and own the shares).
[ -d /var/lib/ebb/blobs ] || fail "purging removed /var/lib/ebb"
getent passwd ebb >/dev/null || fail "purging removed the user ebb while /var/lib/ebb, its data, stays"
[ "$(stat -c %U /var/lib/ebb/blobs)" = ebb ] || fail "after purging, /var/lib/ebb/blobs is owned by $(stat -c %U /var/lib/ebb/blobs)"
grep -q 'rm -r /var/lib/ebb && deluser' "$WORK/purge.log" || fail "purging did not say how to remove the data and the user"
# What the message says, as an operator would: then no user is left behind.
rm -r /var/lib/ebb && deluser --system ebb >/dev/null
! getent passwd ebb >/dev/null || fail "deluser left the ebb user"
say "Debian package: ok"

IMG=dist/ebb-$VERSION-image.tar
if [ -f "$IMG" ]; then
  say "container image"
  podman load -q -i "$IMG" >/dev/null
  podman create -q --name ebb-dist-test "localhost/ebb:$VERSION" >/dev/null
  mkdir "$WORK/rootfs"
  podman export ebb-dist-test | tar -x -C "$WORK/rootfs"
  v=$(chroot "$WORK/rootfs" /usr/bin/ebb --version) || fail "ebb --version under chroot"
  [ "$v" = "ebb $VERSION ($(git rev-parse --short=12 HEAD))" ] || fail "ebb --version said: $v (not the version and the commit)"
  URL=$(bash scripts/fresh-db.sh ebb_dist_image)
  # The image's own libraries and certificates, talking to PostgreSQL over TCP.
  out=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DATABASE_URL="$URL" chroot "$WORK/rootfs" /usr/bin/ebb migrate --dry-run 2>&1) || { echo "$out" >&2; fail "ebb migrate --dry-run under chroot"; }
  grep -q '^0 migrations applied; [0-9]* pending' <<<"$out" || fail "ebb migrate --dry-run under chroot said: $out"
  [ "$(podman image inspect --format '{{.Config.User}}' "localhost/ebb:$VERSION")" = ebb ] || fail "the image does not run as ebb"
  # As the image runs it (these machines cannot start a container): its own user (uid 10001 in
  # its passwd), its settings, its volume folder; the start probes the store (writes, reads back
  # and deletes) and writes the marker there, so a folder the user cannot write stops it.
  [ "$(stat -c %u "$WORK/rootfs/var/lib/ebb/blobs")" = 10001 ] || fail "the image's /var/lib/ebb/blobs belongs to uid $(stat -c %u "$WORK/rootfs/var/lib/ebb/blobs"), not ebb (10001)"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DATABASE_URL="$URL" LEPTOS_SITE_ROOT=/usr/share/ebb/site EBB_STORAGE_DIR=/var/lib/ebb/blobs EBB_BIND=127.0.0.1:3303 \
    EBB_PUBLIC_URL=http://localhost:3303 EBB_LOG_FORMAT=json EBB_METRICS_BIND= \
    chroot --userspec=10001:10001 "$WORK/rootfs" /usr/bin/ebb serve >"$WORK/image.log" 2>&1 &
  PIDS+=($!)
  check_site 3303 "$WORK/image.log"
  [ -n "$(find "$WORK/rootfs/var/lib/ebb/blobs" -user 10001 -type f | head -1)" ] || fail "ebb serve wrote nothing to the image's store as its user"
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
  say "container image: ok"
fi
say "ok"
