#!/usr/bin/env python3
"""YCSB traces and LevelDB database images for the LevelDB benchmark, made
once under data/leveldb/ and reused.

An image of value size V holds about 1 GiB: 2^30 // (V + 24) records (24:
the length of a YCSB key, "user" and up to 20 digits), loaded by
leveldb_driver from YCSB's load trace in YCSB's (hashed) insert order, with
LevelDB's default options (4 MiB write buffer, 2 MiB tables), no
compression, and left as LevelDB's own compactions leave it: the driver
waits until no size compaction is due and does not call CompactRange, so
the image has level-0 files and several deeper levels, like a database that
has been written for a while (a full CompactRange would put everything in
one level and a Get would search one table).  A run trace reads about
200 MiB of values: 200 MiB // V operations.

The level-0 image of value size V (the published system's setup, through
LevelDB's public API): the default image with LEVEL0_TABLES level-0 tables
above its levels, made by `leveldb_driver --level0-tables` (updates of the
load trace's first keys in one large memtable, then log recovery with the
default 4 MiB write buffer while compactions are held: see
apps/leveldb/driver/level0_tables.h).  Its table files are hard links to
the default image's and the new tables' own files.  12 level-0 tables is
the state in which LevelDB stops writes until a compaction ran: the runs on
this image are read-only, with compactions held or LevelDB's own.

  images.py --value-size 1024 [--value-size 4096 ...] [--bloom-bits N] [--level0]
  images.py --all        every value size (128 B .. 64 KiB)
  images.py --records N  a smaller image (for trying things out)
Prints the image folders, their sizes and tables per level.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(os.environ.get("FOREACTOR_ROOT", Path(__file__).resolve().parents[2]))
DATA_DIR = ROOT / "data" / "leveldb"
TRACE_DIR = DATA_DIR / "traces"
IMAGE_DIR = DATA_DIR / "images"
PROGRAM_DIR = Path(os.environ.get("LEVELDB_BUILD_DIR", ROOT / "third_party" / "leveldb-build"))
MAKE_TRACE = ROOT / "apps" / "leveldb" / "ycsb" / "make_trace.py"
FETCH_YCSB = ROOT / "apps" / "leveldb" / "ycsb" / "fetch_ycsb.sh"

VALUE_SIZES = (128, 1024, 4096, 16384, 65536)
DEFAULT_VALUE_SIZE = 1024
IMAGE_BYTES = 1 << 30
RUN_READ_BYTES = 200 << 20
KEY_BYTES = 24
WORKLOADS = ("c", "a", "b", "d", "c-uniform")
# Images: LevelDB's own compactions' shape, and LEVEL0_TABLES level-0 tables above it.
KINDS = ("default", "level0")
LEVEL0_TABLES = 12
# LevelDB's default write buffer, the size of the level-0 tables; smaller
# for an image too small to update for LEVEL0_TABLES of them (--records).
LEVEL0_TABLE_KIB = 4096


def say(message):
    print(message, file=sys.stderr, flush=True)


def records_for(value_size):
    """Records of an image of about 1 GiB with values of `value_size` bytes."""
    return IMAGE_BYTES // (value_size + KEY_BYTES)


def operations_for(value_size):
    """Operations of a run trace that reads about 200 MiB of values."""
    return RUN_READ_BYTES // value_size


def ensure_trace(phase, records, workload="c", operations=0, value_size=DEFAULT_VALUE_SIZE):
    """Path of the YCSB trace, generated with the real YCSB when missing."""
    if phase == "load":
        path = TRACE_DIR / f"load-r{records}.trace"
    else:
        path = TRACE_DIR / f"{workload}-r{records}-o{operations}-v{value_size}.trace"
    if not path.exists():
        subprocess.run(["bash", str(FETCH_YCSB)], check=True)
        say(f"images: YCSB {phase} trace -> {path.name}")
        command = [sys.executable, str(MAKE_TRACE), "--phase", phase, "--records", str(records),
                   "--value-size", str(value_size), "--output", str(path)]
        if phase == "run":
            command += ["--workload", workload, "--operations", str(operations)]
        subprocess.run(command, check=True)
    return path


def image_path(value_size, records, bloom_bits=0, kind="default"):
    suffix = "" if kind == "default" else f"-level0x{LEVEL0_TABLES}"
    return IMAGE_DIR / f"v{value_size}-r{records}-bloom{bloom_bits}{suffix}"


def image_summary(image):
    """The load summary saved beside a finished image, or None when the image
    is missing or was not finished."""
    try:
        return json.loads(Path(str(image) + ".json").read_text())
    except (OSError, ValueError):
        return None


def ensure_image(value_size, records=None, bloom_bits=0, kind="default"):
    """Path of the image of `kind` (KINDS), built with the plain driver when
    missing (a level-0 image from the default one, built first if needed).
    The summary (files and bytes per level, build time) is saved as
    IMAGE.json; an image without it is incomplete and is built again."""
    records = records_for(value_size) if records is None else records
    image = image_path(value_size, records, bloom_bits, kind)
    if image_summary(image) is not None:
        return image
    load_trace = ensure_trace("load", records)
    command = [str(PROGRAM_DIR / "leveldb_driver"), "--db", str(image), "--load", str(load_trace),
               "--value-size", str(value_size), "--bloom-bits", str(bloom_bits)]
    if kind == "level0":
        base = ensure_image(value_size, records, bloom_bits)
        table_kib = max(64, min(LEVEL0_TABLE_KIB,
                                records * (value_size + KEY_BYTES) // (2 * LEVEL0_TABLES) >> 10))
        command += ["--clone-from", str(base), "--level0-tables", str(LEVEL0_TABLES),
                    "--write-buffer-kib", str(table_kib)]
        say(f"images: {LEVEL0_TABLES} level-0 tables above {base.name} into {image}")
    else:
        say(f"images: loading {records} records of {value_size} B into {image}")
    subprocess.run(["rm", "-rf", str(image)], check=True)
    image.parent.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"building {image} failed:\n{completed.stderr}")
    summary = json.loads(completed.stdout)
    summary.update({"value_size": value_size, "records": records, "kind": kind,
                    "bytes": image_bytes(image)})
    Path(str(image) + ".json").write_text(json.dumps(summary, indent=2) + "\n")
    return image


def image_bytes(image):
    """Total size of the image's files."""
    return sum(entry.stat().st_size for entry in Path(image).iterdir() if entry.is_file())


