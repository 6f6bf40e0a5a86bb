"""The YCSB driver on a small LevelDB (20,000 keys of 1 KiB, about 20 MB in
several levels), plain and with the foreactor plugin on each engine, with
and without a Bloom filter, block cache on (8 MiB): every Get is checked by
the driver (status and value), and an altered or missing value makes it fail.
The level-0 image (12 level-0 tables above those levels, made through
LevelDB's public API) is made on a small scale (512 KiB tables) and read with
compactions held and fill_cache off, checked the same way; the Env that
holds compactions has a test program of its own.  About 60 s in all."""

import resource
import shutil
import subprocess
import sys

import pytest

from leveldb_test_support import (ENGINES, ROOT, clean_environment, foreactor_environment,
                                  graph_statistics, make_trace, program, reads_ahead,
                                  run_driver)

RECORDS = 20000
READS = 3000
LEVEL0_TABLES = 12
# A close that waited for held background work would hang: every run of a
# held database gets this long.
CLOSE_TIMEOUT_SECONDS = 120


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    directory = tmp_path_factory.mktemp("leveldb_driver")
    traces = {
        "load": make_trace(directory, "load.trace", phase="load", records=RECORDS),
        "c": make_trace(directory, "c.trace", phase="run", workload="c", records=RECORDS,
                        operations=READS),
        "a": make_trace(directory, "a.trace", phase="run", workload="a", records=RECORDS,
                        operations=2000),
    }
    driver = program("leveldb_driver", foreactor=False)
    images = {}
    for bloom_bits in (0, 10):
        image = directory / f"image_bloom{bloom_bits}"
        summary = run_driver([driver, "--db", image, "--load", traces["load"],
                              "--bloom-bits", bloom_bits], clean_environment())
        assert summary["records"] == RECORDS
        # LevelDB's own compactions leave level-0 files and deeper levels: a
        # Get searches several tables, which is what the plugin is for.
        assert sum(1 for files in summary["files_per_level"] if files) >= 2, summary
        images[bloom_bits] = image
    # The level-0 image: 512 KiB write buffers make tables of 512 KiB, so
    # that the 20,000 keys are enough to update for 12 of them.
    level0 = directory / "image_level0"
    summary = run_driver([driver, "--db", level0, "--clone-from", images[0], "--load",
                          traces["load"], "--level0-tables", LEVEL0_TABLES,
                          "--write-buffer-kib", 512], clean_environment(),
                         timeout=CLOSE_TIMEOUT_SECONDS)
    images["level0"] = level0
    images["level0_summary"] = summary
    return directory, traces, images


def run_trace(workspace, name, bloom_bits, driver, environment, *extra, expect_status=0,
              image=None):
    directory, traces, images = workspace
    image = bloom_bits if image is None else image
    run_dir = directory / f"run_{name}_{image}_{driver.name}"
    return run_driver([driver, "--db", run_dir, "--clone-from", images[image],
                       "--run", traces[name], "--bloom-bits", bloom_bits, *extra],
                      environment, expect_status, timeout=CLOSE_TIMEOUT_SECONDS)


def test_held_compactions_env_holds_work_and_closes():
    # Its own test program (apps/leveldb/tests/held_compactions_env_test.cc);
    # the timeout catches a close that would wait for held work.
    completed = subprocess.run([str(program("held_compactions_env_test", False))],
                               capture_output=True, text=True, timeout=CLOSE_TIMEOUT_SECONDS)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert "[  PASSED  ]" in completed.stdout


def test_level0_image_has_its_level0_tables_above_the_levels(workspace):
    _, _, images = workspace
    summary = images["level0_summary"]
    files = summary["files_per_level"]
    assert files[0] >= LEVEL0_TABLES, summary
    assert sum(files[1:]) > 0, summary  # the levels of the image it was made from


@pytest.mark.parametrize("engine", ("plain",) + ENGINES)
def test_level0_image_with_held_compactions_and_fill_cache_off(workspace, tmp_path, engine):
    foreactor = engine != "plain"
    environment = (foreactor_environment(engine, 16, tmp_path / "stats.json") if foreactor
                   else clean_environment())
    summary = run_trace(workspace, "c", 0, program("leveldb_driver", foreactor), environment,
                        "--compactions", "held", "--no-fill-cache", "--latency-by-level0",
                        image="level0")
    assert summary["gets"] == READS and summary["found"] == READS
    assert summary["mismatches"] == 0
    assert summary["compactions"] == "held" and summary["fill_cache"] is False
    # Held: the run ends with the tables it started with, and every Get saw
    # all its level-0 tables.
    _, _, images = workspace
    level0_tables = images["level0_summary"]["files_per_level"][0]
    assert summary["files_per_level"] == images["level0_summary"]["files_per_level"]
    [group] = summary["latency_by_level0"]
    assert group["level0_tables"] == level0_tables and group["gets"] == READS
    # Every configuration opens its tables into a descriptor table of the
    # size libforeactor's load gives it (descriptor_table.h).
    soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    target = 65536 if soft_limit == resource.RLIM_INFINITY else min(soft_limit, 65536)
    assert summary["descriptor_table"] >= target
    if foreactor and engine != "sync":
        graphs = graph_statistics(tmp_path / "stats.json")
        assert sum(reads_ahead(g) for g in graphs.values()) > 0, graphs


