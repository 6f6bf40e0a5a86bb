#!/usr/bin/env python3
"""B+-tree benchmark: range scans and bulk loads, plain and with foreactor.

Two trees hold the same 1,638,400 random keys at each degree: one bulk
loaded from the sorted keys (`bptree load`: leaves in key order on
consecutive pages, so a scan reads the file sequentially), and one built by
putting the keys one by one in random order (`bptree insert`: leaf splits
append pages, so the leaf chain jumps around the file).  Both are cached
under data/bptree/ and reused.  Each is scanned with 10 range scans of 90%
of the key range (ranges from a seeded RNG, the same for every
configuration):

  cold    buffered reads, page cache dropped before every scan;
  direct  the tree opened with O_DIRECT (`--direct`): every page read goes to
          the device, there is no page cache to drop;
  hot     buffered reads, file read once and one warm-up scan.

The bulk load is measured on a fresh file per run, buffered (cache dropped
first) and with O_DIRECT, from its start (printed by the tool) to the end of
the tool's process, plus an fsync of the file by this driver right after the
tool exits, so the data has reached the device.

Configurations, all in the same run, in an order that alternates from one
measurement to the next: the plain tool; `bptree_foreactor` with io_uring and
with the thread pool at fixed depths, and at FOREACTOR_DEPTH=auto when the
library accepts it (detected at start).  Every scan must print
the same count and checksum as every other run of the same range and degree
(plain, either tree, either I/O mode), and every load must write the same
bytes; the run aborts loudly otherwise.  A run that takes longer than
RUN_TIMEOUT_SECONDS is a hang: its threads and, where gdb is installed, their
stacks are printed on stderr before it is killed.

Throughput is in million records per second: records scanned / scan time (as
printed by the tool), or records loaded / (load time + fsync time); medians
over rounds, ratio to plain.  Foreactor's statistics are kept per round.

Write-behind: the load plugin declares it (foreactor starts write-back of
finished leaves early); --write-behind-off adds each foreactor configuration
once more with FOREACTOR_WRITE_BEHIND=0, to compare in the same run.

Usage: run.py [--quick] [--rounds N] [--scans N] [--short-scans N] [--seed N]
              [--degrees D,..]
              [--depths N,..|auto] [--phases KEY,..] [--write-behind-off]
              [--output FILE] [--no-device-reference]
                                         (or: ./run bench bptree [--quick])
       run.py --markdown RESULTS_JSON   (the tables of a past run, as Markdown)
Full: degrees 64, 128, 256 and 510, every phase at each; depths 4, 16, 64, 256
and auto; 3 rounds of 10 scans, 50 in the short phases (about 35 minutes).
--quick: degree 256, depth 64 and auto, 2 rounds of 5 scans, 10 in the short
phases (a few minutes).
Writes bench/results/bptree.json (bptree-quick.json) and one plot per phase,
bench/results/bptree[-quick]-PHASE.png.
"""

import argparse
import collections
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT))

from bench.common import cache, progress, ratios, results, run_record, runs  # noqa: E402

PLAIN_TOOL = BUILD_DIR / "apps" / "bptree" / "bptree"
FOREACTOR_TOOL = BUILD_DIR / "apps" / "bptree" / "plugins" / "bptree_foreactor"
DATA_DIR = ROOT / "data" / "bptree"
RESULTS_DIR = ROOT / "bench" / "results"

KEY_COUNT = 1_638_400
KEY_SEED = 1
INSERT_ORDER_SEED = 2
ENGINES = ("io_uring", "threads")
AUTO_DEPTH = "auto"
RANGE_FRACTION = 0.9
# Short scans: 1% of the key space, about 64 leaves, one scan per process.
# The set-up of a process's first scope and the kernel's read-ahead of a
# short run weigh there (a cold short scan of the bulk-loaded tree once took
# 7x plain's time, a hot one 2x, while the full-range scans were at plain's).
SHORT_RANGE_FRACTION = 0.01
KEY_SPACE = 1 << 64  # the tool draws keys uniformly from all 64-bit numbers
RUN_TIMEOUT_SECONDS = 600
STAT_NAMES = ("intercepted", "issued_early", "reads_started", "consumed", "wasted", "mispredicted",
              "synchronous", "found_cached", "served_from_cache", "write_behind_requests",
              "write_behind_bytes", "write_behind_wait_nanoseconds", "read_ahead_requests",
              "read_ahead_bytes", "read_ahead_cached_regions")
SCAN_GRAPH = "bptree_scan"
LOAD_GRAPH = "bptree_load"
# Extra settings for foreactor runs on O_DIRECT files: none.  (Before the
# runtime skipped O_DIRECT descriptors in its page-cache probe, the probe had
# to be switched off here.)
DIRECT_IO_ENVIRONMENT = {}

# One measured phase: what runs, on which tree, how the file is read or
# written, and the cache state.
# `fraction`: of the key space each range scan covers (scans only).
Phase = collections.namedtuple("Phase", "key operation tree direct state title fraction",
                               defaults=(RANGE_FRACTION,))
