#!/usr/bin/env python3
"""LevelDB benchmark: YCSB Gets through leveldb::Version::Get, plain and with
foreactor, under a limited page cache.

Each measurement replays a YCSB run trace (real YCSB 0.17.0, see
bench/leveldb/images.py) with leveldb_driver against a fresh clone of a
~1 GiB image (table files hard-linked, so LevelDB's compactions during the
run never change the image), table files read with pread, block cache
8 MiB, no Bloom filter, no compression.  The driver checks every Get
(status and value); a mismatch aborts the benchmark.

Images (--images): `default`, as LevelDB's own compactions leave the load
(the common shape), and `level0`, the same with 12 level-0 tables above its
levels (the published system's setup; a state in which LevelDB stops writes
until it compacted).  Compactions (--compactions): `own`, LevelDB compacts
as it does by itself during the run; `held`, its background work is held
for the run (read-only traces only; bench/leveldb/images.py and
apps/leveldb/driver/held_compactions_env.h).  By default each image runs in
its own mode: default with its own compactions and fill_cache on (LevelDB's
defaults), level0 with compactions held and fill_cache off (the published
setup).  The tables per level of every image are printed before its runs.

Memory ratio R: the run's page cache is limited to R x the image's size
with a memory cgroup (bench/leveldb/memory.py), plus an allowance for the
driver's own memory (--allowance-mib).  Below 100% the image's pages are
evicted first (cold start: scripts/drop_caches.sh, or with --cold fadvise
only the image's files); at 100% every file of the image is read into the
cache first and no limit is set ("all cached").

Configurations, in every point, in an order that alternates from round to
round: plain (leveldb_driver, no plugin), and leveldb_driver_foreactor with
io_uring and with the thread pool at depths 4, 8, 16 and auto.  Reported per
configuration: medians over rounds of the average, p50 and p99 Get latency
and of the throughput, their ratios to plain, and foreactor's statistics
(issued early, started with readahead, consumed, wasted, mispredicted) summed over rounds.

--bound adds, per point, one plain run under `foreactor bound` (perf
uprobes on DBImpl::Get, the preads inside it): preads per Get, the share of
Get time spent in them, and the latency the Gets would have if each waited
only for its longest pread.  No depth can go far below that: it estimates
the floor of what the graph of Version::Get can reach on the point.  Only
the driver runs in the point's memory cgroup; the tool and perf run
outside it.  The tables show the bound beside each result, and the share
of the bound's gain each configuration realizes: (1 - ratio) / (1 - bound),
on the average.  With LevelDB's own compactions the database changes shape
during the run, and a faster run makes more of its Gets before the level-0
tables are merged away: those points also give each configuration's ratio
at plain's mix of level-0 shapes (level0_mix.py), the one to set beside the
bound, which is computed on plain's Gets.
Beside it, the bound of device reads only (--cached-below, default 15 us):
preads shorter than that were served from the page cache and keep their
time, only the others overlap.  It is no floor (on the level-0 image the
automatic depth's runs have come well below it).  Both bounds come from
one traced run: the device's speed at that moment moves them.

Sweeps (defaults in brackets: 1 KiB values, YCSB-C Zipfian 0.99, 1 client
thread, 10% memory):
  memory     ratio 10, 25, 50, 100 %
  value      value size 128 B, 1, 4, 16, 64 KiB
  threads    client threads 1, 2, 4, 8
  workload   YCSB A, B, C, D and C with uniform keys

Usage: run.py [--quick] [--sweeps memory,value,...] [--rounds N] [--ops N]
       (or: ./run bench leveldb [--quick])
       run.py --markdown RESULTS_JSON   (the tables of a past run)
--quick: small images (1 KiB values, 256 MiB; default and level0, each in
its own mode), YCSB-C, 10% and 100% memory, plain, io_uring 8, 16 and auto,
threads 16, 10,000 operations, 3 rounds.  Writes bench/results/leveldb[-quick].json and
bench/results/leveldb[-quick]-<sweep>.png.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tools"))

from bench.common import (cache, device_reference, progress, ratios, results,  # noqa: E402
                          run_record, runs)
from foreactor_cli.bound import describe_gain  # noqa: E402
import images  # noqa: E402
import level0_mix  # noqa: E402
import memory  # noqa: E402

PROGRAM_DIR = Path(os.environ.get("LEVELDB_BUILD_DIR", ROOT / "third_party" / "leveldb-build"))
PLAIN_DRIVER = PROGRAM_DIR / "leveldb_driver"
FOREACTOR_DRIVER = PROGRAM_DIR / "leveldb_driver_foreactor"
# The clone a run works on; one per benchmark process, removed at the end.
RUN_DIR = ROOT / "data" / "leveldb" / f"run-{os.getpid()}"
RESULTS_DIR = ROOT / "bench" / "results"
GRAPH = "leveldb_get"
STAT_NAMES = ("scopes", "intercepted", "issued_early", "reads_started", "reads_started_in_plans",
              "found_present", "consumed", "wasted",
              "mispredicted", "synchronous", "served_from_cache", "gate_trials", "gate_trials_won",
              "gate_retries", "gate_plain_units", "gate_scope_units")
METRICS = ("average", "p50", "p99", "throughput")
# A driver run this long is a hang (the longest run, a full trace of 64 KiB
# values under `foreactor bound`, takes a few minutes).
DRIVER_TIMEOUT_SECONDS = 1800
# The bound of device reads only counts a pread shorter than this as served
# from the page cache: a cached block of up to 16 KiB is copied in a few
# microseconds here, a device read at queue depth 1 takes 35-45.
CACHED_BELOW_US = 15.0

ALL_SWEEPS = {
    "memory": [{"ratio": ratio} for ratio in (10, 25, 50, 100)],
    "value": [{"value_size": size} for size in images.VALUE_SIZES],
    "threads": [{"threads": threads} for threads in (1, 2, 4, 8)],
    "workload": [{"workload": workload} for workload in ("a", "b", "c", "d", "c-uniform")],
}
DEFAULT_POINT = {"ratio": 10, "value_size": 1024, "threads": 1, "workload": "c"}
# Each image's own run mode: (compactions, fill_cache).
IMAGE_MODES = {"default": ("own", True), "level0": ("held", False)}
COMPACTIONS = ("own", "held")
READ_ONLY_WORKLOADS = ("c", "c-uniform")
QUICK_IMAGE_BYTES = 256 << 20
DEFAULT_ROUNDS = 3
# LevelDB's table block size (4 KiB, uncompressed): the request size of the
# device reference.
BLOCK_BYTES = 4096


class MismatchError(RuntimeError):
    """The driver found a Get whose status or value was wrong."""


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few minutes (see above)")
    parser.add_argument("--sweeps", default=",".join(ALL_SWEEPS),
                        help="comma-separated sweeps to run (default: all)")
    parser.add_argument("--rounds", type=int, help="rounds per configuration (3)")
    parser.add_argument("--ops", type=int,
                        help="operations per run (default: the trace's, about 200 MiB of "
                             "values; quick 10,000)")
    parser.add_argument("--depths", default="4,8,16,auto",
                        help="foreactor depths, numbers or auto (4,8,16,auto); exactN is depth N "
                             "exact (FOREACTOR_EXACT_DEPTH=1: every Get planned, whatever it "
                             "costs), to see what the graph does without the runtime's gate")
    parser.add_argument("--images", default=",".join(images.KINDS),
                        help="comma-separated images: default, level0 (both)")
    parser.add_argument("--compactions", default="image",
                        help="image (each image's own mode), own, held, or own,held")
    parser.add_argument("--fill-cache", choices=("image", "on", "off"), default="image",
                        help="ReadOptions::fill_cache of the Gets: image (on for default, off "
                             "for level0), on, off")
    parser.add_argument("--records", type=int,
                        help="records per image instead of about 1 GiB (for trying things out)")
    parser.add_argument("--allowance-mib", type=int,
                        help="memory allowed beyond the page cache share, for the driver's own "
                             "memory (default: 32 MiB + 200 B per operation, from the driver's "
                             "measured peak: 23 MiB at 1,000 Gets, 61 MiB at 204,800)")
    parser.add_argument("--cold", choices=("drop_caches", "fadvise"), default="drop_caches",
                        help="how to evict before a cold run: scripts/drop_caches.sh (whole "
                             "page cache as root) or posix_fadvise on the image's files only")
    parser.add_argument("--bound", action="store_true",
                        help="per point, one more plain run under `foreactor bound` (perf, "
                             "root): preads per Get and the Get latency if each Get waited only "
                             "for its longest pread, the floor of what any depth can reach")
    parser.add_argument("--cached-below", metavar="US", type=float, default=CACHED_BELOW_US,
                        help="with --bound: preads shorter than US microseconds count as "
                             "served from the page cache in the bound of device reads only "
                             f"(default {CACHED_BELOW_US:g})")
    parser.add_argument("--ratios", help="memory ratios of the memory sweep, in percent "
                                         "(default 10,25,50,100)")
    parser.add_argument("--values", help="value sizes of the value sweep, in bytes (default "
                                         f"{','.join(str(size) for size in images.VALUE_SIZES)})")
    parser.add_argument("--output", help="results file (default bench/results/leveldb[-quick].json)")
    parser.add_argument("--markdown", metavar="RESULTS_JSON",
                        help="print the tables of a results file as Markdown, run nothing")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    if arguments.rounds is None:
        arguments.rounds = DEFAULT_ROUNDS
    try:
        arguments.depths = [runs.parse_depth(depth) for depth in arguments.depths.split(",")
                            if depth.strip()]
    except ValueError:
        parser.error("--depths: comma-separated numbers, exactN or auto, such as 4,8,exact8,auto")
    if arguments.ratios:
        try:
            ratios_given = [int(ratio) for ratio in arguments.ratios.split(",") if ratio]
        except ValueError:
            ratios_given = []
        if not ratios_given or any(not 0 < ratio <= 100 for ratio in ratios_given):
            parser.error("--ratios: comma-separated percentages in (0, 100], such as 10,25")
        ALL_SWEEPS["memory"] = [{"ratio": ratio} for ratio in ratios_given]
    if arguments.values:
        try:
            sizes_given = [int(size) for size in arguments.values.split(",") if size]
        except ValueError:
            sizes_given = []
        if not sizes_given or any(size not in images.VALUE_SIZES for size in sizes_given):
            parser.error(f"--values: comma-separated sizes out of "
                         f"{', '.join(str(size) for size in images.VALUE_SIZES)}")
        ALL_SWEEPS["value"] = [{"value_size": size} for size in sizes_given]
    arguments.images = [kind for kind in arguments.images.split(",") if kind]
    if not arguments.images or any(kind not in images.KINDS for kind in arguments.images):
        parser.error(f"--images: comma-separated {', '.join(images.KINDS)}")
    arguments.compactions = [mode for mode in arguments.compactions.split(",") if mode]
    if arguments.compactions != ["image"] and (
            not arguments.compactions or any(m not in COMPACTIONS for m in arguments.compactions)):
        parser.error("--compactions: image, own, held or own,held")
    arguments.sweeps = [sweep for sweep in arguments.sweeps.split(",") if sweep]
    for sweep in arguments.sweeps:
        if sweep not in ALL_SWEEPS:
            parser.error(f"unknown sweep {sweep} (known: {', '.join(ALL_SWEEPS)})")
    if arguments.quick:
        arguments.sweeps = ["memory"]
        if arguments.ops is None:
            arguments.ops = 10000
        if arguments.records is None:
            arguments.records = QUICK_IMAGE_BYTES // (1024 + images.KEY_BYTES)
    return arguments


def say(message):
    print(message, file=sys.stderr, flush=True)


def configurations(arguments):
    """(name, engine, depth); engine None is the plain driver."""
    if arguments.quick:
        return [("plain", None, None), ("io_uring 8", "io_uring", 8),
                ("io_uring 16", "io_uring", 16), ("io_uring auto", "io_uring", "auto"),
                ("threads 16", "threads", 16)]
    return [("plain", None, None)] + [(f"{engine} {runs.depth_name(depth)}", engine, depth)
                                       for engine in ("io_uring", "threads")
                                       for depth in arguments.depths]


def run_modes(arguments):
    """(image, compactions, fill_cache) triples to measure every point in."""
    modes = []
    for kind in arguments.images:
        own_compactions, own_fill_cache = IMAGE_MODES[kind]
        fill_cache = {"image": own_fill_cache, "on": True, "off": False}[arguments.fill_cache]
        compactions = [own_compactions] if arguments.compactions == ["image"] else arguments.compactions
        modes += [(kind, mode, fill_cache) for mode in compactions]
    return modes


def points(arguments):
    """(sweep, point) pairs; a point shared by two sweeps is measured once per
    sweep.  Held compactions run read-only workloads only: the others are
    left out (said on stderr)."""
    changes = ([("memory", {"ratio": ratio}) for ratio in (10, 100)] if arguments.quick else
               [(sweep, change) for sweep in arguments.sweeps for change in ALL_SWEEPS[sweep]])
    result = []
    for sweep, change in changes:
        for kind, compactions, fill_cache in run_modes(arguments):
            point = dict(DEFAULT_POINT, image=kind, compactions=compactions,
                         fill_cache=fill_cache, **change)
            if compactions == "held" and point["workload"] not in READ_ONLY_WORKLOADS:
                say(f"run.py: {point_label(point)} left out: held compactions stop writes")
                continue
            result.append((sweep, point))
    return result


def prepare(point, arguments):
    """Image and run trace of a point (built when missing), and the number of
    operations a run replays (a prefix of the trace with --ops)."""
    value_size = point["value_size"]
    records = arguments.records or images.records_for(value_size)
    image = images.ensure_image(value_size, records, kind=point["image"])
    if str(image) not in DESCRIBED_IMAGES:
        DESCRIBED_IMAGES.add(str(image))
        say(f"run.py: image {images.describe(image)}")
    operations = images.operations_for(value_size)
    trace = images.ensure_trace("run", records, point["workload"], operations, value_size)
    if arguments.ops:
        operations = min(operations, arguments.ops)
    return image, trace, operations


DESCRIBED_IMAGES = set()


def allowance_bytes(arguments, operations):
    """Memory a limited run may use beyond its share of page cache."""
    if arguments.allowance_mib is not None:
        return arguments.allowance_mib << 20
    return (32 << 20) + 200 * operations


def measure(point, configuration, image, trace, operations, arguments, cold_reports):
    """One run of one configuration; returns (driver summary, statistics or None)."""
    _, engine, depth = configuration
    with tempfile.TemporaryDirectory(prefix="leveldb-bench-") as scratch:
        stats_file = Path(scratch) / "stats.json"
        environment = runs.foreactor_environment(engine, depth, stats_file)
        driver = PLAIN_DRIVER if engine is None else FOREACTOR_DRIVER
        completed, memory_report = run_at_point(point, driver_command(driver, point, trace,
                                                                       image, operations),
                                                environment, image, operations, arguments,
                                                cold_reports, around=None)
        summary = driver_summary(completed, f"{point}, {configuration[0]}")
        summary["memory"] = memory_report
        summary["driver_max_rss_kib"] = completed.max_rss_kib
        statistics = runs.read_graph_statistics(stats_file, GRAPH) if engine else None
    return summary, statistics


def driver_summary(completed, what):
    """The summary (JSON) a finished driver run printed.  Raises MismatchError
    when the driver found a wrong Get (exit status 1), RuntimeError when it
    failed otherwise; `what` names the run in the message."""
    if completed.returncode == 1:
        raise MismatchError(f"{what}: {completed.stderr[-2000:]}")
    if completed.returncode != 0:
        raise RuntimeError(f"leveldb_driver failed ({completed.returncode}) at {what}:\n"
                           f"{completed.stderr[-2000:]}")
    return json.loads(completed.stdout)


def measure_bound(point, image, trace, operations, arguments, cold_reports):
    """One more plain run of a point under `foreactor bound`: the Gets' preads
    and what the Gets would take if each waited only for its longest one.
    Returns the tool's figures, or None (with the reason said) when perf
    cannot be used here."""
    with tempfile.TemporaryDirectory(prefix="leveldb-bound-") as scratch:
        figures_file = Path(scratch) / "bound.json"
        completed, _ = run_at_point(point, driver_command(PLAIN_DRIVER, point, trace, image,
                                                          operations),
                                    runs.foreactor_environment(None, None, None), image,
                                    operations, arguments, cold_reports,
                                    around=lambda command: bound_command(
                                        command, figures_file, arguments.device_gain,
                                        arguments.cached_below))
        if completed.returncode != 0 or not figures_file.exists():
            say(f"run.py: no bound at {point_label(point)} (foreactor bound exited "
                f"{completed.returncode}): {completed.stderr.strip()[-300:]}")
            return None
        return json.loads(figures_file.read_text())


def driver_command(driver, point, trace, image, operations):
    command = [driver, "--db", RUN_DIR, "--clone-from", image, "--run", trace,
               "--ops", operations, "--threads", point["threads"],
               "--compactions", point["compactions"]]
    # With LevelDB's own compactions, the runs are also compared at plain's
    # mix of level-0 shapes (level0_mix.py).
    return (command + ([] if point["fill_cache"] else ["--no-fill-cache"])
            + (["--latency-by-level0"] if point["compactions"] == "own" else []))


def bound_command(command, figures_file, device_gain, cached_below_us):
    """`command` (the plain driver's, possibly behind the memory cgroup's
    wrapper) run under `foreactor bound`, the figures written to
    `figures_file`; with the device's gain per queue depth ({depth: gain} as
    device_reference.gain_curve gives it; None: not measured) also the
    device-aware bound, each Get's preads at the gain of as many in flight,
    and the bound of device reads only, preads shorter than
    `cached_below_us` counted as cached."""
    gain = [] if device_gain is None else [
        "--device-gain", ",".join(f"{depth}:{value:.3f}" for depth, value in
                                  sorted(device_gain.items()))]
    return [sys.executable, ROOT / "tools" / "foreactor", "bound", "--binary", PLAIN_DRIVER,
            "--function", "leveldb::DBImpl::Get", "--calls", "pread64",
            "--json", figures_file, "--cached-below", f"{cached_below_us:g}"] + gain + [
                "--"] + list(command)


def run_at_point(point, command, environment, image, operations, arguments, cold_reports,
                 around):
    """Runs the driver `command` with the page cache of `point`: below 100%
    the image evicted first and the driver alone inside a memory cgroup of
    the point's ratio; at 100% the image read into the cache first and no
    limit.  `around`, when not None, makes the command that runs the driver
    (its argument) inside another program (foreactor bound), which stays
    outside the cgroup.  Returns (Completed, a description of the memory
    limit)."""
    around = around or (lambda wrapped: wrapped)
    db_bytes = images.image_summary(image)["bytes"]
    files = images.image_files(image)
    if point["ratio"] < 100:
        if arguments.cold == "fadvise":
            cold_reports.add(evict_files(files))
        else:
            cold_reports.add(cache.drop_page_cache(files))
        limit_bytes = point["ratio"] * db_bytes // 100 + allowance_bytes(arguments, operations)
        with memory.MemoryLimit(f"foreactor_leveldb_{os.getpid()}", limit_bytes) as limit:
            completed = run_driver(around(limit.wrap_command(command)), environment)
            return completed, limit.describe()
    cache.warm_files(files)
    return run_driver(around(command), environment), {"kind": "unlimited (all cached)"}


class Completed:
    """What run_driver() saw of one driver run."""

    def __init__(self, returncode, stdout, stderr, max_rss_kib):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        self.max_rss_kib = max_rss_kib


def run_driver(command, environment):
    """Runs the driver; returns its status, output and peak resident memory
    (the anonymous memory the allowance must cover, plus mapped code).  A
    run past DRIVER_TIMEOUT_SECONDS is a hang: what its threads were doing
    is printed, it is killed and RuntimeError is raised."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([str(c) for c in command], env=environment, stdout=out,
                                   stderr=err, text=True, start_new_session=True)
        try:
            returncode, usage = runs.wait_with_timeout(process, DRIVER_TIMEOUT_SECONDS)
        except runs.RunTimedOut as timed_out:
            timed_out.print_report("leveldb_driver")
            raise RuntimeError(f"leveldb_driver timed out after {timed_out.seconds} s: "
                               f"{' '.join(str(c) for c in command)}") from None
        out.seek(0)
        err.seek(0)
        return Completed(returncode, out.read(), err.read(), usage.ru_maxrss)


