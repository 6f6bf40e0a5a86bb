"""Walk-ahead: stock programs observe nothing of it (docs/USER_GUIDE.md,
"Walk-ahead").

Each test runs a program once plain and once under walk-ahead
(libforeactor.so preloaded, FOREACTOR=1 FOREACTOR_WALK_AHEAD=1) on the same
tree and compares everything the program shows: standard output, standard
error and exit status, and for copies the copied tree.  The statistics file
shows that walk-ahead did read the tree (or, where it must not, did not).

Walk-ahead starts its threads only once the program has read from a block
device since it opened the tree, and a tree a test just made is cached.
So the tests drop the kernel's caches before each run where they can (as
root), and the linked test program reads a file with O_DIRECT as it begins
(FOREACTOR_TEST_DEVICE_READ, tests/integration/programs/tree_walker.cc)
where a test needs walk-ahead's threads on a cached tree.
"""

import json
import os
import pathlib
import random
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import _freeze_times, environment, fresh_directory, library, program, run

# Directories in the test tree; walk-ahead's threads must read them (or
# some of them, where a test stops the program early).
BRANCHING = (4, 4, 3)  # subdirectories per level: 4 + 16 + 48 = 68 directories under the root


def make_tree(root: pathlib.Path) -> pathlib.Path:
    """A nested tree of 69 directories (the root included) with files of
    several sizes, symbolic links (to a file, to a directory, to '/', and
    dangling), a FIFO, and an empty directory; times frozen so that reading
    it changes no stat field."""
    generator = random.Random(19)
    root.mkdir(parents=True)

    def fill(directory: pathlib.Path, level: int):
        for index in range(generator.randrange(2, 9)):
            (directory / f"file{index}").write_bytes(b"x" * generator.choice((0, 10, 1500, 5000)))
        if level < len(BRANCHING):
            for index in range(BRANCHING[level]):
                child = directory / f"dir{level}{index}"
                child.mkdir()
                fill(child, level + 1)

    fill(root, 0)
    os.symlink("file0", root / "link_to_file")
    os.symlink("dir00", root / "link_to_dir")
    os.symlink("/", root / "link_to_slash")
    os.symlink("missing", root / "dangling")
    os.mkfifo(root / "dir00" / "fifo")
    (root / "empty_dir").mkdir()
    _freeze_times(root)
    return root


def tree_directories(root: pathlib.Path) -> int:
    return sum(1 for _ in os.walk(root))


# Tests that preload libforeactor.so into system programs cannot run with
# a sanitizer build (its runtime must be the process's first library; under
# ThreadSanitizer walk-ahead's thread does not start): they skip under it,
# as tests/sanitizers/run_sanitizers.sh says.
preloads = pytest.mark.skipif(bool(os.environ.get("FOREACTOR_SANITIZED")),
                              reason="preloads a sanitizer-built library into a system program")

# Filesystems walk-ahead walks (src/walk/walkable_filesystem.cc), as
# `stat -f -c %T` names them.
WALKABLE_TYPES = {"ext2/ext3", "ext4", "xfs", "btrfs", "f2fs", "overlayfs"}


@pytest.fixture(autouse=True)
def temporary_files_on_a_walkable_filesystem(tmp_path):
    kind = subprocess.run(["stat", "-f", "-c", "%T", str(tmp_path)], capture_output=True,
                          text=True).stdout.strip()
    if kind not in WALKABLE_TYPES:
        pytest.skip(f"the temporary directory is on {kind}, which walk-ahead never walks")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> pathlib.Path:
    return make_tree(tmp_path_factory.mktemp("walk_ahead") / "tree")


# Only root may drop the kernel's caches.
CAN_DROP_CACHES = os.geteuid() == 0


def drop_caches():
    """Writes back and drops the kernel's page, dentry and inode caches, so
    that the next walk reads the tree from the device (root only)."""
    os.sync()
    pathlib.Path("/proc/sys/vm/drop_caches").write_text("3")


def drop_caches_if_allowed():
    if CAN_DROP_CACHES:
        drop_caches()


