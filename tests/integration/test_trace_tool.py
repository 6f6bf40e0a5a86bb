"""Tests of `foreactor trace` (tools/foreactor_cli/trace.py, the recorder in
tools/trace/) and of the draft generator (tools/foreactor_cli/draft.py).

The draft generator is tested on synthetic call sequences; the recorder on a
small C program compiled here (a static function, a thread, an exit status)
and on the example and the B+-tree scan, whose drafts must have the shape of
their hand-written graphs as `foreactor graph` draws them.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, build_dir, compile_c

sys.path.insert(0, str(REPO / "tools"))
from foreactor_cli import draft as drafting  # noqa: E402
from foreactor_cli.structure import structure  # noqa: E402

TOOL = str(REPO / "tools" / "foreactor")

# Under AddressSanitizer (tests/sanitizers/run_sanitizers.sh) the sanitizer
# runtime must be the first library of a process: preloading libraries into
# programs, or linking plain programs with the sanitized library, cannot work.
preloads = pytest.mark.skipif(os.environ.get("FOREACTOR_SANITIZED") == "address",
                              reason="preloads into programs or links against the ASan library")


def tool_environment():
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("FOREACTOR") and key != "LD_PRELOAD"}
    environment["FOREACTOR_BUILD_DIR"] = str(build_dir())
    return environment


def run_tool(arguments, cwd=None, **variables):
    return subprocess.run([sys.executable, TOOL] + list(arguments), capture_output=True,
                          text=True, timeout=120, env=dict(tool_environment(), **variables),
                          cwd=cwd)


def built(relative):
    path = build_dir() / relative
    if not path.exists():
        pytest.fail("%s is missing: build the project first (./run build)" % path)
    return str(path)


# ------------------------------------------------- the draft, synthetic

def pread(fd, offset, count=4096, result=None):
    return {"call": "pread", "fd": fd, "count": count, "offset": offset,
            "result": count if result is None else result}


def invocation(calls, arguments=(0, 0, 0, 0, 0, 0)):
    return {"calls": calls, "arguments": list(arguments)}


def shape(draft):
    return structure(drafting.to_dot(draft))


def test_repetition_finds_the_longest_run():
    assert drafting.best_repetition(list("abcbcbcd")) == (1, 2, 3)
    assert drafting.best_repetition(list("abcd")) == (4, 0, 0)
    assert drafting.best_repetition(list("aaaa")) == (0, 1, 4)


def test_pattern_prefix_body_suffix():
    pattern = drafting.infer_pattern([["openat", "pread", "pread", "pread", "close"],
                                      ["openat", "pread", "close"]])
    assert (pattern.prefix, pattern.body, pattern.suffix) == (["openat"], ["pread"], ["close"])


def test_a_loop_of_reads_drafts_the_hand_written_shape():
    # Like the example's read_blocks(fd, offsets, count): weak edge after the read.
    draft = drafting.build_draft("f", [
        invocation([pread(5, 8192 * k) for k in (7, 2, 9)], (5, 1000, 3, 0, 0, 0)),
        invocation([pread(6, 8192 * k) for k in (1, 4)], (6, 2000, 2, 0, 0, 0))])
    nodes, edges = shape(draft)
    assert nodes == [("start", None), ("syscall", "pread"), ("branch", None), ("end", None)]
    assert edges == [(0, 1, None, False, False), (1, 2, None, True, False),
                     (2, 1, 0, False, True), (2, 3, 1, False, False)]
    fields = draft.nodes[2].fields
    assert fields["fd"] == {"kind": "argument", "index": 0}
    assert fields["count"] == {"kind": "constant", "value": 4096}
    assert fields["offset"]["kind"] == "varies"
    assert draft.iteration_argument == 2


def test_open_loop_close_with_results_and_progression():
    def run(fd, blocks):
        return invocation([{"call": "openat", "dirfd": -100, "path": "/data", "flags": 0,
                            "mode": 0, "result": fd}]
                          + [pread(fd, 100 + 512 * k, 512) for k in range(blocks)]
                          + [{"call": "close", "fd": fd, "result": 0}], (1, blocks, 0, 0, 0, 0))
    draft = drafting.build_draft("g", [run(3, 4), run(7, 3), run(4, 5)])
    by_name = {node.name: node for node in draft.nodes}
    assert by_name["openat_1"].fields["dirfd"] == {"kind": "constant", "value": -100}
    assert by_name["openat_1"].fields["path"] == {"kind": "constant", "value": "/data"}
    assert by_name["pread_1"].fields["fd"] == {"kind": "result", "node": "openat_1"}
    assert by_name["pread_1"].fields["offset"] == {"kind": "progression", "start": 100, "step": 512}
    assert by_name["close_1"].fields["fd"] == {"kind": "result", "node": "openat_1"}
    nodes, edges = shape(draft)
    assert [kind for kind, _ in nodes] == ["start", "syscall", "syscall", "branch", "syscall", "end"]
    # Every invocation ended after close, which leads to the end: no weak edge.
    assert not any(weak for _, _, _, weak, _ in edges)
    assert draft.iteration_argument == 1


def test_an_invocation_that_stops_inside_the_body_makes_a_weak_edge():
    fstat = {"call": "fstat", "fd": 3, "result": 0}
    draft = drafting.build_draft("h", [
        invocation([pread(3, 0), fstat, pread(3, 1), fstat, pread(3, 2), fstat]),
        invocation([pread(3, 0), fstat, pread(3, 1)])])
    pread_node = next(node for node in draft.nodes if node.name == "pread_1")
    fstat_node = next(node for node in draft.nodes if node.name == "fstat_1")
    assert pread_node.next[1] is True     # returned right after a pread
    assert fstat_node.next[1] is True     # returned after the last fstat (loop exit)


def test_a_loop_count_that_never_changes_is_written_as_a_constant():
    draft = drafting.build_draft("c", [invocation([pread(3, k) for k in range(3)], (1, 2)),
                                       invocation([pread(3, k) for k in range(3)], (1, 4))])
    assert draft.iteration_argument is None
    assert "return visit.iteration(0) + 1 < 3 ? 0 : 1;" in drafting.to_cpp(draft)
    # The branch says the loop's count too.
    assert "return static_cast<int64_t>(3);" in drafting.to_cpp(draft)
    once = drafting.build_draft("c", [invocation([pread(3, k) for k in range(3)], (1, 2))])
    assert "TODO: iterations" in drafting.to_cpp(once)
    assert "the loop's count" not in drafting.to_cpp(once)


def test_zero_iterations_add_a_branch_before_the_loop():
    opened = {"call": "open", "path": "x", "flags": 0, "mode": 0, "result": 3}
    closed = {"call": "close", "fd": 3, "result": 0}
    draft = drafting.build_draft("z", [invocation([opened, pread(3, 0), pread(3, 1), closed]),
                                       invocation([opened, closed])])
    names = [node.name for node in draft.nodes]
    assert "enter_loop" in names
    enter = draft.nodes[names.index("enter_loop")]
    assert [draft.nodes[to].name for to, _, _ in enter.children] == ["pread_1", "close_1"]


def test_standard_descriptors_and_unknown_calls_are_left_out():
    draft = drafting.build_draft("s", [invocation([
        {"call": "write", "fd": 2, "count": 10, "position": 0, "result": 10},
        {"call": "other", "number": 9, "result": 0},
        pread(3, 0)])])
    assert [node.call for node in draft.nodes if node.kind == "syscall"] == ["pread"]


def test_an_invocation_off_the_pattern_is_noted():
    draft = drafting.build_draft("n", [invocation([pread(3, k) for k in range(4)]),
                                       invocation([{"call": "fstat", "fd": 3, "result": 0}])])
    assert draft.notes == ["1 invocation(s) (1) do not follow the pattern: fstat; left out"]


def test_the_pattern_most_invocations_follow_wins():
    # Like gnulib's fts_read under du: mostly one fstatat per call, a few
    # calls that read a whole directory.
    fstatat = {"call": "fstatat", "dirfd": 4, "path": "x", "flags": 256, "result": 0}
    directory = [{"call": "openat", "dirfd": 4, "path": "d", "flags": 0, "mode": 0, "result": 5},
                 {"call": "getdents64", "fd": 5, "count": 32768, "result": 100},
                 {"call": "getdents64", "fd": 5, "count": 32768, "result": 0},
                 {"call": "close", "fd": 5, "result": 0}]
    draft = drafting.build_draft("walk", [invocation(directory)] + [invocation([fstatat])] * 5
                                 + [invocation([])])
    assert [node.call for node in draft.nodes if node.kind == "syscall"] == ["fstatat"]
    assert draft.nodes[0].next[1] is True  # one invocation made no call at all
    assert len(draft.notes) == 1 and draft.notes[0].startswith("1 invocation(s) (0)")


def test_draft_json_and_cpp_say_what_to_fill_in():
    draft = drafting.build_draft("read_blocks", [
        invocation([pread(4, 8192 * k) for k in (3, 1, 4)], (4, 0, 3, 0, 0, 0))])
    document = drafting.to_json(draft)
    assert document["graph"] == "read_blocks"
    assert [edge["weak"] for edge in document["edges"]].count(True) == 1
    code = drafting.to_cpp(draft)
    assert "foreactor::GraphBuilder<ReadBlocksState>" in code
    assert "TODO: varies" in code and "FOREACTOR_NOT_YET" in code
    assert "state.argument[2]" in code  # the loop count is argument 2


def test_draft_cpp_compiles(tmp_path):
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    opened = {"call": "openat", "dirfd": -100, "path": "a\"b", "flags": 0, "mode": 0, "result": 5}
    draft = drafting.build_draft("my_func", [
        invocation([opened] + [pread(5, 4096 * k) for k in range(3)]
                   + [{"call": "pwrite", "fd": 5, "count": 10, "offset": 0, "result": 10}], (9, 3)),
        invocation([opened] + [pread(5, 4096 * k) for k in range(4)]
                   + [{"call": "pwrite", "fd": 5, "count": 10, "offset": 0, "result": 10}], (9, 4))])
    source = tmp_path / "draft.cc"
    source.write_text(drafting.to_cpp(draft) + "\nint main() { return BuildMyFuncGraph().valid() ? 0 : 1; }\n")
    subprocess.run([compiler, "-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                    "-I", str(REPO / "include"), str(source)], check=True)


# --------------------------------------------------- the command line

@pytest.mark.parametrize("arguments, message", [
    (["--", "true"], "--function SYMBOL is required"),
    (["--function", "f"], "missing '--'"),
    (["--function", "f", "--"], "no command after '--'"),
    (["--function", "f", "--bogus", "--", "true"], "unrecognized arguments"),
    (["--function", "f", "--name", "a-b", "--", "true"], "--name must be"),
    (["--replay", "/nonexistent/log"], "no such file"),
])
def test_bad_arguments_exit_2_with_a_hint(arguments, message):
    result = run_tool(["trace"] + arguments)
    assert result.returncode == 2, result
    assert message in result.stderr
    assert "Try 'foreactor trace --help'" in result.stderr


def test_help():
    result = run_tool(["trace", "--help"])
    assert result.returncode == 0
    for word in ("--function", "--output", "--replay", "weak"):
        assert word in result.stdout


PROGRAM = r"""
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static long sum_file(const char *path, int blocks) {
  char buffer[512];
  long total = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  for (int i = 0; i < blocks; i++) {
    ssize_t got = pread(fd, buffer, sizeof buffer, (off_t)i * 1024);
    if (got <= 0) break;
    total += got;
  }
  close(fd);
  return total;
}

