"""Userspace peer benchmark: libcht against cds_lfht, libcuckoo, ck, rwlock.

    python3 -m bench.userspace.run --full     (about 11 minutes on 2 cores)
    python3 -m bench.userspace.run --quick    (about 3 minutes; a smoke run)

Builds build/bench-userspace/bench_us (bench/userspace/Makefile), runs every
table through the same harness in the same run, and writes:

    bench/results/userspace/raw.csv        every sample (with its repetition)
    bench/results/userspace/summary.csv    medians, min, max, ratio to cds_lfht
    bench/results/userspace/icount.csv     instructions per operation
    bench/results/userspace/*.png          plots
    bench/RESULTS.md                       the section between
                                           <!-- userspace:begin/end -->

Throughput points are repeated (3 in --full, 2 in --quick) and interleaved:
every repetition runs every table once, in a rotated order, and the report
uses medians. Single-thread cost is measured as instructions per operation
under valgrind's callgrind (client requests around fixed operation counts),
which does not depend on the machine's load.

Options: --only IMPL[,IMPL] restricts the tables; --no-icount, --no-plots;
--out DIR for the CSV/PNG directory; --results FILE for RESULTS.md;
--report-only rebuilds the CSVs, plots and the RESULTS.md section from the
last run's raw.csv and meta.json (e.g. after editing ANALYSIS.md).
"""

import argparse
import csv
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

from bench import results_md
from bench.userspace.common import (BIN, HERE, OUT, RESULTS_MD, build,
                                    cpu_model, loadavg, pyplot_or_none,
                                    save_fig)

BEGIN = "<!-- userspace:begin -->"
END = "<!-- userspace:end -->"

#: The reference every ratio is taken against.
BASE = "lfht-memb"
BASE_PRESIZED = "lfht-memb-presized"

ALL_IMPLS = ["cht", "cht-presized", "lfht-memb", "lfht-memb-presized",
             "lfht-qsbr", "lfht-qsbr-presized", "cuckoo", "cuckoo-ptr",
             "ckhs", "ckhs-ptr", "ckht", "ckht-ptr", "rwlock",
             "rwlock-presized"]
#: Tables whose size can be forced (Triplett experiment).
RESIZE_IMPLS = ["cht", "lfht-memb-presized", "lfht-qsbr-presized", "cuckoo",
                "rwlock-presized"]
#: Self-resizing tables (grow from 1 bucket, delete to 1%).
GROW_IMPLS = ["cht", "lfht-memb", "lfht-qsbr", "cuckoo", "cuckoo-ptr", "ckhs",
              "ckhs-ptr", "ckht", "ckht-ptr", "rwlock"]
#: Resizing off for instruction counts: presized chains, large open tables.
ICOUNT_IMPLS = ["cht-presized", "lfht-memb-presized", "lfht-qsbr-presized",
                "cuckoo", "cuckoo-ptr", "ckhs", "ckhs-ptr", "ckht", "ckht-ptr",
                "rwlock-presized"]

#: budget: seconds for the whole command; repetitions beyond the second are
#: dropped when the next one would not fit (a loaded machine).
PLANS = {
    "full": dict(reps=3, secs=0.2, sizes="1024,65536,1048576", mix=65536,
                 rsecs=0.4, gkeys=1 << 20, ikeys=65536, iops=20000,
                 budget=14 * 60),
    "quick": dict(reps=2, secs=0.05, sizes="1024,65536", mix=65536,
                  rsecs=0.1, gkeys=1 << 17, ikeys=16384, iops=5000,
                  budget=5 * 60),
}
#: Seconds kept for aggregation and plots.
RESERVE = 40

LOOKUP_WL = ["lookup-hit", "lookup-miss"]
MIX_WL = ["ycsb-c-uniform", "ycsb-c-zipf", "ycsb-b-uniform", "ycsb-b-zipf",
          "ycsb-a-uniform", "ycsb-a-zipf", "hs-90-9-1"]
ICOUNT_PHASES = ["lookup-hit", "lookup-miss", "insert", "remove",
                 "ycsb-a-zipf", "hs-90-9-1"]


