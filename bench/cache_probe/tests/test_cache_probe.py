"""bench/cache_probe: every way tells a cached range from a dropped one as the
kernel keeps them (its answers, not its times), and a file too small is
refused with a message.  About 2 s."""

import importlib.util
import os
import platform
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REGION_BYTES = 8 << 20

spec = importlib.util.spec_from_file_location("cache_probe_bench",
                                              ROOT / "bench" / "cache_probe" / "run.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def file_system_type(path):
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True,
                          text=True, check=True).stdout.strip()


def kernel_at_least(major, minor):
    numbers = platform.release().split("-")[0].split(".")
    return (int(numbers[0]), int(numbers[1])) >= (major, minor)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return bench.build_program(tmp_path_factory.mktemp("cache-probe-build"))


def test_each_way_tells_cached_ranges_from_dropped_ones(program, tmp_path):
    if file_system_type(tmp_path) == "tmpfs":
        pytest.skip("on tmpfs every page stays in memory: nothing can be dropped")
    data_file = bench.prepare_file(tmp_path / "data", 2 * REGION_BYTES)
    answers = bench.run_once(program, data_file, REGION_BYTES, 500)
    for way in bench.WAYS:
        assert answers[(way, "cached")][1] == 1.0, (way, answers[(way, "cached")])
    assert ("pread", "dropped") not in answers
    if not kernel_at_least(6, 5):
        assert answers[("cachestat", "dropped")][0] is None  # unsupported before Linux 6.5
    for way in ("cachestat", "mincore_mapped", "mincore_map"):
        median, share = answers[(way, "dropped")]
        if median is None:
            continue
        assert share == 0.0, (way, share)
    # A miss fails with EAGAIN: at most the odd range that read-ahead of an
    # earlier probe reached answers with data.
    assert answers[("preadv2_nowait", "dropped")][1] < 0.5


def test_a_file_smaller_than_both_regions_is_refused(program, tmp_path):
    data_file = tmp_path / "small"
    data_file.write_bytes(os.urandom(4096))
    completed = subprocess.run([str(program), str(data_file), str(REGION_BYTES), "10"],
                               capture_output=True, text=True)
    assert completed.returncode == 1
    assert "fewer than 2 x" in completed.stderr
