"""Tests of `foreactor bound` (tools/foreactor_cli/bound.py).

The analysis is tested on synthetic events and on perf's output format; the
whole command on a small C program compiled here, whose function makes a known
number of preads per call.  The run under perf needs perf and root, and is
skipped without them (the analysis tests are not).
"""

import json
import subprocess
import sys

import pytest

from conftest import REPO, compile_c
from test_trace_tool import run_tool

sys.path.insert(0, str(REPO / "tools"))
from foreactor_cli import bound  # noqa: E402

# ------------------------------------------------------- the analysis


def test_an_invocation_waits_only_for_its_longest_call():
    events = [(7, 1.000, "entry"),
              (7, 1.001, "call_enter"), (7, 1.004, "call_exit"),    # 3 ms
              (7, 1.005, "call_enter"), (7, 1.006, "call_exit"),    # 1 ms
              (7, 1.010, "return")]
    [invocation] = bound.invocations_of(events)
    assert invocation["calls"] == 2
    assert invocation["call_seconds"] == pytest.approx(0.004)
    assert invocation["longest_call_seconds"] == pytest.approx(0.003)
    summary = bound.summarize([invocation])
    assert summary["measured_us"]["average"] == pytest.approx(10_000)
    assert summary["bound_us"]["average"] == pytest.approx(9_000)  # the 1 ms call overlapped
    assert summary["ratio"]["average"] == pytest.approx(0.9)
    assert summary["share_in_calls"] == pytest.approx(0.4)


def test_calls_outside_invocations_recursion_and_threads():
    events = [(1, 0.0, "call_enter"), (1, 0.5, "call_exit"),      # before any invocation
              (1, 1.0, "entry"), (2, 1.0, "entry"),
              (1, 1.1, "entry"),                                  # recursion: counts in the outer
              (1, 1.2, "call_enter"), (2, 1.2, "call_enter"),
              (1, 1.3, "call_exit"), (2, 1.5, "call_exit"),
              (1, 1.4, "return"), (1, 2.0, "return"), (2, 3.0, "return"),
              (3, 4.0, "return"),                                 # entry before the probes
              (3, 5.0, "entry"), (3, 5.1, "call_enter"), (3, 5.2, "call_exit")]  # never returned
    invocations = bound.invocations_of(events)
    assert [(i["calls"], round(i["seconds"], 6)) for i in invocations] == [(1, 1.0), (1, 2.0)]


def test_summary_of_a_chain_and_of_single_calls():
    chain = {"seconds": 0.004, "calls": 4, "call_seconds": 0.004, "longest_call_seconds": 0.001}
    single = {"seconds": 0.001, "calls": 1, "call_seconds": 0.001, "longest_call_seconds": 0.001}
    summary = bound.summarize([chain, single, single, single])
    assert summary["calls_histogram"] == {"1": 3, "4": 1}
    assert summary["calls_per_invocation"] == pytest.approx(1.75)
    # Measured 4 + 1 + 1 + 1 ms; at once 1 ms each.
    assert summary["ratio"]["average"] == pytest.approx(4 / 7)
    assert bound.summarize([]) is None


def test_the_device_aware_bound_waits_for_the_calls_sum_over_the_device_gain():
    chain = {"seconds": 0.004, "calls": 4, "call_seconds": 0.004, "longest_call_seconds": 0.001}
    single = {"seconds": 0.001, "calls": 1, "call_seconds": 0.001, "longest_call_seconds": 0.001}
    summary = bound.summarize([chain, single], device_gain=2.0)
    # The chain's 4 ms of calls at twice the rate: 2 ms, not its longest 1 ms;
    # the single call is its own longest.
    assert summary["device_bound_us"]["average"] == pytest.approx((2_000 + 1_000) / 2)
    assert summary["device_ratio"]["average"] == pytest.approx(3 / 5)
    assert summary["ratio"]["average"] == pytest.approx(2 / 5)  # unchanged
    # A device that serves every call at once gives the plain bound.
    unlimited = bound.summarize([chain, single], device_gain=4.0)
    assert unlimited["device_bound_us"] == unlimited["bound_us"]
    assert "device_gain" not in bound.summarize([chain, single])
    assert "4.00x the requests" in bound.format_report("get", unlimited)