@pytest.fixture
def device_read(tmp_path) -> dict:
    """The variable that makes tree_walker read a file of its own from the
    device as it begins (so that walk-ahead starts on a cached tree)."""
    block_file = tmp_path / "read_from_the_device"
    block_file.write_bytes(b"d" * 8192)
    return {"FOREACTOR_TEST_DEVICE_READ": str(block_file)}


def walk_ahead_environment(stats: pathlib.Path, linked: bool = False, **variables) -> dict:
    """Walk-ahead on; libforeactor.so preloaded unless the program is
    `linked` with it (tests/integration/programs/)."""
    if not linked:
        variables["LD_PRELOAD"] = str(library())
    return environment(FOREACTOR="1", FOREACTOR_WALK_AHEAD="1", FOREACTOR_STATS=str(stats),
                       **variables)


def walk_statistics(stats: pathlib.Path) -> dict:
    return json.loads(stats.read_text())["walk_ahead"]


def run_both(command, tmp_path, cwd=None, prepare=None, linked=False, **variables):
    """(plain outcome, walk-ahead outcome, walk-ahead statistics) of `command`,
    with `variables` in both runs' environments; `prepare()` runs before
    each of the two runs, and then the caches are dropped where allowed, so
    that walk-ahead's threads walk along with the program."""
    if prepare:
        prepare()
    drop_caches_if_allowed()
    plain = run(command, environment(**variables), cwd=cwd)
    stats = tmp_path / "stats.json"
    if prepare:
        prepare()
    drop_caches_if_allowed()
    walked = run(command, walk_ahead_environment(stats, linked=linked, **variables), cwd=cwd)
    return plain, walked, walk_statistics(stats)


def assert_walked_along(statistics: dict):
    """On a tree read from the device, walk-ahead's threads ran."""
    if CAN_DROP_CACHES:
        assert statistics["threads"] >= 1, statistics


READING_PROGRAMS = {
    "du_all": ["du", "-a", "--apparent-size", "{tree}"],
    "du_summary": ["du", "-s", "{tree}"],
    "du_max_depth": ["du", "--max-depth=1", "{tree}"],
    "find_size": ["find", "{tree}", "-size", "+1k"],
    "find_printf": ["find", "{tree}", "-printf", "%p %y %s %m %n\\n"],
    "ls_recursive": ["ls", "-lR", "--time-style=full-iso", "{tree}"],
    "tar_create": ["tar", "--sort=none", "-cf", "-", "{tree}"],
}


@preloads
@pytest.mark.parametrize("name", sorted(READING_PROGRAMS))
def test_reading_programs_show_the_same_and_walk_ahead_reads_the_tree(tree, tmp_path, name):
    command = [part.format(tree=tree) for part in READING_PROGRAMS[name]]
    plain, walked, statistics = run_both(command, tmp_path)
    assert plain.returncode == 0, plain
    assert walked.as_tuple() == plain.as_tuple()
    assert statistics["walks_started"] >= 1, statistics
    assert_walked_along(statistics)
    # Only the tree: the link to '/' is never followed.
    assert statistics["directories_read"] <= tree_directories(tree), statistics


def copied_tree_listing(root: pathlib.Path) -> list:
    """What a copy holds: every entry's relative path, type, mode, size and
    link target."""
    listing = []
    for directory, subdirectories, files in os.walk(root):
        for name in sorted(subdirectories + files):
            path = pathlib.Path(directory) / name
            status = path.lstat()
            target = os.readlink(path) if path.is_symlink() else ""
            listing.append((str(path.relative_to(root)), status.st_mode, status.st_size, target))
    return sorted(listing)