PHASES = (
    Phase("scan-bulk-cold", "scan", "bulk", False, "cold",
          "Range scans, bulk-loaded tree, buffered, cold cache"),
    Phase("scan-insert-cold", "scan", "insert", False, "cold",
          "Range scans, insert-built tree, buffered, cold cache"),
    Phase("scan-bulk-direct", "scan", "bulk", True, "direct",
          "Range scans, bulk-loaded tree, O_DIRECT"),
    Phase("scan-insert-direct", "scan", "insert", True, "direct",
          "Range scans, insert-built tree, O_DIRECT"),
    Phase("scan-bulk-hot", "scan", "bulk", False, "hot",
          "Range scans, bulk-loaded tree, buffered, hot cache"),
    Phase("scan-insert-hot", "scan", "insert", False, "hot",
          "Range scans, insert-built tree, buffered, hot cache"),
    Phase("short-bulk-cold", "scan", "bulk", False, "cold",
          "Short range scans (1% of the keys), bulk-loaded tree, buffered, cold cache",
          SHORT_RANGE_FRACTION),
    Phase("short-insert-cold", "scan", "insert", False, "cold",
          "Short range scans (1% of the keys), insert-built tree, buffered, cold cache",
          SHORT_RANGE_FRACTION),
    Phase("short-bulk-hot", "scan", "bulk", False, "hot",
          "Short range scans (1% of the keys), bulk-loaded tree, buffered, hot cache",
          SHORT_RANGE_FRACTION),
    Phase("load-buffered", "load", "bulk", False, "cold",
          "Bulk load + fsync, buffered, cold cache"),
    Phase("load-direct", "load", "bulk", True, "direct",
          "Bulk load + fsync, O_DIRECT"),
)
PHASE_BY_KEY = {phase.key: phase for phase in PHASES}
# The full run: the degrees and depths, every phase at each
# (about 32 minutes on the development VM, trees built).
FULL_PLAN = {degree: [phase.key for phase in PHASES] for degree in (64, 128, 256, 510)}
FULL_DEPTHS = (4, 16, 64, 256)
FULL_ROUNDS = 3
QUICK_PLAN = {256: [phase.key for phase in PHASES]}
QUICK_DEPTHS = (64,)
QUICK_ROUNDS = 2
QUICK_SCANS = 5
# A short scan takes 0.1-0.2 ms of a process's few: one process's scan moves
# by a fifth either way (its page faults, where its pages fall), so a round of
# them needs more scans than a round of full ones for the same spread.
FULL_SHORT_SCANS = 50
QUICK_SHORT_SCANS = 10
PAGE_BYTES = 8192  # BPTREE_PAGE_SIZE: the request size of the device reference
# The bulk-loaded tree's cold scans are also timed against reading the
# leaves each scan covers alone, in the same rounds: `dd` reads them in
# order through the page cache (128 KiB reads, the kernel's read-ahead), and
# its own time is taken.  A scan through the page cache cannot end before
# its leaves are read, so this ratio bounds what any design that keeps the
# reads buffered can give that scan.
READ_ONLY = "read only (dd of the scanned leaves)"
# A scan through the page cache is more than its leaf loop: the inner levels
# and the set-up of the result buffer come before bptree_read_leaves, the
# function the graph covers, and no early read can start before it is
# called.  The floor of a design that speeds up that loop alone: plain's
# time outside the loop (its `elapsed_ms` less its `leaf_loop_ms`) plus
# reading the loop's leaves alone (READ_ONLY), per round.
LEAF_LOOP_FLOOR = "floor of the leaf loop (plain outside it, dd inside)"
# The plugin-linked tool with foreactor off (FOREACTOR=0), in the same
# rounds: the binary every foreactor configuration runs.  Linking other
# objects into a host program moves its code and data, and that alone
# changed a hot scan's time here (a pass-through wrapper with no foreactor
# code: 1.04x of plain's, the scan plugin alone 1.00x, both plugins 1.07x,
# 30 paired rounds each); this entry's ratio to plain is
# that effect, and the foreactor configurations' cost beyond it is the
# runtime's.
LINKED_OFF = "plugin tool, foreactor off"
# Entries of a phase's summary that are not foreactor configurations.
NOT_FOREACTOR = ("plain", READ_ONLY, LEAF_LOOP_FLOOR, LINKED_OFF)


class MismatchError(RuntimeError):
    """A run observed something other than another run did."""


def depth_list(text):
    """number_list(), or [] for 'auto': no fixed depth, only the automatic one."""
    return [] if text.strip() == AUTO_DEPTH else number_list(text)


def number_list(text):
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text!r}")
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError("the numbers must be positive")
    return values


def phase_list(text):
    keys = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [key for key in keys if key not in PHASE_BY_KEY]
    if not keys or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown phase(s) {', '.join(unknown) or text!r}; known: "
            + ", ".join(PHASE_BY_KEY))
    return keys


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="degree 256, depth 64 and auto, 2 rounds of 5 scans")
    parser.add_argument("--rounds", type=int, help="rounds per configuration (3; quick 2)")
    parser.add_argument("--scans", type=int, help="range scans per round (10; quick 5)")
    parser.add_argument("--short-scans", type=int,
                        help="range scans per round in the short phases (50; quick 10)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the scan ranges")
    parser.add_argument("--degrees", type=number_list,
                        help="comma-separated degrees, every phase at each (default: the plan "
                             "above)")
    parser.add_argument("--depths", type=depth_list,
                        help="comma-separated fixed depths (4,16,64,256; quick 64), or 'auto' "
                             "for none; auto is added when the library accepts it")
    parser.add_argument("--phases", type=phase_list,
                        help="comma-separated phases to run (default: all): "
                             + ", ".join(phase.key for phase in PHASES))
    parser.add_argument("--write-behind-off", action="store_true",
                        help="also run every foreactor configuration with "
                             "FOREACTOR_WRITE_BEHIND=0")
    parser.add_argument("--markdown", metavar="RESULTS_JSON",
                        help="print the tables of a results file as Markdown, run nothing")
    parser.add_argument("--output", type=Path,
                        help="results file (bench/results/bptree.json; quick bptree-quick.json); "
                             "the plots go next to it")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    if arguments.rounds is None:
        arguments.rounds = QUICK_ROUNDS if arguments.quick else FULL_ROUNDS
    if arguments.scans is None:
        arguments.scans = QUICK_SCANS if arguments.quick else 10
    if arguments.short_scans is None:
        arguments.short_scans = QUICK_SHORT_SCANS if arguments.quick else FULL_SHORT_SCANS
    if arguments.rounds <= 0 or arguments.scans <= 0 or arguments.short_scans <= 0:
        parser.error("--rounds, --scans and --short-scans must be positive")
    if arguments.degrees and max(arguments.degrees) > 510:
        parser.error("degrees are at most 510")
    return arguments


