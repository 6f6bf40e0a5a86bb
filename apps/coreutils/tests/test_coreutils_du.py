"""du (coreutils 9.1) with its walk plugin must print exactly what stock du
prints, line for line, under every engine and depth; its statistics must
show that the entries' fstatat calls were issued early and all predicted.

Needs apps/coreutils/build.sh to have fetched coreutils (skips otherwise).
Run with: python3 -m pytest -q apps/coreutils/tests
"""

import json
import os
import random
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from coreutils_test_support import (DEPTHS, ENGINES, clean_environment, foreactor_environment,
                                    graph_statistics, programs, run)

GRAPH = "du_stat_entries"

# du option sets whose stat sequence the plugin predicts exactly.
PREDICTED_OPTIONS = (
    [],
    ["-a"],
    ["-a", "-b"],
    ["-a", "--inodes"],
    ["-s", "-h"],
    ["-a", "-x", "--time"],
)


def make_wide_tree(root, seed):
    """A few directories of many small files, as in the paper's benchmark."""
    generator = random.Random(seed)
    for directory in range(4):
        path = root / f"dir{directory:02d}"
        path.mkdir(parents=True)
        for number in range(300):
            (path / f"file{number:04d}").write_bytes(b"w" * generator.randrange(0, 40000))


def make_deep_tree(root, seed):
    """Many directories of a few files each (a source checkout), with the
    other kinds of entries du meets: symlinks (dangling too), hard links,
    empty directories, a FIFO, a sparse file, odd names."""
    generator = random.Random(seed)

    def fill(path, level):
        path.mkdir(parents=True, exist_ok=True)
        for number in range(generator.randrange(1, 5)):
            (path / f"src {number}.c").write_bytes(b"d" * generator.randrange(0, 9000))
        if level < 4:
            for number in range(generator.randrange(1, 4)):
                fill(path / f"pkg{number}", level + 1)

    fill(root, 0)
    (root / "empty").mkdir()
    (root / "link_to_file").symlink_to("src 0.c")
    (root / "dangling").symlink_to("no such file")
    (root / "link_to_dir").symlink_to("pkg0")
    os.link(root / "src 0.c", root / "hard link")
    os.mkfifo(root / "fifo")
    with open(root / "sparse", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
        handle.write(b"start")


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("du_trees")
    make_wide_tree(base / "wide", 7)
    make_deep_tree(base / "deep", 11)
    return {"wide": base / "wide", "deep": base / "deep"}


def stock_output(binaries, options, tree):
    return run([binaries["du"], *options, tree], clean_environment()).stdout


def test_plugin_build_without_foreactor_prints_the_same(trees):
    binaries = programs()
    for tree in trees.values():
        for options in PREDICTED_OPTIONS:
            expected = stock_output(binaries, options, tree)
            got = run([binaries["du-foreactor"], *options, tree], clean_environment()).stdout
            assert got.splitlines() == expected.splitlines(), options


@pytest.mark.skipif(shutil.which("gdb") is None, reason="needs gdb")
@pytest.mark.parametrize("setting", ("0", None))
def test_foreactor_off_records_no_expectations(trees, setting):
    """With foreactor off no scope opens, so the attachment must not record
    expected stats (it once re-recorded a full window after every entry, as
    no visit ever completed: du-foreactor took 7x stock du's time)."""
    binaries = programs()
    environment = clean_environment() if setting is None else clean_environment(FOREACTOR=setting)
    completed = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "set breakpoint pending on", "-ex", "break ExpectUpcomingStats",
         "-ex", "run", "--args", str(binaries["du-foreactor"]), str(trees["wide"])],
        env=environment, capture_output=True, text=True, timeout=120)
    assert "exited normally" in completed.stdout, completed.stdout + completed.stderr
    assert "Breakpoint 1, " not in completed.stdout


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("tree_name", ("wide", "deep"))
def test_output_identical_and_stats_issued_early(trees, tmp_path, engine, depth, tree_name):
    binaries = programs()
    tree = trees[tree_name]
    for index, options in enumerate(PREDICTED_OPTIONS):
        stats_file = tmp_path / f"stats{index}.json"
        expected = stock_output(binaries, options, tree)
        # The trees were just made, so their inodes are cached, where
        # foreactor would leave the stats to du after a few probes
        # (QuickCallMode): cache awareness is off here to test early issue.
        environment = foreactor_environment(engine, depth, stats_file)
        environment["FOREACTOR_PAGE_CACHE"] = "0"
        got = run([binaries["du-foreactor"], *options, tree], environment).stdout
        assert got.splitlines() == expected.splitlines(), options
        statistics = graph_statistics(stats_file, GRAPH)
        assert statistics.get("scopes") == 1, (options, statistics)
        assert statistics["mispredicted"] == 0, (options, statistics)
        assert statistics["speculation_stopped"] == 0, (options, statistics)
        if engine == "sync":
            assert statistics["issued_early"] == 0, (options, statistics)
        else:
            assert statistics["issued_early"] > 0, (options, statistics)
            if tree_name == "wide":
                # Every entry after the first two of a directory is issued
                # early (the first is stat'ed while fts reads the directory,
                # the second is the first call the runtime sees afterwards).
                assert statistics["issued_early"] >= statistics["intercepted"] - 3 * 4 - 2, \
                    (options, statistics)
            assert statistics["consumed"] == statistics["issued_early"], (options, statistics)


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
@pytest.mark.parametrize("tree_name", ("wide", "deep"))
def test_automatic_depth_output_identical_from_the_gates_opening(trees, tmp_path, engine,
                                                                 tree_name):
    """With the automatic depth the runtime's scope gate opens with a scope:
    the first stretch of fts_read calls (here the whole tree) runs in one,
    whose stats are issued early from the first entry on; what is issued
    early is consumed or dropped, never wrong."""
    binaries = programs()
    tree = trees[tree_name]
    for index, options in enumerate(PREDICTED_OPTIONS):
        stats_file = tmp_path / f"stats{index}.json"
        expected = stock_output(binaries, options, tree)
        got = run([binaries["du-foreactor"], *options, tree],
                  foreactor_environment(engine, "auto", stats_file)).stdout
        assert got.splitlines() == expected.splitlines(), options
        statistics = graph_statistics(stats_file, GRAPH)
        assert statistics.get("scopes", 0) >= 1, (options, statistics)
        assert statistics.get("mispredicted", 0) == 0, (options, statistics)


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
@pytest.mark.parametrize("options", (["-a", "--exclude=*7"], ["-a", "-L"], ["-a", "-l"],
                                     ["-a", "--max-depth=1"], ["-S", "-c"]))
