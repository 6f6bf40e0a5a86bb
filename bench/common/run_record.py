"""What every benchmark records about its run, in its results JSON (key
"run") and in its printed header: the machine, the commit, the load at start
and end, the device reference measured in the same run for the benchmark's
own request size, whether the VM's free page reporting and its proactive
reclaim were held during the run (free_page_reporting, proactive_reclaim),
and how many rounds it ran with how wide its intervals came out.

A benchmark calls, in order:
    add_arguments(parser)                       --no-device-reference
    record = begin(name, data_folder, request_bytes, arguments, rounds,
                   rounds_default, rounds_quick)  holds free page reporting
                                                and proactive reclaim, prints
                                                the header
    ... its rounds (sample_load(record) between measurements, if it likes);
        ratios.paired_ratio() for each ratio ...
    finish(record, intervals)                   prints the footer, releases
                                                both; returns record for
                                                data["run"]
"""

import datetime
import os
import sys

from bench.common import device_reference, free_page_reporting, machine, proactive_reclaim, ratios

NO_DEVICE_REFERENCE = "--no-device-reference"
# A 1-minute load average above this at start: other work is running and the
# figures will be noisy (said on stderr; the run goes on).
NOISY_LOAD = 1.5


def add_arguments(parser):
    """Adds --no-device-reference to a benchmark's argparse parser."""
    parser.add_argument(NO_DEVICE_REFERENCE, dest="device_reference", action="store_false",
                        help="skip the fio device reference (QD 1, 16, 64 random reads of "
                             "the benchmark's request size, a few seconds each)")


def load_average():
    return [round(value, 2) for value in os.getloadavg()]


def begin(name, data_folder, request_bytes, arguments, rounds, rounds_default, rounds_quick,
          stream=None, measure=device_reference.measure, hold=free_page_reporting.hold,
          hold_reclaim=proactive_reclaim.hold):
    """Holds the VM's free page reporting (`hold`, see free_page_reporting)
    and its proactive reclaim (`hold_reclaim`, see proactive_reclaim),
    describes the machine, measures the device reference (unless
    arguments.device_reference is False), prints the header to `stream`
    (default stdout) and returns the record."""
    stream = sys.stdout if stream is None else stream
    # The folder's device and filesystem are those of its nearest existing
    # parent until it exists: make it first.
    os.makedirs(data_folder, exist_ok=True)
    record = {
        "benchmark": name,
        "started_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "commit": machine.git_commit(),
        "machine": machine.describe_machine(data_folder),
        "load_average": {"start": load_average(), "end": None, "samples": []},
        "rounds": rounds,
        "rounds_default": rounds_default,
        "rounds_quick": rounds_quick,
        "free_page_reporting": hold(),
        "proactive_reclaim": hold_reclaim(),
    }
    if getattr(arguments, "device_reference", True):
        print(f"{name}: measuring the device reference (fio, {len(device_reference.DEPTHS)} x "
              f"{device_reference.SECONDS_PER_DEPTH} s) ...", file=sys.stderr, flush=True)
        record["device_reference"] = measure(data_folder, request_bytes)
    else:
        record["device_reference"] = {"skipped": NO_DEVICE_REFERENCE,
                                      "request_bytes": request_bytes}
    print_header(record, stream)
    if record["load_average"]["start"][0] > NOISY_LOAD:
        print(f"warning: load average {record['load_average']['start'][0]:.2f}: other work is "
              "running, the figures will be noisy", file=sys.stderr, flush=True)
    return record


def sample_load(record):
    """Records the 1-minute load average now (benchmarks call it between
    measurements; finish() reports the range)."""
    record["load_average"]["samples"].append(round(os.getloadavg()[0], 2))


def print_header(record, stream):
    load = record["load_average"]["start"]
    print(f"== {record['benchmark']}: {record['command']} ({record['started_utc']} UTC)",
          file=stream)
    print(f"machine: {machine.describe(record['machine'])}", file=stream)
    print(f"commit: {record['commit'] or 'unknown'}", file=stream)
    print(f"load average at start (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
          file=stream)
    print(device_reference.describe(record["device_reference"]), file=stream)
    print(free_page_reporting.describe(record.get("free_page_reporting")), file=stream)
    print(proactive_reclaim.describe(record.get("proactive_reclaim")), file=stream)
    print(describe_rounds(record), file=stream, flush=True)


def describe_rounds(record):
    quick = record["rounds_quick"]
    quick = "no --quick mode" if quick is None else f"--quick: {quick}"
    return (f"rounds: {record['rounds']} (defaults: "
            f"{record['rounds_default']}, {quick})")


def finish(record, intervals, stream=None, release=free_page_reporting.release,
           release_reclaim=proactive_reclaim.release):
    """Records the load at the end and how wide the `intervals`
    (ratios.paired_ratio() results) came out; prints both; releases free
    page reporting (`release`) and proactive reclaim (`release_reclaim`).
    Returns `record`."""
    stream = sys.stdout if stream is None else stream
    release()
    release_reclaim()
    record["load_average"]["end"] = load_average()
    intervals = [interval for interval in intervals if interval]
    record["intervals"] = ratios.describe_widths(intervals)
    load = record["load_average"]
    during = [load["start"][0]] + load["samples"] + [load["end"][0]]
    print(f"\n{describe_rounds(record)}; {record['intervals']}", file=stream)
    print(f"load average (1 min): {load['start'][0]:.2f} at start, {load['end'][0]:.2f} at end, "
          f"{min(during):.2f} .. {max(during):.2f} during the run", file=stream, flush=True)
    return record


def device_bound(record):
    """The device's QD64 time ratio of a run record, or None (skipped,
    failed, or an old results file without one)."""
    return device_reference.time_ratio_bound((record or {}).get("device_reference"))
