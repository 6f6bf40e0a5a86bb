"""Two runs of the same Gets compared at the same shape of the database.

With LevelDB's own compactions, the level-0 image does not keep its shape
through a run: LevelDB merges its 12 level-0 tables away in the run's first
few tenths of a second, whatever the Gets do, and a Get before that visits
about 15 tables against 2 or 3 after.  A run whose Gets are faster makes
more of its Gets before the merge, so its average weighs the expensive Gets
more than plain's does, and the plain ratio of averages understates its
gain.  `foreactor bound` is
computed on plain's Gets, so it is compared with a ratio at plain's mix.

The driver (--latency-by-level0) groups each run's Gets by the number of
level-0 tables as they started, with their summed latency.  At plain's mix,
a configuration's time is the sum over the groups both runs have of plain's
Gets in the group times the configuration's mean latency in it; plain's
time is its own sum over the same groups.  Their ratio is the
configuration's time ratio at plain's mix of shapes.
"""

# Below this share of plain's Gets in groups both runs have, the runs are
# not compared at plain's mix (a group of one run alone has no counterpart).
MIN_SHARE_COVERED = 0.9


def totals_at_plain_mix(plain_groups, groups):
    """(plain's time, the configuration's time at plain's mix), in
    microseconds, from the driver's "latency_by_level0" lists of the two
    runs; None when either is missing or the groups both runs have hold
    less than MIN_SHARE_COVERED of plain's Gets."""
    if not plain_groups or not groups:
        return None
    mine = {group["level0_tables"]: group for group in groups if group["gets"] > 0}
    plain_total = candidate_total = 0.0
    covered = 0
    for group in plain_groups:
        other = mine.get(group["level0_tables"])
        if other is None:
            continue
        covered += group["gets"]
        plain_total += group["total_us"]
        candidate_total += group["gets"] * other["total_us"] / other["gets"]
    all_gets = sum(group["gets"] for group in plain_groups)
    if all_gets == 0 or covered < MIN_SHARE_COVERED * all_gets or plain_total <= 0:
        return None
    return plain_total, candidate_total


def paired_totals(plain_samples, samples):
    """Per round, the totals_at_plain_mix of the driver summaries of plain
    and of a configuration (rounds paired by index): two lists, plain's and
    the configuration's, with None where a round cannot be compared.  Pass
    them to ratios.paired_ratio."""
    plain_times, times = [], []
    for plain, sample in zip(plain_samples, samples):
        totals = totals_at_plain_mix(plain.get("latency_by_level0"),
                                     sample.get("latency_by_level0"))
        plain_times.append(totals[0] if totals else None)
        times.append(totals[1] if totals else None)
    return plain_times, times
