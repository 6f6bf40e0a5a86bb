"""Tests of the `foreactor` command line tool (tools/foreactor).

They run the script from the source tree.  Programs are run with
--no-preload, or with a stand-in libforeactor.so (an empty shared library
compiled here), so that these tests check the tool and nothing else.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import compile_c

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "foreactor")
BUILD_DIR = os.environ.get("FOREACTOR_BUILD_DIR", os.path.join(ROOT, "build"))


def clean_environment(**extra):
    """The test's environment without any FOREACTOR* or LD_PRELOAD variable."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("FOREACTOR") and key != "LD_PRELOAD"}
    environment.update(extra)
    return environment


def run_tool(arguments, tool=TOOL, environment=None, **kwargs):
    return subprocess.run([sys.executable, tool] + list(arguments), capture_output=True,
                          text=True, timeout=60,
                          env=clean_environment() if environment is None else environment,
                          **kwargs)


def environment_of(result):
    """The variables printed by `env` in `result`."""
    assert result.returncode == 0, result.stderr
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


@pytest.fixture(scope="session")
def stand_in_library(tmp_path_factory):
    """An empty shared library named libforeactor.so: preloading it changes nothing."""
    library = tmp_path_factory.mktemp("stand_in") / "libforeactor.so"
    return str(compile_c("int foreactor_stand_in;\n", library, "-shared", "-fPIC"))


# ------------------------------------------------------------------- help


def test_tool_is_an_executable_python_script():
    assert os.access(TOOL, os.X_OK)
    with open(TOOL) as script:
        assert script.readline().startswith("#!/usr/bin/env python3")


@pytest.mark.parametrize("arguments, expected", [
    (["--help"], ["run", "stats"]),
    (["run", "--help"], ["--depth", "--engine", "io_uring", "threads", "sync", "--stats",
                         "--queue-size", "--workers", "--plugin", "--no-preload", "--"]),
    (["stats", "--help"], ["FILE", "hit rate"]),
])
def test_help_describes_every_option(arguments, expected):
    result = run_tool(arguments)
    assert result.returncode == 0, result.stderr
    for word in expected:
        assert word in result.stdout


# ------------------------------------------------------- argument handling


@pytest.mark.parametrize("arguments, message", [
    ([], "missing subcommand"),
    (["frobnicate"], "unknown subcommand 'frobnicate'; use 'run', 'stats', 'graph', 'trace' or 'bound'"),
    (["run", "touch", "MARKER"], "missing '--' before the command"),
    (["run", "--depth", "8", "touch", "MARKER"], "missing '--' before the command"),
    (["run", "--no-preload", "--"], "no command after '--'"),
    (["run", "--engine", "uring", "--", "touch", "MARKER"],
     "unknown engine 'uring'; valid engines are: io_uring, threads, sync"),
    (["run", "--engine", "IO_URING", "--", "touch", "MARKER"], "io_uring, threads, sync"),
    (["run", "--depth", "abc", "--", "touch", "MARKER"], "from 0 to 1024"),
    (["run", "--depth", "-1", "--", "touch", "MARKER"], "--depth"),
    (["run", "--depth", "1025", "--", "touch", "MARKER"], "from 0 to 1024"),
    (["run", "--depth", "8x", "--", "touch", "MARKER"], "from 0 to 1024"),
    (["run", "--queue-size", "0", "--", "touch", "MARKER"], "from 1 to 32768"),
    (["run", "--queue-size", "32769", "--", "touch", "MARKER"], "from 1 to 32768"),
    (["run", "--workers", "0", "--", "touch", "MARKER"], "from 1 to 1024"),
    (["run", "--dep", "8", "--", "touch", "MARKER"], "unrecognized arguments: --dep"),
    (["run", "--frobnicate", "--", "touch", "MARKER"], "unrecognized arguments: --frobnicate"),
    (["run", "--no-preload", "--plugin", "/nonexistent/plugin.so", "--", "touch", "MARKER"],
     "plugin /nonexistent/plugin.so does not exist"),
    (["run", "--no-preload", "--stats", "/nonexistent/dir/s.json", "--", "touch", "MARKER"],
     "does not exist; create it first"),
    (["stats"], "the following arguments are required: FILE"),
    (["stats", "a.json", "b.json"], "unrecognized arguments: b.json"),
])
def test_bad_arguments_exit_2_with_a_helpful_message(tmp_path, arguments, message):
    result = run_tool(arguments, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "MARKER").exists(), "the command ran despite the error"


