"""Holding a virtual machine's free page reporting while a benchmark runs.

Some virtual machines hand memory the guest has freed back to the host
(virtio-balloon free page reporting, the kernel's page_reporting module).
Emptying the page cache for a cold run frees gigabytes at once; about a
second later the guest reports them, the host drops them, and the next run's
page-cache pages fault in the host when first touched.  On the development
VM that made a cold 1 GiB copy take 0.75 s or 1.0-3.6 s (system time 0.45 s
or 0.6-3.3 s) by chance, whatever the program; reading the same file took
0.65 s.  Whether a run lands in the slow mode depends on how long after the
drop it starts and which free pages the allocator picks, not on the program
measured: noise, which a real machine does not have.

hold() asks the guest's page_reporting module (where it offers these
parameters) to report nothing freed during the benchmark: min_free_ms (pages
must stay free that long before they are reported) and max_waiting_mib (more
free memory than that waiting is reported at once: emptying the cache of a
2 GiB copy passed the VM's 1,024 MiB).  release() puts the old values back;
an exit of the Python process releases them too.  Pages reported before the
hold are still unbacked in the host, and the kernel keeps them at the tail
of its free lists: hold() writes once to a few GiB of anonymous memory and
frees it, so that the pages at the head, which the runs allocate first, are
backed.  Where a parameter is absent or not writable nothing changes, and
the record says so.  Baseline and foreactor runs see the same memory either
way.  Two benchmarks holding at once in separate processes may leave the
parameters held after both end (the second saw the first's values): the VM
then only returns memory later.
"""

import mmap
from pathlib import Path

from bench.common import at_exit

PARAMETERS = Path("/sys/module/page_reporting/parameters")
# Each parameter held, with the values tried in turn until the kernel takes
# one.  min_free_ms: the longest wait the development VM's kernel takes is 5
# minutes, far longer than a page freed by emptying the cache stays free
# before the next run allocates it again.  max_waiting_mib: more than the
# machine's memory.
HELD = {"min_free_ms": (300_000, 120_000, 60_000),
        "max_waiting_mib": (1 << 20, 1 << 16)}

# At most this much memory is touched once by hold(), and at most a third
# of what is available: the page cache of a cold 2 GiB copy (read and
# written) fits.
TOUCH_BYTES = 6 << 30
TOUCH_CHUNK = 64 << 20

_held = {}  # path -> the value to restore


def _available_bytes(meminfo="/proc/meminfo"):
    try:
        for line in Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def touch_memory(total):
    """Writes to `total` bytes of fresh anonymous memory and frees it.
    Returns the number of bytes touched."""
    touched = 0
    block = b"\1" * TOUCH_CHUNK
    while touched < total:
        size = min(TOUCH_CHUNK * 16, total - touched)
        region = mmap.mmap(-1, size)
        try:
            for offset in range(0, size, TOUCH_CHUNK):
                region.write(block[:min(TOUCH_CHUNK, size - offset)])
        finally:
            region.close()
        touched += size
    return touched


def _hold_one(path, values):
    """Sets `path` to the first of `values` the kernel takes.  Returns
    (was, now) or raises OSError."""
    if str(path) in _held:
        return _held[str(path)], path.read_text().strip()
    was = path.read_text().strip()
    refused = None
    for value in values:
        try:
            path.write_text(str(value))
        except OSError as error:
            refused = error
            continue
        if not _held:
            at_exit.register(release)
        _held[str(path)] = was
        return was, str(value)
    raise refused


def hold(parameters=PARAMETERS, touch=touch_memory):
    """Holds free page reporting until release() (or the process's exit),
    then backs the head of the free lists (`touch`, see above).

    Returns a dict for a results file: {"held": True, "parameters": {name:
    [was, now]}, "touched_gib"} when every parameter of HELD was set,
    {"held": False, "why"} when not (whatever was set is released again)."""
    changed = {}
    for name, values in HELD.items():
        path = Path(parameters) / name
        try:
            changed[name] = list(_hold_one(path, values))
        except OSError as error:
            release()
            return {"held": False, "why": f"{path}: {error.strerror or error}"}
    touched = touch(min(TOUCH_BYTES, _available_bytes() // 3))
    return {"held": True, "parameters": changed, "touched_gib": round(touched / (1 << 30), 1)}


def release():
    """Restores every parameter hold() changed.  Safe to call more than once."""
    while _held:
        path, was = _held.popitem()
        try:
            Path(path).write_text(was)
        except OSError:
            pass  # nothing more can be done; the VM only keeps memory longer


def describe(state):
    """hold()'s result in a few words for a benchmark's header."""
    if not state:
        return "free page reporting: not recorded"
    if state.get("held"):
        touched = state.get("touched_gib")
        settings = ", ".join(f"{name} {was} -> {now}"
                             for name, (was, now) in state["parameters"].items())
        return (f"free page reporting held during the run ({settings}"
                + (f"; {touched} GiB touched first" if touched is not None else "") + ")")
    return f"free page reporting: not held ({state.get('why')})"
