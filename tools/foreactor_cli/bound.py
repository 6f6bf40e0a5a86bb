"""foreactor bound: the most any depth could gain for a function, measured on
the plain program.

Runs CMD under `perf` with a probe at the entry and the return of SYMBOL and
the entry and exit of the chosen system calls, then computes, for every
outermost invocation of SYMBOL on each thread, how many of those calls it
made and how long it waited in them.  The bound assumes what no engine can
do better than: every call of an invocation issued at its start, all of them
running in parallel, at no cost.  An invocation then waits only for its
longest call; its time becomes its measured time minus the time of its other
calls.  The ratio of the bound to the measured time (average and
percentiles) is the floor of what a foreaction graph of SYMBOL can reach on
this workload and machine: a function that makes about one slow call per
invocation has nothing to overlap, whatever its graph.

A device serves only so many requests at once.  With --device-gain G (the
device's throughput with many requests in flight over its throughput with
one, e.g. fio's IOPS at queue depth 64 over queue depth 1), a second,
device-aware bound also lets an invocation wait at least for the sum of its
calls' times divided by G: max(longest call, sum / G) instead of the
longest call.  A device's gain depends on how many requests are in flight,
and an invocation of n calls has at most n in flight: with a curve
(--device-gain 2:1.6,4:2.7,64:5.4, the gain at each measured queue depth)
an invocation of n calls gets the gain at depth n, interpolated linearly
between the measured depths (depth 1 has gain 1) and the deepest one's
beyond it.  Where invocations make two or three calls (a key-value Get),
the gain at depth 2 or 3, not at 64, is what the device can give them.
It is still optimistic (every call as if served by the device at its best
rate, cached ones included), so a target well below it is out of reach on
that device (tracing's own time makes every bound lean toward 1).

With --cached-below US, a third bound keeps the time of every call shorter
than US microseconds (a read the page cache served: a memory copy, which
issued early would only move to another thread, at the price of a
hand-off) and overlaps only the others (with --device-gain, at most that
many at once): the floor when only the calls that wait for the device can
be overlapped.

What it does not count: overlap across invocations (a graph whose scope is
smaller than the loop it speeds up).  For a function whose invocations each make
many calls (a copy loop) the bound is loose; it is meant for functions with
short chains of calls (a key-value Get, a B+-tree lookup).
"""

import json
import os
import re
import shutil
import subprocess
import tempfile

from foreactor_cli import locate

DEFAULT_CALLS = ("pread64", "preadv", "preadv2", "read", "pwrite64", "write", "newfstatat",
                 "statx", "openat", "getdents64")
# perf script -F tid,time,event: "  17198 35367.864356: group:event: ..."
EVENT_LINE = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+(\S+?):\s")
# perf script --show-lost-events: "   7945 80173.281386: PERF_RECORD_LOST lost 7862"
# (perf's ring buffer was full: that many events of one CPU are missing).
LOST_LINE = re.compile(r"^\s*\d+\s+([\d.]+):\s+PERF_RECORD_LOST(?:_SAMPLES)?\b\D*(\d+)")
# Per CPU: a buffer large enough that a program making a few hundred
# thousand calls a second loses none while perf is busy (the default, 512
# KiB, lost events of a loaded 2-core machine).
PERF_BUFFER_PAGES = "4096"
EXIT_PERF_UNUSABLE = 125