def log(msg):
    print("[bench-us %6.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


def run_bench(args, rep, rows, timeout=600):
    """Runs bench_us with args; appends its CSV rows tagged with rep."""
    t = time.monotonic()
    p = subprocess.run([BIN] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    if p.returncode != 0:
        log("FAILED: bench_us %s (exit %d): %s" % (
            " ".join(args), p.returncode,
            p.stderr.decode("utf-8", "replace")[-500:].strip()))
    if p.returncode < 0:
        # Killed by a signal (a crash in the library): record it.
        th = args[args.index("-t") + 1] if "-t" in args else "1"
        rows.append(dict(rep=rep, kind=args[0], impl=args[1],
                         workload="signal %d" % -p.returncode, keys=0,
                         threads=int(th.split(",")[0]), metric="crashed",
                         value=1.0))
    # Rows printed before a failure (e.g. a stall) still count.
    for line in p.stdout.decode().splitlines():
        f = line.split(",")
        if len(f) == 7:
            rows.append(dict(rep=rep, kind=f[0], impl=f[1], workload=f[2],
                             keys=int(f[3]), threads=int(f[4]), metric=f[5],
                             value=float(f[6])))
    return (time.monotonic() - t) if p.returncode == 0 else None


def secs_str(dt):
    return "%.1f s" % dt if dt is not None else "FAILED"


def rotate(seq, k):
    k %= max(1, len(seq))
    return seq[k:] + seq[:k]


def run_icount(impls, keys, ops, rows):
    """Instruction counts under callgrind, two processes at a time."""
    if not shutil.which("valgrind"):
        log("valgrind missing: no instruction counts")
        return
    tmp = tempfile.mkdtemp(prefix="bench-us-cg-")
    procs = {}
    pending = list(impls)
    results = {}

    def start(impl):
        d = os.path.join(tmp, impl)
        os.makedirs(d)
        argv = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                "--callgrind-out-file=" + os.path.join(d, "cg.%p"), BIN,
                "icount", impl, "-k", str(keys), "-o", str(ops)]
        procs[impl] = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)

    while pending or procs:
        while pending and len(procs) < 2:
            start(pending.pop(0))
        for impl, p in list(procs.items()):
            if p.poll() is not None:
                del procs[impl]
                if p.returncode != 0:
                    log("icount %s failed (exit %d)" % (impl, p.returncode))
                    continue
                for f in glob.glob(os.path.join(tmp, impl, "cg.*.*")):
                    phase, total = None, None
                    with open(f) as fh:
                        for line in fh:
                            if line.startswith("desc: Trigger: Client Request:"):
                                phase = line.split(":", 3)[3].strip()
                            elif line.startswith("totals:"):
                                total = int(line.split()[1])
                    if phase and total is not None:
                        results[(impl, phase)] = total / ops
        time.sleep(0.2)
    shutil.rmtree(tmp, ignore_errors=True)
    for (impl, phase), v in results.items():
        rows.append(dict(rep=0, kind="icount", impl=impl, workload=phase,
                         keys=keys, threads=1, metric="instr_per_op", value=v))


def aggregate(rows):
    groups = defaultdict(list)
    for r in rows:
        groups[(r["kind"], r["impl"], r["workload"], r["keys"], r["threads"],
                r["metric"])].append(r["value"])
    return {k: (statistics.median(v), min(v), max(v), len(v))
            for k, v in groups.items()}


def med(agg, kind, impl, wl, keys, threads, metric="mops"):
    v = agg.get((kind, impl, wl, keys, threads, metric))
    return v[0] if v else None


