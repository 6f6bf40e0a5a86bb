"""Tests of the shared benchmark helpers (bench/common).

Run with: python3 -m pytest -q bench/common/tests
"""

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.common import c_program, cache, machine, progress, results, runs  # noqa: E402


def test_clean_environment_removes_everything_that_turns_foreactor_on():
    base = {"PATH": "/bin", "FOREACTOR": "1", "FOREACTOR_DEPTH": "4", "LD_PRELOAD": "x.so"}
    assert runs.clean_environment(base) == {"PATH": "/bin"}


def test_run_with_timeout_returns_what_the_program_printed():
    completed = runs.run_with_timeout(["sh", "-c", "echo out; echo err >&2; exit 3"],
                                      {"PATH": os.environ["PATH"]}, 30)
    assert (completed.returncode, completed.stdout, completed.stderr) == (3, "out\n", "err\n")


@pytest.mark.parametrize("text", (True, False))
def test_run_with_timeout_reads_back_what_the_program_wrote_to_its_output_file(text):
    script = "for i in $(seq 1 3000); do echo line $i; done; echo err >&2; test -f /dev/stdout"
    completed = runs.run_with_timeout(["sh", "-c", script], {"PATH": os.environ["PATH"]}, 30,
                                      text=text, stdout_to_file=True)
    expected = "".join(f"line {i}\n" for i in range(1, 3001))
    assert completed.returncode == 0  # its standard output was a regular file, not a pipe
    assert completed.stdout == (expected if text else expected.encode())
    assert completed.stderr == ("err\n" if text else b"err\n")


def test_a_run_past_its_timeout_is_killed_and_its_threads_recorded():
    with pytest.raises(runs.RunTimedOut) as timed_out:
        runs.run_with_timeout(["sleep", "30"], {"PATH": os.environ["PATH"]}, 0.5)
    assert timed_out.value.seconds == 0.5
    assert "1 threads" in timed_out.value.stacks
    assert "sleep" in timed_out.value.stacks
    pid = re.match(r"pid (\d+): ", timed_out.value.stacks).group(1)
    assert not os.path.exists(f"/proc/{pid}"), "killed and reaped"


def test_run_with_timeout_waits_for_the_end_without_polling(monkeypatch):
    # The program closes its standard streams and works on (as du does before
    # its exit handlers, where foreactor writes its statistics): the call
    # must wait for its end in the kernel.  Popen's wait with a timeout
    # polls with time.sleep(), which added up to 1.5 ms to such a run.
    def no_sleep(seconds):
        raise AssertionError(f"polled: time.sleep({seconds})")

    script = "exec >/dev/null 2>&1; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"
    monkeypatch.setattr(time, "sleep", no_sleep)
    for stdout_to_file in (False, True):
        completed = runs.run_with_timeout(["sh", "-c", script], {"PATH": os.environ["PATH"]}, 30,
                                          stdout_to_file=stdout_to_file)
        assert completed.returncode == 0


def test_foreactor_environment_plain_and_on():
    base = {"PATH": "/bin", "FOREACTOR_ENGINE": "sync"}
    assert runs.foreactor_environment(None, None, "s.json", base) == {"PATH": "/bin"}
    on = runs.foreactor_environment("threads", 16, "s.json", base)
    assert on == {"PATH": "/bin", "FOREACTOR": "1", "FOREACTOR_ENGINE": "threads",
                  "FOREACTOR_DEPTH": "16", "FOREACTOR_STATS": "s.json"}


def test_an_engine_setup_s_settings_come_last():
    off = runs.foreactor_environment(runs.EngineSetup("io_uring", {"FOREACTOR": "0"}), "auto",
                                     "s.json", {"PATH": "/bin"})
    assert off == {"PATH": "/bin", "FOREACTOR": "0", "FOREACTOR_ENGINE": "io_uring",
                   "FOREACTOR_DEPTH": "auto", "FOREACTOR_STATS": "s.json"}
    write_behind_off = runs.foreactor_environment(
        runs.EngineSetup("threads", {"FOREACTOR_WRITE_BEHIND": "0"}), 8, "s.json", {})
    assert write_behind_off["FOREACTOR"] == "1" and write_behind_off["FOREACTOR_WRITE_BEHIND"] == "0"


def test_an_exact_depth_keeps_the_depth_whatever_it_costs():
    on = runs.foreactor_environment("io_uring", "exact32", "s.json", {"PATH": "/bin"})
    assert on["FOREACTOR_DEPTH"] == "32"
    assert on["FOREACTOR_EXACT_DEPTH"] == "1"
    assert "FOREACTOR_EXACT_DEPTH" not in runs.foreactor_environment("io_uring", 32, "s.json")
    assert runs.depth_name("exact32") == "32 exact"
    assert runs.depth_name(16) == "16" and runs.depth_name("auto") == "auto"


