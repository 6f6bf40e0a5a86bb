"""Fault injection: the program must see exactly what it sees without
foreactor under the same faults, and faults in foreactor's own machinery
must change nothing the program observes (DESIGN §2, rules 1 and 4).

Two layers, both driven by the random-graph interpreter
(tests/random_graphs/random_graph.cc), whose output (every result, errno,
buffer, stat field, directory entry, final file contents, descriptors left
open) must be byte-identical with foreactor off and on:

1. Faults of the system calls (EIO, EINTR, EAGAIN, ENOSPC, ENOMEM, short
   reads and writes), keyed by call identity: libforeactor_faults.so
   (fault_library.cc), preloaded after libforeactor.so, fails the libc calls
   of the baseline and of foreactor's synchronous paths; the fault-injecting
   engine of a -DFOREACTOR_FAULT_INJECTION=ON build (build-faults/, made by
   this test when missing) fails the requests issued early with the same
   schedule.  The fault library can also make every `new (std::nothrow)`
   fail (foreactor's allocations that can fail).  The same build injects engine faults
   (FOREACTOR_TEST_ENGINE_FAULTS: failed submissions, refused prepares,
   io_uring setup failure, no engine at all).
2. Faults of the kernel below a production build (build/): seccomp_fail
   makes io_uring_enter fail with EAGAIN/EBUSY/ENOMEM, io_uring_setup with
   ENOMEM, and thread creation (clone/clone3) fail.

Sizes: FAULT_SEEDS graph seeds per schedule (default 100; 1,000 with
FOREACTOR_LONG_TESTS=1).  About 30 s with an up-to-date build-faults (a cold
one takes ~4 min on 2 cores).
"""

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ENGINES = ("io_uring", "threads", "sync")
LONG = os.environ.get("FOREACTOR_LONG_TESTS", "0") == "1"
SEEDS = int(os.environ.get("FAULT_SEEDS", "1000" if LONG else "100"))
BATCH = 100  # graphs per process (a process may hold at most 256)


def plain_build() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FOREACTOR_BUILD_DIR", REPO / "build")).resolve()


