#!/usr/bin/env python3
"""The foreactor demo: the example program, plain and with foreactor.

Runs examples/random_read (20,000 random 8 KiB preads of a 1 GiB file, one
after the other) as built, then linked with its plugin under io_uring and the
thread pool at depths 4, 16 and 64 and the automatic depth (the default);
first with a cold page cache (dropped before every run), then with the file
fully cached.  Beside them runs the reference: the program with readahead(2)
added by hand, 64 reads ahead of each pread (random_read_readahead), what a
hand-made asynchronous version gets through the page cache on this machine.
Every run must print the same checksum as the plain program: foreactor may
change the time, nothing else.  Configurations alternate within each round;
the table shows medians.

Usage: demo.py [--size-mib N] [--reads N] [--rounds N] [--seed N] [--output FILE]
               [--no-device-reference]
       (or: ./run demo ...)
Prints and records (bench/common/run_record) the machine, the commit, the
load and the device reference (fio, 8 KiB random reads at QD 1/16/64), and
each configuration's time ratio to the plain program with its 95% interval
over the paired rounds (bench/common/ratios); cold ratios stand next to the
device's QD64 bound.  Writes bench/results/demo.json (or --output).  Exits 1
if a run failed or a checksum differed.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(ROOT))

from bench.common import cache, ratios, results, run_record, runs  # noqa: E402

BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
PROGRAM_DIR = BUILD_DIR / "examples" / "random_read"
PLAIN_PROGRAM = PROGRAM_DIR / "random_read"
FOREACTOR_PROGRAM = PROGRAM_DIR / "random_read_foreactor"
REFERENCE_PROGRAM = PROGRAM_DIR / "random_read_readahead"
DATA_FILE = ROOT / "data" / "random_read.dat"
RESULTS = ROOT / "bench" / "results" / "demo.json"
RUN_TIMEOUT_SECONDS = 300
REQUEST_BYTES = 8192
DEFAULT_ROUNDS = 3

# The engine of the reference configuration: the hand-written loop, no
# foreactor.
BY_HAND = "by hand"
REFERENCE_NAME = "readahead(2) by hand"
# The configurations that run no foreactor: never "best", and not counted in
# the run record's intervals.
WITHOUT_FOREACTOR = ("plain", REFERENCE_NAME)
# (name, engine, depth); engine None is the program without foreactor.
CONFIGURATIONS = [("plain", None, None), (REFERENCE_NAME, BY_HAND, None)] + [
    (f"{engine} depth {depth}", engine, depth)
    for engine in ("io_uring", "threads") for depth in (4, 16, 64, "auto")
]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="data file size (1024)")
    parser.add_argument("--reads", type=int, default=20_000, help="reads per run (20,000)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"paired rounds, every configuration once in each ({DEFAULT_ROUNDS})")
    parser.add_argument("--seed", type=int, default=42, help="seed of the offsets (42)")
    parser.add_argument("--output", type=Path, default=RESULTS,
                        help="results file (bench/results/demo.json)")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    if arguments.size_mib <= 0 or arguments.reads <= 0 or arguments.rounds <= 0:
        parser.error("--size-mib, --reads and --rounds must be positive")
    return arguments


def say(message):
    print(message, file=sys.stderr, flush=True)


def make_data_file(size_bytes):
    """Creates DATA_FILE with random bytes, or reuses it if the size is right."""
    if DATA_FILE.exists() and DATA_FILE.stat().st_size == size_bytes:
        say(f"reusing {DATA_FILE.relative_to(ROOT)} ({size_bytes >> 20} MiB)")
        return
    say(f"writing {size_bytes >> 20} MiB of random bytes to {DATA_FILE.relative_to(ROOT)}")
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    partial = DATA_FILE.with_suffix(".partial")
    chunk = 16 << 20
    with open(partial, "wb") as out:
        remaining = size_bytes
        while remaining > 0:
            out.write(os.urandom(min(chunk, remaining)))
            remaining -= chunk
        out.flush()
        os.fsync(out.fileno())
    partial.replace(DATA_FILE)


def drop_page_cache():
    """Drops the page cache (or evicts the data file); returns what was done."""
    try:
        return cache.drop_page_cache([DATA_FILE])
    except cache.CacheError as error:
        sys.exit(f"demo.py: {error}")


def run_once(engine, depth, reads, seed, stats_file):
    """Runs the program once; returns a dict with checksum, ms, stats, messages."""
    with_foreactor = engine not in (None, BY_HAND)
    program = (FOREACTOR_PROGRAM if with_foreactor else
               REFERENCE_PROGRAM if engine == BY_HAND else PLAIN_PROGRAM)
    if stats_file.exists():
        stats_file.unlink()
    environment = runs.foreactor_environment(engine if with_foreactor else None, depth, stats_file)
    try:
        completed = subprocess.run([str(program), str(DATA_FILE), str(reads), str(seed)],
                                   env=environment,
                                   capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {RUN_TIMEOUT_SECONDS} s"}
    outcome = {"messages": [line for line in completed.stderr.splitlines() if line.strip()]}
    if completed.returncode != 0:
        outcome["error"] = f"exit status {completed.returncode}"
        return outcome
    values = dict(line.split(None, 1) for line in completed.stdout.splitlines() if " " in line)
    if "checksum" not in values or "elapsed_ms" not in values:
        outcome["error"] = f"unexpected output: {completed.stdout!r}"
        return outcome
    outcome["checksum"] = values["checksum"].strip()
    outcome["ms"] = float(values["elapsed_ms"])
    if with_foreactor and stats_file.exists():
        outcome["stats"] = runs.read_graph_statistics(stats_file, "random_read")
    return outcome


def run_state(state, arguments, stats_file, reference, notes):
    """Runs every configuration `rounds` times, alternating; returns samples."""
    samples = {name: [] for name, _, _ in CONFIGURATIONS}
    for round_index in range(arguments.rounds):
        for name, engine, depth in runs.alternating_order(CONFIGURATIONS, round_index):
            if state == "cold":
                notes["cache"] = drop_page_cache()
            outcome = run_once(engine, depth, arguments.reads, arguments.seed, stats_file)
            for message in outcome.get("messages", []):
                notes["messages"].setdefault(message, name)
            if "error" not in outcome:
                if reference.get("checksum") is None and engine is None:
                    reference["checksum"] = outcome["checksum"]
                if outcome["checksum"] != reference.get("checksum"):
                    outcome["error"] = (f"checksum {outcome['checksum']} differs from the "
                                        f"plain program's {reference.get('checksum')}")
            if "error" in outcome:
                notes["failures"].append(f"{state} cache, {name}, round {round_index + 1}: "
                                         f"{outcome['error']}")
            samples[name].append(outcome)
        say(f"{state} cache: round {round_index + 1}/{arguments.rounds} done")
    return samples


def summarize(samples, reads):
    """Per configuration: median ms, ratio to plain, its paired time ratio
    with a 95% interval, share of reads started ahead of the program.

    Runs that failed or printed a wrong checksum count in no median and drop
    their pair."""
    summary = {}
    round_times = {name: [None if "error" in o else o["ms"] for o in outcomes]
                   for name, outcomes in samples.items()}
    good_times = {name: [t for t in times if t is not None] for name, times in round_times.items()}
    medians = {name: statistics.median(times) for name, times in good_times.items() if times}
    plain = medians.get("plain")
    for name, outcomes in samples.items():
        median = medians.get(name)
        # Reads whose device read began before the program asked: issued
        # early, started with readahead, or found already coming in.
        ahead = [sum(o["stats"].get(counter, 0)
                     for counter in ("consumed", "reads_started", "found_present"))
                 for o in outcomes if o.get("stats")]
        summary[name] = {
            "median_ms": median,
            "ratio_to_plain": plain / median if plain and median else None,
            "time_ratio": ratios.paired_ratio(round_times["plain"], round_times[name]),
            "started_ahead": statistics.median(ahead) / reads if ahead else None,
            "samples_ms": [o.get("ms") for o in outcomes],
            "errors": [o["error"] for o in outcomes if "error" in o],
            "statistics": [o.get("stats") for o in outcomes],
        }
    return summary


def best_configuration(summary):
    """(ratio to plain, name) of the fastest foreactor configuration, or None."""
    candidates = [(entry["ratio_to_plain"], name) for name, entry in summary.items()
                  if name not in WITHOUT_FOREACTOR and entry["ratio_to_plain"]
                  and not entry["errors"]]
    return max(candidates) if candidates else None


def print_table(state, summary, bound):
    """`bound`: the device's QD64 time ratio for the cold table, else None."""
    print(f"\n{state} page cache")
    header = (f"  {'configuration':20} {'median ms':>10} {'time ratio [95% interval]':>30} "
              f"{'share of gain':>14} {'started ahead':>14}")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for name, entry in summary.items():
        median = "failed" if entry["median_ms"] is None else f"{entry['median_ms']:.1f}"
        ratio = ratios.format_ratio(entry["time_ratio"]) if name != "plain" else "1"
        share = ("-" if name == "plain" else
                 ratios.format_share(ratios.share_realized(entry["time_ratio"]["ratio"], bound)))
        early = "-" if entry["started_ahead"] is None else f"{entry['started_ahead']:.0%}"
        flag = "  (errors)" if entry["errors"] else ""
        print(f"  {name:20} {median:>10} {ratio:>30} {share:>14} {early:>14}{flag}")