def make_parser(tool):
    parser = tool.ArgumentParser(
        prog="%s bound" % tool.TOOL,
        allow_abbrev=False,
        usage="%(prog)s --function SYMBOL [options] -- CMD [ARGS...]",
        description="Run CMD (plain, without foreactor) under perf and measure, for every "
                    "invocation of the function SYMBOL, the system calls it waited in.  Print "
                    "the invocation time as measured and as it would be if every call of an "
                    "invocation ran in parallel with the others at no cost: the most a "
                    "foreaction graph of SYMBOL could gain on this workload.  Needs perf "
                    "(Debian: linux-perf) and the rights to add uprobes (root).  Exit status: "
                    "CMD's own; 1 when CMD succeeded but never called SYMBOL; 2 for a bad "
                    "argument or a missing symbol; 125 when perf cannot be used.",
        epilog="Example: %s bound --function 'leveldb::DBImpl::Get' -- ./driver --run trace"
               % tool.TOOL)
    parser.add_argument("--function", metavar="SYMBOL", required=True,
                        help="the function: its symbol-table name, mangled or demangled (a "
                             "demangled name may omit its parameter list when that is unique)")
    parser.add_argument("--binary", metavar="FILE",
                        help="the executable or library that defines SYMBOL (default: CMD)")
    parser.add_argument("--calls", default=",".join(DEFAULT_CALLS),
                        help="comma-separated system calls to count (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--cached-below", metavar="US", type=positive_microseconds,
                        help="also give the bound in which calls shorter than US microseconds "
                             "(served from memory) keep their time and only the others overlap")
    parser.add_argument("--device-gain", metavar="G", type=device_gain,
                        help="also give the device-aware bound: the device serves at most G "
                             "times the requests per second with many in flight as with one "
                             "(e.g. fio IOPS at queue depth 64 over queue depth 1); a number "
                             ">= 1, or the gain per queue depth as DEPTH:G,DEPTH:G,... "
                             "(e.g. 2:1.6,4:2.7,64:5.4)")
    return parser


def gain_number(text):
    """A finite number >= 1 from `text`, or raises ValueError."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (1.0 <= value < float("inf")):
        raise ValueError("not a number >= 1")
    return value


def device_gain(text):
    """The --device-gain value: a finite number >= 1, or for DEPTH:G,... a
    curve {depth: gain} (depths whole numbers >= 1, each once; gains
    finite numbers >= 1)."""
    if ":" not in text:
        return gain_number(text)
    curve = {}
    for entry in text.split(","):
        depth_text, _, gain_text = entry.partition(":")
        if not depth_text.isdigit() or int(depth_text) < 1 or int(depth_text) in curve:
            raise ValueError("a queue depth is a whole number >= 1, given once")
        curve[int(depth_text)] = gain_number(gain_text)
    return curve


def gain_at(device_gain, calls):
    """The gain `device_gain` (a number, or a curve as device_gain() makes
    it) gives an invocation of `calls` calls: the number itself; on a curve
    the gain at depth `calls`, linear between the curve's depths (and depth
    1, gain 1), the deepest depth's gain beyond it."""
    if not isinstance(device_gain, dict):
        return device_gain
    points = sorted({1: 1.0, **device_gain}.items())
    depth = max(1, calls)
    for (low, low_gain), (high, high_gain) in zip(points, points[1:]):
        if depth <= high:
            return low_gain + (high_gain - low_gain) * (depth - low) / (high - low)
    return points[-1][1]


# ------------------------------------------------------------ the analysis

