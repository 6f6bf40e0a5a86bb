#!/usr/bin/env bash
# Fetches LevelDB 1.23 as Debian 12's source package (leveldb 1.23-4) and
# unpacks the upstream release tarball inside it, unmodified, under
# third_party/; installs the libraries LevelDB and its tests build against.
#
#   scripts/fetch_leveldb.sh
#
# Idempotent: a step whose result is already present is skipped, so a second
# run downloads nothing.  Needs root for the apt steps (only when something
# is missing).
#
# Result:
#   third_party/leveldb-deb/            what `apt-get source leveldb` fetched
#   third_party/leveldb-1.23/           upstream leveldb_1.23.orig.tar.gz
#                                       unpacked (no Debian patches); never
#                                       edited, never built in
#   third_party/leveldb-1.23.sha256     checksums of every file of that tree,
#                                       taken right after unpacking
#                                       (apps/leveldb/build.sh --check)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
THIRD_PARTY="$ROOT/third_party"
DEB_DIR="$THIRD_PARTY/leveldb-deb"
SOURCE_DIR="$THIRD_PARTY/leveldb-1.23"
CHECKSUMS="$THIRD_PARTY/leveldb-1.23.sha256"
EXPECTED_VERSION="1.23"

# What LevelDB's build and tests need: snappy (LevelDB's default
# compression, compiled in; the driver switches it off by default), the
# system GoogleTest/GoogleMock (the release tarball's third_party/googletest
# is empty) and Google Benchmark (db/db_test.cc links it for its
# micro-benchmarks, which it runs only when asked to).
BUILD_PACKAGES=(cmake ninja-build libsnappy-dev libgtest-dev libgmock-dev libbenchmark-dev)

say() { printf 'fetch_leveldb: %s\n' "$*" >&2; }

mkdir -p "$THIRD_PARTY"
# shellcheck source=scripts/debian_source.sh
source "$ROOT/scripts/debian_source.sh"

install_build_packages() {
  local missing=() package
  for package in "${BUILD_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

install_build_packages
debian_source_fetch leveldb "$EXPECTED_VERSION" "$DEB_DIR"
debian_source_unpack_upstream leveldb "$EXPECTED_VERSION" "$DEB_DIR" "$SOURCE_DIR" "$CHECKSUMS"
say "ready: $SOURCE_DIR"