def test_bad_run_argument_points_to_help():
    result = run_tool(["run", "--depth", "x", "--", "true"])
    assert "foreactor run --help" in result.stderr


# ------------------------------------------------------------- passthrough


def test_exit_status_passes_through(stand_in_library):
    environment = clean_environment(FOREACTOR_LIBRARY=stand_in_library)
    result = run_tool(["run", "--", "sh", "-c", "exit 7"], environment=environment)
    assert result.returncode == 7, result.stderr
    result = run_tool(["run", "--no-preload", "--", "sh", "-c", "exit 0"])
    assert result.returncode == 0


def test_exit_status_passes_through_with_the_real_library():
    library = os.path.join(BUILD_DIR, "libforeactor.so")
    if not os.path.isfile(library):
        pytest.skip("libforeactor.so is not built in %s" % BUILD_DIR)
    result = run_tool(["run", "--", "sh", "-c", "exit 7"],
                      environment=clean_environment(FOREACTOR_LIBRARY=library))
    assert result.returncode == 7, result.stderr


def test_death_by_signal_passes_through():
    result = run_tool(["run", "--no-preload", "--", "sh", "-c", "kill -TERM $$; exit 3"])
    assert result.returncode == -signal.SIGTERM


def test_command_output_and_input_pass_through():
    result = run_tool(["run", "--no-preload", "--", "sh", "-c", "cat; echo err >&2"],
                      input="hello\n")
    assert result.returncode == 0
    assert result.stdout == "hello\n"
    assert result.stderr == "err\n"


def ignored_signals(command):
    """The SigIgn mask of `command` (which must print /proc/self/status)."""
    output = subprocess.run(command, capture_output=True, text=True, check=True,
                            env=clean_environment()).stdout
    return re.search(r"^SigIgn:\s*(\S+)$", output, re.MULTILINE).group(1)


def test_command_gets_the_signal_dispositions_it_would_get_without_the_tool():
    direct = ignored_signals(["cat", "/proc/self/status"])
    through_tool = ignored_signals([sys.executable, TOOL, "run", "--no-preload", "--",
                                    "cat", "/proc/self/status"])
    assert through_tool == direct


def test_command_not_found_exits_127():
    result = run_tool(["run", "--no-preload", "--", "no-such-command-foreactor"])
    assert result.returncode == 127
    assert "command not found: no-such-command-foreactor" in result.stderr


def test_command_not_executable_exits_126(tmp_path):
    script = tmp_path / "not_executable"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    result = run_tool(["run", "--no-preload", "--", str(script)])
    assert result.returncode == 126
    assert "cannot execute" in result.stderr


# ------------------------------------------------------------- environment


def test_depth_auto_is_passed_on():
    variables = environment_of(run_tool(["run", "--no-preload", "--depth", "auto", "--", "env"]))
    assert variables["FOREACTOR_DEPTH"] == "auto"


def test_sets_foreactor_and_depth():
    variables = environment_of(run_tool(["run", "--no-preload", "--depth", "8", "--", "env"]))
    assert variables["FOREACTOR"] == "1"
    assert variables["FOREACTOR_DEPTH"] == "8"
    for unset in ("FOREACTOR_ENGINE", "FOREACTOR_QUEUE_SIZE", "FOREACTOR_WORKERS",
                  "FOREACTOR_IO_URING_ASYNC", "FOREACTOR_STATS", "FOREACTOR_EXACT_DEPTH",
                  "LD_PRELOAD"):
        assert unset not in variables


def test_exact_depth_keeps_the_depth_given():
    variables = environment_of(run_tool(["run", "--no-preload", "--depth", "8", "--exact-depth",
                                         "--", "env"]))
    assert (variables["FOREACTOR_DEPTH"], variables["FOREACTOR_EXACT_DEPTH"]) == ("8", "1")