def test_other_options_output_identical(trees, tmp_path, engine, options):
    """Options under which the plugin may guess wrong (an excluded file is
    never stat'ed) or does not guess (-L): the output is still the same."""
    binaries = programs()
    for tree in trees.values():
        # -L meets the dangling symlink: an error message and status 1.
        expected = run([binaries["du"], *options, tree], clean_environment(), check=False)
        got = run([binaries["du-foreactor"], *options, tree],
                  foreactor_environment(engine, 16, tmp_path / "stats.json"), check=False)
        assert got.stdout.splitlines() == expected.stdout.splitlines(), options
        assert (got.returncode, got.stderr) == (expected.returncode, expected.stderr)


def test_several_arguments_and_errors_identical(trees, tmp_path):
    """Several roots, a missing one (error message, exit status 1)."""
    binaries = programs()
    arguments = ["-a", trees["wide"] / "dir01", trees["deep"], tmp_path / "missing", trees["wide"]]
    expected = run([binaries["du"], *arguments], clean_environment(), check=False)
    got = run([binaries["du-foreactor"], *arguments],
              foreactor_environment("io_uring", 16, tmp_path / "stats.json"), check=False)
    assert expected.returncode == 1
    assert b"missing" in expected.stderr
    assert (got.returncode, got.stdout, got.stderr) == (expected.returncode, expected.stdout,
                                                        expected.stderr)


def test_tree_changed_between_runs_is_seen(trees, tmp_path):
    """A guard that the comparison can fail: after a file grows, du's output
    differs, and the foreactor build sees the same new sizes."""
    binaries = programs()
    tree = tmp_path / "changing"
    make_wide_tree(tree, 3)
    before = run([binaries["du-foreactor"], "-a", "-b", tree],
                 foreactor_environment("io_uring", 16, tmp_path / "s1.json")).stdout
    (tree / "dir00" / "file0000").write_bytes(b"x" * 123457)
    after = run([binaries["du-foreactor"], "-a", "-b", tree],
                foreactor_environment("io_uring", 16, tmp_path / "s2.json")).stdout
    assert before != after
    assert after == stock_output(binaries, ["-a", "-b"], tree)
    assert f"123457\t{tree}/dir00/file0000".encode() in after.splitlines()


# ------------------------------------------------------- walk-ahead's answers
#
# On a tree read from the device, walk-ahead reads and stats ahead of du and
# keeps its stats; fts's stats of the same entries are answered from them.
# Only root may drop the kernel's caches, and on a cached tree walk-ahead
# never starts.

needs_root = pytest.mark.skipif(os.geteuid() != 0,
                                reason="only root may drop the kernel's caches")


def drop_caches():
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3")


