"""Scopes that meet fork(), threads, and a process where io_uring is
forbidden: results stay exactly those of plain system calls."""

import pytest

from conftest import environment, fresh_directory, program, run

IO_URING_PROBE = (
    "import ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "parameters = (ctypes.c_char * 120)()\n"
    "print(libc.syscall(425, 4, parameters), ctypes.get_errno())\n"
)


def on(engine: str, **more) -> dict:
    return environment(FOREACTOR="1", FOREACTOR_ENGINE=engine, FOREACTOR_DEPTH="16", **more)




@pytest.mark.parametrize("mode,engine", [
    ("fork", "io_uring"), ("fork", "threads"), ("fork", "sync"),
    ("threads", "io_uring"), ("threads", "threads"), ("threads", "sync"),
])
def test_scope_concurrency_identical(mode, engine, fixture_tree):
    command = [program("scope_concurrency"), mode, fixture_tree]
    reference = run(command, environment(), timeout=120)
    assert reference.returncode == 0, reference
    if mode == "fork":
        assert b"child exit: status 0" in reference.stdout
    observed = run(command, on(engine), timeout=120)
    assert observed.returncode == 0, observed
    assert observed.stdout == reference.stdout


def test_launcher_forbids_io_uring():
    forbidden = run([program("forbid_io_uring"), "python3", "-c", IO_URING_PROBE], environment(),
                    check=True)
    assert forbidden.stdout.split() == [b"-1", b"1"], forbidden  # EPERM


def foreactor_io_uring_messages(stderr: bytes) -> list:
    return [line for line in stderr.decode(errors="replace").splitlines()
            if line.startswith("foreactor") and "io_uring" in line]


@pytest.mark.parametrize("target", ["threads", "call_matrix"])
def test_io_uring_forbidden_falls_back_once(target, fixture_tree, tmp_path):
    scratch = tmp_path / "scratch"
    if target == "threads":
        command = [program("scope_concurrency"), "threads", fixture_tree]
    else:
        command = [program("call_matrix"), fixture_tree, scratch, "open_read_close",
                   "read_sequential", "pread_random", "statx_matrix", "copy_linked", "du_like"]
    launched = [program("forbid_io_uring")] + command
    fresh_directory(scratch)
    reference = run(launched, environment(), timeout=300)
    assert reference.returncode == 0, reference
    fresh_directory(scratch)
    observed = run(launched, on("io_uring"), timeout=300)
    assert observed.returncode == 0, observed
    assert observed.stdout == reference.stdout
    messages = foreactor_io_uring_messages(observed.stderr)
    assert len(messages) == 1, observed.stderr.decode(errors="replace")[-3000:]
