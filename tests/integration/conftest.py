"""Shared helpers of the integration tests.

Where things are:
  FOREACTOR_BUILD_DIR (default <repo>/build) holds libforeactor.so and, in
  tests/, the helper programs built from tests/integration/programs/.

The fixture tree (session-wide, read-only after creation) is what the helper
programs and the system programs read.  Its layout, relied upon by the
programs in programs/:

  small.txt        100 bytes of text
  medium.bin       70000 pseudo-random bytes
  large.bin        1 MiB + 7 pseudo-random bytes
  empty            0 bytes
  hole.bin         sparse: 4096 bytes at offset 1 MiB, nothing before
  link_to_small -> small.txt
  link_to_dir   -> dir
  dangling      -> does_not_exist
  dir/f000 .. dir/f299   file i holds (i * 37) % 3001 bytes
  dir/sub/a, b, c         tiny text files

Access times are set into the future and modification times into the past,
so that reading the tree (relatime) never changes what stat() reports: two
runs of a program over the tree see the very same struct stat.
"""

import os
import pathlib
import random
import shutil
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Variables that would change how a program under test behaves.
_CONTROLLED_VARIABLES = ("LD_PRELOAD", "LD_DEBUG", "LD_BIND_NOW")


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FOREACTOR_BUILD_DIR", REPO / "build")).resolve()


def library() -> pathlib.Path:
    path = build_dir() / "libforeactor.so"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the project first (./run build)")
    return path


def program(name: str) -> pathlib.Path:
    path = build_dir() / "tests" / name
    if not path.exists():
        pytest.fail(f"{path} is missing: build the project first (./run build)")
    return path


def environment(**variables: str) -> dict:
    """The test process's environment without any FOREACTOR* or loader
    variable, in the C locale, plus `variables`."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("FOREACTOR") and key not in _CONTROLLED_VARIABLES}
    env["LC_ALL"] = "C"
    env["TZ"] = "UTC"
    env.update(variables)
    return env


class Outcome:
    """What a finished process showed the world."""

    def __init__(self, completed: subprocess.CompletedProcess):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr

    def as_tuple(self):
        return (self.returncode, self.stdout, self.stderr)

    def __repr__(self):
        return (f"Outcome(returncode={self.returncode}, stdout={self.stdout[:2000]!r}, "
                f"stderr={self.stderr[:2000]!r})")


def run(command, env: dict, cwd=None, timeout: float = 120, check: bool = False) -> Outcome:
    completed = subprocess.run([str(part) for part in command], env=env, cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, timeout=timeout)
    outcome = Outcome(completed)
    if check and outcome.returncode != 0:
        pytest.fail(f"{command} failed: {outcome!r}")
    return outcome


def compile_c(source: str, output: pathlib.Path, *flags: str) -> pathlib.Path:
    """Writes the C `source` beside `output` (as OUTPUT's stem + .c) and
    compiles it into `output` with the system C compiler and `flags`;
    skips the calling test when there is no C compiler.  Returns `output`."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    source_path = output.with_name(output.name.split(".")[0] + ".c")
    source_path.write_text(source)
    subprocess.run([compiler, *flags, "-o", str(output), str(source_path)], check=True)
    return output


def fresh_directory(path: pathlib.Path) -> pathlib.Path:
    """Empties `path` (creating it if needed) and returns it."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _pseudo_random_bytes(seed: int, count: int) -> bytes:
    return random.Random(seed).randbytes(count)


def _freeze_times(root: pathlib.Path) -> None:
    """Sets atime one day ahead and mtime a year back on every entry,
    children before their directory, so later reads change no stat field."""
    now = time.time_ns()
    access = now + 24 * 3600 * 10**9
    modify = now - 365 * 24 * 3600 * 10**9
    for directory, subdirectories, files in os.walk(root, topdown=False):
        for name in files + subdirectories:
            os.utime(os.path.join(directory, name), ns=(access, modify), follow_symlinks=False)
    os.utime(root, ns=(access, modify))


def make_fixture_tree(root: pathlib.Path) -> pathlib.Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "small.txt").write_bytes(
        b"".join(b"line %02d of small.txt\n" % i for i in range(5))[:100].ljust(100, b"."))
    (root / "medium.bin").write_bytes(_pseudo_random_bytes(1, 70000))
    (root / "large.bin").write_bytes(_pseudo_random_bytes(2, (1 << 20) + 7))
    (root / "empty").write_bytes(b"")
    with open(root / "hole.bin", "wb") as hole:
        hole.seek(1 << 20)
        hole.write(_pseudo_random_bytes(3, 4096))
    os.symlink("small.txt", root / "link_to_small")
    os.symlink("dir", root / "link_to_dir")
    os.symlink("does_not_exist", root / "dangling")
    directory = root / "dir"
    directory.mkdir()
    for i in range(300):
        (directory / f"f{i:03d}").write_bytes(_pseudo_random_bytes(100 + i, (i * 37) % 3001))
    (directory / "sub").mkdir()
    for name in ("a", "b", "c"):
        (directory / "sub" / name).write_text(f"file {name}\n")
    os.sync()
    _freeze_times(root)
    return root


@pytest.fixture(scope="session")
def fixture_tree(tmp_path_factory) -> pathlib.Path:
    return make_fixture_tree(tmp_path_factory.mktemp("foreactor_fixture") / "tree")


@pytest.fixture
def scratch(tmp_path) -> pathlib.Path:
    """A directory a test may write to; a test that compares runs empties it
    with fresh_directory() before each run so that every run starts alike."""
    return fresh_directory(tmp_path / "scratch")
