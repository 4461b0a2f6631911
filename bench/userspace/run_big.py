"""Big-Memory benchmark: every peer at 1e8 keys.

    make -C uspace bench-big                    (KEYS=1e8: about 5 hours here)
    make -C uspace bench-big QUICK=1            (2^21 keys, short phases)
    python3 -m bench.userspace.run_big [--quick] [--keys N] [--only a,b]
        [--skip-unfit] [--report-only] [--resume] [--until HH:MM]
        [--out DIR] [--results FILE]

Runs `bench_us big` (bench/userspace/big.c) for every table a user could
pick (`bench_us list`: every auto-resized adapter that stores 8-byte keys
and values inline or in its own node, including any added later with
BENCH_REGISTER), one process per table and configuration:

    A  1 thread:  grow, lookups, YCSB, then check, crossing
    B  2 threads: grow, lookups, YCSB, forced resizes, churn, soak, check
    P  presized (the library's presized variant, or created for N), 1 and
       2 threads (quick: 2): grow only
    H  huge pages: A's grow and lookups with GLIBC_TUNABLES=
       glibc.malloc.hugetlb=1 (malloc madvises MADV_HUGEPAGE); quick: six
       tables (libcht's two, cds_lfht qsbr, libcuckoo, ck_hs, TBB's hash
       map). Every phase reports AnonHugePages (smaps_rollup) at its end:
       the A run's growth (THP as the system and library leave it) and the
       H run's are side by side in the summary

Before anything runs, the free memory (MemAvailable) is compared with each
table's estimate (its adapter's est_bytes_per_key x N + the harness's own
300 MB); a table that does not fit is refused with what it needs (the whole
run, or only that table with --skip-unfit), and the check is repeated
before every process. Writes bench/results/userspace/big.{csv,json}, the
figures big-*.png and the section between <!-- userspace-big:begin --> and
<!-- userspace-big:end --> of bench/RESULTS.md; the quick plan the same
under the prefix big-quick (prefix_of()). --report-partial writes the
section of a run in progress from its partial file: the tables whose
processes are all done, marked in progress.

A full run takes hours: after every process the rows so far are saved in
big.partial.json (next to big.json), and --resume continues a run that was
cut from the first process it had not finished; a finished run removes the
file. The file may be committed, so that a run spans sessions and fresh
checkouts: a resume is refused unless the plan, keys, tables, processes,
host (CPU model and count) and the sources of bench_us and libcht.a (every
file their objects' dependency files name, system headers included, the two
Makefiles and the compilers' versions: source_fingerprint()) are those of
the cut run. Each stretch of the run is recorded with its dates (meta
"segments", printed in the report). --until HH:MM (UTC) ends a stretch
cleanly: a process is not started when it would not end by then, judged by
the longest process of its kind (A, B, P or H) so far in the run (before
any, the full plan's typical durations, DEFAULT_TOOK), and the next
--resume starts with it.
"""

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import time

from bench import results_md
from bench.userspace.common import (BIN, OUT, REPO, RESULTS_MD, build,
                                    cpu_model, loadavg, mem_available,
                                    pyplot_or_none, save_fig)

def prefix_of(plan):
    """The names a plan's outputs start with: the full plan (any KEYS) and
    the test plan "big" (big.csv, big.json, big-*.png, big.partial.json and
    the RESULTS.md section between <!-- userspace-big:begin --> and
    <!-- userspace-big:end -->), the quick plan "big-quick", so that the
    quick run's section and figures stand beside the 1e8 run's."""
    return "big-quick" if plan == "quick" else "big"


def markers(prefix):
    return ("<!-- userspace-%s:begin -->" % prefix,
            "<!-- userspace-%s:end -->" % prefix)

#: Tables of `bench_us list` that are variants of another (run as its
#: presized run, or a pointer layout the big run leaves out).
VARIANT_SUFFIXES = ("-presized", "-ptr", "-a64")
#: Tables of `bench_us list` that are no peer: the single-threaded ideal
#: open-addressing table is the floor of the miss count (`bench_us misses`).
NOT_PEERS = ("ideal", "ideal-node")
#: The order of the report; tables not named here follow in list order.
ORDER = ["cht", "chtmap-u64", "chtmap-u64-chained", "chtmap", "lfht-memb",
         "lfht-qsbr", "cuckoo", "ckhs", "ckht", "tbb-hm", "tbb-um", "rwlock"]

#: Harness memory besides the table: zipfian streams (16 MB per thread),
#: timelines, the libraries' thread caches.
HARNESS_BYTES = 300 << 20

PLANS = {
    # d: seconds per lookup/YCSB point; churn, alone (lookups before the
    # soak), soak: seconds; rate: soak writes per second.
    "full": dict(keys=100_000_000, d=5, churn=60, alone=20, soak=120,
                 soak_cht=600, rate=200_000),
    # quick: the huge-page run for six tables, the presized growth at 2
    # threads only (2^22 keys and all of them took 20 min for 2 of 9 tables
    # on this host at load 11).
    "quick": dict(keys=1 << 21, d=0.5, churn=5, alone=2, soak=5,
                  soak_cht=10, rate=200_000,
                  thp_only=("cht", "chtmap-u64", "lfht-qsbr", "cuckoo",
                            "ckhs", "tbb-hm"),
                  presized_threads=("2",)),
    # make test: correctness only (counts, lost keys, memory back).
    "test": dict(keys=1 << 14, d=0.05, churn=0.2, alone=0.1, soak=0.2,
                 soak_cht=0.2, rate=50_000, test=True),
}

