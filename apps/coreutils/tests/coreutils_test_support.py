"""Shared helpers of the coreutils case study's tests.

The programs are built by apps/coreutils/build.sh into
$FOREACTOR_COREUTILS_BIN_DIR (default third_party/coreutils-bin/): du and
cp (stock) and du-foreactor and cp-foreactor (same objects, plus the
plugins).  When the coreutils tree has
been fetched and configured already (or FOREACTOR_COREUTILS_BUILD=1 asks
for the whole build, about 3 minutes on 2 cores), programs() brings the four
programs up to date (a few seconds when they are); otherwise the tests skip,
since fetching coreutils needs root and the network (docs/COREUTILS.md).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD_SCRIPT = ROOT / "apps" / "coreutils" / "build.sh"
SOURCE_DIR = ROOT / "third_party" / "coreutils-9.1"
BIN_DIR = Path(os.environ.get("FOREACTOR_COREUTILS_BIN_DIR", ROOT / "third_party" / "coreutils-bin"))
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))

ENGINES = ("io_uring", "threads", "sync")
DEPTHS = (4, 64)

_build_outcome = None


def programs():
    """Paths of du, cp, du-foreactor, cp-foreactor; skips when not built."""
    global _build_outcome
    if _build_outcome is None:
        if (not (SOURCE_DIR / "config.status").exists()
                and os.environ.get("FOREACTOR_COREUTILS_BUILD") != "1"):
            _build_outcome = ("skip", "coreutils 9.1 is not fetched and configured: run "
                              "apps/coreutils/build.sh (about 5 minutes on 2 cores)")
        else:
            completed = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True,
                                       env={**os.environ, "FOREACTOR_BUILD_DIR": str(BUILD_DIR)},
                                       timeout=900)
            if completed.returncode != 0:
                _build_outcome = ("fail", "apps/coreutils/build.sh failed:\n" + completed.stderr)
            else:
                _build_outcome = ("ok", "")
    kind, message = _build_outcome
    if kind == "skip":
        pytest.skip(message)
    if kind == "fail":
        pytest.fail(message)
    names = ("du", "cp", "du-foreactor", "cp-foreactor")
    return {name: BIN_DIR / name for name in names}


def clean_environment(**extra):
    """The test's environment without any foreactor setting, plus `extra`."""
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("FOREACTOR") and name != "LD_PRELOAD"}
    environment["LC_ALL"] = "C"
    environment.update(extra)
    return environment


def foreactor_environment(engine, depth, stats_file):
    """foreactor on for `engine` at `depth`; a number is exact, so that the
    early path runs whatever it costs on the small, cached test trees."""
    return clean_environment(FOREACTOR="1", FOREACTOR_ENGINE=engine,
                             FOREACTOR_DEPTH=str(depth), FOREACTOR_EXACT_DEPTH="1",
                             FOREACTOR_STATS=str(stats_file))


def run(arguments, environment, check=True):
    """Runs a program; argv[0] is the stock name (du, cp) for both builds,
    so that messages, which name the program, compare equal."""
    executable = str(arguments[0])
    argv = [Path(executable).name.removesuffix("-foreactor")] + [str(a) for a in arguments[1:]]
    completed = subprocess.run(argv, executable=executable, env=environment,
                               capture_output=True, timeout=300)
    if check:
        assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    return completed


def graph_statistics(stats_file, graph):
    """The statistics of `graph` written at exit, or {} when it never ran."""
    with open(stats_file) as handle:
        return json.load(handle)["graphs"].get(graph, {})