def positive_microseconds(text):
    """The --cached-below value: a finite number of microseconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError("--cached-below: a number of microseconds > 0, not %r" % text)
    return value


def percentile(sorted_values, fraction):
    """The value at `fraction` (0..1) of `sorted_values` (nearest rank)."""
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, int(fraction * len(sorted_values)))
    return sorted_values[index]


def invocations_of(events):
    """Outermost invocations from `events`, (tid, seconds, kind) tuples in time
    order per thread, kind one of "entry", "return", "call_enter", "call_exit".
    Returns a list of dicts: seconds (entry to return), calls (count),
    call_seconds (sum), longest_call_seconds, call_durations (each call's
    seconds, in order).  Calls outside an invocation,
    recursion (only the outermost counts) and an invocation still open at the
    end (the program exited inside it) are handled; the last is dropped.
    A "lost" event (perf lost events of some thread, its tid not known)
    drops every invocation open then: a lost return would otherwise join an
    invocation to the next one, a lost call shorten it."""
    depth, current, call_start, result = {}, {}, {}, []
    for tid, seconds, kind in events:
        if kind == "lost":
            depth, current, call_start = {}, {}, {}
        elif kind == "entry":
            depth[tid] = depth.get(tid, 0) + 1
            if depth[tid] == 1:
                current[tid] = {"start": seconds, "calls": 0, "call_seconds": 0.0,
                                "longest_call_seconds": 0.0, "call_durations": []}
        elif kind == "return":
            if depth.get(tid, 0) == 0:
                continue  # a return whose entry came before the probe was added
            depth[tid] -= 1
            if depth[tid] == 0:
                invocation = current.pop(tid)
                invocation["seconds"] = seconds - invocation.pop("start")
                result.append(invocation)
        elif kind == "call_enter":
            call_start[tid] = seconds
        elif kind == "call_exit":
            started = call_start.pop(tid, None)
            if started is None or depth.get(tid, 0) == 0:
                continue
            waited = seconds - started
            invocation = current[tid]
            invocation["calls"] += 1
            invocation["call_seconds"] += waited
            invocation["longest_call_seconds"] = max(invocation["longest_call_seconds"], waited)
            invocation["call_durations"].append(waited)
    return result


def time_at_once(invocation, device_gain=float("inf")):
    """The time of `invocation` (see invocations_of) had all its calls been
    issued at its start: its work outside the calls, plus its longest call
    or, on a device that serves at most `device_gain` (see gain_at) times
    the requests of one at a time, its calls' summed time over that gain if
    longer."""
    gain = gain_at(device_gain, invocation["calls"])
    return (invocation["seconds"] - invocation["call_seconds"] +
            max(invocation["longest_call_seconds"], invocation["call_seconds"] / gain))


def time_overlapping_slow_calls(invocation, cached_below_seconds, device_gain=float("inf")):
    """The time of `invocation` had its calls of `cached_below_seconds` or
    more been issued at its start (at most `device_gain` times the rate of
    one at a time, see gain_at, for as many calls as overlap) while its
    shorter calls, served from memory, keep their time."""
    slow = [d for d in invocation["call_durations"] if d >= cached_below_seconds]
    fast = sum(d for d in invocation["call_durations"] if d < cached_below_seconds)
    overlapped = max(max(slow), sum(slow) / gain_at(device_gain, len(slow))) if slow else 0.0
    return invocation["seconds"] - invocation["call_seconds"] + fast + overlapped


def summarize(invocations, device_gain=None, cached_below_us=None):
    """Figures of a list of invocations (see invocations_of), or None when
    empty.  Times in microseconds.  With `device_gain` (see --device-gain)
    also the device-aware bound: device_bound_us and device_ratio.  With
    `cached_below_us` (see --cached-below) also the bound that overlaps only
    the slower calls: memory_bound_us, memory_ratio, and
    memory_calls_share, the share of calls shorter than that."""
    if not invocations:
        return None
    measured = sorted(i["seconds"] for i in invocations)
    bound = sorted(time_at_once(i) for i in invocations)
    total = sum(measured)
    calls_histogram = {}
    for invocation in invocations:
        calls_histogram[invocation["calls"]] = calls_histogram.get(invocation["calls"], 0) + 1

    def figures(values):
        return {"average": sum(values) / len(values) * 1e6, "p50": percentile(values, 0.5) * 1e6,
                "p99": percentile(values, 0.99) * 1e6}

    def ratios(values):
        return {key: (values[key] / measured_figures[key] if measured_figures[key] else 1.0)
                for key in measured_figures}

    measured_figures, bound_figures = figures(measured), figures(bound)
    summary = {
        "invocations": len(invocations),
        "calls_per_invocation": sum(i["calls"] for i in invocations) / len(invocations),
        "calls_histogram": {str(k): v for k, v in sorted(calls_histogram.items())},
        "share_in_calls": sum(i["call_seconds"] for i in invocations) / total if total else 0.0,
        "measured_us": measured_figures,
        "bound_us": bound_figures,
        "ratio": ratios(bound_figures),
    }
    if device_gain is not None:
        device_bound = figures(sorted(time_at_once(i, device_gain) for i in invocations))
        summary.update(device_gain=({str(depth): gain for depth, gain in device_gain.items()}
                                    if isinstance(device_gain, dict) else device_gain),
                       device_bound_us=device_bound,
                       device_ratio=ratios(device_bound))
    if cached_below_us is not None:
        threshold = cached_below_us / 1e6
        gain = device_gain if device_gain is not None else float("inf")
        memory_bound = figures(sorted(time_overlapping_slow_calls(i, threshold, gain)
                                      for i in invocations))
        durations = [d for i in invocations for d in i["call_durations"]]
        summary.update(cached_below_us=cached_below_us, memory_bound_us=memory_bound,
                       memory_ratio=ratios(memory_bound),
                       memory_calls_share=(sum(d < threshold for d in durations) / len(durations)
                                           if durations else 0.0))
    return summary


def parse_perf_script(lines, entry_event, return_event, calls):
    """Events of `perf script -F tid,time,event --show-lost-events` output,
    as invocations_of takes them.  `calls` are system call names.  A "lost"
    event carries the number of events lost where the others carry a tid."""
    enter_events = {"syscalls:sys_enter_" + call for call in calls}
    exit_events = {"syscalls:sys_exit_" + call for call in calls}
    events = []
    for line in lines:
        lost = LOST_LINE.match(line)
        if lost is not None:
            events.append((int(lost.group(2)), float(lost.group(1)), "lost"))
            continue
        match = EVENT_LINE.match(line)
        if match is None:
            continue
        tid, seconds, name = int(match.group(1)), float(match.group(2)), match.group(3)
        if name == entry_event:
            kind = "entry"
        elif name == return_event:
            kind = "return"
        elif name in enter_events:
            kind = "call_enter"
        elif name in exit_events:
            kind = "call_exit"
        else:
            continue
        events.append((tid, seconds, kind))
    return events


def format_report(function, summary):
    histogram = ", ".join("%s: %d" % item for item in summary["calls_histogram"].items())
    m, b, r = summary["measured_us"], summary["bound_us"], summary["ratio"]
    return "\n".join([
        "foreactor bound: %s" % function,
        "  invocations           %d" % summary["invocations"],
        "  calls per invocation  %.3f   (invocations by calls made: %s)"
        % (summary["calls_per_invocation"], histogram),
        "  time in the calls     %.1f%% of the invocations' time" % (100 * summary["share_in_calls"]),
        "                        measured      all calls of an invocation at once   ratio",
    ] + figure_lines(m, b, r) + [
        "The ratio is the floor of what a foreaction graph of this function can reach here.",
    ] + device_report(summary) + memory_report(summary) + lost_report(summary))


def lost_report(summary):
    """A warning when perf lost events: the invocations open at each loss
    were left out (see invocations_of), so the figures cover fewer
    invocations than the program made."""
    if not summary.get("lost_events"):
        return []
    return ["Warning: perf lost %d events (its buffer was full); the invocations open when "
            "they were lost are left out." % summary["lost_events"]]


def figure_lines(measured, bound, ratio):
    """The report's average, p50 and p99 lines: measured time, bound, ratio."""
    return ["  %-21s %9.1f us  %9.1f us                             %.3fx"
            % (key, measured[key], bound[key], ratio[key]) for key in ("average", "p50", "p99")]