def fmt(v, nd=2):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return "%.0f" % v
    return ("%%.%df" % nd) % v


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def write_csvs(rows, agg, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "raw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rep", "kind", "impl", "workload", "keys", "threads",
                    "metric", "value"])
        for r in rows:
            w.writerow([r["rep"], r["kind"], r["impl"], r["workload"],
                        r["keys"], r["threads"], r["metric"],
                        "%.6g" % r["value"]])
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "impl", "workload", "keys", "threads", "metric",
                    "median", "min", "max", "samples", "ratio_vs_lfht_memb"])
        for k in sorted(agg):
            kind, impl, wl, keys, th, metric = k
            m, lo, hi, n = agg[k]
            base = BASE_PRESIZED if impl.endswith("-presized") else BASE
            if kind == "resize":
                base = "lfht-memb-presized"
            rv = ratio(m, med(agg, kind, base, wl, keys, th, metric)) \
                if metric in ("mops", "instr_per_op") else None
            w.writerow([kind, impl, wl, keys, th, metric, "%.6g" % m,
                        "%.6g" % lo, "%.6g" % hi, n,
                        "" if rv is None else "%.3f" % rv])
    with open(os.path.join(out, "icount.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["impl", "phase", "instructions_per_op",
                    "ratio_vs_lfht_memb_presized"])
        for k in sorted(agg):
            if k[0] != "icount":
                continue
            rv = ratio(agg[k][0], med(agg, "icount", BASE_PRESIZED, k[2], k[3],
                                      1, "instr_per_op"))
            w.writerow([k[1], k[2], "%.1f" % agg[k][0],
                        "" if rv is None else "%.3f" % rv])


# --- plots --------------------------------------------------------------------------

COLORS = {
    "cht": "#d62728", "cht-presized": "#ff9896",
    "lfht-memb": "#1f77b4", "lfht-memb-presized": "#aec7e8",
    "lfht-qsbr": "#17becf", "lfht-qsbr-presized": "#9edae5",
    "cuckoo": "#2ca02c", "cuckoo-ptr": "#98df8a",
    "ckhs": "#9467bd", "ckhs-ptr": "#c5b0d5",
    "ckht": "#8c564b", "ckht-ptr": "#c49c94",
    "rwlock": "#7f7f7f", "rwlock-presized": "#c7c7c7",
}


def bars(ax, groups, impls, getter, title, ylabel, log=False):
    import numpy as np
    x = np.arange(len(groups))
    width = 0.85 / max(1, len(impls))
    for i, impl in enumerate(impls):
        vals, lo, hi = [], [], []
        for g in groups:
            v = getter(impl, g)
            m = v[0] if v else 0
            vals.append(m)
            lo.append(m - (v[1] if v else 0))
            hi.append((v[2] if v else 0) - m)
        ax.bar(x + i * width - 0.425 + width / 2, vals, width,
               yerr=[lo, hi], capsize=1, label=impl,
               color=COLORS.get(impl, None), error_kw=dict(lw=0.5))
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", alpha=0.3)