def evict_files(files):
    """Evicts `files` from the page cache with posix_fadvise(POSIX_FADV_DONTNEED)
    (they are never written while cached: image files are read-only); returns
    a report in drop_caches.sh's words."""
    for path in files:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)
    return "fadvise: evicted the image's files"


def summarize(samples, statistics):
    """Medians of the metrics over rounds, summed statistics, and per run the
    share of its Gets that ran in a scope (FOREACTOR_STATS' scopes: one per
    Get the plugin planned and the scope gate let run with a scope)."""
    medians = {
        "average": runs.median_or_none([s["latency_us"]["average"] for s in samples]),
        "p50": runs.median_or_none([s["latency_us"]["p50"] for s in samples]),
        "p99": runs.median_or_none([s["latency_us"]["p99"] for s in samples]),
        "throughput": runs.median_or_none([s["throughput_ops"] for s in samples]),
    }
    scoped_share = [run_statistics["scopes"] / sample["gets"]
                    for sample, run_statistics in zip(samples, statistics)
                    if run_statistics and sample.get("gets")]
    return {"median": medians, "samples": samples,
            "statistics": runs.sum_counters(statistics, STAT_NAMES),
            "scoped_share": scoped_share or None}


def scoped_share_text(config):
    """A configuration's share of Gets run in a scope, as the median over its
    runs and the lowest run's (a run the gate kept mostly plain shows there);
    empty for plain and for results files from before the share was kept."""
    shares = config.get("scoped_share")
    if not shares:
        return ""
    return f"{100 * runs.median_or_none(shares):.0f}% ({100 * min(shares):.0f}%)"


