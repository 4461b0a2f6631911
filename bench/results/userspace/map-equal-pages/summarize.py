#!/usr/bin/env python3
"""Summary of run.sh's CSVs: per run name the median Mops/s of every lookup
sample [range] (hits, unsuccessful lookups), the medians [range] of the
per-round ratios of its median hits and unsuccessful lookups to REF's, and
the RSS bytes per key after the presized fill.

    summarize.py DIR [PREFIX [REF]]   (PREFIX r for 1e8, r65536- etc.;
                                       REF default ckhs-thp)
"""
import collections
import glob
import os
import re
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
pre = sys.argv[2] if len(sys.argv) > 2 else "r"
REF = sys.argv[3] if len(sys.argv) > 3 else "ckhs-thp"
runs = collections.defaultdict(dict)      # round -> table -> wl -> [mops]
bpk = {}
for path in sorted(glob.glob(os.path.join(d, "%s[0-9]*-*.csv" % pre))):
    m = re.match(r"%s(\d+)-([a-z].*)\.csv$" % re.escape(pre),
                 os.path.basename(path))
    if not m:
        continue
    rd, table = int(m.group(1)), m.group(2)
    for ln in open(path):
        f = ln.strip().split(",")
        if len(f) != 7 or f[0] != "big":
            continue
        if f[5] == "mops" and "#" in f[2]:
            runs[rd].setdefault(table, {}).setdefault(
                f[2].split("#")[0], []).append(float(f[6]))
        if f[5] == "bytes_per_key_rss" and f[2].startswith("grow"):
            bpk.setdefault(table, []).append(float(f[6]))
med = statistics.median
tables = []
for rd in sorted(runs):
    tables += [t for t in runs[rd] if t not in tables]
print("| run | hits Mops/s | unsuccessful Mops/s | hits / %s |"
      " unsuccessful / %s | RSS bytes per key |" % (REF, REF))
print("|---|---|---|---|---|---|")
for t in tables:
    cells = []
    for wl in ("lookup-hit", "lookup-miss"):
        xs = [v for rd in runs for v in runs[rd].get(t, {}).get(wl, [])]
        cells.append("%.2f [%.2f-%.2f]" % (med(xs), min(xs), max(xs)))
    for wl in ("lookup-hit", "lookup-miss"):
        rs = [med(runs[rd][t][wl]) / med(runs[rd][REF][wl])
              for rd in runs if t in runs[rd] and REF in runs[rd]]
        cells.append("%.2f [%.2f-%.2f]" % (med(rs), min(rs), max(rs))
                     if rs else "-")
    cells.append("%.1f" % med(bpk[t]) if t in bpk else "-")
    print("| `%s` | %s |" % (t, " | ".join(cells)))
print("\n%d rounds; samples per table and workload: %s" % (
    len(runs), sorted({len(w) for rd in runs for t in runs[rd].values()
                       for w in t.values()})))
