#!/usr/bin/env python3
"""B+-tree benchmark: range scans and bulk loads, plain and with foreactor.

For each degree (64, 128, 256, 510), a tree of 1,638,400 random keys
(sorted, bulk loaded by `bptree load`) is scanned with 10 range scans, each
covering 90% of the key range (ranges drawn from a seeded RNG, the same for
every configuration), with a cold page cache (dropped before every scan) and
with a hot one (file read once, one warm-up scan).  Then the bulk load itself
is measured with a cold cache, on a fresh file each run; the load's time
includes an fsync of the file by this driver right after the tool exits, so
that the data has reached the device.

Configurations, all in the same run, in an order that alternates from one
measurement to the next: the plain tool; `bptree_foreactor` with io_uring and
with the thread pool at depths 4, 16, 64, 256.  Every scan must print the same
count and checksum as the plain tool for the same range, and every load must
produce a byte-identical file; the run aborts loudly otherwise.

Throughput is in million records per second: records scanned / scan time (as
printed by the tool), or records loaded / (load time + fsync time); medians
over rounds, ratio to plain.  For each foreactor configuration the table also
shows foreactor's statistics (issued early, consumed, wasted) per round.

Usage: run.py [--quick] [--rounds N] [--scans N] [--seed N]
       (or: ./run bench bptree [--quick])
       run.py --markdown RESULTS_JSON   (the tables of a past run, as Markdown)
--quick: degree 256 only, depths 16 and 64 only, 3 rounds (a few minutes).
Writes bench/results/bptree.json (bptree-quick.json) and
bench/results/bptree[-quick]-{scan-cold,scan-hot,load-cold}.png.
"""

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT))

from bench.common import cache, machine, progress, results, runs  # noqa: E402

PLAIN_TOOL = BUILD_DIR / "apps" / "bptree" / "bptree"
FOREACTOR_TOOL = BUILD_DIR / "apps" / "bptree" / "plugins" / "bptree_foreactor"
DATA_DIR = ROOT / "data" / "bptree"
RESULTS_DIR = ROOT / "bench" / "results"

KEY_COUNT = 1_638_400
KEY_SEED = 1
ALL_DEGREES = (64, 128, 256, 510)
ALL_DEPTHS = (4, 16, 64, 256)
QUICK_DEGREES = (256,)
QUICK_DEPTHS = (16, 64)
ENGINES = ("io_uring", "threads")
RANGE_FRACTION = 0.9
KEY_SPACE = 1 << 64  # the tool draws keys uniformly from all 64-bit numbers
RUN_TIMEOUT_SECONDS = 600
STAT_NAMES = ("intercepted", "issued_early", "consumed", "wasted", "mispredicted",
              "synchronous", "served_from_cache")
SCAN_GRAPH = "bptree_scan"
LOAD_GRAPH = "bptree_load"


class MismatchError(RuntimeError):
    """A foreactor run observed something other than the plain run did."""


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="degree 256, depths 16 and 64, 3 rounds")
    parser.add_argument("--rounds", type=int, help="rounds per configuration (5; quick 3)")
    parser.add_argument("--scans", type=int, default=10, help="range scans per round (10)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the scan ranges")
    parser.add_argument("--markdown", metavar="RESULTS_JSON",
                        help="print the tables of a results file as Markdown, run nothing")
    arguments = parser.parse_args()
    if arguments.rounds is None:
        arguments.rounds = 3 if arguments.quick else 5
    if arguments.rounds <= 0 or arguments.scans <= 0:
        parser.error("--rounds and --scans must be positive")
    return arguments


def say(message):
    print(message, file=sys.stderr, flush=True)


def configurations(depths):
    """(name, engine, depth) of every configuration; engine None is plain."""
    return [("plain", None, None)] + [(f"{engine} {depth}", engine, depth)
                                       for engine in ENGINES for depth in depths]


def scan_ranges(count, seed):
    """`count` (low, high) pairs, each covering RANGE_FRACTION of the key space."""
    generator = random.Random(seed)
    width = int(KEY_SPACE * RANGE_FRACTION)
    ranges = []
    for _ in range(count):
        low = generator.randrange(0, KEY_SPACE - width + 1)
        ranges.append((low, low + width - 1))
    return ranges


def parse_words(text):
    """'count 5 checksum 0x.. elapsed_ms 1.5' -> {'count': '5', ...}."""
    words = text.replace(",", " ").replace(":", " ").split()
    return {words[i]: words[i + 1] for i in range(len(words) - 1)}


