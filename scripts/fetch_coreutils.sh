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
# shellcheck source=scripts/debian_source.sh
source "$ROOT/scripts/debian_source.sh"

# 1.-2. deb-src entry and `apt-get source` (Debian's tree with its patches;
#       the upstream orig tarball stays beside it).
fetch_source_package() {
  debian_source_fetch coreutils "$EXPECTED_VERSION" "$DEB_DIR"
}

# 3. Unpack the upstream release tarball (not the Debian-patched tree) and
#    record checksums of every file it holds.
unpack_upstream() {
  debian_source_unpack_upstream coreutils "$EXPECTED_VERSION" "$DEB_DIR" "$SOURCE_DIR" "$CHECKSUMS"
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
