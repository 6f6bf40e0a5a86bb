#!/usr/bin/env python3
"""Cached-fraction sweep: foreactor against the plain program as more of the
working set is in the page cache.

For each fraction (0%, 25%, 50%, 75%, 100%) and each measured run: the page
cache is emptied, then that fraction of the data file's pages, chosen at
random (the same pages for every configuration), is read into the cache with
readahead off, and one workload run follows.  The claim checked (issue 7):
the automatic depth is at or above the plain program at every fraction.

Workloads:
  bptree   one range scan over 90% of the keys of the B+-tree built by
           random-order inserts (degree 256, 1,638,400 keys; its leaves are
           scattered over the file), as in bench/bptree.
  leveldb  YCSB-C Gets (Zipfian 0.99, 1 KiB values) on a clone of the
           LevelDB image of bench/leveldb (about 1 GiB; quick: 256 MiB),
           one client thread, LevelDB's 8 MiB block cache; the fraction is
           of every file of the image (its tables, and the log of its last
           writes, which the run turns into a table); no memory limit, so
           pages the run reads stay cached.  Every Get is checked by the driver.
           LevelDB's own compactions run (the image's mode) unless
           --leveldb-compactions held holds them (bench/leveldb: the
           compactions YCSB-C's reads trigger take milliseconds each and
           make most of a run's average, the same with foreactor or
           without).  Each Get's median latency (p50) is reported beside
           the average, paired the same way.

Usage: run.py [--quick] [--rounds N] [--fractions 0,0.5,1] [--workloads bptree,leveldb]
       [--leveldb-ops N] [--leveldb-compactions own|held]
       (or: ./run bench cached_fraction [--quick])
Writes bench/results/cached_fraction[-quick].json (with --workloads naming
one: cached_fraction[-quick]-WORKLOAD.json) and a PNG plot per workload,
cached_fraction[-quick]-WORKLOAD.png.  Exits 1 when a run fails, prints
another count or checksum than the plain program, or a Get returns a wrong
value.
"""

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT))

from bench.common import cache, progress, ratios, results, run_record, runs  # noqa: E402

RESULTS_DIR = ROOT / "bench" / "results"
PAGE_BYTES = 8192
FULL_ROUNDS = 3
QUICK_ROUNDS = 2
WARM_SEED = 11
DEGREE = 256
FULL_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
QUICK_FRACTIONS = (0.0, 0.5, 1.0)
# The graph's counters summed over a configuration's runs.  Cold reads
# started early (readahead(2) on the program's thread) count in
# reads_started (by the scope) or reads_started_in_plans (by LevelDB's
# plugin while it plans a Get), not issued_early; the scope gate's units say
# how many units (Gets, scans) ran plain and in a scope.
STAT_NAMES = ("scopes", "issued_early", "reads_started", "reads_started_in_plans", "consumed",
              "wasted", "synchronous",
              "found_cached", "served_from_cache", "cache_mode_changes", "depth_changes",
              "gate_trials", "gate_plain_units", "gate_scope_units")
# The plugin-linked build with foreactor off (FOREACTOR=0), in the same
# rounds: the program every foreactor configuration runs.  Linking the
# plugin moves the host's code and data, which alone changes its time (the
# LevelDB driver's: 0.93x-1.09x of the plain one's between batches of
# runs); the foreactor configurations' cost beyond this entry's is the
# runtime's.
LINKED_OFF = "plugin build, foreactor off"
LINKED_OFF_CONFIGURATION = (LINKED_OFF, runs.EngineSetup("io_uring", {"FOREACTOR": "0"}), "auto")
QUICK_CONFIGURATIONS = [("plain", None, None), ("io_uring auto", "io_uring", "auto"),
                        ("io_uring 64", "io_uring", 64), LINKED_OFF_CONFIGURATION]
FULL_CONFIGURATIONS = QUICK_CONFIGURATIONS[:2] + [("io_uring 16", "io_uring", 16)] + \
    QUICK_CONFIGURATIONS[2:3] + [("threads auto", "threads", "auto"), LINKED_OFF_CONFIGURATION]
