#!/usr/bin/env python3
"""A/B timing of du programs on one tree (or, with --copy, of cp programs
copying one file), alternating, hot or cold.

    python3 bench/coreutils/du_ab.py TREE NAME=PROGRAM[:ENV=VALUE,...] ... \
        [--rounds N] [--cold] [--args "-s"]
    python3 bench/coreutils/du_ab.py --copy FILE NAME=PROGRAM[:ENV=VALUE,...] ... \
        [--rounds N] [--cold] [--args "--reflink=never --sparse=never"]

With --copy each run is `PROGRAM ARGS FILE FILE.ab-copy`, the copy removed
before each run and compared byte for byte with FILE after it.

Each round runs every program once, in an order that rotates per round.
Hot: one unmeasured stock-like run of the first program warms the cache.
Cold: `sync; echo 3 > /proc/sys/vm/drop_caches` (root) before each run,
with the VM's free page reporting held as the benchmarks hold it
(bench/common/free_page_reporting.py).  Hot or cold, the machine's
proactive reclaim (DAMON pageout) is held too (bench/common/proactive_reclaim.py).
Every program's stdout must equal the first program's (with --copy: every
copy must equal FILE), else it aborts.  A --peer (e.g. diskus) runs as
`PROGRAM TREE`, without the du options, and its output is not compared.
The caller's FOREACTOR* variables are not passed on: a program runs with
only the variables of its own list, so a foreactor build runs with
foreactor off unless the list has FOREACTOR=1.  Each program's list is
printed beside its figures.
Prints per program the median wall ms and the median CPU ms (user+sys,
from wait4, microseconds), with ratios to the first program (for wall time
also the paired ratio with its 95% interval, bench/common/ratios), and the
load average.
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.common import free_page_reporting, proactive_reclaim, ratios  # noqa: E402


def run_once(argv, environment):
    """Wall ms, CPU ms (user+sys from wait4, microsecond resolution), stdout,
    stderr and exit status of one run.  Standard output goes to an unnamed
    temporary file, as in bench/coreutils/run.py (runs.run_with_timeout)."""
    with tempfile.TemporaryFile() as output_file:
        start = time.monotonic()
        process = subprocess.Popen(argv, stdout=output_file, stderr=subprocess.PIPE,
                                   env=environment)
        # Read stderr to the end first, then reap with wait4 for the rusage.
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = (time.monotonic() - start) * 1000
        output_file.seek(0)
        output = output_file.read()
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu = (usage.ru_utime + usage.ru_stime) * 1000
    return wall, cpu, output, errors, process.returncode


def without_foreactor(environment):
    """A copy of `environment` without its FOREACTOR* variables."""
    return {k: v for k, v in environment.items() if not k.startswith("FOREACTOR")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("programs", nargs="+", help="NAME=PROGRAM[:VAR=VALUE,...]")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--args", default=None, help="du or cp options, split on spaces "
                        "(cp: --reflink=never --sparse=never unless given)")
    parser.add_argument("--copy", action="store_true", help="TREE is a file that cp programs copy")
    parser.add_argument("--peer", action="append", default=[],
                        help="NAME=PROGRAM run as `PROGRAM TREE`, output not compared")
    options = parser.parse_args()
    if options.args is None:
        options.args = "--reflink=never --sparse=never" if options.copy else ""
    target = options.tree + ".ab-copy"
    operands = [options.tree, target] if options.copy else [options.tree]

    programs = []
    for text in options.programs:
        name, _, rest = text.partition("=")
        program, _, variables = rest.partition(":")
        environment = without_foreactor(os.environ)
        for pair in filter(None, variables.split(",")):
            key, _, value = pair.partition("=")
            environment[key] = value
        programs.append((name, program, environment, variables))
    peers = set()
    for text in options.peer:
        name, _, program = text.partition("=")
        programs.append((name, program, without_foreactor(os.environ), "(peer)"))
        peers.add(name)

    du_args = options.args.split()
    reference = None
    print(proactive_reclaim.describe(proactive_reclaim.hold()))
    if options.cold:
        print(free_page_reporting.describe(free_page_reporting.hold()))
    else:
        subprocess.run([programs[0][1], *du_args, *operands], stdout=subprocess.DEVNULL,
                       check=True)
    walls = {name: [] for name, _, _, _ in programs}
    cpus = {name: [] for name, _, _, _ in programs}
    for round_index in range(options.rounds):
        order = programs[round_index % len(programs):] + programs[:round_index % len(programs)]
        for name, program, environment, _ in order:
            if options.copy and os.path.exists(target):
                os.unlink(target)
            if options.cold:
                subprocess.run(["sync"], check=True)
                with open("/proc/sys/vm/drop_caches", "w") as drop:
                    drop.write("3\n")
            arguments = operands if name in peers else [*du_args, *operands]
            wall, cpu, output, errors, status = run_once([program, *arguments], environment)
            if status != 0 or errors:
                sys.exit(f"{name}: status {status}, stderr {errors[:300]!r}")
            if options.copy and not filecmp.cmp(options.tree, target, shallow=False):
                sys.exit(f"{name}: {target} differs from {options.tree}")
            if name not in peers:
                if reference is None:
                    reference = output
                elif output != reference:
                    sys.exit(f"{name}: output differs from the first program's")
            walls[name].append(wall)
            cpus[name].append(cpu)
    base_wall = statistics.median(walls[programs[0][0]])
    base_cpu = statistics.median(cpus[programs[0][0]])
    if options.copy and os.path.exists(target):
        os.unlink(target)
    print(f"{'hot' if not options.cold else 'cold'}, {options.rounds} rounds, "
          f"{'cp' if options.copy else 'du'} {' '.join(du_args)} {' '.join(operands)}, "
          f"load {os.getloadavg()}")
    first = programs[0][0]
    for name, _, _, variables in programs:
        wall = statistics.median(walls[name])
        cpu = statistics.median(cpus[name])
        paired = ratios.format_ratio(ratios.paired_ratio(walls[first], walls[name]))
        print(f"  {name:24s} wall {wall:7.1f} ms {wall / base_wall:5.2f}x "
              f"(paired {paired})   cpu {cpu:7.1f} ms {cpu / base_cpu:5.2f}x   "
              f"{variables or '(no variables)'}")


if __name__ == "__main__":
    main()
