#!/usr/bin/env bash
# Runs coreutils' own tests for du and cp (tests/du/*, tests/cp/*) three
# times: with the stock du and cp; with du-foreactor and cp-foreactor in
# their place and foreactor switched on; and the same with walk-ahead on
# (FOREACTOR_WALK_AHEAD=1, the automatic depth).  Prints the pass/fail/skip counts of each
# run and exits nonzero when the foreactor run has a failure or an error
# that the stock run does not have.
#
#   apps/coreutils/run_coreutils_tests.sh [ENGINE [DEPTH]]   (io_uring 16)
#
# With COREUTILS_TESTS_STATS=1, src/du and src/cp of the foreactor run are
# small bash wrappers that `exec -a` the foreactor programs with a
# FOREACTOR_STATS file per process, and the graphs' counters summed over all
# processes are printed (how much of the suite foreactor took part in).
#
# Needs the whole coreutils tree built (the tests use many of its programs):
# it runs `make -j2` there first (a few minutes the first time).  The test
# harness finds the programs in the tree's src/; the foreactor builds are
# copied over src/du and src/cp for the second run and the stock ones put
# back afterwards (these are build outputs, not files of the release; the
# release's files are checked unchanged at the end).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SOURCE_DIR="$ROOT/third_party/coreutils-9.1"
BIN_DIR="${FOREACTOR_COREUTILS_BIN_DIR:-$ROOT/third_party/coreutils-bin}"  # as build.sh
RESULTS_DIR="$ROOT/third_party/coreutils-test-results"
ENGINE="${1:-io_uring}"
DEPTH="${2:-16}"

say() { printf 'coreutils-tests: %s\n' "$*" >&2; }

# The whole run holds the lock of apps/coreutils/build.sh: it swaps src/du
# and src/cp of the shared tree, which no other build or run may see.
if [ -z "${FOREACTOR_COREUTILS_LOCKED:-}" ]; then
  mkdir -p "$ROOT/third_party"
  exec 9> "$ROOT/third_party/coreutils.lock"
  flock 9
  export FOREACTOR_COREUTILS_LOCKED=1
fi

bash "$ROOT/apps/coreutils/build.sh"
say "building the whole coreutils tree (make -j2)"
# man1_MANS= : the release ships its man pages; do not let help2man
# regenerate them from the programs built here (they are files of the
# release, and must stay byte-identical).
NO_MAN_PAGES=(man1_MANS= EXTRA_MANS=)
make -s -C "$SOURCE_DIR" -j2 "${NO_MAN_PAGES[@]}" > "$ROOT/third_party/coreutils-make-all.log" 2>&1 \
  || { tail -20 "$ROOT/third_party/coreutils-make-all.log" >&2; exit 1; }

cd "$SOURCE_DIR"
shopt -s nullglob
tests=(tests/du/*.sh tests/du/*.pl tests/cp/*.sh tests/cp/*.pl)
shopt -u nullglob
TESTS_LIST="${tests[*]}"
mkdir -p "$RESULTS_DIR"

STATS_DIR="$RESULTS_DIR/stats"
install_programs() {  # install_programs SUFFIX: "" (stock) or "-foreactor"
  rm -f src/du src/cp
  if [ -n "$1" ] && [ "${COREUTILS_TESTS_STATS:-0}" = 1 ]; then
    rm -rf "$STATS_DIR"; mkdir -p "$STATS_DIR"
    local name
    for name in du cp; do
      printf '#!/bin/bash
FOREACTOR_STATS="%s/%s.$$.json" exec -a "${0##*/}" "%s" "$@"
' \
        "$STATS_DIR" "$name" "$BIN_DIR/$name$1" > "src/$name"
      chmod +x "src/$name"
    done
  else
    cp -f "$BIN_DIR/du$1" src/du
    cp -f "$BIN_DIR/cp$1" src/cp
  fi
  touch src/du src/cp   # newer than their objects: make keeps them
}

sum_statistics() {
  python3 - "$STATS_DIR" <<'PYTHON'
import collections, glob, json, sys
totals = collections.defaultdict(collections.Counter)
processes = collections.Counter()
for path in glob.glob(sys.argv[1] + "/*.json"):
    processes[path.rsplit("/", 1)[1].split(".")[0]] += 1
    for graph, counters in json.load(open(path))["graphs"].items():
        totals[graph].update({k: v for k, v in counters.items() if isinstance(v, int)})
print("processes:", dict(processes))
for graph, counters in sorted(totals.items()):
    keys = ("scopes", "intercepted", "issued_early", "consumed", "mispredicted",
            "speculation_stopped", "synchronous", "bytes_early")
    print(graph + ":", " ".join(f"{k}={counters[k]}" for k in keys))
PYTHON
}

# Runs the tests; writes one "name result" line per test into $RESULTS_DIR/$1.
run_suite() {
  local label="$1"
  rm -f tests/du/*.log tests/du/*.trs tests/cp/*.log tests/cp/*.trs
  # SUBDIRS=. : only the top-level test harness; VERBOSE=no : summary only.
  make -s check "${NO_MAN_PAGES[@]}" SUBDIRS=. VERBOSE=no TESTS="$TESTS_LIST" > "$RESULTS_DIR/$label.make.log" 2>&1 || true
  local trs
  : > "$RESULTS_DIR/$label.results"
  for trs in tests/du/*.trs tests/cp/*.trs; do
    [ -f "$trs" ] || continue
    printf '%s %s\n' "${trs%.trs}" "$(sed -n 's/^:test-result: //p' "$trs" | head -1)" \
      >> "$RESULTS_DIR/$label.results"
  done
  cp -f tests/test-suite.log "$RESULTS_DIR/$label.test-suite.log" 2>/dev/null || true
  local counts
  counts=$(awk '{count[$2]++} END {for (r in count) printf "%s=%d ", r, count[r]}' \
             "$RESULTS_DIR/$label.results")
  say "$label: $counts"
}

trap 'install_programs ""' EXIT

install_programs ""
run_suite stock

install_programs "-foreactor"
FOREACTOR=1 FOREACTOR_ENGINE="$ENGINE" FOREACTOR_DEPTH="$DEPTH" FOREACTOR_EXACT_DEPTH=1 \
  run_suite "foreactor-$ENGINE-depth$DEPTH"

if [ "${COREUTILS_TESTS_STATS:-0}" = 1 ]; then sum_statistics >&2; fi

install_programs "-foreactor"
FOREACTOR=1 FOREACTOR_WALK_AHEAD=1 run_suite "foreactor-walk-ahead"

install_programs ""
trap - EXIT
bash "$ROOT/apps/coreutils/build.sh" --check

# Failures (FAIL, ERROR) of a foreactor run that the stock run has not.
regressions=$(for label in "foreactor-$ENGINE-depth$DEPTH" foreactor-walk-ahead; do
                join <(sort "$RESULTS_DIR/stock.results") <(sort "$RESULTS_DIR/$label.results") \
                  | awk -v run="$label" '$3 != $2 && ($3 == "FAIL" || $3 == "ERROR") {print $1 ": " $2 " -> " $3 " (" run ")"}'
              done)
if [ -n "$regressions" ]; then
  say "worse with foreactor:"
  printf '%s\n' "$regressions" >&2
  exit 1
fi
say "no test is worse with foreactor (results in $RESULTS_DIR)"
