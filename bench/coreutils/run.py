#!/usr/bin/env python3
"""GNU du and cp (coreutils 9.1) benchmark: stock, with foreactor, and peers.

du runs over three trees, built once under data/coreutils/ and reused:

  wide-100k  100 directories of 1,000 files each (the paper's shape);
  wide-400k  100 directories of 4,000 files each;
  deep       a generated source-checkout-like tree: directories nested up
             to 9 levels, fan-out drawn from 0..6 subdirectories (mostly
             1-3), 0..25 files per directory (mostly a handful), file sizes
             log-normal around 4 KiB (seeded, so the same tree every time);
             49,643 files in 7,864 directories.

Every tree is measured cold (scripts/drop_caches.sh before each run) and hot
(one stock du first, then every run finds everything cached).  The command
is `du TREE` (one line per directory); every line printed by every
foreactor run must be identical to stock du's, or the run aborts.  Peers,
installed by the setup step of this script (idempotent, into
data/coreutils/tools/): diskus (crates.io, built with cargo) and gdu
(Debian package), each run the same way (`diskus TREE`, `gdu -n -p -s
--no-prefix TREE`); their totals are recorded, not compared (they count
differently from du).

cp copies one 1 GiB file, one 2 GiB file, and 8 files of 256 MiB (one cp
with 8 sources), cold (the sources dropped from the page cache before each
run) and hot (the sources read once before the phase, nothing dropped).  Configurations: stock
`cp --reflink=never --sparse=never` (the read/write loop), the same with
foreactor, and stock `cp` with its default options (copy_file_range).  Every
copy is checked byte-identical to its source (cmp) and its mode, size,
owner and group equal to stock cp's copy; the copy's write-back (sync) is
timed separately and reported beside the cp time.

Configurations, all in the same run, in an order that alternates from one
round to the next: stock; foreactor io_uring and threads at depths 4, 16, 64
and auto (du-foreactor's plugin also asks for walk-ahead).  du also runs the
programs as Debian installs them, with no plugin: /usr/bin/du and
`/usr/bin/find TREE -size +1k`, each plain and under `foreactor run
--walk-ahead` (ratios of find to plain find).  Times are wall-clock
milliseconds of the whole process; medians over rounds; ratio = time /
stock time (below 1 is faster).

Usage: run.py [--quick] [--tiny] [--rounds N] [--depths N|exactN,..] [--only du|cp]
              [--trees T,..] [--states cold,hot]
       run.py --setup-peers          (install diskus and gdu, nothing else)
       run.py --markdown RESULTS     (the tables of a past run, as Markdown)
--states applies to the du trees and the cp files alike.
--quick: the 100k-file tree and the 1 GiB file (cold and hot), 2 rounds.
--tiny: development sizes (trees of 1/100, files of 16 MiB), results in
bench/results/coreutils-tiny.json.
Writes bench/results/coreutils[-quick].json (with --only, coreutils[-quick]-du.json
or -cp.json, leaving the other program's file alone) and one PNG per phase.
"""

import argparse
import collections
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT))

from bench.common import cache, machine, progress, ratios, results, run_record, runs  # noqa: E402

BIN_DIR = ROOT / "third_party" / "coreutils-bin"
BUILD_SCRIPT = ROOT / "apps" / "coreutils" / "build.sh"
DATA_DIR = ROOT / "data" / "coreutils"
TOOLS_DIR = DATA_DIR / "tools"
RESULTS_DIR = ROOT / "bench" / "results"

ENGINES = ("io_uring", "threads")
FULL_DEPTHS = (4, 16, 64)
AUTO_DEPTH = "auto"
FULL_ROUNDS = 3
QUICK_ROUNDS = 2
PEERS_READ_AGAINST = ("diskus", "stock copy_file_range")
# The floor of any copy in the cp tables: the sources read once, in 128 KiB
# reads (cp's chunk), and nothing written.  A reference, not a peer.
READ_ONLY = "read only (dd of=/dev/null)"
# cp's chunk, the block size of the dd runs below (bs=128k).
CP_CHUNK_BYTES = 128 * 1024
# A copy spread over two cores without foreactor: each file copied by two dd
# processes at once, a half each in 128 KiB blocks.  Where the machine gives
# a second busy core little (a virtual machine whose host steals one vCPU
# when both run), this peer shows it in the same rounds.
TWO_PROCESSES = "two processes (dd, a half each)"
NOT_FOREACTOR = ("stock", "stock copy_file_range", READ_ONLY, TWO_PROCESSES, "diskus", "gdu",
                 "system du", "find", "find walk-ahead")
# The device reference's request size: du's reads are inode and directory
# blocks of the filesystem (4 KiB).
DU_REQUEST_BYTES = 4096
RUN_TIMEOUT_SECONDS = 900
DU_GRAPH = "du_stat_entries"
CP_GRAPH = "cp_copy_chunks"
STAT_NAMES = ("intercepted", "issued_early", "consumed", "wasted", "mispredicted",
              "synchronous", "found_cached")
# diskus 0.7.0 with its own Cargo.lock (--locked) builds with old toolchains
# (Debian 12's rustc 1.63); later releases need a newer rustc.
DISKUS_VERSION = "0.7.0"
GDU_PACKAGE = "gdu"
CP_PLAIN_OPTIONS = ("--reflink=never", "--sparse=never")
COPY_CHUNK_BYTES = 16 << 20


# Installed programs run without a plugin: name -> (argv before the tree,
# argv after it, walk-ahead on, the plain configuration its ratio is to).
SYSTEM_CONFIGS = {
    "system du": (["/usr/bin/du"], [], False, "stock"),
    "system du walk-ahead": (["/usr/bin/du"], [], True, "stock"),
    "find": (["/usr/bin/find"], ["-size", "+1k"], False, "find"),
    "find walk-ahead": (["/usr/bin/find"], ["-size", "+1k"], True, "find"),
}
LIBRARY = BUILD_DIR / "libforeactor.so"


class MismatchError(RuntimeError):
    """A run printed or wrote something other than the stock program."""


# ---------------------------------------------------------------- data sets