def say(message):
    print(message, file=sys.stderr, flush=True)


WRITE_BEHIND_OFF = "write-behind off"


def configurations(depths, with_auto, write_behind_off=False):
    """(name, engine, depth) of every configuration; engine None is plain,
    and LINKED_OFF runs the plugin tool with foreactor off.
    With `write_behind_off`, each foreactor configuration also runs with
    FOREACTOR_WRITE_BEHIND=0 (its name ends in ", write-behind off")."""
    all_depths = list(depths) + ([AUTO_DEPTH] if with_auto else [])
    configs = [("plain", None, None),
               (LINKED_OFF, runs.EngineSetup(ENGINES[0], {"FOREACTOR": "0"}), AUTO_DEPTH)]
    for engine in ENGINES:
        for depth in all_depths:
            configs.append((f"{engine} {depth}", engine, depth))
            if write_behind_off:
                configs.append((f"{engine} {depth}, {WRITE_BEHIND_OFF}",
                                runs.EngineSetup(engine, {"FOREACTOR_WRITE_BEHIND": "0"}), depth))
    return configs


def scan_ranges(count, seed, fraction=RANGE_FRACTION):
    """`count` (low, high) pairs, each covering `fraction` of the key space."""
    generator = random.Random(seed)
    width = int(KEY_SPACE * fraction)
    ranges = []
    for _ in range(count):
        low = generator.randrange(0, KEY_SPACE - width + 1)
        ranges.append((low, low + width - 1))
    return ranges


def parse_words(text):
    """'count 5 checksum 0x.. elapsed_ms 1.5' -> {'count': '5', ...}."""
    words = text.replace(",", " ").replace(":", " ").split()
    return {words[i]: words[i + 1] for i in range(len(words) - 1)}


def tool_environment(engine, depth, stats_file, direct):
    environment = runs.foreactor_environment(engine, depth, stats_file)
    if engine is not None and direct:
        environment.update(DIRECT_IO_ENVIRONMENT)
        environment.update(getattr(engine, "environment", {}))  # its settings stay last
    return environment


# What run_tool() returns: the tool's standard output, {graph: statistics or
# None} (None for the plain tool), and time.monotonic_ns() right after the
# tool's process was reaped (before its statistics file is read).
ToolRun = collections.namedtuple("ToolRun", "stdout graphs ended_ns")


def run_tool(engine, depth, arguments, stats_file, messages, label, direct=False):
    """Runs the plain tool (engine None) or the foreactor one, with --direct
    when `direct`; returns a ToolRun."""
    tool = PLAIN_TOOL if engine is None else FOREACTOR_TOOL
    if stats_file.exists():
        stats_file.unlink()
    command = [str(tool)] + [str(a) for a in arguments] + (["--direct"] if direct else [])
    try:
        completed = runs.run_with_timeout(command, tool_environment(engine, depth, stats_file, direct),
                                          RUN_TIMEOUT_SECONDS)
        ended_ns = time.monotonic_ns()
    except runs.RunTimedOut as timed_out:
        timed_out.print_report(label)
        raise MismatchError(f"{label}: timed out after {RUN_TIMEOUT_SECONDS} s") from None
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
    return ToolRun(completed.stdout, graphs, ended_ns)


def fsync_file(path):
    """fsyncs `path`; returns the milliseconds it took."""
    started = time.perf_counter()
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return (time.perf_counter() - started) * 1000


def build_tree(tool_engine, depth, kind, path, degree, stats_file, messages, label,
               direct=False):
    """Builds a fresh tree into `path`, bulk loaded (kind 'bulk') or by
    random-order inserts ('insert'); returns (ms, fsync ms, stats).  The ms
    run from the start of the load (the tool's started_ns) to the end of its
    process: what the process does after its own timer stops (closing the
    file, foreactor's exit, where the kernel waits for a write-back hint
    still running) is part of the load, as the fsync after it is."""
    if path.exists():
        path.unlink()
    arguments = ["load" if kind == "bulk" else "insert", path, "--count", KEY_COUNT,
                 "--degree", degree, "--seed", KEY_SEED]
    if kind == "insert":
        arguments += ["--order-seed", INSERT_ORDER_SEED]
    tool_run = run_tool(tool_engine, depth, arguments, stats_file, messages, label,
                        direct=direct)
    # The tool never syncs: getting the data to the device is part of the load.
    sync_ms = fsync_file(path)
    words = parse_words(tool_run.stdout)
    if "started_ns" not in words or f" {KEY_COUNT} pairs" not in tool_run.stdout:
        raise MismatchError(f"{label}: unexpected output {tool_run.stdout!r}")
    load_ms = (tool_run.ended_ns - int(words["started_ns"])) / 1e6
    return load_ms, sync_ms, (tool_run.graphs or {}).get(LOAD_GRAPH)


def file_digest(path):
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_path(kind, degree):
    return DATA_DIR / (f"scan-degree{degree}.db" if kind == "bulk"
                       else f"insert-degree{degree}.db")


def tree_stats(path):
    """`bptree stats` of the tree at `path` as {word: value}, or None when
    the tool fails on it."""
    completed = subprocess.run([str(PLAIN_TOOL), "stats", str(path)], capture_output=True,
                               text=True, env=runs.clean_environment())
    return parse_words(completed.stdout) if completed.returncode == 0 else None


def reads_leaves_alone(phase):
    """True for the phase whose scans are timed against reading their
    leaves alone (READ_ONLY): the bulk-loaded tree, buffered, cold, full
    ranges."""
    return phase.tree == "bulk" and phase.state == "cold" and not is_short(phase)


