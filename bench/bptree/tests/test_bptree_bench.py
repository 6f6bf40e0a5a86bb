"""Tests of bench/bptree/run.py's pure parts: the configurations and the
issue's targets.  No tree, no tool run; under a second."""

import importlib.util
from pathlib import Path

import pytest

RUN_PY = Path(__file__).resolve().parents[1] / "run.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bptree_bench_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plugin_tool_runs_with_foreactor_off_beside_plain(bench, tmp_path):
    configs = bench.configurations([16], True)
    names = [name for name, _, _ in configs]
    assert names[:2] == ["plain", bench.LINKED_OFF]
    _, engine, depth = configs[1]
    environment = bench.tool_environment(engine, depth, tmp_path / "stats.json", False)
    assert environment["FOREACTOR"] == "0"
    assert bench.LINKED_OFF in bench.NOT_FOREACTOR


def hot_summary(bench, linked_off_ratio, foreactor_ratio):
    return {"plain": {"ratio_to_plain": 1.0},
            bench.LINKED_OFF: {"ratio_to_plain": linked_off_ratio},
            "io_uring auto": {"ratio_to_plain": foreactor_ratio},
            "threads auto": {"ratio_to_plain": foreactor_ratio + 0.01}}


def hot_target(bench, summary):
    targets = bench.evaluate_targets({"scan-bulk-hot": {"256": summary}})
    return next(t for t in targets if "hot cache" in t["target"])


def test_hot_target_judges_foreactor_configurations_not_the_tool_with_it_off(bench):
    met = hot_target(bench, hot_summary(bench, linked_off_ratio=0.90, foreactor_ratio=0.98))
    assert met["met"] and "io_uring auto" in met["measured"]
    missed = hot_target(bench, hot_summary(bench, linked_off_ratio=1.0, foreactor_ratio=0.95))
    assert not missed["met"] and "io_uring auto" in missed["measured"]


def test_the_best_configuration_is_never_the_tool_with_foreactor_off(bench):
    summary = hot_summary(bench, linked_off_ratio=1.5, foreactor_ratio=1.1)
    assert bench.best(summary) == (1.11, "threads auto")


def test_waste_is_judged_only_where_something_was_issued_early(bench):
    summary = hot_summary(bench, linked_off_ratio=1.0, foreactor_ratio=1.0)
    targets = bench.evaluate_targets({"scan-bulk-hot": {"256": summary}})
    assert not any("wasted" in target["target"] for target in targets)
    summary["io_uring auto"]["statistics_median"] = {"issued_early": 1000, "wasted": 20}
    targets = bench.evaluate_targets({"scan-bulk-hot": {"256": summary}})
    wasted = next(target for target in targets if "wasted" in target["target"])
    assert not wasted["met"] and "2.00%" in wasted["measured"]


def test_short_scans_cover_a_hundredth_of_the_keys_and_full_ones_nine_tenths(bench):
    for fraction in (bench.RANGE_FRACTION, bench.SHORT_RANGE_FRACTION):
        for low, high in bench.scan_ranges(5, 2024, fraction):
            assert high - low + 1 == int(bench.KEY_SPACE * fraction)
    short = [phase for phase in bench.PHASES if bench.is_short(phase)]
    assert {phase.key for phase in short} == {"short-bulk-cold", "short-insert-cold",
                                              "short-bulk-hot"}
    assert not any(bench.reads_leaves_alone(phase) for phase in short)


def test_short_scans_are_judged_by_never_slower_alone(bench):
    summary = hot_summary(bench, linked_off_ratio=1.0, foreactor_ratio=0.60)
    targets = bench.evaluate_targets({"short-bulk-cold": {"256": summary}})
    assert [target["met"] for target in targets] == [False]
    assert "at most 3% slower" in targets[0]["target"] and "0.60x" in targets[0]["measured"]


def parsed(bench, monkeypatch, *arguments):
    monkeypatch.setattr("sys.argv", ["run.py", *arguments])
    return bench.parse_arguments()


def test_short_phases_run_more_scans_a_round_than_full_ones(bench, monkeypatch):
    full = parsed(bench, monkeypatch)
    assert (full.scans, full.short_scans) == (10, bench.FULL_SHORT_SCANS)
    assert full.short_scans > full.scans
    quick = parsed(bench, monkeypatch, "--quick")
    assert (quick.scans, quick.short_scans) == (bench.QUICK_SCANS, bench.QUICK_SHORT_SCANS)
    assert parsed(bench, monkeypatch, "--short-scans", "7").short_scans == 7
    with pytest.raises(SystemExit):
        parsed(bench, monkeypatch, "--short-scans", "0")