def run_point(sweep, point, arguments, tick, cold_reports):
    image, trace, operations = prepare(point, arguments)
    configs = configurations(arguments)
    samples = {name: [] for name, _, _ in configs}
    statistics = {name: [] for name, _, _ in configs}
    for round_index in range(arguments.rounds):
        for configuration in runs.alternating_order(configs, round_index):
            summary, stats = measure(point, configuration, image, trace, operations, arguments,
                                     cold_reports)
            samples[configuration[0]].append(summary)
            statistics[configuration[0]].append(stats)
            tick(f"{sweep} {point_label(point)} {configuration[0]}: "
                 f"avg {summary['latency_us']['average']:.0f} us")
    result = {"sweep": sweep, "point": point, "image": str(image),
              "image_bytes": images.image_summary(image)["bytes"],
              "files_per_level": images.image_summary(image)["files_per_level"],
              "trace": str(trace), "operations": operations, "configurations": {}}
    for name, _, _ in configs:
        result["configurations"][name] = summarize(samples[name], statistics[name])
    if arguments.bound:
        result["bound"] = measure_bound(point, image, trace, operations, arguments, cold_reports)
        if result["bound"] is not None:
            say(f"{sweep} {point_label(point)}: {bound_line(result['bound'])}")
    plain = result["configurations"]["plain"]["median"]
    for name, _, _ in configs:
        entry = result["configurations"][name]
        entry["ratio_to_plain"] = {metric: runs.ratio_or_none(entry["median"][metric], plain[metric])
                                   for metric in METRICS}
        # Average Get latency over plain's, paired by round.
        entry["time_ratio"] = ratios.paired_ratio(
            [s["latency_us"]["average"] for s in samples["plain"]],
            [s["latency_us"]["average"] for s in samples[name]])
        if point["compactions"] == "own":
            entry["time_ratio_at_plain_level0_mix"] = ratios.paired_ratio(
                *level0_mix.paired_totals(samples["plain"], samples[name]))
    return result


