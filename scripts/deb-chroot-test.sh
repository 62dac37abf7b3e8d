#!/usr/bin/env bash
# Issue 55: the .deb on a clean Debian 12, as an operator meets it. In a chroot of a fresh bookworm
# (mmdebstrap; no systemd, no init: the unit's settings are applied by hand, as the unit would):
#   1. the root: Debian's minimal system, PostgreSQL 15, curl, sudo and the package's Depends only
#      (built once into ${EBB_CACHE:-~/.cache/ebb}/chroot/, unpacked afresh for every run);
#   2. install: `dpkg -i` (its maintainer scripts without systemd), the user, folders and key;
#   3. serve: the database and role made as docs/operator.md says (`sudo -u postgres …`), the
#      settings edited, `ebb migrate` and `ebb serve` as the unit runs them; the page, /readyz and
#      the client; no first admin's link in the log (the journal would keep it), and the docs'
#      `ebb admin invite` command prints one; an inquiry through the contact form (the first
#      admin's passkey cannot be made here, so no file share is uploaded);
#   4. back up and restore as docs/operator.md says: pg_dump, the store copied, a second inquiry
#      after the backup, pg_restore --role=ebb into ebb_restored, `ebb doctor --after-restore`,
#      serve again: the page, and the restored database holds the first inquiry only;
#   5. purge: the package goes; what it keeps is what the docs say (/var/lib/ebb and its owner
#      ebb, the signing key); after the command the purge prints, no file in the whole root
#      belongs to ebb's uid or gid (which the next system user gets).
# Usage: bash scripts/deb-chroot-test.sh [PACKAGE.deb]   (default: dist/ebb_VERSION+…-1_amd64.deb)
# Needs root (mmdebstrap, chroot, mounts) and the network to deb.debian.org for a cold cache.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
say() { echo "deb-chroot-test: $*" >&2; }
STEP="setup"
fail() { echo "deb-chroot-test: FAIL: $STEP: $*" >&2; exit 1; }
pass() { echo "deb-chroot-test: PASS: $STEP${1:+ ($1)}" >&2; }
# A command that fails outside a check still names its step and line (in the script's own shell:
# a failing $(…) only ends its subshell, and the check around it speaks).
trap '[ "$BASHPID" != $$ ] || fail "line $LINENO${FUNCNAME:+ (in $FUNCNAME, called at line ${BASH_LINENO[0]})}: $BASH_COMMAND"' ERR
[ "$(id -u)" = 0 ] || { STEP=setup; fail "needs root (chroot, mounts, mmdebstrap)"; }
STARTED=$SECONDS

VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
if [ $# -ge 1 ]; then DEB_SRC=$1; else DEB_SRC=$(ls dist/ebb_"$VERSION"+*-1_amd64.deb 2>/dev/null | head -1 || true); fi
[ -n "$DEB_SRC" ] && [ -f "$DEB_SRC" ] || fail "no package (dist/ebb_$VERSION+*-1_amd64.deb): run make dist, or name one"
# Ports of this test only: the chroot shares the host's network, where a PostgreSQL (5432), a
# `make run` (3000) and the tests' instances (metrics on 9464) may be listening.
PG_PORT=5499
PORT=3299
METRICS_PORT=3298
for p in $PORT $METRICS_PORT; do
  ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || fail "port $p is in use on this machine"
done

# The host is the backup machine of step 4 (rsync, as the docs copy the store) and solves the
# contact form's proof of work (python3).
command -v rsync >/dev/null || apt-get -o DPkg::Lock::Timeout=300 install -y -q rsync >/dev/null
command -v python3 >/dev/null || fail "python3 is missing"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ebb-deb-chroot.XXXXXX")
R=$WORK/root
mkdir "$R"
# dist/ is rebuilt by every `make dist` (rm -rf first): the package is copied before anything.
DEB=$WORK/${DEB_SRC##*/}
cp "$DEB_SRC" "$DEB"
MOUNTS=()
SERVE_PID=
PARTIAL=

# Every process whose root is the chroot (Ebb, PostgreSQL, a forgotten child): by its /proc
# entry, so nothing of the host is touched.
chroot_pids() {
  local d
  for d in /proc/[0-9]*; do
    [ "$(readlink "$d/root" 2>/dev/null)" = "$R" ] && echo "${d#/proc/}"
  done
  return 0
}
cleanup() {
  local rc=$? p
  trap - ERR
  set +e
  for sig in TERM TERM TERM KILL; do
    p=$(chroot_pids); [ -z "$p" ] && break
    kill -"$sig" $p 2>/dev/null; sleep 1
  done
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTS[$i]}" 2>/dev/null; done
  # Never remove a tree with the host's /dev, /proc or /sys still mounted in it.
  if grep -qF " $WORK/" /proc/self/mountinfo; then
    echo "deb-chroot-test: mounts are left under $WORK; not removing it:" >&2
    grep -F " $WORK/" /proc/self/mountinfo >&2
  else
    rm -rf --one-file-system "$WORK"
  fi
  [ -z "$PARTIAL" ] || rm -f "$PARTIAL"
  say "took $((SECONDS - STARTED)) s"
  exit "$rc"
}
trap cleanup EXIT

# A command inside the chroot as root, with a clean environment (none of the host's variables).
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 chroot "$R" "$@"; }

