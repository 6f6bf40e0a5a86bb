"""Tests of `foreactor graph` (tools/foreactor_cli/graph.py and the preloaded
tools/graph_dump/ library): it runs a program once and writes the graphs
the program's plugins build."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

sys.path.insert(0, str(REPO / "tools"))
from foreactor_cli.structure import structure  # noqa: E402

TOOL = str(REPO / "tools" / "foreactor")

# Under AddressSanitizer (tests/sanitizers/run_sanitizers.sh) the sanitizer
# runtime must be the first library of a process: preloading libraries into
# programs, or linking plain programs with the sanitized library, cannot work.
preloads = pytest.mark.skipif(os.environ.get("FOREACTOR_SANITIZED") == "address",
                              reason="preloads into programs or links against the ASan library")


def run_tool(arguments, cwd=None):
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("FOREACTOR") and key != "LD_PRELOAD"}
    environment["FOREACTOR_BUILD_DIR"] = str(build_dir())
    return subprocess.run([sys.executable, TOOL] + list(arguments), capture_output=True,
                          text=True, timeout=120, env=environment, cwd=cwd)


def built(relative):
    path = build_dir() / relative
    if not path.exists():
        pytest.fail("%s is missing: build the project first (./run build)" % path)
    return str(path)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("graph_data") / "data.bin"
    path.write_bytes(os.urandom(8192 * 16))
    return str(path)


def example(data_file):
    return [built("examples/random_read/random_read_foreactor"), data_file, "4", "1"]


@preloads
def test_writes_and_lists_the_example_graph(tmp_path, data_file):
    result = run_tool(["graph", "--output", str(tmp_path / "out"), "--"] + example(data_file))
    assert result.returncode == 0, result
    assert "checksum" in result.stdout  # the program ran as usual
    row = next(line for line in result.stdout.splitlines() if line.startswith("random_read "))
    assert row.split()[1] == "4"  # start, read_block, more, end
    dot = (tmp_path / "out" / "random_read.dot").read_text()
    nodes, edges = structure(dot)
    assert nodes == [("start", None), ("syscall", "pread"), ("branch", None), ("end", None)]
    assert (1, 2, None, True, False) in edges  # the weak edge after the read


@preloads
def test_a_second_run_replaces_the_first(tmp_path, data_file):
    for _ in range(2):
        result = run_tool(["graph", "--output", str(tmp_path), "--"] + example(data_file))
        assert result.returncode == 0, result
    assert sorted(os.listdir(tmp_path)) == ["graphs.jsonl", "random_read.dot"]


@preloads
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
@pytest.mark.parametrize("form, magic", [("png", b"\x89PNG"), ("svg", b"<?xml")])
def test_pictures_through_graphviz(tmp_path, data_file, form, magic):
    result = run_tool(["graph", "--format", form, "--output", str(tmp_path), "--"]
                      + example(data_file))
    assert result.returncode == 0, result
    assert (tmp_path / ("random_read." + form)).read_bytes().startswith(magic)
    assert (tmp_path / "random_read.dot").exists()


@preloads
def test_without_graphviz_it_writes_dot_and_says_so(tmp_path, data_file, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no 'dot' (the program has an absolute path)
    result = run_tool(["graph", "--format", "png", "--output", str(tmp_path), "--"]
                      + example(data_file))
    assert result.returncode == 0, result
    assert "Graphviz 'dot' is not installed: wrote DOT only" in result.stdout
    assert (tmp_path / "random_read.dot").exists()
    assert not (tmp_path / "random_read.png").exists()


@preloads
def test_every_graph_of_the_bptree_program(tmp_path):
    tree = tmp_path / "tree.db"
    subprocess.run([built("apps/bptree/bptree"), "load", str(tree), "--count", "2000"],
                   check=True, capture_output=True)
    result = run_tool(["graph", "--output", str(tmp_path / "g"), "--",
                       built("apps/bptree/plugins/bptree_foreactor"), "scan", str(tree), "0", "10"])
    assert result.returncode == 0, result
    assert {"bptree_scan.dot", "bptree_load.dot"} <= set(os.listdir(tmp_path / "g"))


@preloads
def test_status_passes_through_and_no_graph_is_reported(tmp_path):
    result = run_tool(["graph", "--output", str(tmp_path), "--", "sh", "-c", "exit 7"])
    assert result.returncode == 7
    assert "built no foreaction graph" in result.stdout
    quiet = run_tool(["graph", "--output", str(tmp_path), "--", "true"])
    assert quiet.returncode == 1  # succeeded, but there is nothing to show
    missing = run_tool(["graph", "--output", str(tmp_path), "--", str(tmp_path / "nothing")])
    assert missing.returncode == 127
    assert "command not found" in missing.stderr


@pytest.mark.parametrize("arguments, message", [
    ([], "missing '--'"),
    (["--"], "no command after '--'"),
    (["--format", "jpeg", "--", "true"], "invalid choice: 'jpeg'"),
    (["--plugin", "/nonexistent/plugin.so", "--", "true"], "does not exist"),
])
def test_bad_arguments_exit_2_with_a_hint(arguments, message):
    result = run_tool(["graph"] + arguments)
    assert result.returncode == 2, result
    assert message in result.stderr
    assert "Try 'foreactor graph --help'" in result.stderr


def test_output_that_is_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("")
    result = run_tool(["graph", "--output", str(target), "--", "true"])
    assert result.returncode == 2
    assert "is a file" in result.stderr


def test_help():
    result = run_tool(["graph", "--help"])
    assert result.returncode == 0
    for word in ("--output", "--format", "--plugin", "--no-preload", "svg", "png"):
        assert word in result.stdout


@preloads
def test_installed_tool_finds_its_helpers(tmp_path, data_file):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(build_dir()), "--prefix", str(prefix)],
                   check=True, capture_output=True)
    installed = prefix / "bin" / "foreactor"
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("FOREACTOR") and key != "LD_PRELOAD"}
    result = subprocess.run([sys.executable, str(installed), "graph", "--output",
                             str(tmp_path / "g"), "--"] + example(data_file),
                            capture_output=True, text=True, timeout=120, env=environment)
    assert result.returncode == 0, result
    assert (tmp_path / "g" / "random_read.dot").exists()
    assert (prefix / "lib" / "foreactor" / "foreactor-trace-recorder").exists()
