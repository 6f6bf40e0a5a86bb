"""Work a benchmark must undo when its process ends, however it ends.

Python runs the functions given to atexit when the program returns, raises,
or is stopped with Ctrl-C (KeyboardInterrupt), but not when it is ended by
SIGTERM or SIGHUP: their default action ends the process at once.  Those
are how `kill`, timeout(1) and a closed terminal stop a benchmark, and a
benchmark stopped so left the machine as it had set it for the run (DAMON's
pageout off, free page reporting held back) until someone noticed.

register() adds a function as atexit does and, from the main thread, makes
SIGTERM and SIGHUP end the process the way Ctrl-C does: they raise
SystemExit(128 + the signal's number), which unwinds the program (its
`with` blocks and `finally` clauses run: a memory cgroup is removed) and
then runs the atexit functions.  A signal whose handler the program set
itself is left alone.
"""

import atexit
import signal
import threading

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _exit_for_signal(signal_number, _frame):
    raise SystemExit(128 + signal_number)


def register(function):
    """Runs `function` when the process ends: at its exit as atexit does,
    and after SIGTERM or SIGHUP as well (see the top)."""
    atexit.register(function)
    if threading.current_thread() is not threading.main_thread():
        return  # (only the main thread can set handlers; atexit still runs)
    for signal_number in ENDING_SIGNALS:
        if signal.getsignal(signal_number) is signal.SIG_DFL:
            signal.signal(signal_number, _exit_for_signal)