T0 = time.monotonic()


def log(msg):
    print("[bench-big %7.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


def list_impls():
    """{name: dict(library, layout, presized, est, resize, flags)} in order."""
    p = subprocess.run([BIN, "list"], stdout=subprocess.PIPE, check=True)
    impls = {}
    for line in p.stdout.decode().splitlines():
        f = line.split(",")
        if len(f) < 7:
            continue
        # From the right: a library's name may hold a comma.
        impls[f[0]] = dict(library=",".join(f[1:-5]), layout=f[-5],
                           presized=f[-4] == "presized",
                           est=float(f[-3]) or 100.0,
                           resize=f[-2] == "resize", flags=f[-1])
    return impls


def order_key(listed):
    """Sort key of the report: ORDER first, then the order of ``listed``."""
    return lambda n: (ORDER.index(n) if n in ORDER else len(ORDER),
                      listed.index(n))


def peers_of(impls, only=None):
    """The tables of the run: every impl that is not a variant of another."""
    names = [n for n in impls
             if not n.endswith(VARIANT_SUFFIXES) and n not in NOT_PEERS]
    names.sort(key=order_key(list(impls)))
    if only:
        names = [n for n in names if n in only]
    return names


def presized_of(impls, name):
    """(impl, extra args) of the presized run of table ``name``."""
    if name + "-presized" in impls:
        return name + "-presized", []
    return name, ["-P"]


def estimate(impls, name, keys):
    """Bytes the process of table ``name`` needs at ``keys`` keys."""
    e = impls[name]["est"]
    pre = name + "-presized"
    if pre in impls:
        e = max(e, impls[pre]["est"])
    return int(e * keys) + HARNESS_BYTES


def now_utc():
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


#: Seconds a process of each kind took at 1e8 keys (round 4, session 17:
#: libcht's tables and cds_lfht memb), for --until before the run has
#: measured one of its own kind; scaled by keys for other plans.
DEFAULT_TOOK = {"A": 800, "B": 1000, "P": 120, "H": 120}


def deadline_of(hhmm, now=None):
    """The epoch time of the next HH:MM UTC (today, or tomorrow when it
    has passed)."""
    now = time.time() if now is None else now
    try:
        h, m = (int(x) for x in hhmm.split(":"))
        if not (0 <= h < 24 and 0 <= m < 60):
            raise ValueError
    except ValueError:
        raise SystemExit("--until %s: not HH:MM" % hhmm)
    day = now - now % 86400
    t = day + h * 3600 + m * 60
    return t if t > now else t + 86400


def took_key(label, impl, args):
    """The key of a process in extra["took"]: "LABEL impl", and for the
    presized runs, which a table has one of per thread count, "-t N" too."""
    key = "%s %s" % (label, impl)
    if label == "P" and "-t" in args:
        key += " -t " + args[args.index("-t") + 1]
    return key


def expected_secs(label, took, keys):
    """How long a process of kind ``label`` should take: the longest one of
    that kind in ``took`` ({"LABEL impl": seconds}), else DEFAULT_TOOK
    scaled to ``keys``."""
    mine = [v for k, v in took.items() if k.split(" ", 1)[0] == label]
    if mine:
        return max(mine)
    return DEFAULT_TOOK.get(label, 0) * keys / 1e8


def gb(b):
    return "%.1f GB" % (b / 1e9)


def processes(peers, impls, plan):
    """The runs: (label, impl, args, env) in order, table by table."""
    k = str(plan["keys"])
    runs = []
    if plan.get("test"):
        # make test: every workload once per table, 2 threads, with the
        # check and the teardown (no -Q); the presized variants grow only.
        for name in peers:
            runs.append(("B", name, [
                "-k", k, "-d", str(plan["d"]), "-t", "2", "-w",
                "grow,lookup,ycsb,resize,churn,shrink,soak,crossing",
                "-c", str(plan["churn"]), "-L", str(plan["alone"]),
                "-S", str(plan["soak"]), "-r", str(plan["rate"])], None))
            pimpl, pargs = presized_of(impls, name)
            runs.append(("P", pimpl, ["-k", k, "-t", "2", "-w", "grow"]
                         + pargs, None))
        return runs
    for name in peers:
        base = ["-k", k, "-d", str(plan["d"])]
        soak = plan["soak_cht"] if name.startswith("cht") else plan["soak"]
        runs.append(("A", name, base + ["-t", "1", "-w",
                                        "grow,lookup,ycsb,shrink,crossing"],
                     None))
        runs.append(("B", name, base + [
            "-t", "2", "-w", "grow,lookup,ycsb,resize,churn,soak",
            "-c", str(plan["churn"]), "-L", str(plan["alone"]),
            "-S", str(soak), "-r", str(plan["rate"])], None))
        pimpl, pargs = presized_of(impls, name)
        for t in plan.get("presized_threads", ("1", "2")):
            runs.append(("P", pimpl, ["-k", k, "-t", t, "-w", "grow", "-Q"]
                         + pargs, None))
        if name not in plan.get("thp_only", (name,)):
            continue
        runs.append(("H", name, base + ["-t", "1", "-w", "grow,lookup", "-Q",
                                        "-x", "@thp"],
                     {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}))
    return runs


def run_one(label, impl, args, env, peer, rows, extra, quiet):
    """Runs one bench_us big process; its rows into rows/extra; returns
    (exit status, seconds)."""
    argv = [BIN, "big", impl] + args
    e = dict(os.environ)
    if env:
        e.update(env)
    t = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=e, text=True)
    # Progress: the harness prints a line a second; show every tenth and
    # every phase's first (all of them on a terminal, overwritten).
    tty = sys.stderr.isatty() and not quiet

    def pump_err():
        last = None
        for line in p.stderr:
            line = line.rstrip("\n")
            extra["stderr"].append(line)
            head = line.split("]")[0]
            if tty:
                sys.stderr.write("\r\033[K" + line[:160])
                sys.stderr.flush()
                continue
            if quiet:
                continue
            try:
                sec = int(line.split("]")[1].split("s")[0])
            except (IndexError, ValueError):
                sec = None
            if head != last or sec is None or sec % 10 == 0:
                print("    " + line, file=sys.stderr, flush=True)
            last = head

    import threading
    th = threading.Thread(target=pump_err)
    th.start()
    for line in p.stdout:
        f = line.rstrip("\n").split(",")
        if f[0] == "big" and len(f) == 7:
            rows.append(dict(run=label, peer=peer, impl=f[1], workload=f[2],
                             keys=int(f[3]), threads=int(f[4]), metric=f[5],
                             value=float(f[6])))
        elif f[0] == "tl" and len(f) == 12:
            extra["timeline"].append(dict(
                run=label, peer=peer, impl=f[1], workload=f[2],
                threads=int(f[3]), sec=int(f[4]), ops=int(f[5]),
                p50=float(f[6]), p99=float(f[7]), p999=float(f[8]),
                max=float(f[9]), rss=int(f[10]), heap=int(f[11])))
        elif f[0] == "cdf" and len(f) == 6:
            extra["cdf"].append(dict(run=label, peer=peer, impl=f[1],
                                     workload=f[2], threads=int(f[3]),
                                     ns=float(f[4]), frac=float(f[5])))
        elif f[0] == "ev" and len(f) == 6:
            extra["events"].append(dict(peer=peer, impl=f[1], workload=f[2],
                                        threads=int(f[3]), keys=int(f[4]),
                                        buckets=int(f[5])))
        elif f[0] == "info" and len(f) >= 4:
            extra["info"][f[2]] = ",".join(f[3:])
    p.wait()
    th.join()
    if tty:
        sys.stderr.write("\r\033[K")
    return p.returncode, time.monotonic() - t


