#!/usr/bin/env python3
"""What each way of asking "would this read come from the page cache?" costs.

Issue 7 names the candidates for page-cache-aware issuing on Linux 6.x:
preadv2 with RWF_NOWAIT, cachestat(2), mincore(2) over a mapping, and
foreactor's own record of what it has read.  This benchmark measures the
three the kernel answers (the own record costs no call, but it cannot see
pages that other processes read in or that the kernel evicted), with
bench/cache_probe/cache_probe.c, built here with the system C compiler into
the build directory.  For 8 KiB ranges of a file of its own under
data/cache_probe/, half of it in the page cache and half dropped from it, it
reports the median time of one probe and the share of probes that answered
"cached"; the plain pread of a cached range is the reference.

Each round runs cache_probe once; the table shows, per way and region, the
median over rounds of each round's median.  This is a measurement, not a
test: nothing here fails because of a number.

Usage: run.py [--quick] [--rounds N] [--probes N] [--region-mib N] [--output FILE]
              [--no-device-reference]    (or: ./run bench cache_probe [--quick])
Writes bench/results/cache_probe.json (or --output).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT))

from bench.common import c_program, results, run_record  # noqa: E402

BUILD_DIR = Path(os.environ.get("FOREACTOR_BUILD_DIR", ROOT / "build"))
SOURCE = Path(__file__).resolve().parent / "cache_probe.c"
DATA_DIR = ROOT / "data" / "cache_probe"
RESULTS = ROOT / "bench" / "results" / "cache_probe.json"
WAYS = ["pread", "preadv2_nowait", "cachestat", "mincore_mapped", "mincore_map"]
REGIONS = ["cached", "dropped"]
PROBE_BYTES = 8192
FULL_ROUNDS = 7
QUICK_ROUNDS = 3


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 rounds over 64 MiB regions instead of 7 over 256 MiB")
    parser.add_argument("--rounds", type=int, help="runs of cache_probe (7; quick 3)")
    parser.add_argument("--probes", type=int, default=20_000,
                        help="probes per way of the cached region (20,000); the dropped region "
                             "gets one per MiB")
    parser.add_argument("--region-mib", type=int, help="size of each region in MiB (256; quick 64)")
    parser.add_argument("--output", type=Path, default=RESULTS,
                        help="results file (bench/results/cache_probe.json)")
    run_record.add_arguments(parser)
    arguments = parser.parse_args()
    if arguments.rounds is None:
        arguments.rounds = QUICK_ROUNDS if arguments.quick else FULL_ROUNDS
    if arguments.region_mib is None:
        arguments.region_mib = 64 if arguments.quick else 256
    if arguments.rounds <= 0 or arguments.probes <= 0 or arguments.region_mib <= 0:
        parser.error("--rounds, --probes and --region-mib must be positive")
    return arguments


def build_program(output_dir=BUILD_DIR / "bench" / "cache_probe"):
    """Compiles cache_probe.c into `output_dir`; returns the program's path."""
    return c_program.build(SOURCE, Path(output_dir) / "cache_probe")


def prepare_file(path, size_bytes):
    """A file of `size_bytes` random bytes at `path`, made once and reused."""
    if path.exists() and path.stat().st_size == size_bytes:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as out:
        remaining = size_bytes
        while remaining > 0:
            chunk = min(remaining, 1 << 20)
            out.write(os.urandom(chunk))
            remaining -= chunk
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    return path


def parse_output(text):
    """cache_probe's lines as {(way, region): (median ns, cached share)};
    a way the kernel lacks maps to (None, the errno name)."""
    answers = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) != 4:
            continue
        way, region, value, share = words
        if value == "unsupported":
            answers[(way, region)] = (None, share)
        else:
            answers[(way, region)] = (float(value), float(share))
    return answers


def run_once(program, data_file, region_bytes, probes):
    completed = subprocess.run([str(program), str(data_file), str(region_bytes), str(probes)],
                               capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        raise RuntimeError(f"cache_probe failed ({completed.returncode}): {completed.stderr.strip()}")
    return parse_output(completed.stdout)


def main():
    arguments = parse_arguments()
    program = build_program()
    record = run_record.begin("cache_probe", DATA_DIR, PROBE_BYTES, arguments, arguments.rounds,
                              FULL_ROUNDS, QUICK_ROUNDS)
    region_bytes = arguments.region_mib << 20
    data_file = prepare_file(DATA_DIR / f"probe-{arguments.region_mib}m.dat", 2 * region_bytes)
    samples = {}
    started = time.monotonic()
    for round_index in range(arguments.rounds):
        for key, answer in run_once(program, data_file, region_bytes, arguments.probes).items():
            samples.setdefault(key, []).append(answer)
        print(f"round {round_index + 1}/{arguments.rounds} done", file=sys.stderr)
    elapsed = time.monotonic() - started

    print()
    print(f"page-cache probes: 8 KiB ranges of {data_file.relative_to(ROOT)}, "
          f"{arguments.region_mib} MiB cached and {arguments.region_mib} MiB dropped, "
          f"median of {arguments.rounds} rounds ({elapsed:.0f} s)")
    print()
    header = f"{'way':16} {'region':8} {'ns/probe':>9} {'answered cached':>16}"
    print(header)
    print("-" * len(header))
    rows = []
    for way in WAYS:
        for region in REGIONS:
            answers = samples.get((way, region))
            if not answers:
                continue
            if answers[0][0] is None:
                print(f"{way:16} {region:8} {'unsupported (' + answers[0][1] + ')':>26}")
                rows.append({"way": way, "region": region, "unsupported": answers[0][1]})
                continue
            median = statistics.median(value for value, _ in answers)
            share = statistics.median(share for _, share in answers)
            print(f"{way:16} {region:8} {median:9.0f} {share:16.3f}")
            rows.append({"way": way, "region": region, "median_ns": median, "answered_cached": share,
                         "round_medians_ns": [value for value, _ in answers]})
    print()
    print("pread: the read itself, for reference.  preadv2_nowait: a hit is the read; a miss")
    print("fails with EAGAIN and may have started read-ahead.  The others read nothing.")
    run_record.finish(record, [])
    results.write_json(arguments.output, {
        "benchmark": "cache_probe",
        "rounds": arguments.rounds,
        "probes": arguments.probes,
        "region_mib": arguments.region_mib,
        "run": record,
        "results": rows,
    })
    print(f"results written to {arguments.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
