#!/usr/bin/env python3
"""Summary of run.sh's CSVs: per table, the median Mops/s of every lookup
round [range] (hit, miss), and the medians of the per-pass ratios of each
table's median against cuckoo's and ideal-node's of the same pass.

    summarize.py [DIR] [PREFIX]     (PREFIX: p; h for the THP passes and a
                                     for the A/B of ../huge-pages)
"""
import collections
import glob
import os
import re
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
pre = sys.argv[2] if len(sys.argv) > 2 else "p"
runs = collections.defaultdict(dict)   # (pass) -> table -> wl -> [mops]
for path in sorted(glob.glob(os.path.join(d, "%s[0-9]*-*.csv" % pre))):
    m = re.match(r"%s(\d+)-(.+)\.csv$" % pre, os.path.basename(path))
    ps, table = int(m.group(1)), m.group(2)
    for ln in open(path):
        f = ln.strip().split(",")
        if len(f) == 7 and f[0] == "big" and f[5] == "mops" and "#" in f[2]:
            wl = f[2].split("#")[0]
            runs[ps].setdefault(table, {}).setdefault(wl, []).append(
                float(f[6]))


def med(x):
    return statistics.median(x) if x else float("nan")


tables = []
for ps in sorted(runs):
    for t in runs[ps]:
        if t not in tables:
            tables.append(t)
print("| table | hit Mops/s | miss Mops/s | hit / cuckoo | hit / ideal-node |"
      " miss / cuckoo |")
print("|---|---|---|---|---|---|")
for t in tables:
    cells = []
    for wl in ("lookup-hit", "lookup-miss"):
        xs = [v for ps in runs for v in runs[ps].get(t, {}).get(wl, [])]
        cells.append("%.2f [%.2f-%.2f]" % (med(xs), min(xs), max(xs))
                     if xs else "-")
    ratios = []
    for ref, wl in (("cuckoo", "lookup-hit"), ("ideal-node", "lookup-hit"),
                    ("cuckoo", "lookup-miss")):
        rs = [med(runs[ps][t][wl]) / med(runs[ps][ref][wl])
              for ps in runs if t in runs[ps] and ref in runs[ps]]
        ratios.append("%.2f [%.2f-%.2f]" % (med(rs), min(rs), max(rs))
                      if rs else "-")
    print("| `%s` | %s |" % (t, " | ".join(cells + ratios)))
print("\n%d passes; samples per table and workload: %s" % (
    len(runs), sorted({len(w) for ps in runs for t in runs[ps].values()
                       for w in t.values()})))