def is_short(phase):
    """True for the phases of short range scans (SHORT_RANGE_FRACTION)."""
    return phase.operation == "scan" and phase.fraction < RANGE_FRACTION


def prepare_scan_tree(kind, degree, stats_file, messages):
    """The tree scanned at `degree`, built once by the plain tool and reused
    while `bptree stats` shows the right degree, count and kind (a bulk load
    has exactly ceil(keys / degree) leaves, an insert-built tree more)."""
    path = tree_path(kind, degree)
    full_leaves = math.ceil(KEY_COUNT / degree)
    stats = tree_stats(path) if path.exists() else None
    if stats is not None:
        leaves = int(stats.get("leaves", "0"))
        if (stats.get("degree") == str(degree) and stats.get("entries") == str(KEY_COUNT)
                and (leaves == full_leaves) == (kind == "bulk")):
            return path
    verb = "bulk loading" if kind == "bulk" else "inserting in random order"
    say(f"{verb} {KEY_COUNT:,} keys at degree {degree} into {path.relative_to(ROOT)}")
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    build_tree(None, None, kind, path, degree, stats_file, messages,
               f"degree {degree} {kind} tree")
    return path


def detect_auto_depth(path, stats_file):
    """Whether the library accepts FOREACTOR_DEPTH=auto: a short direct scan
    of `path` with it must print no complaint and issue reads early."""
    environment = tool_environment("io_uring", AUTO_DEPTH, stats_file, True)
    if stats_file.exists():
        stats_file.unlink()
    completed = subprocess.run([str(FOREACTOR_TOOL), "scan", str(path), "0", str(1 << 60),
                                "--direct"], env=environment, capture_output=True, text=True,
                               timeout=RUN_TIMEOUT_SECONDS)
    counters = runs.read_graph_statistics(stats_file, SCAN_GRAPH) or {}
    complaint = "DEPTH" in completed.stderr or "invalid" in completed.stderr.lower()
    accepted = (completed.returncode == 0 and not complaint
                and counters.get("issued_early", 0) > 0)
    return accepted, completed.stderr.strip()


def detect_auto_depth_by_load(stats_file, work_dir):
    """detect_auto_depth() for a run without scans: a small bulk load with
    FOREACTOR_DEPTH=auto must print no complaint and go through the graph."""
    environment = tool_environment("io_uring", AUTO_DEPTH, stats_file, False)
    if stats_file.exists():
        stats_file.unlink()
    path = Path(work_dir) / "probe.db"
    completed = subprocess.run([str(FOREACTOR_TOOL), "load", str(path), "--count", "100000"],
                               env=environment, capture_output=True, text=True,
                               timeout=RUN_TIMEOUT_SECONDS)
    counters = runs.read_graph_statistics(stats_file, LOAD_GRAPH) or {}
    complaint = "DEPTH" in completed.stderr or "invalid" in completed.stderr.lower()
    accepted = (completed.returncode == 0 and not complaint
                and counters.get("intercepted", 0) > 0)
    if path.exists():
        path.unlink()
    return accepted, completed.stderr.strip()


class Measurements:
    """Samples of one phase (e.g. scan, cold, degree 256): per configuration,
    per round, the records, the milliseconds and the summed statistics."""

    def __init__(self, names, rounds):
        self.records = {name: [0] * rounds for name in names}
        self.milliseconds = {name: [0.0] * rounds for name in names}
        self.extra_milliseconds = {name: [0.0] * rounds for name in names}
        self.leaf_loop_milliseconds = {name: [0.0] * rounds for name in names}
        self.statistics = {name: [[] for _ in range(rounds)] for name in names}

    def add(self, name, round_index, records, milliseconds, statistics=None, extra_ms=0.0,
            leaf_loop_ms=0.0):
        self.records[name][round_index] += records
        self.milliseconds[name][round_index] += milliseconds
        self.extra_milliseconds[name][round_index] += extra_ms
        self.leaf_loop_milliseconds[name][round_index] += leaf_loop_ms
        self.statistics[name][round_index].append(statistics)

    def add_leaf_loop_floor(self):
        """Per round, LEAF_LOOP_FLOOR's time from plain's and READ_ONLY's."""
        for round_index, plain_ms in enumerate(self.milliseconds["plain"]):
            floor_ms = (plain_ms - self.leaf_loop_milliseconds["plain"][round_index]
                        + self.milliseconds[READ_ONLY][round_index])
            self.add(LEAF_LOOP_FLOOR, round_index, self.records["plain"][round_index], floor_ms)

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
        plain_times = ratios.inverse(throughputs("plain", True))
        plain = runs.median_or_none(throughputs("plain", True))
        plain_without_extra = runs.median_or_none(throughputs("plain", False))
        for name in self.records:
            per_round = throughputs(name, True)
            median = runs.median_or_none(per_round)
            entry = {
                "median_mrec_per_s": median,
                "ratio_to_plain": runs.ratio_or_none(median, plain),
                # Time per record (fsync included) over plain's, paired by round.
                "time_ratio": ratios.paired_ratio(plain_times, ratios.inverse(per_round)),
                "per_round_mrec_per_s": per_round,
                "records_per_round": self.records[name],
                "ms_per_round": self.milliseconds[name],
            }
            if any(self.leaf_loop_milliseconds[name]):
                entry["leaf_loop_ms_per_round"] = self.leaf_loop_milliseconds[name]
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


