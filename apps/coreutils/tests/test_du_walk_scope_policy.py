"""Builds and runs du_walk_scope_policy_test.cc (GoogleTest): the du
plugin's scope policy with a fake clock, no coreutils needed."""

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def test_du_walk_scope_policy(tmp_path):
    if shutil.which("g++") is None or not Path("/usr/include/gtest/gtest.h").exists():
        pytest.skip("g++ or GoogleTest headers missing")
    program = tmp_path / "du_walk_scope_policy_test"
    subprocess.run(["g++", "-std=c++20", "-O1", "-Wall", "-Wextra", "-Werror",
                    f"-I{ROOT / 'include'}", f"-I{ROOT / 'apps' / 'coreutils' / 'plugins'}",
                    str(HERE / "du_walk_scope_policy_test.cc"), "-o", str(program),
                    "-lgtest", "-lgtest_main", "-pthread"], check=True)
    completed = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
