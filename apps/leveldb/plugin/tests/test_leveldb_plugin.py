"""The Version::Get plugin (apps/leveldb/plugin/) on small databases.

plugin_get_test.cc is compiled here with the plugin, --wrap of the
functions plugin.cmake names, libleveldb.a (apps/leveldb/build.sh) and
libforeactor.so.  Each test builds a fresh database (plain run), evicts it
from the page cache, and runs Gets whose every status and value the program
checks against its model; foreactor's statistics are read back.  (The
plugin reads table files only from the page cache: after a cold start it
predicts a table from the Get after the one that brought its index in.)

- chain: one table per level 0, 1 and 2 over the same keys; the first
  lookup of number 500 opens all three tables inside Version::Get (not
  predicted: the plugin learns a table from LevelDB's Table::Open), the
  second reads a data block in each (fill_cache off): check mode must see
  exactly the predicted calls and no divergence.
- levels: 20,000 random Gets over level-0, level-1 and level-2 files (and
  the files seek compactions make while they run), with and without a
  Bloom filter, for each engine at depth 2 and 16, and on two threads.
- the plain run (foreactor off) gives the same answers.

About 40 s on 2 cores (20 s of it compiling the test program once).
"""

import contextlib
import ctypes
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))
from leveldb_test_support import BUILD_DIR, ROOT, built, clean_environment, graph_statistics  # noqa: E402

sys.path.insert(0, str(ROOT))
from bench.common import machine, read_throttle  # noqa: E402

PLUGIN_DIR = HERE.parent
VERSION_GET = ("_ZN7leveldb7Version3GetERKNS_11ReadOptionsERKNS_9LookupKeyEPNSt7__cxx1112"
               "basic_stringIcSt11char_traitsIcESaIcEEEPNS0_8GetStatsE")


def wrapped_symbols():
    """Version::Get and the symbols plugin.cmake adds."""
    return [VERSION_GET] + re.findall(r"^\s+(\w+)\)?$", (PLUGIN_DIR / "plugin.cmake").read_text(),
                                      re.MULTILINE)


def compiled(with_plugin):
    """The test program, linked with the plugin (and libforeactor.so) or
    plain; rebuilt when a source changed."""
    leveldb_build = built()
    library = leveldb_build / "leveldb" / "libleveldb.a"
    foreactor = BUILD_DIR / "libforeactor.so"
    assert foreactor.exists(), f"{foreactor} missing: build foreactor first"
    name = "plugin_get_test_foreactor" if with_plugin else "plugin_get_test"
    output = BUILD_DIR / "leveldb-plugin-test" / name
    sources = [HERE / "plugin_get_test.cc", ROOT / "apps/leveldb/support/no_mmap_reads.cc"]
    inputs = sources + [library]
    if with_plugin:
        sources = sorted(PLUGIN_DIR.glob("*.cc")) + sources
        inputs = sources + sorted(PLUGIN_DIR.glob("*.h")) + [library, foreactor,
                                                             PLUGIN_DIR / "plugin.cmake",
                                                             ROOT / "include/foreactor/foreactor.hpp"]
    if output.exists() and all(p.stat().st_mtime < output.stat().st_mtime for p in inputs):
        return output
    output.parent.mkdir(parents=True, exist_ok=True)
    tree = ROOT / "third_party" / "leveldb-1.23"
    command = (["g++", "-std=c++20", "-O2", "-g", "-DNDEBUG", "-Wall", "-Wextra", "-Werror",
                "-DLEVELDB_PLATFORM_POSIX=1", f"-I{leveldb_build}/leveldb/include", f"-I{tree}",
                f"-I{tree}/include", f"-I{ROOT}/include", f"-I{ROOT}/apps/leveldb",
                f"-I{PLUGIN_DIR}", "-o", str(output)] + [str(s) for s in sources]
               + ([f"-Wl,--wrap={symbol}" for symbol in wrapped_symbols()] if with_plugin else [])
               + [str(library), "-lsnappy", "-lpthread"]
               + ([str(foreactor), f"-Wl,-rpath,{foreactor.parent}"] if with_plugin else []))
    subprocess.run(command, check=True, timeout=600)
    return output


