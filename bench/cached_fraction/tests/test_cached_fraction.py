"""bench/cached_fraction/run.py end to end on its LevelDB workload, on a tiny
image (5,000 records, 300 Gets a run, one round, fractions 0 and 1,
compactions held): every configuration ran at both fractions, the driver
checked every Get (the plugin's driver with foreactor off among the
configurations), the Gets' median latency is recorded beside the average, the share of the tables found cached before the runs is what was
asked, and the results file and plot are written.  About 15 s."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_leveldb_sweep_on_a_tiny_image(tmp_path):
    output = tmp_path / "cached-fraction-test.json"
    environment = {**os.environ, "FOREACTOR_BUILD_DIR": os.environ.get(
        "FOREACTOR_BUILD_DIR", str(ROOT / "build"))}
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cached_fraction" / "run.py"), "--quick",
         "--workloads", "leveldb", "--leveldb-records", "5000", "--leveldb-ops", "300",
         "--fractions", "0,1", "--rounds", "1", "--leveldb-compactions", "held",
         "--no-device-reference", "--output", str(output)],
        env=environment, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    data = json.loads(output.read_text())
    assert "bptree_scan" not in data
    result = data["leveldb_get"]
    assert result["records"] == 5000 and result["operations"] == 300
    assert result["compactions"] == "held"
    assert list(result["per_fraction"]) == ["0", "1"]
    for fraction, entry in result["per_fraction"].items():
        assert set(entry["configurations"]) == {"plain", "io_uring auto", "io_uring 8",
                                                "plugin build, foreactor off"}
        for name, configuration in entry["configurations"].items():
            assert len(configuration["values"]) == 1 and configuration["median"] > 0
            p50 = configuration["other_measures"]["p50"]
            assert len(p50["values"]) == 1 and 0 < p50["median"], p50
            if name == "io_uring 8":
                # A fixed depth plans every Get the plugin can plan; the
                # counters include the cold reads started early and the
                # scope gate's split (they were left out, so a run whose
                # early reads were all started looked as if it did nothing).
                statistics = configuration["statistics"]
                assert statistics is not None
                assert {"scopes", "reads_started", "gate_plain_units",
                        "gate_scope_units"} <= set(statistics), statistics
            if name == "plugin build, foreactor off":
                # The plugin's driver ran, with foreactor off: no statistics.
                assert configuration["statistics"] is None
        if shutil.which("fincore"):
            cached = entry["measured_cached_fraction"]
            assert (cached < 0.2) if fraction == "0" else (cached > 0.8)
    assert (tmp_path / "cached_fraction-quick-leveldb.png").stat().st_size > 0
    assert "LevelDB YCSB-C Get" in completed.stdout and "compactions held" in completed.stdout
    assert "| 0%, p50 |" in completed.stdout