def default_environment(stats_file):
    """foreactor on with its default settings (automatic depth, walk-ahead)."""
    return clean_environment(FOREACTOR="1", FOREACTOR_STATS=str(stats_file))


def walk_ahead_statistics(stats_file):
    with open(stats_file) as handle:
        return json.load(handle)["walk_ahead"]


@needs_root
@pytest.mark.parametrize("options", (["-a"], ["-s"], ["-a", "--inodes", "--time", "-x"]))
def test_a_cold_tree_s_stats_are_answered_from_walk_ahead_and_the_output_is_stock_s(
        trees, tmp_path, options):
    binaries = programs()
    for tree in trees.values():
        drop_caches()
        expected = run([binaries["du"], *options, tree], clean_environment())
        stats_file = tmp_path / "stats.json"
        # On this small tree du may pass the walker and ask nothing it could
        # answer (a race on a busy machine): up to three cold runs, each
        # printing stock's lines, until one was answered.
        for _ in range(3):
            drop_caches()
            got = run([binaries["du-foreactor"], *options, tree], default_environment(stats_file))
            assert got.stdout.splitlines() == expected.stdout.splitlines(), (options, tree)
            assert got.stderr == expected.stderr
            if tree != trees["wide"] or walk_ahead_statistics(stats_file)["stat_answers"] > 0:
                break
        if tree == trees["wide"]:
            statistics = walk_ahead_statistics(stats_file)
            assert statistics["stats_kept"] > 0, statistics
            assert 0 < statistics["stat_answers"] <= statistics["stat_questions"], statistics
            assert statistics["most_kept_stat_bytes"] <= statistics["limit_kept_stat_bytes"]


def test_a_cached_tree_keeps_no_stats(trees, tmp_path):
    """Walk-ahead never starts on a cached tree: nothing is kept or asked
    beyond a look at an empty store."""
    binaries = programs()
    stats_file = tmp_path / "stats.json"
    # The first run caches the tree and du-foreactor's own code (a page of
    # the program read from the device would count as the tree's read).
    for _ in range(2):
        run([binaries["du-foreactor"], "-a", trees["wide"]], default_environment(stats_file))
    statistics = walk_ahead_statistics(stats_file)
    assert statistics["threads"] == 0, statistics
    assert statistics["stats_kept"] == 0 and statistics["stat_questions"] == 0, statistics


def change_files_until(root, stop, seed):
    """Creates, deletes, renames and rewrites files and directories under
    `root` until `stop` is set: the directories' entries and the files'
    sizes change while du runs."""
    generator = random.Random(seed)
    serial = 0
    while not stop.is_set():
        directories = [Path(directory) for directory, _, _ in os.walk(root)]
        target = generator.choice(directories)
        serial += 1
        try:
            operation = generator.randrange(5)
            if operation == 0:
                (target / f"new{serial}").write_bytes(b"n" * generator.randrange(0, 20000))
            elif operation == 1:
                files = [entry for entry in target.iterdir() if entry.is_file()]
                if files:
                    generator.choice(files).unlink()
            elif operation == 2:
                files = [entry for entry in target.iterdir() if entry.is_file()]
                if files:
                    generator.choice(files).rename(target / f"renamed{serial}")
            elif operation == 3:
                files = [entry for entry in target.iterdir() if entry.is_file()]
                if files:
                    generator.choice(files).write_bytes(b"g" * generator.randrange(0, 50000))
            elif target != root:
                shutil.rmtree(target, ignore_errors=True)
                (target / "again").mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # the tree changed under the changer too


@needs_root
def test_a_changing_cold_tree_never_crashes_or_hangs_du_and_stock_s_output_once_still(tmp_path):
    binaries = programs()
    tree = tmp_path / "changing"
    make_wide_tree(tree, 5)
    make_deep_tree(tree / "deep", 6)
    stop = threading.Event()
    changer = threading.Thread(target=change_files_until, args=(tree, stop, 31))
    changer.start()
    try:
        for round_index in range(8):
            drop_caches()
            outcome = run([binaries["du-foreactor"], "-a", tree],
                          default_environment(tmp_path / f"stats{round_index}.json"),
                          check=False)
            # A changing tree gives du's ordinary errors, never a signal.
            assert outcome.returncode in (0, 1), outcome
            for line in outcome.stderr.splitlines():
                assert line.startswith(b"du: "), outcome
            walk_ahead_statistics(tmp_path / f"stats{round_index}.json")  # du ended normally
    finally:
        stop.set()
        changer.join()
    drop_caches()
    expected = run([binaries["du"], "-a", tree], clean_environment())
    drop_caches()
    got = run([binaries["du-foreactor"], "-a", tree], default_environment(tmp_path / "still.json"))
    assert got.stdout.splitlines() == expected.stdout.splitlines()