@pytest.fixture(scope="module")
def program():
    """The test program linked with the plugin."""
    return compiled(with_plugin=True)


def evict(directory):
    """Drops the database's files from the page cache (our files only)."""
    for path in Path(directory).iterdir():
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)


def database(program, directory, shape, filter_kind, cold=True):
    """A fresh database; `cold`: evicted from the page cache (otherwise its
    files stay cached from being written, and the plugin, which reads table
    files only from the page cache, knows every table at the first Get)."""
    subprocess.run([str(program), "build", str(directory), shape, filter_kind], check=True,
                   env=clean_environment(), capture_output=True, timeout=120)
    if cold:
        evict(directory)
    return directory


def run(program, arguments, environment, cgroup_procs=None):
    """Runs the program (in the cgroup whose cgroup.procs file is
    `cgroup_procs`, if given); returns its summary line as a dict of ints."""
    join = None if cgroup_procs is None else (
        lambda: cgroup_procs.write_text(str(os.getpid())))
    completed = subprocess.run([str(program)] + [str(a) for a in arguments], env=environment,
                               capture_output=True, text=True, timeout=300, preexec_fn=join)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    words = completed.stdout.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def foreactor_on(stats_file, **settings):
    """foreactor on with `settings`; a depth given is exact, so that the
    early path runs whatever it costs on the small, cached test databases."""
    if "FOREACTOR_DEPTH" in settings:
        settings.setdefault("FOREACTOR_EXACT_DEPTH", 1)
    return clean_environment(FOREACTOR=1, FOREACTOR_STATS=stats_file, **settings)


# Calls in scopes of the chain lookups 500 (opens the three tables:
# unplanned), 500 (a data block in each of levels 0, 1, 2: planned; with
# filters only level 2's, one read: unplanned), 1500 (level 2 only, one
# read: unplanned) and 100 (levels 1 and 2 planned, the Get ends at level
# 1 with one call).  (scopes, calls) per filter kind.
CHAIN_CALLS = {"bloom": (1, 1), "nobloom": (2, 4)}


@pytest.mark.parametrize("filter_kind", ["bloom", "nobloom"])
def test_chain_check_mode_sees_the_predicted_calls(program, tmp_path, filter_kind):
    db = database(program, tmp_path / "db", "chain", filter_kind, cold=False)
    stats = tmp_path / "stats.json"
    result = run(program, ["lookup", db, "chain", filter_kind, 500, 500, 1500, 100],
                 foreactor_on(stats, FOREACTOR_CHECK=1))
    assert result == {"gets": 4, "found": 4, "mismatches": 0}
    counters = graph_statistics(stats)["leveldb_get"]
    assert (counters["scopes"], counters["intercepted"]) == CHAIN_CALLS[filter_kind]
    assert counters.get("passed_through", 0) == 0
    assert counters.get("check_divergences", 0) == 0