# --- the report ------------------------------------------------------------------------------


def index(rows):
    d = {}
    for r in rows:
        d[(r["peer"], r["run"], r["workload"], r["threads"], r["metric"])] = \
            r["value"]
    return d


def fmt(v, nd=2):
    if v is None:
        return "-"
    if v >= 1000:
        return "%.0f" % v
    if v >= 100:
        return "%.1f" % v
    return ("%%.%df" % nd) % v


def table_rows(peers, d):
    """The summary: one row per table (the figures the issue's goals name)."""
    out = []
    for p in peers:
        g = lambda run, wl, th, m: d.get((p, run, wl, th, m))
        grow2_p999 = g("B", "grow", 2, "p999_ns")
        pre2_p999 = g("P", "grow-presized", 2, "p999_ns")
        fixed = g("B", "resize-fixed-n", 2, "mops")
        resizing = g("B", "resize-resizing", 2, "mops")
        errs = sum(v for (pp, run, wl, th, m), v in d.items()
                   if pp == p and m in ("errors", "ring_errors"))
        out.append(dict(
            peer=p,
            grow1=g("A", "grow", 1, "mops"), grow2=g("B", "grow", 2, "mops"),
            grow2_p999=grow2_p999, grow2_max=g("B", "grow", 2, "max_us"),
            pre2_p999=pre2_p999, pre2_max=g("P", "grow-presized", 2, "max_us"),
            bpk=g("B", "grow", 2, "bytes_per_key_rss"),
            bpk_alloc=g("B", "grow", 2, "bytes_per_key_heap"),
            peak_final=g("B", "grow", 2, "peak_over_final_rss"),
            hit1=g("A", "lookup-hit", 1, "mops"),
            hit2=g("B", "lookup-hit", 2, "mops"),
            hit1_thp=g("H", "lookup-hit@thp", 1, "mops"),
            thp_off=g("A", "grow", 1, "anon_huge_mb"),
            thp_on=g("H", "grow@thp", 1, "anon_huge_mb"),
            miss2=g("B", "lookup-miss", 2, "mops"),
            czipf2=g("B", "ycsb-c-zipf", 2, "mops"),
            a_uni2=g("B", "ycsb-a-uniform", 2, "mops"),
            a_zipf2=g("B", "ycsb-a-zipf", 2, "mops"),
            resize_ratio=(resizing / fixed if fixed and resizing else None),
            churn_flat=g("B", "churn", 2, "heap_flat_pct"),
            soak_flat=g("B", "soak", 2, "heap_flat_pct"),
            soak_w_p999=g("B", "soak-writes", 1, "p999_ns"),
            soak_w_max=g("B", "soak-writes", 1, "max_us"),
            soak_rate=g("B", "soak-writes", 1, "rate_done"),
            soak_l_max=g("B", "soak-lookups", 1, "max_us"),
            alone_l_max=g("B", "soak-lookups-alone", 1, "max_us"),
            cross_max=g("A", "crossing", 1, "max_us"),
            shrink1=g("A", "shrink", 1, "mops"),
            shrink_p999=g("A", "shrink", 1, "p999_ns"),
            shrink_max=g("A", "shrink", 1, "max_us"),
            shrink_heap=g("A", "shrink", 1, "heap_settled_over_before"),
            errors=errs))
    return out