@preloads
@pytest.mark.parametrize("copier", ["cp", "rsync"])
def test_copies_are_the_same(tree, tmp_path, copier):
    if shutil.which(copier) is None:
        pytest.skip(f"{copier} is not installed")
    destination = tmp_path / "copy"
    command = (["cp", "-r", "--preserve=mode,timestamps", str(tree), str(destination)]
               if copier == "cp" else ["rsync", "-a", f"{tree}/", f"{destination}/"])

    def prepare():
        if destination.exists():
            shutil.rmtree(destination)

    prepare()
    plain = run(command, environment())
    plain_listing = copied_tree_listing(destination)
    prepare()
    drop_caches_if_allowed()
    stats = tmp_path / "stats.json"
    walked = run(command, walk_ahead_environment(stats))
    assert plain.returncode == 0, plain
    assert walked.as_tuple() == plain.as_tuple()
    assert copied_tree_listing(destination) == plain_listing
    assert walk_statistics(stats)["walks_started"] >= 1
    assert_walked_along(walk_statistics(stats))


def test_descriptors_the_program_sees_are_unchanged(tree, tmp_path, device_read):
    command = [program("tree_walker"), "walk", tree]
    plain, walked, statistics = run_both(command, tmp_path, linked=True, **device_read)
    assert plain.returncode == 0, plain
    assert walked.as_tuple() == plain.as_tuple()
    assert statistics["walks_started"] >= 1, statistics
    assert statistics["threads"] >= 1, statistics


@preloads
def test_pseudo_filesystems_are_never_walked(tmp_path):
    stats = tmp_path / "stats.json"
    outcome = run(["find", "/proc/sys", "-maxdepth", "2", "-name", "nothing-is-called-this"],
                  walk_ahead_environment(stats))
    assert outcome.returncode == 0, outcome
    statistics = walk_statistics(stats)
    assert statistics["directories_read"] == 0, statistics
    assert statistics["roots_refused"] >= 1, statistics


@preloads
def test_a_mounted_filesystem_below_the_root_is_not_entered(tree, tmp_path):
    root = make_tree(tmp_path / "mounted_tree")
    mount_point = root / "mnt"
    mount_point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "none", str(mount_point)],
                      stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        for index in range(20):
            (mount_point / f"sub{index}" / "deeper").mkdir(parents=True)
        directories_outside = tree_directories(root) - tree_directories(mount_point)
        plain, walked, statistics = run_both(["du", "-a", str(root)], tmp_path)
        assert walked.as_tuple() == plain.as_tuple()
        assert statistics["walks_started"] >= 1, statistics
        assert statistics["directories_read"] <= directories_outside, statistics
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def tree_walker_statistics(tmp_path, mode: str, root: pathlib.Path, argument: str = None,
                           timeout: int = 120, **variables) -> dict:
    """Runs `tree_walker MODE ROOT [ARGUMENT]` (linked with the library)
    under walk-ahead with `variables` in its environment, checks that it
    succeeded, and returns walk-ahead's statistics."""
    stats = tmp_path / "stats.json"
    arguments = [] if argument is None else [argument]
    outcome = run([program("tree_walker"), mode, root] + arguments,
                  walk_ahead_environment(stats, linked=True, **variables), timeout=timeout)
    assert outcome.returncode == 0, outcome
    return walk_statistics(stats)


def test_a_program_that_stops_descending_stops_the_walk(tmp_path, device_read):
    # 5 x 5 x 5 directories: far more than a walk may run ahead at first.
    root = tmp_path / "wide_tree"
    for first in range(5):
        for second in range(5):
            for third in range(5):
                (root / f"a{first}" / f"b{second}" / f"c{third}").mkdir(parents=True)
    statistics = tree_walker_statistics(tmp_path, "pause", root, "3600", timeout=60, **device_read)
    assert statistics["directories_read"] >= 1, statistics
    # The walk may lead by 32 directories, plus those its threads had taken.
    assert statistics["directories_read"] <= 32 + 2 + statistics["threads"], statistics
    assert statistics["walks_stopped_idle"] == 1, statistics


def make_directories(root: pathlib.Path, top: int, below: int) -> list:
    """`top` directories under `root`, each with `below` subdirectories
    holding one small file; returns the top ones' names in the order
    readdir gives them (the order the walks follow)."""
    for first in range(top):
        for second in range(below):
            leaf = root / f"d{first}" / f"e{second}"
            leaf.mkdir(parents=True)
            (leaf / "file").write_bytes(b"x" * 100)
    return os.listdir(root)


