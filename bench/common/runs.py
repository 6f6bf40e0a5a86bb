"""Running a program plain and with foreactor, and summarizing samples.

A benchmark runs every configuration in the same run, in an order that
alternates from round to round (so that no configuration always follows the
same one), and reports medians and ratios to the plain program.
"""

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading


def clean_environment(base=None):
    """`base` (default os.environ) without anything that would switch foreactor on."""
    base = os.environ if base is None else base
    return {name: value for name, value in base.items()
            if not name.startswith("FOREACTOR") and name != "LD_PRELOAD"}


class EngineSetup(str):
    """An engine name with settings of its own for the runs (a str, so that
    the code that only names the engine is unchanged): foreactor_environment
    applies them last, so {"FOREACTOR": "0"} runs the foreactor build with
    foreactor off."""

    def __new__(cls, engine, environment):
        setup = super().__new__(cls, engine)
        setup.environment = dict(environment)
        return setup


def foreactor_environment(engine, depth, stats_file, base=None):
    """The environment of one run: plain when `engine` is None, else foreactor
    on with that engine and depth, its statistics written to `stats_file`,
    and then the settings of an EngineSetup.  A depth "exactN" is depth N
    kept whatever it costs (FOREACTOR_EXACT_DEPTH=1: every scope runs, the
    depth never moves)."""
    environment = clean_environment(base)
    if engine is not None:
        exact = is_exact_depth(depth)
        environment.update({"FOREACTOR": "1", "FOREACTOR_ENGINE": str(engine),
                            "FOREACTOR_DEPTH": str(depth)[len("exact"):] if exact else str(depth),
                            "FOREACTOR_STATS": str(stats_file)})
        if exact:
            environment["FOREACTOR_EXACT_DEPTH"] = "1"
        environment.update(getattr(engine, "environment", {}))
    return environment


def is_exact_depth(depth):
    """True for a depth written "exactN" (see foreactor_environment)."""
    return str(depth).startswith("exact")


def depth_name(depth):
    """How tables name `depth`: "8", "auto", or "8 exact" for exact8."""
    return f"{str(depth)[len('exact'):]} exact" if is_exact_depth(depth) else str(depth)


def parse_depth(text):
    """A depth as a benchmark's --depths gives it: "auto", "exactN" or a
    positive number; raises ValueError otherwise."""
    text = text.strip()
    if text == "auto":
        return text
    number = int(text[len("exact"):]) if is_exact_depth(text) else int(text)
    if number <= 0:
        raise ValueError(f"not a positive depth: {text!r}")
    return f"exact{number}" if is_exact_depth(text) else number


