#!/usr/bin/env bash
# Builds GNU du and cp (coreutils 9.1, unmodified) twice from the same
# objects: stock, and linked with the foreactor plugins.
#
#   apps/coreutils/build.sh [--check]
#
# Steps (each skipped when its result is up to date, so a second run takes
# about a second):
#  1. scripts/fetch_coreutils.sh: source package, upstream tree, configure;
#  2. make the generated headers, then src/du and src/cp (make -j2);
#  3. libforeactor.so in $FOREACTOR_BUILD_DIR (default build/);
#  4. compile the plugins and link, in $FOREACTOR_COREUTILS_BIN_DIR
#     (default third_party/coreutils-bin/),
#       {du,cp}            stock (same objects)
#       {du,cp}-foreactor  plugins + --wrap + libforeactor.so
#  5. check that no file of the coreutils tree that came from the release
#     tarball changed (checksums taken at unpacking).
# --check: only step 5.
#
# Environment: FOREACTOR_BUILD_DIR (where libforeactor.so is built),
# FOREACTOR_COREUTILS_BIN_DIR (where the programs go: one per person when
# several build with different FOREACTOR_BUILD_DIRs), JOBS (make/ninja
# parallelism, default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
APP_DIR="$ROOT/apps/coreutils"
THIRD_PARTY="$ROOT/third_party"
SOURCE_DIR="$THIRD_PARTY/coreutils-9.1"
CHECKSUMS="$THIRD_PARTY/coreutils-9.1.sha256"
BIN_DIR="${FOREACTOR_COREUTILS_BIN_DIR:-$THIRD_PARTY/coreutils-bin}"
PLUGIN_OBJ_DIR="$BIN_DIR/plugin-objects"
BUILD_DIR="${FOREACTOR_BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-2}"

say() { printf 'coreutils/build: %s\n' "$*" >&2; }

# One build (or test run, which holds the same lock) at a time: tests,
# benchmarks and people share third_party/.  The lock is taken once per
# process tree: children see FOREACTOR_COREUTILS_LOCKED and do not wait on it.
if [ -z "${FOREACTOR_COREUTILS_LOCKED:-}" ]; then
  mkdir -p "$THIRD_PARTY"
  exec 9> "$THIRD_PARTY/coreutils.lock"
  flock 9
  export FOREACTOR_COREUTILS_LOCKED=1
fi

check_pristine() {
  # Every file the release tarball holds must still be byte-identical.
  (cd "$SOURCE_DIR" && sha256sum --quiet --check "$CHECKSUMS") \
    || { say "files of the coreutils release changed (see above)"; exit 1; }
}

if [ "${1:-}" = "--check" ]; then
  check_pristine
  say "coreutils tree is byte-identical to the release"
  exit 0
fi

# 1. source, configure
bash "$ROOT/scripts/fetch_coreutils.sh"

# 2. du and cp.  `make src/du` alone would not build the generated headers
# (BUILT_SOURCES) that `make all` builds first.
built_sources=$(printf 'foreactor-print-built-sources:\n\t@echo $(BUILT_SOURCES)\n' \
                  | make -s -C "$SOURCE_DIR" -f Makefile -f - foreactor-print-built-sources)
# coreutils' own compiler warnings go to the log, not to the terminal.
MAKE_LOG="$THIRD_PARTY/coreutils-make.log"
# shellcheck disable=SC2086
if ! { make -s -C "$SOURCE_DIR" -j"$JOBS" $built_sources \
       && make -s -C "$SOURCE_DIR" -j"$JOBS" src/du src/cp; } > "$MAKE_LOG" 2>&1; then
  tail -30 "$MAKE_LOG" >&2
  say "make failed: see $MAKE_LOG"
  exit 1
fi

# 3. libforeactor.so
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target foreactor -j "$JOBS" >/dev/null
LIBFOREACTOR="$BUILD_DIR/libforeactor.so"

# 4. plugins and the four programs.
mkdir -p "$BIN_DIR" "$PLUGIN_OBJ_DIR"
# The foreactor programs find libforeactor.so through their rpath: relink
# them when another build directory is asked for.
if [ "$(cat "$BIN_DIR/foreactor-build-dir" 2>/dev/null)" != "$BUILD_DIR" ]; then
  rm -f "$BIN_DIR/du-foreactor" "$BIN_DIR/cp-foreactor"
  echo "$BUILD_DIR" > "$BIN_DIR/foreactor-build-dir"
