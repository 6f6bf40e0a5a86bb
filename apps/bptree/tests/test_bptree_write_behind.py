"""Write-behind in the B+-tree bulk load: the load plugin's write_leaf node
declares it (apps/bptree/plugins/load_plugin.cc), so foreactor starts
write-back of finished stretches of leaves while the load goes on.

Checked for each engine, buffered (write-behind needs a page cache):
  - the load writes the byte-identical file and prints what the plain tool
    prints (pairs and leaves);
  - write-back hints were issued and covered every leaf byte (the leaves
    are one contiguous run per batch of leaves), none failed;
  - FOREACTOR_WRITE_BEHIND=0 issues none and writes the same file; an
    invalid value is reported, turns only write-behind off, and the load
    still runs with foreactor;
  - a direct (O_DIRECT) load issues none: there is no page cache to write
    back.
The fault suite (tests/faults/test_faults.py) checks short writes and
errors: the random graphs there declare write-behind on every write node.

Needs FOREACTOR_BUILD_DIR (default <repo>/build) with bptree and
bptree_foreactor built; a few seconds.
"""

import subprocess

import pytest

import bptree_test_support
from bptree_test_support import FOREACTOR_TOOL, PLAIN_TOOL, environment, sha256

KEYS = 200_000
DEGREE = 64
PAGE_BYTES = 8192
LEAVES = -(-KEYS // DEGREE)
LOAD_GRAPH = "bptree_load"

pytestmark = pytest.mark.skipif(not bptree_test_support.TOOLS_BUILT,
                                reason=bptree_test_support.NOT_BUILT)


def load(tool, path, env, direct=False):
    """Bulk loads `path`; returns (stdout without the path and the time, stderr)."""
    if path.exists():
        path.unlink()
    command = [str(tool), "load", str(path), "--count", str(KEYS), "--degree", str(DEGREE)]
    if direct:
        command.append("--direct")
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.split("elapsed_ms")[0].replace(str(path), "FILE"), completed.stderr


def load_statistics(stats):
    return bptree_test_support.graph_statistics(stats, LOAD_GRAPH)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """(stdout, digest) of the plain tool's load."""
    path = tmp_path_factory.mktemp("plain") / "tree.db"
    stdout, _ = load(PLAIN_TOOL, path, environment())
    return stdout, sha256(path)


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_load_with_write_behind_writes_the_same_file_and_hints_every_leaf(tmp_path, plain,
                                                                          engine):
    path, stats = tmp_path / "tree.db", tmp_path / "stats.json"
    stdout, stderr = load(FOREACTOR_TOOL, path, environment(engine, stats))
    assert (stdout, sha256(path)) == plain
    assert stderr == ""
    counters = load_statistics(stats)
    assert counters["write_behind_requests"] > 0, counters
    assert counters["write_behind_bytes"] == LEAVES * PAGE_BYTES, counters
    assert counters["write_behind_errors"] == 0, counters


@pytest.mark.parametrize("engine", ["io_uring", "threads"])
def test_write_behind_off_issues_no_hint_and_writes_the_same_file(tmp_path, plain, engine):
    path, stats = tmp_path / "tree.db", tmp_path / "stats.json"
    stdout, _ = load(FOREACTOR_TOOL, path, environment(engine, stats, write_behind=0))
    assert (stdout, sha256(path)) == plain
    assert load_statistics(stats).get("write_behind_requests", 0) == 0


def test_an_invalid_setting_turns_only_write_behind_off(tmp_path, plain):
    path, stats = tmp_path / "tree.db", tmp_path / "stats.json"
    env = environment("threads", stats)
    env["FOREACTOR_WRITE_BEHIND_bptree_load"] = "later"
    stdout, stderr = load(FOREACTOR_TOOL, path, env)
    assert (stdout, sha256(path)) == plain
    assert ('foreactor: FOREACTOR_WRITE_BEHIND_bptree_load="later" is not 1 (on) or 0 (off); '
            "write-behind is off for graph bptree_load") in stderr
    counters = load_statistics(stats)
    assert counters["intercepted"] == LEAVES, counters
    assert counters.get("write_behind_requests", 0) == 0


def test_a_direct_load_issues_no_hint(tmp_path, plain):
    path, stats = tmp_path / "tree.db", tmp_path / "stats.json"
    stdout, _ = load(FOREACTOR_TOOL, path, environment("io_uring", stats), direct=True)
    assert (stdout, sha256(path)) == plain
    assert load_statistics(stats).get("write_behind_requests", 0) == 0
