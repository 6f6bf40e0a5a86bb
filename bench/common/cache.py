"""Cold and hot page cache for measurements (DESIGN §8).

drop_page_cache() runs scripts/drop_caches.sh: as root it empties the whole
page cache; otherwise it evicts only the files it is given with
posix_fadvise(POSIX_FADV_DONTNEED).  describe_cache_drop() turns its report
into words for a results table.  warm_files() reads files once so that they
are fully cached; warm_fraction() caches a chosen share of a file's blocks
and cached_fraction() says what share is in memory.
"""

import os
import random
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DROP_CACHES_SCRIPT = ROOT / "scripts" / "drop_caches.sh"
READ_CHUNK_BYTES = 16 << 20


class CacheError(RuntimeError):
    """The cache could not be made cold: a cold measurement would be a lie."""


def drop_page_cache(files=(), script=DROP_CACHES_SCRIPT):
    """Makes the next reads of `files` come from the device.

    Returns the one-line report of the script ("drop_caches: ..." or
    "fadvise: ...").  Raises CacheError when neither method worked.
    """
    completed = subprocess.run(["bash", str(script)] + [str(path) for path in files],
                               capture_output=True, text=True)
    if completed.returncode != 0:
        detail = completed.stderr.strip() or f"exit status {completed.returncode}"
        raise CacheError(f"cannot make the cache cold: {detail}")
    return completed.stdout.strip()


def describe_cache_drop(message):
    """Says in words what drop_page_cache() reported having done (None: nothing)."""
    if message is None:
        return "nothing (no cold run)"
    if message.startswith("drop_caches:"):
        return "the whole page cache was emptied (sync; echo 3 > /proc/sys/vm/drop_caches)"
    if message.startswith("fadvise:"):
        return ("not being root, only the workload's files were evicted, with "
                "posix_fadvise(POSIX_FADV_DONTNEED)")
    return message


def warm_files(files):
    """Reads each file from start to end once, so that it is in the page cache.

    Returns the number of bytes read."""
    total = 0
    for path in files:
        with open(path, "rb", buffering=0) as data:
            while True:
                chunk = data.read(READ_CHUNK_BYTES)
                if not chunk:
                    break
                total += len(chunk)
    return total


def warm_fraction(path, fraction, block_bytes, seed):
    """Reads round(fraction x blocks) of the `block_bytes` blocks of `path`,
    chosen at random with `seed` (the same blocks for the same arguments),
    with readahead switched off for the reading descriptor so that only
    those blocks enter the page cache.  Returns the number of blocks read."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction {fraction} is not within [0, 1]")
    size = os.path.getsize(path)
    blocks = (size + block_bytes - 1) // block_bytes
    chosen = random.Random(seed).sample(range(blocks), round(fraction * blocks))
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_RANDOM)
        for block in sorted(chosen):
            os.pread(descriptor, block_bytes, block * block_bytes)
    finally:
        os.close(descriptor)
    return len(chosen)


def cached_fraction(path):
    """The share of `path`'s pages in the page cache (mincore, through
    util-linux's fincore), or None when fincore is not available."""
    try:
        completed = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES,SIZE",
                                    str(path)], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    fields = completed.stdout.split()
    if completed.returncode != 0 or len(fields) != 2:
        return None
    resident, size = int(fields[0]), int(fields[1])
    return resident / size if size > 0 else 1.0