def test_the_plugin_s_records_leave_the_program_s_heap_as_plain_leaves_it(program, tmp_path):
    # The plugin keeps a record per open table (and the plan, the file
    # lists) in foreactor's private memory: malloc's heap grows over the
    # Gets that open the three tables as the plain program's does.
    # Records on the program's heap had made glibc consolidate its fast bins
    # at LevelDB's every block read.
    db = database(program, tmp_path / "db", "chain", "bloom", cold=False)
    lookups = ["lookup", db, "chain", "bloom", 500, 500, 1500, 100]
    growth = {}
    for name, binary, environment in (
            ("plain", compiled(with_plugin=False), clean_environment()),
            ("off", program, clean_environment()),
            ("on", program, foreactor_on(tmp_path / "stats.json", FOREACTOR_DEPTH=16))):
        environment["PLUGIN_TEST_HEAP_GROWTH"] = "1"
        result = run(binary, lookups, environment)
        assert (result["gets"], result["mismatches"]) == (4, 0)
        growth[name] = result["heap_growth"]
    # Within a few dozen bytes (glibc counts chunks held in its per-thread
    # caches as in use, and the thread's start-up differs); the three
    # tables' records on the heap had grown it by about 800 bytes more.
    assert growth["plain"] > 0
    assert abs(growth["off"] - growth["plain"]) <= 128, growth
    assert abs(growth["on"] - growth["plain"]) <= 128, growth


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_chain_reads_of_open_tables_are_issued_early(program, tmp_path, engine):
    db = database(program, tmp_path / "db", "chain", "nobloom", cold=False)
    stats = tmp_path / "stats.json"
    result = run(program, ["lookup", db, "chain", "nobloom", 500, 500],
                 foreactor_on(stats, FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH=16,
                              FOREACTOR_PAGE_CACHE=0))
    assert result == {"gets": 2, "found": 2, "mismatches": 0}
    counters = graph_statistics(stats)["leveldb_get"]
    # The second lookup's three data block reads were issued early and used.
    assert counters["intercepted"] == 3
    assert counters["consumed"] == counters["intercepted"]
    assert counters["mispredicted"] == 0 and counters["wasted"] == 0


def test_tables_leveldb_does_not_keep_open_are_never_planned(program, tmp_path):
    """With no table file kept open, Table::Open reads through a descriptor
    it closes again: a plan using it could read another file."""
    db = database(program, tmp_path / "db", "chain", "nobloom", cold=False)
    stats = tmp_path / "stats.json"
    environment = foreactor_on(stats, FOREACTOR_ENGINE="threads", FOREACTOR_DEPTH=16,
                               FOREACTOR_PAGE_CACHE=0)
    environment["PLUGIN_TEST_NO_OPEN_TABLE_FILES"] = "1"
    result = run(program, ["lookup", db, "chain", "nobloom", 500, 500, 100, 900], environment)
    assert result == {"gets": 4, "found": 4, "mismatches": 0}
    assert graph_statistics(stats).get("leveldb_get", {}).get("scopes", 0) == 0


def test_a_cold_block_is_planned_in_a_table_whose_other_blocks_were_cached(program, tmp_path):
    """Whether a block is cached is asked per block: the level-2 table's
    blocks found cached by five Gets (numbers 10-40 and 950 are in it
    alone) do not leave out its cold blocks after the database is evicted.
    (A rule per table left a table's next 32 reads out after 4 cached ones:
    the Gets of 500 and 700 planned only levels 0 and 1, 4 calls, and read
    level 2's block after them.)"""
    db = database(program, tmp_path / "db", "chain", "nobloom", cold=False)
    stats = tmp_path / "stats.json"
    # 300 opens the tables of levels 0 and 1 and reads level 2's block
    # (planned); 500 and 700 read a cold block in each of the three tables.
    numbers = [10, 20, 30, 40, 950, "evict", 300, "evict", 500, "evict", 700]
    result = run(program, ["lookup", db, "chain", "nobloom"] + numbers,
                 foreactor_on(stats, FOREACTOR_ENGINE="io_uring", FOREACTOR_DEPTH=16))
    assert result["gets"] == 8 and result["mismatches"] == 0
    counters = graph_statistics(stats)["leveldb_get"]
    assert counters["scopes"] == 3, counters
    assert counters["intercepted"] == 7, counters


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_reads_after_a_table_leveldb_opens_are_issued_early(program, tmp_path, engine):
    """A Get that opens tables still has the reads of the open tables after
    them issued early: Table::Open's calls pass by the scope.  (The plan
    used to end before the first table LevelDB had not opened: the Get of
    500 below made no scope.)"""
    db = database(program, tmp_path / "db", "chain", "nobloom", cold=False)
    stats = tmp_path / "stats.json"
    # 950 opens level 2's table alone; 500 opens those of levels 0 and 1,
    # then reads a cold block of level 2's.
    result = run(program, ["lookup", db, "chain", "nobloom", 950, "evict", 500],
                 foreactor_on(stats, FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH=16,
                              FOREACTOR_PAGE_CACHE=0))
    assert result == {"gets": 2, "found": 2, "mismatches": 0}
    counters = graph_statistics(stats)["leveldb_get"]
    assert counters["scopes"] == 1, counters
    assert counters["intercepted"] == 1 and counters["consumed"] == 1, counters
    assert counters["mispredicted"] == 0 and counters["wasted"] == 0, counters


