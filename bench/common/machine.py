"""What a result was measured on: CPUs, memory, kernel, storage, load."""

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _first_line_with(path, prefix):
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _memory_gib():
    total = _first_line_with("/proc/meminfo", "MemTotal")
    if not total:
        return None
    return round(int(total.split()[0]) / (1 << 20), 1)


def device_of(path):
    """The block device holding `path` and its queue settings, as far as sysfs says."""
    try:
        device_number = os.stat(path).st_dev
    except OSError:
        return None
    major, minor = os.major(device_number), os.minor(device_number)
    info = {"dev": f"{major}:{minor}"}
    sys_dir = Path(f"/sys/dev/block/{major}:{minor}")
    if sys_dir.exists():
        resolved = sys_dir.resolve()
        info["name"] = resolved.name
        queue = resolved / "queue"
        if not queue.exists():  # a partition: the queue is its parent's
            queue = resolved.parent / "queue"
        for setting in ("rotational", "scheduler", "nr_requests", "read_ahead_kb",
                        "logical_block_size"):
            try:
                info[setting] = (queue / setting).read_text().strip()
            except OSError:
                pass
    return info


def git_commit(root=ROOT):
    """The commit the working tree is at (with '+changes' when a tracked file
    differs from it), or None.  Files under bench/results do not count: a
    benchmark describes the machine after writing its plots there."""
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "--", ".", ":(exclude)bench/results"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if not commit:
        return None
    return commit + ("+changes" if dirty else "")


def describe_machine(data_path=ROOT):
    """A dict describing this machine and the device under `data_path`."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _first_line_with("/proc/cpuinfo", "model name"),
        "memory_gib": _memory_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "root": os.geteuid() == 0,
        "device": device_of(data_path),
        "load_average": list(os.getloadavg()),
        "git_commit": git_commit(),
    }