static void *on_thread(void *path) { return (void *)sum_file(path, 3); }

int main(int argc, char **argv) {
  if (argc != 3) return 9;
  long total = sum_file(argv[1], 4) + sum_file(argv[1], 6);
  pthread_t thread;
  void *from_thread = NULL;
  if (pthread_create(&thread, NULL, on_thread, argv[1]) != 0) return 8;
  pthread_join(thread, &from_thread);
  /* A forked child that calls the function must run normally (untraced). */
  pid_t child = fork();
  if (child == 0) _exit(sum_file(argv[1], 2) > 0 ? 0 : 5);
  int child_status = 0;
  if (child < 0 || waitpid(child, &child_status, 0) != child || child_status != 0) return 6;
  return total > 0 && from_thread != NULL ? atoi(argv[2]) : 7;
}
"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    directory = tmp_path_factory.mktemp("trace_sample")
    compile_c(PROGRAM, directory / "sample", "-O1", "-pthread")
    (directory / "data").write_bytes(bytes(range(256)) * 40)
    return directory


def test_trace_of_a_static_function_with_a_thread_and_a_fork(sample, tmp_path):
    output = tmp_path / "sum.cc"
    result = run_tool(["trace", "--function", "sum_file", "--output", str(output), "--",
                       str(sample / "sample"), str(sample / "data"), "3"])
    assert result.returncode == 3, result  # the program's own status
    assert "3 invocation(s)" in result.stdout
    document = json.loads((tmp_path / "sum.json").read_text())
    assert sorted(document["iterations"]) == [3, 4, 6]
    assert document["iterations_argument"] == 1
    nodes = {node["name"]: node for node in document["nodes"]}
    assert set(nodes) == {"start", "end", "openat_1", "pread_1", "more", "close_1"}
    assert nodes["openat_1"]["arguments"]["path"] == {"kind": "constant",
                                                      "value": str(sample / "data")}
    assert nodes["pread_1"]["arguments"]["fd"] == {"kind": "result", "node": "openat_1"}
    assert nodes["pread_1"]["arguments"]["offset"] == {"kind": "progression", "start": 0,
                                                       "step": 1024}
    assert nodes["close_1"]["arguments"]["fd"] == {"kind": "result", "node": "openat_1"}
    assert (tmp_path / "sum.dot").exists() and (tmp_path / "sum.trace.jsonl").exists()
    assert "Build" in output.read_text()
    # Drafting again from the log gives the same draft.
    again = run_tool(["trace", "--replay", str(tmp_path / "sum.trace.jsonl"),
                      "--output", str(tmp_path / "again.cc")])
    assert again.returncode == 0, again
    assert (tmp_path / "again.dot").read_text() == (tmp_path / "sum.dot").read_text()


