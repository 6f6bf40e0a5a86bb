"""The bptree tool with foreactor on files opened with O_DIRECT (`--direct`).

With direct I/O every leaf pread of a scan and every leaf pwrite of a bulk
load goes to the device, so these are the calls foreactor can overlap.  The
plugins are unchanged: the graph's calls are the same preads and pwrites
(foreactor's own buffers are page-aligned, as O_DIRECT needs).  Checked
here, on a bulk-loaded tree and on one built by random-order inserts
(scattered leaves), for each engine:

  - a direct scan prints the plain tool's count and checksum, and its reads
    are consumed from the graph with no misprediction;
  - a direct load writes the byte-identical file, its writes issued early;
  - the page-cache probe (RWF_NOWAIT) must not
    take direct reads for page-cache hits;
  - an O_DIRECT pread into a misaligned buffer
    must fail with EINVAL under foreactor as it does plain (the example
    program's read loop and plugin, compiled here, read into buffer + 1).

Needs FOREACTOR_BUILD_DIR (default <repo>/build) with the targets bptree and
bptree_foreactor built (and a C/C++ compiler for the last test); about
15 seconds.
"""

import os
import shutil
import subprocess

import pytest

import bptree_test_support
from bptree_test_support import (BUILD_DIR, FOREACTOR_TOOL, PLAIN_TOOL, REPO, graph_statistics,
                                 run, scan_result, sha256)

KEYS = 100_000
DEGREE = 64
FULL_RANGE = ("0", "0xffffffffffffffff")
PART_RANGE = ("0x1000000000000000", "0xd000000000000000")

pytestmark = pytest.mark.skipif(not bptree_test_support.TOOLS_BUILT,
                                reason=bptree_test_support.NOT_BUILT)


def environment(engine=None, stats=None, **settings):
    """The environment of one run: foreactor off, or on with `engine` at depth 16."""
    return bptree_test_support.environment(engine, stats, **({"depth": 16} | settings))


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """{'bulk': path, 'insert': path}: the same pairs, bulk loaded and inserted."""
    directory = tmp_path_factory.mktemp("bptree_direct")
    probe = directory / "probe"
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644))
    except OSError:
        pytest.skip(f"the file system of {directory} refuses O_DIRECT")
    paths = {"bulk": directory / "bulk.db", "insert": directory / "insert.db"}
    run(PLAIN_TOOL, "load", paths["bulk"], "--count", KEYS, "--degree", DEGREE, env=environment())
    run(PLAIN_TOOL, "insert", paths["insert"], "--count", KEYS, "--degree", DEGREE,
        env=environment())
    # Written back, so that no test depends on dirty pages (an O_DIRECT read
    # of a dirty range waits for its writeback; with RWF_NOWAIT it fails).
    for path in paths.values():
        descriptor = os.open(path, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)
    return paths


@pytest.mark.parametrize("engine", ["io_uring", "threads", "sync"])
@pytest.mark.parametrize("tree", ["bulk", "insert"])
def test_direct_scan_prints_the_plain_result(trees, tree, engine, tmp_path):
    path = trees[tree]
    for low, high in (FULL_RANGE, PART_RANGE):
        expected = scan_result(run(PLAIN_TOOL, "scan", path, low, high, env=environment()))
        stats = tmp_path / "stats.json"
        got = run(FOREACTOR_TOOL, "scan", path, low, high, "--direct",
                  env=environment(engine, stats))
        assert scan_result(got) == expected
        counters = graph_statistics(stats, "bptree_scan")
        assert counters["mispredicted"] == 0
        assert counters["wasted"] == 0
        if engine != "sync":
            assert counters["issued_early"] > 0
            assert counters["consumed"] == counters["issued_early"]


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_direct_load_writes_the_same_file(tmp_path, engine):
    plain = tmp_path / "plain.db"
    run(PLAIN_TOOL, "load", plain, "--count", 20_000, "--degree", DEGREE, env=environment())
    direct = tmp_path / "direct.db"
    stats = tmp_path / "stats.json"
    try:
        run(FOREACTOR_TOOL, "load", direct, "--count", 20_000, "--degree", DEGREE, "--direct",
            env=environment(engine, stats))
    except AssertionError as error:
        if "O_DIRECT" in str(error):
            pytest.skip(f"the file system of {tmp_path} refuses O_DIRECT")
        raise
    assert sha256(direct) == sha256(plain)
    counters = graph_statistics(stats, "bptree_load")
    assert counters["issued_early"] > 0
    assert counters["consumed"] == counters["issued_early"]
    assert counters["mispredicted"] == 0


def test_direct_reads_are_not_taken_for_page_cache_hits(trees, tmp_path):
    stats = tmp_path / "stats.json"
    run(FOREACTOR_TOOL, "scan", trees["insert"], *FULL_RANGE, "--direct",
        env=environment("io_uring", stats))
    counters = graph_statistics(stats, "bptree_scan")
    assert counters["found_cached"] == 0
    assert counters["served_from_cache"] == 0
    assert counters["issued_early"] > 0


MISALIGNED_READER = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include "read_blocks.h"
int main(int argc, char **argv) {
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  if (fd < 0) { perror("open"); return 2; }
  char *buffer = aligned_alloc(4096, 2 * BLOCK_SIZE);
  uint64_t offsets[32];
  for (int i = 0; i < 32; ++i) offsets[i] = (uint64_t)(i * 7 % 32) * BLOCK_SIZE;
  errno = 0;
  uint64_t checksum = read_blocks(fd, offsets, 32, buffer + 1);  /* misaligned */
  printf("checksum %llx errno %d\n", (unsigned long long)checksum, errno);
  return 0;
}
"""


def test_misaligned_direct_read_fails_as_plain(tmp_path):
    compilers = shutil.which("cc"), shutil.which("c++")
    library = BUILD_DIR / "libforeactor.so"
    if None in compilers or not library.exists():
        pytest.skip("needs cc, c++ and libforeactor.so")
    example = REPO / "examples" / "random_read"
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(32 * 8192))
    try:
        os.close(os.open(data, os.O_RDONLY | os.O_DIRECT))
    except OSError:
        pytest.skip(f"the file system of {tmp_path} refuses O_DIRECT")
    (tmp_path / "main.c").write_text(MISALIGNED_READER)
    objects = []
    for source, compiler in ((tmp_path / "main.c", compilers[0]),
                             (example / "read_blocks.c", compilers[0]),
                             (example / "random_read_plugin.cc", compilers[1])):
        output = tmp_path / (source.name + ".o")
        flags = ["-std=c++20"] if source.suffix == ".cc" else []
        subprocess.run([compiler, *flags, "-O1", "-I", str(example), "-I", str(REPO / "include"),
                        "-c", str(source), "-o", str(output)], check=True)
        objects.append(str(output))
    plain, wrapped = tmp_path / "plain", tmp_path / "wrapped"
    subprocess.run([compilers[1], *objects[:2], "-o", str(plain)], check=True)
    subprocess.run([compilers[1], *objects, "-Wl,--wrap=read_blocks", str(library),
                    f"-Wl,-rpath,{BUILD_DIR}", "-o", str(wrapped)], check=True)

    expected = run(plain, data, env=environment())
    assert "errno 22" in expected  # the kernel refuses the misaligned buffer
    for engine in ("io_uring", "threads"):
        got = run(wrapped, data, env=environment(engine, tmp_path / "stats.json"))
        assert got == expected, engine
