"""Shared helpers of the benchmarks under bench/ (and of examples/demo.py).

  cache     make the page cache cold (scripts/drop_caches.sh) or warm
  runs      environments for plain and foreactor runs, alternating order,
            medians and ratios, foreactor statistics files
  progress  a progress line with an estimate of the time left
  machine   a description of the machine a result was measured on
  device_reference  fio random reads at QD 1/16/64: what the device allows
  run_record        what every benchmark records and prints about its run
                    (machine, commit, load, device reference, rounds)
  ratios    paired time ratios with 95% bootstrap intervals; the share of
            the available gain a result realizes
  results   writing result JSON files atomically
  at_exit   undoing a benchmark's changes to the machine when its process
            ends, SIGTERM and SIGHUP included

Import with the repository root on sys.path:  from bench.common import cache
"""