def test_a_gain_curve_gives_each_invocation_the_gain_at_its_own_number_of_calls():
    pair = {"seconds": 0.0025, "calls": 2, "call_seconds": 0.002, "longest_call_seconds": 0.001,
            "call_durations": [0.001, 0.001]}
    chain = {"seconds": 0.004, "calls": 4, "call_seconds": 0.004, "longest_call_seconds": 0.001,
             "call_durations": [0.001] * 4}
    curve = bound.device_gain("2:1.6,8:2.2")
    assert curve == {2: 1.6, 8: 2.2}
    assert bound.gain_at(curve, 1) == 1.0
    assert bound.gain_at(curve, 2) == pytest.approx(1.6)
    assert bound.gain_at(curve, 4) == pytest.approx(1.8)  # a third of the way from 2 to 8
    assert bound.gain_at(curve, 64) == pytest.approx(2.2)  # the deepest depth's gain beyond it
    assert bound.gain_at(3.0, 2) == 3.0
    summary = bound.summarize([pair, chain], device_gain=curve, cached_below_us=100)
    # The pair's 2 ms of calls at depth 2's gain, the chain's 4 ms at depth 4's,
    # plus each one's time outside its calls (0.5 ms and none).
    pair_bound, chain_bound = 500 + 2_000 / 1.6, 4_000 / 1.8
    assert summary["device_bound_us"]["average"] == pytest.approx((pair_bound + chain_bound) / 2)
    assert summary["memory_bound_us"]["average"] == pytest.approx((pair_bound + chain_bound) / 2)
    assert summary["device_gain"] == {"2": 1.6, "8": 2.2}
    assert "1.60x at queue depth 2, 2.20x at 8" in bound.format_report("get", summary)
    # The same number at every depth is the single gain.
    flat = bound.summarize([pair, chain], device_gain={2: 1.5, 4: 1.5})
    assert flat["device_bound_us"] == bound.summarize([pair, chain],
                                                      device_gain=1.5)["device_bound_us"]


def test_the_bound_with_calls_served_from_memory_overlaps_only_the_slow_calls():
    events = [(7, 1.000, "entry"),
              (7, 1.001, "call_enter"), (7, 1.00101, "call_exit"),  # 10 us: from memory
              (7, 1.002, "call_enter"), (7, 1.004, "call_exit"),    # 2 ms
              (7, 1.005, "call_enter"), (7, 1.006, "call_exit"),    # 1 ms
              (7, 1.007, "call_enter"), (7, 1.00702, "call_exit"),  # 20 us: from memory
              (7, 1.010, "return")]
    [invocation] = bound.invocations_of(events)
    assert invocation["call_durations"] == pytest.approx([1e-5, 0.002, 0.001, 2e-5])
    summary = bound.summarize([invocation], cached_below_us=100)
    # 10 ms - 3.03 ms of calls + the 30 us from memory + the longest slow call.
    assert summary["memory_bound_us"]["average"] == pytest.approx(10_000 - 3_030 + 30 + 2_000)
    assert summary["bound_us"]["average"] == pytest.approx(10_000 - 3_030 + 2_000)
    assert summary["memory_calls_share"] == pytest.approx(0.5)
    # On a device of gain 1 the slow calls take their sum: the measured time.
    serial = bound.summarize([invocation], device_gain=1.0, cached_below_us=100)
    assert serial["memory_ratio"]["average"] == pytest.approx(1.0)
    assert "served from memory" in bound.format_report("get", summary)
    assert "cached_below_us" not in bound.summarize([invocation])
    with pytest.raises(ValueError):
        bound.positive_microseconds("0")