def image_files(image):
    """The image's files (to evict from or load into the page cache)."""
    return sorted(entry for entry in Path(image).iterdir() if entry.is_file())


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--value-size", type=int, action="append", default=[],
                        help="value size in bytes (repeatable)")
    parser.add_argument("--all", action="store_true", help="every value size")
    parser.add_argument("--records", type=int, help="records (default: about 1 GiB)")
    parser.add_argument("--bloom-bits", type=int, default=0, help="Bloom filter bits per key")
    parser.add_argument("--level0", action="store_true",
                        help=f"also the image with {LEVEL0_TABLES} level-0 tables")
    arguments = parser.parse_args()
    sizes = list(VALUE_SIZES) if arguments.all else (arguments.value_size or [DEFAULT_VALUE_SIZE])
    for value_size in sizes:
        for kind in KINDS if arguments.level0 else KINDS[:1]:
            image = ensure_image(value_size, arguments.records, arguments.bloom_bits, kind)
            print(describe(image))


def describe(image):
    """One line: an image's size and tables per level."""
    summary = image_summary(image)
    return (f"{image}: {summary['bytes'] / (1 << 20):.0f} MiB, tables per level "
            f"{summary['files_per_level']}, built in {summary['seconds']:.0f} s")


if __name__ == "__main__":
    main()
