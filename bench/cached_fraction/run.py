#!/usr/bin/env python3
"""Cached-fraction sweep: foreactor against the plain program as more of the
working set is in the page cache.

For each fraction (0%, 25%, 50%, 75%, 100%) and each measured run: the page
cache is emptied, then that fraction of the data file's pages, chosen at
random (the same pages for every configuration), is read into the cache with
readahead off, and one workload run follows.  The claim checked (issue 7):
the automatic depth is at or above the plain program at every fraction.

Workloads:
  bptree  one range scan over 90% of the keys of the B+-tree built by
          random-order inserts (degree 256, 1,638,400 keys; its leaves are
          scattered over the file), as in bench/bptree.

Usage: run.py [--quick] [--rounds N] [--fractions 0,0.5,1]
       (or: ./run bench cached_fraction [--quick])
Writes bench/results/cached_fraction[-quick].json and a PNG plot.  Exits 1
when a run fails or prints another count or checksum than the plain program.
"""

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT))

from bench.common import cache, machine, progress, results, runs  # noqa: E402

RESULTS_DIR = ROOT / "bench" / "results"
PAGE_BYTES = 8192
WARM_SEED = 11
DEGREE = 256
FULL_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
QUICK_FRACTIONS = (0.0, 0.5, 1.0)
FULL_CONFIGURATIONS = [("plain", None, None), ("io_uring auto", "io_uring", "auto"),
                       ("io_uring 16", "io_uring", 16), ("io_uring 64", "io_uring", 64),
                       ("threads auto", "threads", "auto")]
QUICK_CONFIGURATIONS = FULL_CONFIGURATIONS[:2] + [FULL_CONFIGURATIONS[3]]