# Walk-ahead tells a cached directory apart by the block reads its thread
# submitted (rusage ru_inblock); without the kernel's I/O accounting it
# never rests.
needs_io_accounting = pytest.mark.skipif(not os.path.exists("/proc/self/io"),
                                         reason="the kernel does not account per-thread I/O")


def slow_walk_with_only_these_cached(root: pathlib.Path, cached: list, tmp_path,
                                     **variables) -> dict:
    """Drops the kernel's caches (root only), stats every file under the
    top directories `cached` of `root` so that they are cached again, then
    walks `root` at 1 ms a directory under walk-ahead, with `variables` in
    its environment; returns walk-ahead's statistics."""
    drop_caches()
    for name in cached:
        for directory, _, files in os.walk(root / name):
            for file in files:
                os.lstat(os.path.join(directory, file))
    if cached:
        # The program's own code and libraries, read back in as it runs,
        # would count as device reads.  A first run loads them: the same
        # walk of a tree of the same shape (cached, just made), so that the
        # program's side takes every path it takes in the cached part.
        warm_up = tmp_path / "warm_up_tree"
        shutil.rmtree(warm_up, ignore_errors=True)
        top = os.listdir(root)
        make_directories(warm_up, len(top), len(os.listdir(root / top[0])))
        tree_walker_statistics(tmp_path, "slow-walk", warm_up, "1")
    return tree_walker_statistics(tmp_path, "slow-walk", root, "1", **variables)


@needs_io_accounting
def test_a_cached_tree_starts_no_thread(tmp_path):
    # 8 x 40 directories, all cached (just made): the program reads nothing
    # from a device, so walk-ahead only asks, every 16 directories, whether
    # it has.
    root = tmp_path / "cached_tree"
    make_directories(root, 8, 40)
    # A first run reads the program's code and libraries back in, if an
    # earlier test dropped them from the cache: those reads would count.
    tree_walker_statistics(tmp_path, "walk", root)
    statistics = tree_walker_statistics(tmp_path, "walk", root)
    assert statistics["walks_started"] == 1, statistics
    assert statistics["threads"] == 0, statistics
    assert statistics["directories_read"] == 0, statistics
    # Once as the walk began, then after every 16 of the other 327.
    assert statistics["cold_checks"] == 1 + (329 - 2) // 16, statistics
    # The program has one thread, so each question asks for its own reads
    # (the process's make the kernel update the caller's CPU time, where
    # the scheduler may switch away from the program).
    assert statistics["cold_checks_of_process"] == 0, statistics


@needs_io_accounting
def test_a_device_read_on_a_second_thread_starts_the_walk(tmp_path, device_read):
    # 8 x 40 directories, all cached (just made).  When the walk has opened
    # 100 directories, a second thread of the program reads from the device:
    # from then on the process has two threads, the questions ask for the
    # process's reads, and the next one (at the 114th directory) starts the
    # walk.  A stray read of the walking thread (its code read back in)
    # would start it earlier: such a run gets two more tries.
    root = tmp_path / "cached_tree"
    make_directories(root, 8, 40)
    tree_walker_statistics(tmp_path, "walk", root)
    for _ in range(3):
        statistics = tree_walker_statistics(tmp_path, "walk", root,
                                            FOREACTOR_TEST_DEVICE_READ_ON_THREAD_AT="100",
                                            **device_read)
        if statistics["cold_checks"] == 1 + (114 - 2) // 16:
            break
    assert statistics["threads"] >= 1, statistics
    # As the walk began, and at directories 18, 34, ..., 98 of one thread;
    # at 114, of the process.
    assert statistics["cold_checks"] == 1 + (114 - 2) // 16, statistics
    assert statistics["cold_checks_of_process"] == 1, statistics


@needs_io_accounting
def test_a_device_read_as_the_walk_begins_starts_the_thread_at_once(tmp_path, device_read):
    root = tmp_path / "cached_tree"
    make_directories(root, 8, 40)
    statistics = tree_walker_statistics(tmp_path, "pause", root, "200", **device_read)
    assert statistics["threads"] >= 1, statistics
    # The only question: the block read showed when the walk began.
    assert statistics["cold_checks"] == 0, statistics


