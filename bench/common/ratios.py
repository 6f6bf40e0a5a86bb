"""Ratios of paired rounds with a 95% confidence interval, and the share of
the available gain a result realizes.

Every benchmark runs the plain program and each configuration once per round,
in an order that alternates from round to round (runs.alternating_order), so
round i of the plain program and round i of a configuration form a pair that
saw the same machine state (load, temperature, page cache left by the rounds
before).

The estimate is the MEDIAN OF THE PER-PAIR RATIOS (configuration time /
plain time of the same round), not the ratio of the two medians.  Why: a
pair's ratio cancels what the two runs of a round share (a burst of load from
another process slows both), which is the reason to pair at all; the ratio
of medians takes each median over rounds of different conditions and throws
that away.  The median (rather than the mean) of the pair ratios keeps one
disturbed round from moving the figure.  The interval is a percentile
bootstrap over pairs: pairs are drawn with replacement, the median of their
ratios taken, 10,000 times with a fixed seed, so the same samples always give
the same interval.

With fewer than MIN_PAIRS_FOR_INTERVAL pairs there is no interval (None):
two pairs can only say that the ratio lies between them, which a reader
would take for more than it is.

All ratios here are time ratios (below 1: faster than plain).  For a
throughput, pass its inverse (time per unit of work).
"""

import random
import statistics

CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 20261125
MIN_PAIRS_FOR_INTERVAL = 3


def pair_ratios(baseline, candidate):
    """candidate[i] / baseline[i] for each round where both are positive
    numbers (a failed run, recorded as None, drops its pair)."""
    if len(baseline) != len(candidate):
        raise ValueError(f"{len(baseline)} baseline rounds against {len(candidate)} "
                         "candidate rounds: rounds must be paired one to one")
    return [c / b for b, c in zip(baseline, candidate)
            if b is not None and c is not None and b > 0 and c > 0]


def bootstrap_interval(ratios, confidence=CONFIDENCE, resamples=RESAMPLES, seed=SEED):
    """(low, high): the percentile bootstrap interval of the median of
    `ratios`, drawn with replacement `resamples` times from Random(seed)."""
    generator = random.Random(seed)
    count = len(ratios)
    medians = sorted(statistics.median(generator.choices(ratios, k=count))
                     for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low_index = int(tail * resamples)
    high_index = min(resamples - 1, int((1.0 - tail) * resamples))
    return medians[low_index], medians[high_index]


def paired_ratio(baseline, candidate, seed=SEED):
    """The time ratio candidate/baseline of paired rounds, as recorded in
    every results file:
      {"ratio": median of the per-pair ratios (None without a pair),
       "low", "high": the 95% bootstrap interval (None below 3 pairs),
       "pairs": pairs used, "confidence": 0.95}"""
    ratios = pair_ratios(baseline, candidate)
    result = {"ratio": statistics.median(ratios) if ratios else None,
              "low": None, "high": None, "pairs": len(ratios), "confidence": CONFIDENCE}
    if len(ratios) >= MIN_PAIRS_FOR_INTERVAL:
        result["low"], result["high"] = bootstrap_interval(ratios, seed=seed)
    return result


def inverse(values):
    """1/value for each value (None and non-positive values become None):
    turns a throughput per round into a time per unit of work."""
    return [1.0 / value if value is not None and value > 0 else None for value in values]


def share_realized(ratio, bound):
    """The share of the available gain a time ratio realizes:
    (1 - ratio) / (1 - bound), where `bound` is the time ratio of the best
    that can be had (the device's QD64 time over its QD1 time, `foreactor
    bound`, a peer tool).  1 means the bound is reached, 0 no gain, below 0
    slower than plain.  None when either is missing or the bound offers no
    gain (bound >= 1)."""
    if ratio is None or bound is None or bound >= 1.0:
        return None
    return (1.0 - ratio) / (1.0 - bound)


def relative_width(interval):
    """(high - low) / ratio of a paired_ratio() result, or None."""
    if not interval or interval.get("low") is None or not interval.get("ratio"):
        return None
    return (interval["high"] - interval["low"]) / interval["ratio"]


def format_ratio(interval):
    """'0.41x [0.39, 0.44]' ('0.41x (2 pairs, no interval)'; '-' without a ratio)."""
    if not interval or interval.get("ratio") is None:
        return "-"
    text = f"{interval['ratio']:.2f}x"
    if interval.get("low") is None:
        return f"{text} ({interval.get('pairs', 0)} pairs, no interval)"
    return f"{text} [{interval['low']:.2f}, {interval['high']:.2f}]"


def format_share(share):
    return "-" if share is None else f"{share:.0%}"


def describe_widths(intervals):
    """One line on how wide the 95% intervals came out, over `intervals`
    (paired_ratio() results)."""
    if not intervals:
        return "95% intervals: none (this benchmark reports no ratio)"
    widths = sorted(width for width in map(relative_width, intervals) if width is not None)
    pairs = sorted({interval["pairs"] for interval in intervals if interval})
    if not widths:
        return (f"95% intervals: none (pairs per ratio: {', '.join(map(str, pairs)) or '0'}; "
                f"an interval needs at least {MIN_PAIRS_FOR_INTERVAL})")
    return (f"95% intervals over {', '.join(map(str, pairs))} pairs: width "
            f"{widths[0]:.1%} to {widths[-1]:.1%} of the ratio, median "
            f"{statistics.median(widths):.1%} ({len(widths)} ratios)")
