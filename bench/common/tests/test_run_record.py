"""Tests of what every benchmark records about its run: the machine, the
commit, the load and the fio device reference (bench/common/run_record,
device_reference, machine).

Run with: python3 -m pytest -q bench/common/tests
"""

import argparse
import io
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    device_reference, free_page_reporting, machine, proactive_reclaim, run_record)

FIO_OUTPUT = json.dumps({
    "fio version": "fio-3.33",
    "jobs": [{"jobname": "device_reference", "error": 0,
              "read": {"iops": 13000.5, "lat_ns": {"mean": 76500.0},
                       "clat_ns": {"percentile": {"99.000000": 180224}}}}]})


def test_parse_fio_json_reads_iops_and_latencies_after_a_note():
    figures = device_reference.parse_fio_json("note: both iodepth >= 1\n" + FIO_OUTPUT)
    assert figures == {"iops": 13000.5, "mean_latency_us": 76.5, "p99_latency_us": 180.224,
                       "fio": "fio-3.33"}


def test_parse_fio_json_rejects_errors_and_garbage():
    with pytest.raises(ValueError):
        device_reference.parse_fio_json("fio: something went wrong")
    failed = json.loads(FIO_OUTPUT)
    failed["jobs"][0]["error"] = 22
    with pytest.raises(ValueError):
        device_reference.parse_fio_json(json.dumps(failed))


DIRECT_IOPS = {1: 13000, 2: 19500, 4: 32500, 16: 57000, 64: 65000}
BUFFERED_IOPS = {1: 12000, 2: 18000, 4: 24000, 64: 36000}


def fake_fio(iops_by_depth, buffered_iops_by_depth=None, commands=None):
    """fio that reports `iops_by_depth` for direct reads and
    `buffered_iops_by_depth` (or the same) for reads through the cache."""
    def run(command, **_):
        if commands is not None:
            commands.append(command)
        depth = int(next(arg for arg in command if arg.startswith("--iodepth=")).split("=")[1])
        table = iops_by_depth
        if "--direct=0" in command and buffered_iops_by_depth is not None:
            table = buffered_iops_by_depth
        document = json.loads(FIO_OUTPUT)
        document["jobs"][0]["read"]["iops"] = table[depth]
        return subprocess.CompletedProcess(command, 0, json.dumps(document), "")
    return run