STEP="1 clean Debian 12 root"
# What the test needs beside a minimal Debian, and the package's own Depends (dpkg -i installs no
# dependency): names only, the first of alternatives, versions left to bookworm.
DEPENDS=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/([^)]*)//g' -e 's/:any//' -e 's/[[:space:]]//g' | grep -v '^$')
PKGS=$(printf '%s\n' postgresql curl ca-certificates sudo $DEPENDS | sort -u)
# The recipe is part of the name: another list, variant or mirror set is another tarball.
MIRRORS=("deb http://deb.debian.org/debian bookworm main"
         "deb http://deb.debian.org/debian bookworm-updates main"
         "deb http://deb.debian.org/debian-security bookworm-security main")
VARIANT=minbase
HASH=$(printf '%s\n' "$VARIANT" "${MIRRORS[@]}" $PKGS | sha256sum | cut -c1-16)
CACHE=${EBB_CACHE:-$HOME/.cache/ebb}/chroot
TAR=$CACHE/bookworm-$HASH.tar
if [ -f "$TAR" ]; then
  how="cached $TAR"
else
  command -v mmdebstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=300 install -y -q mmdebstrap >/dev/null
  mkdir -p "$CACHE"
  say "building $TAR: bookworm $VARIANT + $(echo $PKGS) (a minute or two, once)"
  # Written beside and renamed when complete: an interrupted build never leaves a tarball.
  # (mmdebstrap writes a tarball for a name ending in .tar; its policy-rc.d keeps the
  # PostgreSQL it installs from starting.)
  PARTIAL=$CACHE/.bookworm-$HASH.$$.tar
  mmdebstrap --mode=root --variant="$VARIANT" --include="$(echo $PKGS | tr ' ' ,)" \
    bookworm "$PARTIAL" "${MIRRORS[@]}" >"$WORK/mmdebstrap.log" 2>&1 ||
    { tail -30 "$WORK/mmdebstrap.log" >&2; rm -f "$PARTIAL"; fail "mmdebstrap"; }
  mv "$PARTIAL" "$TAR"; PARTIAL=
  how="built $TAR in $((SECONDS - STARTED)) s"
fi
# Numeric owners: the names map to the chroot's own passwd, not the host's.
tar --numeric-owner --xattrs --xattrs-include='*' -xpf "$TAR" -C "$R"
for m in proc sys dev; do
  mount --bind "/$m" "$R/$m"; MOUNTS+=("$R/$m")
  # Nothing mounted below propagates back to the host's /dev, /proc or /sys.
  mount --make-private "$R/$m"