# A Get makes at most one pread per level (four here): deeper fixed depths
# issue nothing more.
LEVELDB_QUICK_CONFIGURATIONS = [("plain", None, None), ("io_uring auto", "io_uring", "auto"),
                                ("io_uring 8", "io_uring", 8), LINKED_OFF_CONFIGURATION]
LEVELDB_CONFIGURATIONS = LEVELDB_QUICK_CONFIGURATIONS[:3] + [("threads auto", "threads", "auto"),
                                                             LINKED_OFF_CONFIGURATION]
LEVELDB_OPERATIONS = 40000
WORKLOADS = ("bptree", "leveldb")


def load_bench(name):
    """bench/NAME/run.py as a module: its data building and program running
    are the one way this project does those."""
    spec = importlib.util.spec_from_file_location(f"{name}_bench", ROOT / "bench" / name / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fractions 0, 0.5, 1; plain, io_uring auto and 64; 2 rounds")
    parser.add_argument("--rounds", type=int, help="runs per configuration and fraction (3; quick 2)")
    parser.add_argument("--fractions", help="comma-separated fractions in [0, 1]")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated workloads (default: %(default)s)")
    parser.add_argument("--leveldb-ops", type=int, default=LEVELDB_OPERATIONS,
                        help="Gets per LevelDB run (default: %(default)s)")
    parser.add_argument("--leveldb-compactions", choices=("own", "held"), default="own",
                        help="LevelDB's compactions during the Gets: its own (default, the "
                             "default image's mode) or held")
    parser.add_argument("--leveldb-records", type=int,
                        help="records of the LevelDB image instead of about 1 GiB (quick: "
                             "256 MiB), for trying things out")
    parser.add_argument("--output", help="results file (default "
                                         "bench/results/cached_fraction[-quick].json)")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    arguments.workloads = [name for name in arguments.workloads.split(",") if name]
    if not arguments.workloads or not set(arguments.workloads) <= set(WORKLOADS):
        parser.error(f"--workloads: comma-separated names among {', '.join(WORKLOADS)}")
    if arguments.leveldb_ops <= 0:
        parser.error("--leveldb-ops must be positive")
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


def sweep(title, files, fractions, configurations, rounds, report, run_once):
    """The sweep's loop, for any workload: at each fraction, every
    configuration `rounds` times in alternating order, each run after the
    page cache was emptied and that share of the pages of `files` read back.
    `run_once(engine, depth, label)` makes one run and returns (its value,
    lower is faster; the graph's statistics or None; a dict of other
    measures of the run, lower is faster, or None).  Returns
    {fraction: fraction_summary()}."""
    per_fraction = {}
    for fraction in fractions:
        values = {name: [] for name, _, _ in configurations}
        statistics = {name: [] for name, _, _ in configurations}
        others = {name: {} for name, _, _ in configurations}
        cached = []
        for round_index in range(rounds):
            for name, engine, depth in runs.alternating_order(configurations, round_index):
                label = f"{title}, {fraction:.0%} cached, {name}, round {round_index + 1}"
                cache.drop_page_cache(files)
                for path in files:
                    cache.warm_fraction(path, fraction, PAGE_BYTES, WARM_SEED)
                cached.append(cached_share(files))
                value, graph, other = run_once(engine, depth, label)
                values[name].append(value)
                for measure, measured in (other or {}).items():
                    others[name].setdefault(measure, []).append(measured)
                if graph:
                    statistics[name].append(graph)
                report.step(label)
        per_fraction[f"{fraction:g}"] = fraction_summary(values, statistics, others, cached,
                                                         configurations)
    return per_fraction


def sweep_bptree(bptree, fractions, configurations, rounds, work_dir, report):
    """Measures the scan at each fraction; returns the workload's results
    (per_fraction as sweep() gives it, the values being scan times in ms)."""
    stats_file = Path(work_dir) / "stats.json"
    messages = {}
    tree = bptree.prepare_scan_tree("insert", DEGREE, stats_file, messages)
    low, high = bptree.scan_ranges(1, 2024)[0]
    reference = None

    def scan(engine, depth, label):
        nonlocal reference
        stdout, graphs, _ = bptree.run_tool(engine, depth, ["scan", tree, low, high], stats_file,
                                            messages, label)
        words = bptree.parse_words(stdout)
        outcome = (words.get("count"), words.get("checksum"))
        if reference is None:
            reference = outcome
        if outcome != reference or "elapsed_ms" not in words:
            raise bptree.MismatchError(f"{label}: printed {stdout!r}, expected count "
                                       f"{reference[0]} checksum {reference[1]}")
        return float(words["elapsed_ms"]), (graphs or {}).get(bptree.SCAN_GRAPH), None

    per_fraction = sweep("bptree scan", [tree], fractions, configurations, rounds, report, scan)
    return {"records": int(reference[0]), "tree": str(tree.relative_to(ROOT)),
            "unit": "ms, time of the scan", "per_fraction": per_fraction, "messages": messages}


def sweep_leveldb(leveldb, fractions, configurations, rounds, records, operations, compactions,
                  report):
    """Measures YCSB-C Gets at each fraction, with LevelDB's `compactions`
    ("own" or "held"); returns the workload's results (per_fraction as
    sweep() gives it, the values being average Get latencies in µs, the
    other measure "p50" the Gets' median latency)."""
    images = leveldb.images
    image = images.ensure_image(1024, records)
    trace = images.ensure_trace("run", records, "c", images.operations_for(1024), 1024)
    files = [path for path in images.image_files(image) if path.stat().st_size > 0]
    # The default image (fill_cache on).
    _, fill_cache = leveldb.IMAGE_MODES["default"]
    point = {"threads": 1, "compactions": compactions, "fill_cache": fill_cache}

    def gets(engine, depth, label):
        with tempfile.TemporaryDirectory(prefix="cached-fraction-leveldb-") as scratch:
            stats_file = Path(scratch) / "stats.json"
            driver = leveldb.PLAIN_DRIVER if engine is None else leveldb.FOREACTOR_DRIVER
            completed = leveldb.run_driver(
                leveldb.driver_command(driver, point, trace, image, operations),
                runs.foreactor_environment(engine, depth, stats_file))
            summary = leveldb.driver_summary(completed, label)
            graph = runs.read_graph_statistics(stats_file, leveldb.GRAPH) if engine else None
            latency = summary["latency_us"]
            return latency["average"], graph, {"p50": latency["p50"]}

    try:
        per_fraction = sweep("leveldb Get", files, fractions, configurations, rounds, report, gets)
    finally:
        shutil.rmtree(leveldb.RUN_DIR, ignore_errors=True)
    return {"records": records, "operations": operations, "image": str(image.relative_to(ROOT)),
            "compactions": compactions, "unit": "µs, average Get latency",
            "per_fraction": per_fraction}


def cached_share(files):
    """The share of the pages of `files` in the page cache (None without fincore)."""
    shares = [(cache.cached_fraction(path), path.stat().st_size) for path in files]
    if any(share is None for share, _ in shares):
        return None
    total = sum(size for _, size in shares)
    return sum(share * size for share, size in shares) / total if total else None


def fraction_summary(values, statistics, others, cached, configurations):
    """One fraction's entry: per configuration its values (one per run, lower
    is faster), their median, its speed relative to plain (plain's median /
    its median), the mean automatic depth and summed counters, and per other
    measure (`others`: configuration -> measure -> values) its values,
    median and time ratio to plain; and the share of the data found cached
    before the runs."""
    plain = runs.median_or_none(values["plain"])
    summary = {}
    for name, _, _ in configurations:
        median = runs.median_or_none(values[name])
        stats = statistics[name]
        windows = sum(s.get("depth_windows", 0) for s in stats)
        summary[name] = {
            "values": values[name], "median": median,
            "speed_vs_plain": runs.ratio_or_none(plain, median),
            "time_ratio": ratios.paired_ratio(values["plain"], values[name]),
            "mean_auto_depth": (sum(s.get("depth_window_sum", 0) for s in stats) / windows
                                if windows else None),
            "statistics": runs.sum_counters(stats, STAT_NAMES) if stats else None,
            "other_measures": {
                measure: {"values": measured, "median": runs.median_or_none(measured),
                          "time_ratio": ratios.paired_ratio(others["plain"].get(measure, []),
                                                            measured)}
                for measure, measured in others[name].items()},
        }
    measured = [value for value in cached if value is not None]
    return {"measured_cached_fraction": sum(measured) / len(measured) if measured else None,
            "configurations": summary}


def paired_speed(result):
    """A configuration's speed relative to plain as (speed, low, high): the
    inverse of the median of its paired rounds' time ratios, with the 95%
    interval inverted too (low and high None below three pairs); without a
    paired ratio, plain's median over its median, with no interval.  The
    median of the pairs, not the ratio of the two medians: its interval is
    the one printed beside it, and on a noisy point the two can differ by
    more than that interval's width."""
    time_ratio = result.get("time_ratio") or {}
    if time_ratio.get("ratio"):
        low, high = time_ratio.get("low"), time_ratio.get("high")
        return (1 / time_ratio["ratio"], 1 / high if high else None, 1 / low if low else None)
    return (result.get("speed_vs_plain"), None, None)


def print_table(title, unit, per_fraction, configurations):
    names = [name for name, _, _ in configurations]
    print(f"\n{title} (median of runs, {unit}; speed vs plain = the inverse of the median "
          "of the paired rounds' time ratios [its 95% interval])\n")
    print("| cached (asked / measured) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for fraction, entry in per_fraction.items():
        measured = entry["measured_cached_fraction"]
        cells = []
        for name in names:
            result = entry["configurations"][name]
            cell = f"{result['median']:.1f}"
            speed, low, high = paired_speed(result)
            if name != "plain" and speed is not None:
                cell += f" ({speed:.2f}x"
                if low is not None and high is not None:
                    cell += f" [{low:.2f}, {high:.2f}]"
                cell += ")"
            if result.get("mean_auto_depth") is not None:
                cell += f", depth ~{result['mean_auto_depth']:.0f}"
            cells.append(cell)
        shown = f"{float(fraction):.0%} / " + ("?" if measured is None else f"{measured:.0%}")
        print(f"| {shown} | " + " | ".join(cells) + " |")
        for measure in entry["configurations"]["plain"].get("other_measures", {}):
            cells = []
            for name in names:
                other = entry["configurations"][name]["other_measures"][measure]
                cell = f"{other['median']:.1f}"
                if name != "plain" and (other.get("time_ratio") or {}).get("ratio") is not None:
                    cell += f" (time {ratios.format_ratio(other['time_ratio'])})"
                cells.append(cell)
            print(f"| {float(fraction):.0%}, {measure} | " + " | ".join(cells) + " |")


def plot(title, per_fraction, configurations, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fractions = [float(fraction) for fraction in per_fraction]
    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    for name, _, _ in configurations:
        speeds = [paired_speed(per_fraction[key]["configurations"][name])[0] or 0
                  for key in per_fraction]
        axes.plot([100 * f for f in fractions], speeds, marker="o", label=name)
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_xlabel("share of the file in the page cache before the run (%)")
    axes.set_ylabel("speed relative to plain (median of paired rounds)")
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def main():
    arguments = parse_arguments()
    fractions = arguments.fractions or (QUICK_FRACTIONS if arguments.quick else FULL_FRACTIONS)
    rounds = arguments.rounds or (QUICK_ROUNDS if arguments.quick else FULL_ROUNDS)
    suffix = "-quick" if arguments.quick else ""
    plans = {}  # workload -> (module, configurations)
    if "bptree" in arguments.workloads:
        bptree = load_bench("bptree")
        for tool in (bptree.PLAIN_TOOL, bptree.FOREACTOR_TOOL):
            if not tool.exists():
                sys.exit(f"bench/cached_fraction/run.py: {tool} not found: build first "
                         "(./run build)")
        plans["bptree"] = (bptree, QUICK_CONFIGURATIONS if arguments.quick else FULL_CONFIGURATIONS)
    if "leveldb" in arguments.workloads:
        leveldb = load_bench("leveldb")
        leveldb.build_drivers()
        plans["leveldb"] = (leveldb, LEVELDB_QUICK_CONFIGURATIONS if arguments.quick
                            else LEVELDB_CONFIGURATIONS)
    record = run_record.begin("cached_fraction", ROOT / "data", PAGE_BYTES, arguments, rounds,
                              FULL_ROUNDS, QUICK_ROUNDS)
    started = time.monotonic()
    report = progress.Progress(len(fractions) * rounds * sum(len(configurations)
                                                             for _, configurations in plans.values()))
    measured = {}
    try:
        if "bptree" in plans:
            module, configurations = plans["bptree"]
            with tempfile.TemporaryDirectory(prefix="foreactor-cached-fraction-") as work_dir:
                measured["bptree"] = sweep_bptree(module, fractions, configurations, rounds,
                                                  work_dir, report)
        if "leveldb" in plans:
            module, configurations = plans["leveldb"]
            records = arguments.leveldb_records or (
                module.QUICK_IMAGE_BYTES // (1024 + module.images.KEY_BYTES) if arguments.quick
                else module.images.records_for(1024))
            measured["leveldb"] = sweep_leveldb(module, fractions, configurations, rounds, records,
                                                arguments.leveldb_ops,
                                                arguments.leveldb_compactions, report)
    except (RuntimeError, cache.CacheError) as error:
        report.finish()
        print(f"\nFAILED, benchmark aborted: {error}", file=sys.stderr)
        return 1
    report.finish()
    titles = {
        "bptree": lambda r: (f"B+-tree scan (insert-built tree, degree {DEGREE}, "
                             f"{r['records']:,} records per scan)"),
        "leveldb": lambda r: (f"LevelDB YCSB-C Get (1 KiB values, {r['records']:,} records, "
                              f"{r['operations']:,} Gets per run, compactions "
                              f"{r['compactions']})"),
    }
    # Results of a subset of the workloads go to a file of their own, so that
    # a run of one workload keeps the other's results.
    subset = "" if set(arguments.workloads) == set(WORKLOADS) else "-" + "-".join(measured)
    output = (Path(arguments.output) if arguments.output
              else RESULTS_DIR / f"cached_fraction{suffix}{subset}.json")
    plot_paths = []
    for workload, result in measured.items():
        configurations = plans[workload][1]
        title = titles[workload](result)
        print_table(title, result["unit"], result["per_fraction"], configurations)
        plot_paths.append(plot(title, result["per_fraction"], configurations,
                               output.with_name(f"cached_fraction{suffix}-{workload}.png")))
    run_record.finish(record, [entry.get("time_ratio") for result in measured.values()
                               for fraction in result["per_fraction"].values()
                               for name, entry in fraction["configurations"].items()
                               if name != "plain"])
    data = {
        "benchmark": "cached_fraction", "quick": arguments.quick, "rounds": rounds,
        "fractions": list(fractions),
        "configurations": {workload: [{"name": n, "engine": e, "depth": d}
                                      for n, e, d in plans[workload][1]] for workload in plans},
        "method": ("per run: drop the whole page cache, read the chosen share of the data's 8 KiB "
                   "pages (random, seed 11, POSIX_FADV_RANDOM on the reading descriptor; for "
                   "LevelDB, of every file of the image), then one run (a scan; LevelDB: the Gets, no "
                   "memory limit); the cached share is measured with fincore"),
        "run": record,
        "elapsed_seconds": round(time.monotonic() - started, 1),
    }
    if "bptree" in measured:
        data["bptree_scan"] = measured["bptree"]
    if "leveldb" in measured:
        data["leveldb_get"] = measured["leveldb"]
    path = results.write_json(output, data)
    print(f"\nwritten: {path}, " + ", ".join(str(p) for p in plot_paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