def leaf_spans(path, degree, ranges, context):
    """[(first byte, length, pairs)] of the leaves each range scan of the
    bulk-loaded tree at `path` reads: its leaves hold `degree` pairs each, in
    key order on consecutive pages from `first_leaf_page` on, so the pairs
    below LOW and the pairs in the range (counted by scans of the plain
    tool) place them."""
    def count(low, high, label):
        stdout = run_tool(None, None, ["scan", path, low, high], context["stats_file"],
                          context["messages"], label).stdout
        return int(parse_words(stdout)["count"])

    stats = tree_stats(path)
    if stats is None or "first_leaf_page" not in stats:
        raise MismatchError(f"{path}: `bptree stats` gave no first_leaf_page")
    first_leaf_page = int(stats["first_leaf_page"])
    spans = []
    for low, high in ranges:
        label = f"leaves of the range {low}..{high} at degree {degree}"
        below = count(0, low - 1, label) if low > 0 else 0
        within = count(low, high, label)
        first = first_leaf_page + below // degree
        last = first_leaf_page + (below + max(within, 1) - 1) // degree
        spans.append((first * PAGE_BYTES, (last + 1 - first) * PAGE_BYTES, within))
    return spans


def read_only_ms(path, span, label):
    """Milliseconds `dd` took to read `span` (first byte, length, pairs) of
    `path`, by its own clock (the copy alone, not its start-up)."""
    first, length, _ = span
    completed = subprocess.run(
        ["dd", f"if={path}", "of=/dev/null", "bs=128k", "iflag=skip_bytes,count_bytes",
         f"skip={first}", f"count={length}"],
        capture_output=True, text=True, env=dict(runs.clean_environment(), LC_ALL="C"))
    # Its last line: "N bytes (...) copied, S s, R MB/s".
    found = re.search(r"^(\d+) bytes .* copied, ([0-9.e-]+) s", completed.stderr, re.MULTILINE)
    if completed.returncode != 0 or found is None or int(found.group(1)) != length:
        raise MismatchError(f"{label}: dd did not read {length} bytes: "
                            f"{completed.stderr.strip()!r}")
    return float(found.group(2)) * 1000


def measure_scans(phase, degree, path, ranges, configs, rounds, context):
    """Runs every range scan of every configuration `rounds` times; on the
    bulk-loaded tree, cold, reads each scan's leaves alone too (READ_ONLY)."""
    read_only = reads_leaves_alone(phase)
    spans = leaf_spans(path, degree, ranges, context) if read_only else None
    configs = list(configs) + ([(READ_ONLY, None, None)] if read_only else [])
    names = [name for name, _, _ in configs]
    measurements = Measurements(names + ([LEAF_LOOP_FLOOR] if read_only else []), rounds)
    # Both trees hold the same pairs: one reference per degree and range.
    reference = context["scan_reference"].setdefault(degree, {})
    if phase.state == "hot":
        cache.warm_files([path])
        low, high = ranges[0]
        run_tool(None, None, ["scan", path, low, high], context["stats_file"],
                 context["messages"], f"{phase.key} degree {degree} warm-up")
    for round_index in range(rounds):
        run_record.sample_load(context["record"])
        for range_index, (low, high) in enumerate(ranges):
            order = runs.alternating_order(configs, round_index * len(ranges) + range_index)
            for name, engine, depth in order:
                label = f"{phase.key} degree {degree} {name} round {round_index + 1}"
                if phase.state == "cold":
                    context["cache_method"] = cache.drop_page_cache([path])
                if name == READ_ONLY:
                    measurements.add(name, round_index, spans[range_index][2],
                                     read_only_ms(path, spans[range_index], label), None)
                    context["progress"].step(label)
                    continue
                stdout, graphs, _ = run_tool(engine, depth, ["scan", path, low, high],
                                             context["stats_file"], context["messages"], label,
                                             direct=phase.direct)
                words = parse_words(stdout)
                try:
                    count, checksum = int(words["count"]), words["checksum"]
                    elapsed_ms = float(words["elapsed_ms"])
                    leaf_loop_ms = float(words["leaf_loop_ms"])
                except (KeyError, ValueError):
                    raise MismatchError(f"{label}: unexpected output {stdout!r}")
                seen = reference.setdefault((low, high), (count, checksum, label))
                if seen[:2] != (count, checksum):
                    raise MismatchError(
                        f"{label}, range {low}..{high}: count {count} checksum {checksum}, "
                        f"but {seen[2]} printed count {seen[0]} checksum {seen[1]}")
                measurements.add(name, round_index, count, elapsed_ms,
                                 (graphs or {}).get(SCAN_GRAPH), leaf_loop_ms=leaf_loop_ms)
                context["progress"].step(label)
    if read_only:
        measurements.add_leaf_loop_floor()
    return measurements.summary()


def measure_loads(phase, degree, configs, rounds, context):
    """Bulk loads a fresh file per run, `rounds` times per configuration; the
    cache is dropped (with a sync) before each."""
    names = [name for name, _, _ in configs]
    measurements = Measurements(names, rounds)
    path = DATA_DIR / f"load-degree{degree}.db"
    for round_index in range(rounds):
        run_record.sample_load(context["record"])
        for name, engine, depth in runs.alternating_order(configs, round_index):
            label = f"{phase.key} degree {degree} {name} round {round_index + 1}"
            if path.exists():
                path.unlink()
            context["cache_method"] = cache.drop_page_cache([DATA_DIR])
            load_ms, sync_ms, statistics = build_tree(engine, depth, "bulk", path, degree,
                                                      context["stats_file"],
                                                      context["messages"], label,
                                                      direct=phase.direct)
            digest = file_digest(path)
            # Buffered and direct loads must write the very same file.
            seen = context["load_reference"].setdefault(degree, (digest, label))
            if seen[0] != digest:
                raise MismatchError(f"{label}: the loaded file differs from the one "
                                    f"{seen[1]} wrote (sha256 {digest} vs {seen[0]})")
            measurements.add(name, round_index, KEY_COUNT, load_ms, statistics, sync_ms)
            context["progress"].step(label)
    if path.exists():
        path.unlink()
    return measurements.summary()