done
# PostgreSQL's shared memory (dynamic_shared_memory_type = posix): the chroot's own /dev/shm,
# not the host's (a non-recursive bind leaves an empty folder there).
mount -t tmpfs -o mode=1777,size=256m tmpfs "$R/dev/shm"; MOUNTS+=("$R/dev/shm")
# sudo looks the machine's name up; the root has no /etc/hosts line for it.
grep -q "[[:space:]]$(hostname)\$" "$R/etc/hosts" 2>/dev/null || echo "127.0.1.1 $(hostname)" >>"$R/etc/hosts"
[ "$(in_root cat /etc/debian_version)" ] && grep -q '^12\.' "$R/etc/debian_version" || fail "not Debian 12: $(cat "$R/etc/debian_version")"
[ ! -e "$R/run/systemd/system" ] || fail "the root looks booted with systemd"
! in_root dpkg-query -W -f='${Status}' ebb 2>/dev/null | grep -q installed || fail "ebb is in the root already"
pass "$how; Debian $(cat "$R/etc/debian_version")"

STEP="2 install (dpkg -i, no systemd)"
cp "$DEB" "$R/tmp/"
# docs/operator.md: `dpkg -i ebb_0.1.0+*_amd64.deb`.
in_root sh -c "cd /tmp && dpkg -i ${DEB##*/}" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log" >&2; fail "dpkg -i"; }
rm "$R/tmp/${DEB##*/}"
[ "$(in_root dpkg-query -W -f='${Status}' ebb)" = "install ok installed" ] || fail "dpkg says: $(in_root dpkg-query -W -f='${Status}' ebb)"
in_root getent passwd ebb >/dev/null || fail "the package made no ebb user"
EBB_UID=$(in_root id -u ebb)
EBB_GID=$(in_root id -g ebb)
[ "$(stat -c %u:%g:%a "$R/var/lib/ebb/blobs")" = "$EBB_UID:$EBB_GID:750" ] || fail "/var/lib/ebb/blobs is $(stat -c %U:%G:%a "$R/var/lib/ebb/blobs")"
[ "$(stat -c %u:%g:%a "$R/etc/ebb/ebb.env")" = "0:$EBB_GID:640" ] || fail "/etc/ebb/ebb.env is $(stat -c %u:%g:%a "$R/etc/ebb/ebb.env")"
[ "$(stat -c %u:%a "$R/etc/ebb/audit-signing-key")" = 0:600 ] || fail "/etc/ebb/audit-signing-key is $(stat -c %u:%a "$R/etc/ebb/audit-signing-key")"
in_root ebb --version >/dev/null || fail "ebb --version"
if grep -qiE 'warning|error|not found' "$WORK/install.log"; then say "dpkg -i said:"; cat "$WORK/install.log" >&2; fi
pass "user ebb uid $EBB_UID gid $EBB_GID"

STEP="3 PostgreSQL, settings, migrate, serve"
# Debian's cluster, moved off the host's port (the chroot shares its network) and off TCP
# altogether: the Unix socket in the chroot's /run/postgresql only. pg_wrapper (createuser,
# pg_dump, …) reads the port from the cluster's settings, so the docs' commands run unchanged.
in_root pg_lsclusters -h | grep -q '^15 *main ' || fail "no PostgreSQL 15 cluster in the root: $(in_root pg_lsclusters)"
in_root pg_conftool -s 15 main set port "$PG_PORT"
in_root pg_conftool -s 15 main set listen_addresses ''
in_root pg_ctlcluster 15 main start >"$WORK/pg.log" 2>&1 || { cat "$WORK/pg.log" >&2; fail "pg_ctlcluster 15 main start"; }
in_root sudo -u postgres pg_isready -q || fail "PostgreSQL does not answer"
# docs/operator.md, "Install from a release", as the users it names.
in_root sh -c 'sudo -u postgres createuser ebb && sudo -u postgres createdb -O ebb ebb' || fail "createuser / createdb as in the docs"
# `editor /etc/ebb/ebb.env`: the database on this cluster's port, the test's address.
DB_URL="postgresql:///ebb?host=/run/postgresql&port=$PG_PORT"
# Quoted: systemd's EnvironmentFile= and sh (the docs' `ebb admin invite` reads the file with
# `.`) both take a double-quoted value, and only quoted is the URL's & not a shell operator.
# (sed's replacement: & is the match, so the URL's & is escaped.)
sed -i -e "s#^DATABASE_URL=.*#DATABASE_URL=\"${DB_URL//&/\\&}\"#" -e "s#^EBB_BIND=.*#EBB_BIND=127.0.0.1:$PORT#" \
  -e "s#^EBB_PUBLIC_URL=.*#EBB_PUBLIC_URL=http://localhost:$PORT#" \
  -e "s#^EBB_METRICS_BIND=.*#EBB_METRICS_BIND=127.0.0.1:$METRICS_PORT#" "$R/etc/ebb/ebb.env"
