#!/usr/bin/env bash
# Builds LevelDB 1.23 (unmodified release tree), its own test programs and
# the case study's driver, plain and (when apps/leveldb/plugin/ holds a .cc)
# linked with the foreactor plugin.
#
#   apps/leveldb/build.sh [--check] [TARGET...]
#
# Steps (each skipped when up to date; a second run takes a few seconds):
#  1. scripts/fetch_leveldb.sh: source package, upstream tree, build deps;
#  2. libforeactor.so in $FOREACTOR_BUILD_DIR (default build/), only when
#     the plugin exists;
#  3. configure apps/leveldb/programs/ into third_party/leveldb-build/
#     (RelWithDebInfo: -O2 -g -DNDEBUG) and build TARGETs (default: all);
#  4. check that Version::Get has the mangled name the --wrap option names,
#     and that no file of the LevelDB release changed (checksums taken at
#     unpacking).
# --check: only the pristine check of step 4.
#
# Outputs (apps/leveldb/README.md): third_party/leveldb-build/
#   leveldb/libleveldb.a                      LevelDB's static library
#   <test>, <test>_foreactor                  LevelDB's test programs
#   leveldb_driver, leveldb_driver_foreactor  the trace driver
#
# Environment: FOREACTOR_BUILD_DIR, JOBS (ninja parallelism, default 2),
# LEVELDB_BUILD_DIR (instead of third_party/leveldb-build/, e.g. for a second
# libforeactor.so: the programs' rpath names one; the log is <dir>.log).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
APP_DIR="$ROOT/apps/leveldb"
THIRD_PARTY="$ROOT/third_party"
SOURCE_DIR="$THIRD_PARTY/leveldb-1.23"
CHECKSUMS="$THIRD_PARTY/leveldb-1.23.sha256"
LEVELDB_BUILD="${LEVELDB_BUILD_DIR:-$THIRD_PARTY/leveldb-build}"
BUILD_DIR="${FOREACTOR_BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-2}"

say() { printf 'leveldb/build: %s\n' "$*" >&2; }

# shellcheck source=scripts/debian_source.sh
source "$ROOT/scripts/debian_source.sh"

check_pristine() {
  debian_source_check_pristine "$SOURCE_DIR" "$CHECKSUMS" \
    || { say "files of the LevelDB release changed (see above)"; exit 1; }
}

if [ "${1:-}" = "--check" ]; then
  check_pristine
  say "LevelDB tree is byte-identical to the release"
  exit 0
fi

# One build at a time: tests, benchmarks and people share third_party/.
mkdir -p "$THIRD_PARTY"
exec 9> "$THIRD_PARTY/leveldb-build.lock"
flock 9

# 1.
bash "$ROOT/scripts/fetch_leveldb.sh"

# 2.
LIBFOREACTOR="$BUILD_DIR/libforeactor.so"
if compgen -G "$APP_DIR/plugin/*.cc" >/dev/null; then
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$BUILD_DIR" --target foreactor -j "$JOBS" >/dev/null
fi

# 3.  Reconfigure when the build directory was made for another
#     libforeactor.so (the foreactor programs' rpath names its folder).
if [ ! -f "$LEVELDB_BUILD/build.ninja" ] \
   || ! grep -qxF "FOREACTOR_LIBRARY:FILEPATH=$LIBFOREACTOR" "$LEVELDB_BUILD/CMakeCache.txt"; then
  say "configuring $LEVELDB_BUILD"
  cmake -S "$APP_DIR/programs" -B "$LEVELDB_BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLEVELDB_SOURCE_DIR="$SOURCE_DIR" -DFOREACTOR_ROOT="$ROOT" \
    -DFOREACTOR_LIBRARY="$LIBFOREACTOR" > "$LEVELDB_BUILD-configure.log" \
    || { cat "$LEVELDB_BUILD-configure.log" >&2; exit 1; }
fi
BUILD_LOG="$LEVELDB_BUILD.log"
if ! cmake --build "$LEVELDB_BUILD" -j "$JOBS" ${1:+--target "$@"} > "$BUILD_LOG" 2>&1; then
  grep -v '^\[' "$BUILD_LOG" | tail -40 >&2
  say "build failed: see $BUILD_LOG"
  exit 1
fi

# 4.
expected=$(sed -n 's/^ *_ZN7leveldb7Version3Get\(.*\))$/_ZN7leveldb7Version3Get\1/p' \
  "$APP_DIR/programs/CMakeLists.txt")
symbols=$(nm --defined-only "$LEVELDB_BUILD/leveldb/libleveldb.a" 2>/dev/null || true)
if [ -z "$expected" ] || ! grep -q " T $expected\$" <<< "$symbols"; then
  say "libleveldb.a does not define $expected (the symbol --wrap names)"
  exit 1
fi
check_pristine
say "ready: $LEVELDB_BUILD"