def test_check_sets_check_mode():
    variables = environment_of(run_tool(["run", "--no-preload", "--check", "--", "env"]))
    assert variables["FOREACTOR_CHECK"] == "1"
    plain = environment_of(run_tool(["run", "--no-preload", "--", "env"]))
    assert "FOREACTOR_CHECK" not in plain


def test_sets_every_option(tmp_path):
    (tmp_path / "out").mkdir()
    variables = environment_of(run_tool(
        ["run", "--no-preload", "--depth", "0", "--engine", "threads", "--queue-size", "64",
         "--workers", "4", "--io-uring-async", "--stats", "out/s.json", "--", "env"],
        cwd=tmp_path))
    assert variables["FOREACTOR"] == "1"
    assert variables["FOREACTOR_DEPTH"] == "0"
    assert variables["FOREACTOR_ENGINE"] == "threads"
    assert variables["FOREACTOR_QUEUE_SIZE"] == "64"
    assert variables["FOREACTOR_WORKERS"] == "4"
    assert variables["FOREACTOR_IO_URING_ASYNC"] == "1"
    # Absolute, so a program that changes directory still writes it where asked.
    assert variables["FOREACTOR_STATS"] == str(tmp_path / "out" / "s.json")


def test_no_write_behind_turns_it_off():
    variables = environment_of(run_tool(["run", "--no-preload", "--no-write-behind", "--",
                                         "env"]))
    assert variables["FOREACTOR_WRITE_BEHIND"] == "0"
    plain = environment_of(run_tool(["run", "--no-preload", "--", "env"]))
    assert "FOREACTOR_WRITE_BEHIND" not in plain


def test_keeps_settings_it_was_not_given():
    environment = clean_environment(FOREACTOR_ENGINE="sync", FOREACTOR_DEPTH_btree="3")
    variables = environment_of(run_tool(["run", "--no-preload", "--depth", "2", "--", "env"],
                                        environment=environment))
    assert variables["FOREACTOR_ENGINE"] == "sync"
    assert variables["FOREACTOR_DEPTH_btree"] == "3"
    assert variables["FOREACTOR_DEPTH"] == "2"


def test_preloads_the_library_then_plugins_then_the_existing_preload(tmp_path, stand_in_library):
    plugin = tmp_path / "libplugin.so"
    shutil.copy(stand_in_library, plugin)
    environment = clean_environment(FOREACTOR_LIBRARY=stand_in_library,
                                    LD_PRELOAD=stand_in_library)
    variables = environment_of(run_tool(["run", "--plugin", "libplugin.so", "--", "env"],
                                        environment=environment, cwd=tmp_path))
    assert variables["LD_PRELOAD"] == ":".join([stand_in_library, str(plugin), stand_in_library])


def test_no_preload_still_preloads_plugins(tmp_path, stand_in_library):
    variables = environment_of(run_tool(
        ["run", "--no-preload", "--plugin", stand_in_library, "--", "env"]))
    assert variables["LD_PRELOAD"] == stand_in_library


@pytest.mark.parametrize("library_directory", ["lib", "lib64", "lib/x86_64-linux-gnu"])
def test_finds_the_library_of_an_installation(tmp_path, stand_in_library, library_directory):
    (tmp_path / "bin").mkdir()
    (tmp_path / library_directory).mkdir(parents=True)
    tool = tmp_path / "bin" / "foreactor"
    shutil.copy(TOOL, tool)
    library = tmp_path / library_directory / "libforeactor.so"
    shutil.copy(stand_in_library, library)
    variables = environment_of(run_tool(["run", "--", "env"], tool=str(tool)))
    assert variables["LD_PRELOAD"] == str(library)


def test_finds_the_library_of_a_build_tree(tmp_path, stand_in_library):
    (tmp_path / "tools").mkdir()
    tool = tmp_path / "tools" / "foreactor"
    shutil.copy(TOOL, tool)
    shutil.copy(stand_in_library, tmp_path / "libforeactor.so")
    variables = environment_of(run_tool(["run", "--", "env"], tool=str(tool)))
    assert variables["LD_PRELOAD"] == str(tmp_path / "libforeactor.so")


