#!/usr/bin/env python3
"""Medians and ranges of growing / presized pairs (bench_us big ... -w grow)."""
import glob, os, re, statistics, sys

def read(path):
    d = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) == 7 and f[0] == "big" and f[2].startswith("grow"):
            d[f[5]] = float(f[6])
    return d

def main(dirname):
    pairs = []
    for g in sorted(glob.glob(os.path.join(dirname, "chtmap-u64.*.csv"))):
        r = g.rsplit(".", 2)[1]
        p = os.path.join(dirname, "chtmap-u64-presized.%s.csv" % r)
        if os.path.exists(p):
            pairs.append((r, read(g), read(p)))
    rows = []
    for r, g, p in pairs:
        if not g or not p:
            continue
        rows.append({
            "g_p999": g["p999_ns"], "p_p999": p["p999_ns"],
            "r_p999": g["p999_ns"] / p["p999_ns"],
            "g_p99": g["p99_ns"], "p_p99": p["p99_ns"],
            "r_p99": g["p99_ns"] / p["p99_ns"],
            "g_max": g["max_us"], "p_max": p["max_us"],
            "r_max": g["max_us"] / p["max_us"],
            "g_mops": g["mops"], "p_mops": p["mops"],
        })
        print("pair %s: p99.9 %.0f / %.0f ns = %.2f; p99 %.0f / %.0f = %.2f; "
              "max %.0f / %.0f us = %.2f; Mops %.2f / %.2f" % (
                  r, g["p999_ns"], p["p999_ns"], rows[-1]["r_p999"],
                  g["p99_ns"], p["p99_ns"], rows[-1]["r_p99"],
                  g["max_us"], p["max_us"], rows[-1]["r_max"],
                  g["mops"], p["mops"]))
    for k in ("r_p999", "r_p99", "r_max", "g_p999", "p_p999", "g_max",
              "p_max", "g_mops", "p_mops"):
        v = [x[k] for x in rows]
        print("%-7s median %.2f [%.2f-%.2f] (n=%d)" % (
            k, statistics.median(v), min(v), max(v), len(v)))

main(sys.argv[1])