def device_report(summary):
    """The report's lines of the device-aware bound (none without it)."""
    if "device_gain" not in summary:
        return []
    return [
        "On a device that serves at most %s the requests of one at a time (--device-gain):"
        % describe_gain(summary["device_gain"]),
        "                        measured      at once, on that device                ratio",
    ] + figure_lines(summary["measured_us"], summary["device_bound_us"], summary["device_ratio"])


def describe_gain(device_gain):
    """"4.00x" for a gain, "1.60x at queue depth 2, 2.70x at 4" for a curve
    (as the summary keeps it, depths as strings)."""
    if not isinstance(device_gain, dict):
        return "%.2fx" % device_gain
    return ", ".join("%.2fx at %s" % (gain, ("queue depth %s" if index == 0 else "%s") % depth)
                     for index, (depth, gain) in
                     enumerate(sorted(device_gain.items(), key=lambda item: int(item[0]))))


def memory_report(summary):
    """The report's lines of the bound that keeps calls served from memory
    (none without --cached-below)."""
    if "cached_below_us" not in summary:
        return []
    on_device = " on that device" if "device_gain" in summary else ""
    return [
        "Calls shorter than %g us (%.1f%% of them) served from memory, only the others at once%s:"
        % (summary["cached_below_us"], 100 * summary["memory_calls_share"], on_device),
        "                        measured      slow calls at once                     ratio",
    ] + figure_lines(summary["measured_us"], summary["memory_bound_us"], summary["memory_ratio"])


