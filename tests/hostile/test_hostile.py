"""Hostile environments and a misbehaving plugin (programs/hostile_scope.cc).

Every case runs the same program without foreactor and with it (io_uring
and thread pool engines, depth 16, page-cache probing off so that calls
are really issued early), and requires byte-identical standard output, exit status 0,
and no hang (a timeout fails the test):

- signals: SIGALRM every 50 us, with and without SA_RESTART, while scopes wait;
- RLIMIT_NOFILE six above the lowest free descriptor: same descriptors,
  EMFILE at the same open (regression: the io_uring ring used to keep the
  lowest free number when it could not be moved high);
- RLIMIT_MEMLOCK 0; fork + exec inside a scope; threads created and joined
  while others are in scopes;
- a setuid-root copy run by nobody (AT_SECURE): foreactor stays off and says so;
- malformed environment values: reported, treated as off, same output;
- a misbehaving plugin (wrong arguments, wrong branch choices, callbacks
  that throw, garbage calls): same output; wrong arguments are counted.

About 15 s on this machine.
"""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ENGINES = ("io_uring", "threads")


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FOREACTOR_BUILD_DIR", REPO / "build")).resolve()


def program() -> pathlib.Path:
    path = build_dir() / "tests" / "hostile" / "hostile_scope"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the project first (./run build)")
    return path


def environment(**variables: str) -> dict:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("FOREACTOR") and key not in ("LD_PRELOAD", "LD_DEBUG")}
    env["LC_ALL"] = "C"
    env.update(variables)
    return env


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("hostile") / "data"
    path.write_bytes(os.urandom(1200 * 1024))
    path.chmod(0o644)
    return path


def run(command, env, timeout=120):
    return subprocess.run([str(part) for part in command], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=timeout)


def compare(arguments, tmp_path, extra=None):
    """Runs hostile_scope ARGUMENTS off and on; returns {engine: stats of its graphs}."""
    if os.environ.get("FOREACTOR_SANITIZED"):
        pytest.skip("not run against sanitized builds")
    baseline = run([program(), *arguments], environment())
    assert baseline.returncode == 0, baseline.stderr.decode(errors="replace")
    statistics = {}
    for engine in ENGINES:
        stats = tmp_path / f"stats-{engine}.json"
        env = environment(FOREACTOR="1", FOREACTOR_ENGINE=engine, FOREACTOR_PAGE_CACHE="0",
                          FOREACTOR_DEPTH="16", FOREACTOR_STATS=str(stats), **(extra or {}))
        done = run([program(), *arguments], env)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert done.stdout == baseline.stdout, f"{engine}: output differs from the plain run"
        statistics[engine] = json.loads(stats.read_text())["graphs"] if stats.exists() else {}
    return statistics


def issued(statistics: dict, engine: str) -> int:
    return sum(graph["issued_early"] for graph in statistics[engine].values())


@pytest.mark.parametrize("restart", ["restart", "norestart"])
def test_signals_during_waits(data_file, tmp_path, restart):
    statistics = compare(["signals", data_file, restart], tmp_path)
    assert all(issued(statistics, engine) > 0 for engine in ENGINES)


def test_descriptor_limit_nearly_exhausted(data_file, tmp_path):
    statistics = compare(["nofile", data_file], tmp_path)
    output = run([program(), "nofile", data_file], environment()).stdout.decode()
    assert "errno=24" in output  # EMFILE reached inside the scope
    assert all(issued(statistics, engine) > 0 for engine in ENGINES)


def test_memlock_limit_zero(data_file, tmp_path):
    compare(["memlock", data_file], tmp_path)


def test_fork_and_exec_inside_a_scope(data_file, tmp_path):
    statistics = compare(["forkexec", data_file, program()], tmp_path)
    assert all(issued(statistics, engine) > 0 for engine in ENGINES)


def test_threads_come_and_go_while_others_are_in_scopes(data_file, tmp_path):
    statistics = compare(["threads", data_file], tmp_path)
    assert all(issued(statistics, engine) > 0 for engine in ENGINES)