@needs_io_accounting
def test_a_cached_tree_makes_the_walk_rest_after_a_few_dozen_directories(tmp_path, device_read):
    # 8 x 40 directories, all cached (just made), walked at 1 ms a
    # directory; the program's device read starts walk-ahead.
    root = tmp_path / "cached_tree"
    make_directories(root, 8, 40)
    statistics = tree_walker_statistics(tmp_path, "slow-walk", root, "1", **device_read)
    assert statistics["rests"] >= 1, statistics
    assert statistics["probes_cold"] == 0, statistics
    # Nothing it read was cold: the other threads were never started.
    assert statistics["threads"] == 1, statistics
    # 32 directories read ahead of the program before it rested, those it
    # passed through behind the program (they do not count: the program
    # read them), those its threads had taken then, and afterwards only
    # probes (not the 329 of the tree).
    assert statistics["directories_read"] <= (32 + statistics["directories_behind"] +
                                              statistics["threads"] + statistics["probes"]), \
        statistics


@needs_io_accounting
def test_large_cached_directories_are_judged_after_their_first_entries(tmp_path, device_read):
    # 6 directories of 3,000 files, all cached (just made), walked at 50 ms
    # a directory, so that walk-ahead reads the later ones ahead of the
    # program.  Each such directory's first 1,024 stats read nothing from a
    # device; its other entries are only passed through.  Before, every
    # thread stat'ed a whole directory it had taken before the walk rested:
    # 3,000 stats each, about 15,000 in all here.
    root = tmp_path / "large_cached_directories"
    for first in range(6):
        directory = root / f"d{first}"
        directory.mkdir(parents=True)
        for second in range(3000):
            (directory / f"f{second}").touch()
    statistics = tree_walker_statistics(tmp_path, "slow-walk", root, "50", **device_read)
    assert statistics["directories_judged_cached"] >= 1, statistics
    # At most 1,024 stats in each directory, and one for the root.
    assert statistics["entries_stated"] <= 6 * 1024 + 1, statistics


@needs_io_accounting
@pytest.mark.skipif(not CAN_DROP_CACHES, reason="dropping the kernel's caches needs root")
def test_a_resting_walk_reads_again_where_the_tree_is_not_cached(tmp_path, device_read):
    # The first half of the tree (in the walk's order) cached, the second
    # not: the walk rests in the first half; the rest ends when its probe of
    # the directory the program reaches last finds the device, or when a
    # directory still being read as it began did, and the walk reads the
    # second half's 164 directories from the device, not the program: at
    # least one top directory's 41 of them (all, unloaded; under ASan on a
    # loaded machine the program overtakes part of the walk).  A rest needs
    # the walk ahead of the program in the cached half: one run under TSan
    # (2026-12-02, a fresh clone's test run) never rested (rests 0), and the
    # same build passed 9 reruns.  Such a run gets two more tries; a walk
    # that never rests fails.
    root = tmp_path / "half_cached_tree"
    order = make_directories(root, 8, 40)
    for _ in range(3):
        statistics = slow_walk_with_only_these_cached(root, order[:4], tmp_path, **device_read)
        if statistics["rests"] >= 1 and statistics["directories_cold"] >= 41:
            break
    assert statistics["rests"] >= 1, statistics
    assert statistics["directories_cold"] >= 41, statistics
    # A cold directory started the other threads.
    assert statistics["threads"] == 8, statistics


