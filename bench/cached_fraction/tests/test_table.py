"""The sweep's table and plot show a configuration's speed as the inverse of
the median of its paired rounds' time ratios, the statistic whose interval
is printed beside it, not plain's median over its median."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def sweep():
    spec = importlib.util.spec_from_file_location(
        "cached_fraction_run", ROOT / "bench" / "cached_fraction" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_prints_the_paired_median_and_its_interval(sweep, capsys):
    configurations = [("plain", None, None), ("io_uring auto", "io_uring", "auto")]
    # Per-round time ratios 1.5, 0.5, 1.1 (median 1.1: speed 0.91x), while
    # the medians alone, 20 and 15, would say 1.33x.
    values = {"plain": [10.0, 20.0, 30.0], "io_uring auto": [15.0, 10.0, 33.0]}
    entry = sweep.fraction_summary(values, {"plain": [], "io_uring auto": []},
                                   {"plain": {}, "io_uring auto": {}}, [0.5], configurations)
    result = entry["configurations"]["io_uring auto"]
    speed, low, high = sweep.paired_speed(result)
    assert abs(speed - 1 / 1.1) < 1e-9 and low <= speed <= high
    assert abs(result["speed_vs_plain"] - 20 / 15) < 1e-9  # still recorded as before
    sweep.print_table("a sweep", "ms", {"0.5": entry}, configurations)
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("| 50%"))
    assert "(0.91x [" in row and "1.33x" not in row, row


def test_without_pairs_the_ratio_of_medians_is_shown_without_an_interval(sweep):
    assert sweep.paired_speed({"speed_vs_plain": 1.25, "time_ratio": {"ratio": None}}) == (
        1.25, None, None)