def test_missing_library_says_what_to_do(tmp_path):
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "foreactor"
    shutil.copy(TOOL, tool)
    result = run_tool(["run", "--", "touch", str(tmp_path / "MARKER")], tool=str(tool))
    assert result.returncode == 125
    assert "cannot find libforeactor.so" in result.stderr
    assert "FOREACTOR_LIBRARY" in result.stderr and "--no-preload" in result.stderr
    assert not (tmp_path / "MARKER").exists()


def test_wrong_foreactor_library_is_reported(tmp_path):
    environment = clean_environment(FOREACTOR_LIBRARY=str(tmp_path / "nothing.so"))
    result = run_tool(["run", "--", "true"], environment=environment)
    assert result.returncode == 2
    assert "FOREACTOR_LIBRARY=%s is not a file" % (tmp_path / "nothing.so") in result.stderr


# ------------------------------------------------------------------- stats

SAMPLE = {
    "graphs": {
        "btree_search": {
            "engine": "io_uring", "scopes": 1200, "intercepted": 48000, "passed_through": 12,
            "issued_early": 40000, "consumed": 38000, "wasted": 1500, "mispredicted": 500,
            "synchronous": 10000, "cancelled": 300, "speculation_stopped": 2,
            "bytes_early": 155648000, "wait_nanoseconds": 1234567890,
        },
        "du": {
            "engine": "threads", "scopes": 0, "intercepted": 0, "passed_through": 0,
            "issued_early": 0, "consumed": 0, "wasted": 0, "mispredicted": 0, "synchronous": 0,
            "cancelled": 0, "speculation_stopped": 0, "bytes_early": 0, "wait_nanoseconds": 0,
        },
    },
    "pid": 4242,
}


def write_json(path, document):
    path.write_text(json.dumps(document))
    return str(path)


def table_of(output, graph):
    """The lines of `graph`'s table in the stats output, header first."""
    lines = output.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("graph %s " % graph)))
    table = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        table.append(line)
    return table


def row(table, label):
    """The value and note of the row labelled `label`."""
    for line in table[1:]:
        match = re.match(r"^\s+(\S+(?: \S+)*)\s{2,}(\S+(?: \S+)?)(?:\s{3}(.*))?$", line)
        if match and match.group(1) == label:
            return match.group(2), match.group(3) or ""
    raise AssertionError("no row %r in:\n%s" % (label, "\n".join(table)))


def test_stats_renders_a_table_per_graph(tmp_path):
    result = run_tool(["stats", write_json(tmp_path / "s.json", SAMPLE)])
    assert result.returncode == 0, result.stderr
    assert "(pid 4242)" in result.stdout
    table = table_of(result.stdout, "btree_search")
    assert table[0] == "graph btree_search  (engine io_uring)"
    assert row(table, "scopes") == ("1,200", "")
    assert row(table, "issued early")[0] == "40,000"
    assert row(table, "consumed") == ("38,000", "95.0% of issued")
    assert row(table, "wasted") == ("1,500", "3.8% of issued")
    assert row(table, "mispredicted") == ("500", "1.2% of issued")
    assert row(table, "synchronous") == ("10,000", "20.8% of calls")
    assert row(table, "hit rate") == ("79.2%", "consumed / calls")
    assert row(table, "bytes early")[0] == "148.4 MiB"
    assert row(table, "wait time") == ("1.235 s", "32.488 us per consumed result")
    assert row(table, "speculation stopped")[0] == "2"


def test_stats_shows_write_behind_only_for_graphs_that_used_it(tmp_path):
    document = json.loads(json.dumps(SAMPLE))
    document["graphs"]["btree_search"].update({
        "write_behind_requests": 48, "write_behind_bytes": 50331648, "write_behind_errors": 1,
        "write_behind_wait_nanoseconds": 2500000})
    result = run_tool(["stats", write_json(tmp_path / "s.json", document)])
    assert result.returncode == 0, result.stderr
    table = table_of(result.stdout, "btree_search")
    assert row(table, "written behind") == ("48.0 MiB", "write-back started early, in 48 requests")
    assert row(table, "hint errors")[0] == "1"
    assert row(table, "hint wait time")[0] == "2.500 ms"
    assert not any("written behind" in line for line in table_of(result.stdout, "du"))