def describe_best(state, summary):
    best = best_configuration(summary)
    plain = summary["plain"]["median_ms"]
    if best is None:
        return f"{state} cache: no foreactor configuration completed."
    ratio, name = best
    reference = summary[REFERENCE_NAME]["ratio_to_plain"]
    by_hand = ("" if reference is None else
               f"; with readahead(2) added by hand: {reference:.2f}x")
    if ratio <= 1.0:
        return (f"{state} cache: no configuration beat the plain program ({plain:.1f} ms); "
                f"the closest was {name} at {ratio:.2f}x{by_hand}.")
    return (f"{state} cache: best was {name}, {ratio:.2f}x as fast as the plain program "
            f"({summary[name]['median_ms']:.1f} ms against {plain:.1f} ms){by_hand}.")


def main():
    arguments = parse_arguments()
    for program in (PLAIN_PROGRAM, FOREACTOR_PROGRAM, REFERENCE_PROGRAM):
        if not program.exists():
            sys.exit(f"demo.py: {program} not found: build first (./run build)")
    size_bytes = arguments.size_mib << 20
    if size_bytes < 8192:
        sys.exit("demo.py: --size-mib too small")
    make_data_file(size_bytes)
    record = run_record.begin("demo", DATA_FILE.parent, REQUEST_BYTES, arguments,
                              arguments.rounds, DEFAULT_ROUNDS, None)
    bound = run_record.device_bound(record)

    started = time.monotonic()
    notes = {"cache": None, "messages": {}, "failures": []}
    reference = {"checksum": None}
    summaries = {}
    with tempfile.TemporaryDirectory(prefix="foreactor-demo-") as work_dir:
        stats_file = Path(work_dir) / "stats.json"
        summaries["cold"] = summarize(run_state("cold", arguments, stats_file, reference, notes),
                                      arguments.reads)
        cache.warm_files([DATA_FILE])
        summaries["hot"] = summarize(run_state("hot", arguments, stats_file, reference, notes),
                                     arguments.reads)
    elapsed = time.monotonic() - started

    print(f"\nWhat ran: examples/random_read read {arguments.reads:,} random 8 KiB blocks of "
          f"{DATA_FILE.relative_to(ROOT)} ({arguments.size_mib:,} MiB of random bytes), one "
          f"pread after the other (seed {arguments.seed}); {arguments.rounds} round(s), the "
          f"{len(CONFIGURATIONS)} configurations alternating within each round; "
          f"{elapsed:.0f} s in all.")
    print(f"Cold runs: before each one, {cache.describe_cache_drop(notes['cache'])}.")
    print("Hot runs: the whole file was read once before, nothing was dropped.")
    print("Columns: median time of read_blocks; time ratio: median over the rounds of "
          "config/plain in the same round (< 1: faster), with its 95% bootstrap interval; "
          "share of gain: (1 - ratio) / (1 - the device's QD64/QD1 time ratio), cold only; "
          "started ahead: share of reads whose device read foreactor started before the "
          "program asked (issued early, started with readahead(2), or found coming in). "
          f"{REFERENCE_NAME}: the program's objects with readahead(2) added by hand, 64 "
          "reads ahead of each pread, no foreactor (examples/random_read/"
          "readahead_by_hand.c).")
    for state in ("cold", "hot"):
        print_table(state, summaries[state], bound if state == "cold" else None)
    print()
    for state in ("cold", "hot"):
        print(describe_best(state, summaries[state]))
    if notes["messages"]:
        print("\nMessages from the runs (first configuration that printed each):")
        for message, name in notes["messages"].items():
            print(f"  [{name}] {message}")
    if reference["checksum"] is not None and not notes["failures"]:
        print(f"\nEvery run printed checksum {reference['checksum']}, the plain program's.")
    for failure in notes["failures"]:
        print(f"FAILED: {failure}")

    run_record.finish(record, [entry["time_ratio"] for summary in summaries.values()
                               for name, entry in summary.items()
                               if name not in WITHOUT_FOREACTOR])
    results.write_json(arguments.output, {
        "demo": "random_read",
        "file": str(DATA_FILE.relative_to(ROOT)),
        "size_mib": arguments.size_mib,
        "reads": arguments.reads,
        "seed": arguments.seed,
        "rounds": arguments.rounds,
        "run": record,
        "cold_cache_method": notes["cache"],
        "checksum": reference["checksum"],
        "results": summaries,
        "failures": notes["failures"],
    })
    print(f"\nresults written to {arguments.output}")
    return 1 if notes["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
