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

hold() asks the guest's page_reporting module (where it offers the
min_free_ms parameter: pages must stay free that long before they are
reported) to report nothing freed during the benchmark, and release() puts
the old value back; an exit of the Python process releases it too.  Pages
reported before the hold are still unbacked in the host, and the kernel keeps
them at the tail of its free lists: hold() writes once to a few GiB of
anonymous memory and frees it, so that the pages at the head, which the runs
allocate first, are backed.  Where the parameter is absent or not writable
nothing changes, and the record says so.  Baseline and foreactor runs see
the same memory either way.
"""

import atexit
import mmap
from pathlib import Path

MIN_FREE_MS = Path("/sys/module/page_reporting/parameters/min_free_ms")
# The longest wait the parameter takes (the development VM's kernel refuses
# more than 5 minutes): far longer than a page freed by emptying the cache
# stays free before the next run allocates it again.  Shorter waits are
# tried when a kernel refuses it.
HELD_MIN_FREE_MS = (300_000, 120_000, 60_000)

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


def hold(parameter=MIN_FREE_MS, touch=touch_memory):
    """Holds free page reporting until release() (or the process's exit),
    then backs the head of the free lists (`touch`, see above).

    Returns a dict for a results file: {"held": True, "parameter", "was",
    "now", "touched_gib"} when held, {"held": False, "why"} when not
    possible here."""
    try:
        was = parameter.read_text().strip()
    except OSError as error:
        return {"held": False, "why": f"{parameter}: {error.strerror or error}"}
    if str(parameter) in _held:
        return {"held": True, "parameter": str(parameter), "was": _held[str(parameter)],
                "now": was}
    refused = None
    for milliseconds in HELD_MIN_FREE_MS:
        try:
            parameter.write_text(str(milliseconds))
        except OSError as error:
            refused = error
            continue
        if not _held:
            atexit.register(release)
        _held[str(parameter)] = was
        touched = touch(min(TOUCH_BYTES, _available_bytes() // 3))
        return {"held": True, "parameter": str(parameter), "was": was, "now": str(milliseconds),
                "touched_gib": round(touched / (1 << 30), 1)}
    return {"held": False, "why": f"{parameter}: {refused.strerror or refused}"}


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
        return (f"free page reporting held during the run ({state['parameter']}: "
                f"{state['was']} -> {state['now']}"
                + (f"; {touched} GiB touched first" if touched is not None else "") + ")")
    return f"free page reporting: not held ({state.get('why')})"