def point_label(point):
    mode = (f" {point.get('image', 'default')} image, compactions {point.get('compactions', 'own')}"
            f", fill_cache {'on' if point.get('fill_cache', True) else 'off'}")
    return (f"{point['workload']} v{point['value_size']} {point['ratio']}% "
            f"t{point['threads']}{mode}")


def bound_line(figures):
    """One line of `foreactor bound` figures (see measure_bound)."""
    device = ""
    if "device_ratio" in figures:
        device = (f"; on this device (at most {describe_gain(figures['device_gain'])} the "
                  f"reads of one at a time): avg {figures['device_ratio']['average']:.2f}x, p99 "
                  f"{figures['device_ratio']['p99']:.2f}x")
    device_reads = ""
    if "memory_ratio" in figures:
        device_reads = (f"; device reads only ({figures['memory_calls_share']:.1%} of preads "
                        f"under {figures['cached_below_us']:g} us, from memory): avg "
                        f"{figures['memory_ratio']['average']:.2f}x, p99 "
                        f"{figures['memory_ratio']['p99']:.2f}x")
    return (f"bound (each Get waits only for its longest pread): avg "
            f"{figures['ratio']['average']:.2f}x, p99 {figures['ratio']['p99']:.2f}x of plain"
            f"{device}{device_reads}; {figures['calls_per_invocation']:.2f} preads per Get "
            f"({figures['share_in_calls']:.0%} of Get time in pread)")


