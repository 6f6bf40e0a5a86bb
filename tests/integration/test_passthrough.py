"""Outside a scope foreactor changes nothing a program can observe.

The passthrough programs call every interposed libc name (the fortified
build reaches __open_2, __read_chk, ...); each is built once linked with
libforeactor.so and once without it (the *_plain copies).  System programs
get the library through LD_PRELOAD.  In every case the output, the exit
status and what the program wrote must be byte-identical.
"""

import hashlib
import os
import shutil
import signal

import pytest

from conftest import environment, fresh_directory, library, program, run

PLAIN_NAMES = {
    "open", "open64", "openat", "openat64", "close", "read", "pread", "pread64", "write",
    "pwrite", "pwrite64", "lseek", "lseek64", "fstat", "fstat64", "stat", "stat64", "lstat",
    "lstat64", "fstatat", "fstatat64", "statx", "getdents64", "readv", "preadv", "preadv64",
    "writev", "pwritev", "pwritev64",
}
FORTIFIED_NAMES = {
    "__open_2", "__open64_2", "__openat_2", "__openat64_2", "__read_chk", "__pread_chk",
    "__pread64_chk",
}

# Idle configurations: the library is loaded but no scope is ever entered.
IDLE_ENVIRONMENTS = {
    "unset": {},
    "on": {"FOREACTOR": "1"},
    "on_threads_depth4": {"FOREACTOR": "1", "FOREACTOR_ENGINE": "threads", "FOREACTOR_DEPTH": "4"},
    # Every interposer ends in its raw-syscall stand-in instead of libc.
    "raw_syscalls": {"FOREACTOR_TEST_RAW_SYSCALLS": "1"},
}


def names_bound_to_foreactor(command, env) -> set:
    """The symbols the dynamic linker bound from the program itself to
    libforeactor.so (LD_DEBUG=bindings)."""
    outcome = run(command, dict(env, LD_DEBUG="bindings"))
    executable = os.path.basename(str(command[0]))
    names = set()
    for line in outcome.stderr.decode(errors="replace").splitlines():
        if f"binding file {executable} " not in line and f"/{executable} [" not in line:
            continue
        if "libforeactor.so" not in line.split(" to ", 1)[-1]:
            continue
        names.add(line.split("`", 1)[1].split("'", 1)[0])
    return names


@pytest.mark.parametrize("name,expected", [("passthrough", PLAIN_NAMES),
                                           ("passthrough_fortify", FORTIFIED_NAMES)])
def test_programs_reach_every_interposer(name, expected, fixture_tree, scratch):
    bound = names_bound_to_foreactor([program(name), fixture_tree, scratch], environment())
    assert expected <= bound, f"not bound to libforeactor.so: {sorted(expected - bound)}"


def test_fortified_build_calls_the_checking_entry_points():
    with open(program("passthrough_fortify_plain"), "rb") as executable:
        image = executable.read()
    for name in FORTIFIED_NAMES:
        assert name.encode() + b"\0" in image, name


@pytest.mark.parametrize("idle", sorted(IDLE_ENVIRONMENTS))
@pytest.mark.parametrize("name", ["passthrough", "passthrough_fortify"])
def test_program_output_identical_without_scope(name, idle, fixture_tree, scratch):
    reference_command = [program(name + "_plain"), fixture_tree, scratch]
    fresh_directory(scratch)
    reference = run(reference_command, environment())
    assert reference.returncode == 0, reference
    assert reference.stdout.count(b"\n") > 300, "the program printed too little"

    fresh_directory(scratch)
    observed = run([program(name), fixture_tree, scratch], environment(**IDLE_ENVIRONMENTS[idle]))
    assert observed.as_tuple() == reference.as_tuple()


@pytest.mark.parametrize("call", ["read", "pread", "pread64", "open", "open64", "openat",
                                  "openat64"])
def test_fortify_failures_identical(call, fixture_tree, scratch):
    shutil.copy(fixture_tree / "small.txt", scratch / "small.txt")
    reference = run([program("passthrough_fortify_plain"), "--fortify-failure", call, scratch],
                    environment())
    assert reference.returncode == -signal.SIGABRT, reference
    assert b"***" in reference.stderr
    for idle in ("unset", "on", "raw_syscalls"):
        observed = run([program("passthrough_fortify"), "--fortify-failure", call, scratch],
                       environment(**IDLE_ENVIRONMENTS[idle]))
        assert observed.as_tuple() == reference.as_tuple()
    assert not (scratch / "must_not_exist").exists()


