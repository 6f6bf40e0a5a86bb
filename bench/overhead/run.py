#!/usr/bin/env python3
"""Micro-benchmark of what foreactor costs per intercepted call.

Runs bench/overhead/overhead.c (built here, with the system C compiler, into
the build directory) in these situations, for each call type: cached 1-byte
preads, fstats, fstatats by path, 1-byte pwrites to a cached page, opens (each
followed by a close of what it returned) and directory reads (open of a
directory of 16 entries, one getdents64, close; as a tree walker makes them).
For the last two a step makes two or three calls, and its time is divided
among them:

  a  no library
  b  libforeactor.so preloaded, FOREACTOR unset
  c  FOREACTOR=1, no scope open
  d  FOREACTOR=1, inside a scope of a graph that holds neither call
  e  FOREACTOR=1, inside a scope at depth 0 whose graph matches every call
  f  FOREACTOR=1, depth 0, a scope entered and left around every call
  g  FOREACTOR=1, automatic depth, the scope gate asked before every call
     (cached data: the gate finds that scopes do not pay and keeps them shut)
  h-k  FOREACTOR=1, inside a scope whose graph matches every call, each
     engine (io_uring, threads) at exact depth 4 and at the automatic depth: the
     per-call cost of issuing ahead (or of deciding not to) on cached data

Each situation runs --runs times, alternating with the others, and the table
shows the median nanoseconds per call, the difference to (a) and the paired
time ratio to (a) with its 95% interval; a second table gives the cost inside
a scope per call type and engine.  This is a measurement, not a test: nothing
here fails because of a number.

Usage: run.py [--quick] [--calls N] [--runs N] [--output FILE] [--no-device-reference]
       (or: ./run bench overhead)
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT))

from bench.common import c_program, ratios, results, run_record, runs  # noqa: E402

BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
SOURCE = Path(__file__).resolve().parent / "overhead.c"
RESULTS = ROOT / "bench" / "results" / "overhead.json"

# (key, description, mode of overhead.c, preload the library, extra environment)
CASES = [
    ("a", "no library", "plain", False, {}),
    ("b", "preloaded, FOREACTOR unset", "plain", True, {}),
    ("c", "FOREACTOR=1, no scope", "plain", True, {"FOREACTOR": "1"}),
    ("d", "scope, calls not in its graph", "foreign", True, {"FOREACTOR": "1"}),
    ("e", "scope, depth 0, every call matches", "matching", True,
     {"FOREACTOR": "1", "FOREACTOR_DEPTH": "0"}),
    ("f", "a scope per call, depth 0", "scoped", True,
     {"FOREACTOR": "1", "FOREACTOR_DEPTH": "0"}),
    ("g", "scope gate per call, automatic depth", "gated", True, {"FOREACTOR": "1"}),
] + [
    # Depth 4 is exact: the engine's own cost for every call; a bound of 4
    # would walk down to 0 on these cached calls, as auto does.
    (key, f"scope, {engine} depth {depth}, every call matches", "matching", True,
     {"FOREACTOR": "1", "FOREACTOR_ENGINE": engine, "FOREACTOR_DEPTH": str(depth),
      **({"FOREACTOR_EXACT_DEPTH": "1"} if depth != "auto" else {})})
    for key, engine, depth in (("h", "io_uring", 4), ("i", "io_uring", "auto"),
                               ("j", "threads", 4), ("k", "threads", "auto"))
]
# Call types of overhead.c, with the calls one step of its loop makes.
CALLS = {"pread": 1, "fstat": 1, "fstatat": 1, "pwrite": 1, "open": 2, "getdents64": 3}
DIRECTORY_ENTRIES = 16
# The table of the cost inside a scope: (column, case key).
SCOPE_COLUMNS = [("depth 0", "e"), ("io_uring 4", "h"), ("io_uring auto", "i"),
                 ("threads 4", "j"), ("threads auto", "k")]
FULL_RUNS = 5
QUICK_RUNS = 3


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="200,000 calls and 3 runs instead of 2,000,000 and 5")
    parser.add_argument("--calls", type=int, help="calls per measurement")
    parser.add_argument("--runs", type=int, help="measurements per situation")
    parser.add_argument("--output", type=Path, default=RESULTS,
                        help="results file (bench/results/overhead.json)")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    if arguments.calls is None:
        arguments.calls = 200_000 if arguments.quick else 2_000_000
    if arguments.runs is None:
        arguments.runs = QUICK_RUNS if arguments.quick else FULL_RUNS
    if arguments.calls <= 0 or arguments.runs <= 0:
        parser.error("--calls and --runs must be positive")
    return arguments


def find_library():
    library = BUILD_DIR / "libforeactor.so"
    if not library.exists():
        sys.exit(f"run.py: {library} not found: build first (./run build)")
    return library.resolve()


def build_program():
    """Compiles overhead.c into the build directory; returns its path."""
    return c_program.build(SOURCE, BUILD_DIR / "bench" / "overhead" / "overhead",
                            flags=[f"-I{ROOT / 'include'}"], libraries=["-ldl"])


def measure(program, library, case, call, count, data_file, stats_file):
    """Runs one measurement of `count` steps over `data_file` (a file, or
    for getdents64 a directory); returns (ns per call, statistics dict or
    None)."""
    _, _, mode, preload, extra = case
    environment = runs.clean_environment()
    environment.update(extra)
    if preload:
        environment["LD_PRELOAD"] = str(library)
        environment["FOREACTOR_STATS"] = str(stats_file)
    if stats_file.exists():
        stats_file.unlink()
    completed = subprocess.run([str(program), call, mode, str(count), str(data_file)],
                               env=environment, capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        raise RuntimeError(f"{program.name} {call} {mode} failed "
                           f"({completed.returncode}): {completed.stderr.strip()}")
    values = dict(line.split(None, 1) for line in completed.stdout.splitlines() if " " in line)
    graph_stats = None
    if preload and stats_file.exists():
        try:
            graph_stats = json.loads(stats_file.read_text()).get("graphs", {})
        except (ValueError, AttributeError):
            graph_stats = None
    return float(values["ns_per_call"]), graph_stats


def calls_seen(graph_stats, count):
    """(matched, passed through) calls in scopes per call made, or None."""
    if not graph_stats:
        return None
    matched = sum(graph.get("intercepted", 0) for graph in graph_stats.values())
    passed = sum(graph.get("passed_through", 0) for graph in graph_stats.values())
    return matched / count, passed / count


def main():
    arguments = parse_arguments()
    library = find_library()
    program = build_program()
    work_dir = Path(tempfile.mkdtemp(prefix="foreactor-overhead-"))
    try:
        # The calls measured are cached: the reference only places the run.
        record = run_record.begin("overhead", ROOT / "data", 4096, arguments, arguments.runs,
                                  FULL_RUNS, QUICK_RUNS)
        data_file = work_dir / "data"
        data_file.write_bytes(os.urandom(4096))
        data_file.read_bytes()  # in the page cache from now on
        directory = work_dir / "directory"
        directory.mkdir()
        for index in range(DIRECTORY_ENTRIES):
            (directory / f"entry-{index:02}").touch()
        stats_file = work_dir / "stats.json"

        samples = {(case[0], call): [] for case in CASES for call in CALLS}
        seen = {}
        started = time.monotonic()
        for run in range(arguments.runs):
            for call in CALLS:
                for case in runs.alternating_order(CASES, run):
                    steps = max(1, arguments.calls // CALLS[call])
                    target = directory if call == "getdents64" else data_file
                    ns, graph_stats = measure(program, library, case, call, steps, target,
                                              stats_file)
                    samples[(case[0], call)].append(ns)
                    # Warm-up steps run in a scope too: 10,000 of them.
                    per_call = calls_seen(graph_stats, (steps + 10_000) * CALLS[call])
                    if per_call is not None:
                        seen[(case[0], call)] = per_call
            print(f"run {run + 1}/{arguments.runs} done", file=sys.stderr)
        elapsed = time.monotonic() - started
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)

    print()
    print(f"foreactor overhead: {arguments.calls:,} cached calls per measurement, median of "
          f"{arguments.runs} alternating runs ({elapsed:.0f} s)")
    print()
    header = (f"{'call':10} {'situation':50} {'ns/call':>9} {'vs (a)':>9} "
              f"{'time ratio to (a) [95%]':>28} {'matched':>8} {'passed':>7}")
    print(header)
    print("-" * len(header))
    rows = []
    for call in CALLS:
        baseline = statistics.median(samples[("a", call)])
        for key, description, _, _, _ in CASES:
            median = statistics.median(samples[(key, call)])
            per_call = seen.get((key, call))
            matched, passed = ("-", "-") if per_call is None else (f"{v:.2f}" for v in per_call)
            interval = ratios.paired_ratio(samples[("a", call)], samples[(key, call)])
            print(f"{call:10} ({key}) {description:46} {median:9.1f} "
                  f"{median - baseline:+9.1f} "
                  f"{ratios.format_ratio(interval) if key != 'a' else '1':>28} "
                  f"{matched:>8} {passed:>7}")
            rows.append({"call": call, "case": key, "description": description,
                            "median_ns_per_call": median,
                            "difference_to_a_ns": median - baseline,
                            "time_ratio": interval,
                            "matched_per_call": None if per_call is None else per_call[0],
                            "passed_through_per_call": None if per_call is None else per_call[1],
                            "samples_ns_per_call": samples[(key, call)]})
    print()
    print("matched / passed: calls that the runtime matched to a graph node / let through")
    print("unmatched inside a scope, per call made (from FOREACTOR_STATS; '-': no scope).")
    print("Differences of a few ns are noise.")
    print_scope_costs(rows)

    run_record.finish(record, [row["time_ratio"] for row in rows if row["case"] != "a"])
    results.write_json(arguments.output, {
        "benchmark": "overhead",
        "calls_per_measurement": arguments.calls,
        "runs": arguments.runs,
        "run": record,
        "results": rows,
    })
    print(f"results written to {arguments.output}")


def scope_costs(rows):
    """{call: {column: ns per call over (a)}} of the SCOPE_COLUMNS cases."""
    difference = {(row["call"], row["case"]): row["difference_to_a_ns"] for row in rows}
    return {call: {column: difference.get((call, key)) for column, key in SCOPE_COLUMNS}
            for call in CALLS}


def print_scope_costs(rows):
    print("\nCost per call inside a scope whose graph matches every call, ns over (a), by call "
          "type and engine (cached data):")
    header = f"  {'call':10}" + "".join(f" {column:>14}" for column, _ in SCOPE_COLUMNS)
    print(header)
    print("  " + "-" * (len(header) - 2))
    for call, costs in scope_costs(rows).items():
        print(f"  {call:10}" + "".join(f" {'-' if cost is None else f'{cost:+.0f}':>14}"
                                     for cost in costs.values()))


if __name__ == "__main__":
    main()