def test_level0_image_with_leveldbs_own_compactions(workspace):
    summary = run_trace(workspace, "c", 0, program("leveldb_driver", False), clean_environment(),
                        "--compactions", "own", "--latency-by-level0", image="level0")
    assert summary["gets"] == READS and summary["mismatches"] == 0
    # The Gets by the level-0 tables as each started: all of them, with all
    # their latency; a read-only trace never adds a level-0 table.
    _, _, images = workspace
    groups = summary["latency_by_level0"]
    assert sum(group["gets"] for group in groups) == READS
    assert sum(group["total_us"] for group in groups) == pytest.approx(
        summary["latency_us"]["average"] * READS, rel=1e-3)
    assert all(0 <= group["level0_tables"] <= images["level0_summary"]["files_per_level"][0]
               for group in groups), groups


def test_latency_by_level0_goes_with_a_run(workspace, tmp_path):
    _, traces, _ = workspace
    completed = subprocess.run([str(program("leveldb_driver", False)), "--db", str(tmp_path / "db"),
                                "--load", str(traces["load"]), "--latency-by-level0"],
                               env=clean_environment(), capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2
    assert "--latency-by-level0 go with --run" in completed.stderr
    assert not (tmp_path / "db").exists()


def test_held_compactions_refuse_a_trace_that_writes(workspace):
    # Workload A updates: LevelDB would stop its writes until held work ran.
    run_trace(workspace, "a", 0, program("leveldb_driver", False), clean_environment(),
              "--compactions", "held", image="level0", expect_status=2)


@pytest.mark.parametrize("bloom_bits", [0, 10])
def test_plain_driver_finds_every_key(workspace, bloom_bits):
    summary = run_trace(workspace, "c", bloom_bits, program("leveldb_driver", False),
                        clean_environment())
    assert summary["gets"] == READS and summary["found"] == READS
    assert summary["mismatches"] == 0
    assert summary["latency_us"]["p50"] > 0


@pytest.mark.parametrize("bloom_bits", [0, 10])
@pytest.mark.parametrize("engine", ENGINES)
def test_foreactor_driver_returns_what_leveldb_returns(workspace, tmp_path, engine, bloom_bits):
    stats = tmp_path / "stats.json"
    summary = run_trace(workspace, "c", bloom_bits, program("leveldb_driver", True),
                        foreactor_environment(engine, 8, stats))
    assert summary["gets"] == READS and summary["found"] == READS
    assert summary["mismatches"] == 0
    graphs = graph_statistics(stats)
    # A Get runs in a scope when the plugin could plan it: not the memtable
    # hits, nor a table's first Gets before its layout is in the page cache.
    scopes = sum(g.get("scopes", 0) for g in graphs.values())
    assert 0 < scopes <= READS, graphs
    ahead = sum(reads_ahead(g) for g in graphs.values())
    if engine == "sync":
        assert ahead == 0, graphs
    else:
        assert ahead > 0, graphs


@pytest.mark.parametrize("engine", ("io_uring", "threads"))
def test_foreactor_driver_with_updates_and_client_threads(workspace, tmp_path, engine):
    stats = tmp_path / "stats.json"
    summary = run_trace(workspace, "a", 0, program("leveldb_driver", True),
                        foreactor_environment(engine, 8, stats), "--threads", 4)
    assert summary["gets"] + summary["puts"] == 2000
    assert summary["mismatches"] == 0 and summary["put_errors"] == 0


def test_driver_reports_missing_keys(workspace):
    # An image of only the first half of the load: Gets of the other keys
    # come back NotFound, which the driver must count and fail on.
    directory, traces, _ = workspace
    driver = program("leveldb_driver", False)
    half = directory / "image_half"
    run_driver([driver, "--db", half, "--load", traces["load"], "--ops", RECORDS // 2],
               clean_environment())
    summary = run_driver([driver, "--db", directory / "run_half", "--clone-from", half,
                          "--run", traces["c"]], clean_environment(), expect_status=1)
    assert summary["mismatches"] == summary["not_found"] > 0


def test_clone_never_replaces_a_folder_that_is_not_a_database(workspace, tmp_path):
    _, traces, images = workspace
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "file").write_text("keep")
    run_driver([program("leveldb_driver", False), "--db", precious, "--clone-from", images[0],
                "--run", traces["c"]], clean_environment(), expect_status=2)
    assert (precious / "file").read_text() == "keep"


def test_driver_reports_altered_values(workspace, tmp_path):
    # A copy of the image with one byte in every 2 KiB of its tables
    # inverted (LevelDB does not verify block checksums by default): Gets
    # return altered values, or fail, and the driver must count them.
    _, traces, images = workspace
    altered = tmp_path / "altered"
    shutil.copytree(images[0], altered)
    for table in altered.glob("*.ldb"):
        data = bytearray(table.read_bytes())
        for offset in range(1000, len(data) - 1000, 2048):
            data[offset] ^= 0xFF
        table.write_bytes(bytes(data))
    summary = run_driver([program("leveldb_driver", False), "--db", altered, "--run", traces["c"]],
                         clean_environment(), expect_status=1)
    assert summary["mismatches"] > 0


def test_foreactor_driver_keeps_the_plain_drivers_code_layout():
    """The plugin is linked after LevelDB (apps/leveldb/programs/CMakeLists.txt):
    every function of the driver and of LevelDB lies at the same distance
    from main in both drivers (tools/compare_code_layout.py), so that a
    comparison of the two at 100% memory measures foreactor, not where the
    code landed."""
    completed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compare_code_layout.py"),
         program("leveldb_driver", foreactor=False), program("leveldb_driver", foreactor=True)],
        capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert int(completed.stdout.split()[0]) > 300, completed.stdout