@needs_io_accounting
@pytest.mark.skipif(not CAN_DROP_CACHES, reason="dropping the kernel's caches needs root")
def test_a_walk_starts_where_the_program_reaches_the_part_not_cached(tmp_path):
    # The first half of the tree cached, the second not, and no other
    # device read: walk-ahead starts no thread while the program walks the
    # cached half (164 directories and the root), and starts within 16
    # directories of the second half, where it reads ahead of the program:
    # at least one top directory's 41 directories from the device.
    # Any other block read of the process starts the walk too: one run in
    # CI (2026-11-28) started it at the 49th directory, in the cached half,
    # from a read that did not reproduce.  Such a stray read gets two more
    # tries; a walk that starts early every time fails.
    root = tmp_path / "half_cached_tree"
    order = make_directories(root, 8, 40)
    for _ in range(3):
        statistics = slow_walk_with_only_these_cached(root, order[:4], tmp_path)
        if statistics["cold_checks"] >= 1 + (165 - 2) // 16:
            break
    assert statistics["cold_checks"] >= 1 + (165 - 2) // 16, statistics
    assert statistics["threads"] == 8, statistics
    assert statistics["directories_cold"] >= 41, statistics


@needs_io_accounting
@pytest.mark.skipif(not CAN_DROP_CACHES, reason="dropping the kernel's caches needs root")
def test_a_tree_cached_in_stretches_stops_making_the_walk_rest(tmp_path, device_read):
    # Every other of 20 top directories (41 directories each) cached: each
    # cached stretch looks like a cached tree, and the rest it starts ends
    # soon after (at a cold probe, or at a cold directory still being read
    # as it began).  After such a quick return the walk needs a longer
    # cached run to rest again (ServingStreak), so it rests a couple of
    # times, not once per stretch (7 to 10 times before).
    root = tmp_path / "striped_tree"
    order = make_directories(root, 20, 40)
    statistics = slow_walk_with_only_these_cached(root, order[0::2], tmp_path, **device_read)
    assert 1 <= statistics["rests"] <= 4, statistics


@needs_io_accounting
@pytest.mark.skipif(not CAN_DROP_CACHES, reason="dropping the kernel's caches needs root")
def test_the_other_threads_start_within_the_first_cold_directory(tmp_path, device_read):
    # Three directories of 3,000 files.  The program opens the root and
    # its first directory, reads a block of its own from the device (so
    # that walk-ahead starts), then pauses; the first thread passes both
    # through (behind the program, cached) and reads the second one, whose
    # directory blocks are cached but whose inodes are not: its stats read
    # from the device.  The other threads start as soon as its stats show
    # that, within the directory.  (Before, they started only after all
    # 3,000 stats of it: about 100 ms into a cold walk of 1,000-entry
    # directories, with the program left to load the inodes itself.)
    root = tmp_path / "large_directories"
    for name in ("a", "b", "c"):
        directory = root / name
        directory.mkdir(parents=True)
        for index in range(3000):
            (directory / f"file{index:04}").touch()
    tree_walker_statistics(tmp_path, "walk", root)  # the program's code and libraries cached
    drop_caches()
    first = os.listdir(root)[0]
    for name in os.listdir(root):
        entries = os.listdir(root / name)
        if name == first:
            for entry in entries:
                os.lstat(root / name / entry)
    statistics = tree_walker_statistics(tmp_path, "pause", root, "3000", **device_read)
    assert statistics["threads"] >= 2, statistics
    # Under 3,000 by the inodes of the second directory that the kernel's
    # read-ahead of the first one's inode table brought in (up to 512).
    assert 1 <= statistics["stats_before_workers"] <= 1500, statistics


@preloads
def test_find_quit_and_a_killed_walk_end_at_once(tree, tmp_path):
    plain, walked, _ = run_both(["find", str(tree), "-name", "file1", "-print", "-quit"], tmp_path)
    assert walked.as_tuple() == plain.as_tuple()
    # A program killed in the middle of a walk takes walk-ahead's threads with it.
    process = subprocess.Popen(["du", "-a", str(tree)], stdout=subprocess.DEVNULL,
                               env=walk_ahead_environment(tmp_path / "killed.json"))
    time.sleep(0.01)
    process.kill()
    assert process.wait(timeout=10) in (-9, 0)
    assert not os.path.exists(f"/proc/{process.pid}")


