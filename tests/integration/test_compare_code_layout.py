"""tools/compare_code_layout.py on a small C program linked three ways: as
it is, with a "plugin" object of code linked before its objects (every
function of the program moves) and linked after them (none moves)."""

import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "compare_code_layout.py"

PROGRAM = """
#include <stdio.h>
int square(int x) { return x * x; }
int cube(int x) { return x * square(x); }
int main(int argc, char** argv) { (void)argv; printf("%d\\n", cube(argc)); return 0; }
"""
PLUGIN = """
int plugin_work(int x) {
  int sum = 0;
  for (int i = 0; i < x; ++i) sum += i * 7 % 13;
  return sum;
}
int plugin_more(int x) { return plugin_work(x) + plugin_work(x + 1); }
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("layout")
    (directory / "program.c").write_text(PROGRAM)
    (directory / "plugin.c").write_text(PLUGIN)
    for name in ("program", "plugin"):
        subprocess.run(["cc", "-O2", "-c", f"{name}.c", "-o", f"{name}.o"], cwd=directory,
                       check=True)
    links = {"plain": ["program.o"], "plugin_first": ["plugin.o", "program.o"],
             "plugin_last": ["program.o", "plugin.o"]}
    for name, objects in links.items():
        subprocess.run(["cc", "-o", name] + objects, cwd=directory, check=True)
    return directory


def compare(programs, with_plugin, *prefixes):
    return subprocess.run([sys.executable, str(TOOL), str(programs / "plain"),
                           str(programs / with_plugin), *prefixes], capture_output=True, text=True)


def test_a_plugin_linked_first_moves_the_programs_functions(programs):
    result = compare(programs, "plugin_first")
    assert result.returncode == 1, result.stdout + result.stderr
    assert " moved (first: " in result.stdout
    assert compare(programs, "plugin_first", "cube").returncode == 1


def test_a_plugin_linked_last_keeps_the_layout(programs):
    result = compare(programs, "plugin_last")
    assert result.returncode == 0, result.stdout + result.stderr
    # main, square and cube at least (crt functions too).
    compared = int(result.stdout.split()[0])
    assert compared >= 3 and result.stdout.endswith("0 moved\n"), result.stdout


def test_unreadable_executable_is_a_usage_error(programs):
    result = subprocess.run([sys.executable, str(TOOL), str(programs / "plain"),
                             str(programs / "program.c")], capture_output=True, text=True)
    assert result.returncode == 2 and "compare_code_layout:" in result.stderr
    assert subprocess.run([sys.executable, str(TOOL)], capture_output=True).returncode == 2
