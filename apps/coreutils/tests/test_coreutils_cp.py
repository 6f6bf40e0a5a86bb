"""cp (coreutils 9.1) with its copy-loop plugin, `cp --reflink=never
--sparse=never`, must produce files byte-identical to the source and with
the metadata stock cp gives them, under every engine and depth; its
statistics must show linked read/write chunks issued early, all predicted.

cp reads a file in chunks of 128 KiB (io_blksize) here, or of the file's
size + 1 rounded up to that for smaller files; the sizes below cover a last
partial chunk, an exact multiple (the loop ends with a 0-byte read at EOF),
an empty file and a one-byte file.

Needs apps/coreutils/build.sh to have fetched coreutils (skips otherwise).
Run with: python3 -m pytest -q apps/coreutils/tests
"""

import os
import stat
import subprocess

import pytest

from coreutils_test_support import (DEPTHS, ENGINES, clean_environment, foreactor_environment,
                                    graph_statistics, programs, run)

GRAPH = "cp_copy_chunks"
CHUNK = 128 * 1024
READ_WRITE = ["--reflink=never", "--sparse=never"]

SIZES = {
    "partial_last_chunk": 10 * CHUNK + 12345,
    "exact_multiple": 12 * CHUNK,
    "empty": 0,
    "one_byte": 1,
    "below_one_chunk": CHUNK - 1,
    "large": 5 * 1024 * 1024 + 1,
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    base = tmp_path_factory.mktemp("cp_sources")
    paths = {}
    for name, size in SIZES.items():
        path = base / name
        path.write_bytes(os.urandom(size))
        os.chmod(path, 0o640)
        paths[name] = path
    return paths


def metadata(path):
    status = os.stat(path)
    return (stat.S_IFMT(status.st_mode), stat.S_IMODE(status.st_mode), status.st_size,
            status.st_uid, status.st_gid)


def drop_from_page_cache(path):
    """Writes `path` back and drops its pages from the page cache, so that
    the next copy reads it from the device."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
        os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def takes_direct_reads(path):
    """True for the file systems the runtime sends direct reads to
    (runtime/direct_reads.h): ext2/3/4, XFS, btrfs, F2FS."""
    kind = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True,
                          text=True).stdout.strip()
    return kind in ("ext2/ext3", "xfs", "btrfs", "f2fs")


def copy_both(binaries, source, directory, options, environment, cold=False):
    """Copies `source` with stock cp and with cp-foreactor, each from the
    device when `cold`; returns both destinations."""
    stock = directory / "stock"
    ours = directory / "ours"
    if cold:
        drop_from_page_cache(source)
    run([binaries["cp"], *options, source, stock], clean_environment())
    if cold:
        drop_from_page_cache(source)
    run([binaries["cp-foreactor"], *options, source, ours], environment)
    return stock, ours


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("name", sorted(SIZES))
def test_copy_identical_and_stats(sources, tmp_path, engine, depth, name):
    binaries = programs()
    source = sources[name]
    stats_file = tmp_path / "stats.json"
    # The sources were just written, so they are in the page cache, where
    # foreactor would find the reads and issue nothing early (the test after
    # this one): page-cache awareness is off here to test early issue.
    environment = foreactor_environment(engine, depth, stats_file)
    environment["FOREACTOR_PAGE_CACHE"] = "0"
    stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE, environment)
    assert ours.read_bytes() == source.read_bytes()
    assert metadata(ours) == metadata(stock)
    statistics = graph_statistics(stats_file, GRAPH)
    assert statistics.get("scopes") == 1, statistics
    assert statistics["mispredicted"] == 0, statistics
    full_chunks = SIZES[name] // CHUNK
    if engine != "sync" and full_chunks >= 3:
        # Chunk 0 runs as the program makes it (the destination is not known
        # yet); from chunk 1 on the reads are issued early, and the write
        # pipeline sends each full chunk's write once its read completed and
        # the writes before it did in full (never a write after one that
        # failed or came back short: docs/RELIABILITY.md, finding 14).
        assert statistics["issued_early"] >= 2 * (full_chunks - 2), statistics
        assert statistics["consumed"] == statistics["issued_early"], statistics
        assert statistics["bytes_early"] >= (full_chunks - 2) * CHUNK, statistics
    if engine == "sync":
        assert statistics["issued_early"] == 0, statistics


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
def test_cached_source_is_copied_without_early_reads(sources, tmp_path, engine):
    """A source in the page cache: the reads (heads of read-write pairs) are
    found there when looked ahead at, and only their writes go early, through
    the write pipeline."""
    binaries = programs()
    source = sources["partial_last_chunk"]
    stats_file = tmp_path / "stats.json"
    stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE,
                            foreactor_environment(engine, 16, stats_file))
    assert ours.read_bytes() == source.read_bytes()
    assert metadata(ours) == metadata(stock)
    statistics = graph_statistics(stats_file, GRAPH)
    full_chunks = SIZES["partial_last_chunk"] // CHUNK
    # The reads at the end may go early too: the partial last chunk and the
    # read that returns 0 come back short from the page cache, which a probe
    # does not count as found.
    assert statistics["issued_early"] <= (full_chunks - 1) + 2, statistics
    assert statistics["consumed"] >= full_chunks - 2, statistics
    assert statistics["found_cached"] + statistics["served_from_cache"] >= full_chunks - 1, statistics
    assert statistics["mispredicted"] == 0, statistics


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
def test_preserved_timestamps_and_overwrite(sources, tmp_path, engine):
    """-p sets times and mode as stock cp does; overwriting a longer file
    truncates it as stock cp does."""
    binaries = programs()
    source = sources["partial_last_chunk"]
    environment = foreactor_environment(engine, 16, tmp_path / "stats.json")
    stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE + ["-p"], environment)
    assert ours.read_bytes() == source.read_bytes()
    assert os.stat(ours).st_mtime_ns == os.stat(stock).st_mtime_ns == os.stat(source).st_mtime_ns
    assert metadata(ours) == metadata(stock)

    longer = sources["large"]
    run([binaries["cp-foreactor"], *READ_WRITE, longer, ours], environment)
    run([binaries["cp-foreactor"], *READ_WRITE, source, ours], environment)
    assert ours.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
def test_recursive_copy_one_scope_per_file(sources, tmp_path, engine):
    binaries = programs()
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    for index, name in enumerate(sorted(SIZES)):
        target = tree / ("sub" if index % 2 else ".") / name
        target.write_bytes(sources[name].read_bytes())
    stats_file = tmp_path / "stats.json"
    run([binaries["cp-foreactor"], "-r", *READ_WRITE, tree, tmp_path / "copy"],
        foreactor_environment(engine, 16, stats_file))
    copied = sorted(path.relative_to(tmp_path / "copy")
                    for path in (tmp_path / "copy").rglob("*") if path.is_file())
    originals = sorted(path.relative_to(tree) for path in tree.rglob("*") if path.is_file())
    assert copied == originals
    for relative in originals:
        assert (tmp_path / "copy" / relative).read_bytes() == (tree / relative).read_bytes()
    statistics = graph_statistics(stats_file, GRAPH)
    assert statistics["scopes"] == len(SIZES)
    assert statistics["mispredicted"] == 0


def test_default_path_uses_no_scope_and_copies(sources, tmp_path):
    """Without --reflink=never cp copies with copy_file_range: the plugin
    stays out of the way, and the copy is still exact."""
    binaries = programs()
    source = sources["large"]
    stats_file = tmp_path / "stats.json"
    stock, ours = copy_both(binaries, source, tmp_path, [],
                            foreactor_environment("io_uring", 16, stats_file))
    assert ours.read_bytes() == source.read_bytes() == stock.read_bytes()
    assert graph_statistics(stats_file, GRAPH).get("scopes", 0) == 0


def test_foreactor_off_copies_the_same(sources, tmp_path):
    binaries = programs()
    source = sources["partial_last_chunk"]
    stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE, clean_environment())
    assert ours.read_bytes() == source.read_bytes()
    assert metadata(ours) == metadata(stock)


@pytest.mark.parametrize("options", (["--reflink=never", "--sparse=always"],
                                     ["--reflink=never", "--sparse=auto"],
                                     ["--reflink=auto", "--sparse=never"]))
def test_other_copy_modes_open_no_scope(sources, tmp_path, options):
    """Only --sparse=never --reflink=never gives the plain loop the graph
    describes: other modes (holes made, copy_file_range) copy exactly and
    without the plugin."""
    binaries = programs()
    source = tmp_path / "with_zeros"
    source.write_bytes(os.urandom(3 * CHUNK) + bytes(4 * CHUNK) + os.urandom(CHUNK + 7))
    stats_file = tmp_path / "stats.json"
    stock, ours = copy_both(binaries, source, tmp_path, options,
                            foreactor_environment("io_uring", 16, stats_file))
    assert ours.read_bytes() == source.read_bytes()
    assert os.stat(ours).st_blocks == os.stat(stock).st_blocks
    assert graph_statistics(stats_file, GRAPH).get("scopes", 0) == 0


def test_source_with_holes_opens_no_scope(tmp_path):
    """A source with holes is copied extent by extent (lseek_copy), even with
    --sparse=never: the plugin stays out, the copy is exact and dense."""
    binaries = programs()
    source = tmp_path / "holey"
    with open(source, "wb") as handle:
        handle.write(os.urandom(CHUNK + 5))
        handle.seek(64 * CHUNK)
        handle.write(os.urandom(3 * CHUNK))
    stats_file = tmp_path / "stats.json"
    stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE,
                            foreactor_environment("threads", 16, stats_file))
    assert ours.read_bytes() == source.read_bytes()
    assert os.stat(ours).st_blocks == os.stat(stock).st_blocks
    assert graph_statistics(stats_file, GRAPH).get("scopes", 0) == 0


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
def test_cold_copy_streams_at_the_default_settings(tmp_path, engine):
    """A cold source copied at the automatic depth is read past the page
    cache from its first chunks (its reads are 128 KiB, 4 MiB of them
    ahead), and the scope gate keeps the chunks in the scope without an
    ordinary trial against plain chunks (scope_gate.h): no trial but a
    stream check's, unless the stream lost its checks (a busy machine).
    The copy is identical, most reads in the scope went direct, and none
    was mispredicted.  Skipped where the file system takes no direct
    reads.  The file outlasts the gate's opening (1,024 chunks), after
    which a timed scope would meet plain chunks."""
    if not takes_direct_reads(tmp_path):
        pytest.skip("the test directory's file system takes no direct reads")
    chunks = 2048
    binaries = programs()
    source = tmp_path / "source"
    source.write_bytes(os.urandom(chunks * CHUNK))
    stats_file = tmp_path / "stats.json"
    environment = foreactor_environment(engine, "auto", stats_file)
    environment.pop("FOREACTOR_EXACT_DEPTH")
    stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE, environment, cold=True)
    assert ours.read_bytes() == source.read_bytes()
    assert metadata(ours) == metadata(stock)
    statistics = graph_statistics(stats_file, GRAPH)
    assert statistics["mispredicted"] == 0, statistics
    if statistics.get("gate_stream_checks_lost", 0) < 2:
        assert statistics.get("gate_trials", 0) <= statistics.get("gate_stream_checks", 0), \
            statistics
    assert statistics.get("gate_streaming_stretches", 0) >= 1, statistics
    in_scope = statistics.get("gate_scope_units", 0)
    assert in_scope >= chunks // 2, statistics
    assert statistics.get("direct_reads", 0) >= in_scope * 8 // 10, statistics


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
def test_automatic_depth_scope_entered_mid_copy(tmp_path, engine):
    """With the automatic depth the runtime's scope gate, after its opening
    (the first chunks run with a scope), times chunks of the loop without
    and with a scope, so a trial's scope starts after a plain stretch of at
    least 64 chunks, in the middle of the file: its reads must still be
    predicted at their positions (none mispredicted), and the copy is
    identical.  The source is dropped from the page cache first: a plain
    stretch that never waits (a cached source) gets no trial.  A cold
    source may not make one wait either: with a large read-ahead window the
    kernel keeps ahead of cp (stock cp waited 6-10 times in a 96 MiB copy on
    the development VM): the file is long enough for the gate to try plain
    stretches again after idle rests, the copy is tried up to three times
    for a trial, and every try must be exact.  Direct reads are off: a
    scope that streams the cold file past the page cache is kept, never
    timed (test_cold_copy_streams_at_the_default_settings)."""
    chunks = 3072
    binaries = programs()
    source = tmp_path / "source"
    source.write_bytes(os.urandom(chunks * CHUNK))
    stats_file = tmp_path / "stats.json"
    environment = foreactor_environment(engine, "auto", stats_file)
    environment["FOREACTOR_DIRECT_READS"] = "0"
    for _ in range(3):
        stock, ours = copy_both(binaries, source, tmp_path, READ_WRITE, environment, cold=True)
        assert ours.read_bytes() == source.read_bytes()
        assert metadata(ours) == metadata(stock)
        statistics = graph_statistics(stats_file, GRAPH)
        assert statistics["mispredicted"] == 0, statistics
        if statistics.get("gate_trials", 0) >= 1:
            break
    assert statistics.get("gate_trials", 0) >= 1, statistics
    assert statistics.get("gate_plain_units", 0) >= 64, statistics
    assert 0 < statistics["intercepted"] < chunks * 2, statistics