def test_perf_script_lines():
    lines = [
        "  17198 35367.864356: foreactor_bound_9:entry: (55d0c0a14fc0)",
        "  17198 35367.864358: syscalls:sys_enter_pread64: fd: 0x00000005, buf: ...",
        "  17198 35367.864461:  syscalls:sys_exit_pread64: 0x1000",
        "  17198 35367.864470: syscalls:sys_enter_read: fd: 0x00000003",
        "  17198 35367.864480: foreactor_bound_9:exit__return: (55d0c0a14fc0 <- 55d0c0a1a000)",
        "garbage",
    ]
    events = bound.parse_perf_script(lines, "foreactor_bound_9:entry",
                                     "foreactor_bound_9:exit__return", ["pread64"])
    assert [kind for _, _, kind in events] == ["entry", "call_enter", "call_exit", "return"]
    assert events[0][:2] == (17198, pytest.approx(35367.864356))
    lost = bound.parse_perf_script(["   7945 80173.281386: PERF_RECORD_LOST lost 7862",
                                    "   7945 80173.291386: PERF_RECORD_LOST_SAMPLES lost 12"],
                                   "e", "r", ["pread64"])
    assert lost == [(7862, pytest.approx(80173.281386), "lost"),
                    (12, pytest.approx(80173.291386), "lost")]


def test_invocations_open_when_perf_lost_events_are_left_out():
    events = [(1, 1.0, "entry"), (1, 1.1, "call_enter"), (1, 1.2, "call_exit"),
              (2, 1.3, "entry"),
              (40, 1.4, "lost"),        # thread 1's return and thread 2's call among them
              (2, 1.5, "call_exit"), (2, 1.6, "return"),
              (1, 2.0, "entry"), (1, 2.1, "call_enter"), (1, 2.3, "call_exit"),
              (1, 2.5, "return")]
    # Without the loss marker thread 1's two invocations would count as one
    # (a recursion) of 1.5 s.
    invocations = bound.invocations_of(events)
    assert [(i["calls"], round(i["seconds"], 6)) for i in invocations] == [(1, 0.5)]


# ------------------------------------------------------- the command

