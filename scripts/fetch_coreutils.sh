#!/usr/bin/env bash
# Fetches GNU coreutils 9.1 as Debian 12's source package and configures the
# upstream release tarball inside it, unmodified, under third_party/.
#
#   scripts/fetch_coreutils.sh
#
# Idempotent: a step whose result is already present is skipped, so a second
# run downloads and configures nothing.  Needs root for the apt steps (only
# when the source package is not yet in third_party/).
#
# Result:
#   third_party/coreutils-deb/                 what `apt-get source` fetched
#   third_party/coreutils-9.1/                 upstream coreutils-9.1.tar.xz
#                                              unpacked (no Debian patches),
#                                              configured; never edited
#   third_party/coreutils-9.1.sha256           checksums of every file of the
#                                              pristine tree, taken right after
#                                              unpacking (see check_pristine)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
THIRD_PARTY="$ROOT/third_party"
DEB_DIR="$THIRD_PARTY/coreutils-deb"
SOURCE_DIR="$THIRD_PARTY/coreutils-9.1"
CHECKSUMS="$THIRD_PARTY/coreutils-9.1.sha256"
EXPECTED_VERSION="9.1"
DEB_SRC_FILE=/etc/apt/sources.list.d/foreactor-deb-src.sources

# Configure flags (documented in docs/COREUTILS.md):
#  --disable-nls      no message catalogs: output is the C locale's anyway
#  --without-selinux  no SELinux context handling (none on the test machines)
#  --disable-libcap   cp does not need capabilities for the studied paths
#  --without-openssl  no libcrypto dependency (only the checksum tools use it)
#  --disable-dependency-tracking   faster one-shot build
CONFIGURE_FLAGS=(--disable-nls --without-selinux --disable-libcap --without-openssl
  --disable-dependency-tracking)

say() { printf 'fetch_coreutils: %s\n' "$*" >&2; }

mkdir -p "$THIRD_PARTY"

# 1. deb-src entry for bookworm main, in its own deb822 file.
ensure_deb_src() {
  if grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ \
     || grep -qs '^deb-src ' /etc/apt/sources.list; then
    return
  fi
  say "adding $DEB_SRC_FILE"
  cat > "$DEB_SRC_FILE" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq
}

# 2. `apt-get source` (download and unpack with Debian's patches applied;
#    the upstream orig tarball stays beside it).
fetch_source_package() {
  if ls "$DEB_DIR"/coreutils_${EXPECTED_VERSION}.orig.tar.* >/dev/null 2>&1; then
    return
  fi
  ensure_deb_src
  command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev >/dev/null
  mkdir -p "$DEB_DIR"
  say "apt-get source coreutils"
  (cd "$DEB_DIR" && apt-get source -qq coreutils >/dev/null)
  local dsc
  dsc=$(ls "$DEB_DIR"/coreutils_*.dsc)
  if ! grep -q "^Version: ${EXPECTED_VERSION}-" "$dsc"; then
    say "unexpected coreutils version in $dsc (want $EXPECTED_VERSION):"
    grep '^Version:' "$dsc" >&2
    exit 1
  fi
}

# 3. Unpack the upstream release tarball (not the Debian-patched tree) and
#    record checksums of every file it holds.
unpack_upstream() {
  if [ -f "$CHECKSUMS" ] && [ -d "$SOURCE_DIR" ]; then
    return
  fi
  local tarball
  tarball=$(ls "$DEB_DIR"/coreutils_${EXPECTED_VERSION}.orig.tar.*)
  rm -rf "$SOURCE_DIR"
  say "unpacking $(basename "$tarball")"
  tar -C "$THIRD_PARTY" -xf "$tarball"
  [ -d "$SOURCE_DIR" ] || { say "tarball did not hold coreutils-$EXPECTED_VERSION/"; exit 1; }
  (cd "$SOURCE_DIR" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
    > "$CHECKSUMS.tmp"
  mv "$CHECKSUMS.tmp" "$CHECKSUMS"
}

# 4. configure (out of nothing: the release tarball ships ./configure).
configure_tree() {
  if [ -f "$SOURCE_DIR/config.status" ] && [ -f "$SOURCE_DIR/Makefile" ]; then
    return
  fi
  say "configure ${CONFIGURE_FLAGS[*]}"
  (cd "$SOURCE_DIR" && FORCE_UNSAFE_CONFIGURE=1 ./configure -q "${CONFIGURE_FLAGS[@]}" \
     > "$THIRD_PARTY/coreutils-configure.log" 2>&1) \
    || { say "configure failed: see $THIRD_PARTY/coreutils-configure.log"; exit 1; }
}

fetch_source_package
unpack_upstream
configure_tree
say "ready: $SOURCE_DIR"
