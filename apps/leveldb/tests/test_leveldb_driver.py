"""The YCSB driver on a small LevelDB (20,000 keys of 1 KiB, about 20 MB in
several levels), plain and with the foreactor plugin on each engine, with
and without a Bloom filter, block cache on (8 MiB): every Get is checked by
the driver (status and value), and an altered or missing value makes it fail.
About 30 s in all."""

import shutil

import pytest

from leveldb_test_support import (ENGINES, clean_environment, foreactor_environment,
                                  graph_statistics, make_trace, program, run_driver)

RECORDS = 20000
READS = 3000


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
    return directory, traces, images


def run_trace(workspace, name, bloom_bits, driver, environment, *extra, expect_status=0):
    directory, traces, images = workspace
    run_dir = directory / f"run_{name}_{bloom_bits}_{driver.name}"
    return run_driver([driver, "--db", run_dir, "--clone-from", images[bloom_bits],
                       "--run", traces[name], "--bloom-bits", bloom_bits, *extra],
                      environment, expect_status)


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
    issued = sum(g.get("issued_early", 0) for g in graphs.values())
    if engine == "sync":
        assert issued == 0, graphs
    else:
        assert issued > 0, graphs


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