def levels_run(program, tmp_path, filter_kind, settings, threads=1, gets=20000, cold=True):
    db = database(program, tmp_path / "db", "levels", filter_kind, cold)
    stats = tmp_path / "stats.json"
    environment = foreactor_on(stats, **settings) if settings else clean_environment()
    result = run(program, ["get", db, "levels", filter_kind, gets, threads], environment)
    return result, graph_statistics(stats).get("leveldb_get")


@pytest.fixture(scope="module")
def plain_found(program, tmp_path_factory):
    """Keys the plain run (foreactor off) finds, per filter kind: every run
    with foreactor must find the same (and the program checks each value)."""
    found = {}
    for filter_kind in ("bloom", "nobloom"):
        result, counters = levels_run(program, tmp_path_factory.mktemp(filter_kind), filter_kind,
                                      None)
        assert result["mismatches"] == 0 and counters is None
        found[filter_kind] = result["found"]
    return found


@pytest.mark.parametrize("filter_kind", ["bloom", "nobloom"])
@pytest.mark.parametrize("engine", ["io_uring", "threads", "sync"])
@pytest.mark.parametrize("depth", [2, 16])
def test_levels_gets_match_the_model(program, plain_found, tmp_path, filter_kind, engine, depth):
    result, counters = levels_run(program, tmp_path, filter_kind,
                                  {"FOREACTOR_ENGINE": engine, "FOREACTOR_DEPTH": depth,
                                   "FOREACTOR_PAGE_CACHE": 0})
    assert result == {"gets": 20000, "found": plain_found[filter_kind], "mismatches": 0}
    if filter_kind == "bloom":
        # The filters leave one read per Get (a false positive aside):
        # nothing to overlap, so hardly any Get is planned.
        assert counters.get("scopes", 0) < 1000, counters
        return
    # Planned: Gets with two or more reads (the level-0 files' data blocks
    # and deeper ones), before the seek compactions that the Gets start
    # merge the level-0 files (when depends on the background thread).
    assert counters["scopes"] > 100, counters
    if engine != "sync":
        assert counters["issued_early"] > 0.9 * counters["intercepted"], counters
        assert counters["consumed"] > 0.9 * counters["intercepted"], counters
        assert counters["mispredicted"] <= 0.01 * counters["intercepted"], counters


@pytest.mark.parametrize("filter_kind", ["bloom", "nobloom"])
def test_levels_check_mode_finds_no_divergence(program, tmp_path, filter_kind):
    result, counters = levels_run(program, tmp_path, filter_kind, {"FOREACTOR_CHECK": 1})
    assert result["mismatches"] == 0
    assert counters["check_divergences"] == 0, counters
    assert counters["passed_through"] <= 0.01 * counters["intercepted"], counters
    assert counters["reads_started_in_plans"] == 0, counters  # nothing runs early


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_cold_blocks_are_started_while_the_gets_are_planned(program, plain_found, tmp_path,
                                                           engine):
    """With an exact depth, a Get's first read plans the tables after it,
    deepest first, and a block found cold is started at once: the scope's
    peek head then finds it coming in (none left for it to start), and the
    reads stay in the Get's order (hardly any misprediction).  The first
    read itself is the scope's first, read by LevelDB's pread as the scope
    starts (not started by the plugin)."""
    result, counters = levels_run(program, tmp_path, "nobloom",
                                  {"FOREACTOR_ENGINE": engine, "FOREACTOR_DEPTH": 16,
                                   "FOREACTOR_EXACT_DEPTH": 1})
    assert result == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    assert counters["reads_started_in_plans"] > 100, counters
    assert (counters["found_present"] + counters["found_cached"]
            >= 0.9 * counters["intercepted"]), counters
    assert counters["reads_started"] <= 0.1 * counters["found_present"], counters
    assert counters["mispredicted"] <= 0.01 * counters["intercepted"], counters


