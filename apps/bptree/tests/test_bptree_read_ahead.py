"""The bptree tool with foreactor's read-ahead streams (runtime/read_ahead_stream.h).

A range scan of a tree built by random-order inserts reads leaves scattered
over the file: foreactor reads the 1 MiB regions they fall in ahead of the
scan.  Checked here, for each engine, with the tree's pages evicted from the
page cache first:

  - the scan prints the plain tool's count and checksum, with a stream
    started and region reads made, none of them failing;
  - the stream starts ahead of the scan's leaf loop, once its inner walk is
    done (the scan plugin's foreactor_scope_look_ahead), and hints its
    regions;
  - a bulk-loaded tree, whose leaves the scan reads in file order, gets
    one in-order stream from the look-ahead, whose one chain reads its
    first regions, and prints the same;
  - a short scan of it gets no chain, and its leaf reads are left to the
    kernel's read-ahead (no probe or early read of a single leaf), in each
    of the scans of a process;
  - FOREACTOR_READ_AHEAD=0 turns streams off;
  - a scan of a tree in the page cache reads no region.

Needs FOREACTOR_BUILD_DIR (default <repo>/build) with the targets bptree and
bptree_foreactor built, and a file system on which POSIX_FADV_DONTNEED
evicts clean pages (not tmpfs); a few seconds.
"""

import os
import shutil
import subprocess
import time

import pytest

import bptree_test_support
from bptree_test_support import FOREACTOR_TOOL, PLAIN_TOOL, graph_statistics, run, scan_result

KEYS = 100_000
# The bulk-loaded tree's full scan must outlast a batch of the read-ahead
# stream (2,048 reads) to get a chain: 3,125 leaves.
BULK_KEYS = 200_000
DEGREE = 64
FULL_RANGE = ("0", "0xffffffffffffffff")

pytestmark = pytest.mark.skipif(not bptree_test_support.TOOLS_BUILT,
                                reason=bptree_test_support.NOT_BUILT)


def cached_bytes(path):
    """Bytes of `path` in the page cache, as fincore(1) counts them."""
    completed = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES",
                                str(path)], capture_output=True, text=True, check=True)
    return int(completed.stdout.split()[0])


