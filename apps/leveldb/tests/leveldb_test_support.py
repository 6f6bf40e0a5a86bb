"""Shared helpers of the LevelDB case study's tests.

built() runs apps/leveldb/build.sh once per test session: it fetches
LevelDB 1.23 (apt-get source: root and the network, the first time) and
builds libleveldb.a, LevelDB's test programs and the driver, plain and with
the plugin; about 4 minutes on 2 cores from scratch, seconds when built.
traces() makes small YCSB traces with the real YCSB jar (downloaded once by
apps/leveldb/ycsb/fetch_ycsb.sh).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
APP_DIR = ROOT / "apps" / "leveldb"
BUILD_SCRIPT = APP_DIR / "build.sh"
PROGRAM_DIR = Path(os.environ.get("LEVELDB_BUILD_DIR", ROOT / "third_party" / "leveldb-build"))
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
ENGINES = ("io_uring", "threads", "sync")

_build_outcome = None


def built():
    """PROGRAM_DIR once apps/leveldb/build.sh succeeded; fails the test otherwise."""
    global _build_outcome
    if _build_outcome is None:
        completed = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True,
                                   env={**os.environ, "FOREACTOR_BUILD_DIR": str(BUILD_DIR)},
                                   timeout=1800)
        _build_outcome = (completed.returncode == 0,
                          "apps/leveldb/build.sh failed:\n" + completed.stderr[-4000:])
    ok, message = _build_outcome
    if not ok:
        pytest.fail(message)
    return PROGRAM_DIR


def program(name, foreactor):
    """Path of a built program; skips a foreactor variant the build did not make
    (no plugin sources yet)."""
    path = built() / (name + ("_foreactor" if foreactor else ""))
    if foreactor and not path.exists():
        pytest.skip(f"{path.name} not built: apps/leveldb/plugin/ has no sources")
    assert path.exists(), f"{path} missing after build.sh"
    return path


def clean_environment(**extra):
    """The environment without any foreactor setting, plus `extra`."""
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("FOREACTOR") and name != "LD_PRELOAD"}
    environment.update({name: str(value) for name, value in extra.items()})
    return environment


def foreactor_environment(engine, depth, stats_file):
    """foreactor on for `engine` at `depth` (a number is exact); early issue
    even for reads the page cache holds (the test databases are small and
    cached)."""
    return clean_environment(FOREACTOR=1, FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH=depth,
                             FOREACTOR_EXACT_DEPTH=1, FOREACTOR_PAGE_CACHE=0,
                             FOREACTOR_STATS=stats_file)


def make_trace(directory, name, **arguments):
    """Writes a YCSB trace with apps/leveldb/ycsb/make_trace.py; returns its path."""
    subprocess.run(["bash", str(APP_DIR / "ycsb" / "fetch_ycsb.sh")], check=True,
                   capture_output=True, timeout=600)
    path = Path(directory) / name
    command = ["python3", str(APP_DIR / "ycsb" / "make_trace.py"), "--output", str(path)]
    for option, value in arguments.items():
        command += ["--" + option.replace("_", "-"), str(value)]
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    return path


def run_driver(arguments, environment, expect_status=0, timeout=600):
    """Runs leveldb_driver (arguments[0]) for at most `timeout` seconds;
    returns its JSON summary (None when it printed none: usage and open
    errors)."""
    completed = subprocess.run([str(a) for a in arguments], env=environment, capture_output=True,
                               text=True, timeout=timeout)
    assert completed.returncode == expect_status, (
        f"exit {completed.returncode}, expected {expect_status}:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout) if completed.stdout.strip() else None


def graph_statistics(stats_file):
    """{graph name: counters} written by foreactor at exit ({} when none)."""
    if not Path(stats_file).exists():
        return {}
    with open(stats_file) as handle:
        return json.load(handle).get("graphs", {})


def reads_ahead(counters):
    """The reads foreactor started ahead of LevelDB in one graph's `counters`:
    issued early on the engine, or started in the kernel (readahead), by the
    scope's peek head or while the plugin planned the Get, and left to
    LevelDB's own pread."""
    return (counters.get("issued_early", 0) + counters.get("reads_started", 0)
            + counters.get("reads_started_in_plans", 0))