def test_levels_two_threads(program, plain_found, tmp_path):
    result, counters = levels_run(program, tmp_path, "nobloom",
                                  {"FOREACTOR_ENGINE": "io_uring", "FOREACTOR_DEPTH": 8,
                                   "FOREACTOR_PAGE_CACHE": 0}, threads=2)
    assert result == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    assert counters["consumed"] > 0.9 * counters["intercepted"]


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_gets_served_from_memory_leave_the_scope_out(program, plain_found, tmp_path, engine):
    """Every table cached, with the automatic depth: Gets are planned late,
    at their first read found cold, and every read finds its pages cached:
    no Get is planned, none starts a read or runs in a scope; every answer
    stays the plain run's."""
    result, counters = levels_run(program, tmp_path, "nobloom",
                                  {"FOREACTOR_ENGINE": engine}, cold=False)
    assert result == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    # (A graph that never ran a scope or started a read is absent from the
    # statistics.)
    assert (counters or {}).get("scopes", 0) == 0, counters
    assert (counters or {}).get("reads_started_in_plans", 0) == 0, counters


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_late_gets_start_the_cold_blocks_after_their_first_cold_read(program, plain_found,
                                                                    tmp_path, engine):
    """Cold, with the automatic depth: a Get runs without a scope until one
    of its reads is found not cached; then the cold blocks of the tables it
    visits after that one are started (readahead(2)), and its later reads
    wait for them, polling the page cache (foreactor_scope_read_started).
    Every answer stays the plain run's, pread's results included where the
    first read found part of a block cached."""
    result, counters = levels_run(program, tmp_path, "nobloom", {"FOREACTOR_ENGINE": engine})
    assert result == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    assert counters["reads_started_in_plans"] > 100, counters
    assert counters.get("scopes", 0) == 0, counters
    # Every read of a Get after its plan started reads, the cold one that
    # planned it included.
    waited = counters["started_reads_polled"] + counters.get("started_reads_asleep", 0)
    assert waited > counters["reads_started_in_plans"], counters


def test_late_gets_wait_asleep_with_a_poll_budget_of_zero(program, plain_found, tmp_path):
    """FOREACTOR_POLL_US=0: the reads of a Get planned late are read by
    pread(2) as they come in, none polled; the answers stay the plain run's."""
    result, counters = levels_run(program, tmp_path, "nobloom",
                                  {"FOREACTOR_ENGINE": "io_uring", "FOREACTOR_POLL_US": 0})
    assert result == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    assert counters["reads_started_in_plans"] > 100, counters
    assert counters.get("started_reads_polled", 0) == 0, counters
    assert counters["started_reads_asleep"] > counters["reads_started_in_plans"], counters


def test_a_late_get_plans_the_tables_after_its_cold_read_only(program, tmp_path):
    """The chain's tables opened (500, cached), then evicted: the Get of 100
    visits levels 1 and 2 and ends at level 1.  Its read of level 1's block
    is found cold, so level 2's block, after it, is started: one start,
    though the Get never reads that block (a start is a hint: it costs the
    device a read, never an answer).  Without the late plan, the same Get
    started nothing with the automatic depth: its plan of two reads had
    its first one started too, and ran in a scope."""
    db = database(program, tmp_path / "db", "chain", "nobloom", cold=False)
    stats = tmp_path / "stats.json"
    result = run(program, ["lookup", db, "chain", "nobloom", 500, "evict", 100],
                 foreactor_on(stats, FOREACTOR_ENGINE="io_uring"))
    assert result == {"gets": 2, "found": 2, "mismatches": 0}
    counters = graph_statistics(stats)["leveldb_get"]
    assert counters["reads_started_in_plans"] == 1, counters
    assert counters.get("scopes", 0) == 0, counters