def evict(path):
    """Drops the clean pages of `path` from the page cache.  Pages still in
    another CPU's batch of pages on their way to the LRU lists are not
    dropped by one POSIX_FADV_DONTNEED; it is repeated, a few milliseconds
    apart, until fincore(1) counts none (or 50 tries; cold_scan() checks)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        for _ in range(50):
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
            if cached_bytes(path) == 0:
                return
            time.sleep(0.005)
    finally:
        os.close(descriptor)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """{'bulk': path, 'insert': path}: the same pairs, bulk loaded and inserted."""
    if shutil.which("fincore") is None:
        pytest.skip("fincore(1) is not installed")
    directory = tmp_path_factory.mktemp("bptree_read_ahead")
    plain = bptree_test_support.environment()
    paths = {"bulk": directory / "bulk.db", "insert": directory / "insert.db"}
    run(PLAIN_TOOL, "load", paths["bulk"], "--count", BULK_KEYS, "--degree", DEGREE, env=plain)
    run(PLAIN_TOOL, "insert", paths["insert"], "--count", KEYS, "--degree", DEGREE, env=plain)
    evict(paths["insert"])
    if cached_bytes(paths["insert"]) > 0:
        pytest.skip(f"the file system of {directory} keeps pages POSIX_FADV_DONTNEED names")
    return paths


def cold_scan(path, environment, key_range=FULL_RANGE):
    """A scan of `key_range` (all keys by default) of `path` with its pages
    evicted first; its output."""
    evict(path)
    assert cached_bytes(path) == 0, f"{path} is still in the page cache after eviction"
    return scan_result(run(FOREACTOR_TOOL, "scan", path, *key_range, env=environment))


# A few leaves of the bulk-loaded tree, in file order.
SHORT_RANGE = ("0x1000000000000000", "0x1300000000000000")


def short_cold_scan_statistics(trees, environment, stats):
    """A cold scan of SHORT_RANGE of the bulk-loaded tree under
    `environment`, checked against plain's output; the scan graph's
    statistics, from `stats`."""
    expected = scan_result(run(PLAIN_TOOL, "scan", trees["bulk"], *SHORT_RANGE,
                               env=bptree_test_support.environment()))
    assert cold_scan(trees["bulk"], environment, SHORT_RANGE) == expected
    return graph_statistics(stats, "bptree_scan")


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_a_scattered_scan_reads_its_regions_ahead_and_prints_the_same(trees, tmp_path, engine):
    expected = scan_result(run(PLAIN_TOOL, "scan", trees["insert"], *FULL_RANGE,
                               env=bptree_test_support.environment()))
    stats = tmp_path / "stats.json"
    assert cold_scan(trees["insert"], bptree_test_support.environment(engine, stats)) == expected
    scan = graph_statistics(stats, "bptree_scan")
    assert scan["read_ahead_streams"] >= 1, scan
    # Started when the inner walk ended, before the leaf loop's first read.
    assert scan["read_ahead_streams_ahead"] == scan["read_ahead_streams"], scan
    assert scan["read_ahead_streams_in_order"] == 0, scan
    assert scan["read_ahead_requests"] >= 1, scan
    assert scan["read_ahead_bytes"] >= scan["read_ahead_requests"] * 64 * 1024
    assert scan["read_ahead_errors"] == 0
    assert scan["mispredicted"] == 0


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_a_scan_in_file_order_reads_its_first_regions_ahead_and_prints_the_same(
        trees, tmp_path, engine):
    expected = scan_result(run(PLAIN_TOOL, "scan", trees["bulk"], *FULL_RANGE,
                               env=bptree_test_support.environment()))
    stats = tmp_path / "stats.json"
    assert cold_scan(trees["bulk"], bptree_test_support.environment(engine, stats)) == expected
    scan = graph_statistics(stats, "bptree_scan")
    assert scan["read_ahead_streams"] == 1, scan
    assert scan["read_ahead_streams_in_order"] == 1, scan
    assert scan["read_ahead_streams_ahead"] == 1, scan
    # The regions of up to 8,192 leaves of 8 KiB, read by the stream's fill:
    # at most 64 of 1 MiB.  (A scan shorter than 2,048 leaves gets none: the
    # next test.)
    assert 1 <= scan["read_ahead_requests"] <= 64, scan
    assert scan["read_ahead_bytes"] <= scan["read_ahead_requests"] * 1024 * 1024
    assert scan["read_ahead_errors"] == 0
    assert scan["mispredicted"] == 0


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_a_short_scan_in_file_order_is_left_to_the_kernels_read_ahead(trees, tmp_path, engine):
    # A few leaves in file order: no chain, and no probe or early read of
    # a single leaf breaks the kernel's read-ahead of the scan.  At most
    # 256 of them are left before the page cache is asked anything: no
    # stream at all.
    stats = tmp_path / "stats.json"
    scan = short_cold_scan_statistics(trees, bptree_test_support.environment(engine, stats), stats)
    assert scan["read_ahead_streams"] == 0, scan
    assert scan["read_ahead_requests"] == 0, scan
    assert scan["issued_early"] == 0, scan
    assert scan["found_cached"] == 0 and scan["reads_started"] == 0, scan
    # The leaves are all the scan has left to read once the look-ahead knows
    # them: the scope stops following its graph there.
    assert scan["scopes_left_in_file_order"] == 1 and scan["intercepted"] == 0, scan


def test_a_short_scan_in_file_order_without_streams_is_left_to_the_kernels_read_ahead(
        trees, tmp_path):
    # With read-ahead streams off, the peek head still sees the cold run in
    # file order and leaves its reads to the program (before: each leaf
    # probed and read on its own, 7x plain's time).
    stats = tmp_path / "stats.json"
    scan = short_cold_scan_statistics(
        trees, bptree_test_support.environment("io_uring", stats, read_ahead=0), stats)
    assert scan["read_ahead_streams"] == 0, scan
    assert scan["issued_early"] == 0, scan
    probed_or_started = scan["found_cached"] + scan["found_present"] + scan["reads_started"]
    assert scan["left_in_file_order"] > probed_or_started, scan


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_every_short_scan_of_a_process_is_left_in_file_order(trees, tmp_path, engine):
    # After the first scan the tree finds its inner pages in its own cache,
    # so the plugin's plan of the walk fails and the leaves are known only
    # at the leaf loop: the plugin looks ahead there too, and each scan's
    # short run in file order is left to the page cache (before: only the
    # first scan's; the later ones had every leaf read served through the
    # scope, 1.2x plain's time on a hot 64-leaf scan).
    repeat = 3
    expected = scan_result(run(PLAIN_TOOL, "scan", trees["bulk"], *SHORT_RANGE,
                               env=bptree_test_support.environment()))
    stats = tmp_path / "stats.json"
    lines = run(FOREACTOR_TOOL, "scan", trees["bulk"], *SHORT_RANGE, "--repeat", repeat,
                env=bptree_test_support.environment(engine, stats)).splitlines()
    assert [scan_result(line) for line in lines] == [expected] * repeat
    scan = graph_statistics(stats, "bptree_scan")
    assert scan["scopes"] == repeat, scan
    assert scan["scopes_left_in_file_order"] == repeat and scan["intercepted"] == 0, scan


def test_the_setting_turns_streams_off(trees, tmp_path):
    stats = tmp_path / "stats.json"
    cold_scan(trees["insert"], bptree_test_support.environment("io_uring", stats, read_ahead=0))
    scan = graph_statistics(stats, "bptree_scan")
    assert scan["read_ahead_streams"] == 0
    assert scan["read_ahead_requests"] == 0


def test_a_cached_tree_is_not_read_again(trees, tmp_path):
    stats = tmp_path / "stats.json"
    environment = bptree_test_support.environment("io_uring", stats)
    run(FOREACTOR_TOOL, "scan", trees["insert"], *FULL_RANGE, env=environment)
    run(FOREACTOR_TOOL, "scan", trees["insert"], *FULL_RANGE, env=environment)  # now cached
    scan = graph_statistics(stats, "bptree_scan")
    assert scan["read_ahead_streams"] == 0
    assert scan["read_ahead_requests"] == 0