def environment(**variables: str) -> dict:
    """This process's environment without FOREACTOR* or loader variables."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("FOREACTOR") and key not in ("LD_PRELOAD", "LD_DEBUG")}
    env["LC_ALL"] = "C"
    env.update(variables)
    return env


@pytest.fixture(scope="session")
def fault_build() -> pathlib.Path:
    """build-faults/: configured with FOREACTOR_FAULT_INJECTION=ON, built as needed."""
    if os.environ.get("FOREACTOR_SANITIZED"):
        pytest.skip("the fault build is not sanitized")
    path = pathlib.Path(os.environ.get("FOREACTOR_FAULTS_BUILD_DIR", REPO / "build-faults"))
    env = environment()
    if not (path / "build.ninja").exists():
        subprocess.run(["cmake", "-S", str(REPO), "-B", str(path), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DFOREACTOR_FAULT_INJECTION=ON"],
                       check=True, env=env, stdout=subprocess.DEVNULL, timeout=600)
    subprocess.run(["cmake", "--build", str(path), "-j", "2", "--target", "foreactor",
                    "foreactor_faults", "random_graph"],
                   check=True, env=env, stdout=subprocess.DEVNULL, timeout=1800)
    return path


def run_interpreter(build: pathlib.Path, workdir: pathlib.Path, first: int, count: int,
                    env: dict, prefix=()) -> bytes:
    """Runs random_graph for seeds first..first+count-1; returns stdout."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    command = [*prefix, build / "tests" / "random_graphs" / "random_graph", workdir, first, count]
    done = subprocess.run([str(part) for part in command], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    for line in done.stderr.decode(errors="replace").splitlines():
        assert "callbacks violations=0 " in line or not line.startswith("random_graph:"), line
    return done.stdout


def first_difference(expected: bytes, actual: bytes) -> str:
    seed = "?"
    for number, (left, right) in enumerate(zip(expected.splitlines(), actual.splitlines())):
        if left.startswith(b"== seed"):
            seed = left.decode()
        if left != right:
            return f"{seed}, line {number + 1}:\n  without: {left.decode()}\n  with:    {right.decode()}"
    return "outputs differ in length"


def parse_report(path: pathlib.Path) -> dict:
    """Sums the fault library's report lines ("checked=N family.kind=M ...")."""
    totals = {}
    if path.exists():
        for line in path.read_text().splitlines():
            for item in line.split():
                key, _, value = item.partition("=")
                totals[key] = totals.get(key, 0) + int(value)
    return totals


# (schedule name, fault seed, permille, first graph seed, machine faults)
SCHEDULES = [
    ("random-7", 7, 150, 1, ""),
    ("random-8", 8, 300, 1001, ""),
    ("submit-prepare", 11, 150, 2001, "submit:3,prepare:5"),
    ("io_uring-setup", 12, 150, 3001, "io_uring_setup"),
    ("no-engine", 13, 150, 4001, "engine_create"),
    ("rules", 0, 0, 5001, ""),
    ("nothrow-new", 14, 100, 6001, ""),  # every new (std::nothrow) fails, plus call faults
    # A non-pure call's fate drawn anew at each occurrence: a write that ran
    # twice (early, then again by the program) would show (findings 9, 10).
    ("per-occurrence", 15, 150, 7001, ""),
]
RULES = ("rule=write:/data2:*:*:short;rule=read:/data1:*:*:eio;rule=stat:/data0:*:*:eintr;"
         "rule=open:/data3:*:*:enomem;rule=read:/data0:*:*:short;rule=close:/new0:*:*:eio")


@pytest.mark.parametrize("name,fault_seed,permille,first,machine", SCHEDULES,
                         ids=[schedule[0] for schedule in SCHEDULES])
def test_call_faults_are_seen_exactly_as_without_foreactor(fault_build, tmp_path, name, fault_seed,
                                                           permille, first, machine):
    workdir = tmp_path / "w"  # one path for every run: paths are part of a fault's identity
    report = tmp_path / "report"
    library = f"{fault_build / 'libforeactor.so'} {fault_build / 'tests/faults/libforeactor_faults.so'}"
    schedule = f"under={workdir};window;report={report};"
    schedule += RULES if name == "rules" else f"random={fault_seed}/{permille}"
    if name in ("nothrow-new", "per-occurrence"):
        schedule += ";" + name
    count = SEEDS if name.startswith("random-7") else max(SEEDS // 2, 1)
    injected_total = 0
    for batch_first in range(first, first + count, BATCH):
        batch = min(BATCH, first + count - batch_first)
        report.unlink(missing_ok=True)
        baseline = run_interpreter(fault_build, workdir, batch_first, batch,
                                   environment(LD_PRELOAD=library, FOREACTOR_FAULTS=schedule))
        injected = parse_report(report)
        injected_total += sum(value for key, value in injected.items() if key != "checked")
        for engine in ENGINES:
            env = environment(LD_PRELOAD=library, FOREACTOR_FAULTS=schedule, FOREACTOR="1",
                              FOREACTOR_ENGINE=engine, FOREACTOR_PAGE_CACHE="0")
            if machine:
                env["FOREACTOR_TEST_ENGINE_FAULTS"] = machine
            output = run_interpreter(fault_build, workdir, batch_first, batch, env)
            assert output == baseline, (
                f"{name} {engine}: divergence under faults at {first_difference(baseline, output)}\n"
                f"replay: LD_PRELOAD='{library}' FOREACTOR_FAULTS='{schedule}' "
                f"{fault_build}/tests/random_graphs/random_graph {workdir} SEED 1 "
                f"(with and without FOREACTOR=1 FOREACTOR_ENGINE={engine} FOREACTOR_PAGE_CACHE=0"
                f"{' FOREACTOR_TEST_ENGINE_FAULTS=' + machine if machine else ''})")
    assert injected_total > 0, "the schedule injected no fault: the test would prove nothing"


def without_block_counts(output):
    """`output` with every stat's st_blocks masked: how many blocks a file
    being written holds depends on when its write-back ran (delayed
    allocation), which write-behind changes by design."""
    return re.sub(rb"blocks=\d+", b"blocks=*", output)


def test_write_behind_under_write_faults_changes_nothing(fault_build, tmp_path):
    """Every write node of the random graphs declares write-behind
    (tests/random_graphs/random_graph.cc), and a chunk of one page
    (FOREACTOR_TEST_WRITE_BEHIND_CHUNK_BYTES) lets their small files reach
    it: with short writes and write errors injected into the program's
    calls and the early ones, each engine's output equals the baseline's
    (block counts aside), and write-back hints were issued (the statistics
    say so)."""
    workdir = tmp_path / "w"
    report = tmp_path / "report"
    library = f"{fault_build / 'libforeactor.so'} {fault_build / 'tests/faults/libforeactor_faults.so'}"
    schedule = f"under={workdir};window;report={report};random=7/300"
    count = min(SEEDS, BATCH)
    baseline = run_interpreter(fault_build, workdir, 1, count,
                               environment(LD_PRELOAD=library, FOREACTOR_FAULTS=schedule))
    injected = parse_report(report)
    assert injected.get("write.short", 0) > 0, injected
    assert injected.get("write.eio", 0) + injected.get("write.enospc", 0) > 0, injected
    for engine in ("io_uring", "threads"):
        stats = tmp_path / f"stats-{engine}.json"
        output = run_interpreter(fault_build, workdir, 1, count,
                                 environment(LD_PRELOAD=library, FOREACTOR_FAULTS=schedule,
                                             FOREACTOR="1", FOREACTOR_ENGINE=engine,
                                             FOREACTOR_PAGE_CACHE="0", FOREACTOR_STATS=str(stats),
                                             FOREACTOR_TEST_WRITE_BEHIND_CHUNK_BYTES="4096"))
        output = without_block_counts(output)
        assert output == without_block_counts(baseline), \
            f"{engine}: {first_difference(without_block_counts(baseline), output)}"
        graphs = json.loads(stats.read_text())["graphs"]
        assert sum(graph.get("write_behind_requests", 0) for graph in graphs.values()) > 0


# seccomp filter items, engine
KERNEL_FAULTS = [
    ("io_uring_enter=EAGAIN", "io_uring"),
    ("io_uring_enter=EBUSY", "io_uring"),
    ("io_uring_enter=ENOMEM", "io_uring"),
    ("io_uring_setup=ENOMEM", "io_uring"),
    ("clone3=ENOSYS,clone=EAGAIN", "threads"),
    ("clone3=ENOSYS,clone=EAGAIN,io_uring_setup=EPERM", "io_uring"),
]


@pytest.mark.parametrize("items,engine", KERNEL_FAULTS, ids=[f"{i}-{e}" for i, e in KERNEL_FAULTS])
def test_kernel_refusing_foreactors_calls_changes_nothing(tmp_path, items, engine):
    """Regression for io_uring_enter errors reaching the program (fixed in src/engine)."""
    if os.environ.get("FOREACTOR_SANITIZED"):
        pytest.skip("a sanitizer runtime creates threads of its own")
    build = plain_build()
    helper = build / "tests" / "faults" / "seccomp_fail"
    if not helper.exists():
        pytest.fail(f"{helper} is missing: build the project first (./run build)")
    workdir = tmp_path / "w"
    count = min(SEEDS, BATCH)
    baseline = run_interpreter(build, workdir, 1, count, environment())
    output = run_interpreter(build, workdir, 1, count,
                             environment(FOREACTOR="1", FOREACTOR_ENGINE=engine),
                             prefix=(helper, items))
    assert output == baseline, f"{items}: {first_difference(baseline, output)}"


# Fixed findings (docs/RELIABILITY.md, 9 and 10), replayed as regression tests:
# (workdir, graph seed, fault seed, engine).  Paths are part of a fault's
# identity, so each replay uses the directory it was found in.
FIXED_FINDINGS = [
    # A pure call predicted on the wrong descriptor left the frontier behind: the
    # program's later calls passed through, and early writes (exact, "certain") ran again.
    ("/tmp/foreactor-finding-24/w", 24, 9, "threads"),
    # A link tail ran early although its head was mispredicted (the program made an
    # fstat where the graph said pread); the program's own pwrite then ran again.
    ("/tmp/fw/w", 26, 7, "threads"),
    # A write(2) issued early at the position after an earlier write(2) of the same
    # descriptor, which the faults made fail or come back short (finding 14): the
    # file grew where the program never wrote.
    ("/tmp/foreactor-finding-54/w", 54, 7, "io_uring"),
    ("/tmp/foreactor-finding-54/w", 54, 7, "threads"),
]


@pytest.mark.parametrize("workdir,seed,fault_seed,engine", FIXED_FINDINGS,
                         ids=[f"seed{finding[1]}-{finding[3]}" for finding in FIXED_FINDINGS])
def test_fixed_finding_early_write_never_runs_twice(fault_build, workdir, seed, fault_seed, engine):
    """With a per-occurrence schedule a write that runs twice gets two different fates."""
    workdir = pathlib.Path(workdir)
    library = f"{fault_build / 'libforeactor.so'} {fault_build / 'tests/faults/libforeactor_faults.so'}"
    schedule = f"under={workdir};random={fault_seed}/150;window;per-occurrence"
    try:
        baseline = run_interpreter(fault_build, workdir, seed, 1,
                                   environment(LD_PRELOAD=library, FOREACTOR_FAULTS=schedule))
        output = run_interpreter(fault_build, workdir, seed, 1,
                                 environment(LD_PRELOAD=library, FOREACTOR_FAULTS=schedule,
                                             FOREACTOR="1", FOREACTOR_ENGINE=engine,
                                             FOREACTOR_PAGE_CACHE="0"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert output == baseline, first_difference(baseline, output)
