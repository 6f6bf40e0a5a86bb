"""What the device under a benchmark's data folder allows, measured in the
same run as the benchmark: fio random reads of the benchmark's own request
size, O_DIRECT, io_uring, at queue depths 1, 16 and 64, a few seconds each,
on a file in the data folder.

The gain from QD1 to QD64 is the most that issuing a serial program's reads
ahead can give on this device: the bound a cold random-read result is read
against (time ratio QD1 IOPS / QD64 IOPS; stats.share_realized).
"""

import json
import shutil
import subprocess
from pathlib import Path

DEPTHS = (1, 16, 64)
SECONDS_PER_DEPTH = 4
FILE_NAME = "device_reference.dat"
FILE_MIB = 1024


def fio_command(path, request_bytes, depth, seconds, file_mib):
    return ["fio", "--name=device_reference", f"--filename={path}", f"--size={file_mib}M",
            "--rw=randread", f"--bs={request_bytes}", "--direct=1", "--ioengine=io_uring",
            f"--iodepth={depth}", f"--runtime={seconds}", "--time_based",
            "--randrepeat=0", "--norandommap", "--output-format=json"]


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
            file_mib=FILE_MIB, run=subprocess.run):
    """Runs fio at each depth on data_folder/device_reference.dat (fio lays it
    out the first time; it stays for the next run).  Returns the record kept
    in the results file:
      {"request_bytes", "seconds_per_depth", "file", "file_mib", "fio",
       "depths": {"1": {"iops", "mean_latency_us", "p99_latency_us"}, ...},
       "qd64_time_ratio": QD1 IOPS / QD64 IOPS (the bound; None if missing)}
    or {"error": why} when fio is missing or fails (a filesystem without
    O_DIRECT, such as tmpfs)."""
    if shutil.which("fio") is None:
        return {"error": "fio is not installed (scripts/setup.sh installs it)"}
    folder = Path(data_folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    record = {"request_bytes": request_bytes, "seconds_per_depth": seconds,
              "file": str(path), "file_mib": file_mib, "fio": None, "depths": {}}
    for depth in depths:
        completed = run(fio_command(path, request_bytes, depth, seconds, file_mib),
                        capture_output=True, text=True)
        try:
            if completed.returncode != 0:
                raise ValueError(f"exit status {completed.returncode}: "
                                 f"{(completed.stderr or completed.stdout).strip()[-300:]}")
            figures = parse_fio_json(completed.stdout)
        except ValueError as error:
            return {"error": f"fio at queue depth {depth}: {error}", "file": str(path)}
        record["fio"] = figures.pop("fio")
        record["depths"][str(depth)] = figures
    record["qd64_time_ratio"] = time_ratio_bound(record)
    return record


def time_ratio_bound(record, depth=64):
    """QD1 IOPS / QD`depth` IOPS of a measure() record: the time ratio of a
    serial program whose reads were all issued `depth` deep.  None when the
    record has no such figures."""
    depths = (record or {}).get("depths") or {}
    serial, deep = depths.get("1"), depths.get(str(depth))
    if not serial or not deep or not deep["iops"]:
        return None
    return serial["iops"] / deep["iops"]


def describe(record):
    """One line for a benchmark's printed header."""
    if not record:
        return "device reference: not recorded"
    if record.get("skipped"):
        return f"device reference: skipped ({record['skipped']})"
    if record.get("error"):
        return f"device reference: failed ({record['error']})"
    depths = record["depths"]
    serial = depths.get("1", {}).get("iops")
    parts = []
    for depth, figures in depths.items():
        gain = f" ({figures['iops'] / serial:.1f}x QD1)" if serial and depth != "1" else ""
        parts.append(f"QD{depth} {figures['iops'] / 1000:.1f}k IOPS{gain}")
    size = record["request_bytes"]
    size_text = f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"
    return (f"device reference ({record.get('fio')}, {size_text} random reads, O_DIRECT, "
            f"io_uring, {record['seconds_per_depth']} s each): " + ", ".join(parts))

