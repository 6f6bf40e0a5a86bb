"""Building the small C programs of the benchmarks with the system compiler."""

import os
import shutil
import subprocess
from pathlib import Path


def build(source, program, flags=(), libraries=()):
    """Compiles the C11 file `source` into the executable `program` (its
    folder is made), with -O2 and warnings as errors, then `flags`, and links
    `libraries` (e.g. "-ldl").  $CC, else cc, else gcc.  Returns `program`;
    raises subprocess.CalledProcessError when the compiler fails."""
    program = Path(program)
    program.parent.mkdir(parents=True, exist_ok=True)
    compiler = os.environ.get("CC") or shutil.which("cc") or "gcc"
    subprocess.run([compiler, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", *flags,
                    "-o", str(program), str(source), *libraries], check=True)
    return program
