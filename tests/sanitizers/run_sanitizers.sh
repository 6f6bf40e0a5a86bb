#!/usr/bin/env bash
# tests/sanitizers/run_sanitizers.sh: the sanitizer part of `./run test`.
#
#   run_sanitizers.sh address   AddressSanitizer + UndefinedBehaviorSanitizer
#                               build in build-asan: every unit test (ctest),
#                               the integration suite, the leak check and a
#                               bounded random-graph run against it.
#   run_sanitizers.sh thread    ThreadSanitizer build in build-tsan: the
#                               multi-threaded tests only (thread pool engine,
#                               io_uring engine and worker pool unit tests,
#                               scope concurrency, leak check with the thread
#                               pool, walk-ahead in a program linked with the
#                               library).
#
# Any sanitizer report fails the run: halt_on_error for UBSan and TSan,
# LeakSanitizer on at exit for ASan.  Tests that preload libforeactor.so into
# system programs cannot run with a sanitized library (the sanitizer runtime
# must come first in the process); they skip when FOREACTOR_SANITIZED is set.
# Environment: FOREACTOR_ROOT (the repository), FOREACTOR_LONG_TESTS.
set -euo pipefail

ROOT="${FOREACTOR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
kind="${1:-}"
cd "$ROOT"  # pytest node ids (--deselect) are relative to the repository
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

configure() {  # configure BUILD_DIR SANITIZERS
  cmake -S "$ROOT" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFOREACTOR_SANITIZE="$2" >/dev/null
}

case "$kind" in
  address)
    build="$ROOT/build-asan"
    say "AddressSanitizer + UndefinedBehaviorSanitizer build in $build"
    configure "$build" address,undefined
    cmake --build "$build" -j 2
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$ROOT/tests/sanitizers/ubsan.supp"
    export FOREACTOR_SANITIZED=address
    say "unit tests under ASan/UBSan"
    # ForkedChildNeverHangs starts a thread pool in the child of a threaded
    # process; under ASan (GCC 12) that child hangs in the sanitizer's
    # allocator (600 s timeout, 2026-11-22): left out here, reported.
    (cd "$build" && ctest --output-on-failure -j 2 --timeout 300 -E 'ForkedChildNeverHangs')
    say "integration, leak and random-graph tests under ASan/UBSan"
    # Left out under ASan, because the sanitizer runtime must be the first
    # library of a process and intercepts the libc calls itself: programs
    # built without ASan against the ASan library (install tests), the
    # library preloaded into sh (tool exit status), and the check that every
    # libc name binds to libforeactor.so (ASan's interceptors bind first).
    FOREACTOR_BUILD_DIR="$build" RANDOM_GRAPH_SEEDS="${RANDOM_GRAPH_SEEDS_ASAN:-100}" \
      python3 -m pytest -q -p no:cacheprovider \
      --deselect "tests/integration/test_install.py::test_build_through_pkg_config" \
      --deselect "tests/integration/test_install.py::test_build_through_find_package" \
      --deselect "tests/integration/test_tool.py::test_exit_status_passes_through_with_the_real_library" \
      --deselect "tests/integration/test_passthrough.py::test_programs_reach_every_interposer" \
      "$ROOT/tests/integration" "$ROOT/tests/sanitizers" "$ROOT/tests/random_graphs"
    ;;
  thread)
    build="$ROOT/build-tsan"
    say "ThreadSanitizer build in $build (multi-threaded tests only)"
    configure "$build" thread
    cmake --build "$build" -j 2 --target foreactor thread_pool_engine_test io_uring_engine_test \
      request_rules_test worker_pool_stress_test cache_fill_test graph_runner_read_ahead_test \
      read_ahead_file_test \
      scope_concurrency call_matrix forbid_io_uring early_exit_leaks tree_walker
    # die_after_fork=0: the scope concurrency test forks a threaded process.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:die_after_fork=0"
    export FOREACTOR_SANITIZED=thread
    say "engine and request completion unit tests under TSan"
    "$build/tests/thread_pool_engine_test"
    "$build/tests/io_uring_engine_test"
    "$build/tests/request_rules_test"
    "$build/tests/worker_pool_stress_test"
    say "read-ahead fill and hint unit tests under TSan (threads of foreactor's own beside the program)"
    "$build/tests/cache_fill_test"
    "$build/tests/graph_runner_read_ahead_test"
    "$build/tests/read_ahead_file_test"
    # worker_pool_fork_test is not run here: TSan reports its rounds'
    # unjoined thread as a leak in the forked child.
    say "scope concurrency, early-exit and walk-ahead tests under TSan"
    # Walk-ahead's tests that preload the library into system programs skip
    # under a sanitizer; those of a program linked with it (tree_walker) run.
    FOREACTOR_BUILD_DIR="$build" python3 -m pytest -q -p no:cacheprovider \
      "$ROOT/tests/integration/test_scope_concurrency.py" \
      "$ROOT/tests/sanitizers/test_early_exit_leaks.py" \
      "$ROOT/tests/integration/test_walk_ahead.py"
    ;;
  *)
    echo "usage: $0 address|thread" >&2
    exit 2 ;;
esac
