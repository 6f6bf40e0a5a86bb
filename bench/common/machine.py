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
    """The block device holding `path`, its model and queue settings, as far
    as sysfs says."""
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
        disk = resolved if (resolved / "queue").exists() else resolved.parent  # a partition
        try:
            info["disk_dev"] = (disk / "dev").read_text().strip()  # the whole disk's major:minor
        except OSError:
            pass
        queue = disk / "queue"
        for detail in ("model", "vendor"):
            try:
                info[detail] = (disk / "device" / detail).read_text().strip()
            except OSError:
                pass
        try:
            info["size_gib"] = round(int((disk / "size").read_text()) * 512 / (1 << 30), 1)
        except (OSError, ValueError):
            pass
        for setting in ("rotational", "scheduler", "nr_requests", "read_ahead_kb",
                        "logical_block_size"):
            try:
                info[setting] = (queue / setting).read_text().strip()
            except OSError:
                pass
    return info


def filesystem_of(path, mountinfo="/proc/self/mountinfo"):
    """{"mount_point", "type", "source"} of the mount holding `path` (the
    longest mount point that is a prefix of its real path), or None."""
    real = os.path.realpath(path)
    best = None
    try:
        lines = Path(mountinfo).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        # id parent major:minor root mount-point options [optional...] - type source super
        fields = line.split()
        if "-" not in fields:
            continue
        separator = fields.index("-")
        mount_point = fields[4].replace("\\040", " ")
        inside = real == mount_point or real.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= len(best["mount_point"])):
            best = {"mount_point": mount_point, "type": fields[separator + 1],
                    "source": fields[separator + 2]}
    return best


def virtualization():
    """What this machine runs inside: {"vm": ..., "container": ...} as
    systemd-detect-virt says ("none" when it says none), else from the
    hypervisor flag of /proc/cpuinfo; None entries when unknown."""
    found = {"vm": None, "container": None}
    for kind in ("vm", "container"):
        try:
            completed = subprocess.run(["systemd-detect-virt", f"--{kind}"],
                                       capture_output=True, text=True, timeout=10)
            found[kind] = completed.stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            pass
    if found["vm"] is None:
        flags = _first_line_with("/proc/cpuinfo", "flags") or ""
        found["vm"] = "yes (cpuinfo hypervisor flag)" if "hypervisor" in flags.split() else None
    return found


def steal_milliseconds(stat="/proc/stat"):
    """Time the hypervisor kept this machine's CPUs from running while they
    had work (steal time, summed over all CPUs, since boot), in
    milliseconds at the kernel's tick resolution; None where the kernel
    does not count it.  A virtual machine's device emulation can run on the
    host CPUs its virtual CPUs run on: a run that keeps every virtual CPU
    busy while it does I/O may then lose CPU time that a run using one
    CPU does not, which the difference of two readings shows."""
    try:
        with open(stat) as lines:
            fields = lines.readline().split()
    except OSError:
        return None
    # "cpu user nice system idle iowait irq softirq steal ..."
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")


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
    """A dict describing this machine, and the device and filesystem under
    `data_path` (the commit and the load are recorded by run_record)."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _first_line_with("/proc/cpuinfo", "model name"),
        "memory_gib": _memory_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "root": os.geteuid() == 0,
        "data_folder": str(data_path),
        "device": device_of(data_path),
        "filesystem": filesystem_of(data_path),
        "virtualization": virtualization(),
    }


def describe(machine):
    """The machine of describe_machine() in one line."""
    device = machine.get("device") or {}
    filesystem = machine.get("filesystem") or {}
    virtual = machine.get("virtualization") or {}
    inside = [value for value in (virtual.get("vm"), virtual.get("container"))
              if value and value != "none"]
    model = " ".join(filter(None, (device.get("vendor"), device.get("model"))))
    disk = device.get("name", "?") + (f" ({model})" if model else "")
    if device.get("rotational") is not None:
        disk += ", rotational" if device["rotational"] == "1" else ", non-rotational"
    return (f"{machine.get('cpu') or 'unknown CPU'}, {machine.get('nproc')} cores, "
            f"{machine.get('memory_gib')} GiB, Linux {machine.get('kernel')}; "
            f"data on {disk}, {filesystem.get('type', '?')} at {filesystem.get('mount_point', '?')}"
            f"; {'inside ' + ' / '.join(inside) if inside else 'no virtualization detected'}")
