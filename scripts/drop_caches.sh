#!/usr/bin/env bash
# drop_caches.sh [FILE...]: makes the next reads of FILE... come from the
# device, for cold-cache measurements (DESIGN §8).
#
# As root: `sync; echo 3 > /proc/sys/vm/drop_caches`, which empties the whole
# page cache.  Otherwise (or when that file cannot be written, as in some
# containers): evicts only the given files with
# posix_fadvise(POSIX_FADV_DONTNEED), after writing back their dirty pages.
#
# Prints one line saying which was done, starting with "drop_caches:" or
# "fadvise:" so that scripts can tell.  Exits 1 when neither was possible.
set -euo pipefail

sync
if [ "$(id -u)" -eq 0 ] && { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then
  echo "drop_caches: emptied the page cache (/proc/sys/vm/drop_caches)"
  exit 0
fi

if [ $# -eq 0 ]; then
  echo "drop_caches.sh: cannot write /proc/sys/vm/drop_caches and no FILE given to evict" >&2
  exit 1
fi

python3 - "$@" <<'PYTHON'
import os
import sys

for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
print("fadvise: not root (or /proc/sys/vm/drop_caches not writable): evicted "
      + " ".join(sys.argv[1:]) + " with posix_fadvise(POSIX_FADV_DONTNEED)")
PYTHON
