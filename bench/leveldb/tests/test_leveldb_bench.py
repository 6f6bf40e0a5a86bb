"""bench/leveldb/run.py end to end on tiny images (5,000 records, 500
Gets a run, one round, io_uring and threads at depth 8), the default image
with LevelDB's own compactions and the level-0 image with compactions held
and fill_cache off: every configuration is measured at every memory point
of both, the driver checked every Get, the runs below 100% ran inside a
memory cgroup that held them to their limit, the bound of each point was
measured (where perf can be used) and is shown beside its results, and the
results file and plot are written.  About a minute."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench" / "leveldb"))

import memory  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from foreactor_cli import bound  # noqa: E402

_spec = importlib.util.spec_from_file_location("leveldb_bench_run",
                                               ROOT / "bench" / "leveldb" / "run.py")
leveldb_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(leveldb_run)


def test_quick_sweep_on_a_tiny_image(tmp_path):
    output = tmp_path / "leveldb-test.json"
    environment = {**os.environ, "FOREACTOR_BUILD_DIR": os.environ.get(
        "FOREACTOR_BUILD_DIR", str(ROOT / "build"))}
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "leveldb" / "run.py"), "--records", "5000",
         "--ops", "500", "--sweeps", "memory", "--rounds", "1", "--depths", "8",
         "--cold", "fadvise", "--bound", "--no-device-reference", "--output", str(output)],
        env=environment, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    data = json.loads(output.read_text())
    assert [(entry["point"]["ratio"], entry["point"]["image"], entry["point"]["compactions"],
             entry["point"]["fill_cache"]) for entry in data["points"]] == [
        (ratio, image, compactions, fill_cache) for ratio in (10, 25, 50, 100)
        for image, compactions, fill_cache in (("default", "own", True),
                                               ("level0", "held", False))]
    assert data["run"]["device_reference"]["skipped"] == "--no-device-reference"
    assert len(data["run"]["load_average"]["end"]) == 3
    for entry in data["points"]:
        if entry["point"]["image"] == "level0":
            assert entry["files_per_level"][0] >= 12, entry["files_per_level"]
        assert set(entry["configurations"]) == {"plain", "io_uring 8", "threads 8"}
        for name, config in entry["configurations"].items():
            sample = config["samples"][0]
            assert sample["gets"] == 500 and sample["mismatches"] == 0
            if name != "plain":
                # One round: a paired ratio without an interval.
                assert config["time_ratio"]["pairs"] == 1 and config["time_ratio"]["low"] is None
                # A Get runs in a scope when the plugin could plan it (not the
                # memtable hits, nor a table's first Gets before its layout is
                # in the page cache) and the scope gate let it: a fixed depth
                # is a bound, and 500 Gets may all fall in the gate's first
                # plain stretches.
                assert config["statistics"] is not None
                assert 0 <= config["statistics"]["scopes"] <= 500
                # Per run, the share of its Gets that ran in a scope.
                assert config["scoped_share"] == [config["statistics"]["scopes"] / 500]
            else:
                assert config["scoped_share"] is None
            # With LevelDB's own compactions the runs are also compared at
            # plain's mix of level-0 shapes (the default image has none).
            own = entry["point"]["compactions"] == "own"
            assert ("latency_by_level0" in sample) == own
            if own:
                assert sum(group["gets"] for group in sample["latency_by_level0"]) == 500
                if name != "plain":
                    assert config["time_ratio_at_plain_level0_mix"]["pairs"] == 1
            if entry["point"]["ratio"] < 100 and memory.available() != "none":
                assert sample["memory"]["kind"] == memory.available()
                assert 0 < sample["memory"]["peak_bytes"] <= sample["memory"]["limit_bytes"]
        if bound.perf_usable() is None:
            # One Get per trace operation; each makes at most a pread per
            # level-0 table and per deeper level.
            figures = entry["bound"]
            if figures["lost_events"] == 0:
                assert figures["invocations"] == 500
            else:  # the Gets open where perf lost events are left out
                assert 0 < figures["invocations"] < 500
            assert 0 <= figures["calls_per_invocation"] <= 6 + entry["files_per_level"][0]
            assert 0 < figures["ratio"]["average"] <= 1
            # Overlapping only the slower preads cannot beat overlapping all.
            assert figures["cached_below_us"] == leveldb_run.CACHED_BELOW_US
            assert figures["ratio"]["average"] <= figures["memory_ratio"]["average"] <= 1
            assert 0 <= figures["memory_calls_share"] <= 1
    assert (tmp_path / "leveldb-test-memory.png").stat().st_size > 0
    assert "| plain |" in completed.stdout
    if bound.perf_usable() is None:
        # The bound beside each result: its columns are filled on every row.
        rows = [line for line in completed.stdout.splitlines() if line.startswith("| c v1024")]
        assert rows and all(row.split("|")[9].strip() and row.split("|")[11].strip()
                            for row in rows), rows[:3]


@pytest.mark.skipif(memory.available() == "none", reason="no memory cgroup can be made here")
def test_only_the_driver_runs_in_the_memory_cgroup(tmp_path):
    # `foreactor bound` ran inside the point's cgroup with the driver, and at
    # 10% memory the kernel's OOM killer killed the tool's Python process
    # (exit -9) while it parsed perf's output: its memory was charged to the
    # limit meant for the driver's page cache.  The program around the
    # driver must stay outside the cgroup, the driver inside.
    import types

    import run
    image = tmp_path / "image"
    image.mkdir()
    (image / "CURRENT").write_text("MANIFEST-000001\n")
    (tmp_path / "image.json").write_text(json.dumps({"bytes": 1 << 20}))
    inner, outer = tmp_path / "inner", tmp_path / "outer"
    arguments = types.SimpleNamespace(cold="fadvise", allowance_mib=64)
    completed, report = run.run_at_point(
        {"ratio": 10}, ["sh", "-c", f"cat /proc/self/cgroup > {inner}"], dict(os.environ), image,
        100, arguments, set(),
        around=lambda command: ["sh", "-c", f'cat /proc/self/cgroup > {outer} && exec "$@"',
                                "sh"] + command)
    assert completed.returncode == 0, completed.stderr
    assert report["kind"] == memory.available()

    def memory_cgroup(path):
        lines = path.read_text().splitlines()
        return next(line.split(":", 2)[2] for line in lines
                    if "memory" in line.split(":", 2)[1].split(",") or line.startswith("0::"))

    assert memory_cgroup(inner).startswith("/foreactor_leveldb_"), inner.read_text()
    assert not memory_cgroup(outer).startswith("/foreactor_leveldb_"), outer.read_text()


def test_chosen_memory_ratios_and_an_exact_depth(tmp_path):
    # --ratios picks the memory sweep's points; exact8 runs depth 8 with
    # FOREACTOR_EXACT_DEPTH=1, so every Get the plugin can plan runs in a
    # scope (the level-0 image's Gets read a dozen tables: all plannable
    # once the tables are open, and, from a cold start, not yet in the page
    # cache; the small image's blocks soon are, and the plugin then leaves
    # their reads out: 223 of 500 Gets were planned here, where the gate of
    # a depth that is only a bound may plan none).
    output = tmp_path / "leveldb-exact.json"
    environment = {**os.environ, "FOREACTOR_BUILD_DIR": os.environ.get(
        "FOREACTOR_BUILD_DIR", str(ROOT / "build"))}
    command = [sys.executable, str(ROOT / "bench" / "leveldb" / "run.py"), "--records", "5000",
               "--ops", "500", "--sweeps", "memory", "--rounds", "1", "--images", "level0",
               "--cold", "fadvise", "--no-device-reference", "--output", str(output)]
    completed = subprocess.run(command + ["--ratios", "25", "--depths", "exact8"],
                               env=environment, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    data = json.loads(output.read_text())
    assert [entry["point"]["ratio"] for entry in data["points"]] == [25]
    configurations = data["points"][0]["configurations"]
    assert set(configurations) == {"plain", "io_uring 8 exact", "threads 8 exact"}
    for name in ("io_uring 8 exact", "threads 8 exact"):
        assert configurations[name]["statistics"]["scopes"] > 100, configurations[name]
        share = configurations[name]["scoped_share"][0]
        assert share > 0.2
        # The table's last column: median share (lowest run's), one run here.
        row = next(line for line in completed.stdout.splitlines()
                   if line.startswith("| c v1024") and f"| {name} |" in line)
        assert row.split("|")[-2].strip() == f"{100 * share:.0f}% ({100 * share:.0f}%)", row
    refused = subprocess.run(command + ["--ratios", "0"], env=environment, capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2 and "--ratios" in refused.stderr