def test_measure_records_every_depth_and_the_qd64_bound(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    record = device_reference.measure(tmp_path, 8192, run=fake_fio(DIRECT_IOPS))
    assert record["request_bytes"] == 8192
    assert sorted(record["depths"], key=int) == ["1", "2", "4", "16", "64"]
    assert record["qd64_time_ratio"] == pytest.approx(0.2)
    assert record["fio"] == "fio-3.33"
    line = device_reference.describe(record)
    assert "8 KiB" in line and "QD64 65.0k IOPS (5.0x QD1)" in line


def test_measure_reads_through_the_page_cache_too(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    commands = []
    record = device_reference.measure(
        tmp_path, 8192, run=fake_fio(DIRECT_IOPS, BUFFERED_IOPS, commands))
    buffered = [command for command in commands if "--direct=0" in command]
    assert len(buffered) == 4
    for command in buffered:
        # Distinct blocks of a file whose pages were dropped first, a fixed count.
        assert "--invalidate=1" in command and "--norandommap" not in command
        assert f"--number_ios={device_reference.BUFFERED_READS}" in command
        assert "--time_based" not in command
    assert record["qd64_time_ratio"] == pytest.approx(0.2)
    assert record["page_cache"]["reads"] == device_reference.BUFFERED_READS
    assert device_reference.page_cache_bound(record) == pytest.approx(1 / 3)
    line = device_reference.describe(record)
    assert "through the page cache (20,000 distinct reads of the cold file): " \
           "QD1 12.0k IOPS, QD2 18.0k IOPS (1.5x QD1), QD4 24.0k IOPS (2.0x QD1), " \
           "QD64 36.0k IOPS (3.0x QD1)" in line
    # The gain per depth of the reads through the page cache, for the bound.
    assert device_reference.gain_curve(record) == pytest.approx({2: 1.5, 4: 2.0, 64: 3.0})


def test_a_failing_page_cache_measurement_keeps_the_direct_reference(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    direct = fake_fio(DIRECT_IOPS)

    def run(command, **options):
        if "--direct=0" in command:
            return subprocess.CompletedProcess(command, 1, "", "no room")
        return direct(command, **options)
    record = device_reference.measure(tmp_path, 8192, run=run)
    assert record["qd64_time_ratio"] == pytest.approx(0.2)
    assert "no room" in record["page_cache"]["error"]
    assert device_reference.page_cache_bound(record) is None
    assert "through the page cache: failed" in device_reference.describe(record)
    # Without the page cache's figures, the curve is the direct reads'.
    assert device_reference.gain_curve(record) == pytest.approx({2: 1.5, 4: 2.5, 16: 57 / 13,
                                                                 64: 5.0})
    assert device_reference.gain_curve({"error": "no fio"}) is None


def test_measure_flushes_dirty_pages_before_the_first_read(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    events = []
    direct = fake_fio(DIRECT_IOPS, BUFFERED_IOPS)

    def run(command, **options):
        events.append("fio")
        return direct(command, **options)
    device_reference.measure(tmp_path, 8192, run=run, flush=lambda: events.append("flush"))
    fio_runs = len(device_reference.DEPTHS) + len(device_reference.BUFFERED_DEPTHS)
    assert events[0] == "flush" and events.count("flush") == 1 and len(events) == 1 + fio_runs


def test_the_gain_curve_never_falls_below_a_shallower_depth_or_one():
    # A measurement that found deeper queues slower (a disturbed device) must
    # still give gains foreactor bound accepts: at least 1, and at least what
    # a shallower depth gave.
    record = {"depths": {"1": {"iops": 4000}, "2": {"iops": 2600}, "4": {"iops": 8000},
                         "16": {"iops": 6000}, "64": {"iops": 3000}}}
    assert device_reference.gain_curve(record) == pytest.approx({2: 1.0, 4: 2.0, 16: 2.0,
                                                                 64: 2.0})


def test_measure_reports_a_failing_fio_instead_of_raising(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")

    def failing(command, **_):
        return subprocess.CompletedProcess(command, 1, "", "O_DIRECT not supported")
    record = device_reference.measure(tmp_path, 4096, run=failing)
    assert "O_DIRECT not supported" in record["error"]
    assert device_reference.time_ratio_bound(record) is None
    assert "failed" in device_reference.describe(record)


def test_a_tiny_real_fio_run_is_parsed_and_recorded(tmp_path):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    record = device_reference.measure(tmp_path, 4096, depths=(1, 4), seconds=1, file_mib=4,
                                      buffered_reads=64)
    # tmpfs, for one, refuses O_DIRECT ("does not support direct=1", EINVAL).
    if "error" in record and ("direct" in record["error"].lower()
                              or "invalid argument" in record["error"].lower()):
        pytest.skip(f"the filesystem of {tmp_path} refuses O_DIRECT: {record['error']}")
    assert "error" not in record, record
    assert record["depths"]["1"]["iops"] > 0
    assert record["depths"]["4"]["mean_latency_us"] > 0
    assert record["fio"].startswith("fio-")
    assert (tmp_path / device_reference.FILE_NAME).stat().st_size == 4 << 20
    assert record["page_cache"]["depths"]["64"]["iops"] > 0, record["page_cache"]


def parse(arguments):
    parser = argparse.ArgumentParser()
    run_record.add_arguments(parser)
    return parser.parse_args(arguments)


def test_begin_and_finish_record_and_print_machine_commit_load_and_device(tmp_path):
    stream = io.StringIO()
    calls = []

    def measure(folder, request_bytes):
        calls.append((folder, request_bytes))
        return {"request_bytes": request_bytes, "seconds_per_depth": 4, "fio": "fio-3.33",
                "depths": {"1": {"iops": 10000}, "64": {"iops": 50000}},
                "qd64_time_ratio": 0.2}
    held = {"held": True, "parameters": {"min_free_ms": ["0", "300000"]}, "touched_gib": 6.0}
    released = []
    record = run_record.begin("demo", tmp_path, 8192, parse([]), 3, 3, None, stream=stream,
                              measure=measure, hold=lambda: held,
                              hold_reclaim=lambda: {"held": ["0"]})
    assert calls == [(tmp_path, 8192)]
    assert run_record.device_bound(record) == pytest.approx(0.2)
    assert record["machine"]["kernel"] and record["machine"]["nproc"]
    assert record["machine"]["filesystem"]["type"]
    assert len(record["load_average"]["start"]) == 3
    header = stream.getvalue()
    for words in ("machine:", "commit:", "load average at start", "QD64 50.0k IOPS (5.0x QD1)",
                  "rounds: 3 (defaults: 3, no --quick mode)",
                  "free page reporting held during the run (min_free_ms 0 -> 300000; "
                  "6.0 GiB touched first)",
                  "proactive reclaim (DAMON pageout) held during the run: kdamond 0"):
        assert words in header
    assert record["free_page_reporting"] == held
    assert record["proactive_reclaim"] == {"held": ["0"]}
    run_record.sample_load(record)
    run_record.finish(record, [{"ratio": 0.5, "low": 0.45, "high": 0.55, "pairs": 3}, None],
                      stream=stream, release=lambda: released.append(True),
                      release_reclaim=lambda: released.append("reclaim"))
    assert released == [True, "reclaim"]
    assert len(record["load_average"]["end"]) == 3
    assert len(record["load_average"]["samples"]) == 1
    assert "during the run" in stream.getvalue()
    assert "3 pairs" in record["intervals"]
    assert json.loads(json.dumps(record)) == record


def test_no_device_reference_flag_skips_fio(tmp_path):
    def measure(*_):
        raise AssertionError("fio must not run")
    record = run_record.begin("x", tmp_path, 4096, parse(["--no-device-reference"]), 1, 5, 2,
                              stream=io.StringIO(), measure=measure,
                              hold=lambda: {"held": False, "why": "absent"},
                              hold_reclaim=lambda: {"held": []})
    assert record["device_reference"]["skipped"] == "--no-device-reference"
    assert run_record.device_bound(record) is None


def test_filesystem_of_picks_the_longest_mount_point(tmp_path):
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "30 22 0:26 / /work/data rw shared:2 - xfs /dev/vdb rw\n"
        "31 22 0:27 / /work/data2 rw - tmpfs tmpfs rw\n")
    found = machine.filesystem_of("/work/data/x/y", mountinfo)
    assert found == {"mount_point": "/work/data", "type": "xfs", "source": "/dev/vdb"}
    assert machine.filesystem_of("/etc", mountinfo)["type"] == "ext4"


def test_describe_machine_names_device_filesystem_and_virtualization():
    description = machine.describe_machine(ROOT)
    assert description["device"]["dev"]
    assert description["filesystem"]["mount_point"]
    assert set(description["virtualization"]) == {"vm", "container"}
    assert "cores" in machine.describe(description)


def test_free_page_reporting_is_held_and_the_old_values_restored(tmp_path):
    (tmp_path / "min_free_ms").write_text("250\n")
    (tmp_path / "max_waiting_mib").write_text("1024\n")
    touched = []
    state = free_page_reporting.hold(tmp_path,
                                     touch=lambda total: touched.append(total) or total)
    longest = str(free_page_reporting.HELD["min_free_ms"][0])
    most = str(free_page_reporting.HELD["max_waiting_mib"][0])
    assert touched and 0 <= touched[0] <= free_page_reporting.TOUCH_BYTES
    assert state == {"held": True,
                     "parameters": {"min_free_ms": ["250", longest],
                                    "max_waiting_mib": ["1024", most]},
                     "touched_gib": round(touched[0] / (1 << 30), 1)}
    assert (tmp_path / "min_free_ms").read_text() == longest
    assert (tmp_path / "max_waiting_mib").read_text() == most
    # Held twice (two benchmarks in one process): the first old values stay.
    again = free_page_reporting.hold(tmp_path, touch=lambda total: 0)
    assert again["parameters"]["min_free_ms"] == ["250", longest]
    description = free_page_reporting.describe(state)
    assert f"min_free_ms 250 -> {longest}" in description and "held during the run" in description
    free_page_reporting.release()
    assert (tmp_path / "min_free_ms").read_text() == "250"
    assert (tmp_path / "max_waiting_mib").read_text() == "1024"
    free_page_reporting.release()  # nothing held: nothing changes
    assert (tmp_path / "min_free_ms").read_text() == "250"


def test_free_page_reporting_partly_absent_releases_what_it_set(tmp_path):
    (tmp_path / "min_free_ms").write_text("0")  # max_waiting_mib absent
    state = free_page_reporting.hold(tmp_path, touch=lambda total: 0)
    assert state["held"] is False and "max_waiting_mib" in state["why"]
    assert (tmp_path / "min_free_ms").read_text() == "0"


def test_touch_memory_touches_what_it_is_asked_for():
    assert free_page_reporting.touch_memory(3 * free_page_reporting.TOUCH_CHUNK + 4096) == \
        3 * free_page_reporting.TOUCH_CHUNK + 4096


def test_free_page_reporting_absent_changes_nothing_and_says_why(tmp_path):
    state = free_page_reporting.hold(tmp_path / "no_such_folder")
    assert state["held"] is False and "no_such_folder" in state["why"]
    assert "not held" in free_page_reporting.describe(state)
    assert "not recorded" in free_page_reporting.describe(None)


def make_kdamond(kdamonds, name, state, action):
    context = kdamonds / name / "contexts" / "0" / "schemes" / "0"
    context.mkdir(parents=True)
    (context / "action").write_text(action + "\n")
    (kdamonds / name / "state").write_text(state + "\n")


def test_proactive_reclaim_turns_off_only_running_pageout_kdamonds(tmp_path):
    make_kdamond(tmp_path, "0", "on", "pageout")
    make_kdamond(tmp_path, "1", "on", "stat")
    make_kdamond(tmp_path, "2", "off", "pageout")
    (tmp_path / "nr_kdamonds").write_text("3\n")
    state = proactive_reclaim.hold(tmp_path)
    assert state == {"held": ["0"]}
    assert [(tmp_path / name / "state").read_text().strip() for name in "012"] == \
        ["off", "on", "off"]
    assert "held during the run: kdamond 0" in proactive_reclaim.describe(state)
    proactive_reclaim.release()
    assert (tmp_path / "0" / "state").read_text().strip() == "on"
    assert (tmp_path / "2" / "state").read_text().strip() == "off"
    proactive_reclaim.release()  # nothing held: nothing changes
    assert (tmp_path / "0" / "state").read_text().strip() == "on"


def test_proactive_reclaim_without_damon_changes_nothing(tmp_path):
    state = proactive_reclaim.hold(tmp_path / "absent")
    assert state == {"held": []}
    assert proactive_reclaim.describe(state) == "proactive reclaim: no DAMON pageout running"
    assert proactive_reclaim.describe(None) == "proactive reclaim: not recorded"


def test_proactive_reclaim_from_the_shell_releases_the_files_it_is_given(tmp_path, capsys):
    make_kdamond(tmp_path, "0", "off", "pageout")
    assert proactive_reclaim.main(["release", str(tmp_path / "0" / "state")]) == 0
    assert (tmp_path / "0" / "state").read_text() == "on"
    assert proactive_reclaim.main(["release", str(tmp_path / "absent" / "state")]) == 0
    assert "absent" in capsys.readouterr().err
    assert proactive_reclaim.main(["unknown"]) == 2


# A benchmark's process that holds the machine's settings and then waits:
# it prints "held" once they are held.
HOLDING_PROGRAM = """
import sys, time
sys.path.insert(0, {root!r})
from bench.common import free_page_reporting, proactive_reclaim
proactive_reclaim.hold({kdamonds!r})
free_page_reporting.hold({parameters!r}, touch=lambda total: 0)
print("held", flush=True)
time.sleep(60)
"""


def default_signal_dispositions():
    for signal_number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signal_number, signal.SIG_DFL)


@pytest.mark.parametrize("signal_name", ("SIGTERM", "SIGHUP", "SIGINT"))
def test_a_benchmark_ended_by_a_signal_gives_the_machine_back(tmp_path, signal_name):
    """kill, timeout(1) and a closed terminal end a benchmark with SIGTERM or
    SIGHUP, Ctrl-C with SIGINT: each restores what the benchmark held."""
    kdamonds, parameters = tmp_path / "kdamonds", tmp_path / "parameters"
    make_kdamond(kdamonds, "0", "on", "pageout")
    parameters.mkdir()
    (parameters / "min_free_ms").write_text("0\n")
    (parameters / "max_waiting_mib").write_text("1024\n")
    program = HOLDING_PROGRAM.format(root=str(ROOT), kdamonds=str(kdamonds),
                                     parameters=str(parameters))
    # A test run started with nohup, or in the background of a shell without
    # job control, inherits SIGHUP or SIGINT ignored, and the benchmark's
    # process then keeps them ignored (as at_exit does): the child starts
    # with the defaults, as a benchmark started from a terminal does.
    process = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_signal_dispositions)
    try:
        assert process.stdout.readline() == "held\n", process.stderr.read()
        assert (kdamonds / "0" / "state").read_text().strip() == "off"
        assert (parameters / "min_free_ms").read_text().strip() != "0"
        process.send_signal(getattr(signal, signal_name))
        process.wait(timeout=30)
    finally:
        process.kill()
    assert (kdamonds / "0" / "state").read_text().strip() == "on"
    assert (parameters / "min_free_ms").read_text().strip() == "0"
    assert (parameters / "max_waiting_mib").read_text().strip() == "1024"
    if signal_name != "SIGINT":
        assert process.returncode == 128 + getattr(signal, signal_name)
