#!/usr/bin/env python3
"""Checks that a program linked with a foreactor plugin keeps the plain
program's code layout.

A plugin attached at link time adds code to the program.  Linked before the
program's own objects and libraries, it moves every function of theirs, and
a plain program whose code merely sits elsewhere can run a few percent
slower or faster (LevelDB at 100% memory: 1.5% for 4,112 bytes), so a
comparison of the two programs would measure where the code landed, not
foreactor.  Linked after them (apps/leveldb/programs/CMakeLists.txt shows
how), the program's functions keep their distances from one another.

  tools/compare_code_layout.py PLAIN WITH_PLUGIN [PREFIX...]

compares the functions both executables define in .text (nm; a name
defined more than once is left out), those whose names start with a PREFIX
(all when none is given), and `main`: each must lie at the same distance
from `main` in both.  Prints how many were compared and the first that
moved; exits 0 when none moved, 1 when some did, 2 on a usage error or an
executable readelf or nm cannot read.
"""

import subprocess
import sys


def text_section(path):
    """(start, end) addresses of `path`'s .text section (readelf)."""
    sections = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True,
                              check=True).stdout.splitlines()
    for line in sections:
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".text":
            start, size = int(fields[3], 16), int(fields[5], 16)
            return start, start + size
    raise OSError(f"{path}: no .text section")


def functions(path):
    """{name: address} of the functions `path` defines in .text, each name
    defined once (a local name several objects define is left out: which
    of them is which cannot be told)."""
    start, end = text_section(path)
    listing = subprocess.run(["nm", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    addresses, repeated = {}, set()
    for fields in (line.split(None, 2) for line in listing):
        if len(fields) != 3 or fields[1] not in "tT" or not start <= int(fields[0], 16) < end:
            continue
        if fields[2] in addresses:
            repeated.add(fields[2])
        addresses[fields[2]] = int(fields[0], 16)
    return {name: address for name, address in addresses.items() if name not in repeated}


def moved_functions(plain, with_plugin, prefixes=()):
    """(names compared, names whose distance from main differs) for two
    {name: address} maps."""
    names = sorted(name for name in plain
                   if name in with_plugin and (not prefixes or name.startswith(tuple(prefixes))))
    if "main" not in names:
        names.append("main")
    moved = [name for name in names
             if with_plugin[name] - with_plugin["main"] != plain[name] - plain["main"]]
    return names, moved


def main(arguments):
    if len(arguments) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        plain, with_plugin = functions(arguments[0]), functions(arguments[1])
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"compare_code_layout: {error}", file=sys.stderr)
        return 2
    for path, table in ((arguments[0], plain), (arguments[1], with_plugin)):
        if "main" not in table:
            print(f"compare_code_layout: {path} defines no main", file=sys.stderr)
            return 2
    names, moved = moved_functions(plain, with_plugin, arguments[2:])
    print(f"{len(names)} functions compared, {len(moved)} moved"
          + (f" (first: {moved[0]})" if moved else ""))
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