def test_after_cold_gets_a_get_is_planned_as_it_starts(program, tmp_path):
    """After an eviction, Gets of 900 (levels 1 and 2, found in 1) and 200
    (levels 0, 1, 2, found in 0) bring the blocks of levels 0 and 1 that a
    Get of 500 reads into the page cache, and not its level-2 block.  When
    8 or more of the thread's last 16 planned Gets found a cold block, that
    Get is planned as it starts: its tables after the first are planned,
    and its level-2 block is started (one start more than the same lookups
    without it).  After fewer cold Gets it is planned late: its first two
    reads are found cached, and its last, cold, has no table after it to
    plan (no start).  The program's reads from the disk are slowed (a
    throttled cgroup, where the machine has one): a fast virtual disk can
    serve an evicted block within the call that asks the page cache for it
    without waiting, and that Get is then not counted as cold."""
    db = database(program, tmp_path / "db", "chain", "nobloom", cold=False)
    disk = (machine.device_of(tmp_path) or {}).get("disk_dev")

    def starts_of_last_get(numbers):
        """The reads planning started in the last Get of `numbers`: the
        statistics written before it and at exit, in one process."""
        before, after = tmp_path / "before.json", tmp_path / "after.json"
        environment = foreactor_on(after, FOREACTOR_ENGINE="io_uring")
        environment["PLUGIN_TEST_STATS"] = str(before)
        with (read_throttle.read_throttled_cgroup(disk, 1_000_000) if disk
              else contextlib.nullcontext()) as procs:
            result = run(program, ["lookup", db, "chain", "nobloom"] + numbers[:-1] + ["stats"]
                         + numbers[-1:], environment, cgroup_procs=procs)
        assert result["mismatches"] == 0, result
        return [graph_statistics(path).get("leveldb_get", {}).get("reads_started_in_plans", 0)
                for path in (after, before)]

    cold_gets = [500] + ["evict", 500] * 9
    warm_up = ["evict", 900, 200]
    after, before = starts_of_last_get(cold_gets + warm_up + [500])
    assert before > 0 and after - before == 1, (before, after)
    after, before = starts_of_last_get([500] + warm_up + [500])
    assert after - before == 0, (before, after)


def test_tables_the_page_cache_holds_are_left_out_of_plans(program, plain_found, tmp_path):
    """Every table cached: even an exact depth plans no Get (the plugin asks
    foreactor::RangesInCache about each block it would read), so no Get
    runs in a scope; with page-cache awareness off, the same Gets are
    planned."""
    (tmp_path / "held").mkdir()
    (tmp_path / "planned").mkdir()
    held, counters = levels_run(program, tmp_path / "held", "nobloom",
                                {"FOREACTOR_ENGINE": "io_uring", "FOREACTOR_DEPTH": 16},
                                cold=False)
    assert held == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    # (A graph that never ran a scope is absent from the statistics.)
    assert counters is None or counters.get("scopes", 0) == 0, counters
    planned, counters = levels_run(program, tmp_path / "planned", "nobloom",
                                   {"FOREACTOR_ENGINE": "io_uring", "FOREACTOR_DEPTH": 16,
                                    "FOREACTOR_PAGE_CACHE": 0}, cold=False)
    assert planned == held
    assert counters["scopes"] > 100, counters


