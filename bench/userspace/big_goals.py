"""The Big-Memory goals that bench-big's default plan does not measure at 1e8
keys, from `bench_us big` runs made one table at a time (the commands are in
bench/RESULTS.md's section): lookups while the table is resized or grown
(Triplett), churn at constant size, the power-of-two crossing, the 30-minute
soak, and the 2-thread lookup scaling re-measured without YCSB writes
between the rounds.

    python3 -m bench.userspace.big_goals --dir DIR [--out PNGDIR]

DIR holds the runs' stdout as NAME.csv (resize-chtmap, big-chtmap, big-cht,
churn-ckhs, churn-cuckoo, anom-ckhs, anom-ckhs-thp, anom-chtmap; missing ones
are skipped). Prints the markdown section; writes big-goals-*.png to PNGDIR.
"""

import argparse
import os
import statistics

from bench.userspace.common import pyplot_or_none, save_fig

RUNS = ("resize-chtmap", "big-chtmap", "big-cht", "churn-ckhs", "churn-cuckoo",
        "anom-ckhs", "anom-ckhs-thp", "anom-chtmap")
#: The crossing at the grow point, one table per run (`bench_us big IMPL -k
#: 100000000 -t 1 -w crossing`), as cross-IMPL.csv.
CROSS_RUNS = ("cht", "cht-unpinned", "chtmap-u64", "cuckoo", "tbb-hm",
              "rwlock", "ckhs")


def load(path):
    """(rows {(impl, workload, threads, metric): value}, timelines
    {(impl, workload): [(sec, ops, p50, p99, p999, max, rss, heap)]})."""
    rows, tl = {}, {}
    with open(path) as f:
        for ln in f:
            p = ln.rstrip("\n").split(",")
            if p[0] == "big" and len(p) == 7:
                rows[(p[1], p[2], int(p[4]), p[5])] = float(p[6])
            elif p[0] == "tl" and len(p) == 12:
                tl.setdefault((p[1], p[2]), []).append(
                    tuple(float(x) for x in p[4:]))
    return rows, tl


def med(vals):
    """'median [lowest-highest]' of @a vals."""
    return "%.2f [%.2f-%.2f]" % (statistics.median(vals), min(vals), max(vals))


def rounds(rows, impl, wl, th, metric="mops"):
    out = []
    for rd in range(1, 100):
        v = rows.get((impl, "%s#%d" % (wl, rd), th, metric))
        if v is None:
            break
        out.append(v)
    return out


def resize_section(runs, md):
    md.append("### Lookups while resizing (Triplett), 1e8 keys, 1 reader")
    md.append("")
    md.append("| table | round | buckets | fixed Mops/s | resizing Mops/s | "
              "resizing / fixed | what the resizer did |")
    md.append("|---|---|---|---|---|---|---|")
    ratios = {}
    for name, impl in (("resize-chtmap", "chtmap-u64"), ("big-cht", "cht")):
        if name not in runs:
            continue
        r, _ = runs[name]
        fixed_n = rounds(r, impl, "resize-fixed-n", 1)
        fixed_m = rounds(r, impl, "resize-fixed-m", 1)
        rez = rounds(r, impl, "resize-resizing", 1)
        for i, v in enumerate(rez):
            rd = "#%d" % (i + 1)
            a = r.get((impl, "resize-resizing" + rd, 1, "buckets_a"))
            b = r.get((impl, "resize-resizing" + rd, 1, "buckets_b"))
            if a is None or b is None:
                continue  # the round's end is not in the file yet
            if fixed_m:
                # Flips between a and b: against the slower fixed size.
                fx = min(fixed_n[i], fixed_m[i])
                did = "%d resizes %d <-> %d" % (
                    r.get((impl, "resize-resizing" + rd, 1, "resizes"), 0),
                    a, b)
                fixed = "%.2f (n) / %.2f (n/2)" % (fixed_n[i], fixed_m[i])
            else:
                fx = fixed_n[i]
                did = "grew %d -> %d in %.1f s (%.2f M splits/s)" % (
                    a, b, r[(impl, "resize-resizing" + rd, 1,
                             "grow_seconds")],
                    r[(impl, "resize-resizing" + rd, 1, "splits_per_s")]
                    / 1e6)
                fixed = "%.2f" % fx
            ratios.setdefault(impl, []).append(v / fx)
            md.append("| %s | %d | %d | %s | %.2f | %.2f | %s |" % (
                impl, i + 1, a, fixed, v, v / fx, did))
    md.append("")
    for impl, rs in ratios.items():
        md.append("- `%s` resizing / fixed (the slower fixed size for the "
                  "flips): median %s over %d rounds; goal >= 0.9" % (
                      impl, med(rs), len(rs)))
    md.append("")
    return ratios


