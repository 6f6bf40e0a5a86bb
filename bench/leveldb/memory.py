"""Limiting the memory (page cache included) of one benchmark run.

A run is started inside a memory cgroup whose limit is the memory the run
may use: its page cache (ratio x database size) plus an allowance for the
driver's own memory (trace, key table, latencies, block cache, memtable).
The kernel then keeps at most that much of the database's pages cached for
the run: cgroup v1 and v2 both charge page cache to the cgroup of the
process that brought a page in, and reclaim within the cgroup at its limit.
Pages that were cached before the run are charged elsewhere and would not
count: evict the database's files first (a cold start).

Where it is done, in order of preference:
  cgroup v1  /sys/fs/cgroup/memory/<name>/memory.limit_in_bytes (this machine)
  cgroup v2  /sys/fs/cgroup/<name>/memory.max (with the memory controller on)
  none       no limit could be set: MemoryLimit.kind is "none" and the run's
             results must say so (available() tells beforehand)

The process enters the cgroup itself before exec (wrap_command), so nothing
of it runs outside the limit.
"""

import os
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup/memory")
V2_ROOT = Path("/sys/fs/cgroup")


def _v2_usable():
    controllers = V2_ROOT / "cgroup.subtree_control"
    try:
        return "memory" in controllers.read_text().split()
    except OSError:
        return False


def available():
    """'v1', 'v2' or 'none': how a memory limit can be set here."""
    if (V1_ROOT / "memory.limit_in_bytes").exists() and os.access(V1_ROOT, os.W_OK):
        return "v1"
    if _v2_usable() and os.access(V2_ROOT, os.W_OK):
        return "v2"
    return "none"


class MemoryLimit:
    """A memory cgroup named `name` limited to `limit_bytes`, for as long as
    the `with` block lasts; removed afterwards (its charges go to the parent).

        with MemoryLimit("foreactor_leveldb", 300 << 20) as limit:
            subprocess.run(limit.wrap_command(["leveldb_driver", ...]))
            peak = limit.peak_bytes()
    """

    def __init__(self, name, limit_bytes):
        self.name = name
        self.limit_bytes = int(limit_bytes)
        self.kind = available()
        self.path = None

    def __enter__(self):
        if self.kind == "v1":
            self.path = V1_ROOT / self.name
            self.path.mkdir(exist_ok=True)
            # A cgroup left by an interrupted run may be above the new limit.
            (self.path / "memory.force_empty").write_text("0")
            (self.path / "memory.max_usage_in_bytes").write_text("0")
            (self.path / "memory.limit_in_bytes").write_text(str(self.limit_bytes))
        elif self.kind == "v2":
            self.path = V2_ROOT / self.name
            self.path.mkdir(exist_ok=True)
            (self.path / "memory.max").write_text(str(self.limit_bytes))
        return self

    def __exit__(self, *exception):
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:
                pass  # still has a process (killed run): left for the next run
        return False

    def wrap_command(self, command):
        """`command` made to enter the cgroup before it starts."""
        if self.path is None:
            return list(command)
        procs = self.path / "cgroup.procs"
        return ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh"] + [str(c) for c in command]

    def peak_bytes(self):
        """Most memory the cgroup used (v1: max_usage; v2: memory.peak where the
        kernel has it), or None."""
        name = {"v1": "memory.max_usage_in_bytes", "v2": "memory.peak"}.get(self.kind)
        try:
            return int((self.path / name).read_text()) if name else None
        except (OSError, ValueError):
            return None

    def anonymous_bytes(self):
        """Anonymous memory (not page cache) charged to the cgroup now, or None."""
        name, key = {"v1": ("memory.stat", "total_rss"), "v2": ("memory.stat", "anon")}.get(
            self.kind, (None, None))
        try:
            for line in (self.path / name).read_text().splitlines():
                field, value = line.split()
                if field == key:
                    return int(value)
        except (OSError, ValueError, TypeError):
            pass
        return None

    def describe(self):
        return {"kind": self.kind, "limit_bytes": self.limit_bytes if self.path else None,
                "peak_bytes": self.peak_bytes()}