# ------------------------------------------------------------ running perf

def symbol_address(binary, function):
    """(address, mangled name) of `function` in `binary`'s symbol tables, or
    raises LookupError with a message."""
    candidates = []
    for dynamic in (False, True):
        listing = subprocess.run(["nm", "--defined-only"] + (["-D"] if dynamic else []) + [binary],
                                 capture_output=True, text=True)
        demangled = subprocess.run(["nm", "--defined-only", "-C"] + (["-D"] if dynamic else [])
                                   + [binary], capture_output=True, text=True)
        if listing.returncode != 0:
            continue
        for raw, readable in zip(listing.stdout.splitlines(), demangled.stdout.splitlines()):
            raw_fields, readable_fields = raw.split(None, 2), readable.split(None, 2)
            if len(raw_fields) < 3 or raw_fields[1] not in "TtWi":
                continue
            address, mangled, name = raw_fields[0], raw_fields[2], readable_fields[2]
            if function in (mangled, name) or name.split("(")[0] == function:
                candidates.append((int(address, 16), mangled, name))
        if candidates:
            break
    unique = {(address, mangled) for address, mangled, _ in candidates}
    if not unique:
        raise LookupError("no function %r in the symbol tables of %s (list candidates with "
                          "'nm -C %s')" % (function, binary, binary))
    if len(unique) > 1:
        names = sorted({name for _, _, name in candidates})
        raise LookupError("%r names %d functions in %s; give one of: %s"
                          % (function, len(unique), binary, "; ".join(names)))
    return unique.pop()


def perf_usable():
    """None when perf can add uprobes and trace system calls, else why not."""
    if shutil.which("perf") is None:
        return "perf is not installed (Debian: apt-get install linux-perf)"
    if os.geteuid() != 0:
        return "adding uprobes needs root"
    probe = subprocess.run(["perf", "list", "syscalls:sys_enter_pread64"], capture_output=True,
                           text=True)
    if "sys_enter_pread64" not in probe.stdout:
        return "perf sees no syscall tracepoints (is tracefs mounted?)"
    if tracefs_uprobe_events() is None:
        return "the kernel offers no uprobes (no uprobe_events in tracefs)"
    return None


PROBE_GROUP_PREFIX = "foreactor_bound_"


def tracefs_uprobe_events():
    """The path of the kernel's uprobe_events file, or None."""
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        path = os.path.join(root, "uprobe_events")
        if os.path.exists(path):
            return path
    return None


def stale_probe_groups(uprobe_events_text, process_alive, own_pid):
    """The probe groups of earlier runs of this command whose process is gone
    (killed before it could remove them): groups named PROBE_GROUP_PREFIX +
    pid in `uprobe_events_text` for which `process_alive(pid)` is false.  A
    group named with `own_pid`, the calling run's pid, is stale too: the run
    has added nothing yet, and a run in another pid namespace may have left
    it.  Returns the group names, sorted."""
    groups = set()
    for line in uprobe_events_text.splitlines():
        match = re.match(r"^[pr]:(%s(\d+))/" % PROBE_GROUP_PREFIX, line)
        if match:
            pid = int(match.group(2))
            if pid == own_pid or not process_alive(pid):
                groups.add(match.group(1))
    return sorted(groups)


def process_alive(pid):
    return os.path.exists("/proc/%d" % pid)


def remove_stale_probes():
    """Removes the probes that killed runs left behind.  perf refuses to add
    an event whose name exists in any group, so a stale probe would make every
    later run fail."""
    path = tracefs_uprobe_events()
    if path is None:
        return
    with open(path) as events:
        text = events.read()
    for group in stale_probe_groups(text, process_alive, os.getpid()):
        remove_probes(group)


