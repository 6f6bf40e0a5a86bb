"""Holding a machine's proactive reclaim (DAMON's pageout) while a benchmark
or a test that counts cached pages runs.

Some virtual machines run DAMON, the kernel's data access monitor, with a
scheme that pages out memory it finds idle (action "pageout"), so that the
host can take the memory back.  On the development VM (2026-12-03) kdamond
0 monitors physical memory in 1,024 to 8,192 regions, samples every 500 ms,
aggregates every 5 s, and pages out regions with at most one access in 12
aggregations (a minute), up to 128 MiB a second.  Its regions are coarse
and its view lags: pages just read into the page cache can lie in a region
it still takes as idle and be paged out seconds later.  A test that read
500 ranges of a file and then asked which were cached found 6 of them gone,
and a hot benchmark's data left untouched for a minute leaves the cache as
well: noise that no program measured causes.

hold() turns off every running kdamond with a pageout scheme (its sysfs
"state" to "off"); release() turns them on again, as does the end of the
Python process, SIGTERM included (at_exit).  From a shell (./run test
holds it for the whole suite): `python3 bench/common/proactive_reclaim.py
hold` turns them off and prints their state files, one per line; `...
release FILE...` turns them on.  Where there is no DAMON sysfs interface,
or no such kdamond, or the state cannot be written, nothing changes and
the result says so.  Two holders at once in separate processes may leave
a kdamond off after both end (the second saw it off): the machine then
only reclaims later.
"""

import sys
from pathlib import Path

try:
    from bench.common import at_exit
except ImportError:  # run as a script from the shell: this file's folder is on the path
    import at_exit

KDAMONDS = Path("/sys/kernel/mm/damon/admin/kdamonds")

_held = []  # the state files hold() turned off, to turn on again


def _pages_out(kdamond):
    """True when a scheme of one of `kdamond`'s contexts pages out."""
    for action in kdamond.glob("contexts/*/schemes/*/action"):
        try:
            if action.read_text().strip() == "pageout":
                return True
        except OSError:
            pass
    return False


def hold(kdamonds=KDAMONDS, release_at_exit=True):
    """Turns off the running kdamonds that page out, until release() (or
    the process's exit, unless `release_at_exit` is False).

    Returns a dict for a results file: {"held": [kdamond names]} (empty
    when none ran), or {"held": [...], "why": "<path>: <error>"} when one
    could not be turned off."""
    held = []
    try:
        candidates = sorted(Path(kdamonds).iterdir()) if Path(kdamonds).is_dir() else []
    except OSError:
        candidates = []
    for kdamond in candidates:
        if not kdamond.is_dir():
            continue  # nr_kdamonds
        state = kdamond / "state"
        try:
            if state.read_text().strip() != "on" or not _pages_out(kdamond):
                continue
            state.write_text("off")
        except OSError as error:
            return {"held": held, "why": f"{state}: {error.strerror or error}"}
        if not _held and release_at_exit:
            at_exit.register(release)
        _held.append(state)
        held.append(kdamond.name)
    return {"held": held}


def release():
    """Turns on every kdamond hold() turned off.  Safe to call more than once.
    Returns a message for each state file that could not be written (nothing
    more can be done there: the machine reclaims no more idle memory)."""
    failed = []
    while _held:
        state = _held.pop()
        try:
            state.write_text("on")
        except OSError as error:
            failed.append(f"{state}: {error.strerror or error}")
    return failed


def describe(result):
    """hold()'s result in a few words for a header."""
    if not result:
        return "proactive reclaim: not recorded"
    held = result.get("held") or []
    text = (f"proactive reclaim (DAMON pageout) held during the run: kdamond "
            f"{', '.join(held)}" if held else "proactive reclaim: no DAMON pageout running")
    if result.get("why"):
        text += f"; could not hold another ({result['why']})"
    return text


def main(arguments):
    """The shell's interface (see the top).  Returns the exit status."""
    if arguments[:1] == ["hold"] and len(arguments) == 1:
        result = hold(release_at_exit=False)
        for state in _held:
            print(state)
        if result.get("why"):
            print(describe(result), file=sys.stderr)
        return 0
    if arguments[:1] == ["release"]:
        _held.extend(Path(state) for state in arguments[1:])
        for message in release():
            print(message, file=sys.stderr)
        return 0
    print("usage: proactive_reclaim.py hold | release FILE...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