grep -qxF "DATABASE_URL=\"$DB_URL\"" "$R/etc/ebb/ebb.env" && grep -qx "EBB_BIND=127.0.0.1:$PORT" "$R/etc/ebb/ebb.env" || fail "ebb.env has no DATABASE_URL or EBB_BIND line to set"
[ "$(stat -c %u:%g:%a "$R/etc/ebb/ebb.env")" = "0:$EBB_GID:640" ] || fail "editing changed /etc/ebb/ebb.env's owner or mode"

# The unit, applied by hand (no systemd in a chroot): read from the installed ebb.service, so
# the test follows it. User=/Group=, the Environment= lines, then EnvironmentFile= (which
# overrides them), LoadCredential= (a copy of the key that the service's user alone reads, in a
# folder systemd removes when the service stops), WorkingDirectory= and UMask=.
UNIT=$R$(in_root dpkg -L ebb | grep -E '/systemd/system/ebb\.service$')
# docs/operator.md's restore runs the doctor through this one-shot unit (its settings are the
# service's own: the same lines, checked here).
AFTER_RESTORE_UNIT=$R$(in_root dpkg -L ebb | grep -E '/systemd/system/ebb-after-restore\.service$') || fail "the package has no ebb-after-restore.service"
unit() { sed -n "s/^$1=//p" "${2:-$UNIT}"; }
for key in User Group Environment EnvironmentFile LoadCredential WorkingDirectory UMask; do
  [ "$(unit "$key")" = "$(unit "$key" "$AFTER_RESTORE_UNIT")" ] || fail "ebb-after-restore.service's $key= lines differ from ebb.service's"
done
[ "$(unit ExecStart "$AFTER_RESTORE_UNIT")" = "/usr/bin/ebb doctor --after-restore" ] || fail "ebb-after-restore.service does not run ebb doctor --after-restore"
[ "$(unit User)" = ebb ] && [ "$(unit Group)" = ebb ] || fail "the unit does not run as ebb:ebb"
[ "$(unit EnvironmentFile)" = /etc/ebb/ebb.env ] || fail "the unit reads $(unit EnvironmentFile), not /etc/ebb/ebb.env"
CRED=/run/credentials/ebb.service
mapfile -t UNIT_ENV < <(unit Environment | sed "s#%d#$CRED#g")
WORKDIR=$(unit WorkingDirectory)
UMASK=$(unit UMask)
start_credentials() {
  install -d -m 0500 -o "$EBB_UID" -g "$EBB_GID" "$R$CRED"
  while IFS=: read -r name path; do
    install -m 0400 -o "$EBB_UID" -g "$EBB_GID" "$R$path" "$R$CRED/$name"
  done < <(unit LoadCredential)
}
stop_credentials() { rm -rf "${R:?}$CRED"; }
# A simple command (no function, no subshell), so that `"${SERVICE[@]}" ebb serve &` is Ebb's own
# process: env, chroot and sh each exec the next.
SERVICE=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$WORKDIR" USER=ebb LOGNAME=ebb LANG=C.UTF-8 "${UNIT_ENV[@]}"
  chroot --userspec="$EBB_UID:$EBB_GID" "$R" /bin/sh -c
  'set -a; . /etc/ebb/ebb.env; set +a; cd "$1" && umask "$2" && shift 2 && exec "$@"' sh "$WORKDIR" "$UMASK")