def lower_first(title):
    """'Range scans, ..., O_DIRECT' -> 'range scans, ..., O_DIRECT'."""
    return title[:1].lower() + title[1:]


def runs_in_phase(phase, configs, rounds, scans):
    if phase.operation == "load":
        return len(configs) * rounds
    return ((len(configs) + reads_leaves_alone(phase)) * rounds * scans
            + (1 if phase.state == "hot" else 0))


def format_count(value):
    return "-" if value is None else f"{value:,.0f}"


def print_table(phase, per_degree, device_bound):
    """`device_bound`: the device's QD64 time ratio, shown against the scans
    that read from the device (cold and direct), or None."""
    with_fsync = phase.operation == "load"
    bound = device_bound if phase.operation == "scan" and phase.state != "hot" else None
    print(f"\n{phase.title}" + (" (Mrec/s and ratio include the fsync; no-sync: without)"
                               if with_fsync else ""))
    name_width = max([16] + [len(name) for summary in per_degree.values() for name in summary])
    header = (f"  {'degree':>6} {'configuration':{name_width}} {'Mrec/s':>8} {'ratio':>7}"
              + f" {'time ratio [95% interval]':>30}"
              + f" {'share of gain':>13}"
              + (f" {'no-sync':>8} {'ratio':>7} {'fsync ms':>8} {'behind MiB':>10}"
                 if with_fsync else "")
              + f" {'issued early':>13} {'started':>10} {'consumed':>10} {'wasted':>8}"
              + f" {'mispred':>8}"
              + f" {'found cached':>12} {'from cache':>11}")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for degree, summary in per_degree.items():
        for name, entry in summary.items():
            median = entry["median_mrec_per_s"]
            ratio = entry["ratio_to_plain"]
            line = (f"  {degree:>6} {name:{name_width}} "
                    f"{'-' if median is None else f'{median:.2f}':>8} "
                    f"{'-' if ratio is None else f'{ratio:.2f}x':>7}"
                    f" {ratios.format_ratio(entry.get('time_ratio')) if name != 'plain' else '1':>30}"
                    f" {share_text(entry, bound) if name != 'plain' else '-':>13}")
            if with_fsync:
                without = entry.get("median_mrec_per_s_without_fsync")
                ratio_without = entry.get("ratio_to_plain_without_fsync")
                fsync_ms = runs.median_or_none(entry.get("fsync_ms_per_round") or [None])
                stats = entry.get("statistics_median") or {}
                behind = stats.get("write_behind_bytes")
                line += (f" {'-' if without is None else f'{without:.2f}':>8}"
                         f" {'-' if ratio_without is None else f'{ratio_without:.2f}x':>7}"
                         f" {'-' if fsync_ms is None else f'{fsync_ms:.1f}':>8}"
                         f" {'-' if behind is None else f'{behind / 2**20:.1f}':>10}")
            stats = entry.get("statistics_median") or {}
            line += (f" {format_count(stats.get('issued_early')):>13}"
                     f" {format_count(stats.get('reads_started')):>10}"
                     f" {format_count(stats.get('consumed')):>10}"
                     f" {format_count(stats.get('wasted')):>8}"
                     f" {format_count(stats.get('mispredicted')):>8}"
                     f" {format_count(stats.get('found_cached')):>12}"
                     f" {format_count(stats.get('served_from_cache')):>11}")
            print(line)


def share_text(entry, bound):
    """The share of the device's gain a configuration realizes, as text."""
    return ratios.format_share(ratios.share_realized((entry.get("time_ratio") or {}).get("ratio"),
                                                     bound))


def best(summary, engine=None):
    """(ratio, name) of the best foreactor configuration (of `engine`), or None."""
    candidates = [(entry["ratio_to_plain"], name) for name, entry in summary.items()
                  if name not in NOT_FOREACTOR and entry["ratio_to_plain"] is not None
                  and (engine is None or name.startswith(engine + " "))]
    return max(candidates) if candidates else None


def evaluate_targets(all_results):
    """The issue's targets per phase and degree, each with what was measured
    and whether it was met."""
    targets = []

    def add(target, measured, met):
        targets.append({"target": target, "measured": measured, "met": bool(met)})

    def add_never_slower(where, summary):
        ratios = [(entry["ratio_to_plain"], name) for name, entry in summary.items()
                  if name not in NOT_FOREACTOR and entry["ratio_to_plain"] is not None]
        worst = min(ratios) if ratios else None
        add(f"{where}: every foreactor configuration at most 3% slower (ratio >= 0.97)",
            worst and f"worst {worst[1]} {worst[0]:.2f}x", worst and worst[0] >= 0.97)

    for key, per_degree in all_results.items():
        phase = PHASE_BY_KEY[key]
        for degree, summary in per_degree.items():
            where = f"{lower_first(phase.title)}, degree {degree}"
            found = best(summary)
            if is_short(phase):
                # Issue 22: never slower, one short scan per process too.
                add_never_slower(where, summary)
                continue
            if phase.operation == "scan" and phase.state != "hot" and degree == "256":
                add(f"{where}: best foreactor >= 2.5x plain",
                    found and f"{found[1]} {found[0]:.2f}x", found and found[0] >= 2.5)
            if phase.operation == "load":
                add(f"{where}: best foreactor >= 1.5x plain (load + fsync)",
                    found and f"{found[1]} {found[0]:.2f}x", found and found[0] >= 1.5)
            if phase.operation == "scan" and phase.state != "hot":
                uring, threads = best(summary, "io_uring"), best(summary, "threads")
                add(f"{where}: best io_uring >= best threads",
                    uring and threads and f"io_uring {uring[0]:.2f}x ({uring[1]}) vs threads "
                    f"{threads[0]:.2f}x ({threads[1]})",
                    uring and threads and uring[0] >= threads[0])
            if reads_leaves_alone(phase) and READ_ONLY in summary:
                # Issue 21: 1.3x plain's speed; no buffered scan beats reading its
                # leaves, nor a faster leaf loop the rest of the scan.
                alone = summary[READ_ONLY]["ratio_to_plain"]
                floor = (summary.get(LEAF_LOOP_FLOOR) or {}).get("ratio_to_plain")
                add(f"{where}: best foreactor >= 1.3x plain (reading the leaves alone: "
                    f"{'-' if alone is None else f'{alone:.2f}x'}; floor of the leaf loop: "
                    f"{'-' if floor is None else f'{floor:.2f}x'})",
                    found and f"{found[1]} {found[0]:.2f}x", found and found[0] >= 1.3)
            if phase.state == "hot":
                add_never_slower(where, summary)
    wasted_shares = []
    for per_degree in all_results.values():
        for summary in per_degree.values():
            for name, entry in summary.items():
                stats = entry.get("statistics_median")
                if stats and stats.get("issued_early"):
                    wasted_shares.append((stats["wasted"] / stats["issued_early"], name))
    # (Runs that issued nothing early, hot scans alone, have no waste to judge.)
    if wasted_shares:
        worst_waste = max(wasted_shares)
        add("wasted stays near zero (< 1% of issued early)",
            f"worst {worst_waste[0]:.2%} of issued early ({worst_waste[1]})", worst_waste[0] < 0.01)
    return targets