def test_stats_table_is_aligned(tmp_path):
    result = run_tool(["stats", write_json(tmp_path / "s.json", SAMPLE)])
    for graph in ("btree_search", "du"):
        table = table_of(result.stdout, graph)
        # Every value ends in the column where the "scopes" value ends, and
        # every note starts three columns later.
        value_end = re.match(r"^\s+scopes\s+\S+", table[1]).end()
        for line in table[1:]:
            assert line[value_end - 1] != " ", "\n".join(table)
            assert len(line) == value_end or line[value_end:value_end + 3] == "   ", \
                "\n".join(table)
            assert line[value_end + 3:value_end + 4] != " "


def test_stats_without_activity_has_no_ratio_to_divide_by_zero(tmp_path):
    result = run_tool(["stats", write_json(tmp_path / "s.json", SAMPLE)])
    table = table_of(result.stdout, "du")
    assert table[0] == "graph du  (engine threads)"
    assert row(table, "hit rate")[0] == "-"
    assert row(table, "consumed") == ("0", "")


def test_stats_lists_graphs_in_name_order(tmp_path):
    result = run_tool(["stats", write_json(tmp_path / "s.json", SAMPLE)])
    assert result.stdout.index("graph btree_search") < result.stdout.index("graph du")


def test_stats_with_no_graph(tmp_path):
    result = run_tool(["stats", write_json(tmp_path / "s.json", {"graphs": {}, "pid": 1})])
    assert result.returncode == 0
    assert "no graph recorded any scope" in result.stdout


def test_stats_reads_stdin():
    result = run_tool(["stats", "-"], input=json.dumps(SAMPLE))
    assert result.returncode == 0, result.stderr
    assert "graph btree_search" in result.stdout


def test_stats_shows_counters_it_does_not_know(tmp_path):
    document = json.loads(json.dumps(SAMPLE))
    document["graphs"]["du"]["shiny_new_counter"] = 77
    result = run_tool(["stats", write_json(tmp_path / "s.json", document)])
    assert result.returncode == 0, result.stderr
    assert row(table_of(result.stdout, "du"), "shiny new counter")[0] == "77"


@pytest.mark.parametrize("content, message", [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "no \"graphs\" object"),
    ('{"graphs": {"g": 3}}', "graph 'g' is not an object"),
    ('{"graphs": {"g": {"scopes": "many"}}}', "scopes of graph 'g' is not a count"),
    ('{"graphs": {"g": {"scopes": -1}}}', "scopes of graph 'g' is not a count"),
    ('{"graphs": {"g": {"engine": 5}}}', "engine of graph 'g' is not a string"),
])
def test_stats_rejects_files_that_are_not_statistics(tmp_path, content, message):
    path = tmp_path / "s.json"
    path.write_text(content)
    result = run_tool(["stats", str(path)])
    assert result.returncode == 2
    assert "is not a foreactor statistics file" in result.stderr
    assert message in result.stderr
    assert "--stats" in result.stderr  # says where a real one comes from


def test_stats_missing_file_says_how_to_make_one(tmp_path):
    result = run_tool(["stats", str(tmp_path / "missing.json")])
    assert result.returncode == 2
    assert "no such file" in result.stderr
    assert "foreactor run --stats" in result.stderr


def test_stats_of_a_directory(tmp_path):
    result = run_tool(["stats", str(tmp_path)])
    assert result.returncode == 2
    assert "is a directory" in result.stderr


# ---------------------------------------------------------------- build copy


def test_build_tree_copy_matches_the_source():
    copy = os.path.join(BUILD_DIR, "tools", "foreactor")
    if not os.path.exists(copy):
        pytest.skip("the tool is not built in %s" % BUILD_DIR)
    assert os.access(copy, os.X_OK)
    with open(copy, "rb") as built, open(TOOL, "rb") as source:
        assert built.read() == source.read(), "rebuild: %s is stale" % copy