as_service() { "${SERVICE[@]}" "$@"; }
# Running, not a zombie (bash reaps its children when it next looks).
alive() { [ -n "$1" ] && [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# `systemctl start ebb` / `stop`: SIGTERM, as systemd stops it (TimeoutStopSec=60s).
serve() {
  local log=$1
  start_credentials
  "${SERVICE[@]}" ebb serve >"$log" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 150); do
    in_root curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" && return 0
    alive "$SERVE_PID" || { tail -30 "$log" >&2; fail "ebb serve exited"; }
    sleep 0.2
  done
  tail -30 "$log" >&2; fail "ebb serve: /readyz does not answer after 30 s"
}
stop_serve() {
  kill -TERM "$SERVE_PID"
  for _ in $(seq 1 300); do alive "$SERVE_PID" || break; sleep 0.2; done
  ! alive "$SERVE_PID" || fail "ebb serve did not stop within 60 s of SIGTERM"
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=
  stop_credentials
}
check_page() {
  local page asset
  page=$(in_root curl -sf "http://127.0.0.1:$PORT/") || fail "no page"
  grep -q '<form' <<<"$page" || fail "the page has no contact form"
  asset=$(grep -o '/pkg/[0-9a-f]*/ebb[^"]*\.js' <<<"$page" | head -1)
  [ -n "$asset" ] || fail "the page names no client script"
  in_root curl -sf -o /dev/null "http://127.0.0.1:$PORT$asset" || fail "the client script $asset is not served"
}
# An inquiry as the hydrated page sends it: the page's signed time stamp, a few seconds of
# "typing" (EBB_SPAM_MIN_FILL_SECS), the proof of work (ALTCHA: SHA-256(salt ‖ n), solved here on
# the host) and the fields.
send_inquiry() {
  local name=$1 page stamp challenge proof out
  page=$(in_root curl -sf "http://127.0.0.1:$PORT/") || fail "no page"
  stamp=$(grep -o '<input[^>]*name="started"[^>]*>' <<<"$page" | sed -n 's/.*value="\([^"]*\)".*/\1/p')
  [ -n "$stamp" ] || fail "the form has no time stamp field"
  sleep 4
  challenge=$(in_root curl -sf "http://127.0.0.1:$PORT/api/contact/challenge") || fail "no proof-of-work challenge"
  proof=$(python3 -c '
import base64, hashlib, json, sys
c = json.loads(sys.argv[1])
target, prefix = bytes.fromhex(c["challenge"]), hashlib.sha256(c["salt"].encode())
for n in range(c["maxnumber"] + 1):
    h = prefix.copy(); h.update(str(n).encode())
    if h.digest() == target:
        p = {k: c[k] for k in ("algorithm", "challenge", "salt", "signature")}; p["number"] = n
        print(base64.b64encode(json.dumps(p).encode()).decode()); break
' "$challenge")
  [ -n "$proof" ] || fail "the proof of work has no solution"
  out=$(in_root curl -s -w '\n%{http_code}' -H 'accept: application/json' --data-urlencode "name=$name" \
    --data-urlencode email=ann@example.org --data-urlencode "message=Hello, please call me back." \
    --data-urlencode "started=$stamp" --data-urlencode "altcha=$proof" "http://127.0.0.1:$PORT/api/contact")
  [ "${out##*$'\n'}" = 200 ] || fail "the contact form answered: $out"
}
psql_count() { in_root sudo -u postgres psql -d "$1" -Atc "$2"; }

out=$(as_service ebb migrate 2>&1) || { echo "$out" >&2; fail "ebb migrate as ebb"; }
grep -q 'migrations applied' <<<"$out" || fail "ebb migrate said: $out"
serve "$WORK/serve1.log"
check_page
# The package never writes the first admin's link to the log (the journal under systemd keeps
# it): ebb.env says false as the unit does (EnvironmentFile= wins over Environment=), and the log
# names the command instead; the docs' command prints the link.
grep -q 'Open this one-time link' "$WORK/serve1.log" && fail "the log holds the first admin's link (ebb.env: EBB_PRINT_FIRST_ADMIN_LINK=$(sed -n 's/^EBB_PRINT_FIRST_ADMIN_LINK=//p' "$R/etc/ebb/ebb.env"))"
grep -q 'ebb admin invite' "$WORK/serve1.log" || fail "the log does not say to run ebb admin invite"
link=$(in_root sudo -u ebb sh -c 'set -a; . /etc/ebb/ebb.env; exec ebb admin invite' 2>/dev/null | grep -o 'http[^ ]*/invite/[^ ]*' | head -1) || true
[ -n "$link" ] || fail "the docs' invite command (sudo -u ebb … ebb admin invite) printed no link"
[ -n "$(find "$R/var/lib/ebb/blobs" -type f -user "$EBB_UID" | head -1)" ] || fail "ebb serve wrote nothing to the store as ebb"
send_inquiry "Before Backup"
[ "$(psql_count ebb 'select count(*) from inquiries')" = 1 ] || fail "the inquiry is not in the database"
pass "migrate, serve on :$PORT (page, /readyz, client), one inquiry; no upload: a share needs an admin's passkey"

STEP="4 back up and restore (docs/operator.md)"
# 1. The database, while Ebb runs, verbatim: as postgres, into its home (pg_wrapper finds the
# cluster's port).
DUMP="~postgres/ebb-$(date +%F).dump"
in_root sh -c "sudo -u postgres pg_dump --format=custom --file $DUMP ebb" || fail "pg_dump as in the docs"
# 2. The store, after the dump, to the backup machine: here the host, outside the chroot.
mkdir -p "$WORK/backup/ebb/blobs"
rsync -a --numeric-ids "$R/var/lib/ebb/blobs/" "$WORK/backup/ebb/blobs/" || fail "rsync of the store"
[ -n "$(find "$WORK/backup/ebb/blobs" -type f | head -1)" ] || fail "the store's copy is empty"
# What happens after the backup: a restore loses it.
send_inquiry "After Backup"
[ "$(psql_count ebb 'select count(*) from inquiries')" = 2 ] || fail "the second inquiry is not in the database"
# systemctl stop ebb; then the restore, verbatim, as postgres; the live store is kept.
stop_serve
in_root sh -c "sudo -u postgres createdb -O ebb ebb_restored && sudo -u postgres pg_restore --no-owner --role=ebb --dbname ebb_restored $DUMP" \
  >"$WORK/restore.log" 2>&1 || { cat "$WORK/restore.log" >&2; fail "createdb / pg_restore as in the docs"; }
[ "$(psql_count ebb_restored 'select count(*) from inquiries')" = 1 ] || fail "ebb_restored does not hold exactly the inquiry made before the backup"
[ "$(psql_count ebb_restored "select count(*) from pg_tables where schemaname = 'public' and tableowner <> 'ebb'")" = 0 ] || fail "tables in ebb_restored that ebb does not own"
# "point DATABASE_URL at ebb_restored"
RESTORED_URL="postgresql:///ebb_restored?host=/run/postgresql&port=$PG_PORT"
sed -i "s#^DATABASE_URL=.*#DATABASE_URL=\"${RESTORED_URL//&/\\&}\"#" "$R/etc/ebb/ebb.env"
grep -qxF "DATABASE_URL=\"$RESTORED_URL\"" "$R/etc/ebb/ebb.env" || fail "ebb.env's DATABASE_URL is not ebb_restored's"
# `systemctl start ebb-after-restore`: its ExecStart= with the settings checked above to be the
# service's (its user, settings and key), so what it writes to the store stays Ebb's.
start_credentials
read -ra AFTER_RESTORE <<<"$(unit ExecStart "$AFTER_RESTORE_UNIT")"
out=$(as_service "${AFTER_RESTORE[@]}" 2>&1) || { echo "$out" >&2; fail "ebb-after-restore.service (ebb doctor --after-restore)"; }
stop_credentials
grep -q 'checks: 0 failed' <<<"$out" || { echo "$out" >&2; fail "ebb doctor --after-restore did not end with 0 failed"; }
# systemctl start ebb
serve "$WORK/serve2.log"
check_page
stop_serve
[ -z "$(find "$R/var/lib/ebb" ! -user "$EBB_UID")" ] || fail "files in /var/lib/ebb not owned by ebb: $(find "$R/var/lib/ebb" ! -user "$EBB_UID" | sed "s#^$R##")"
pass "pg_dump, store copied, pg_restore --role=ebb, doctor --after-restore, served again; 1 of 2 inquiries restored"

STEP="5 purge"
# Ebb is stopped (above); the cluster too: nothing of Ebb's runs, nothing writes.
in_root pg_ctlcluster 15 main stop -m fast >/dev/null
[ -z "$(chroot_pids)" ] || fail "processes still run in the chroot: $(chroot_pids | xargs ps -o pid=,user=,cmd= -p)"
in_root dpkg --purge ebb >"$WORK/purge.log" 2>&1 || { cat "$WORK/purge.log" >&2; fail "dpkg --purge ebb"; }
! in_root dpkg-query -W ebb >/dev/null 2>&1 || fail "dpkg still knows ebb: $(in_root dpkg-query -W -f='${Status}' ebb)"
[ ! -e "$R/usr/bin/ebb" ] && [ ! -e "$R/etc/ebb/ebb.env" ] || fail "purging left /usr/bin/ebb or /etc/ebb/ebb.env"
# What the docs say purge keeps: /var/lib/ebb, the signing key, and the user ebb with its uid
# while /var/lib/ebb is there (a deleted system user's uid goes to the next one made).
[ "$(stat -c %u:%a "$R/etc/ebb/audit-signing-key" 2>&1)" = 0:600 ] || fail "the signing key is $(stat -c %u:%a "$R/etc/ebb/audit-signing-key" 2>&1) after purging (root's, kept, say the docs)"
[ "$(stat -c %u "$R/var/lib/ebb/blobs" 2>&1)" = "$EBB_UID" ] || fail "/var/lib/ebb/blobs: $(stat -c %u "$R/var/lib/ebb/blobs" 2>&1) after purging"
[ "$(in_root id -u ebb 2>&1)" = "$EBB_UID" ] || fail "the user ebb (uid $EBB_UID) is gone while /var/lib/ebb, its data, stays"
grep -q 'rm -r /var/lib/ebb && deluser --system ebb' "$WORK/purge.log" || { cat "$WORK/purge.log" >&2; fail "purging did not say how to remove the data and the user"; }
# The whole root but the host's mounts: ebb's files are in /var/lib/ebb only.
owned() { find "$R" -xdev \( -path "$R/proc" -o -path "$R/sys" -o -path "$R/dev" \) -prune -o \( -uid "$EBB_UID" -o -gid "$EBB_GID" \) -print | sed "s#^$R##"; }
outside=$(owned | grep -v '^/var/lib/ebb\(/\|$\)' || true)
[ -z "$outside" ] || fail "after purging, outside /var/lib/ebb, owned by ebb (uid $EBB_UID / gid $EBB_GID):"$'\n'"$outside"
kept=$(owned | wc -l)
# The message's command, as an operator runs it when the data can go: then nothing is left to a
# later user with the same uid.
in_root sh -c 'rm -r /var/lib/ebb && deluser --system ebb' >"$WORK/deluser.log" 2>&1 || { cat "$WORK/deluser.log" >&2; fail "rm -r /var/lib/ebb && deluser --system ebb"; }
! in_root getent passwd ebb >/dev/null || fail "deluser left the user ebb"
left=$(owned)
[ -z "$left" ] || fail "after deluser, owned by uid $EBB_UID / gid $EBB_GID:"$'\n'"$left"
group=$(in_root getent group "$EBB_GID" || true)
# The uid is free again: the next system user gets it, and owns nothing.
next=$(in_root sh -c 'adduser --system --no-create-home ebbprobe >/dev/null 2>&1 && id -u ebbprobe')
pass "kept $kept entries under /var/lib/ebb (owner uid $EBB_UID kept) and the root's signing key; after the printed command nothing is owned by uid $EBB_UID / gid $EBB_GID${group:+ (group $group kept)}; the next system user got uid $next"
say "ok"