# Results files written before the insert-built tree and O_DIRECT were
# measured: {"scan": {"cold": .., "hot": ..}, "load": {"cold": ..}}.
LEGACY_PHASE_KEYS = {("scan", "cold"): "scan-bulk-cold", ("scan", "hot"): "scan-bulk-hot",
                     ("load", "cold"): "load-buffered"}


def phase_results(results_data):
    """{phase key: {degree: summary}} of a results file, old layout included."""
    if "scan" in results_data or "load" in results_data:
        return {LEGACY_PHASE_KEYS[(operation, state)]: per_degree
                for operation, states in results_data.items()
                for state, per_degree in states.items()}
    return results_data


def markdown_report(data):
    """The tables of a results file as Markdown."""
    def number(value, pattern):
        return "-" if value is None else pattern.format(value)

    lines = []
    for key, per_degree in phase_results(data["results"]).items():
        phase = PHASE_BY_KEY[key]
        if not per_degree:
            continue
        with_fsync = phase.operation == "load"
        lines += [f"**{phase.title}** (Mrec/s, median of {data['parameters']['rounds']} rounds; "
                  "statistics: median per round" + (", summed over the scans" if
                                                     phase.operation == "scan" else "") + ")",
                  ""]
        header = ["degree", "configuration", "Mrec/s", "ratio"]
        if with_fsync:
            header += ["Mrec/s without fsync", "ratio"]
        header += ["issued early", "started", "consumed", "wasted", "found cached",
                   "served from cache"]
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
                        ("issued_early", "reads_started", "consumed", "wasted", "found_cached",
                         "served_from_cache")]
                lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines.append("**Targets**")
    lines.append("")
    for target in data["targets"]:
        lines.append(f"- {'met' if target['met'] else '**not met**'}: {target['target']}: "
                     f"{target['measured']}")
    return "\n".join(lines) + "\n"


