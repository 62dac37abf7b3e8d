#!/usr/bin/env bash
# `make dist`: the release artefacts, built from a clean tree into dist/:
#   ebb-VERSION-x86_64-linux.tar.gz   bin/ebb, site/, ebb.env.example, ebb.service, ebb-after-restore.service, README.md, docs/,
#                                     COPYRIGHT and THIRD-PARTY-LICENSES.html (every crate's notice)
#   ebb_VERSION-1_amd64.deb           cargo-deb: /usr/bin/ebb, /usr/share/ebb/site, /etc/ebb/ebb.env,
#                                     the systemd unit (its own user, sandboxed), data in /var/lib/ebb
#   ebb-VERSION-image.tar             an OCI image (podman build from a minimal root, FROM scratch)
#   SHA256SUMS
# EBB_DIST_DIRTY=1 allows uncommitted changes (the tests' build); EBB_DIST_NO_IMAGE=1 skips the image.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
say() { echo "dist: $*" >&2; }
if [ -n "$(git status --porcelain 2>/dev/null)" ] && [ "${EBB_DIST_DIRTY:-}" != 1 ]; then
  say "the tree has uncommitted changes: commit them first (release artefacts come from a clean tree)"; exit 1
fi
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
# EBB_DIST_BIN and EBB_DIST_SITE: package an existing build (the tests package theirs).
BIN=${EBB_DIST_BIN:-$CARGO_TARGET_DIR/release/ebb}
SITE=${EBB_DIST_SITE:-$LEPTOS_SITE_ROOT}
DEB_FLAGS=()
if [ -z "${EBB_DIST_BIN:-}" ]; then
  say "Ebb $VERSION ($COMMIT): building the release client and server"
  bash scripts/build-client.sh >/dev/null
  cargo build -q --release -p server --bin ebb
else
  say "Ebb $VERSION ($COMMIT): packaging $BIN and $SITE"
  DEB_FLAGS=(--fast)
fi

# One staged root (relative to the repository: cargo-deb's assets name these paths).
ROOT=target/dist/root
rm -rf target/dist dist
mkdir -p "$ROOT/usr/bin" "$ROOT/usr/share/ebb/site/pkg" "$ROOT/etc/ebb" "$ROOT/usr/share/doc/ebb" dist
install -m 0755 "$BIN" "$ROOT/usr/bin/ebb"
strip "$ROOT/usr/bin/ebb"
# The current client only (target/site also keeps the build before, for open pages).
HASH=$(cat "$SITE/pkg/ASSETS")
cp -r "$SITE/pkg/$HASH" "$ROOT/usr/share/ebb/site/pkg/$HASH"
cp "$SITE/pkg/ASSETS" "$ROOT/usr/share/ebb/site/pkg/ASSETS"
for f in "$SITE"/*; do [ "${f##*/}" = pkg ] || cp -r "$f" "$ROOT/usr/share/ebb/site/"; done
# The package's settings: the example with the package's paths and a local PostgreSQL by socket.
sed -e 's#^DATABASE_URL=.*#DATABASE_URL=postgresql:///ebb?host=/run/postgresql#' \
    -e 's#^EBB_STORAGE_DIR=.*#EBB_STORAGE_DIR=/var/lib/ebb/blobs#' \
    -e 's#^LEPTOS_SITE_ROOT=.*#LEPTOS_SITE_ROOT=/usr/share/ebb/site#' \
    -e 's#^EBB_PRINT_FIRST_ADMIN_LINK=.*#EBB_PRINT_FIRST_ADMIN_LINK=false#' \
    -e 's#^EBB_LOG_FORMAT=.*#EBB_LOG_FORMAT=json#' \
    .env.example >"$ROOT/etc/ebb/ebb.env"
