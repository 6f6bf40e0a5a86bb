"""A blkio cgroup that slows the reads of the processes in it from one disk.

For tests whose premise is a read that cannot finish while the kernel is
asked about it: a virtual disk whose host holds the file in memory can
serve a 4 KiB read within the RWF_NOWAIT call that starts it, so that an
evicted block reads as cached.  Needs the cgroup v1 blkio controller and
the right to make a cgroup under it (root)."""

import contextlib
import os
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")


@contextlib.contextmanager
def read_throttled_cgroup(disk, bytes_per_second):
    """A new blkio cgroup whose reads from `disk` ("major:minor", as
    machine.device_of() gives it) are limited to `bytes_per_second`; yields
    its cgroup.procs file (a process joins by writing its pid there), or
    None when the machine has no writable blkio controller.  The cgroup is
    removed on exit: its processes must have ended."""
    if not (BLKIO / "cgroup.procs").exists() or not os.access(BLKIO, os.W_OK):
        yield None
        return
    group = BLKIO / f"foreactor-read-throttle-{os.getpid()}"
    group.mkdir(exist_ok=True)
    try:
        (group / "blkio.throttle.read_bps_device").write_text(f"{disk} {bytes_per_second}")
        yield group / "cgroup.procs"
    finally:
        group.rmdir()