@preloads
def test_an_invalid_setting_is_reported_and_walk_ahead_is_off(tree, tmp_path):
    stats = tmp_path / "stats.json"
    env = walk_ahead_environment(stats, FOREACTOR_WALK_AHEAD_WORKERS="0")
    outcome = run(["du", "-s", str(tree)], env)
    plain = run(["du", "-s", str(tree)], environment())
    assert outcome.returncode == 0 and outcome.stdout == plain.stdout
    assert b"FOREACTOR_WALK_AHEAD_WORKERS=\"0\" is not a number from 1 to 64; walk-ahead is off" \
        in outcome.stderr
    assert walk_statistics(stats)["directories_read"] == 0


def other_user_available() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


@preloads
@pytest.mark.skipif(not other_user_available(), reason="needs root and setpriv")
@pytest.mark.parametrize("command", [["du", "-a"], ["find"], ["ls", "-R"]])
def test_unreadable_directories_give_stock_messages_and_status(tmp_path, command):
    base = pathlib.Path(tempfile.mkdtemp(prefix="foreactor-walk-"))
    try:
        os.chmod(base, 0o755)
        root = make_tree(base / "tree")
        os.chmod(root / "dir00", 0o000)                   # neither readable nor searchable
        os.chmod(root / "dir01", 0o311)                   # searchable, not readable
        os.chmod(root / "dir02" / "dir12", 0o600)          # readable, not searchable
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        stats = base / "stats.json"  # where the other user can write it
        stats.touch()
        os.chmod(stats, 0o666)
        drop_caches_if_allowed()
        plain = run(as_nobody + command + [str(root)], environment())
        drop_caches_if_allowed()
        walked = run(as_nobody + command + [str(root)], walk_ahead_environment(stats))
        assert plain.returncode != 0 and b"Permission denied" in plain.stderr, plain
        assert walked.as_tuple() == plain.as_tuple()
        assert walk_statistics(stats)["walks_started"] >= 1
    finally:
        for directory, subdirectories, _ in os.walk(base):
            for name in subdirectories:
                os.chmod(os.path.join(directory, name), 0o755)
        shutil.rmtree(base)


# ------------------------------------------------------------ changing trees

def mutate_until(root: pathlib.Path, stop: threading.Event, seed: int, counts: dict):
    """Changes the tree under `root` at random until `stop` is set: creates
    directories and files, deletes subtrees, renames and moves directories,
    removes and restores permissions, replaces directories with files and
    with symbolic links (to '/', to '..'), as another process might while a
    program walks the tree."""
    generator = random.Random(seed)
    serial = 0
    while not stop.is_set():
        directories = [pathlib.Path(d) for d, _, _ in os.walk(root)]
        if len(directories) < 2:
            fresh = root / f"new{serial}"
            fresh.mkdir(exist_ok=True)
        target = generator.choice(directories[1:] or directories)
        operation = generator.choice(("create", "delete", "rename", "chmod", "to_file",
                                      "to_symlink", "files"))
        serial += 1
        try:
            if operation == "create":
                child = target / f"made{serial}"
                child.mkdir()
                for index in range(3):
                    (child / f"f{index}").write_bytes(b"y" * 100)
            elif operation == "delete":
                shutil.rmtree(target, ignore_errors=True)
            elif operation == "rename":
                destination = generator.choice(directories)
                target.rename(destination / f"moved{serial}")
            elif operation == "chmod":
                os.chmod(target, 0o000)
                time.sleep(0.001)
                os.chmod(target, 0o755)
            elif operation == "to_file":
                shutil.rmtree(target, ignore_errors=True)
                target.write_bytes(b"now a file")
            elif operation == "to_symlink":
                shutil.rmtree(target, ignore_errors=True)
                os.symlink(generator.choice(("/", "..")), target)
            else:
                for index in range(5):
                    (target / f"extra{serial}_{index}").write_bytes(b"z")
            counts[operation] = counts.get(operation, 0) + 1
        except OSError:
            pass  # the tree changed under the mutator too
        if len(directories) < 30:  # keep a tree worth walking
            grown = root / f"grown{serial}"
            for first in range(3):
                for second in range(3):
                    (grown / f"g{first}" / f"h{second}").mkdir(parents=True, exist_ok=True)