def plots(agg, impls, plan, out):
    plt = pyplot_or_none(log)
    if plt is None:
        return []
    made = []
    sizes = [int(s) for s in plan["sizes"].split(",")]

    # Lookups.
    groups = ["%s %s" % (w.replace("lookup-", ""), k_label(n))
              for n in sizes for w in LOOKUP_WL]
    keyof = {"%s %s" % (w.replace("lookup-", ""), k_label(n)): (w, n)
             for n in sizes for w in LOOKUP_WL}
    fig, axes = plt.subplots(2, 1, figsize=(12, 8))
    for ax, th in zip(axes, (1, 2)):
        bars(ax, groups, impls,
             lambda i, g, th=th: agg.get(("suite", i, keyof[g][0], keyof[g][1],
                                          th, "mops")),
             "100%% lookups, %d thread%s (median of repetitions; bars: min-max)"
             % (th, "s" if th > 1 else ""), "Mops/s")
    axes[0].legend(fontsize=6, ncol=7, loc="upper right")
    save_fig(plt, fig, out, "lookups.png", made)

    # Mixes.
    fig, axes = plt.subplots(2, 1, figsize=(12, 8))
    for ax, th in zip(axes, (1, 2)):
        bars(ax, MIX_WL, impls,
             lambda i, g, th=th: agg.get(("suite", i, g, plan["mix"], th,
                                          "mops")),
             "YCSB and Herlihy-Shavit 90/9/1, %s keys, %d thread%s"
             % (k_label(plan["mix"]), th, "s" if th > 1 else ""), "Mops/s")
    axes[0].legend(fontsize=6, ncol=7, loc="upper right")
    save_fig(plt, fig, out, "mixes.png", made)

    # Resize (Triplett).
    rimpls = [i for i in RESIZE_IMPLS if i in impls]
    if rimpls:
        groups = ["%s %dt" % (m, th) for th in (1, 2)
                  for m in ("fixed-8192", "fixed-16384", "resizing")]
        fig, ax = plt.subplots(figsize=(10, 4.5))
        bars(ax, groups, rimpls,
             lambda i, g: agg.get(("resize", i, g.rsplit(" ", 1)[0], 65536,
                                   int(g.rsplit(" ", 1)[1][:-1]), "mops")),
             "Lookups, 2^16 keys: fixed 2^13, fixed 2^14 buckets, and during "
             "continuous 2^13 <-> 2^14 resizing (Triplett et al.)", "Mops/s")
        ax.legend(fontsize=7)
        save_fig(plt, fig, out, "resize.png", made)

    # Grow / shrink.
    gimpls = [i for i in GROW_IMPLS if i in impls]
    if gimpls:
        n = plan["gkeys"]
        fig, axes = plt.subplots(2, 2, figsize=(12, 8))
        specs = [
            (axes[0][0], [("grow", "mops"), ("shrink", "mops")],
             "throughput (Mops/s)", False),
            (axes[0][1], [("grow", "p50_ns"), ("grow", "p99_ns"),
                          ("grow", "p999_ns"), ("shrink", "p50_ns"),
                          ("shrink", "p99_ns"), ("shrink", "p999_ns")],
             "operation latency (ns, log)", True),
            (axes[1][0], [("memory", "peak_mb"), ("memory", "final_mb")],
             "heap in use (MiB)", False),
            (axes[1][1], [("shrink", "buckets")], "final buckets (log)", True),
        ]
        for ax, metrics, title, lg in specs:
            groups = ["%s %s %dt" % (w, m, th) for th in (1, 2)
                      for (w, m) in metrics]
            bars(ax, groups, gimpls,
                 lambda i, g: agg.get(("growshrink", i, g.split()[0], n,
                                       int(g.split()[2][:-1]), g.split()[1])),
                 "grow to %s keys from 1 bucket, delete to 1%%: %s"
                 % (k_label(n), title), "", log=lg)
        axes[0][0].legend(fontsize=6, ncol=2)
        save_fig(plt, fig, out, "growshrink.png", made)

    # Instruction counts.
    iimpls = [i for i in ICOUNT_IMPLS if i in impls]
    if any(k[0] == "icount" for k in agg):
        fig, ax = plt.subplots(figsize=(12, 4.5))
        bars(ax, ICOUNT_PHASES, iimpls,
             lambda i, g: agg.get(("icount", i, g, plan["ikeys"], 1,
                                   "instr_per_op")),
             "Instructions per operation, 1 thread, resizing off, %s keys "
             "(callgrind; all threads incl. helpers)" % k_label(plan["ikeys"]),
             "instructions")
        ax.legend(fontsize=6, ncol=5)
        save_fig(plt, fig, out, "icount.png", made)
    return made


