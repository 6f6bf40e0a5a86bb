"""LevelDB 1.23's own test programs, built from the unmodified release
sources, pass with the foreactor plugin linked in and foreactor on (io_uring
and the thread pool, depth 8, reads issued early even when cached), and as
LevelDB ships them (plain).

What runs by default and why (times on 2 busy cores): every quick program
(under 7 s each; 75 runs in about 15 s on a quiet machine); db_test (about
100 s, the main test of DB::Get: every option set, snapshots, compactions,
Bloom filters) and issue320_test (randomized Put/Get/Delete with snapshots,
about 40 s) with io_uring only; about 2 minutes in all.  With
FOREACTOR_LONG_TESTS=1 (./run test --long) every program runs with every
engine.
"""

import os
import subprocess

import pytest

from leveldb_test_support import (clean_environment, foreactor_environment, graph_statistics,
                                  program, reads_ahead)

LONG = os.environ.get("FOREACTOR_LONG_TESTS") == "1"

# Programs under about 2 s.
QUICK = ["arena_test", "bloom_test", "cache_test", "coding_test", "corruption_test",
         "crc32c_test", "dbformat_test", "env_posix_test", "env_test", "fault_injection_test",
         "filename_test", "filter_block_test", "hash_test", "issue200_test", "log_test",
         "logging_test", "memenv_test", "no_destructor_test", "recovery_test", "skiplist_test",
         "status_test", "table_test", "version_edit_test", "version_set_test",
         "write_batch_test"]
# Programs of 10 s and more: (name, engines by default).
SLOW = [("db_test", ("io_uring",)), ("issue320_test", ("io_uring",)),
        ("autocompact_test", ()), ("issue178_test", ())]
# Programs whose tests make Gets that read two or more tables' data blocks,
# so the plugin's graph must have run (scopes > 0) and issued reads early.
# (recovery_test's and fault_injection_test's Gets read one table at most:
# nothing to overlap, the plugin leaves them unplanned.)
GET_CALLERS = {"db_test", "issue320_test"}
# Tests of LevelDB's that fail now and then as LevelDB ships them, without
# foreactor: DBTest.HiddenValuesAreRemoved failed 1 time in 20 runs of the
# plain db_test on the development VM (its Size() bounds depend on when the
# background compaction runs).  They are left out of every run, plain or not.
FLAKY_AS_SHIPPED = {"db_test": ["DBTest.HiddenValuesAreRemoved"]}


def cases():
    for name in QUICK:
        for engine in ("plain", "io_uring", "threads"):
            yield pytest.param(name, engine, id=f"{name}-{engine}")
    for name, engines in SLOW:
        for engine in ("plain", "io_uring", "threads"):
            if LONG or engine in engines:
                yield pytest.param(name, engine, id=f"{name}-{engine}")


@pytest.mark.parametrize("name,engine", list(cases()))
def test_leveldb_program_passes(name, engine, tmp_path):
    foreactor = engine != "plain"
    executable = program(name, foreactor)
    if foreactor:
        environment = foreactor_environment(engine, 8, tmp_path / "stats.json")
    else:
        environment = clean_environment()
    # LevelDB's tests put their databases under TEST_TMPDIR.
    environment["TEST_TMPDIR"] = str(tmp_path)
    command = [str(executable)]
    if name in FLAKY_AS_SHIPPED:
        command.append("--gtest_filter=-" + ":".join(FLAKY_AS_SHIPPED[name]))
    completed = subprocess.run(command, env=environment, capture_output=True,
                               text=True, timeout=1200)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert "[  PASSED  ]" in completed.stdout
    assert "FAILED" not in completed.stdout
    if foreactor and name in GET_CALLERS:
        graphs = graph_statistics(tmp_path / "stats.json")
        assert any(g.get("scopes", 0) > 0 and reads_ahead(g) > 0
                   for g in graphs.values()), graphs