def load_bptree_bench():
    """bench/bptree/run.py as a module: its tree building and tool running
    are the one way this project does those."""
    spec = importlib.util.spec_from_file_location("bptree_bench", ROOT / "bench" / "bptree" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fractions 0, 0.5, 1; plain, io_uring auto and 64; 2 rounds")
    parser.add_argument("--rounds", type=int, help="runs per configuration and fraction (3; quick 2)")
    parser.add_argument("--fractions", help="comma-separated fractions in [0, 1]")
    arguments = parser.parse_args()
    if arguments.rounds is not None and arguments.rounds <= 0:
        parser.error("--rounds must be positive")
    if arguments.fractions:
        try:
            arguments.fractions = [float(text) for text in arguments.fractions.split(",")]
        except ValueError:
            parser.error("--fractions: comma-separated numbers such as 0,0.5,1")
        if not all(0.0 <= fraction <= 1.0 for fraction in arguments.fractions):
            parser.error("--fractions: each must be within [0, 1]")
    return arguments


def say(message):
    print(message, file=sys.stderr, flush=True)


def sweep_bptree(bptree, fractions, configurations, rounds, work_dir, report):
    """Measures the scan at each fraction; returns {fraction: {name: summary}}."""
    stats_file = Path(work_dir) / "stats.json"
    messages = {}
    tree = bptree.prepare_scan_tree("insert", DEGREE, stats_file, messages)
    low, high = bptree.scan_ranges(1, 2024)[0]
    reference = None
    per_fraction = {}
    for fraction in fractions:
        times = {name: [] for name, _, _ in configurations}
        statistics = {name: [] for name, _, _ in configurations}
        cached = []
        for round_index in range(rounds):
            for name, engine, depth in runs.alternating_order(configurations, round_index):
                label = f"bptree scan, {fraction:.0%} cached, {name}, round {round_index + 1}"
                cache.drop_page_cache([tree])
                cache.warm_fraction(tree, fraction, PAGE_BYTES, WARM_SEED)
                cached.append(cache.cached_fraction(tree))
                stdout, graphs = bptree.run_tool(engine, depth, ["scan", tree, low, high],
                                                 stats_file, messages, label)
                words = bptree.parse_words(stdout)
                outcome = (words.get("count"), words.get("checksum"))
                if reference is None:
                    reference = outcome
                if outcome != reference or "elapsed_ms" not in words:
                    raise bptree.MismatchError(f"{label}: printed {stdout!r}, expected count "
                                               f"{reference[0]} checksum {reference[1]}")
                times[name].append(float(words["elapsed_ms"]))
                if graphs and graphs.get(bptree.SCAN_GRAPH):
                    statistics[name].append(graphs[bptree.SCAN_GRAPH])
                report.step(label)
        plain = runs.median_or_none(times["plain"])
        summary = {}
        for name, _, _ in configurations:
            median = runs.median_or_none(times[name])
            stats = statistics[name]
            windows = sum(s.get("depth_windows", 0) for s in stats)
            summary[name] = {
                "times_ms": times[name], "median_ms": median,
                "speed_vs_plain": runs.ratio_or_none(plain, median),
                "mean_auto_depth": (sum(s.get("depth_window_sum", 0) for s in stats) / windows
                                    if windows else None),
                "statistics": runs.sum_counters(stats, ("issued_early", "consumed", "wasted",
                                                        "found_cached", "served_from_cache",
                                                        "cache_mode_changes", "depth_changes"))
                if stats else None,
            }
        measured = [value for value in cached if value is not None]
        per_fraction[f"{fraction:g}"] = {"measured_cached_fraction": (sum(measured) / len(measured)
                                                                     if measured else None),
                                         "configurations": summary}
    return {"records": int(reference[0]), "tree": str(tree.relative_to(ROOT)),
            "per_fraction": per_fraction, "messages": messages}


def print_table(title, per_fraction, configurations):
    names = [name for name, _, _ in configurations]
    print(f"\n{title} (median ms; speed vs plain = plain time / time)\n")
    print("| cached (asked / measured) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for fraction, entry in per_fraction.items():
        measured = entry["measured_cached_fraction"]
        cells = []
        for name in names:
            result = entry["configurations"][name]
            cell = f"{result['median_ms']:.1f}"
            if name != "plain" and result["speed_vs_plain"] is not None:
                cell += f" ({result['speed_vs_plain']:.2f}x)"
            if result.get("mean_auto_depth") is not None:
                cell += f", depth ~{result['mean_auto_depth']:.0f}"
            cells.append(cell)
        shown = f"{float(fraction):.0%} / " + ("?" if measured is None else f"{measured:.0%}")
        print(f"| {shown} | " + " | ".join(cells) + " |")


def plot(title, per_fraction, configurations, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fractions = [float(fraction) for fraction in per_fraction]
    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    for name, _, _ in configurations:
        speeds = [per_fraction[key]["configurations"][name]["speed_vs_plain"] or 0
                  for key in per_fraction]
        axes.plot([100 * f for f in fractions], speeds, marker="o", label=name)
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_xlabel("share of the file in the page cache before the run (%)")
    axes.set_ylabel("speed relative to plain (median)")
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def main():
    arguments = parse_arguments()
    bptree = load_bptree_bench()
    for tool in (bptree.PLAIN_TOOL, bptree.FOREACTOR_TOOL):
        if not tool.exists():
            sys.exit(f"bench/cached_fraction/run.py: {tool} not found: build first (./run build)")
    fractions = arguments.fractions or (QUICK_FRACTIONS if arguments.quick else FULL_FRACTIONS)
    configurations = QUICK_CONFIGURATIONS if arguments.quick else FULL_CONFIGURATIONS
    rounds = arguments.rounds or (2 if arguments.quick else 3)
    load_before = os.getloadavg()
    if load_before[0] > 1.5:
        say(f"warning: load average {load_before[0]:.2f}: other work is running, "
            "the figures will be noisy")
    started = time.monotonic()
    report = progress.Progress(len(fractions) * len(configurations) * rounds)
    try:
        with tempfile.TemporaryDirectory(prefix="foreactor-cached-fraction-") as work_dir:
            bptree_results = sweep_bptree(bptree, fractions, configurations, rounds, work_dir,
                                          report)
    except (RuntimeError, cache.CacheError) as error:
        report.finish()
        print(f"\nFAILED, benchmark aborted: {error}", file=sys.stderr)
        return 1
    report.finish()
    title = (f"B+-tree scan (insert-built tree, degree {DEGREE}, "
             f"{bptree_results['records']:,} records per scan)")
    print_table(title, bptree_results["per_fraction"], configurations)
    suffix = "-quick" if arguments.quick else ""
    plot_path = plot(title, bptree_results["per_fraction"], configurations,
                     RESULTS_DIR / f"cached_fraction{suffix}-bptree.png")
    data = {
        "benchmark": "cached_fraction", "quick": arguments.quick, "rounds": rounds,
        "fractions": list(fractions),
        "configurations": [{"name": n, "engine": e, "depth": d} for n, e, d in configurations],
        "method": ("per run: drop the whole page cache, read the chosen share of the file's 8 KiB "
                   "pages (random, seed 11, POSIX_FADV_RANDOM on the reading descriptor), then one "
                   "scan; the cached share is measured with fincore"),
        "machine": machine.describe_machine(ROOT / "data"),
        "load_average_before": list(load_before), "load_average_after": list(os.getloadavg()),
        "elapsed_seconds": round(time.monotonic() - started, 1),
        "bptree_scan": bptree_results,
    }
    path = results.write_json(RESULTS_DIR / f"cached_fraction{suffix}.json", data)
    print(f"\nwritten: {path.relative_to(ROOT)}, {plot_path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