def test_missing_symbol_names_similar_ones(sample, tmp_path):
    result = run_tool(["trace", "--function", "sum", "--output", str(tmp_path / "x.cc"), "--",
                       str(sample / "sample"), str(sample / "data"), "0"])
    assert result.returncode == 2, result
    assert "no function named 'sum'" in result.stderr
    assert "sum_file" in result.stderr


def test_function_never_called_and_missing_command(sample, tmp_path):
    never = run_tool(["trace", "--function", "sum_file", "--output", str(tmp_path / "x.cc"),
                      "--", str(sample / "sample")])  # wrong argument count: returns 9 at once
    assert never.returncode == 9, never
    assert "never called" in never.stdout
    missing = run_tool(["trace", "--function", "f", "--output", str(tmp_path / "y.cc"), "--",
                        str(tmp_path / "no_such_program")])
    assert missing.returncode == 127, missing
    assert "cannot run" in missing.stderr


# ------------------------- drafts against the hand-written graphs

def hand_written_dot(program_arguments, graph, directory):
    result = run_tool(["graph", "--output", str(directory), "--"] + program_arguments)
    assert result.returncode == 0, result
    return (directory / ("%s.dot" % graph)).read_text()


@preloads
def test_example_draft_has_the_hand_written_shape(tmp_path):
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(8192 * 64))
    result = run_tool(["trace", "--function", "read_blocks", "--output", str(tmp_path / "rb.cc"),
                       "--", built("examples/random_read/random_read"), str(data), "20", "7"])
    assert result.returncode == 0, result
    hand = hand_written_dot([built("examples/random_read/random_read_foreactor"), str(data),
                             "20", "7"], "random_read", tmp_path / "graphs")
    assert structure((tmp_path / "rb.dot").read_text()) == structure(hand)
    # The function inside an existing scope: the program with the plugin attached,
    # FOREACTOR=1 in the environment; the tracer keeps foreactor off and sees every read.
    scoped = run_tool(["trace", "--function", "read_blocks", "--output", str(tmp_path / "in.cc"),
                       "--", built("examples/random_read/random_read_foreactor"), str(data), "20",
                       "7"], FOREACTOR="1")
    assert scoped.returncode == 0, scoped
    assert structure((tmp_path / "in.dot").read_text()) == structure(hand)
    assert json.loads((tmp_path / "in.json").read_text())["nodes"][2]["visits"] == 20
    document = json.loads((tmp_path / "rb.json").read_text())
    assert document["iterations"] == [20]
    assert document["iterations_argument"] == 2


