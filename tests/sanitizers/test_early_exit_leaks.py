"""Scopes that end early (return at a weak edge, C++ exception through
foreactor::Scope) leave nothing behind: no descriptor, no heap growth, and,
in the AddressSanitizer build, no leak LeakSanitizer can find at exit."""

import os
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ROUNDS = 3000 if os.environ.get("FOREACTOR_LONG_TESTS", "0") == "1" else 400


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FOREACTOR_BUILD_DIR", REPO / "build")).resolve()


def environment(**variables: str) -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("FOREACTOR") and key != "LD_PRELOAD"}
    env.update(variables)
    return env


def leak_program() -> pathlib.Path:
    path = build_dir() / "tests" / "sanitizers" / "early_exit_leaks"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the project first (./run build)")
    return path


@pytest.mark.parametrize("engine,depth", [("io_uring", 4), ("io_uring", 32), ("threads", 4),
                                          ("threads", 32), ("sync", 8)])
def test_early_exits_leave_nothing_behind(engine, depth, tmp_path):
    stats = tmp_path / "stats.json"
    env = environment(FOREACTOR="1", FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH=str(depth),
                      FOREACTOR_STATS=str(stats))
    completed = subprocess.run([str(leak_program()), str(tmp_path), str(ROUNDS)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    output = completed.stdout.decode()
    assert completed.returncode == 0, (output, completed.stderr.decode()[-4000:])
    match = re.search(r"descriptors grew by (-?\d+), heap grew by (-?\d+) bytes", output)
    assert match, output
    assert int(match.group(1)) <= 0, output
    assert b"LeakSanitizer" not in completed.stderr


def test_early_exits_give_the_same_results_as_without_foreactor(tmp_path):
    """The checksum the function computes does not depend on foreactor."""
    command = [str(leak_program()), str(tmp_path), "60"]
    plain = subprocess.run(command, env=environment(), stdout=subprocess.PIPE, timeout=300)
    assert plain.returncode == 0
    for engine in ("io_uring", "threads"):
        on = subprocess.run(command, env=environment(FOREACTOR="1", FOREACTOR_ENGINE=engine,
                                                     FOREACTOR_DEPTH="16"),
                            stdout=subprocess.PIPE, timeout=300)
        assert on.returncode == 0
        checksum = [line for line in on.stdout.splitlines() if line.startswith(b"checksum")]
        assert checksum == [line for line in plain.stdout.splitlines()
                            if line.startswith(b"checksum")]