def test_parse_depth_takes_numbers_exact_depths_and_auto():
    assert runs.parse_depth("16") == 16
    assert runs.parse_depth(" exact32 ") == "exact32"
    assert runs.parse_depth("auto") == "auto"
    for bad in ("0", "-4", "exact0", "exact", "deep", ""):
        with pytest.raises(ValueError):
            runs.parse_depth(bad)


def test_alternating_order_is_a_permutation_that_changes_between_rounds():
    items = ["a", "b", "c", "d"]
    orders = [runs.alternating_order(items, r) for r in range(8)]
    for order in orders:
        assert sorted(order) == items
    assert orders[0] == items
    assert orders[1] == list(reversed(items))
    assert orders[2] != orders[0]
    # Every item runs first in some round.
    assert {order[0] for order in orders} == set(items)
    assert runs.alternating_order([], 3) == []


def test_median_and_ratio_skip_missing_values():
    assert runs.median_or_none([3, None, 1, 2]) == 2
    assert runs.median_or_none([None]) is None
    assert runs.ratio_or_none(6, 3) == 2
    assert runs.ratio_or_none(None, 3) is None
    assert runs.ratio_or_none(1, 0) is None


def test_read_graph_statistics(tmp_path):
    stats = tmp_path / "stats.json"
    assert runs.read_graph_statistics(stats, "g") is None
    stats.write_text(json.dumps({"graphs": {"g": {"consumed": 3}}, "pid": 1}))
    assert runs.read_graph_statistics(stats, "g") == {"consumed": 3}
    assert runs.read_graph_statistics(stats, "other") is None
    stats.write_text("not json")
    assert runs.read_graph_statistics(stats, "g") is None


def test_sum_counters():
    total = runs.sum_counters([{"a": 1, "b": 2}, None, {"a": 4}], ("a", "b"))
    assert total == {"a": 5, "b": 2}
    assert runs.sum_counters([None, None], ("a",)) is None


def test_format_duration_and_estimate():
    assert progress.format_duration(42.4) == "42s"
    assert progress.format_duration(185) == "3m05s"
    assert progress.format_duration(3720) == "1h02m"
    assert progress.format_duration(-5) == "0s"
    assert progress.estimate_left(0, 10, 5.0) is None
    assert progress.estimate_left(2, 10, 4.0) == pytest.approx(16.0)


def test_progress_prints_estimate_to_a_log():
    now = [100.0]
    stream = io.StringIO()
    bar = progress.Progress(4, stream=stream, interval_seconds=0, clock=lambda: now[0])
    now[0] += 10
    bar.step("first")
    assert "1/4" in stream.getvalue()
    assert "ETA 30s" in stream.getvalue()
    assert "first" in stream.getvalue()


def test_progress_in_a_log_is_rate_limited():
    now = [0.0]
    stream = io.StringIO()
    bar = progress.Progress(100, stream=stream, interval_seconds=60, clock=lambda: now[0])
    for _ in range(10):
        now[0] += 1
        bar.step()
    assert len(stream.getvalue().splitlines()) == 1


def test_write_json_replaces_the_file_whole(tmp_path):
    path = tmp_path / "sub" / "out.json"
    results.write_json(path, {"a": 1})
    results.write_json(path, {"b": [1, 2]})
    assert json.loads(path.read_text()) == {"b": [1, 2]}
    assert not (tmp_path / "sub" / "out.json.tmp").exists()


def test_describe_cache_drop():
    assert "emptied" in cache.describe_cache_drop("drop_caches: emptied the page cache")
    assert "posix_fadvise" in cache.describe_cache_drop("fadvise: evicted x")
    assert cache.describe_cache_drop(None).startswith("nothing")


def test_drop_page_cache_reports_failure(tmp_path):
    failing = tmp_path / "fail.sh"
    failing.write_text("echo cannot >&2; exit 1\n")
    with pytest.raises(cache.CacheError, match="cannot"):
        cache.drop_page_cache([], script=failing)
    working = tmp_path / "ok.sh"
    working.write_text('echo "fadvise: evicted $*"\n')
    assert cache.drop_page_cache(["f"], script=working) == "fadvise: evicted f"


def test_warm_files_reads_every_byte(tmp_path):
    data = tmp_path / "data"
    data.write_bytes(os.urandom(12345))
    assert cache.warm_files([data, data]) == 2 * 12345


