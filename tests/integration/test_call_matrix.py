"""Every call type inside a scope: the program must observe exactly the same
with foreactor off and on, whatever the engine and the depth.

call_matrix (programs/call_matrix.cc) runs one small graph per case (a loop
of one call type over real files, errors, short reads, directories,
symlinks, creating opens, writes, wrong guesses, early exits) and prints
every return value, errno, buffer hash, stat field, dirent, file position
and final file content.  Each (engine, depth, case) is one test, compared
with the same case run with foreactor off.
"""

import difflib
import json
import re

import pytest

from conftest import environment, fresh_directory, program, run

ENGINES = ("io_uring", "threads", "sync")
DEPTHS = (1, 4, 32)

# The cases of call_matrix, in its order (test_case_list_is_current checks).
CASES = (
    "open_read_close", "open_flags", "openat", "close", "read_sequential", "read_two_files",
    "read_mispredicted", "read_foreign_seeks_known", "read_foreign_seeks_unknown", "read_pipe",
    "pipe_other_calls", "pread_matrix", "pread_random", "write_sequential", "write_append",
    "write_errors", "pwrite_overlapping", "lseek_mix", "fstat_kinds", "fstatat_matrix",
    "stat_paths", "lstat_paths", "statx_matrix", "getdents_whole_directory", "getdents_rewind",
    "getdents_errors", "readv_matrix", "preadv_matrix", "writev_sequential", "pwritev_offsets",
    "copy_linked", "du_like", "early_exit_pread", "early_exit_open", "never_ready",
    "open_mispredicted_paths",
)

# (case, engine) -> reason, for differences known and not yet fixed.  Empty:
# every difference the matrix found has been fixed.
KNOWN_DIFFERENCES = {}

MISSING_LINE = re.compile(
    rb"^call_matrix: (\w+): result callbacks missing=(\d+) of (\d+)( \(wrong guesses\))?$")


@pytest.fixture(scope="module")
def places(fixture_tree, tmp_path_factory):
    """The fixture tree and one scratch path that every run reuses, so that
    paths print the same."""
    return fixture_tree, tmp_path_factory.mktemp("call_matrix") / "scratch"


def run_matrix(places, env, cases=()):
    fixture, scratch = places
    fresh_directory(scratch)
    return run([program("call_matrix"), fixture, scratch, *cases], env, timeout=600)


@pytest.fixture(scope="module")
def reference(places):
    """All cases with foreactor off, after one warm-up run."""
    run_matrix(places, environment())
    outcome = run_matrix(places, environment())
    assert outcome.returncode == 0, outcome
    return outcome


@pytest.fixture(scope="module")
def case_references(places):
    """Single-case runs with foreactor off, made when first needed."""
    cache = {}

    def reference_of(case):
        if case not in cache:
            outcome = run_matrix(places, environment(), [case])
            assert outcome.returncode == 0, outcome
            cache[case] = outcome
        return cache[case]

    return reference_of


def missing_callbacks(stderr: bytes, checked_only: bool = False) -> dict:
    """Per case: (visits whose result callback never came, visits made).
    With `checked_only`, cases that guess wrong on purpose are left out."""
    missing = {}
    for line in stderr.splitlines():
        match = MISSING_LINE.match(line)
        if match and not (checked_only and match.group(4)):
            missing[match.group(1).decode()] = (int(match.group(2)), int(match.group(3)))
    return missing


def assert_same_output(observed: bytes, expected: bytes):
    if observed == expected:
        return
    diff = difflib.unified_diff(expected.decode(errors="replace").splitlines(),
                                observed.decode(errors="replace").splitlines(),
                                "foreactor off", "foreactor on", lineterm="", n=1)
    shown = "\n".join(list(diff)[:80])
    pytest.fail(f"output differs:\n{shown}")


def statistics_by_graph(path) -> dict:
    with open(path) as stats:
        return json.load(stats)["graphs"]


def test_case_list_is_current(reference):
    listed = run([program("call_matrix"), "--list"], environment(), check=True)
    assert tuple(listed.stdout.decode().split()) == CASES


def test_every_case_runs_cleanly(reference):
    assert b"graph refused" not in reference.stdout
    assert set(missing_callbacks(reference.stderr)) == set(CASES)
    for case in CASES:
        assert f"== {case}:".encode() in reference.stdout, case
        assert f"{case}: result callback violations=0".encode() in reference.stdout, case
        assert f"{case}: descriptors left under fixture=0 scratch=0".encode() in reference.stdout


def test_reference_is_deterministic(places, reference):
    again = run_matrix(places, environment())
    assert_same_output(again.stdout, reference.stdout)


def _matrix_parameters():
    for engine in ENGINES:
        for depth in DEPTHS:
            for case in CASES:
                reason = KNOWN_DIFFERENCES.get((case, engine))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(engine, depth, case, marks=marks,
                                   id=f"{engine}-depth{depth}-{case}")


@pytest.mark.parametrize("engine,depth,case", list(_matrix_parameters()))
def test_case_identical_with_foreactor(engine, depth, case, places, case_references):
    expected = case_references(case)
    env = environment(FOREACTOR="1", FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH=str(depth))
    outcome = run_matrix(places, env, [case])
    assert outcome.returncode == expected.returncode, outcome
    assert_same_output(outcome.stdout, expected.stdout)
    # Every visit the program made got its result callback (exactly once and
    # in program order: violations are part of stdout, compared above).
    missing = missing_callbacks(outcome.stderr)
    assert case in missing, outcome.stderr[-2000:]
    checked = missing_callbacks(outcome.stderr, checked_only=True)
    assert checked.get(case, (0, 0))[0] == 0, f"result callbacks missing: {checked[case]}"


# Cases in which every engine but sync must serve calls from early results.
BUSY_CASES = ("read_sequential", "pread_random", "du_like", "statx_matrix", "copy_linked")


@pytest.mark.parametrize("engine", ENGINES)
def test_foreactor_is_at_work(engine, places, tmp_path):
    stats = tmp_path / "stats.json"
    # The matrix's files are cached: with page-cache awareness on, stats
    # quick from the start and reads found cached are left to the program.
    env = environment(FOREACTOR="1", FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH="8",
                      FOREACTOR_PAGE_CACHE="0", FOREACTOR_STATS=str(stats))
    outcome = run_matrix(places, env, BUSY_CASES)
    assert outcome.returncode == 0, outcome
    assert stats.exists(), f"no statistics written to {stats}"
    graphs = statistics_by_graph(stats)
    for case in BUSY_CASES:
        counters = graphs.get(f"matrix_{case}")
        assert counters is not None, sorted(graphs)
        assert counters["intercepted"] > 0, (case, counters)
        if engine == "sync":
            assert counters["consumed"] == 0, (case, counters)
        else:
            assert counters["consumed"] > 0, (case, counters)


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_depth_zero_is_plain(engine, places, reference):
    outcome = run_matrix(places, environment(FOREACTOR="1", FOREACTOR_DEPTH="0",
                                             FOREACTOR_ENGINE=engine))
    assert outcome.returncode == reference.returncode
    assert_same_output(outcome.stdout, reference.stdout)