# ------------------------------------------------------------ system programs

PYTHON_READER = r"""
import hashlib, os, sys
root, out = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name)
    st = os.lstat(path)
    print(name, st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, st.st_atime_ns, st.st_ctime_ns)
    if os.path.isfile(path):
        with open(path, "rb") as f:
            print(" ", hashlib.sha256(f.read()).hexdigest())
        fd = os.open(path, os.O_RDONLY)
        print(" ", os.pread(fd, 16, 3).hex(), os.fstat(fd).st_size, os.lseek(fd, 0, os.SEEK_END))
        os.close(fd)
for entry in sorted(os.scandir(os.path.join(root, "dir")), key=lambda e: e.name)[:50]:
    print(entry.name, entry.is_dir(), entry.stat().st_size)
try:
    os.stat(os.path.join(root, "dangling"))
except OSError as error:
    print("dangling:", error.errno)
with open(os.path.join(out, "written"), "wb") as f:
    f.write(b"x" * 100000)
fd = os.open(os.path.join(out, "positional"), os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b"hello", 4096)
os.writev(fd, [b"a", b"bc"])
os.close(fd)
print(sorted(os.listdir(out)))
"""


def skip_if_sanitized():
    """A library built with a sanitizer cannot be preloaded into programs
    built without it."""
    dependencies = run(["ldd", library()], environment()).stdout
    if b"libasan" in dependencies or b"libtsan" in dependencies:
        pytest.skip("libforeactor.so is built with a sanitizer")


def tree_digest(root) -> str:
    """Names, types, modes, sizes, link targets and contents of a tree."""
    digest = hashlib.sha256()
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for name in sorted(files + subdirectories):
            path = os.path.join(directory, name)
            status = os.lstat(path)
            digest.update(f"{os.path.relpath(path, root)} {status.st_mode} {status.st_size}\n".encode())
            if os.path.islink(path):
                digest.update(os.readlink(path).encode())
            elif os.path.isfile(path):
                with open(path, "rb") as contents:
                    digest.update(contents.read())
    return digest.hexdigest()


SYSTEM_COMMANDS = {
    "cat": lambda f, s: ["cat", f / "small.txt", f / "medium.bin", f / "large.bin", f / "empty",
                         f / "hole.bin", f / "link_to_small"],
    "ls": lambda f, s: ["ls", "-laR", "--time-style=full-iso", f],
    "cp": lambda f, s: ["cp", "-a", f, s / "copy"],
    "du": lambda f, s: ["du", "-a", f],
    "du_apparent": lambda f, s: ["du", "-ab", f],
    "sha256sum": lambda f, s: ["sha256sum"] + sorted((f / "dir").glob("f1*")) + [f / "large.bin"],
    "python3": lambda f, s: ["python3", "-c", PYTHON_READER, f, s],
}


@pytest.mark.parametrize("idle", ["unset", "on"])
@pytest.mark.parametrize("name", sorted(SYSTEM_COMMANDS))
def test_system_program_identical_with_preload(name, idle, fixture_tree, scratch):
    skip_if_sanitized()
    command = SYSTEM_COMMANDS[name](fixture_tree, scratch)
    fresh_directory(scratch)
    reference = run(command, environment())
    reference_tree = tree_digest(scratch)
    assert reference.returncode == 0, reference

    fresh_directory(scratch)
    env = environment(LD_PRELOAD=str(library()), **IDLE_ENVIRONMENTS[idle])
    observed = run(command, env)
    assert observed.as_tuple() == reference.as_tuple()
    assert tree_digest(scratch) == reference_tree


def test_preload_interposes_system_programs(fixture_tree):
    skip_if_sanitized()
    bound = names_bound_to_foreactor(["/usr/bin/cat", fixture_tree / "small.txt"],
                                     environment(LD_PRELOAD=str(library())))
    assert {"open", "read", "write", "close"} <= bound, bound
