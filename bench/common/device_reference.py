"""What the device under a benchmark's data folder allows, measured in the
same run as the benchmark: fio random reads of the benchmark's own request
size, O_DIRECT, io_uring, at queue depths 1, 2, 4, 16 and 64, a few
seconds each, on a file in the data folder.

The gain from QD1 to QD64 is the most that issuing a serial program's reads
ahead can give on this device: the bound a cold random-read result is read
against (time ratio QD1 IOPS / QD64 IOPS; stats.share_realized).

A second, smaller measurement reads through the page cache, as the
benchmarks' programs do and as foreactor's early reads of random ranges do:
BUFFERED_READS distinct random reads of a cold file (fio drops the file's
pages first, and reads no block twice) at queue depths 1, 2, 4 and 64.  Where
the kernel's work per buffered read costs the device part of its gain, the
QD1-to-QD64 gain through the page cache is the smaller of the two, and no
program whose reads stay buffered goes past it.

The shallow depths are for programs whose units of work make a few reads
each (a key-value Get): a unit of two reads has at most two in flight, and
the device's gain at depth 2, not at 64, is the most overlapping them can
give (gain_curve()).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

DEPTHS = (1, 2, 4, 16, 64)
BUFFERED_DEPTHS = (1, 2, 4, 64)
BUFFERED_READS = 20_000
SECONDS_PER_DEPTH = 4
FILE_NAME = "device_reference.dat"
FILE_MIB = 1024


def fio_command(path, request_bytes, depth, seconds, file_mib):
    return ["fio", "--name=device_reference", f"--filename={path}", f"--size={file_mib}M",
            "--rw=randread", f"--bs={request_bytes}", "--direct=1", "--ioengine=io_uring",
            f"--iodepth={depth}", f"--runtime={seconds}", "--time_based",
            "--randrepeat=0", "--norandommap", "--output-format=json"]


def buffered_fio_command(path, request_bytes, depth, reads, file_mib):
    """`reads` random reads through the page cache, none of a block read
    before in the job, after fio dropped the file's cached pages."""
    return ["fio", "--name=device_reference", f"--filename={path}", f"--size={file_mib}M",
            "--rw=randread", f"--bs={request_bytes}", "--direct=0", "--invalidate=1",
            "--ioengine=io_uring", f"--iodepth={depth}", f"--number_ios={reads}",
            "--randrepeat=0", "--output-format=json"]


def run_fio(command, run):
    """fio's figures for one command; raises ValueError when it fails."""
    completed = run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise ValueError(f"exit status {completed.returncode}: "
                         f"{(completed.stderr or completed.stdout).strip()[-300:]}")
    return parse_fio_json(completed.stdout)


def parse_fio_json(text):
    """{"iops", "mean_latency_us", "p99_latency_us", "fio"} of the read side of
    the single job of fio's --output-format=json output.  Raises ValueError
    when the output is not that, or fio reports a job error."""
    start = text.find("{")  # fio may print notes before the JSON document
    if start < 0:
        raise ValueError("no JSON in fio's output")
    document = json.loads(text[start:])
    jobs = document.get("jobs") or []
    if len(jobs) != 1:
        raise ValueError(f"fio reported {len(jobs)} jobs, expected 1")
    job = jobs[0]
    if job.get("error"):
        raise ValueError(f"fio job error {job['error']}")
    read = job["read"]
    percentiles = read.get("clat_ns", {}).get("percentile", {})
    p99 = percentiles.get("99.000000")
    return {"iops": read["iops"], "mean_latency_us": read["lat_ns"]["mean"] / 1000.0,
            "p99_latency_us": None if p99 is None else p99 / 1000.0,
            "fio": document.get("fio version")}