@preloads
@pytest.mark.parametrize("command", [["du", "-a"], ["find", "-printf", "%p %y %s\\n"], ["ls", "-lR"]])
def test_programs_on_a_changing_tree_never_crash_hang_or_differ_once_it_settles(tmp_path, command):
    root = make_tree(tmp_path / "changing")
    stop = threading.Event()
    counts = {}
    mutator = threading.Thread(target=mutate_until, args=(root, stop, 23, counts))
    mutator.start()
    program_name = command[0].encode()
    try:
        for round_index in range(12):
            stats = tmp_path / f"stats{round_index}.json"
            environment_of_run = (walk_ahead_environment(stats) if round_index % 2 == 0
                                  else environment())
            drop_caches_if_allowed()  # so that walk-ahead's threads walk along
            outcome = run(command[:1] + [str(root)] + command[1:], environment_of_run, timeout=60)
            # A changing tree gives errors of the ordinary kind, never a signal.
            assert outcome.returncode in (0, 1, 2), outcome
            for line in outcome.stderr.splitlines():
                assert line.startswith(program_name + b": "), outcome
            if round_index % 2 == 0:
                walk_statistics(stats)  # written at exit: the program ended normally
    finally:
        stop.set()
        mutator.join()
    assert sum(counts.values()) >= 10, counts
    # Once the tree is still, walk-ahead changes nothing again.
    plain, walked, _ = run_both(command[:1] + [str(root)] + command[1:], tmp_path)
    assert walked.as_tuple() == plain.as_tuple()


@preloads
def test_the_tool_runs_a_program_with_walk_ahead_and_shows_its_statistics(tree, tmp_path):
    tool = pathlib.Path(library()).parent / "tools" / "foreactor"
    stats = tmp_path / "stats.json"
    outcome = run([tool, "run", "--walk-ahead", "--walk-ahead-workers", "2",
                   "--walk-ahead-distance", "100", "--stats", stats, "--", "du", "-s", tree],
                  environment())
    plain = run(["du", "-s", tree], environment())
    assert outcome.as_tuple() == plain.as_tuple()
    statistics = walk_statistics(stats)
    assert statistics["distance"] == 100 and statistics["walks_started"] == 1, statistics
    shown = run([tool, "stats", stats], environment(), check=True).stdout.decode()
    assert "walk-ahead" in shown and "walks started" in shown and "limit" in shown
    assert "of them of the whole process" in shown, shown
    bad = run([tool, "run", "--walk-ahead-workers", "65", "--", "true"], environment())
    assert bad.returncode == 2 and b"must be a whole number from 1 to 64" in bad.stderr


@preloads
def test_under_a_seccomp_filter_walk_ahead_stays_off_and_says_so(tree, tmp_path):
    # The filter kills the process at the first openat2 or close_range:
    # walk-ahead's threads would make both.
    command = [program("kill_on_new_calls"), "du", "-a", str(tree)]
    stats = tmp_path / "stats.json"
    walked = run(command, walk_ahead_environment(stats))
    plain = run(["du", "-a", str(tree)], environment())
    assert walked.returncode == 0, walked
    assert walked.stdout == plain.stdout
    assert walked.stderr == b"foreactor: walk-ahead does not run under a seccomp filter; " \
                            b"walk-ahead is off\n"
    assert walk_statistics(stats)["threads"] == 0


@preloads
def test_many_trees_in_one_run_reuse_walk_ahead_s_slots(tmp_path):
    # More trees than walk-ahead remembers (4): slots are taken over, and
    # the descriptors of the trees they held are closed.
    trees = [make_tree(tmp_path / f"tree{index}") for index in range(7)]
    plain, walked, statistics = run_both(["du", "-s"] + [str(t) for t in trees], tmp_path)
    assert plain.returncode == 0, plain
    assert walked.as_tuple() == plain.as_tuple()
    assert statistics["walks_started"] == len(trees), statistics
    assert statistics["most_descriptors"] <= statistics["threads"] + 4, statistics