@pytest.mark.parametrize("kind", ["wrong-args", "wrong-branch", "throw-args", "throw-choice",
                                  "throw-result", "garbage"])
def test_misbehaving_plugin(data_file, tmp_path, kind):
    statistics = compare(["plugin", data_file, kind], tmp_path)
    for engine in ENGINES:
        graph = statistics[engine]["hostile_reads"]
        assert graph["consumed"] + graph["wasted"] + graph["cancelled"] <= graph["issued_early"]
        if kind == "wrong-args":
            assert graph["mispredicted"] > 0 and graph["wasted"] > 0, graph
        if kind == "throw-result":
            assert graph["consumed"] > 0, graph  # a throwing result callback is only ignored


MALFORMED = [
    {"FOREACTOR": "yes"},
    {"FOREACTOR_DEPTH": "-1"},
    {"FOREACTOR_DEPTH": "9" * 5000},
    {"FOREACTOR_ENGINE": "io_uring\n"},
    {"FOREACTOR_QUEUE_SIZE": "0x100"},
    {"FOREACTOR_WORKERS": "\u00e9"},
    {"FOREACTOR_DEPTH_hostile_reads": "abc"},
    {"FOREACTOR_PAGE_CACHE": "2"},
]


@pytest.mark.parametrize("values", MALFORMED, ids=[next(iter(v)) + "=" + next(iter(v.values()))[:12]
                                                   for v in MALFORMED])
def test_malformed_environment_values(data_file, tmp_path, values):
    baseline = run([program(), "reads", data_file, "100"], environment())
    stats = tmp_path / "stats.json"
    env = environment(FOREACTOR="1", FOREACTOR_STATS=str(stats))
    env.update(values)
    done = run([program(), "reads", data_file, "100"], env)
    assert done.returncode == 0
    assert done.stdout == baseline.stdout
    messages = [line for line in done.stderr.decode(errors="replace").splitlines()
                if line.startswith("foreactor:")]
    assert len(messages) == 1, messages  # reported, once
    if stats.exists():
        graphs = json.loads(stats.read_text()).get("graphs", {})
        assert all(graph["issued_early"] == 0 for graph in graphs.values())


def test_setuid_program_never_speculates(data_file, request):
    """A setuid-root copy run by nobody (AT_SECURE): foreactor must stay off."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv")
    # Outside pytest's private (0700) temporary tree: nobody must reach it.
    directory = pathlib.Path(tempfile.mkdtemp(prefix="foreactor-suid-"))
    request.addfinalizer(lambda: shutil.rmtree(directory, ignore_errors=True))
    directory.chmod(0o777)  # nobody writes the statistics here
    copy = directory / "hostile_scope"
    shutil.copy2(program(), copy)
    os.chown(copy, 0, 0)
    shared_data = directory / "data"
    shutil.copy2(data_file, shared_data)
    shared_data.chmod(0o644)
    data_file = shared_data
    baseline = run([program(), "reads", data_file, "100"], environment())
    results = {}
    for mode in (0o4755, 0o755):  # setuid, then the control: same user, no privilege
        copy.chmod(mode)
        stats = directory / f"stats-{mode:o}.json"
        stats.unlink(missing_ok=True)
        env = environment(FOREACTOR="1", FOREACTOR_PAGE_CACHE="0", FOREACTOR_DEPTH="16",
                          FOREACTOR_STATS=str(stats))
        done = run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", copy, "reads",
                    data_file, "100"], env)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert done.stdout == baseline.stdout
        graphs = json.loads(stats.read_text())["graphs"] if stats.exists() else {}
        results[mode] = (done.stderr.decode(errors="replace"),
                         sum(graph["issued_early"] for graph in graphs.values()))
    if "nosuid" in subprocess.run(["findmnt", "-no", "OPTIONS", "--target", str(copy)],
                                  stdout=subprocess.PIPE, text=True).stdout:
        pytest.skip("the temporary directory is mounted nosuid")
    setuid_stderr, setuid_issued = results[0o4755]
    assert "elevated privileges" in setuid_stderr
    assert setuid_issued == 0
    assert results[0o755][1] > 0, "control run: foreactor should have issued calls early"
