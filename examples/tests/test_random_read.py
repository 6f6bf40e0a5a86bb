"""Tests of the example program and its plugin (examples/random_read).

The foreactor build of the program must print exactly what the plain build
prints, under every engine and depth, and its statistics must show that the
plugin's graph matched the program's preads; so must the build with
readahead(2) added by hand (the demo's reference).  Needs the build (./run
build): FOREACTOR_BUILD_DIR/examples/random_read/{random_read,
random_read_foreactor,random_read_readahead}.
Run with: python3 -m pytest -q examples/tests
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
PLAIN = BUILD_DIR / "examples" / "random_read" / "random_read"
WITH_FOREACTOR = BUILD_DIR / "examples" / "random_read" / "random_read_foreactor"
BY_HAND = BUILD_DIR / "examples" / "random_read" / "random_read_readahead"
READ_AHEAD_WINDOW = 64  # readahead_by_hand.c
BLOCK_SIZE = 8192
READS = 300


def clean_environment(**extra):
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("FOREACTOR") and name != "LD_PRELOAD"}
    environment.update(extra)
    return environment


def run(program, data_file, reads, seed, **environment):
    """Runs the program; returns its output as a dict, asserting success."""
    assert program.exists(), f"{program} is missing: build first (./run build)"
    completed = subprocess.run([str(program), str(data_file), str(reads), str(seed)],
                               env=clean_environment(**environment),
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert len(lines) == 2, completed.stdout
    return dict(line.split(" ", 1) for line in lines)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("random_read") / "data"
    path.write_bytes(os.urandom(512 * BLOCK_SIZE))
    return path


def test_plain_program_prints_checksum_and_time(data_file):
    output = run(PLAIN, data_file, READS, 1)
    assert re.fullmatch(r"0x[0-9a-f]{16}", output["checksum"])
    assert float(output["elapsed_ms"]) >= 0


def test_checksum_depends_on_the_blocks_read(data_file):
    assert run(PLAIN, data_file, READS, 1)["checksum"] != run(PLAIN, data_file, READS, 2)["checksum"]
    assert run(PLAIN, data_file, READS, 1)["checksum"] == run(PLAIN, data_file, READS, 1)["checksum"]


def test_checksum_sees_a_changed_byte(tmp_path, data_file):
    changed = tmp_path / "changed"
    contents = bytearray(data_file.read_bytes())
    contents[len(contents) // 2] ^= 0xFF
    changed.write_bytes(bytes(contents))
    # 4,000 reads of 512 blocks touch every block with near certainty.
    assert run(PLAIN, data_file, 4000, 3)["checksum"] != run(PLAIN, changed, 4000, 3)["checksum"]


@pytest.mark.parametrize("engine", ["io_uring", "threads", "sync"])
@pytest.mark.parametrize("depth", [1, 4, 64, "auto"])
def test_foreactor_build_prints_what_the_plain_build_prints(tmp_path, data_file, engine, depth):
    stats_file = tmp_path / "stats.json"
    expected = run(PLAIN, data_file, READS, 7)["checksum"]
    output = run(WITH_FOREACTOR, data_file, READS, 7, FOREACTOR="1", FOREACTOR_ENGINE=engine,
                 FOREACTOR_DEPTH=str(depth), FOREACTOR_STATS=str(stats_file))
    assert output["checksum"] == expected

    stats = json.loads(stats_file.read_text())["graphs"]["random_read"]
    assert stats["scopes"] == 1
    # The data file was just written, so it is in the page cache: reads are
    # found cached or served from the cache rather than issued early, and
    # after 256 reads in a row served from the cache the scope stops
    # following the graph (the rest of the reads are plain calls).
    if stats.get("scopes_left_to_cache", 0) == 1:
        assert 256 <= stats["intercepted"] < READS, stats
    else:
        assert stats["intercepted"] == READS, stats
    assert stats["passed_through"] == 0
    assert stats["mispredicted"] == 0
    served_early = stats["consumed"] + stats["found_cached"] + stats["served_from_cache"]
    assert served_early + stats["synchronous"] == stats["intercepted"]
    if engine == "sync":
        assert stats["issued_early"] == 0
    else:
        assert served_early > 0
        assert stats["bytes_early"] == stats["consumed"] * BLOCK_SIZE


def test_foreactor_build_with_foreactor_off(data_file):
    expected = run(PLAIN, data_file, READS, 5)["checksum"]
    assert run(WITH_FOREACTOR, data_file, READS, 5)["checksum"] == expected


@pytest.mark.parametrize("reads", [0, 1, 2])
def test_few_reads(tmp_path, data_file, reads):
    stats_file = tmp_path / "stats.json"
    expected = run(PLAIN, data_file, reads, 9)["checksum"]
    output = run(WITH_FOREACTOR, data_file, reads, 9, FOREACTOR="1", FOREACTOR_DEPTH="16",
                 FOREACTOR_STATS=str(stats_file))
    assert output["checksum"] == expected
    stats = json.loads(stats_file.read_text())["graphs"]["random_read"]
    assert stats["intercepted"] == reads
    assert stats["wasted"] == 0


@pytest.mark.parametrize("reads", [0, 1, READ_AHEAD_WINDOW - 1, READ_AHEAD_WINDOW,
                                   READ_AHEAD_WINDOW + 1, READS])
def test_readahead_by_hand_prints_what_the_plain_build_prints(data_file, reads):
    assert run(BY_HAND, data_file, reads, 11)["checksum"] == \
        run(PLAIN, data_file, reads, 11)["checksum"]


@pytest.mark.parametrize("arguments", [[], ["file"], ["file", "x", "1"], ["file", "-1", "1"]])
def test_usage_errors(arguments):
    completed = subprocess.run([str(PLAIN)] + arguments, capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 2
    assert "usage" in completed.stderr