def run_tool(engine, depth, arguments, stats_file, messages, label):
    """Runs the plain tool (engine None) or the foreactor one; returns
    (stdout, graph statistics dict or None)."""
    tool = PLAIN_TOOL if engine is None else FOREACTOR_TOOL
    if stats_file.exists():
        stats_file.unlink()
    try:
        completed = subprocess.run([str(tool)] + [str(a) for a in arguments],
                                   env=runs.foreactor_environment(engine, depth, stats_file),
                                   capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise MismatchError(f"{label}: timed out after {RUN_TIMEOUT_SECONDS} s")
    for line in completed.stderr.splitlines():
        if line.strip():
            messages.setdefault(line.strip(), label)
    if completed.returncode != 0:
        raise MismatchError(f"{label}: exit status {completed.returncode}: "
                            f"{completed.stderr.strip()}")
    graphs = None
    if engine is not None:
        graphs = {name: runs.read_graph_statistics(stats_file, name)
                  for name in (SCAN_GRAPH, LOAD_GRAPH)}
    return completed.stdout, graphs


def load_tree(tool_engine, depth, path, degree, stats_file, messages, label):
    """Bulk loads a fresh tree into `path`; returns (load ms, fsync ms, stats)."""
    if path.exists():
        path.unlink()
    stdout, graphs = run_tool(tool_engine, depth,
                              ["load", path, "--count", KEY_COUNT, "--degree", degree,
                               "--seed", KEY_SEED], stats_file, messages, label)
    # The tool writes with pwrite and never syncs: the data is in the page
    # cache when it exits.  Getting it to the device is part of the load.
    started = time.perf_counter()
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    sync_ms = (time.perf_counter() - started) * 1000
    words = parse_words(stdout)
    if "elapsed_ms" not in words or f"loaded {KEY_COUNT} pairs" not in stdout:
        raise MismatchError(f"{label}: unexpected output {stdout!r}")
    return float(words["elapsed_ms"]), sync_ms, (graphs or {}).get(LOAD_GRAPH)


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def prepare_scan_tree(degree, stats_file, messages):
    """The tree scanned at `degree`, loaded once by the plain tool and reused."""
    path = DATA_DIR / f"scan-degree{degree}.db"
    if path.exists():
        completed = subprocess.run([str(PLAIN_TOOL), "stats", str(path)], capture_output=True,
                                   text=True, env=runs.clean_environment())
        stats = parse_words(completed.stdout)
        if (completed.returncode == 0 and stats.get("degree") == str(degree)
                and stats.get("entries") == str(KEY_COUNT)):
            return path
    say(f"loading {KEY_COUNT:,} keys at degree {degree} into {path.relative_to(ROOT)}")
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    load_tree(None, None, path, degree, stats_file, messages, f"degree {degree} scan tree")
    return path


class Measurements:
    """Samples of one phase (e.g. scan, cold, degree 256): per configuration,
    per round, the records, the milliseconds and the summed statistics."""

    def __init__(self, names, rounds):
        self.records = {name: [0] * rounds for name in names}
        self.milliseconds = {name: [0.0] * rounds for name in names}
        self.extra_milliseconds = {name: [0.0] * rounds for name in names}
        self.statistics = {name: [[] for _ in range(rounds)] for name in names}

    def add(self, name, round_index, records, milliseconds, statistics=None, extra_ms=0.0):
        self.records[name][round_index] += records
        self.milliseconds[name][round_index] += milliseconds
        self.extra_milliseconds[name][round_index] += extra_ms
        self.statistics[name][round_index].append(statistics)

    def summary(self):
        """Per configuration: median Mrec/s, ratio to plain, statistics."""
        def throughputs(name, with_extra):
            values = []
            for records, ms, extra in zip(self.records[name], self.milliseconds[name],
                                          self.extra_milliseconds[name]):
                total = ms + (extra if with_extra else 0.0)
                values.append(records / total / 1000 if total > 0 else None)
            return values

        summary = {}
        plain = runs.median_or_none(throughputs("plain", True))
        plain_without_extra = runs.median_or_none(throughputs("plain", False))
        for name in self.records:
            per_round = throughputs(name, True)
            median = runs.median_or_none(per_round)
            entry = {
                "median_mrec_per_s": median,
                "ratio_to_plain": runs.ratio_or_none(median, plain),
                "per_round_mrec_per_s": per_round,
                "records_per_round": self.records[name],
                "ms_per_round": self.milliseconds[name],
            }
            if any(self.extra_milliseconds[name]):
                without = runs.median_or_none(throughputs(name, False))
                entry["fsync_ms_per_round"] = self.extra_milliseconds[name]
                entry["median_mrec_per_s_without_fsync"] = without
                entry["ratio_to_plain_without_fsync"] = runs.ratio_or_none(
                    without, plain_without_extra)
            if name != "plain":
                rounds = [runs.sum_counters(stats, STAT_NAMES)
                          for stats in self.statistics[name]]
                entry["statistics_per_round"] = rounds
                entry["statistics_median"] = {
                    stat: runs.median_or_none([r[stat] if r else None for r in rounds])
                    for stat in STAT_NAMES}
            summary[name] = entry
        return summary


def measure_scans(state, degree, path, ranges, configs, rounds, context):
    """Runs every range scan of every configuration `rounds` times."""
    names = [name for name, _, _ in configs]
    measurements = Measurements(names, rounds)
    reference = context["scan_reference"].setdefault(degree, {})
    if state == "hot":
        cache.warm_files([path])
        low, high = ranges[0]
        run_tool(None, None, ["scan", path, low, high], context["stats_file"],
                 context["messages"], f"degree {degree} hot warm-up")
    for round_index in range(rounds):
        context["load_averages"].append(os.getloadavg()[0])
        for range_index, (low, high) in enumerate(ranges):
            order = runs.alternating_order(configs, round_index * len(ranges) + range_index)
            for name, engine, depth in order:
                label = f"scan {state} degree {degree} {name} round {round_index + 1}"
                if state == "cold":
                    context["cache_method"] = cache.drop_page_cache([path])
                stdout, graphs = run_tool(engine, depth, ["scan", path, low, high],
                                          context["stats_file"], context["messages"], label)
                words = parse_words(stdout)
                try:
                    count, checksum = int(words["count"]), words["checksum"]
                    elapsed_ms = float(words["elapsed_ms"])
                except (KeyError, ValueError):
                    raise MismatchError(f"{label}: unexpected output {stdout!r}")
                seen = reference.setdefault(range_index, (count, checksum, name))
                if seen[:2] != (count, checksum):
                    raise MismatchError(
                        f"{label}, range {range_index}: count {count} checksum {checksum}, "
                        f"but {seen[2]} printed count {seen[0]} checksum {seen[1]}")
                measurements.add(name, round_index, count, elapsed_ms,
                                 (graphs or {}).get(SCAN_GRAPH))
                context["progress"].step(label)
    return measurements.summary()


def measure_loads(degree, configs, rounds, context):
    """Bulk loads a fresh file per run, cold cache, `rounds` times per configuration."""
    names = [name for name, _, _ in configs]
    measurements = Measurements(names, rounds)
    path = DATA_DIR / f"load-degree{degree}.db"
    for round_index in range(rounds):
        context["load_averages"].append(os.getloadavg()[0])
        for name, engine, depth in runs.alternating_order(configs, round_index):
            label = f"load cold degree {degree} {name} round {round_index + 1}"
            if path.exists():
                path.unlink()
            context["cache_method"] = cache.drop_page_cache([DATA_DIR])
            load_ms, sync_ms, statistics = load_tree(engine, depth, path, degree,
                                                     context["stats_file"],
                                                     context["messages"], label)
            digest = file_digest(path)
            seen = context["load_reference"].setdefault(degree, (digest, name))
            if seen[0] != digest:
                raise MismatchError(f"{label}: the loaded file differs from the one "
                                    f"{seen[1]} wrote (sha256 {digest} vs {seen[0]})")
            measurements.add(name, round_index, KEY_COUNT, load_ms, statistics, sync_ms)
            context["progress"].step(label)
    if path.exists():
        path.unlink()
    return measurements.summary()


def format_count(value):
    return "-" if value is None else f"{value:,.0f}"


def print_table(title, per_degree, with_fsync):
    print(f"\n{title}")
    header = (f"  {'degree':>6} {'configuration':14} {'Mrec/s':>8} {'ratio':>7}"
              + (f" {'no-sync':>8} {'ratio':>7}" if with_fsync else "")
              + f" {'issued early':>13} {'consumed':>10} {'wasted':>8} {'mispred':>8}")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for degree, summary in per_degree.items():
        for name, entry in summary.items():
            median = entry["median_mrec_per_s"]
            ratio = entry["ratio_to_plain"]
            line = (f"  {degree:>6} {name:14} "
                    f"{'-' if median is None else f'{median:.2f}':>8} "
                    f"{'-' if ratio is None else f'{ratio:.2f}x':>7}")
            if with_fsync:
                without = entry.get("median_mrec_per_s_without_fsync")
                ratio_without = entry.get("ratio_to_plain_without_fsync")
                line += (f" {'-' if without is None else f'{without:.2f}':>8}"
                         f" {'-' if ratio_without is None else f'{ratio_without:.2f}x':>7}")
            stats = entry.get("statistics_median") or {}
            line += (f" {format_count(stats.get('issued_early')):>13}"
                     f" {format_count(stats.get('consumed')):>10}"
                     f" {format_count(stats.get('wasted')):>8}"
                     f" {format_count(stats.get('mispredicted')):>8}")
            print(line)


def best(summary, engine=None):
    """(ratio, name) of the best foreactor configuration (of `engine`), or None."""
    candidates = [(entry["ratio_to_plain"], name) for name, entry in summary.items()
                  if name != "plain" and entry["ratio_to_plain"] is not None
                  and (engine is None or name.startswith(engine + " "))]
    return max(candidates) if candidates else None


def evaluate_targets(all_results):
    """The issue's targets, each with what was measured and whether it was met."""
    targets = []
    scan_cold = all_results["scan"]["cold"]
    scan_hot = all_results["scan"]["hot"]
    load_cold = all_results["load"]["cold"]
    if "256" in scan_cold:
        found = best(scan_cold["256"])
        targets.append({"target": "scan, cold, degree 256: best foreactor >= 2.5x plain",
                        "measured": found and f"{found[1]} {found[0]:.2f}x",
                        "met": bool(found and found[0] >= 2.5)})
    for degree, summary in load_cold.items():
        found = best(summary)
        targets.append({"target": f"load, cold, degree {degree}: best foreactor >= 1.5x plain "
                                  "(load + fsync)",
                        "measured": found and f"{found[1]} {found[0]:.2f}x",
                        "met": bool(found and found[0] >= 1.5)})
    for degree, summary in scan_cold.items():
        uring, threads = best(summary, "io_uring"), best(summary, "threads")
        targets.append({"target": f"scan, cold, degree {degree}: best io_uring >= best threads",
                        "measured": uring and threads and
                        f"io_uring {uring[0]:.2f}x ({uring[1]}) vs threads {threads[0]:.2f}x "
                        f"({threads[1]})",
                        "met": bool(uring and threads and uring[0] >= threads[0])})
    for degree, summary in scan_hot.items():
        ratios = [(entry["ratio_to_plain"], name) for name, entry in summary.items()
                  if name != "plain" and entry["ratio_to_plain"] is not None]
        worst = min(ratios) if ratios else None
        targets.append({"target": f"scan, hot, degree {degree}: every foreactor configuration "
                                  "at most 3% slower (ratio >= 0.97)",
                        "measured": worst and f"worst {worst[1]} {worst[0]:.2f}x",
                        "met": bool(worst and worst[0] >= 0.97)})
    wasted_shares = []
    for phase in (scan_cold, scan_hot, load_cold):
        for summary in phase.values():
            for name, entry in summary.items():
                stats = entry.get("statistics_median")
                if stats and stats.get("issued_early"):
                    wasted_shares.append((stats["wasted"] / stats["issued_early"], name))
    worst_waste = max(wasted_shares) if wasted_shares else None
    targets.append({"target": "wasted stays near zero (< 1% of issued early)",
                    "measured": worst_waste and
                    f"worst {worst_waste[0]:.2%} of issued early ({worst_waste[1]})",
                    "met": bool(worst_waste is not None and worst_waste[0] < 0.01)})
    return targets


def markdown_report(data):
    """The tables of a results file as Markdown (for docs/BPTREE.md)."""
    def number(value, pattern):
        return "-" if value is None else pattern.format(value)

    lines = []
    for operation, state, title in (("scan", "cold", "Range scans, cold cache"),
                                    ("scan", "hot", "Range scans, hot cache"),
                                    ("load", "cold", "Bulk load + fsync, cold cache")):
        per_degree = data["results"][operation][state]
        if not per_degree:
            continue
        with_fsync = operation == "load"
        lines += [f"**{title}** (Mrec/s, median of {data['parameters']['rounds']} rounds; "
                  "statistics: median per round" + (", summed over the scans" if operation ==
                                                     "scan" else "") + ")", ""]
        header = ["degree", "configuration", "Mrec/s", "ratio"]
        if with_fsync:
            header += ["Mrec/s without fsync", "ratio"]
        header += ["issued early", "consumed", "wasted", "served from cache"]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        for degree, summary in per_degree.items():
            for name, entry in summary.items():
                row = [degree, name, number(entry["median_mrec_per_s"], "{:.2f}"),
                       number(entry["ratio_to_plain"], "{:.2f}x")]
                if with_fsync:
                    row += [number(entry.get("median_mrec_per_s_without_fsync"), "{:.2f}"),
                            number(entry.get("ratio_to_plain_without_fsync"), "{:.2f}x")]
                stats = entry.get("statistics_median") or {}
                row += [format_count(stats.get(stat)) for stat in
                        ("issued_early", "consumed", "wasted", "served_from_cache")]
                lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines.append("**Targets of issue 3**")
    lines.append("")
    for target in data["targets"]:
        lines.append(f"- {'met' if target['met'] else '**not met**'}: {target['target']}: "
                     f"{target['measured']}")
    return "\n".join(lines) + "\n"


def plot(all_results, prefix, configs):
    """Grouped bar charts, one per (operation, cache state); returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    names = [name for name, _, _ in configs]
    for operation, state, title in (("scan", "cold", "range scans, cold cache"),
                                    ("scan", "hot", "range scans, hot cache"),
                                    ("load", "cold", "bulk load + fsync, cold cache")):
        per_degree = all_results[operation][state]
        if not per_degree:
            continue
        degrees = list(per_degree)
        figure, axes = plt.subplots(figsize=(max(6.0, 1.2 * len(degrees) * len(names) / 3), 4.8))
        width = 0.8 / len(names)
        for index, name in enumerate(names):
            values = [per_degree[d][name]["median_mrec_per_s"] or 0 for d in degrees]
            positions = [d + (index - (len(names) - 1) / 2) * width for d in range(len(degrees))]
            bars = axes.bar(positions, values, width, label=name)
            for bar, degree in zip(bars, degrees):
                ratio = per_degree[degree][name]["ratio_to_plain"]
                if ratio is not None and name != "plain":
                    axes.annotate(f"{ratio:.2f}x", (bar.get_x() + bar.get_width() / 2,
                                                     bar.get_height()),
                                  ha="center", va="bottom", fontsize=6)
        axes.set_xticks(range(len(degrees)))
        axes.set_xticklabels([f"degree {d}" for d in degrees])
        axes.set_ylabel("million records / s (median)")
        axes.set_title(f"B+-tree {title}: {KEY_COUNT:,} keys")
        axes.legend(fontsize=7, ncol=min(len(names), 5), loc="upper center",
                    bbox_to_anchor=(0.5, -0.1))
        axes.margins(y=0.1)
        figure.tight_layout()
        path = RESULTS_DIR / f"{prefix}-{operation}-{state}.png"
        figure.savefig(path, dpi=120)
        plt.close(figure)
        paths.append(path)
    return paths


def main():
    arguments = parse_arguments()
    if arguments.markdown:
        print(markdown_report(json.loads(Path(arguments.markdown).read_text())), end="")
        return 0
    for tool in (PLAIN_TOOL, FOREACTOR_TOOL):
        if not tool.exists():
            sys.exit(f"bench/bptree/run.py: {tool} not found: build first (./run build)")
    degrees = QUICK_DEGREES if arguments.quick else ALL_DEGREES
    configs = configurations(QUICK_DEPTHS if arguments.quick else ALL_DEPTHS)
    ranges = scan_ranges(arguments.scans, arguments.seed)
    prefix = "bptree-quick" if arguments.quick else "bptree"
    load_before = os.getloadavg()
    if load_before[0] > 1.5:
        say(f"warning: load average {load_before[0]:.2f}: other work is running, "
            "the figures will be noisy")

    started = time.monotonic()
    runs_per_degree = len(configs) * arguments.rounds * (2 * len(ranges) + 1)
    context = {"messages": {}, "cache_method": None, "scan_reference": {},
               "load_reference": {}, "load_averages": [load_before[0]],
               "progress": progress.Progress(runs_per_degree * len(degrees))}
    all_results = {"scan": {"cold": {}, "hot": {}}, "load": {"cold": {}}}
    failure = None
    with tempfile.TemporaryDirectory(prefix="foreactor-bptree-") as work_dir:
        context["stats_file"] = Path(work_dir) / "stats.json"
        try:
            for degree in degrees:
                path = prepare_scan_tree(degree, context["stats_file"], context["messages"])
                for state in ("cold", "hot"):
                    all_results["scan"][state][str(degree)] = measure_scans(
                        state, degree, path, ranges, configs, arguments.rounds, context)
                all_results["load"]["cold"][str(degree)] = measure_loads(
                    degree, configs, arguments.rounds, context)
        except (MismatchError, cache.CacheError) as error:
            failure = str(error)
        finally:
            context["progress"].finish()
    elapsed = time.monotonic() - started
    load_after = os.getloadavg()
    context["load_averages"].append(load_after[0])

    if failure:
        print(f"\nFAILED, benchmark aborted: {failure}", file=sys.stderr)
        return 1

    print(f"\nWhat ran: {KEY_COUNT:,} random keys (seed {KEY_SEED}), sorted and bulk loaded; "
          f"{len(ranges)} range scans per round of {RANGE_FRACTION:.0%} of the key range each "
          f"(seed {arguments.seed}); {arguments.rounds} round(s); {len(configs)} configurations "
          f"alternating; {elapsed / 60:.1f} min in all.")
    print(f"Cold runs: before each one, "
          f"{cache.describe_cache_drop(context['cache_method'])}.")
    print(f"Load average (1 min): {min(context['load_averages']):.2f} .. "
          f"{max(context['load_averages']):.2f} during the run.")
    print("Mrec/s: million records per second, median over rounds; ratio: to plain in this "
          "run; statistics: foreactor's counters per round (median), summed over the scans.")
    print_table("Range scans, cold cache", all_results["scan"]["cold"], False)
    print_table("Range scans, hot cache", all_results["scan"]["hot"], False)
    print_table("Bulk load, cold cache (Mrec/s and ratio include the fsync; no-sync: without)",
                all_results["load"]["cold"], True)
    targets = evaluate_targets(all_results)
    print("\nTargets of issue 3:")
    for target in targets:
        print(f"  [{'met' if target['met'] else 'NOT MET'}] {target['target']}: "
              f"{target['measured']}")
    if context["messages"]:
        print("\nMessages from the runs (first run that printed each):")
        for message, label in context["messages"].items():
            print(f"  [{label}] {message}")
    print("\nEvery scan printed the plain tool's count and checksum for its range, and every "
          "load wrote a byte-identical file.")

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    plots = plot(all_results, prefix, configs)
    output = results.write_json(RESULTS_DIR / f"{prefix}.json", {
        "benchmark": "bptree",
        "quick": arguments.quick,
        "command": "./run bench bptree" + (" --quick" if arguments.quick else ""),
        "parameters": {"keys": KEY_COUNT, "key_seed": KEY_SEED, "degrees": list(degrees),
                       "configurations": [name for name, _, _ in configs],
                       "rounds": arguments.rounds, "scans_per_round": len(ranges),
                       "range_seed": arguments.seed, "range_fraction": RANGE_FRACTION,
                       "ranges": [[str(low), str(high)] for low, high in ranges]},
        "machine": machine.describe_machine(DATA_DIR),
        "load_average_1min": {"before": load_before[0], "after": load_after[0],
                              "samples": context["load_averages"]},
        "cold_cache_method": context["cache_method"],
        "load_timing": "tool's elapsed_ms for the bulk load + os.fsync of the file by the "
                       "driver right after the tool exits",
        "elapsed_seconds": round(elapsed, 1),
        "results": all_results,
        "targets": targets,
        "messages": context["messages"],
        "scan_checks": {str(degree): {str(index): {"count": value[0], "checksum": value[1]}
                                      for index, value in per_range.items()}
                        for degree, per_range in context["scan_reference"].items()},
        "load_checks": {str(degree): value[0]
                        for degree, value in context["load_reference"].items()},
    })
    print(f"\nresults written to {output.relative_to(ROOT)}; plots: "
          + ", ".join(str(p.relative_to(ROOT)) for p in plots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