class TreeSpec:
    """A du tree: `kind` 'wide' (directories x files) or 'deep' (generated)."""

    def __init__(self, key, kind, title, directories=0, files_per_directory=0, scale=1.0,
                 stored_as=None):
        self.key, self.kind, self.title = key, kind, title
        self.stored_as = stored_as or key
        self.directories = directories
        self.files_per_directory = files_per_directory
        self.scale = scale

    def description(self):
        return {"key": self.key, "kind": self.kind, "directories": self.directories,
                "files_per_directory": self.files_per_directory, "scale": self.scale}


class FileSpec:
    """A cp workload: `count` files of `size` bytes each, copied by one cp."""

    def __init__(self, key, title, count, size, stored_as=None):
        self.key, self.title, self.count, self.size = key, title, count, size
        self.stored_as = stored_as or key

    def description(self):
        return {"key": self.key, "count": self.count, "size": self.size}


def tree_specs(tiny):
    divisor, suffix = (100, "-tiny") if tiny else (1, "")
    return {
        "wide-100k": TreeSpec("wide-100k", "wide", "100 directories x 1,000 files",
                              100, 1000 // divisor, stored_as="wide-100k" + suffix),
        "wide-400k": TreeSpec("wide-400k", "wide", "100 directories x 4,000 files",
                              100, 4000 // divisor, stored_as="wide-400k" + suffix),
        "deep": TreeSpec("deep", "deep", "source-checkout-like tree",
                         scale=5.0 / divisor if tiny else 1.0, stored_as="deep" + suffix),
    }


def file_specs(tiny):
    gib, suffix = ((16 << 20), "-tiny") if tiny else ((1 << 30), "")
    return {
        "file-1g": FileSpec("file-1g", "one 1 GiB file", 1, gib, "file-1g" + suffix),
        "file-2g": FileSpec("file-2g", "one 2 GiB file", 1, 2 * gib, "file-2g" + suffix),
        "files-8x256m": FileSpec("files-8x256m", "8 files of 256 MiB (2 GiB)", 8, gib // 4,
                                 "files-8x256m" + suffix),
    }


def shown(path):
    """`path` relative to the repository when inside it, for messages."""
    try:
        return str(Path(path).relative_to(ROOT))
    except ValueError:
        return str(path)


def write_file(path, size, generator):
    """Writes `size` bytes drawn from `generator` to `path`."""
    with open(path, "wb") as output:
        left = size
        while left > 0:
            piece = min(left, COPY_CHUNK_BYTES)
            output.write(generator.randbytes(piece))
            left -= piece


def deep_tree_layout(scale, seed=7):
    """[(relative directory, [(file name, size), ...])] of the generated deep
    tree: depth-first, at most 9 levels, fan-out 0..6, files 0..25 per
    directory, sizes log-normal around 4 KiB.  `scale` shrinks the number of
    top-level directories (1.0: 80 of them, 49,643 files in all)."""
    generator = random.Random(seed)
    layout = []

    def fill(relative, level):
        files = min(25, int(generator.expovariate(1 / 7.0)))
        names = [(f"src_{index}.{generator.choice(('c', 'h', 'py', 'txt', 'md'))}",
                  min(1 << 20, int(generator.lognormvariate(8.3, 1.2))))
                 for index in range(files)]
        layout.append((relative, names))
        if level >= 9:
            return
        weights = (30, 28, 20, 10, 6, 4, 2) if level > 0 else (0, 0, 0, 0, 0, 0, 1)
        fan_out = generator.choices(range(7), weights)[0]
        if level == 0:
            fan_out = max(1, round(80 * scale))
        for index in range(fan_out):
            fill(f"{relative}/d{level}_{index}" if relative else f"d{level}_{index}", level + 1)

    fill("", 0)
    return layout


def build_tree(spec, path):
    """Creates the tree of `spec` under `path` (a fresh directory)."""
    generator = random.Random(spec.key)
    if spec.kind == "wide":
        layout = [(f"dir{d:03d}", [(f"file{f:05d}", generator.randrange(0, 4097))
                                   for f in range(spec.files_per_directory)])
                  for d in range(spec.directories)]
    else:
        layout = deep_tree_layout(spec.scale)
    files = directories = 0
    for relative, names in layout:
        directory = path / relative if relative else path
        directory.mkdir(parents=True, exist_ok=True)
        directories += 1
        for name, size in names:
            with open(directory / name, "wb") as output:
                output.write(b"x" * size)
            files += 1
    return {"files": files, "directories": directories}


def prepare_tree(spec):
    """The tree of `spec` under data/coreutils/trees/, built once; a manifest
    written last records what it holds, and a different or missing manifest
    means rebuilding it."""
    path = DATA_DIR / "trees" / spec.stored_as
    manifest = path.with_name(spec.stored_as + ".json")
    wanted = spec.description()
    if manifest.exists() and path.exists():
        recorded = json.loads(manifest.read_text())
        if recorded.get("spec") == wanted:
            return path, recorded["counts"]
    say(f"building tree {spec.key} ({spec.title}) under {shown(path)}")
    if path.exists():
        shutil.rmtree(path)
    if manifest.exists():
        manifest.unlink()
    path.mkdir(parents=True)
    counts = build_tree(spec, path)
    subprocess.run(["sync"], check=True)
    manifest.write_text(json.dumps({"spec": wanted, "counts": counts}) + "\n")
    return path, counts


def prepare_files(spec):
    """The source files of `spec` under data/coreutils/files/, built once
    (random bytes, seeded), with a manifest written last."""
    directory = DATA_DIR / "files" / spec.stored_as
    manifest = directory.with_name(spec.stored_as + ".json")
    paths = [directory / f"part{index}" for index in range(spec.count)]
    if (manifest.exists() and json.loads(manifest.read_text()) == spec.description()
            and all(p.exists() and p.stat().st_size == spec.size for p in paths)):
        return paths
    say(f"writing {spec.key} ({spec.title}) under {shown(directory)}")
    if directory.exists():
        shutil.rmtree(directory)
    if manifest.exists():
        manifest.unlink()
    directory.mkdir(parents=True)
    generator = random.Random(spec.key)
    for path in paths:
        write_file(path, spec.size, generator)
    subprocess.run(["sync"], check=True)
    manifest.write_text(json.dumps(spec.description()) + "\n")
    return paths


# ---------------------------------------------------------------- peers

def setup_diskus():
    """Installs diskus DISKUS_VERSION into data/coreutils/tools/bin with
    cargo (from PATH, or Debian's `cargo` package installed through apt);
    returns (path or None, reason when None)."""
    binary = TOOLS_DIR / "bin" / "diskus"
    if binary.exists():
        return binary, ""
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(cargo).exists():
        if os.geteuid() == 0:
            subprocess.run(["apt-get", "install", "-y", "-q", "cargo"], capture_output=True)
        cargo = shutil.which("cargo")
        if not cargo:
            return None, "no cargo on PATH and `apt-get install cargo` did not provide one"
    say(f"installing diskus {DISKUS_VERSION} with {cargo} (a minute or two)")
    completed = subprocess.run([cargo, "install", "diskus", "--version", DISKUS_VERSION,
                                "--locked", "--root", str(TOOLS_DIR), "-j", "2"],
                               capture_output=True, text=True)
    if completed.returncode != 0 or not binary.exists():
        tail = " | ".join(completed.stderr.strip().splitlines()[-3:])
        return None, f"`cargo install diskus --version {DISKUS_VERSION}` failed: {tail}"
    return binary, ""


def setup_gdu():
    """gdu from the Debian package (apt-get install gdu when root); returns
    (path or None, reason when None)."""
    found = shutil.which("gdu")
    if found:
        return Path(found), ""
    if os.geteuid() != 0:
        return None, "gdu is not installed and installing it needs root"
    completed = subprocess.run(["apt-get", "install", "-y", "-q", GDU_PACKAGE],
                               capture_output=True, text=True)
    found = shutil.which("gdu")
    if not found:
        tail = " | ".join(completed.stderr.strip().splitlines()[-3:])
        return None, f"`apt-get install {GDU_PACKAGE}` failed: {tail}"
    return Path(found), ""


def peer_commands(peers, tree):
    """{name: argv} of the installed peers for `tree`."""
    commands = {}
    if peers.get("diskus"):
        commands["diskus"] = [str(peers["diskus"]), str(tree)]
    if peers.get("gdu"):
        commands["gdu"] = [str(peers["gdu"]), "-n", "-p", "-s", "--no-prefix", str(tree)]
    return commands


# ---------------------------------------------------------------- running

def say(message):
    print(message, file=sys.stderr, flush=True)


def configurations(depths):
    """(name, engine, depth) of stock and every foreactor configuration."""
    return [("stock", None, None)] + [(f"{engine} {runs.depth_name(depth)}", engine, depth)
                                      for engine in ENGINES
                                      for depth in list(depths) + [AUTO_DEPTH]]


# What a run cost beside its wall time: CPU milliseconds (user + system
# time of the process and its threads), and the machine's steal time over
# the run (machine.steal_milliseconds(); None where not counted).
Usage = collections.namedtuple("Usage", "cpu_ms steal_ms")


def timed_run(argv, executable, environment, label):
    """Runs argv; returns (wall milliseconds, stdout bytes, Usage).  Raises
    on failure."""
    started = time.perf_counter()
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    steal_before = machine.steal_milliseconds()
    try:
        completed = runs.run_with_timeout(argv, environment, RUN_TIMEOUT_SECONDS,
                                          executable=executable, text=False,
                                          stdout_to_file=True)
    except runs.RunTimedOut as timed_out:
        timed_out.print_report(label)
        raise MismatchError(f"{label}: timed out after {RUN_TIMEOUT_SECONDS} s") from None
    elapsed_ms = (time.perf_counter() - started) * 1000
    steal_after = machine.steal_milliseconds()
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_ms = ((usage_after.ru_utime - usage_before.ru_utime)
              + (usage_after.ru_stime - usage_before.ru_stime)) * 1000
    if completed.returncode != 0:
        raise MismatchError(f"{label}: exit status {completed.returncode}: "
                            f"{completed.stderr.decode(errors='replace').strip()}")
    steal_ms = (steal_after - steal_before
                if steal_before is not None and steal_after is not None else None)
    return elapsed_ms, completed.stdout, Usage(cpu_ms, steal_ms)


def foreactor_run(program, arguments, engine, depth, stats_file, graph, label):
    """Runs the stock (engine None) or the foreactor build of `program` ('du'
    or 'cp') with argv[0] the stock name; returns (ms, stdout, statistics,
    Usage)."""
    executable = BIN_DIR / (program if engine is None else f"{program}-foreactor")
    if stats_file.exists():
        stats_file.unlink()
    environment = runs.foreactor_environment(engine, depth, stats_file)
    environment["LC_ALL"] = "C"
    elapsed_ms, stdout, usage = timed_run([program] + [str(a) for a in arguments],
                                          str(executable), environment, label)
    statistics = runs.read_graph_statistics(stats_file, graph) if engine else None
    return elapsed_ms, stdout, statistics, usage


def system_run(name, tree, stats_file, label):
    """Runs the installed program of SYSTEM_CONFIGS[name] over `tree`, under
    walk-ahead (libforeactor.so preloaded, no plugin) when the configuration
    says so; returns (ms, stdout, Usage)."""
    before, after, walk_ahead, _ = SYSTEM_CONFIGS[name]
    environment = runs.clean_environment()
    environment["LC_ALL"] = "C"
    if walk_ahead:
        environment.update({"LD_PRELOAD": str(LIBRARY), "FOREACTOR": "1",
                            "FOREACTOR_WALK_AHEAD": "1", "FOREACTOR_STATS": str(stats_file)})
    argv = before + [str(tree)] + after
    return timed_run(argv, argv[0], environment, label)


class Samples:
    """Per configuration, per round: milliseconds, extra ms, statistics."""

    def __init__(self, names, rounds):
        self.milliseconds = {name: [None] * rounds for name in names}
        self.cpu_milliseconds = {name: [None] * rounds for name in names}
        self.steal_milliseconds = {name: [None] * rounds for name in names}
        self.sync_milliseconds = {name: [None] * rounds for name in names}
        self.statistics = {name: [None] * rounds for name in names}

    def add(self, name, round_index, milliseconds, statistics=None, sync_ms=None, usage=None):
        self.milliseconds[name][round_index] = milliseconds
        if usage is not None:
            self.cpu_milliseconds[name][round_index] = usage.cpu_ms
            self.steal_milliseconds[name][round_index] = usage.steal_ms
        self.sync_milliseconds[name][round_index] = sync_ms
        self.statistics[name][round_index] = statistics

    def summary(self):
        stock = runs.median_or_none(self.milliseconds["stock"])
        plain_find = runs.median_or_none(self.milliseconds.get("find", []))
        stock_with_sync = runs.median_or_none(
            [a + b if a is not None and b is not None else None
             for a, b in zip(self.milliseconds["stock"], self.sync_milliseconds["stock"])])
        summary = {}
        for name, values in self.milliseconds.items():
            median = runs.median_or_none(values)
            is_find = SYSTEM_CONFIGS.get(name, (0, 0, 0, ""))[3] == "find"
            baseline = plain_find if is_find else stock
            baseline_samples = self.milliseconds["find" if is_find else "stock"]
            entry = {"median_ms": median, "ratio_to_stock": runs.ratio_or_none(median, baseline),
                     "time_ratio": ratios.paired_ratio(baseline_samples, values),
                     "ms_per_round": values,
                     "cpu_ms_per_round": self.cpu_milliseconds[name],
                     "median_cpu_ms": runs.median_or_none(self.cpu_milliseconds[name]),
                     "steal_ms_per_round": self.steal_milliseconds[name],
                     "median_steal_ms": runs.median_or_none(self.steal_milliseconds[name])}
            if is_find:
                entry["ratio_is_to"] = "find"
            syncs = self.sync_milliseconds[name]
            if any(value is not None for value in syncs):
                with_sync = runs.median_or_none(
                    [a + b if a is not None and b is not None else None
                     for a, b in zip(values, syncs)])
                entry["sync_ms_per_round"] = syncs
                entry["median_ms_with_sync"] = with_sync
                entry["ratio_to_stock_with_sync"] = runs.ratio_or_none(with_sync,
                                                                       stock_with_sync)
            statistics = [s for s in self.statistics[name] if s]
            if statistics:
                entry["statistics_median"] = {
                    stat: runs.median_or_none([s.get(stat) for s in statistics])
                    for stat in STAT_NAMES}
            summary[name] = entry
        return summary


def measure_du(spec, tree, state, configs, peers, rounds, context):
    """Every configuration and peer over `tree`, `rounds` times, cold or hot."""
    peer_argvs = peer_commands(peers, tree)
    names = [name for name, _, _ in configs] + list(peer_argvs) + list(SYSTEM_CONFIGS)
    samples = Samples(names, rounds)
    reference = context["du_reference"].get(spec.key)
    if reference is None:
        _, reference, _, _ = foreactor_run("du", [tree], None, None, context["stats_file"],
                                           DU_GRAPH, f"du {spec.key} reference")
        context["du_reference"][spec.key] = reference
    entries = [(name, engine, depth) for name, engine, depth in configs] + \
              [(name, "peer", None) for name in peer_argvs] + \
              [(name, "system", None) for name in SYSTEM_CONFIGS]
    for round_index in range(rounds):
        run_record.sample_load(context["record"])
        for name, engine, depth in runs.alternating_order(entries, round_index):
            label = f"du {spec.key} {state} {name} round {round_index + 1}"
            if state == "cold":
                context["cache_method"] = cache.drop_page_cache([tree])
            if engine == "system":
                elapsed_ms, stdout, usage = system_run(name, tree, context["stats_file"], label)
                # Each installed program must print what it prints plainly
                # (the plain run of the first round sets the reference).
                key = (spec.key, SYSTEM_CONFIGS[name][0][0], tuple(SYSTEM_CONFIGS[name][1]))
                expected = context["du_reference"].get(key)
                if SYSTEM_CONFIGS[name][0][0].endswith("/du"):
                    expected = reference
                if expected is None:
                    context["du_reference"][key] = expected = stdout
                if stdout != expected:
                    raise MismatchError(f"{label}: output differs from the plain program's")
                statistics = None
            elif engine == "peer":
                argv = peer_argvs[name]
                elapsed_ms, stdout, usage = timed_run(argv, argv[0], runs.clean_environment(),
                                                       label)
                context["peer_outputs"].setdefault(f"{spec.key} {name}",
                                                   stdout.decode(errors="replace").strip())
                statistics = None
            else:
                elapsed_ms, stdout, statistics, usage = foreactor_run(
                    "du", [tree], engine, depth, context["stats_file"], DU_GRAPH, label)
                if stdout != reference:
                    raise MismatchError(f"{label}: output differs from stock du's "
                                        f"({len(stdout.splitlines())} vs "
                                        f"{len(reference.splitlines())} lines)")
            samples.add(name, round_index, elapsed_ms, statistics, usage=usage)
            context["progress"].step(label)
    return samples.summary()


def metadata(path):
    status = path.stat()
    return {"mode": status.st_mode, "size": status.st_size, "uid": status.st_uid,
            "gid": status.st_gid}


def read_only_run(sources, label):
    """Reads `sources` as READ_ONLY says; returns (ms, Usage)."""
    script = 'for f in "$@"; do dd if="$f" of=/dev/null bs=128k status=none || exit 1; done'
    elapsed_ms, _, usage = timed_run(["sh", "-c", script, "sh"] + [str(s) for s in sources],
                                     "/bin/sh", runs.clean_environment(), label)
    return elapsed_ms, usage


def two_processes_run(sources, copies_dir, label):
    """Copies each of `sources` into `copies_dir` as TWO_PROCESSES says, one
    file after the other; returns (ms, Usage)."""
    script = ('while [ $# -gt 0 ]; do '
              'dd if="$1" of="$2" bs=128k count="$3" conv=notrunc status=none & first=$!; '
              'dd if="$1" of="$2" bs=128k skip="$3" seek="$3" conv=notrunc status=none; '
              'second=$?; wait $first || exit 1; [ $second -eq 0 ] || exit 1; shift 3; done')
    arguments = []
    for source in sources:
        blocks = (source.stat().st_size + CP_CHUNK_BYTES - 1) // CP_CHUNK_BYTES
        arguments += [str(source), str(copies_dir / source.name), str(blocks // 2)]
    elapsed_ms, _, usage = timed_run(["sh", "-c", script, "sh"] + arguments, "/bin/sh",
                                     runs.clean_environment(), label)
    return elapsed_ms, usage


def cp_entries(configs, state):
    """(name, engine, depth, cp options) of every run of a cp phase: the
    configurations, stock cp's copy_file_range path and, cold only, the
    sources read alone (READ_ONLY; hot, that is a copy out of memory) and
    copied by two processes (TWO_PROCESSES)."""
    entries = [(name, engine, depth, CP_PLAIN_OPTIONS) for name, engine, depth in configs]
    entries.append(("stock copy_file_range", None, None, ()))
    if state == "cold":
        entries += [(READ_ONLY, None, None, None), (TWO_PROCESSES, None, None, None)]
    return entries


def measure_cp(spec, sources, configs, rounds, state, context):
    """Copies `sources` with every configuration `rounds` times, cold (the
    sources dropped from the page cache before each copy) or hot (read once
    before the phase, nothing dropped), and cold also reads them alone
    (READ_ONLY) and copies them with two processes (TWO_PROCESSES) in the
    same rounds.  Every copy's write-back is flushed (sync, timed apart)
    and its folder removed before the next run."""
    copies_dir = DATA_DIR / "copies"
    entries = cp_entries(configs, state)
    samples = Samples([entry[0] for entry in entries], rounds)
    # One untimed copy first: the first copy of a phase paid a one-off cost
    # (1,127 ms against 409 ms for the same stock copy a round later, on a
    # 1 GiB file), which would fall on whichever configuration runs first.
    # Hot, the sources are read first, so that the warm-up copy finds them
    # cached too.
    if copies_dir.exists():
        shutil.rmtree(copies_dir)
    copies_dir.mkdir(parents=True)
    if state == "cold":
        context["cache_method"] = cache.drop_page_cache(sources)
    else:
        read_only_run(sources, f"cp {spec.key} hot: sources read into the page cache")
    warm_up_target = copies_dir if len(sources) > 1 else copies_dir / sources[0].name
    foreactor_run("cp", list(CP_PLAIN_OPTIONS) + sources + [warm_up_target], None, None,
                  context["stats_file"], CP_GRAPH, f"cp {spec.key} {state} warm-up")
    subprocess.run(["sync"], check=True)
    for round_index in range(rounds):
        run_record.sample_load(context["record"])
        for name, engine, depth, options in runs.alternating_order(entries, round_index):
            label = f"cp {spec.key} {state} {name} round {round_index + 1}"
            if copies_dir.exists():
                shutil.rmtree(copies_dir)
            copies_dir.mkdir(parents=True)
            if state == "cold":
                context["cache_method"] = cache.drop_page_cache(sources)
            if name == READ_ONLY:
                elapsed_ms, usage = read_only_run(sources, label)
                samples.add(name, round_index, elapsed_ms, None, None, usage)
                context["progress"].step(label)
                continue
            if name == TWO_PROCESSES:
                elapsed_ms, usage = two_processes_run(sources, copies_dir, label)
                statistics = None
            else:
                target = copies_dir if len(sources) > 1 else copies_dir / sources[0].name
                elapsed_ms, _, statistics, usage = foreactor_run(
                    "cp", list(options) + sources + [target], engine, depth,
                    context["stats_file"], CP_GRAPH, label)
            started = time.perf_counter()
            subprocess.run(["sync"], check=True)
            sync_ms = (time.perf_counter() - started) * 1000
            for source in sources:
                copy = copies_dir / source.name
                if subprocess.run(["cmp", "-s", str(source), str(copy)]).returncode != 0:
                    raise MismatchError(f"{label}: {copy} differs from {source}")
                if name == TWO_PROCESSES:
                    continue  # dd makes its file with its own mode: only the bytes count
                seen = context["cp_metadata"].setdefault(f"{spec.key} {source.name}",
                                                         (metadata(copy), label))
                if metadata(copy) != seen[0]:
                    raise MismatchError(f"{label}: metadata {metadata(copy)} of {copy}, but "
                                        f"{seen[1]} made {seen[0]}")
            samples.add(name, round_index, elapsed_ms, statistics, sync_ms, usage)
            context["progress"].step(label)
    if copies_dir.exists():
        shutil.rmtree(copies_dir)
    return samples.summary()


# ---------------------------------------------------------------- reporting

def judged_ratio(entry):
    """The ratio a target is judged on: the paired ratio of the rounds
    (bench/common/ratios.py) when recorded, else the ratio of medians."""
    paired = (entry.get("time_ratio") or {}).get("ratio")
    return paired if paired is not None else entry.get("ratio_to_stock")


def worst_judged(summary, keep):
    """(ratio, name) of the highest judged ratio among the configurations
    whose name `keep` accepts, or None when none has one."""
    ratios = [(judged_ratio(entry), name) for name, entry in summary.items()
              if keep(name) and judged_ratio(entry) is not None]
    return max(ratios) if ratios else None


def best_foreactor(summary):
    found = [(entry["ratio_to_stock"], name) for name, entry in summary.items()
             if name not in NOT_FOREACTOR and entry["ratio_to_stock"] is not None]
    return min(found) if found else None


def evaluate_targets(all_results):
    """The issue's targets, each with what was measured and whether it is met."""
    targets = []

    def add(target, measured, met):
        targets.append({"target": target, "measured": measured or "not measured",
                        "met": bool(met)})

    du_cold = all_results.get("du", {}).get("wide-100k", {}).get("cold")
    if du_cold:
        best = best_foreactor(du_cold)
        add("du, 100k files, cold: best foreactor at most 0.5x stock",
            best and f"{best[1]} {best[0]:.2f}x", best and best[0] <= 0.5)
        diskus = du_cold.get("diskus", {}).get("median_ms")
        if best and diskus:
            best_ms = du_cold[best[1]]["median_ms"]
            add("du, 100k files, cold: best foreactor no slower than diskus",
                f"{best[1]} {best_ms:.0f} ms vs diskus {diskus:.0f} ms", best_ms <= diskus)
    for tree, per_state in all_results.get("du", {}).items():
        cold = per_state.get("cold")
        if not cold:
            continue
        auto = judged_ratio(cold.get(f"io_uring {AUTO_DEPTH}", {}))
        add(f"walk-ahead, du {tree}, cold: du-foreactor (io_uring auto) at most 0.6x stock",
            auto and f"{auto:.2f}x", auto and auto <= 0.6)
        diskus = cold.get("diskus", {}).get("median_ms")
        auto_ms = cold.get(f"io_uring {AUTO_DEPTH}", {}).get("median_ms")
        if diskus and auto_ms:
            add(f"walk-ahead, du {tree}, cold: du-foreactor within 10% of diskus",
                f"{auto_ms:.0f} ms vs diskus {diskus:.0f} ms", auto_ms <= 1.1 * diskus)
        system = judged_ratio(cold.get("system du walk-ahead", {}))
        add(f"walk-ahead, du {tree}, cold: /usr/bin/du under --walk-ahead at most 0.7x stock",
            system and f"{system:.2f}x", system and system <= 0.7)
        find = judged_ratio(cold.get("find walk-ahead", {}))
        add(f"walk-ahead, find {tree} -size +1k, cold: at most 0.75x plain find",
            find and f"{find:.2f}x", find and find <= 0.75)
    for key, per_state in cp_phases(all_results).items():
        cold = per_state.get("cold")
        if cold:
            best = best_foreactor(cold)
            add(f"cp {key}, cold: best foreactor at most 0.8x stock read/write",
                best and f"{best[1]} {best[0]:.2f}x", best and best[0] <= 0.8)
            peer = judged_ratio(cold.get("stock copy_file_range", {}))
            if best and peer is not None:
                add(f"cp {key}, cold: best foreactor faster than stock copy_file_range",
                    f"{best[1]} {best[0]:.2f}x vs copy_file_range {peer:.2f}x", best[0] < peer)
        hot = per_state.get("hot")
        if hot:
            worst_auto = worst_judged(hot, lambda name: name.endswith(AUTO_DEPTH))
            worst = worst_judged(hot, lambda name: name not in NOT_FOREACTOR)
            add(f"cp {key}, hot: depth auto at most 1.02x stock read/write",
                worst_auto and f"worst {worst_auto[1]} {worst_auto[0]:.2f}x",
                worst_auto and worst_auto[0] <= 1.02)
            add(f"cp {key}, hot: every foreactor configuration at most 1.05x stock read/write",
                worst and f"worst {worst[1]} {worst[0]:.2f}x", worst and worst[0] <= 1.05)
    for tree, per_state in all_results.get("du", {}).items():
        hot = per_state.get("hot")
        if not hot:
            continue
        worst = worst_judged(
            hot, lambda name: name.endswith(AUTO_DEPTH) or name.endswith("walk-ahead"))
        add(f"du {tree}, hot: default settings (depth auto, walk-ahead) at most 1.03x",
            worst and f"worst {worst[1]} {worst[0]:.2f}x", worst and worst[0] <= 1.03)
    return targets


def format_count(value):
    return "-" if value is None else f"{value:,.0f}"


def table_lines(title, summary, with_sync=False):
    # The peer whose gain foreactor is read against: diskus for du, stock
    # cp's copy_file_range for cp.
    peer_name = next((name for name in PEERS_READ_AGAINST if name in summary), None)
    peer = (summary[peer_name].get("time_ratio") or {}).get("ratio") if peer_name else None
    header = ["configuration", "ms", "ratio", "paired ratio [95% interval]",
              f"share of {peer_name or 'peer'}'s gain", "CPU ms", "steal ms"]
    if with_sync:
        header += ["ms + sync", "ratio"]
    header += ["issued early", "consumed", "mispredicted"]
    lines = [f"**{title}** (median ms; ratio to stock, below 1 is faster)", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, entry in summary.items():
        def number(value, pattern):
            return "-" if value is None else pattern.format(value)
        row = [name, number(entry["median_ms"], "{:.0f}"),
               number(entry["ratio_to_stock"], "{:.2f}x"),
               ratios.format_ratio(entry.get("time_ratio")) if name != "stock" else "1",
               ratios.format_share(ratios.share_realized(
                   (entry.get("time_ratio") or {}).get("ratio"), peer))
               if name not in ("stock", peer_name, READ_ONLY, TWO_PROCESSES) else "-",
               number(entry.get("median_cpu_ms"), "{:.0f}"),
               number(entry.get("median_steal_ms"), "{:.0f}")]
        if with_sync:
            row += [number(entry.get("median_ms_with_sync"), "{:.0f}"),
                    number(entry.get("ratio_to_stock_with_sync"), "{:.2f}x")]
        stats = entry.get("statistics_median") or {}
        row += [format_count(stats.get(stat)) for stat in
                ("issued_early", "consumed", "mispredicted")]
        lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


def cp_phases(all_results):
    """{file key: {state: summary}} of the cp results.  Results files written
    before cp had a hot state hold one cold summary per file key."""
    return {key: {"cold": value} if "stock" in value else value
            for key, value in all_results.get("cp", {}).items()}


def phases_of(all_results):
    """[(program, workload, state, summary)] in a fixed order."""
    found = []
    for workload, per_state in all_results.get("du", {}).items():
        for state, summary in per_state.items():
            found.append(("du", workload, state, summary))
    for workload, per_state in cp_phases(all_results).items():
        for state, summary in per_state.items():
            found.append(("cp", workload, state, summary))
    return found


def markdown_report(data):
    lines = []
    for program, workload, state, summary in phases_of(data["results"]):
        lines += table_lines(f"{program} {workload}, {state} cache", summary,
                             with_sync=program == "cp")
    lines += ["**Targets**", ""]
    for target in data["targets"]:
        lines.append(f"- {'met' if target['met'] else '**not met**'}: {target['target']}: "
                     f"{target['measured']}")
    return "\n".join(lines) + "\n"


def plot(all_results, directory, prefix):
    """One bar chart (median ms per configuration) per phase, written to
    `directory` as PREFIX-PROGRAM-WORKLOAD-STATE.png; returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for program, workload, state, summary in phases_of(all_results):
        names = list(summary)
        values = [summary[name]["median_ms"] or 0 for name in names]
        figure, axes = plt.subplots(figsize=(max(6.0, 0.65 * len(names)), 4.2))
        colors = ["tab:gray" if name.startswith("stock") else
                  "tab:blue" if name.startswith("io_uring") else
                  "tab:orange" if name.startswith("threads") else "tab:green"
                  for name in names]
        bars = axes.bar(range(len(names)), values, color=colors)
        for bar, name in zip(bars, names):
            ratio = summary[name]["ratio_to_stock"]
            if ratio is not None:
                axes.annotate(f"{ratio:.2f}x", (bar.get_x() + bar.get_width() / 2,
                                                 bar.get_height()),
                              ha="center", va="bottom", fontsize=7)
        axes.set_xticks(range(len(names)))
        axes.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
        axes.set_ylabel("wall time, ms (median; lower is better)")
        axes.set_title(f"GNU {program} 9.1: {workload}, {state} cache", fontsize=10)
        axes.margins(y=0.12)
        figure.tight_layout()
        path = directory / f"{prefix}-{program}-{workload}-{state}.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        paths.append(path)
    return paths


# ---------------------------------------------------------------- main

def depth_list(text):
    try:
        depths = [runs.parse_depth(part) for part in text.split(",") if part.strip()]
    except ValueError:
        depths = []
    if not depths or "auto" in depths:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of positive depths or exactN: {text!r}")
    return depths


def name_list(text):
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of names: {text!r}")
    return names


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the 100k-file tree and the 1 GiB file (cold, hot), 2 rounds")
    parser.add_argument("--tiny", action="store_true",
                        help="development sizes (trees of 1/100, 16 MiB files)")
    parser.add_argument("--rounds", type=int, help="rounds per configuration (3; quick 2)")
    parser.add_argument("--hot-rounds", type=int,
                        help="rounds of the hot du states (default 3 x --rounds: a hot walk "
                             "takes 0.1-0.6 s, and its configurations differ by a few percent, "
                             "which 15 rounds on a shared VM do not resolve)")
    parser.add_argument("--depths", type=depth_list,
                        help="comma-separated fixed depths (4,16,64), each at most that "
                             "deep, or exactN for depth N whatever it costs "
                             "(FOREACTOR_EXACT_DEPTH=1); auto is always added")
    parser.add_argument("--only", choices=("du", "cp"), help="run only du or only cp")
    parser.add_argument("--output", type=Path,
                        help="results file (default bench/results/coreutils[-quick][-du|-cp].json)")
    parser.add_argument("--trees", type=name_list,
                        help="comma-separated du trees (wide-100k,wide-400k,deep; default all, "
                             "quick wide-100k)")
    parser.add_argument("--states", type=name_list,
                        help="comma-separated cache states of the du trees and the cp files "
                             "(cold,hot; default both)")
    parser.add_argument("--setup-peers", action="store_true",
                        help="install diskus and gdu, measure nothing")
    parser.add_argument("--markdown", metavar="RESULTS_JSON",
                        help="print the tables of a results file as Markdown, run nothing")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    if arguments.rounds is None:
        arguments.rounds = QUICK_ROUNDS if arguments.quick else FULL_ROUNDS
    if arguments.rounds <= 0:
        parser.error("--rounds must be positive")
    if arguments.hot_rounds is None:
        arguments.hot_rounds = 3 * arguments.rounds
    if arguments.hot_rounds <= 0:
        parser.error("--hot-rounds must be positive")
    return arguments


def build_programs():
    completed = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True,
                               env={**os.environ, "FOREACTOR_BUILD_DIR": str(BUILD_DIR)})
    if completed.returncode != 0:
        sys.exit(f"bench/coreutils/run.py: apps/coreutils/build.sh failed:\n"
                 f"{completed.stderr}")


def main():
    arguments = parse_arguments()
    if arguments.markdown:
        print(markdown_report(json.loads(Path(arguments.markdown).read_text())), end="")
        return 0
    peers, peer_notes = {}, {}
    # The peers walk trees: a cp run has no use for them.
    peer_setups = (() if arguments.only == "cp" and not arguments.setup_peers else
                   (("diskus", setup_diskus), ("gdu", setup_gdu)))
    for name, setup in peer_setups:
        path, reason = setup()
        peers[name] = path
        if path is None:
            peer_notes[name] = reason
            say(f"peer {name} skipped: {reason}")
    if arguments.setup_peers:
        return 0 if all(peers.values()) else 1
    build_programs()

    trees = tree_specs(arguments.tiny)
    files = file_specs(arguments.tiny)
    if arguments.quick:
        du_plan, cp_plan = [("wide-100k", ("cold", "hot"))], [("file-1g", ("cold", "hot"))]
    else:
        du_plan = [(key, ("cold", "hot")) for key in trees]
        cp_plan = [(key, ("cold", "hot")) for key in files]
    if arguments.trees:
        unknown = sorted(set(arguments.trees) - set(trees))
        if unknown:
            sys.exit(f"bench/coreutils/run.py: no tree {', '.join(unknown)} "
                     f"(trees: {', '.join(trees)})")
        du_plan = [(key, ("cold", "hot")) for key in trees if key in arguments.trees]
    if arguments.states:
        unknown = sorted(set(arguments.states) - {"cold", "hot"})
        if unknown:
            sys.exit(f"bench/coreutils/run.py: no cache state {', '.join(unknown)} (cold, hot)")
        du_plan = [(key, tuple(state for state in states if state in arguments.states))
                   for key, states in du_plan]
        cp_plan = [(key, tuple(state for state in states if state in arguments.states))
                   for key, states in cp_plan]
    if arguments.only == "du":
        cp_plan = []
    if arguments.only == "cp":
        du_plan = []
    depths = arguments.depths or FULL_DEPTHS
    configs = configurations(depths)
    prefix = "coreutils" + ("-tiny" if arguments.tiny else "-quick" if arguments.quick else "")
    # A run of one program writes its own file: it leaves the other's results
    # (of another run, with their own run record) where they are.
    results_name = prefix + (f"-{arguments.only}" if arguments.only else "") + ".json"
    record = run_record.begin("coreutils", DATA_DIR, DU_REQUEST_BYTES, arguments,
                              arguments.rounds, FULL_ROUNDS, QUICK_ROUNDS)

    started = time.monotonic()
    context = {"cache_method": None, "du_reference": {}, "peer_outputs": {},
               "cp_metadata": {}, "record": record, "progress": None}
    all_results = {"du": {}, "cp": {}}
    tree_counts = {}
    failure = None
    with tempfile.TemporaryDirectory(prefix="foreactor-coreutils-") as work_dir:
        context["stats_file"] = Path(work_dir) / "stats.json"
        try:
            tree_paths = {}
            for key, _ in du_plan:
                tree_paths[key], tree_counts[key] = prepare_tree(trees[key])
            file_paths = {key: prepare_files(files[key]) for key, _ in cp_plan}
            peer_count = sum(1 for path in peers.values() if path)
            total = (sum(arguments.hot_rounds if state == "hot" else arguments.rounds
                         for _, states in du_plan for state in states)
                     * (len(configs) + peer_count + len(SYSTEM_CONFIGS))
                     + sum(arguments.rounds * len(cp_entries(configs, state))
                           for _, states in cp_plan for state in states))
            context["progress"] = progress.Progress(total)
            for key, states in du_plan:
                for state in states:
                    if state == "hot":
                        foreactor_run("du", [tree_paths[key]], None, None,
                                      context["stats_file"], DU_GRAPH, f"du {key} warm-up")
                    all_results["du"].setdefault(key, {})[state] = measure_du(
                        trees[key], tree_paths[key], state, configs, peers,
                        arguments.hot_rounds if state == "hot" else arguments.rounds, context)
            for key, states in cp_plan:
                for state in states:
                    all_results["cp"].setdefault(key, {})[state] = measure_cp(
                        files[key], file_paths[key], configs, arguments.rounds, state, context)
        except (MismatchError, cache.CacheError) as error:
            failure = str(error)
        finally:
            if context["progress"] is not None:
                context["progress"].finish()
    elapsed = time.monotonic() - started
    if failure:
        print(f"\nFAILED, benchmark aborted: {failure}", file=sys.stderr)
        return 1

    copies = ", ".join(f"{key} ({'/'.join(states)})" for key, states in cp_plan)
    print(f"\nWhat ran: du over {', '.join(key for key, _ in du_plan) or 'nothing'}; cp of "
          f"{copies or 'nothing'}; {arguments.rounds} round(s), "
          f"{arguments.hot_rounds} for hot du; "
          f"{len(configs)} configurations alternating; {elapsed / 60:.1f} min in all.")
    print(f"Cold runs: before each one, {cache.describe_cache_drop(context['cache_method'])}.")
    print("Hot runs: du after one stock du of the tree, cp after the sources were read once; "
          "nothing dropped.")
    for name, reason in peer_notes.items():
        print(f"Peer {name} skipped: {reason}")
    print()
    for program, workload, state, summary in phases_of(all_results):
        print("\n".join(table_lines(f"{program} {workload}, {state} cache", summary,
                                    with_sync=program == "cp")))
    targets = evaluate_targets(all_results)
    print("Targets:")
    for target in targets:
        print(f"  [{'met' if target['met'] else 'NOT MET'}] {target['target']}: "
              f"{target['measured']}")
    print("\nEvery du run printed exactly stock du's lines; every copy was byte-identical to "
          "its source, with stock cp's mode, size, owner and group.")

    run_record.finish(record, [entry.get("time_ratio")
                               for _, _, _, summary in phases_of(all_results)
                               for name, entry in summary.items() if name != "stock"])
    # The plots go next to the results file: a run written elsewhere leaves
    # the default results' plots as they were.
    output_path = Path(arguments.output) if arguments.output else RESULTS_DIR / results_name
    output_path.parent.mkdir(parents=True, exist_ok=True)
    plots = plot(all_results, output_path.parent,
                 output_path.stem if arguments.output else prefix)
    output = results.write_json(output_path, {
        "benchmark": "coreutils",
        "quick": arguments.quick,
        "tiny": arguments.tiny,
        "command": "./run bench coreutils" + (" --quick" if arguments.quick else "")
                   + (f" --only {arguments.only}" if arguments.only else ""),
        "parameters": {
            "rounds": arguments.rounds,
            "hot_rounds": arguments.hot_rounds,
            "configurations": [name for name, _, _ in configs],
            "du_plan": {key: list(states) for key, states in du_plan},
            "cp_plan": {key: list(states) for key, states in cp_plan},
            "trees": {key: {**trees[key].description(), "title": trees[key].title,
                            **tree_counts.get(key, {})} for key, _ in du_plan},
            "files": {key: files[key].description() for key, _ in cp_plan},
            "du_command": "du TREE",
            "cp_command": "cp --reflink=never --sparse=never SOURCE... TARGET "
                          "(and stock `cp SOURCE... TARGET`)",
            "peers": {name: str(path) if path else None for name, path in peers.items()},
            "peer_versions": {"diskus": DISKUS_VERSION},
            "peers_skipped": peer_notes,
        },
        "run": record,
        "cold_cache_method": context["cache_method"],
        "elapsed_seconds": round(elapsed, 1),
        "results": all_results,
        "targets": targets,
        "peer_outputs": context["peer_outputs"],
    })
    print(f"\nresults written to {output}; plots: " + ", ".join(map(str, plots)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