@preloads
def test_bptree_scan_draft_has_the_hand_written_shape(tmp_path):
    tree = tmp_path / "tree.db"
    subprocess.run([built("apps/bptree/bptree"), "insert", str(tree), "--count", "3000",
                    "--degree", "16"], check=True, capture_output=True)
    scan = ["scan", str(tree), "0", "0x7fffffffffffffff"]
    result = run_tool(["trace", "--function", "bptree_read_leaves", "--output",
                       str(tmp_path / "scan.cc"), "--", built("apps/bptree/bptree")] + scan)
    assert result.returncode == 0, result
    hand = hand_written_dot([built("apps/bptree/plugins/bptree_foreactor")] + scan,
                            "bptree_scan", tmp_path / "graphs")
    # The hand-written graph's scope spans Tree::Scan: a branch that waits
    # for the inner walk comes before the leaf loop the draft found.
    draft = (tmp_path / "scan.dot").read_text()
    assert structure(draft, from_first_call=True) == structure(hand, from_first_call=True)
    assert [kind for kind, _ in structure(hand)[0][:2]] == ["start", "branch"]


# ------------------- the plugin guide's worked example, end to end

WRAPPER = r"""
extern "C" {
#include "read_blocks.h"
uint64_t __real_read_blocks(int fd, const uint64_t* offsets, size_t count, char* buffer);
uint64_t __wrap_read_blocks(int fd, const uint64_t* offsets, size_t count, char* buffer) {
  static const foreactor::Graph<ReadBlocksState> graph = BuildReadBlocksGraph();
  ReadBlocksState state;
  state.argument[0] = static_cast<uint64_t>(fd);
  state.argument[1] = reinterpret_cast<uint64_t>(offsets);
  state.argument[2] = count;
  foreactor::Scope scope(graph, state);
  return __real_read_blocks(fd, offsets, count, buffer);
}
}
"""
FILLED_OFFSET = ("static_cast<int64_t>(reinterpret_cast<const uint64_t*>(state.argument[1])"
                 "[visit.iteration(0)])")