fi
CXXFLAGS=(-std=c++20 -O2 -g -fPIC -Wall -Wextra -Werror -I"$ROOT/include")
# cp's C attachment is compiled like coreutils' own sources (its config.h and
# gnulib headers), plus our warnings.
CFLAGS=(-std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$SOURCE_DIR/lib" -I"$SOURCE_DIR")

newer() {  # newer TARGET SOURCES...: true when TARGET is missing or older
  local target="$1"; shift
  [ -e "$target" ] || return 0
  local source
  for source in "$@"; do [ "$source" -nt "$target" ] && return 0; done
  return 1
}

compile_cxx() {  # compile_cxx SOURCE OBJECT [FLAGS...]
  local source="$1" object="$2"; shift 2
  if newer "$object" "$source" "$APP_DIR"/plugins/*.h "$ROOT"/include/foreactor/* \
           "$SOURCE_DIR/lib/config.h"; then
    g++ "${CXXFLAGS[@]}" "$@" -c "$source" -o "$object"
  fi
}
compile_c() {
  local source="$1" object="$2"
  if newer "$object" "$source" "$APP_DIR"/plugins/*.h "$SOURCE_DIR/lib/config.h"; then
    gcc "${CFLAGS[@]}" -c "$source" -o "$object"
  fi
}

# The du plugin reads gnulib's FTS structures: it is compiled, as C++,
# against coreutils' config.h and gnulib's headers (fts_.h).
compile_cxx "$APP_DIR/plugins/du_walk_plugin.cc" "$PLUGIN_OBJ_DIR/du_walk_plugin.o" \
  -I"$SOURCE_DIR/lib" -I"$SOURCE_DIR"
compile_cxx "$APP_DIR/plugins/cp_copy_plugin.cc" "$PLUGIN_OBJ_DIR/cp_copy_plugin.o"
CFLAGS+=(-I"$SOURCE_DIR/src")   # copy.h, for cp_copy_attach.c
compile_c   "$APP_DIR/plugins/cp_copy_attach.c"  "$PLUGIN_OBJ_DIR/cp_copy_attach.o"

# The objects and libraries of coreutils' own link lines (make V=1), in order.
DU_OBJECTS=(src/du.o src/libver.a lib/libcoreutils.a lib/libcoreutils.a)
CP_OBJECTS=(src/cp.o src/copy.o src/cp-hash.o src/force-link.o src/selinux.o
            src/libver.a lib/libcoreutils.a lib/libcoreutils.a)
DU_WRAP=(-Wl,--wrap=rpl_fts_read -Wl,--wrap=rpl_fts_close -Wl,--wrap=fstatat)
CP_WRAP=(-Wl,--wrap=copy -Wl,--wrap=fdadvise -Wl,--wrap=xalignalloc -Wl,--wrap=full_write -Wl,--wrap=close)
# Extra libraries configure chose for du and cp (none on a plain Debian 12,
# e.g. -lacl when libacl is present); taken from the Makefile.
extra_libs() {
  printf 'foreactor-print-libs:\n\t@echo $(%s)\n' "$1" \
    | make -s -C "$SOURCE_DIR" -f Makefile -f - foreactor-print-libs
}
read -r -a DU_LIBS <<< "$(extra_libs src_du_LDADD | sed 's#src/libver.a##; s#lib/libcoreutils.a##g')"
read -r -a CP_LIBS <<< "$(extra_libs src_cp_LDADD | sed 's#src/libver.a##; s#lib/libcoreutils.a##g')"

link() {  # link OUTPUT OBJECTS... -- EXTRA...
  local output="$1"; shift
  local inputs=() extra=() seen_separator=0 argument
  for argument in "$@"; do
    if [ "$argument" = "--" ]; then seen_separator=1; continue; fi
    if [ $seen_separator = 0 ]; then inputs+=("$argument"); else extra+=("$argument"); fi
  done
  local dependencies=()
  for argument in "${inputs[@]}" "${extra[@]}"; do
    case "$argument" in
      -*) ;;
      /*) dependencies+=("$argument") ;;
      *) dependencies+=("$SOURCE_DIR/$argument") ;;
    esac
  done
  if newer "$output" "${dependencies[@]}"; then
    (cd "$SOURCE_DIR" && g++ -g -O2 -o "$output.tmp" "${inputs[@]}" "${extra[@]}")
    # Debug information beside the program (OUTPUT.debug, found by gdb), as
    # Debian ships it: a cold start reads the file around its first page
    # faults, up to the device's read-ahead, debug information included.
    # Stock and foreactor programs alike.
    objcopy --only-keep-debug "$output.tmp" "$output.debug"
    objcopy --strip-debug --add-gnu-debuglink="$output.debug" "$output.tmp"
    mv "$output.tmp" "$output"
  fi
}

link "$BIN_DIR/du" "${DU_OBJECTS[@]}" -- "${DU_LIBS[@]}"
link "$BIN_DIR/cp" "${CP_OBJECTS[@]}" -- "${CP_LIBS[@]}"
# The plugin objects come first: with --wrap, the programs no longer refer to
# the wrapped functions themselves, the plugins' __real_ references do, and
# they must precede the archive that defines them.
# The plugins are C++ and du and cp are C: the C++ runtime is linked in
# (-static-libstdc++), as libforeactor.so has its own, so that the programs
# load no C++ library at start (about 0.6 ms of every run, docs/COREUTILS.md).
CXX_RUNTIME=(-static-libstdc++ -static-libgcc)
link "$BIN_DIR/du-foreactor" "$PLUGIN_OBJ_DIR/du_walk_plugin.o" "${DU_OBJECTS[@]}" \
  -- "${DU_LIBS[@]}" "${DU_WRAP[@]}" "${CXX_RUNTIME[@]}" "$LIBFOREACTOR" -Wl,-rpath,"$BUILD_DIR"
link "$BIN_DIR/cp-foreactor" "$PLUGIN_OBJ_DIR/cp_copy_attach.o" "$PLUGIN_OBJ_DIR/cp_copy_plugin.o" \
  "${CP_OBJECTS[@]}" \
  -- "${CP_LIBS[@]}" "${CP_WRAP[@]}" "${CXX_RUNTIME[@]}" "$LIBFOREACTOR" -Wl,-rpath,"$BUILD_DIR"

# 5.
check_pristine
say "ready: $BIN_DIR/{du,cp}{,-foreactor}"