COLS = [("peer", "table"), ("grow1", "grow 1t Mops/s"),
        ("grow2", "grow 2t Mops/s"), ("grow2_p999", "grow 2t p99.9 ns"),
        ("grow2_max", "grow 2t max us"), ("pre2_p999", "presized 2t p99.9 ns"),
        ("pre2_max", "presized 2t max us"), ("bpk", "RSS bytes/key"),
        ("bpk_alloc", "alloc bytes/key"),
        ("peak_final", "peak/final RSS"), ("hit1", "hit 1t Mops/s"),
        ("hit2", "hit 2t Mops/s"), ("hit1_thp", "hit 1t THP Mops/s"),
        ("thp_off", "AnonHugePages MB default"),
        ("thp_on", "AnonHugePages MB hugetlb=1"),
        ("miss2", "miss 2t Mops/s"), ("czipf2", "C zipf 2t"),
        ("a_uni2", "A uniform 2t"), ("a_zipf2", "A zipf 2t"),
        ("resize_ratio", "resizing/fixed"), ("churn_flat", "churn heap flat %"),
        ("soak_flat", "soak heap flat %"),
        ("soak_rate", "soak writes/s done"),
        ("soak_w_p999", "soak write p99.9 ns"),
        ("soak_w_max", "soak write max us"),
        ("soak_l_max", "soak lookup max us"),
        ("alone_l_max", "lookups alone max us"),
        ("cross_max", "crossing max us"),
        ("shrink1", "shrink to N/8 1t Mops/s"),
        ("shrink_p999", "shrink p99.9 ns"), ("shrink_max", "shrink max us"),
        ("shrink_heap", "alloc after/before shrink"), ("errors", "errors")]