def k_label(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%dM" % (n >> 20)
    if n >= 1024 and n % 1024 == 0:
        return "%dK" % (n >> 10)
    return str(n)


# --- RESULTS.md -------------------------------------------------------------------------

def ratio_table(agg, impls, rows_spec, threads, kind="suite"):
    """Markdown: the two cds_lfht (memb) baselines absolute; every other
    table as a ratio to the baseline of its kind (auto or presized)."""
    others = [i for i in impls if i not in (BASE, BASE_PRESIZED)]
    head = "| workload | %s | %s | %s |" % (BASE, BASE_PRESIZED,
                                           " | ".join(others))
    sep = "|---|---:|---:|%s|" % "|".join(["---:"] * len(others))
    lines = [head, sep]
    for label, wl, keys in rows_spec:
        base = med(agg, kind, BASE, wl, keys, threads)
        basep = med(agg, kind, BASE_PRESIZED, wl, keys, threads)
        cells = []
        for i in others:
            b = basep if i.endswith("-presized") else base
            r = ratio(med(agg, kind, i, wl, keys, threads), b)
            cells.append("n/a" if r is None else
                         ("**%.2f**" % r if i.startswith("cht") else "%.2f" % r))
        lines.append("| %s | %s | %s | %s |" % (label, fmt(base), fmt(basep),
                                               " | ".join(cells)))
    return "\n".join(lines)


def stalls(rows, metric="stalled"):
    """Runs the harness watchdog stopped (lost resizes), or crashes."""
    out = defaultdict(int)
    for r in rows:
        if r["metric"] == metric:
            out["%s (%s %s, %dt)" % (r["impl"], r["kind"], r["workload"],
                                     r["threads"])] += 1
    return out


def verdicts(agg, specs, threads_list, ours="cht", base=BASE):
    """Where cht wins and loses against cds_lfht (memb), by the medians."""
    win, lose, tie = [], [], []
    for label, wl, keys in specs:
        for th in threads_list:
            a = med(agg, "suite", ours, wl, keys, th)
            b = med(agg, "suite", base, wl, keys, th)
            r = ratio(a, b)
            if r is None:
                continue
            item = "%s %dt (%.2fx)" % (label, th, r)
            (win if r > 1.10 else lose if r < 0.90 else tie).append(item)
    return win, lose, tie


def errors_total(agg):
    bad = []
    for k, v in agg.items():
        if k[5] == "errors" and v[2] > 0:
            bad.append("%s %s %s %dt: %d" % (k[1], k[2], k_label(k[3]), k[4],
                                            v[2]))
    return bad


def results_section(agg, rows, impls, plan, mode, meta, pngs):
    sizes = [int(s) for s in plan["sizes"].split(",")]
    lookup_spec = [("%s %s" % (w, k_label(n)), w, n)
                   for n in sizes for w in LOOKUP_WL]
    mix_spec = [(w, w, plan["mix"]) for w in MIX_WL]
    L = []
    L.append("## Userspace: libcht against the peers (`bench/userspace/run.py "
             "--%s`)" % mode)
    L.append("")
    L.append("Generated by `make -C uspace bench` (`bench/userspace/run.py "
             "--%s`) on %s; %d CPUs (%s); load average %.1f at the start, %.1f "
             "at the end; %.0f s. Data: `bench/results/userspace/` "
             "(raw.csv has every sample, summary.csv the medians)."
             % (mode, meta["date"], meta["ncpu"], meta["cpu"],
                meta["load0"], meta["load1"], meta["elapsed"]))
    L.append("")
    L.append("**Method.** One harness (`bench/userspace/harness.c`) drives "
             "every table through the same function-pointer interface; the "
             "adapters do what a user of each library writes (read-side "
             "section, lookup, read the value). Keys are 8-byte integers "
             "that look random (MurmurHash3's finalizer of 2i + 2 present, "
             "2i + 3 absent); every table hashes them with the same 64-bit "
             "mix (`cht_mix_hash()`, multiplicative; libcht applies it "
             "itself). Throughput points run "
             "%.2f s each after a warm-up, %d repetitions interleaved (each "
             "repetition runs every table once, in rotated order); the tables "
             "show medians (bars in the plots: min to max). Threads are not pinned; helper threads of the "
             "libraries run beside them (libcht: RCU reclaimer and resize "
             "worker; cds_lfht: call_rcu thread and resize worker; libcuckoo, "
             "ck and the rwlock table: none; counted in growshrink.csv as "
             "helper_threads). QSBR threads announce a quiescent state every "
             "64 operations. ck tables take writers under a mutex "
             "(SPMC modes) with ck_epoch readers. *-ptr variants of the "
             "inline tables store pointers to {key, value} objects and "
             "dereference them; *-presized tables are sized for the keys "
             "(load <= 1) with resizing off. YCSB updates replace the value "
             "of a present key (in place, atomically, for node and pointer "
             "layouts; through the table's own update for inline ones)."
             % (plan["secs"], meta["reps"]))
    L.append("")
    bad = errors_total(agg)
    L.append("**Correctness during the runs.** %s" % (
        "every lookup that had to hit hit and every lookup that had to miss "
        "missed, in every table and workload, including all lookups during "
        "continuous resizing." if not bad else
        "UNEXPECTED misses/hits: " + "; ".join(bad)))
    L.append("")
    st = stalls(rows)
    if st:
        L.append("**Stalled runs.** The harness's progress watchdog stops a "
                 "phase when nothing completes for 120 s or its throughput "
                 "falls below 1/50 of its best 30 s or 2,000 ops/s (bench.h): %s. "
                 "Each time the table had stopped resizing while inserts "
                 "continued (see the reading below); the medians are of the "
                 "runs that finished." % "; ".join(
                     "%s: %d" % kv for kv in sorted(st.items())))
        L.append("")
    cr = stalls(rows, "crashed")
    if cr:
        why = ""
        if all(k.startswith("cuckoo") for k in cr):
            why = (" libcuckoo 0.3.1 (Debian) can crash with SIGSEGV in "
                   "`slot_search` when threads insert while the table expands "
                   "(upstream efficient/libcuckoo#156, fixed in 2024, after "
                   "this version).")
        L.append("**Crashed runs.** %s.%s The medians are of the runs that "
                 "finished." % ("; ".join("%s: %d" % kv
                                          for kv in sorted(cr.items())), why))
        L.append("")
    # Instruction counts first: the stable numbers.
    if any(k[0] == "icount" for k in agg):
        L.append("### Single-thread cost: instructions per operation")
        L.append("")
        L.append("valgrind callgrind, 1 thread, %s keys, %d operations per "
                 "phase, resizing off (presized chained tables; open tables "
                 "allocated 4x larger), all threads counted (reclamation "
                 "triggered by a phase is waited for inside it). Lower is "
                 "better; the ratio is to cds_lfht (memb, presized)."
                 % (k_label(plan["ikeys"]), plan["iops"]))
        L.append("")
        iimpls = [i for i in ICOUNT_IMPLS if i in impls]
        L.append("| phase | %s |" % " | ".join(iimpls))
        L.append("|---|%s|" % "|".join(["---:"] * len(iimpls)))
        for ph in ICOUNT_PHASES:
            base = med(agg, "icount", BASE_PRESIZED, ph, plan["ikeys"], 1,
                       "instr_per_op")
            cells = []
            for i in iimpls:
                v = med(agg, "icount", i, ph, plan["ikeys"], 1, "instr_per_op")
                r = ratio(v, base)
                cells.append("n/a" if v is None else "%.0f (%.2f)" % (v, r))
            L.append("| %s | %s |" % (ph, " | ".join(cells)))
        L.append("")
    for th in (1, 2):
        L.append("### Throughput, %d thread%s (higher is better)"
                 % (th, "s" if th > 1 else ""))
        L.append("")
        L.append("Mops/s of cds_lfht (memb), auto-resized and presized; every "
                 "other column is a ratio: auto tables to %s, *-presized to "
                 "%s." % (BASE, BASE_PRESIZED))
        L.append("")
        L.append(ratio_table(agg, impls, lookup_spec + mix_spec, th))
        L.append("")
    # Triplett.
    rimpls = [i for i in RESIZE_IMPLS if i in impls]
    if rimpls:
        L.append("### Lookups during continuous resizing (2^16 keys, "
                 "2^13 <-> 2^14 buckets)")
        L.append("")
        L.append("Mops/s of the lookup threads; the resizer is an extra "
                 "thread. `resizes/s` counts completed resizes. libcht is "
                 "resized through `cht_set_max_load()` (17: 2^13 buckets, 5: "
                 "2^14), which requests the resize on its worker thread; "
                 "cds_lfht through `cds_lfht_resize()` (synchronous, in the "
                 "resizer thread); the rwlock table under its write lock; "
                 "libcuckoo by `rehash()`, whose 4-slot buckets swing "
                 "2^15 <-> 2^16 (the same 2x). Misses: %s."
                 % ("none in any run" if not [b for b in bad if "fixed" in b
                                               or "resizing" in b]
                    else "SEE ABOVE"))
        L.append("")
        L.append("| table | threads | fixed 2^13 | fixed 2^14 | resizing | "
                 "resizing / fixed 2^14 | resizes/s |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for i in rimpls:
            for th in (1, 2):
                f8 = med(agg, "resize", i, "fixed-8192", 65536, th)
                f16 = med(agg, "resize", i, "fixed-16384", 65536, th)
                rz = med(agg, "resize", i, "resizing", 65536, th)
                rps = med(agg, "resize", i, "resizing", 65536, th,
                          "resizes_per_s")
                L.append("| %s | %d | %s | %s | %s | %s | %s |" % (
                    i, th, fmt(f8), fmt(f16), fmt(rz), fmt(ratio(rz, f16)),
                    fmt(rps, 0)))
        L.append("")
    gimpls = [i for i in GROW_IMPLS if i in impls]
    if gimpls:
        n = plan["gkeys"]
        L.append("### Grow from 1 bucket to %s keys, then delete to 1%%"
                 % k_label(n))
        L.append("")
        L.append("Keys split between the threads; latency per operation "
                 "(rdtsc) includes allocation; heap = malloc'ed bytes in use "
                 "(mallinfo2) above the baseline, peak sampled every "
                 "millisecond and at the end of the inserts; final after the "
                 "tables settled (resizes done, reclamation run). -1 buckets: "
                 "the library does not say.")
        L.append("")
        L.append("| table | thr | insert Mops/s | p50/p99/p99.9 ns | "
                 "delete Mops/s | p50/p99/p99.9 ns | peak MiB | final MiB | "
                 "final buckets | helpers |")
        L.append("|---|---:|---:|---|---:|---|---:|---:|---:|---:|")
        for i in gimpls:
            for th in (1, 2):
                g = lambda w, m: med(agg, "growshrink", i, w, n, th, m)
                L.append("| %s | %d | %s | %s/%s/%s | %s | %s/%s/%s | %s | %s "
                         "| %s | %s |" % (
                             i, th, fmt(g("grow", "mops")),
                             fmt(g("grow", "p50_ns"), 0),
                             fmt(g("grow", "p99_ns"), 0),
                             fmt(g("grow", "p999_ns"), 0),
                             fmt(g("shrink", "mops")),
                             fmt(g("shrink", "p50_ns"), 0),
                             fmt(g("shrink", "p99_ns"), 0),
                             fmt(g("shrink", "p999_ns"), 0),
                             fmt(g("memory", "peak_mb"), 1),
                             fmt(g("memory", "final_mb"), 1),
                             fmt(g("shrink", "buckets"), 0),
                             fmt(g("memory", "helper_threads"), 0)))
        L.append("")
    # Reading.
    win, lose, tie = verdicts(agg, lookup_spec + mix_spec, (1, 2))
    L.append("### Reading")
    L.append("")
    L.append("Against cds_lfht (memb), by the medians of this run: libcht is "
             "ahead by more than 10%% in %d points, behind by more than 10%% "
             "in %d, within 10%% in %d."
             % (len(win), len(lose), len(tie)))
    L.append("")
    if lose:
        L.append("- **Where libcht loses:** " + "; ".join(lose) + ".")
    if win:
        L.append("- Where it wins: " + "; ".join(win) + ".")
    L.append("")
    win, lose, tie = verdicts(agg, lookup_spec + mix_spec, (1, 2),
                              "cht-presized", BASE_PRESIZED)
    L.append("Presized against presized (no resizing on either side): "
             "cht-presized is ahead of lfht-memb-presized by more than 10%% "
             "in %d points, behind in %d, within 10%% in %d."
             % (len(win), len(lose), len(tie)))
    L.append("")
    if lose:
        L.append("- **Where cht-presized loses:** " + "; ".join(lose) + ".")
    if win:
        L.append("- Where it wins: " + "; ".join(win) + ".")
    L.append("")
    analysis = os.path.join(HERE, "ANALYSIS.md")
    if os.path.exists(analysis):
        with open(analysis) as f:
            L.append(f.read().strip())
        L.append("")
    for p in pngs:
        rel = os.path.relpath(p, os.path.dirname(RESULTS_MD))
        L.append("![%s](%s)" % (os.path.basename(p)[:-4], rel))
    L.append("")
    return "\n".join(L) + "\n"


def update_results(section, path):
    """Put ``section`` between BEGIN and END of ``path`` (results_md.splice:
    in place, or appended at the end of the file)."""
    existing = None
    if os.path.exists(path):
        with open(path) as f:
            existing = f.read() or None
    text = results_md.splice(existing, section, BEGIN, END)
    with open(path, "w") as f:
        f.write(text)


def main():
    global T0
    T0 = time.monotonic()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--full", action="store_true")
    g.add_argument("--quick", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--no-icount", action="store_true")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--report-only", action="store_true",
                    help="regenerate summary, plots and RESULTS.md from the "
                    "last run's raw.csv and meta.json (no measuring)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--results", default=RESULTS_MD)
    a = ap.parse_args()
    mode = "quick" if a.quick else "full"
    plan = PLANS[mode]
    impls = ALL_IMPLS
    if a.only:
        impls = [i for i in ALL_IMPLS if i in a.only.split(",")]
    if a.report_only:
        return report_only(a, impls)
    load0 = loadavg()[0]
    build("bench")
    log("built; mode %s, %d tables, load average %.1f" % (mode, len(impls),
                                                           load0))
    rows = []
    # Instruction counts first: they do not depend on the load.
    if not a.no_icount:
        run_icount([i for i in ICOUNT_IMPLS if i in impls], plan["ikeys"],
                   plan["iops"], rows)
        log("instruction counts done")
    deadline = plan["budget"] - RESERVE
    reps_done = 0
    for rep in range(plan["reps"]):
        t_rep = time.monotonic()
        if rep >= 2 and reps_done and \
                (time.monotonic() - T0) + rep_secs > deadline:
            log("time budget: stopping after %d repetitions" % reps_done)
            break
        for impl in rotate(impls, rep * 5):
            dt = run_bench(["suite", impl, "-s", str(plan["secs"]),
                            "-n", plan["sizes"], "-t", "1,2",
                            "-m", str(plan["mix"])], rep, rows)
            log("rep %d suite %-20s %s" % (rep, impl, secs_str(dt)))
        for impl in rotate([i for i in RESIZE_IMPLS if i in impls], rep):
            dt = run_bench(["resize", impl, "-s", str(plan["rsecs"]),
                            "-t", "1,2"], rep, rows)
            log("rep %d resize %-19s %s" % (rep, impl, secs_str(dt)))
        for impl in rotate([i for i in GROW_IMPLS if i in impls], rep * 3):
            for th in (1, 2):
                dt = run_bench(["growshrink", impl, "-t", str(th),
                                "-k", str(plan["gkeys"])], rep, rows)
                log("rep %d growshrink %-15s %dt %s" % (rep, impl, th,
                                                         secs_str(dt)))
        reps_done += 1
        rep_secs = time.monotonic() - t_rep
    agg = aggregate(rows)
    write_csvs(rows, agg, a.out)
    pngs = [] if a.no_plots else plots(agg, impls, plan, a.out)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), ncpu=os.cpu_count(),
                cpu=cpu_model(), load0=load0, load1=loadavg()[0],
                elapsed=time.monotonic() - T0, reps=reps_done)
    meta["mode"] = mode
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    section = results_section(agg, rows, impls, plan, mode, meta, pngs)
    update_results(section, a.results)
    log("wrote %s, %s and %d plots" % (a.out, a.results, len(pngs)))
    bad = errors_total(agg)
    if bad:
        log("UNEXPECTED lookup results: %s" % "; ".join(bad))
        return 1
    return 0