# systemd's EnvironmentFile= wins over the unit's Environment=: the file must say what the unit
# says, or the first admin's link would be written to the journal.
for line in LEPTOS_SITE_ROOT=/usr/share/ebb/site EBB_PRINT_FIRST_ADMIN_LINK=false EBB_LOG_FORMAT=json; do
  grep -qx "$line" "$ROOT/etc/ebb/ebb.env" || { say "ebb.env: no ${line%%=*} line to set"; exit 1; }
done
cat >"$ROOT/usr/share/doc/ebb/COPYRIGHT" <<TXT
Ebb $VERSION ($COMMIT)
Copyright: the Ebb developers
License: AGPL-3.0-or-later (GNU Affero General Public License, version 3 or later;
https://www.gnu.org/licenses/agpl-3.0.html). The crates Ebb is built from keep their own
licences: see THIRD-PARTY-LICENSES.html.
TXT
say "licence notices (cargo-about)"
cargo about generate --locked --config scripts/dist/about.toml -m server/Cargo.toml \
  -o "$ROOT/usr/share/doc/ebb/THIRD-PARTY-LICENSES.html" scripts/dist/about.hbs 2>target/dist/about.log ||
  { cat target/dist/about.log >&2; exit 1; }

say "tarball"
T=ebb-$VERSION-x86_64-linux
mkdir -p "target/dist/$T/bin"
cp "$ROOT/usr/bin/ebb" "target/dist/$T/bin/"
cp -r "$ROOT/usr/share/ebb/site" "target/dist/$T/site"
cp .env.example "target/dist/$T/ebb.env.example"
cp scripts/dist/ebb.service scripts/dist/ebb-after-restore.service README.md "$ROOT/usr/share/doc/ebb/COPYRIGHT" "$ROOT/usr/share/doc/ebb/THIRD-PARTY-LICENSES.html" "target/dist/$T/"
mkdir -p "target/dist/$T/docs" && cp docs/*.md "target/dist/$T/docs/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" -C target/dist -czf "dist/$T.tar.gz" "$T"

say "Debian package (cargo-deb)"
# Every build its own package version, newer builds sorting higher (apt upgrades from one to the
# next): the version, the commit's time and the commit.
STAMP=$(date -u -d "@$EPOCH" +%Y%m%d%H%M%S)
cargo deb -q -p server --no-build --no-strip "${DEB_FLAGS[@]}" --deb-version "$VERSION+$STAMP.g$COMMIT-1" --output dist/ >/dev/null

if [ "${EBB_DIST_NO_IMAGE:-}" != 1 ]; then
  say "container image (podman, from a minimal root)"
  IMG=target/dist/image
  R=$IMG/rootfs
  mkdir -p "$R/usr/bin" "$R/usr/share/ebb" "$R/etc/ssl/certs" "$R/tmp" "$R/var/lib/ebb/blobs"
  cp "$ROOT/usr/bin/ebb" "$R/usr/bin/"
  cp -r "$ROOT/usr/share/ebb/site" "$R/usr/share/ebb/"
  cp -r "$ROOT/usr/share/doc" "$R/usr/share/"
  # The C libraries the binary links (and the loader), at their own paths.
  ldd "$ROOT/usr/bin/ebb" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
    mkdir -p "$R$(dirname "$lib")"; cp -L "$lib" "$R$lib"
  done
  cp /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nebb:x:10001:10001:Ebb:/var/lib/ebb:/sbin/nologin\n' >"$R/etc/passwd"
  printf 'root:x:0:\nebb:x:10001:\n' >"$R/etc/group"
  chmod 1777 "$R/tmp"
  chown -R 10001:10001 "$R/var/lib/ebb"
  cp scripts/dist/Containerfile "$IMG/"
  podman build -q --timestamp "$EPOCH" -t "localhost/ebb:$VERSION" "$IMG" >/dev/null
  podman save -q --format oci-archive -o "dist/ebb-$VERSION-image.tar" "localhost/ebb:$VERSION"
fi
(cd dist && sha256sum -- * >SHA256SUMS)
say "done:"; ls -l dist >&2