def churn_section(runs, md):
    md.append("### Churn at constant size, 10 minutes, 1 thread")
    md.append("")
    md.append("| table | Mops/s | p99.9 ns | max us | RSS at start GiB | RSS "
              "at end GiB | RSS end / start | RSS second half flat % | heap "
              "second half flat % | errors |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    series = {}
    for name, impl in (("big-chtmap", "chtmap-u64"), ("big-cht", "cht"),
                       ("churn-cuckoo", "cuckoo"), ("churn-ckhs", "ckhs")):
        if name not in runs:
            continue
        r, tl = runs[name]
        g = lambda m: r.get((impl, "churn", 1, m))
        if g("mops") is None:
            continue
        pts = tl.get((impl, "churn"), [])
        series[impl] = pts
        rs0, rs1 = g("rss_start_mb") / 1024, g("rss_end_mb") / 1024
        md.append("| %s | %.2f | %.0f | %.0f | %.2f | %.2f | %.3f | %.2f | "
                  "%.2f | %d |" % (impl, g("mops"), g("p999_ns"),
                                   g("max_us"), rs0, rs1, rs1 / rs0,
                                   g("rss_flat_pct"), g("heap_flat_pct"),
                                   g("errors")))
    md.append("")
    return series


def crossing_section(runs, md):
    md.append("### Power-of-two crossing, 1 thread")
    md.append("")
    md.append("| table | threshold at keys | filled to | inserted to | "
              "buckets before -> after | p50 ns | p99 ns | p99.9 ns | max us "
              "| grow p99.9 ns | grow max us | errors |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, impl in (("big-chtmap", "chtmap-u64"), ("big-cht", "cht")):
        if name not in runs:
            continue
        r, _ = runs[name]
        g = lambda m, wl="crossing": r.get((impl, wl, 1, m))
        if g("mops") is None:
            continue
        md.append("| %s | %d | %d | %d | %d -> %d | %.0f | %.0f | %.0f | %.0f "
                  "| %.0f | %.0f | %d |" % (
                      impl, g("at_keys"), g("from_keys"), g("to_keys"),
                      g("buckets_before"), g("buckets_after"), g("p50_ns"),
                      g("p99_ns"), g("p999_ns"), g("max_us"),
                      g("p999_ns", "grow"), g("max_us", "grow"),
                      g("errors") + g("errors", "crossing-check")
                      + (g("errors", "crossing-remove") or 0)))
    md.append("")


def crossing_window_section(runs, md):
    """The crossing placed at each table's grow point, against the same
    window into a table created for it (the control of the same process)."""
    have = [n for n in CROSS_RUNS if "cross-" + n in runs]
    if not have:
        return
    md.append("### Power-of-two crossing at the grow point, against the same "
              "window presized, 1 thread")
    md.append("")
    md.append("| table | grow point at keys | window keys | buckets before "
              "-> after | crossed at keys | Mops/s | p99.9 ns | max us | "
              "presized Mops/s | presized p99.9 ns | presized max us | "
              "p99.9 / presized | max / presized | errors |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in have:
        r, _ = runs["cross-" + n]
        impl = n.replace("-unpinned", "")
        g = lambda m, wl="crossing": r.get((impl, wl, 1, m))
        if g("mops") is None:
            continue
        crossed = g("crossed")
        cr = ("%d" % g("crossed_at_keys")) if crossed == 1 else (
            "not verified (size unknown)" if crossed == -1 else "NONE")
        bb = ("%d -> %d" % (g("buckets_before"), g("buckets_after"))
              if g("buckets_before") > 0 else "-")
        pre = lambda m: g(m, "crossing-presized")
        err = sum(g("errors", wl) or 0 for wl in (
            "crossing", "crossing-check", "crossing-presized",
            "crossing-presized-check", "crossing-remove"))
        md.append("| %s | %d | %d - %d | %s | %s | %.2f | %.0f | %.1f | %.2f "
                  "| %.0f | %.1f | %.2f | %.2f | %d |" % (
                      n, g("at_keys"), g("from_keys"), g("to_keys"), bb, cr,
                      g("mops"), g("p999_ns"), g("max_us"), pre("mops"),
                      pre("p999_ns"), pre("max_us"), g("p999_over_presized"),
                      g("max_over_presized"), err))
    md.append("")


def soak_section(runs, md):
    if "big-chtmap" not in runs:
        return None
    r, tl = runs["big-chtmap"]
    impl = "chtmap-u64"
    g = lambda wl, m, th=1: r.get((impl, wl, th, m))
    if g("soak-writes", "mops") is None:
        return None
    md.append("### Soak: 1e8 keys, 200,000 writes/s beside full-speed "
              "lookups (`chtmap-u64`)")
    md.append("")
    md.append("| figure | writes (from schedule) | lookups beside them | "
              "lookups alone (before) |")
    md.append("|---|---|---|---|")
    for m, lab in (("seconds", "seconds"), ("mops", "Mops/s"),
                   ("p50_ns", "p50 ns"), ("p99_ns", "p99 ns"),
                   ("p999_ns", "p99.9 ns"), ("max_us", "max us"),
                   ("errors", "errors")):
        md.append("| %s | %s | %s | %s |" % (
            lab, "%.6g" % g("soak-writes", m), "%.6g" % g("soak-lookups", m),
            "%.6g" % g("soak-lookups-alone", m)))
    md.append("")
    w = tl.get((impl, "soak-writes"), [])
    lk = tl.get((impl, "soak-lookups"), [])
    al = tl.get((impl, "soak-lookups-alone"), [])
    # Seconds in which the writes' median lag from their schedule exceeded
    # 1 ms (a backlog), and the lookups' rate in the same seconds; then the
    # seconds whose largest write or lookup exceeded 10 and 100 ms.
    lops = {int(x[0]): x[1] for x in lk}
    lmed = statistics.median(lops.values()) if lops else 0
    lag = [int(x[0]) for x in w if x[2] > 1e6]
    starved = [t for t in lag if lops.get(t, 0) < lmed / 10]
    md.append("- writes done: %.0f/s of %.0f/s asked; check after the soak: "
              "%d errors over %d keys, ring errors %d" % (
                  g("soak-writes", "rate_done"), g("soak-writes",
                                                   "rate_target"),
                  g("check", "errors"), g("check", "keys"),
                  g("check", "ring_errors")))
    md.append("- seconds whose median write ran over 1 ms behind its "
              "schedule: %d of %d; in %d of them the lookups beside ran below "
              "1/10 of their median rate (%.2f M/s): the process was not "
              "running" % (len(lag), len(w), len(starved), lmed / 1e6))
    for thr in (1e7, 1e8):
        md.append("- seconds with an operation over %d ms: writes %d, lookups "
                  "beside them %d; lookups alone %d of %d" % (
                      thr / 1e6, sum(1 for x in w if x[5] > thr),
                      sum(1 for x in lk if x[5] > thr),
                      sum(1 for x in al if x[5] > thr), len(al)))
    md.append("- memory: RSS %.2f -> %.2f GiB, second half flat within %.2f %% "
              "(RSS) and %.2f %% (heap)" % (
                  g("soak", "rss_start_mb") / 1024,
                  g("soak", "rss_end_mb") / 1024, g("soak", "rss_flat_pct"),
                  g("soak", "heap_flat_pct")))
    md.append("")
    return w, lk, al


def anomaly_section(runs, md):
    md.append("### 2-thread lookup scaling without writes between the rounds")
    md.append("")
    md.append("| table | lookup-hit 1t | lookup-hit 2t | 2t / 1t (per round) "
              "| thread 0 / thread 1 at 2t | lookup-miss 1t | lookup-miss 2t "
              "| huge pages MB |")
    md.append("|---|---|---|---|---|---|---|---|")
    for name, impl in (("anom-ckhs", "ckhs"), ("anom-ckhs-thp", "ckhs"),
                       ("anom-chtmap", "chtmap-u64-presized")):
        if name not in runs:
            continue
        r, _ = runs[name]
        h1, h2 = rounds(r, impl, "lookup-hit", 1), rounds(r, impl,
                                                           "lookup-hit", 2)
        m1, m2 = rounds(r, impl, "lookup-miss", 1), rounds(r, impl,
                                                            "lookup-miss", 2)
        t0 = rounds(r, impl, "lookup-hit", 2, "mops_thread0")
        t1 = rounds(r, impl, "lookup-hit", 2, "mops_thread1")
        lab = impl + (" (THP)" if name.endswith("thp") else "")
        md.append("| %s | %s | %s | %s | %s | %s | %s | %.0f |" % (
            lab, med(h1), med(h2), med([b / a for a, b in zip(h1, h2)]),
            med([a / b for a, b in zip(t0, t1)]), med(m1), med(m2),
            r.get((impl, "grow-presized", 2, "anon_huge_mb"), 0)))
    md.append("")


def plots(runs, series, soak, out):
    plt = pyplot_or_none(print)
    if plt is None:
        return []
    made = []
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for impl, pts in series.items():
        axes[0].plot([p[0] for p in pts], [p[6] / 1e9 for p in pts],
                     label=impl)
    axes[0].set_xlabel("seconds of churn")
    axes[0].set_ylabel("RSS (GB)")
    axes[0].set_title("Churn at 1e8 keys: RSS per second", fontsize=9)
    axes[0].legend(fontsize=7)
    for name, impl in (("resize-chtmap", "chtmap-u64"), ("big-cht", "cht")):
        if name not in runs:
            continue
        r, _ = runs[name]
        fx = rounds(r, impl, "resize-fixed-n", 1)
        rz = rounds(r, impl, "resize-resizing", 1)
        k = min(len(fx), len(rz))
        fx, rz, xs = fx[:k], rz[:k], range(1, k + 1)
        axes[1].plot(xs, fx, "o-", label=impl + " fixed")
        axes[1].plot(xs, rz, "s--", label=impl + " resizing")
    axes[1].set_xlabel("round")
    axes[1].set_ylabel("lookups (Mops/s, 1 reader)")
    axes[1].set_title("Triplett at 1e8 keys", fontsize=9)
    axes[1].legend(fontsize=7)
    save_fig(plt, fig, out, "big-goals-churn-resize.png", made, dpi=100)
    if soak:
        w, lk, al = soak
        fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
        axes[0].plot([p[0] for p in w], [max(p[5], 1) / 1e3 for p in w],
                     label="writes: max from schedule")
        axes[0].plot([p[0] for p in lk], [max(p[5], 1) / 1e3 for p in lk],
                     label="lookups beside them: max")
        axes[0].plot([p[0] for p in al], [max(p[5], 1) / 1e3 for p in al],
                     label="lookups alone (before the soak): max")
        axes[0].plot([p[0] for p in w], [max(p[4], 1) / 1e3 for p in w],
                     label="writes: p99.9")
        axes[0].set_yscale("log")
        axes[0].set_ylabel("latency (us, log)")
        axes[0].legend(fontsize=7)
        axes[1].plot([p[0] for p in w], [p[6] / 1e9 for p in w],
                     label="RSS")
        axes[1].set_ylabel("RSS (GB)")
        axes[1].set_xlabel("seconds of the soak")
        axes[0].set_title("Soak, chtmap-u64, 1e8 keys, 200,000 writes/s",
                          fontsize=9)
        save_fig(plt, fig, out, "big-goals-soak.png", made, dpi=100)
    return made


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    runs = {}
    for n in RUNS + tuple("cross-" + c for c in CROSS_RUNS):
        p = os.path.join(a.dir, n + ".csv")
        if os.path.exists(p):
            runs[n] = load(p)
    md = []
    resize_section(runs, md)
    series = churn_section(runs, md)
    crossing_section(runs, md)
    crossing_window_section(runs, md)
    soak = soak_section(runs, md)
    anomaly_section(runs, md)
    if a.out:
        for p in plots(runs, series, soak, a.out):
            b = os.path.basename(p)
            md.append("![%s](results/userspace/%s)" % (b, b))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