def bound_share(entry, config, key="time_ratio"):
    """The share of the gain `foreactor bound` allows (average latency) that a
    configuration realizes at a point, as text ('-' without a bound), by its
    paired ratio `key`."""
    bound = ((entry.get("bound") or {}).get("ratio") or {}).get("average")
    return ratios.format_share(ratios.share_realized(
        (config.get(key) or {}).get("ratio"), bound))


def level0_mix_lines(entry):
    """Lines of the ratios at plain's mix of level-0 shapes of a point run
    with LevelDB's own compactions (none for other points)."""
    lines = []
    for name, config in entry["configurations"].items():
        mix = config.get("time_ratio_at_plain_level0_mix")
        if name == "plain" or not mix or mix.get("ratio") is None:
            continue
        lines.append(f"- {point_label(entry['point'])}, {name}: at plain's mix of level-0 shapes "
                     f"{ratios.format_ratio(mix)}, share of bound's gain "
                     f"{bound_share(entry, config, 'time_ratio_at_plain_level0_mix')}")
    return lines


def started_text(stats):
    """The cold reads started with readahead(2) and left to LevelDB's pread,
    by the scope's peek head or while the plugin planned the Get (counted
    apart since the plugin starts them; records before that lack the key)."""
    if "reads_started" not in stats:
        return ""
    return str(stats["reads_started"] + stats.get("reads_started_in_plans", 0))