def alternating_order(items, round_index):
    """The order of `items` in round `round_index` (0-based).

    Even rounds run them as given, odd rounds in reverse, and each round
    starts one further along, so that over the rounds every item runs early
    and late, and after different neighbours."""
    items = list(items)
    if not items:
        return items
    if round_index % 2 == 1:
        items.reverse()
    shift = (round_index // 2) % len(items)
    return items[shift:] + items[:shift]


def median_or_none(values):
    """Median of the values that are not None; None when there are none."""
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def ratio_or_none(numerator, denominator):
    """numerator / denominator, or None when either is missing or the
    denominator is not positive."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def read_graph_statistics(stats_file, graph_name):
    """The counters of `graph_name` in a FOREACTOR_STATS file, or None when the
    file is missing, unreadable, or does not name that graph."""
    try:
        graphs = json.loads(open(stats_file, encoding="utf-8").read()).get("graphs", {})
    except (OSError, ValueError, AttributeError):
        return None
    counters = graphs.get(graph_name) if isinstance(graphs, dict) else None
    return counters if isinstance(counters, dict) else None


def sum_counters(counter_dicts, names):
    """Sums the named counters over several statistics dicts (None entries are
    skipped); returns None when no dict was given."""
    present = [counters for counters in counter_dicts if counters]
    if not present:
        return None
    return {name: sum(counters.get(name, 0) for counters in present) for name in names}


class RunTimedOut(Exception):
    """A run passed its timeout; `stacks` is what run_with_timeout() or
    wait_with_timeout() saw of the process before it killed it."""

    def __init__(self, seconds, stacks):
        super().__init__(f"timed out after {seconds} s")
        self.seconds = seconds
        self.stacks = stacks

    def print_report(self, label):
        """Writes what the run `label` was doing when it timed out to stderr."""
        print(f"{label}: timed out after {self.seconds} s; what it was doing:\n{self.stacks}",
              file=sys.stderr, flush=True)


def process_stacks(pid):
    """The threads of process `pid` and, where gdb is installed, every
    thread's stack and the request a thread waits on in WaitForCompletion
    (so that a run that hangs can be told apart from one that is slow).
    A text for a log; never raises."""
    lines = []
    try:
        threads = sorted(os.listdir(f"/proc/{pid}/task"))
        lines.append(f"pid {pid}: {len(threads)} threads")
        for tid in threads:
            with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                name = comm.read().strip()
            with open(f"/proc/{pid}/task/{tid}/wchan") as wchan:
                lines.append(f"  {tid} {name} waits in {wchan.read().strip() or '-'}")
    except OSError as error:
        lines.append(f"pid {pid}: {error}")
    gdb = shutil.which("gdb")
    if gdb is not None:
        try:
            debugger = subprocess.run(
                [gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 12",
                 "-ex", "frame function foreactor::WaitForCompletion",
                 "-ex", "print request->state", "-ex", "print *request"],
                capture_output=True, text=True, timeout=60)
            lines.append(debugger.stdout + debugger.stderr)
        except (OSError, subprocess.TimeoutExpired) as error:
            lines.append(f"gdb: {error}")
    return "\n".join(lines)


def run_with_timeout(command, environment, seconds, executable=None, text=True,
                     stdout_to_file=False):
    """subprocess.run(command, env=environment, executable=executable,
    capture_output=True, text=text) that, when the process runs longer than
    `seconds`, records process_stacks() of it, kills its process group (the
    programs it started too) and raises RunTimedOut.

    With `stdout_to_file` the program writes its standard output to an
    unnamed temporary file, read back once it has ended, instead of a pipe
    this process drains while it runs: a program that writes many small
    lines (du flushes each line with its own write()) then does not wait
    for this process to be scheduled between them, which on a machine whose
    cores the program's own threads keep busy cost du 30-70 ms a run.

    The call returns as soon as the process has ended: it waits for it in
    the kernel (the timeout is a timer beside the wait), never by polling.
    Popen.communicate(timeout=...) polls once the pipes are closed, sleeping
    0.5 ms, then 1 ms, ...: a program that still works after closing its
    standard streams (du closes them before its exit handlers run, and
    foreactor writes its statistics file in one) was timed 0.5-1.5 ms long."""
    output_file = tempfile.TemporaryFile() if stdout_to_file else None
    try:
        with subprocess.Popen(command, env=environment, executable=executable,
                              stdout=output_file or subprocess.PIPE, stderr=subprocess.PIPE,
                              text=text, start_new_session=True) as process:
            with _killed_after(process, seconds) as stacks:
                stdout, stderr = process.communicate()
            if stacks:
                raise RunTimedOut(seconds, stacks[0])
            if output_file is not None:
                output_file.seek(0)
                stdout = output_file.read()
                if text:
                    stdout = stdout.decode()
            return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    finally:
        if output_file is not None:
            output_file.close()


def wait_with_timeout(process, seconds):
    """os.wait4() of `process` (a subprocess.Popen started with
    start_new_session=True), which is killed with its process group, after
    process_stacks() of it is recorded, when it runs longer than `seconds`.
    Returns (exit code, resource usage); raises RunTimedOut."""
    with _killed_after(process, seconds) as stacks:
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if stacks:
        raise RunTimedOut(seconds, stacks[0])
    return process.returncode, usage


@contextlib.contextmanager
def _killed_after(process, seconds):
    """While the block runs: once `seconds` have passed, records
    process_stacks() of `process` (started with start_new_session=True) in
    the list the block is given and kills its process group, so that the
    block's blocking wait for the process (or for its pipes) ends."""
    stacks = []

    def expire():
        stacks.append(process_stacks(process.pid))
        kill_group(process.pid)

    timer = threading.Timer(seconds, expire)
    timer.start()
    try:
        yield stacks
    finally:
        timer.cancel()
        timer.join()


def kill_group(pid):
    """Kills the process group led by `pid`; never raises."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