def md_table(trs):
    lines = ["| " + " | ".join(c[1] for c in COLS) + " |",
             "|" + "---|" * len(COLS)]
    for r in trs:
        cells = []
        for k, _ in COLS:
            v = r[k]
            cells.append(v if isinstance(v, str) else fmt(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def text_table(trs):
    w = [max(len(c[1]), 8) for c in COLS]
    out = []
    keys = [c[0] for c in COLS]
    # Two blocks (the table is wide).
    for lo, hi in ((0, 13), (13, len(COLS))):
        sel = [0] + list(range(max(lo, 1), hi))
        out.append("  ".join(COLS[i][1].rjust(w[i]) for i in sel))
        for r in trs:
            out.append("  ".join(
                (r[keys[i]] if isinstance(r[keys[i]], str)
                 else fmt(r[keys[i]])).rjust(w[i]) for i in sel))
        out.append("")
    return "\n".join(out)


def plots(peers, extra, d, out, prefix="big"):
    plt = pyplot_or_none(log)
    if plt is None:
        return []
    made = []
    tl = extra["timeline"]
    # Timeline: growing with 2 threads, per second.
    fig, axes = plt.subplots(3, 1, figsize=(11, 10), sharex=True)
    for p in peers:
        for wl, ls in (("grow", "-"), ("grow-presized", ":")):
            run = "B" if wl == "grow" else "P"
            pts = [x for x in tl if x["peer"] == p and x["run"] == run
                   and x["workload"] == wl and x["threads"] == 2]
            if not pts:
                continue
            xs = [x["sec"] for x in pts]
            lab = p + ("" if wl == "grow" else " presized")
            axes[0].plot(xs, [x["ops"] / 1e6 for x in pts], ls, label=lab)
            axes[1].plot(xs, [max(x["p999"], 1) for x in pts], ls, label=lab)
            axes[2].plot(xs, [x["rss"] / 1e9 for x in pts], ls, label=lab)
    axes[0].set_ylabel("inserts (M/s)")
    axes[1].set_ylabel("insert p99.9 (ns, log)")
    axes[1].set_yscale("log")
    axes[2].set_ylabel("RSS (GB)")
    axes[2].set_xlabel("seconds since the start of the growth (2 threads)")
    axes[0].legend(fontsize=6, ncol=4)
    axes[0].set_title("Growing from empty (solid) and into a presized table "
                      "(dotted), %s keys" % (d.get("_keys") or ""), fontsize=9)
    save_fig(plt, fig, out, prefix + "-timeline.png", made, dpi=100)
    # Latency CDFs (as 1 - F on a log scale: the tail).
    cdf = extra["cdf"]
    specs = [("B", "grow", 2, "inserts while growing, 2 threads"),
             ("B", "lookup-hit", 2, "lookups (hits), 2 threads"),
             ("B", "ycsb-a-zipf", 2, "YCSB A zipf, 2 threads"),
             ("B", "soak-writes", 1, "soak writes (from schedule)")]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, (run, wl, th, title) in zip(axes.flat, specs):
        for p in peers:
            pts = [x for x in cdf if x["peer"] == p and x["run"] == run
                   and x["workload"] == wl and x["threads"] == th]
            if not pts:
                continue
            ax.plot([x["ns"] for x in pts],
                    [max(1 - x["frac"], 1e-9) for x in pts], label=p)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("latency (ns)", fontsize=8)
        ax.set_ylabel("fraction slower", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=6, ncol=2)
    save_fig(plt, fig, out, prefix + "-cdf.png", made, dpi=100)
    # Memory: bytes per key, peak, and churn/soak over time.
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    xs = range(len(peers))
    final = [d.get((p, "B", "grow", 2, "bytes_per_key_rss")) or 0
             for p in peers]
    peak = [(d.get((p, "B", "grow", 2, "peak_over_final_rss")) or 0) * f
            for p, f in zip(peers, final)]
    axes[0].bar([x - 0.2 for x in xs], peak, 0.4, label="peak while growing")
    axes[0].bar([x + 0.2 for x in xs], final, 0.4, label="final")
    axes[0].set_xticks(list(xs))
    axes[0].set_xticklabels(peers, rotation=30, ha="right", fontsize=7)
    axes[0].set_ylabel("RSS bytes per key")
    axes[0].legend(fontsize=7)
    for p in peers:
        for wl in ("churn", "soak"):
            pts = [x for x in tl if x["peer"] == p and x["run"] == "B"
                   and x["workload"] == wl]
            if pts:
                axes[1].plot([x["sec"] for x in pts],
                             [x["heap"] / 1e9 for x in pts],
                             "-" if wl == "churn" else ":",
                             label="%s %s" % (p, wl))
    axes[1].set_xlabel("seconds")
    axes[1].set_ylabel("heap in use (GB)")
    axes[1].set_title("churn (solid) and soak (dotted): flat?", fontsize=9)
    axes[1].legend(fontsize=6, ncol=2)
    save_fig(plt, fig, out, prefix + "-memory.png", made, dpi=100)
    return made


def section(meta, trs, pngs, failures):
    quick = meta["plan"] == "quick"
    lines = [
        "## Userspace at Big-Memory scale%s (`make -C uspace bench-big%s`)"
        % (", quick plan" if quick else "", " QUICK=1" if quick else ""),
        "",
        "Generated by `bench/userspace/run_big.py` (%s plan, %s keys, 8-byte "
        "keys and values) on %s, %d CPUs, %s; %s. THP: `%s`; the THP runs "
        "(`hit 1t THP`) use `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`."
        % (meta["plan"], "{:,}".format(meta["keys"]), meta["cpu"],
           meta["cpus"], meta["date"], meta["duration"], meta["thp"]),
        "",
        "One process per table and configuration (A: 1 thread, B: 2 threads, "
        "P: presized, H: huge pages); latency from log-linear histograms "
        "(relative error <= 1/64), soak writes timed from their scheduled "
        "start; memory is RSS above the process's start (peak from VmHWM) "
        "and the allocator's figure (`alloc bytes/key`: mallinfo2's in use "
        "and mmapped plus the anonymous memory the library mapped itself, "
        "bench/userspace/mapcount.c). Single run, no repetitions: "
        "ratios within this table only. Errors: lost keys, wrong values, "
        "failed operations, absent keys found (must be 0).",
        "",
    ]
    part = meta.get("partial")
    if part:
        lines += [
            "**In progress: %d of %d processes done** (%s); this section "
            "was written from `bench/results/userspace/%s.partial.json` "
            "(`run_big.py --report-partial`) and shows the tables whose "
            "processes are all done: %s. Still to run: %s. `make -C uspace "
            "bench-big BIG=--resume` continues the run (the same sources "
            "and host only), and the finished run replaces this section."
            % (part["done"], part["total"], meta["duration"],
               meta.get("prefix", "big"), ", ".join(part["complete"]) or
               "none", ", ".join(part["pending"]) or "none"),
            "",
        ]
    segs = meta.get("segments") or []
    if len(segs) > 1 or (part and segs):
        lines += [
            "The run was cut and resumed (`--resume`), so it ran in %d "
            "stretches, each on the same host and the same sources (sha256 "
            "%s of what bench_us was built from): %s." % (
                len(segs), (meta.get("source") or "?")[:16],
                "; ".join("processes %d-%d %s to %s (load %.2f at start)"
                          % (g["first"], g["last"], g["started"],
                             g["ended"] or "?", g["load"])
                          for g in segs)),
            "",
        ]
    lines += [
        md_table(trs),
        "",
    ]
    if failures:
        lines += ["Runs that failed or were refused:", ""]
        lines += ["- %s" % f for f in failures]
        lines.append("")
    for p in pngs:
        lines.append("![%s](results/userspace/%s)" % (
            os.path.basename(p), os.path.basename(p)))
    lines.append("")
    return "\n".join(lines)


def thin_cdf(cdf):
    """At most a few hundred points per curve: a point is kept when its
    latency grew 25 % or its tail fraction (1 - F) halved since the last
    kept one (the histogram has 64 buckets per power of two)."""
    kept, last = [], {}
    for x in cdf:
        k = (x["run"], x["peer"], x["workload"], x["threads"])
        prev = last.get(k)
        tail = 1 - x["frac"]
        if (prev is None or x["ns"] >= prev[0] * 1.25
                or tail <= prev[1] * 0.5 or x["frac"] >= 1):
            kept.append(x)
            last[k] = (x["ns"], tail)
    return kept


def write_outputs(rows, extra, meta, peers, out, results, quiet=False):
    """The report of a run: PREFIX.csv and PREFIX.json (not for a partial
    report: its data stay in the partial file), the figures and the
    RESULTS.md section (``results``, or None)."""
    os.makedirs(out, exist_ok=True)
    prefix = meta.get("prefix", "big")
    extra["cdf"] = thin_cdf(extra["cdf"])
    if not meta.get("partial"):
        with open(os.path.join(out, prefix + ".csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["run", "peer", "impl",
                                              "workload", "keys", "threads",
                                              "metric", "value"])
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(out, prefix + ".json"), "w") as f:
            json.dump(dict(meta=meta, rows=rows, **extra), f)
    d = index(rows)
    d["_keys"] = "{:,}".format(meta["keys"])
    trs = table_rows(peers, d)
    if not quiet:
        print(text_table(trs))
    pngs = (plots(peers, extra, d, out, prefix)
            if not meta.get("no_plots") else [])
    if results:
        text = open(results).read() if os.path.exists(results) else None
        sec = section(meta, trs, pngs, meta.get("failures", []))
        begin, end = markers(prefix)
        with open(results, "w") as f:
            f.write(results_md.splice(text, sec, begin, end))
    return trs


def report_partial(path, out, results, no_plots=False):
    """Writes the section (and figures) of the run in progress that
    ``path`` records, with the tables whose processes are all done; the
    rows of the others are left out. Returns the number of tables shown."""
    with open(path) as f:
        doc = json.load(f)
    ident = doc["ident"]
    runs = ident["runs"]
    done = doc["done"]
    peer = lambda r: r.split(" ", 1)[1].replace("-presized", "")
    finished = {peer(r) for r in runs[:done]}
    pending = {peer(r) for r in runs[done:]}
    complete = [p for p in ident["peers"] if p in finished - pending]
    rows = [r for r in doc["rows"] if r["peer"] in complete]
    extra = {k: ([x for x in v if x.get("peer") in complete]
                 if isinstance(v, list) else v)
             for k, v in doc["extra"].items()}
    extra.setdefault("cdf", [])
    extra.setdefault("timeline", [])
    segs = doc.get("segments", [])
    meta = dict(plan=ident["plan"], keys=ident["keys"], peers=complete,
                cpu=ident["host"].rsplit(",", 1)[0],
                cpus=int(ident["host"].rsplit(",", 1)[1].split()[0]),
                date=segs[-1]["ended"] if segs else now_utc(),
                duration="%.1f min so far" % (doc["spent"] / 60),
                thp=extra.get("info", {}).get("thp_enabled", "unknown"),
                failures=doc["failures"], no_plots=no_plots, segments=segs,
                source=ident["source"], prefix=prefix_of(ident["plan"]),
                partial=dict(done=done, total=len(runs), complete=complete,
                             pending=[p for p in ident["peers"]
                                      if p in pending]))
    peers = sorted(complete, key=order_key(ident["peers"]))
    write_outputs(rows, extra, meta, peers, out, results, quiet=True)
    return len(complete)


def depfile_sources(path):
    """The files a compiler dependency file (-MD -MP) names as the first
    rule's prerequisites: the object's source and every header it read."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    first = text.split("\n", 1)[0]
    return first.split(":", 1)[1].split() if ":" in first else []


def source_files(repo=REPO):
    """{name: real path} of what bench_us is built from: every file named
    by the dependency files of its objects and of libcht.a's (`make -s -C
    bench/userspace bench-us-depfiles`, `make -s -C uspace lib-depfiles`:
    sources, the library's and the peers' headers) and the two Makefiles
    (flags). A file inside the repository is named relative to it, so two
    checkouts of one commit agree. Exits when the build's dependency files
    are missing (build bench_us first)."""
    deps = []
    for d, target in ((os.path.join(repo, "bench", "userspace"),
                       "bench-us-depfiles"),
                      (os.path.join(repo, "uspace"), "lib-depfiles")):
        out = subprocess.run(["make", "-s", "--no-print-directory", "-C", d,
                              target], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("source_files: make %s failed: %s"
                             % (target, out.stderr.strip()))
        deps += out.stdout.split()
    files = {os.path.join(repo, "bench", "userspace", "Makefile"),
             os.path.join(repo, "uspace", "Makefile")}
    for dep in deps:
        if not os.path.exists(dep):
            raise SystemExit("source_files: %s is missing (build bench_us "
                             "first)" % dep)
        files.update(os.path.normpath(os.path.join(os.path.dirname(dep), x))
                     for x in depfile_sources(dep))
    root = os.path.realpath(repo) + os.sep
    named = {}
    for path in files:
        real = os.path.realpath(path)
        named[real[len(root):] if real.startswith(root) else real] = real
    return named


def source_fingerprint(repo=REPO):
    """(sha256 hex, number of files) over source_files(): each file's name
    and content hash in name order, then the first line of `gcc --version`
    and `g++ --version`. Two builds with one fingerprint compiled the same
    text with the same compilers."""
    named = source_files(repo)
    h = hashlib.sha256()
    for name, real in sorted(named.items()):
        with open(real, "rb") as f:
            h.update(b"%s\0%s\0" % (name.encode(),
                                      hashlib.sha256(f.read()).digest()))
    for cc in ("gcc", "g++"):
        v = subprocess.run([cc, "--version"], capture_output=True, text=True)
        h.update(v.stdout.split("\n", 1)[0].encode() + b"\0")
    return h.hexdigest(), len(named)


def save_partial(path, ident, done, spent, rows, extra, failures,
                 segments=()):
    """Records a run in progress: its first ``done`` processes finished;
    ``segments``: the stretches it ran in so far (dates, processes). The
    latency CDFs are kept thinned as the report thins them (thin_cdf() is
    idempotent), about a tenth of their size: the file may be committed."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    kept = {k: v for k, v in extra.items() if k != "stderr"}
    kept["cdf"] = thin_cdf(kept.get("cdf", []))
    with open(tmp, "w") as f:
        json.dump(dict(ident=ident, done=done, spent=spent, rows=rows,
                       extra=kept,
                       failures=failures, segments=list(segments)), f,
                  indent=0)
    os.replace(tmp, path)


def resume_state(path, ident, rows, extra, failures, resume, segments=None):
    """(processes already done, seconds they took): from ``path`` when
    resuming a run of the same ``ident`` (rows, extra, failures and the
    earlier ``segments`` filled in), else (0, 0). A run that does not match
    is refused, naming what differs: a resumed report must not mix two
    plans, two hosts or two builds of the tables."""
    if not resume:
        return 0, 0.0
    if not os.path.exists(path):
        log("--resume: no %s, starting from the first process" % path)
        return 0, 0.0
    with open(path) as f:
        doc = json.load(f)
    if doc["ident"] != ident:
        diff = sorted(k for k in set(ident) | set(doc["ident"])
                      if ident.get(k) != doc["ident"].get(k))
        raise SystemExit("--resume: %s records another run (%s differ%s); "
                         "start it again without --resume"
                         % (path, ", ".join(diff),
                            "s" if len(diff) == 1 else ""))
    rows.extend(doc["rows"])
    for k, v in doc["extra"].items():
        extra[k] = v
    failures[:] = doc["failures"]
    if segments is not None:
        segments[:] = doc.get("segments", [])
    log("--resume: %d of %d processes done (%.1f min), continuing" % (
        doc["done"], len(ident["runs"]), doc["spent"] / 60))
    return doc["done"], doc["spent"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--test", action="store_true",
                    help="tiny sizes, correctness only (make test)")
    ap.add_argument("--keys", type=float, default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--skip-unfit", action="store_true")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--report-partial", action="store_true",
                    help="the RESULTS section and figures of the run in "
                    "progress (PREFIX.partial.json): its finished tables")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run that big.partial.json records")
    ap.add_argument("--until", default=None, metavar="HH:MM",
                    help="start no process that would not end by HH:MM UTC "
                    "(with --resume: a run spread over sessions)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--results", default=RESULTS_MD)
    a = ap.parse_args(argv)
    mode = "test" if a.test else "quick" if a.quick else "full"
    plan = dict(PLANS[mode])
    if a.keys:
        plan["keys"] = int(a.keys)
    prefix = prefix_of(mode)
    partial = os.path.join(a.out, prefix + ".partial.json")
    if a.report_partial:
        n = report_partial(partial, a.out, a.results, a.no_plots)
        log("%s: %d finished table(s) reported" % (partial, n))
        return 0
    if a.report_only:
        with open(os.path.join(a.out, prefix + ".json")) as f:
            doc = json.load(f)
        meta = doc.pop("meta")
        rows = doc.pop("rows")
        peers = sorted(meta["peers"], key=order_key(meta["peers"]))
        write_outputs(rows, doc, meta, peers, a.out, a.results)
        return 0
    if not a.no_build:
        build("bench-big")
    impls = list_impls()
    only = a.only.split(",") if a.only else None
    peers = peers_of(impls, only)
    keys = plan["keys"]
    avail = mem_available()
    log("%s plan: %s keys, tables: %s" % (mode, "{:,}".format(keys),
                                          ", ".join(peers)))
    log("memory: %s available (MemAvailable); each table's process needs:"
        % gb(avail))
    unfit = []
    for p in peers:
        need = estimate(impls, p, keys)
        ok = need <= 0.9 * avail
        log("  %-10s %8s  (%3.0f bytes/key estimated + %s harness)%s" % (
            p, gb(need), (need - HARNESS_BYTES) / keys, gb(HARNESS_BYTES),
            "" if ok else "  DOES NOT FIT"))
        if not ok:
            unfit.append(p)
    if unfit and not a.skip_unfit:
        log("refused: %s need more than 90%% of the %s available; free "
            "memory, choose fewer keys (KEYS=...) or --skip-unfit"
            % (", ".join(unfit), gb(avail)))
        return 1
    peers = [p for p in peers if p not in unfit]
    failures = ["%s: refused, needs %s, %s available" % (
        p, gb(estimate(impls, p, keys)), gb(avail)) for p in unfit]
    runs = processes(peers, impls, plan)
    rows, extra = [], dict(timeline=[], cdf=[], events=[], info={},
                           stderr=[])
    source, nfiles = source_fingerprint()
    ident = dict(plan=mode, keys=keys, peers=peers,
                 runs=["%s %s" % (r[0], r[1]) for r in runs],
                 host="%s, %d CPUs" % (cpu_model(), os.cpu_count()),
                 source=source)
    log("sources: %d files, sha256 %s" % (nfiles, source[:16]))
    segments = []
    done, spent = resume_state(partial, ident, rows, extra, failures,
                               a.resume, segments)
    t_start = time.monotonic() - spent
    extra.setdefault("took", {})
    deadline = deadline_of(a.until) if a.until else None
    segments.append(dict(first=done + 1, last=done, started=now_utc(),
                         ended=None, load=round(loadavg()[0], 2)))
    for i, (label, impl, args, env) in enumerate(runs):
        if i < done:
            continue
        peer = impl[:-len("-presized")] if impl.endswith("-presized") else impl
        need = estimate(impls, peer, keys)
        avail = mem_available()
        if need > 0.9 * avail:
            msg = "%s %s: skipped, needs %s, %s available now" % (
                label, impl, gb(need), gb(avail))
            log(msg)
            failures.append(msg)
            continue
        if deadline is not None:
            exp = expected_secs(label, extra["took"], keys)
            if time.time() + exp > deadline:
                log("--until %s: stopping before (%d/%d) %s %s, which "
                    "should take %.0f min (%.0f min left); %d of %d "
                    "processes done: --resume continues" % (
                        a.until, i + 1, len(runs), label, impl, exp / 60,
                        max(0, deadline - time.time()) / 60, i, len(runs)))
                return 0
        log("(%d/%d) %s %s %s" % (i + 1, len(runs), label, impl,
                                  " ".join(args)))
        extra["stderr"] = []
        rc, secs = run_one(label, impl, args, env, peer, rows, extra,
                           quiet=mode == "test")
        log("    %s %s: exit %d, %.1f s" % (label, impl, rc, secs))
        extra["took"][took_key(label, impl, args)] = round(secs, 1)
        if rc != 0:
            tail = " | ".join(extra["stderr"][-3:])
            failures.append("%s %s (exit %d): %s" % (label, impl, rc, tail))
        segments[-1].update(last=i + 1, ended=now_utc())
        if mode != "test" or a.resume:
            save_partial(partial, ident, i + 1, time.monotonic() - t_start,
                         rows, extra, failures, segments)
    extra.pop("stderr", None)
    meta = dict(plan=mode, keys=keys, peers=peers, cpu=cpu_model(),
                cpus=os.cpu_count(), date=now_utc(),
                duration="%.1f min" % ((time.monotonic() - t_start) / 60),
                thp=extra["info"].get("thp_enabled", "unknown"),
                failures=failures, no_plots=a.no_plots, segments=segments,
                source=source, prefix=prefix,
                settings={k: v for k, v in plan.items()})
    results = None if mode == "test" else a.results
    write_outputs(rows, extra, meta, peers, a.out, results,
                  quiet=mode == "test")
    if os.path.exists(partial):
        os.remove(partial)
    log("done in %s; %d failure(s)" % (meta["duration"], len(failures)))
    for f in failures:
        log("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