def markdown(data):
    """Tables of a results dict, one per sweep, and the bounds measured."""
    lines = []
    for sweep in dict.fromkeys(entry["sweep"] for entry in data["points"]):
        lines += [f"### {sweep}", "",
                  "| point | configuration | avg µs | p50 µs | p99 µs | ops/s | avg x | "
                  "paired avg x [95%] | p99 x | bound avg x | bound p99 x | "
                  "bound, device reads only: avg x | "
                  "share of bound's gain | early | started | consumed | wasted | mispredicted | "
                  "Gets in a scope: median (lowest run) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for entry in data["points"]:
            if entry["sweep"] != sweep:
                continue
            bound = entry.get("bound")
            for name, config in entry["configurations"].items():
                median, ratio = config["median"], config["ratio_to_plain"]
                stats = config["statistics"] or {}
                bound_columns = "| | | - |"
                if bound:
                    device_reads = (f"{bound['memory_ratio']['average']:.2f}"
                                    if "memory_ratio" in bound else "")
                    bound_columns = (f"{bound['ratio']['average']:.2f} | {bound['ratio']['p99']:.2f} | "
                                     f"{device_reads} | "
                                     f"{bound_share(entry, config) if name != 'plain' else '-'} |")
                lines.append(
                    f"| {point_label(entry['point'])} | {name} | {median['average']:.0f} | "
                    f"{median['p50']:.0f} | {median['p99']:.0f} | {median['throughput']:.0f} | "
                    f"{ratio['average']:.2f} | {ratios.format_ratio(config.get('time_ratio'))} | "
                    f"{ratio['p99']:.2f} | {bound_columns} "
                    f"{stats.get('issued_early', '')} | {started_text(stats)} | "
                    f"{stats.get('consumed', '')} | "
                    f"{stats.get('wasted', '')} | {stats.get('mispredicted', '')} | "
                    f"{scoped_share_text(config)} |")
        lines.append("")
        for entry in data["points"]:
            if entry["sweep"] == sweep and entry.get("bound"):
                lines.append(f"- {point_label(entry['point'])}: {bound_line(entry['bound'])}")
        for entry in data["points"]:
            if entry["sweep"] == sweep:
                lines += level0_mix_lines(entry)
        lines.append("")
    return "\n".join(lines)


def run_mode_label(point):
    """The image and run mode of a point, short (for legends)."""
    return (f"{point.get('image', 'default')}/{point.get('compactions', 'own')}/"
            f"fill {'on' if point.get('fill_cache', True) else 'off'}")


def plot(data, output_prefix):
    """One PNG per sweep: average and p99 latency relative to plain."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("matplotlib missing: no plots")
        return []
    written = []
    key_of = {"memory": "ratio", "value": "value_size", "threads": "threads", "workload": "workload"}
    for sweep in dict.fromkeys(entry["sweep"] for entry in data["points"]):
        entries = [entry for entry in data["points"] if entry["sweep"] == sweep]
        modes = list(dict.fromkeys(run_mode_label(entry["point"]) for entry in entries))
        names = [name for name in entries[0]["configurations"] if name != "plain"]
        figure, axes = plt.subplots(1, 2, figsize=(11, 4))
        for axis, metric in zip(axes, ("average", "p99")):
            for mode in modes:
                of_mode = [entry for entry in entries if run_mode_label(entry["point"]) == mode]
                labels = [str(entry["point"][key_of[sweep]]) for entry in of_mode]
                for name in names:
                    values = [entry["configurations"][name]["ratio_to_plain"][metric] or 0
                              for entry in of_mode]
                    axis.plot(labels, values, marker="o",
                              label=name if len(modes) == 1 else f"{mode}: {name}")
            axis.axhline(1.0, color="black", linewidth=0.8)
            axis.set_title(f"{metric} Get latency, foreactor / plain")
            axis.set_xlabel(key_of[sweep])
            axis.set_ylim(bottom=0)
        axes[0].legend(fontsize=8)
        figure.suptitle(f"LevelDB YCSB, sweep over {sweep}")
        figure.tight_layout()
        path = Path(f"{output_prefix}-{sweep}.png")
        figure.savefig(path, dpi=100)
        plt.close(figure)
        written.append(path)
    return written


def build_drivers():
    """Builds LevelDB and both drivers when missing or stale (exits when the
    foreactor driver cannot be built)."""
    subprocess.run(["bash", str(ROOT / "apps" / "leveldb" / "build.sh"),
                    "leveldb_driver", "leveldb_driver_foreactor"],
                   check=True, env={**os.environ, "FOREACTOR_BUILD_DIR": str(BUILD_DIR)})
    if not FOREACTOR_DRIVER.exists():
        sys.exit("run.py: leveldb_driver_foreactor not built (no plugin in apps/leveldb/plugin/)")


def main():
    arguments = parse_arguments()
    if arguments.markdown:
        print(markdown(json.loads(Path(arguments.markdown).read_text())))
        return
    build_drivers()
    record = run_record.begin("leveldb", RUN_DIR.parent, BLOCK_BYTES, arguments,
                              arguments.rounds, DEFAULT_ROUNDS, DEFAULT_ROUNDS)
    # The device's throughput gain per queue depth over depth 1, for the
    # device-aware bound (None when the reference was not measured).
    arguments.device_gain = device_reference.gain_curve(record.get("device_reference"))
    if memory.available() == "none":
        say("run.py: no memory cgroup can be made here: runs below 100% are NOT limited")
    plan = points(arguments)
    total = len(plan) * arguments.rounds * len(configurations(arguments))
    meter = progress.Progress(total)
    cold_reports = set()
    started = time.time()
    data = {"benchmark": "leveldb", "quick": arguments.quick, "run": record,
            "settings": {"rounds": arguments.rounds, "ops": arguments.ops,
                         "records": arguments.records, "allowance_mib": arguments.allowance_mib,
                         "cold": arguments.cold, "memory_cgroup": memory.available(),
                         "images": arguments.images, "compactions": arguments.compactions,
                         "fill_cache": arguments.fill_cache,
                         "block_cache_mib": 8, "bloom_filter": False, "compression": "none"},
            "points": []}
    try:
        for sweep, point in plan:
            data["points"].append(run_point(sweep, point, arguments, meter.step, cold_reports))
    finally:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
    meter.finish()
    data["cache_drop"] = sorted(cache.describe_cache_drop(report) for report in cold_reports)
    data["seconds"] = time.time() - started
    name = "leveldb-quick" if arguments.quick else "leveldb"
    output = Path(arguments.output) if arguments.output else RESULTS_DIR / f"{name}.json"
    print(markdown(data))
    run_record.finish(record, [config.get("time_ratio") for entry in data["points"]
                               for name, config in entry["configurations"].items()
                               if name != "plain"])
    results.write_json(output, data)
    plots = plot(data, output.with_suffix(""))
    say(f"run.py: results in {output}; plots: {', '.join(str(p) for p in plots)}")


if __name__ == "__main__":
    main()