def plot(all_results, results_dir, prefix, configs):
    """One grouped bar chart per phase (groups: degrees); returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    names = [name for name, _, _ in configs]
    for key, per_degree in all_results.items():
        if not per_degree:
            continue
        phase = PHASE_BY_KEY[key]
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
        axes.set_title(f"B+-tree: {lower_first(phase.title)}: {KEY_COUNT:,} keys", fontsize=10)
        axes.legend(fontsize=7, ncol=min(len(names), 4), loc="upper center",
                    bbox_to_anchor=(0.5, -0.1))
        axes.margins(y=0.1)
        figure.tight_layout()
        path = results_dir / f"{prefix}-{key}.png"
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
    if arguments.degrees:
        plan = {degree: [phase.key for phase in PHASES] for degree in arguments.degrees}
    else:
        plan = QUICK_PLAN if arguments.quick else FULL_PLAN
    if arguments.phases:
        plan = {degree: [key for key in keys if key in arguments.phases]
                for degree, keys in plan.items()}
    depths = arguments.depths if arguments.depths is not None else (
        QUICK_DEPTHS if arguments.quick else FULL_DEPTHS)
    ranges = scan_ranges(arguments.scans, arguments.seed)
    short_ranges = scan_ranges(arguments.short_scans, arguments.seed, SHORT_RANGE_FRACTION)
    prefix = "bptree-quick" if arguments.quick else "bptree"
    output = arguments.output or RESULTS_DIR / f"{prefix}.json"
    record = run_record.begin("bptree", DATA_DIR, PAGE_BYTES, arguments, arguments.rounds,
                              FULL_ROUNDS, QUICK_ROUNDS)

    started = time.monotonic()
    context = {"messages": {}, "cache_method": None, "scan_reference": {},
               "load_reference": {}, "record": record}
    all_results = {phase.key: {} for phase in PHASES
                   if any(phase.key in keys for keys in plan.values())}
    failure = None
    auto = (False, "")
    configs = configurations(depths, False, arguments.write_behind_off)
    with tempfile.TemporaryDirectory(prefix="foreactor-bptree-") as work_dir:
        context["stats_file"] = Path(work_dir) / "stats.json"
        context["progress"] = None
        try:
            trees = {}
            for degree, keys in plan.items():
                for kind in ("bulk", "insert"):
                    if any(PHASE_BY_KEY[key].tree == kind and PHASE_BY_KEY[key].operation ==
                           "scan" for key in keys):
                        trees[(kind, degree)] = prepare_scan_tree(
                            kind, degree, context["stats_file"], context["messages"])
            probe_tree = next(iter(trees.values()), None)
            auto = (detect_auto_depth(probe_tree, context["stats_file"]) if probe_tree is not None
                    else detect_auto_depth_by_load(context["stats_file"], work_dir))
            say(f"FOREACTOR_DEPTH=auto: {'accepted' if auto[0] else 'not accepted, skipped'}"
                + (f" ({auto[1]})" if auto[1] and not auto[0] else ""))
            configs = configurations(depths, auto[0], arguments.write_behind_off)
            total = sum(runs_in_phase(PHASE_BY_KEY[key], configs, arguments.rounds,
                                      len(short_ranges) if is_short(PHASE_BY_KEY[key])
                                      else len(ranges))
                        for keys in plan.values() for key in keys)
            context["progress"] = progress.Progress(total)
            for degree, keys in plan.items():
                for key in keys:
                    phase = PHASE_BY_KEY[key]
                    if phase.operation == "scan":
                        summary = measure_scans(phase, degree, trees[(phase.tree, degree)],
                                                short_ranges if is_short(phase) else ranges,
                                                configs, arguments.rounds, context)
                    else:
                        summary = measure_loads(phase, degree, configs, arguments.rounds,
                                                context)
                    all_results[key][str(degree)] = summary
        except (MismatchError, cache.CacheError) as error:
            failure = str(error)
        finally:
            if context["progress"] is not None:
                context["progress"].finish()
    elapsed = time.monotonic() - started

    if failure:
        print(f"\nFAILED, benchmark aborted: {failure}", file=sys.stderr)
        return 1

    print(f"\nWhat ran: {KEY_COUNT:,} random keys (seed {KEY_SEED}), bulk loaded and inserted "
          f"in random order; {len(ranges)} range scans per round of {RANGE_FRACTION:.0%} of the "
          f"key range each, or {len(short_ranges)} of {SHORT_RANGE_FRACTION:.0%} for short "
          f"scans (seed "
          f"{arguments.seed}); {arguments.rounds} round(s); "
          f"{len(configs)} configurations alternating; {elapsed / 60:.1f} min in all.")
    print(f"Cold runs: before each one, "
          f"{cache.describe_cache_drop(context['cache_method'])}.  O_DIRECT scans: nothing "
          "dropped.")
    print("Mrec/s: million records per second, median over rounds; ratio: to plain in this "
          "run; time ratio: time per record over plain's, median of the paired rounds, with "
          "its 95% interval; share of gain: (1 - time ratio) / (1 - the device's QD64 time "
          "ratio), for scans that read the device; statistics: foreactor's counters per round "
          "(median), summed over the scans.")
    for key, per_degree in all_results.items():
        print_table(PHASE_BY_KEY[key], per_degree, run_record.device_bound(record))
    targets = evaluate_targets(all_results)
    print("\nTargets:")
    for target in targets:
        print(f"  [{'met' if target['met'] else 'NOT MET'}] {target['target']}: "
              f"{target['measured']}")
    if context["messages"]:
        print("\nMessages from the runs (first run that printed each):")
        for message, label in context["messages"].items():
            print(f"  [{label}] {message}")
    print("\nEvery scan printed the same count and checksum for its range and degree (both "
          "trees, buffered and direct, plain and foreactor), and every load wrote a "
          "byte-identical file.")

    run_record.finish(record, [entry.get("time_ratio") for per_degree in all_results.values()
                               for summary in per_degree.values()
                               for name, entry in summary.items()
                               if name not in NOT_FOREACTOR])
    output.parent.mkdir(parents=True, exist_ok=True)
    plots = plot(all_results, output.parent, output.stem, configs)
    output = results.write_json(output, {
        "benchmark": "bptree",
        "quick": arguments.quick,
        "command": "./run bench bptree" + (" --quick" if arguments.quick else ""),
        "parameters": {"keys": KEY_COUNT, "key_seed": KEY_SEED,
                       "insert_order_seed": INSERT_ORDER_SEED,
                       "plan": {str(degree): keys for degree, keys in plan.items()},
                       "configurations": [name for name, _, _ in configs],
                       "auto_depth": {"accepted": auto[0], "stderr": auto[1]},
                       "rounds": arguments.rounds, "scans_per_round": len(ranges),
                       "short_scans_per_round": len(short_ranges),
                       "range_seed": arguments.seed, "range_fraction": RANGE_FRACTION,
                       "short_range_fraction": SHORT_RANGE_FRACTION,
                       "write_behind_off_compared": arguments.write_behind_off,
                       "ranges": [[str(low), str(high)] for low, high in ranges],
                       "short_ranges": [[str(low), str(high)] for low, high in short_ranges],
                       "direct_io_environment": DIRECT_IO_ENVIRONMENT},
        "phases": {phase.key: phase._asdict() for phase in PHASES if phase.key in all_results},
        "run": record,
        "cold_cache_method": context["cache_method"],
        "load_timing": "from the start of the bulk load (the tool's started_ns) to the end "
                       "of the tool's process, + os.fsync of the file by the driver right after",
        "elapsed_seconds": round(elapsed, 1),
        "results": all_results,
        "targets": targets,
        "messages": context["messages"],
        "scan_checks": {str(degree): {f"{low}..{high}": {"count": value[0],
                                                         "checksum": value[1]}
                                      for (low, high), value in per_range.items()}
                        for degree, per_range in context["scan_reference"].items()},
        "load_checks": {str(degree): value[0]
                        for degree, value in context["load_reference"].items()},
    })
    print(f"\nresults written to {output}; plots: " + ", ".join(str(p) for p in plots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
