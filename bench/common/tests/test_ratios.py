"""Tests of bench/common/ratios: paired ratios, their bootstrap interval and
the share of the available gain.

Run with: python3 -m pytest -q bench/common/tests
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.common import ratios  # noqa: E402


def test_pair_ratios_divide_round_by_round_and_drop_failed_rounds():
    assert ratios.pair_ratios([10, 20, None, 40], [5, 10, 7, None]) == [0.5, 0.5]


def test_pair_ratios_refuse_unpaired_rounds():
    with pytest.raises(ValueError):
        ratios.pair_ratios([1, 2], [1])


def test_paired_ratio_is_the_median_of_pair_ratios_not_the_ratio_of_medians():
    # Round 3 ran under load for both runs: its pair still says 0.5.
    plain = [100, 102, 300, 98, 101]
    candidate = [50, 51, 150, 49, 50.5]
    result = ratios.paired_ratio(plain, candidate)
    assert result["ratio"] == pytest.approx(0.5)
    assert result["pairs"] == 5
    assert result["low"] == pytest.approx(0.5)
    assert result["high"] == pytest.approx(0.5)
    assert result["confidence"] == 0.95


def test_bootstrap_interval_of_known_ratios_is_deterministic_and_brackets_the_median():
    values = [0.40, 0.42, 0.45, 0.47, 0.50, 0.52, 0.55, 0.60, 0.41, 0.48]
    first = ratios.bootstrap_interval(values, seed=7)
    assert first == ratios.bootstrap_interval(values, seed=7)
    low, high = first
    median = sorted(values)[4:6]
    assert min(values) <= low <= sum(median) / 2 <= high <= max(values)
    # The median of a resample is one of the ratios or the mean of two.
    middles = {(a + b) / 2 for a in values for b in values}
    assert any(low == pytest.approx(value) for value in middles)


def test_interval_narrows_with_more_pairs():
    few = ratios.paired_ratio([1.0] * 5, [0.5, 0.6, 0.4, 0.55, 0.45])
    many = ratios.paired_ratio([1.0] * 40, [0.5, 0.6, 0.4, 0.55, 0.45] * 8)
    assert (many["high"] - many["low"]) <= (few["high"] - few["low"])


def test_no_interval_below_three_pairs_and_no_ratio_without_pairs():
    two = ratios.paired_ratio([10, 10], [5, 6])
    assert two["ratio"] == pytest.approx(0.55)
    assert two["low"] is None and two["high"] is None
    none = ratios.paired_ratio([None], [3])
    assert none["ratio"] is None and none["pairs"] == 0


def test_inverse_turns_throughput_into_time():
    assert ratios.inverse([2.0, None, 0, 4.0]) == [0.5, None, None, 0.25]


def test_share_realized():
    assert ratios.share_realized(0.2, 0.2) == pytest.approx(1.0)
    assert ratios.share_realized(1.0, 0.2) == pytest.approx(0.0)
    assert ratios.share_realized(0.6, 0.2) == pytest.approx(0.5)
    assert ratios.share_realized(1.2, 0.2) == pytest.approx(-0.25)
    assert ratios.share_realized(0.5, 1.0) is None
    assert ratios.share_realized(None, 0.2) is None
    assert ratios.share_realized(0.5, None) is None


def test_formatting_and_width_summary():
    interval = {"ratio": 0.5, "low": 0.45, "high": 0.55, "pairs": 5}
    assert ratios.format_ratio(interval) == "0.50x [0.45, 0.55]"
    assert ratios.format_ratio({"ratio": 0.5, "low": None, "high": None, "pairs": 2}) \
        == "0.50x (2 pairs, no interval)"
    assert ratios.format_ratio(None) == "-"
    assert ratios.relative_width(interval) == pytest.approx(0.2)
    line = ratios.describe_widths([interval, {"ratio": 1.0, "low": 0.9, "high": 1.0, "pairs": 5}])
    assert "5 pairs" in line and "10.0%" in line and "20.0%" in line
    assert "none" in ratios.describe_widths([{"ratio": 1.0, "low": None, "pairs": 2}])
    assert ratios.format_share(0.456) == "46%"