def test_sync_engine_with_the_automatic_depth_runs_no_scope(program, plain_found, tmp_path):
    """The sync engine issues nothing early: with the automatic depth the
    gate runs every Get plain, without timing a trial (a trial's win could
    only be noise).  Was decided by timing before, and a noisy machine kept
    17,177 of 20,000 Gets in scopes."""
    result, counters = levels_run(program, tmp_path, "nobloom", {"FOREACTOR_ENGINE": "sync"},
                                  cold=False)
    assert result == {"gets": 20000, "found": plain_found["nobloom"], "mismatches": 0}
    assert counters.get("scopes", 0) == 0, counters
    assert counters.get("gate_trials", 0) == 0, counters


def tail_cached(path, length=4096):
    """True when the page cache holds the last `length` bytes of `path`
    (cachestat(2)); None when the kernel cannot tell."""
    class Range(ctypes.Structure):
        _fields_ = [("offset", ctypes.c_uint64), ("length", ctypes.c_uint64)]

    class Counts(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in
                    ("cached", "dirty", "writeback", "evicted", "recently_evicted")]

    size = path.stat().st_size
    start = max(0, size - length)
    pages = (size - 1) // 4096 - start // 4096 + 1
    libc = ctypes.CDLL(None, use_errno=True)
    descriptor = os.open(path, os.O_RDONLY)
    try:
        counts = Counts()
        if libc.syscall(451, descriptor, ctypes.byref(Range(start, size - start)),
                        ctypes.byref(counts), 0) != 0:
            return None
        return counts.cached >= pages
    finally:
        os.close(descriptor)


def cached_table_tails(directory, wait_seconds, length=4096, expected=None):
    """The names of the table files whose last `length` bytes are cached,
    and how many table files there are; asked until `expected` of them are
    cached (every one when None) or `wait_seconds` have passed (read-ahead
    completes after the Get).  A test waits no longer than it must: a page
    read ahead is cached from the moment its read is queued, and every
    second of waiting is one in which anything else on the machine that
    empties the page cache makes the test fail."""
    tables = sorted(Path(directory).glob("*.ldb"))
    wanted = len(tables) if expected is None else expected
    deadline = time.monotonic() + wait_seconds
    while True:
        answers = [tail_cached(table, length) for table in tables]
        if None in answers:
            pytest.skip("the kernel has no cachestat(2)")
        if sum(answers) >= wanted or time.monotonic() >= deadline:
            return [table.name for table, cached in zip(tables, answers) if cached], len(tables)
        time.sleep(0.01)


def test_the_index_of_each_table_a_planned_get_has_not_opened_is_read_ahead(program, tmp_path):
    """Looking up 1500 opens the level-2 table of the chain alone; then,
    cold, looking up 200 opens the level-0 table (the key is there) and
    returns: the level-1 table is on its path, not opened.  Plain, only the
    level-0 table's end (footer and index) is read; planned, the plugin
    also reads ahead the end of the level-1 table, which a later Get's
    Table::Open would find cached.  (The table file's name comes from the
    last table LevelDB opened: the first Get of a process reads none
    ahead.)"""
    db = database(program, tmp_path / "db", "chain", "nobloom")
    lookups = ["lookup", db, "chain", "nobloom", 1500, "evict", 200]
    # The chain's tables by level: level 2 holds all keys (the largest
    # file), level 0 was written last (the highest file number).
    names = sorted(table.name for table in db.glob("*.ldb"))
    level2 = max(db.glob("*.ldb"), key=lambda table: table.stat().st_size).name
    level0 = names[-1]
    assert len(names) == 3 and level2 != level0, names
    result = run(program, lookups, clean_environment())
    assert (result["gets"], result["mismatches"]) == (2, 0)
    # A second table cached within half a second would be a read-ahead.
    assert cached_table_tails(db, wait_seconds=0.5, expected=2) == ([level0], 3)
    evict(db)
    # settle: the program waits for the read-ahead before it exits (its
    # thread would be cut short by the exit on a loaded machine).
    result = run(program, lookups + ["settle:2"],
                 foreactor_on(tmp_path / "stats.json", FOREACTOR_ENGINE="io_uring",
                              FOREACTOR_DEPTH=16))
    assert (result["gets"], result["mismatches"]) == (2, 0)
    level1_and_level0 = [name for name in names if name != level2]
    assert cached_table_tails(db, wait_seconds=10, expected=2) == (level1_and_level0, 3)


