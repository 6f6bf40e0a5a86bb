"""What the pytest files of apps/bptree share: where the tools are, the
environment of a run, and reading what a run left behind."""

import hashlib
import json
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD_DIR = pathlib.Path(os.environ.get("FOREACTOR_BUILD_DIR", REPO / "build"))
PLAIN_TOOL = BUILD_DIR / "apps" / "bptree" / "bptree"
FOREACTOR_TOOL = BUILD_DIR / "apps" / "bptree" / "plugins" / "bptree_foreactor"
TOOLS_BUILT = PLAIN_TOOL.exists() and FOREACTOR_TOOL.exists()
NOT_BUILT = f"bptree and bptree_foreactor are not built in {BUILD_DIR}"


def environment(engine=None, stats=None, **settings):
    """The environment of one run: foreactor off, or on with `engine`, its
    statistics written to `stats`, and FOREACTOR_<NAME> for each of
    `settings` (name=value)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("FOREACTOR") and name != "LD_PRELOAD"}
    if engine is not None:
        env.update({"FOREACTOR": "1", "FOREACTOR_ENGINE": engine, "FOREACTOR_STATS": str(stats)})
        env.update({f"FOREACTOR_{name.upper()}": str(value) for name, value in settings.items()})
    return env


def graph_statistics(stats_file, graph):
    return json.loads(pathlib.Path(stats_file).read_text())["graphs"][graph]


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def run(tool, *arguments, env=None):
    """Runs `tool` with `arguments` (made strings) in `env`; asserts that it
    succeeded and returns its stdout."""
    completed = subprocess.run([str(tool)] + [str(a) for a in arguments], env=env,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def scan_result(stdout):
    """'count N checksum 0x..' of a scan's output (without the time)."""
    return stdout.split(" elapsed_ms")[0]