def fill_in(draft_code):
    """The two edits the plugin guide makes to the example's draft."""
    import re
    code = draft_code.replace(
        "        // TODO: fill in the arguments marked TODO, then delete this line:\n"
        "        if (true) return FOREACTOR_NOT_YET;\n", "")
    code, replaced = re.subn(r"/\* TODO: varies, e\.g\. [^*]*\*/ 0", FILLED_OFFSET, code)
    assert replaced == 1 and "TODO: fill in" not in code
    return code


@preloads
def test_filled_in_draft_passes_check_mode_and_issues_early(tmp_path):
    compiler = shutil.which("c++")
    c_compiler = shutil.which("cc")
    if compiler is None or c_compiler is None:
        pytest.skip("no compiler")
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(8192 * 64))
    stock = built("examples/random_read/random_read")
    traced = run_tool(["trace", "--function", "read_blocks", "--output", str(tmp_path / "rb.cc"),
                       "--", stock, str(data), "20", "7"])
    assert traced.returncode == 0, traced
    draft_code = (tmp_path / "rb.cc").read_text()
    example = REPO / "examples" / "random_read"
    objects = []
    for name in ("random_read.c", "read_blocks.c"):
        objects.append(str(tmp_path / (name + ".o")))
        subprocess.run([c_compiler, "-O1", "-c", str(example / name), "-o", objects[-1]], check=True)
    programs = {}
    for variant, code in (("draft", draft_code), ("filled", fill_in(draft_code))):
        source = tmp_path / ("%s_plugin.cc" % variant)
        source.write_text(code + WRAPPER)
        programs[variant] = str(tmp_path / ("random_read_" + variant))
        subprocess.run([compiler, "-std=c++20", "-O1", "-Wall", "-Wextra", "-Werror",
                        "-I", str(REPO / "include"), "-I", str(example), str(source)] + objects
                       + ["-Wl,--wrap=read_blocks", "-L", str(build_dir()), "-lforeactor",
                          "-Wl,-rpath," + str(build_dir()), "-o", programs[variant]], check=True)
    expected = subprocess.run([stock, str(data), "20", "7"], capture_output=True, text=True)

    def run(variant, *options):
        stats = tmp_path / ("%s%d.json" % (variant, len(options)))
        result = run_tool(["run", "--stats", str(stats)] + list(options)
                          + ["--", programs[variant], str(data), "20", "7"])
        assert result.returncode == 0, result
        assert result.stdout.split()[:2] == expected.stdout.split()[:2]  # same checksum
        return result, json.loads(stats.read_text())["graphs"]["read_blocks"]

    # The raw draft answers "not yet" for the read: check mode says so.
    result, counters = run("draft", "--check")
    assert counters["check_divergences"] > 0, result.stderr
    # Filled in, it follows the program exactly, and reads are issued early.
    result, counters = run("filled", "--check")
    assert counters["check_divergences"] == 0, result.stderr
    descriptor = os.open(data, os.O_RDONLY)  # evict the file: reads then go to the device
    os.fsync(descriptor)  # dirty pages cannot be dropped
    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(descriptor)
    result, counters = run("filled", "--depth", "8", "--engine", "threads")
    assert counters["scopes"] == 1 and counters["intercepted"] == 20
    # Every read was predicted: issued early, or found already in the page
    # cache (or returned by a probe that waited for the device, or left to
    # the program with its pages coming in, or started by the kernel and left).
    predicted = (counters["consumed"] + counters["found_cached"] + counters["served_from_cache"]
                 + counters["probes_waited"] + counters["found_present"]
                 + counters["reads_started"] + counters["left_in_file_order"])
    assert predicted >= 19 and counters["mispredicted"] == 0, counters


def test_structure_ignores_names_and_order_but_not_weak_edges_or_types():
    first = ('digraph "a" {\n  n0 [shape=circle, xlabel="start"];\n'
             '  n1 [shape=circle, xlabel="end", peripheries=2];\n'
             '  n2 [shape=box, label="x\\npread"];\n  n3 [shape=diamond, label="b"];\n'
             '  n0 -> n2;\n  n2 -> n3 [style=dashed];\n  n3 -> n2 [label="0: loop 0"];\n'
             '  n3 -> n1 [label="1"];\n}\n')
    renamed = (first.replace('"x\\npread"', '"y\\npread"').replace("n2", "n9").replace("n3", "n2")
               .replace("n9", "n3"))
    assert structure(renamed) == structure(first)
    assert structure(first.replace(" [style=dashed]", "")) != structure(first)
    assert structure(first.replace("pread", "read")) != structure(first)
    assert structure(first.replace('label="1"', 'label="2"')) != structure(first)