def test_git_commit_ignores_the_benchmarks_own_results(tmp_path):
    def git(*arguments):
        subprocess.run(["git", "-C", str(tmp_path), *arguments], check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "x.json").write_text("{}")
    (tmp_path / "code.c").write_text("int x;")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    commit = machine.git_commit(tmp_path)
    assert len(commit) == 40
    # A benchmark's own output, written before the machine is described.
    (tmp_path / "bench" / "results" / "x.json").write_text('{"new": 1}')
    assert machine.git_commit(tmp_path) == commit
    (tmp_path / "code.c").write_text("int y;")
    assert machine.git_commit(tmp_path) == commit + "+changes"


def test_describe_machine_has_the_basics():
    description = machine.describe_machine(ROOT)
    assert description["nproc"] == os.cpu_count()
    assert description["kernel"]
    assert description["device"]["dev"]


def test_steal_milliseconds_reads_the_eighth_field_of_the_cpu_line(tmp_path):
    stat = tmp_path / "stat"
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(f"cpu  10 0 5 100 2 0 1 {3 * ticks} 0 0\ncpu0 1 0 1 1 1 0 0 0 0 0\n")
    assert machine.steal_milliseconds(stat) == 3000
    stat.write_text("cpu  10 0 5 100\n")  # a kernel that does not count it
    assert machine.steal_milliseconds(stat) is None
    assert machine.steal_milliseconds(tmp_path / "absent") is None
    assert machine.steal_milliseconds() is not None  # Linux counts it since 2.6.11


def test_warm_fraction_reads_the_asked_share_and_rejects_bad_fractions(tmp_path):
    data = tmp_path / "data"
    data.write_bytes(b"x" * (100 * 8192))
    assert cache.warm_fraction(data, 0.25, 8192, 1) == 25
    assert cache.warm_fraction(data, 0.0, 8192, 1) == 0
    assert cache.warm_fraction(data, 1.0, 8192, 1) == 100
    with pytest.raises(ValueError):
        cache.warm_fraction(data, 1.5, 8192, 1)


def test_cached_fraction_of_a_file_just_written_and_read_is_all(tmp_path):
    data = tmp_path / "data"
    data.write_bytes(b"y" * (64 * 4096))
    cache.warm_files([data])
    fraction = cache.cached_fraction(data)
    if fraction is None:
        pytest.skip("fincore (util-linux) is not installed")
    assert fraction == pytest.approx(1.0)


def test_c_program_build_makes_a_program_that_runs(tmp_path):
    source = tmp_path / "answer.c"
    source.write_text("#include <stdio.h>\nint main(void) { printf(\"%d\\n\", ANSWER); return 0; }\n")
    program = c_program.build(source, tmp_path / "out" / "answer", flags=["-DANSWER=42"])
    assert program == tmp_path / "out" / "answer"
    assert subprocess.run([str(program)], capture_output=True, text=True).stdout == "42\n"


def test_c_program_build_raises_on_a_warning(tmp_path):
    source = tmp_path / "unused.c"
    source.write_text("int main(void) { int unused; return 0; }\n")
    with pytest.raises(subprocess.CalledProcessError):
        c_program.build(source, tmp_path / "unused")


def test_a_run_past_its_timeout_loses_the_programs_it_started_too(tmp_path):
    # A wrapper (the memory cgroup's sh, `foreactor bound`) runs the measured
    # program as its child: the timeout must not leave that child running.
    # Left running, the child would also hold the output pipes open, and the
    # call would wait for it to end (60 s).
    child_file = tmp_path / "child"
    started = time.monotonic()
    with pytest.raises(runs.RunTimedOut):
        runs.run_with_timeout(["sh", "-c", f'sleep 60 & echo $! > "{child_file}"; wait'],
                              {"PATH": os.environ["PATH"]}, 0.5)
    assert time.monotonic() - started < 30, "waited for the child the timeout left running"
    child = int(child_file.read_text())
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.01)  # killed; its new parent reaps it
    assert not os.path.exists(f"/proc/{child}")


def test_a_timed_out_run_reports_its_label_and_threads(capsys):
    runs.RunTimedOut(2, "pid 7: 1 threads").print_report("du deep cold round 1")
    assert capsys.readouterr().err == \
        "du deep cold round 1: timed out after 2 s; what it was doing:\npid 7: 1 threads\n"


def test_wait_with_timeout_returns_the_exit_code_and_usage():
    process = subprocess.Popen(["sh", "-c", "exit 4"], start_new_session=True)
    returncode, usage = runs.wait_with_timeout(process, 30)
    assert returncode == 4 and process.returncode == 4
    assert usage.ru_maxrss > 0


def test_wait_with_timeout_kills_a_hung_process_and_records_its_threads():
    process = subprocess.Popen(["sleep", "30"], start_new_session=True)
    with pytest.raises(runs.RunTimedOut) as timed_out:
        runs.wait_with_timeout(process, 0.5)
    assert "sleep" in timed_out.value.stacks
    assert not os.path.exists(f"/proc/{process.pid}"), "killed and reaped"