def test_once_a_get_finds_a_cold_block_every_table_s_index_is_read_ahead(program, tmp_path):
    """Looking up 100 opens the level-0 tables of the levels shape that hold
    it (the newest ones, down to the one whose first key is 100) and
    returns.  Plain, only those tables' ends are read.  With foreactor,
    looking 100 up again once the page cache lost the database finds its
    blocks cold, and its plan, the table cache's capacity known from the
    first Table::Open (all 8 tables fit), reads ahead the index of every
    table LevelDB has not opened: a later Get opening one waits for its
    data block alone.  (Before, only the tables on a planned Get's path
    were read ahead: 2 or 3 of 8.)"""
    db = database(program, tmp_path / "db", "levels", "nobloom")
    tables = sorted(table.name for table in db.glob("*.ldb"))
    lookups = ["lookup", db, "levels", "nobloom", 100]
    result = run(program, lookups, clean_environment())
    assert (result["gets"], result["mismatches"]) == (1, 0)
    # The footer's page: Table::Open reads it first (the index may start in
    # the page before).
    opened, _ = cached_table_tails(db, wait_seconds=0.5, length=48)
    assert 0 < len(opened) < len(tables) - 2, (opened, tables)
    not_opened = sorted(set(tables) - set(opened))
    evict(db)
    # settle: the program waits for the read-ahead before it exits (its
    # thread, cut short by the exit on a loaded machine, had carried out 5 of
    # the hints when the process ended, 6 times in 20 beside two busy loops).
    result = run(program, lookups + ["evict", 100, f"settle:{len(not_opened)}"],
                 foreactor_on(tmp_path / "stats.json", FOREACTOR_ENGINE="io_uring",
                              FOREACTOR_DEPTH=16))
    assert (result["gets"], result["mismatches"]) == (2, 0)
    cached, _ = cached_table_tails(db, wait_seconds=10, length=48, expected=len(not_opened))
    assert set(not_opened) <= set(cached), (cached, not_opened)


@pytest.mark.parametrize("depth", [16, "auto"])
def test_gets_served_from_memory_read_no_index_ahead(program, tmp_path, depth):
    """Looking up 100 twice with the tables it visits cached: every block
    the Gets read is in the page cache, so neither reads ahead the index of
    a table LevelDB has not opened (a database held in memory would pay
    for hinting every table's index, and gain nothing).  (Planned at its
    first read, with an exact depth, a Get still reads ahead the index of
    each table on its path LevelDB has not opened: test_the_index_of_each_
    table_a_planned_get_has_not_opened_is_read_ahead.)  The program waits
    for every table's index before it exits, at most 10 s: hints would have
    been carried out."""
    db = database(program, tmp_path / "db", "levels", "nobloom")
    lookups = ["lookup", db, "levels", "nobloom", 100, 100]
    result = run(program, lookups, clean_environment())
    assert (result["gets"], result["mismatches"]) == (2, 0)
    opened, tables = cached_table_tails(db, wait_seconds=0.5, length=48)
    assert 0 < len(opened) < tables - 2, (opened, tables)
    settings = {"FOREACTOR_ENGINE": "io_uring"}
    if depth != "auto":
        settings["FOREACTOR_DEPTH"] = depth
    result = run(program, lookups + [f"settle:{tables}"],
                 foreactor_on(tmp_path / "stats.json", **settings))
    assert (result["gets"], result["mismatches"]) == (2, 0)
    cached, _ = cached_table_tails(db, wait_seconds=0, length=48)
    if depth == "auto":  # planned only at a read not wholly cached: none
        assert cached == opened
    else:  # planned at each first read, which reads ahead the tables on the path not opened
        assert set(opened) <= set(cached) and len(cached) < tables, (cached, opened)