PROGRAM = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Makes `reads` preads of 4 KiB; main calls it `count` times. */
__attribute__((noinline)) int lookup(int fd, int reads, int round) {
  char buffer[4096];
  int total = 0;
  for (int i = 0; i < reads; ++i)
    total += (int)pread(fd, buffer, sizeof buffer, (off_t)((round * reads + i) % 16) * 4096);
  return total;
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 3;
  int count = atoi(argv[2]), reads = atoi(argv[3]);
  long sum = 0;
  for (int round = 0; round < count; ++round) sum += lookup(fd, reads, round);
  char small[16];
  sum += pread(fd, small, sizeof small, 0); /* outside lookup() */
  printf("%ld\n", sum);
  return 0;
}
"""


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bound_chain")
    compile_c(PROGRAM, directory / "chain", "-O1")
    (directory / "data").write_bytes(bytes(range(256)) * 256)
    return directory


def test_the_symbol_is_found_and_a_missing_one_is_named(chain):
    address, mangled = bound.symbol_address(str(chain / "chain"), "lookup")
    assert mangled == "lookup" and address > 0
    with pytest.raises(LookupError, match="no function 'lookpu'"):
        bound.symbol_address(str(chain / "chain"), "lookpu")


@pytest.mark.parametrize("arguments, message", [
    (["bound", "--", "true"], "--function"),
    (["bound", "--function", "lookup", "true"], "unrecognized arguments: true"),
    (["bound", "--function", "lookup", "--"], "no command after '--'"),
    (["bound", "--function", "lookup", "--calls", "pread64;rm", "--", "true"], "--calls"),
    (["bound", "--function", "lookup", "--device-gain", "0.5", "--", "true"], "--device-gain"),
    (["bound", "--function", "lookup", "--device-gain", "fast", "--", "true"], "--device-gain"),
    (["bound", "--function", "lookup", "--device-gain", "2:1.5,2:1.7", "--", "true"],
     "--device-gain"),
    (["bound", "--function", "lookup", "--device-gain", "0:1.5", "--", "true"], "--device-gain"),
    (["bound", "--function", "lookup", "--device-gain", "4:0.9", "--", "true"], "--device-gain"),
])
def test_bad_arguments(arguments, message):
    completed = run_tool(arguments)
    assert completed.returncode == 2
    assert message in completed.stderr


def test_a_missing_symbol_is_a_usage_error(chain):
    completed = run_tool(["bound", "--function", "lookpu", "--", str(chain / "chain"),
                          str(chain / "data"), "1", "1"])
    assert completed.returncode == 2
    assert "no function 'lookpu'" in completed.stderr


perf_reason = bound.perf_usable()
needs_perf = pytest.mark.skipif(perf_reason is not None, reason=str(perf_reason))


def test_stale_probe_groups_are_those_of_dead_runs():
    text = ("p:foreactor_bound_11/entry /bin/x:0x10\n"
            "r:foreactor_bound_11/exit__return /bin/x:0x10\n"
            "p:foreactor_bound_12/entry_12 /bin/x:0x10\n"
            "p:other_13/entry /bin/x:0x10\n")
    assert bound.stale_probe_groups(text, lambda pid: pid == 12, 1) == ["foreactor_bound_11"]
    assert bound.stale_probe_groups(text, lambda pid: True, 1) == []


def test_a_probe_group_named_with_the_runs_own_pid_is_stale():
    # Left by a run in another pid namespace that had the same pid: this run
    # has added nothing yet, so the group cannot be its own.
    text = "p:foreactor_bound_12/entry_12 /bin/x:0x10\n"
    assert bound.stale_probe_groups(text, lambda pid: True, 12) == ["foreactor_bound_12"]
    assert bound.stale_probe_groups(text, lambda pid: True, 13) == []


@needs_perf
def test_a_probe_left_by_a_killed_run_is_removed_and_does_not_block(chain):
    # A run killed before its cleanup (as by a machine restart mid-benchmark)
    # left its probes, named as earlier versions named them.  perf refuses an
    # event name that exists in any group, which made every later run fail.
    finished = subprocess.Popen(["true"])
    finished.wait()
    stale = "foreactor_bound_%d" % finished.pid
    address, _ = bound.symbol_address(str(chain / "chain"), "lookup")
    subprocess.run(["perf", "probe", "-q", "-x", str(chain / "chain"), "-a",
                    "%s:entry=0x%x" % (stale, address)], check=True)
    try:
        completed = run_tool(["bound", "--function", "lookup", "--", str(chain / "chain"),
                              str(chain / "data"), "2", "1"])
        assert completed.returncode == 0, completed.stderr
        with open(bound.tracefs_uprobe_events()) as events:
            assert stale not in events.read()
    finally:
        bound.remove_probes(stale)


@needs_perf
def test_calls_per_invocation_of_a_real_program(chain, tmp_path):
    output = tmp_path / "bound.json"
    completed = run_tool(["bound", "--function", "lookup", "--calls", "pread64", "--json",
                          str(output), "--", str(chain / "chain"), str(chain / "data"), "40", "3"])
    assert completed.returncode == 0, completed.stderr
    assert "invocations           40" in completed.stdout
    figures = json.loads(output.read_text())
    assert figures["lost_events"] == 0
    assert figures["invocations"] == 40
    assert figures["calls_histogram"] == {"3": 40}  # the pread outside lookup() not counted
    assert 0 < figures["ratio"]["average"] <= 1
    assert figures["bound_us"]["average"] <= figures["measured_us"]["average"]


@needs_perf
def test_a_function_never_called_exits_1(chain):
    completed = run_tool(["bound", "--function", "lookup", "--", str(chain / "chain"),
                          str(chain / "data"), "0", "3"])
    assert completed.returncode == 1
    assert "never called" in completed.stdout


@needs_perf
def test_the_command_status_passes_through(chain):
    completed = run_tool(["bound", "--function", "lookup", "--", str(chain / "chain")])
    assert completed.returncode == 2  # the program's own usage status