def measure(data_folder, request_bytes, depths=DEPTHS, seconds=SECONDS_PER_DEPTH,
            file_mib=FILE_MIB, run=subprocess.run, buffered_reads=BUFFERED_READS,
            flush=os.sync):
    """Flushes the page cache's dirty pages (`flush`), so that the write-back
    of earlier work (a build, a test run) does not run beside the reads
    measured, then runs fio at each depth on data_folder/device_reference.dat
    (fio lays it out the first time; it stays for the next run), then
    `buffered_reads` reads through the page cache at each of BUFFERED_DEPTHS
    (none when 0).
    Returns the record kept in the results file:
      {"request_bytes", "seconds_per_depth", "file", "file_mib", "fio",
       "depths": {"1": {"iops", "mean_latency_us", "p99_latency_us"}, ...},
       "qd64_time_ratio": QD1 IOPS / QD64 IOPS (the bound; None if missing),
       "page_cache": {"reads", "depths": {...} as above,
                      "qd64_time_ratio"} or {"error": why}  (when measured)}
    or {"error": why} when fio is missing or fails (a filesystem without
    O_DIRECT, such as tmpfs)."""
    if shutil.which("fio") is None:
        return {"error": "fio is not installed (scripts/setup.sh installs it)"}
    folder = Path(data_folder)
    folder.mkdir(parents=True, exist_ok=True)
    flush()
    path = folder / FILE_NAME
    record = {"request_bytes": request_bytes, "seconds_per_depth": seconds,
              "file": str(path), "file_mib": file_mib, "fio": None, "depths": {}}
    for depth in depths:
        try:
            figures = run_fio(fio_command(path, request_bytes, depth, seconds, file_mib), run)
        except ValueError as error:
            return {"error": f"fio at queue depth {depth}: {error}", "file": str(path)}
        record["fio"] = figures.pop("fio")
        record["depths"][str(depth)] = figures
    record["qd64_time_ratio"] = time_ratio_bound(record)
    if buffered_reads:
        page_cache = {"reads": buffered_reads, "depths": {}}
        for depth in BUFFERED_DEPTHS:
            try:
                figures = run_fio(
                    buffered_fio_command(path, request_bytes, depth, buffered_reads, file_mib), run)
            except ValueError as error:
                page_cache = {"error": f"fio through the page cache at queue depth {depth}: "
                                       f"{error}"}
                break
            figures.pop("fio")
            page_cache["depths"][str(depth)] = figures
        else:
            page_cache["qd64_time_ratio"] = time_ratio_bound(page_cache)
        record["page_cache"] = page_cache
    return record


def time_ratio_bound(record, depth=64):
    """QD1 IOPS / QD`depth` IOPS of a measure() record (or of its
    "page_cache" part): the time ratio of a serial program whose reads were
    all issued `depth` deep.  None when the record has no such figures."""
    depths = (record or {}).get("depths") or {}
    serial, deep = depths.get("1"), depths.get(str(depth))
    if not serial or not deep or not deep["iops"]:
        return None
    return serial["iops"] / deep["iops"]


def gain_curve(record):
    """{depth: gain} for every measured depth above 1 of a measure() record,
    through the page cache when that was measured (the reads of the
    benchmarks' programs are buffered), else O_DIRECT; None when the record
    has no such figures.  The gain at a depth is the most IOPS measured at
    that depth or a shallower one over the IOPS at depth 1, and at least 1:
    a program allowed n requests in flight can always keep fewer.  The form
    `foreactor bound --device-gain` takes as a curve (gains >= 1)."""
    page_cache = (record or {}).get("page_cache") or {}
    source = page_cache if page_cache.get("depths") and not page_cache.get("error") else record
    curve = {}
    best = 1.0
    for depth in sorted(int(depth) for depth in (source or {}).get("depths") or {}):
        time_ratio = time_ratio_bound(source, depth) if depth > 1 else None
        if time_ratio:
            best = max(best, 1 / time_ratio)
            curve[depth] = best
    return curve or None


def describe(record):
    """One line for a benchmark's printed header."""
    if not record:
        return "device reference: not recorded"
    if record.get("skipped"):
        return f"device reference: skipped ({record['skipped']})"
    if record.get("error"):
        return f"device reference: failed ({record['error']})"
    size = record["request_bytes"]
    size_text = f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"
    return (f"device reference ({record.get('fio')}, {size_text} random reads, O_DIRECT, "
            f"io_uring, {record['seconds_per_depth']} s each): "
            + describe_depths(record["depths"]) + describe_page_cache(record.get("page_cache")))


def describe_depths(depths):
    """"QD1 10.0k IOPS, QD64 50.0k IOPS (5.0x QD1)" for a record's "depths"."""
    serial = depths.get("1", {}).get("iops")
    parts = []
    for depth, figures in depths.items():
        gain = f" ({figures['iops'] / serial:.1f}x QD1)" if serial and depth != "1" else ""
        parts.append(f"QD{depth} {figures['iops'] / 1000:.1f}k IOPS{gain}")
    return ", ".join(parts)


def page_cache_bound(record):
    """QD1 IOPS / QD64 IOPS through the page cache of a measure() record;
    None when it was not measured or failed."""
    return time_ratio_bound((record or {}).get("page_cache"))


def describe_page_cache(page_cache):
    """The buffered part of describe()'s line ("" when not measured)."""
    if not page_cache:
        return ""
    if page_cache.get("error"):
        return f"; through the page cache: failed ({page_cache['error']})"
    return (f"; through the page cache ({page_cache['reads']:,} distinct reads of the cold "
            "file): " + describe_depths(page_cache["depths"]))