def add_probes(binary, address, group, tag):
    """Adds entry and return uprobes at `address` of `binary` in `group`, with
    event names ending in `tag` (unique to this run: perf checks event names
    across groups); returns their event names, or raises RuntimeError."""
    names = []
    for event, suffix in (("entry_" + tag, ""), ("exit_" + tag, "%return")):
        added = subprocess.run(["perf", "probe", "-x", binary,
                                "-a", "%s:%s=0x%x%s" % (group, event, address, suffix)],
                               capture_output=True, text=True)
        if added.returncode != 0:
            raise RuntimeError("perf probe could not add the %s probe: %s"
                               % (event, added.stderr.strip()))
    listed = subprocess.run(["perf", "probe", "-l", "%s:*" % group], capture_output=True, text=True)
    for line in listed.stdout.splitlines():
        fields = line.split()
        if fields:
            names.append(fields[0])
    entry = next((n for n in names if n.split(":")[-1] == "entry_" + tag), None)
    exit_event = next((n for n in names if n.split(":")[-1].startswith("exit_" + tag)), None)
    if entry is None or exit_event is None:
        raise RuntimeError("perf probe listed %r after adding the probes" % names)
    return entry, exit_event


def remove_probes(group):
    subprocess.run(["perf", "probe", "-q", "-d", "%s:*" % group], capture_output=True)


def main(arguments, tool):
    parser = make_parser(tool)
    options, command = tool.parse_command_line(parser, arguments)
    if command is None:
        parser.error("missing '--' before the command: write '%s bound --function SYMBOL -- "
                     "CMD ARGS...'" % tool.TOOL)
    if not command:
        parser.error("no command after '--': give the program to run")
    calls = [call for call in options.calls.split(",") if call]
    if not calls or not all(re.fullmatch(r"[a-z0-9_]+", call) for call in calls):
        parser.error("--calls: comma-separated system call names such as pread64,read, not %r"
                     % options.calls)
    binary = options.binary or shutil.which(command[0])
    if binary is None or not os.path.isfile(binary):
        parser.error("cannot find %r; give --binary FILE" % (options.binary or command[0]))
    try:
        address, _ = symbol_address(binary, options.function)
    except LookupError as error:
        parser.error(str(error))
    why_not = perf_usable()
    if why_not is not None:
        tool.fail(parser.prog, why_not, EXIT_PERF_UNUSABLE)

    remove_stale_probes()
    group = "%s%d" % (PROBE_GROUP_PREFIX, os.getpid())
    with tempfile.TemporaryDirectory(prefix="foreactor-bound-") as scratch:
        data = os.path.join(scratch, "perf.data")
        try:
            entry, exit_event = add_probes(binary, address, group, str(os.getpid()))
            record = ["perf", "record", "-q", "-m", PERF_BUFFER_PAGES, "-o", data,
                      "-e", entry, "-e", exit_event]
            for call in calls:
                record += ["-e", "syscalls:sys_enter_" + call, "-e", "syscalls:sys_exit_" + call]
            completed = subprocess.run(record + ["--"] + command)
        except RuntimeError as error:
            tool.fail(parser.prog, str(error), EXIT_PERF_UNUSABLE)
        finally:
            remove_probes(group)
        status = locate.exit_status(completed.returncode)
        # Read as perf writes it: the whole listing (hundreds of MiB for a
        # long run) is never held at once.
        with subprocess.Popen(["perf", "script", "-i", data, "-F", "tid,time,event",
                               "--show-lost-events"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True) as script:
            events = parse_perf_script(script.stdout, entry, exit_event, calls)
    summary = summarize(invocations_of(events), options.device_gain, options.cached_below)
    lost = sum(count for count, _, kind in events if kind == "lost")
    if summary is None:
        print("foreactor bound: %s was never called (or never returned)" % options.function)
        return status if status != 0 else 1
    summary["lost_events"] = lost
    print(format_report(options.function, summary))
    if options.json:
        with open(options.json, "w") as out:
            json.dump(dict(summary, function=options.function, command=command, calls=calls),
                      out, indent=1)
    return status
