"""Tests of bench/leveldb/level0_mix.py: two runs compared at plain's mix of
level-0 shapes.

Run with: python3 -m pytest -q bench/leveldb/tests/test_level0_mix.py
"""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("level0_mix",
                                              ROOT / "bench" / "leveldb" / "level0_mix.py")
level0_mix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(level0_mix)


def groups(*rows):
    return [{"level0_tables": tables, "gets": gets, "total_us": total}
            for tables, gets, total in rows]


def test_a_faster_run_with_more_expensive_gets_is_compared_at_plains_mix():
    # Plain: 500 Gets at 13 level-0 tables (300 us each), 19,500 at 0 (80 us).
    # The other run: twice as many at 13 (150 us each), the rest at 0 (72 us).
    plain = groups((13, 500, 500 * 300.0), (0, 19500, 19500 * 80.0))
    faster = groups((13, 1000, 1000 * 150.0), (0, 19000, 19000 * 72.0))
    plain_time, time = level0_mix.totals_at_plain_mix(plain, faster)
    assert plain_time == pytest.approx(500 * 300 + 19500 * 80)
    assert time == pytest.approx(500 * 150 + 19500 * 72)
    # Its plain ratio of averages says less than its gain at each shape.
    averages = (1000 * 150 + 19000 * 72) / (500 * 300 + 19500 * 80)
    assert time / plain_time < averages


def test_runs_of_one_shape_compare_as_their_averages():
    plain = groups((12, 100, 100 * 90.0))
    other = groups((12, 100, 100 * 63.0))
    plain_time, time = level0_mix.totals_at_plain_mix(plain, other)
    assert time / plain_time == pytest.approx(0.7)


def test_groups_one_run_lacks_are_left_out_up_to_a_tenth_of_plains_gets():
    plain = groups((13, 5, 5 * 300.0), (0, 95, 95 * 80.0))
    other = groups((0, 100, 100 * 40.0))
    plain_time, time = level0_mix.totals_at_plain_mix(plain, other)
    assert (plain_time, time) == (pytest.approx(95 * 80), pytest.approx(95 * 40))
    plain = groups((13, 11, 11 * 300.0), (0, 89, 89 * 80.0))
    assert level0_mix.totals_at_plain_mix(plain, other) is None


def test_runs_without_groups_are_not_compared():
    plain = groups((0, 10, 800.0))
    assert level0_mix.totals_at_plain_mix(None, plain) is None
    assert level0_mix.totals_at_plain_mix(plain, []) is None
    plain_times, times = level0_mix.paired_totals(
        [{"latency_by_level0": plain}, {}], [{"latency_by_level0": plain}, {}])
    assert plain_times == [pytest.approx(800.0), None]
    assert times == [pytest.approx(800.0), None]