def report_only(a, impls):
    """Rebuilds the outputs from raw.csv + meta.json of the last run."""
    with open(os.path.join(a.out, "meta.json")) as f:
        meta = json.load(f)
    rows = []
    with open(os.path.join(a.out, "raw.csv")) as f:
        for r in csv.DictReader(f):
            rows.append(dict(rep=int(r["rep"]), kind=r["kind"],
                             impl=r["impl"], workload=r["workload"],
                             keys=int(r["keys"]), threads=int(r["threads"]),
                             metric=r["metric"], value=float(r["value"])))
    mode = meta.get("mode", "full")
    plan = PLANS[mode]
    agg = aggregate(rows)
    write_csvs(rows, agg, a.out)
    pngs = [] if a.no_plots else plots(agg, impls, plan, a.out)
    if not pngs and not a.no_plots:
        # No matplotlib here: keep the figures the run drew rather than
        # dropping their links from RESULTS.md.
        pngs = [p for p in (os.path.join(a.out, n + ".png") for n in
                            ("lookups", "mixes", "resize", "growshrink",
                             "icount")) if os.path.exists(p)]
        log("kept the %d existing plots" % len(pngs))
    section = results_section(agg, rows, impls, plan, mode, meta, pngs)
    update_results(section, a.results)
    log("regenerated %s and %s from raw.csv" % (a.out, a.results))
    return 0


T0 = time.monotonic()

if __name__ == "__main__":
    sys.exit(main())
