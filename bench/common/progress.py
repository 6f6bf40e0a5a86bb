"""A one-line progress report with an estimate of the time left.

On a terminal the line is redrawn in place; otherwise (a log file) a line is
printed at most every `interval_seconds`.  The estimate assumes the steps
left take as long as the steps done so far, on average.
"""

import sys
import time


def format_duration(seconds):
    """'42s', '3m05s' or '1h02m' (seconds rounded; negative counts as 0)."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


def estimate_left(done, total, elapsed_seconds):
    """Seconds left at the average pace so far; None before the first step."""
    if done <= 0:
        return None
    return elapsed_seconds / done * max(0, total - done)


class Progress:
    """Counts `total` steps; call step(label) after each."""

    WIDTH = 30

    def __init__(self, total, stream=None, interval_seconds=10.0, clock=time.monotonic):
        self.total = max(1, total)
        self.done = 0
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.started = clock()
        self.interval_seconds = interval_seconds
        self.last_printed = None
        self.redraw = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, label=""):
        """The progress line as it would be printed now."""
        elapsed = self.clock() - self.started
        filled = self.WIDTH * min(self.done, self.total) // self.total
        bar = "#" * filled + "." * (self.WIDTH - filled)
        left = estimate_left(self.done, self.total, elapsed)
        eta = "?" if left is None else format_duration(left)
        text = f"[{bar}] {self.done}/{self.total} {format_duration(elapsed)} elapsed, ETA {eta}"
        return f"{text}  {label}" if label else text

    def step(self, label=""):
        self.done += 1
        now = self.clock()
        if self.redraw:
            self.stream.write("\r\033[K" + self.line(label))
            self.stream.flush()
        elif (self.last_printed is None or now - self.last_printed >= self.interval_seconds
              or self.done >= self.total):
            self.stream.write(self.line(label) + "\n")
            self.stream.flush()
            self.last_printed = now

    def finish(self):
        if self.redraw:
            self.stream.write("\n")
            self.stream.flush()
