"""``make bench-sharing``: cache lines shared between CPUs per operation.

Boots the release kernels of bench/chtbench.py (A-RCU, Podzimek RCU, the
locked page hash table) under ``-accel tcg,thread=multi`` with the sharing
counter (build/plugins/sharing.so, docs/SHARING.md) at each ``-smp``, runs
``chtbench ID CPUS UPDATE -w -t SECONDS`` for the ids of each build, and
reads the plugin's window per command: the bound on coherence transfers per
operation and the hottest lines, named by tools/sharing.py.  Each point is
repeated in separate boots (``--reps``) and the spread (min..max) reported.

Ids run: every id of the kernel's table on A-RCU; on Podzimek the ids whose
operation enters an RCU reader or updates under RCU; on the locked build the
page hash table ids (the same lists as the cost suite, bench/chtbench.py).
Ids taking updates run at 20 % and 100 % (an id whose updates run on one CPU
only runs read-only at 0 %); ids with a resizer use cpus = smp - 1 so the
resizer has its own CPU.  Every thread runs on its own CPU (``-w``).

Writes bench/results/sharing.{csv,json}, bench/results/sharing.png and the
sharing section of bench/RESULTS.md (between ``<!-- sharing:begin -->`` and
``<!-- sharing:end -->``), and, with bench/results/cost.json (make
bench-cost), the scaling model: bench/results/sharing-model.{json,png} and
its part of the section (``--report-only`` redoes the figures, the model and
the section from sharing.json).

Usage::

    python3 -m bench.bench_sharing                      # full: smp 2 4 8, 2 reps
    python3 -m bench.bench_sharing --smp 2,4 --reps 2 --configs a-rcu --ids 3,12
    python3 -m bench.bench_sharing --report-only        # redo figure and section
    python3 -m bench.bench_sharing --model-only         # redo only the model
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

from bench import chtbench as cb  # configs, builds
from bench import results_md
from tools import kconsole
from tools import sharing as sh

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)

RESULTS_DIR = os.path.join(BENCH_DIR, "results")
OUT_DIR = os.path.join(REPO, "build", "bench", "sharing")
PLUGIN = os.path.join(REPO, "build", "plugins", "sharing.so")
RESULTS_MD = os.path.join(BENCH_DIR, "RESULTS.md")
SH_BEGIN = "<!-- sharing:begin -->"
SH_END = "<!-- sharing:end -->"

UPD_PCTS = [20, 100]
# The read path's goal (docs/SHARING.md), transfers per operation: -smp 2
# and 4 / 8.
READ_GOAL = 0.001
READ_GOAL_8 = 0.005
SMPS = [2, 4, 8]
SECONDS = 1
REPS = 2
TOP = 5

T0 = time.monotonic()


def log(msg):
    print("[%6.0fs] %s" % (time.monotonic() - T0, msg), flush=True)


def points_of(config, table, smp, ids=None):
    """(bench, cpus, update) of one boot of ``config`` at ``smp``."""
    want = cb.COST_IDS[config]
    out = []
    for b in (sorted(table) if want is None else want):
        if ids and b not in ids:
            continue
        t = table[b]
        cpus = smp - 1 if t["resizer"] else smp
        if t["single_cpu"] or not t["updates"]:
            pcts = [0]
        else:
            pcts = UPD_PCTS
        for u in pcts:
            out.append((b, cpus, u))
    return out


def run_boot(config, smp, rep, seconds, ids, mem):
    """One boot: every point of ``config``; returns a list of samples."""
    c = cb.CONFIGS[config]
    name = "sharing-%s-smp%d-rep%d" % (config, smp, rep)
    os.makedirs(OUT_DIR, exist_ok=True)
    out_path = os.path.join(OUT_DIR, name + ".jsonl")
    elf = os.path.join(REPO, c["build"], "kernel.elf")
    k = kconsole.Kernel(smp=smp, mem=mem, kernel=elf, name=name,
                        log_dir=os.path.join(REPO, "build", "bench", "logs"),
                        extra_args=["-plugin", "%s,out=%s,top=20"
                                    % (PLUGIN, out_path)])
    samples = []
    with k:
        k.wait_prompt(300)
        table = k.chtbench_table(120)
        online = kconsole.parse_cpus_online(k.cmd("cpus", 120))
        if online != smp:
            raise SystemExit("%s: %s CPUs online, expected %d" % (name, online,
                                                                  smp))
        for b, cpus, u in points_of(config, table, smp, ids):
            # -m: the slab allocator's ranges after the run, before the
            # teardown, to name heap lines by their slab cache.
            cmd = "chtbench %d %d %d -w -t %d -m" % (b, cpus, u, seconds)
            text = k.cmd(cmd, timeout=6 * seconds + 600)
            res = kconsole.parse_chtbench_results(text)
            if len(res) != 1:
                raise SystemExit("%s: %r printed no result line (log %s)"
                                 % (name, cmd, k.log_path))
            m = re.search(r"^resizes=(\d+)\s*$", kconsole.normalize(text),
                          re.MULTILINE)
            samples.append({"config": config, "smp": smp, "rep": rep,
                            "bench": b, "name": table[b]["name"],
                            "resizer": table[b]["resizer"],
                            "resizes": int(m.group(1)) if m else None,
                            "cpus": cpus, "update": u,
                            "ops": res[0]["ops"], "command": cmd,
                            "_slabmap": sh.SlabMap(text)})
        k.check_no_panic()
        k.halt(timeout=300)
    windows = sh.read_windows(out_path)
    if len(windows) != len(samples):
        raise SystemExit("%s: %d plugin windows for %d commands (%s)"
                         % (name, len(windows), len(samples), out_path))
    syms = sh.Symbols(elf)
    for s, w in zip(samples, windows):
        if w.get("ops") != s["ops"]:
            raise SystemExit("%s: %s: the plugin got %s ops, the result line "
                             "says %d" % (name, s["command"], w.get("ops"),
                                          s["ops"]))
        rw = sh.resolve(w, syms, TOP, s.pop("_slabmap"))
        s.update({"per_op": rw["per_op"], "bound": rw["bound"],
                  "lines": rw["lines"], "shared_lines": rw["shared_lines"],
                  "incomplete": rw["incomplete"],
                  "top": [{"name": t["name"], "pa": t["pa"],
                           "per_op": sh.per_op(rw, t), "loads": t["loads"],
                           "stores": t["stores"], "writers": t["writers"],
                           "readers": t["readers"]} for t in rw["top"]]})
        if s.pop("resizer"):
            # The readers run on CPUs 0..cpus-1, the resizer on CPU cpus
            # (docs/SHARING.md, the resize goal).
            r = s["cpus"]
            bv = w.get("bound_vcpu", [])
            ls = w.get("lines_stored", [])
            lf = w.get("load_from", [])
            lm = w.get("load_max", [])
            sf = w.get("store_from", [])
            if r < len(bv) and r < len(lf) and r < len(sf):
                forced = sum(lf[c][r] + sf[c][r] for c in range(r))
                s["resize"] = {
                    "readers_per_op": sum(bv[:r]) / s["ops"],
                    # The readers' terms due to the resizer's CPU (loads
                    # after its stores, stores to lines it accesses: the
                    # table's rewrites and its grace periods' cross-calls),
                    # in proportion to its share, and the most its stores
                    # can force on the readers' loads.
                    "forced_per_op": forced / s["ops"],
                    "forced_max_per_op": sum(lm[c][r] for c in range(r))
                    / s["ops"],
                    "rest_per_op": (sum(bv[:r]) - forced) / s["ops"],
                    "rest_top": ["%s %.2g/op" % (t["name"], t["rest"] / s["ops"])
                                 for t in rw.get("top_rest", [])[:3]],
                    "resizer_lines_per_op": ls[r] / s["ops"],
                    "resizer_stores_per_op": w["stores"][r] / s["ops"],
                    "resizer_lines": ls[r], "resizer_stores": w["stores"][r]}
        if rw["incomplete"]:
            raise SystemExit("%s: the plugin ran out of memory" % name)
    return samples


def summarize(samples):
    """Points keyed by (config, bench, update, smp): median, min, max."""
    groups = {}
    for s in samples:
        key = (s["config"], s["bench"], s["update"], s["smp"])
        groups.setdefault(key, []).append(s)
    points = []
    for key in sorted(groups):
        ss = groups[key]
        v = [s["per_op"] for s in ss]
        top = max(ss, key=lambda s: s["per_op"])["top"]
        points.append({"config": key[0], "bench": key[1], "update": key[2],
                       "smp": key[3], "name": ss[0]["name"],
                       "cpus": ss[0]["cpus"], "median": statistics.median(v),
                       "min": min(v), "max": max(v), "samples": v,
                       "ops": [s["ops"] for s in ss], "top": top})
    return points


def fmt(v):
    if v == 0:
        return "0"
    if v < 0.001:
        return "%.1e" % v
    if v < 10:
        return "%.3g" % v
    return "%.0f" % v


def fmt_range(p):
    if len(p["samples"]) == 1:
        return fmt(p["median"])
    return "%s (%s-%s)" % (fmt(p["median"]), fmt(p["min"]), fmt(p["max"]))


CONFIG_TITLES = {"a-rcu": "A-RCU", "podzimek-rcu": "Podzimek",
                 "locked": "locked page hash"}


def generate_md(doc):
    pts = doc["points"]
    smps = sorted({p["smp"] for p in pts})
    L = ["## Sharing: cache-line transfers per operation (issue 30)", ""]
    L.append("Generated by `make bench-sharing` (bench/bench_sharing.py) at %s, git "
             "%s, %s. The count (docs/SHARING.md): for every 64-byte physical "
             "line and CPU c, min(stores by c, accesses by the others) + "
             "min(loads by c, stores by the others), summed and divided by "
             "the operations: an upper bound on coherence transfers that "
             "does not depend on how QEMU interleaved the vCPUs. Release "
             "builds, `-accel tcg,thread=multi`, one `chtbench ID CPUS U -w "
             "-t %d` window per point, every thread wired to its CPU, timer "
             "ticks and all background included. Each cell: median of %d "
             "boots (min-max)."
             % (doc["date_utc"], doc["git_rev"][:7], doc["qemu_version"],
                doc["seconds"], doc["reps"]))
    if doc.get("note"):
        L += ["", doc["note"]]
    L += ["", "| id | benchmark | build | upd %% | %s |" % " | ".join(
        "-smp %d" % s for s in smps), "|---|---|---|---|%s" % (
        "---|" * len(smps))]
    by = {}
    for p in pts:
        by.setdefault((p["bench"], p["config"], p["update"]), {})[p["smp"]] = p
    order = {"a-rcu": 0, "podzimek-rcu": 1, "locked": 2}
    for (b, c, u) in sorted(by, key=lambda k: (k[0], order.get(k[1], 9),
                                               k[2])):
        row = by[(b, c, u)]
        name = next(iter(row.values()))["name"]
        L.append("| %d | %s | %s | %d | %s |" % (
            b, name, CONFIG_TITLES.get(c, c), u, " | ".join(
                fmt_range(row[s]) if s in row else "-" for s in smps)))
    L += ["", "Readers at `cpus` = smp - 1 for the ids with a resizer (it has "
          "its own CPU). The hottest lines at the largest -smp (the boot with "
          "the larger count), named by tools/sharing.py (kernel symbol at "
          "the accessed offsets; heap lines by the slab cache whose "
          "descriptor or slab holds them, from `chtbench -m`, with the "
          "functions that wrote (w) it):", ""]
    big = max(smps)
    for (b, c, u) in sorted(by, key=lambda k: (k[0], order.get(k[1], 9),
                                               k[2])):
        p = by[(b, c, u)].get(big)
        if not p or not p["top"]:
            continue
        lines = "; ".join(
            "%s %s/op%s" % (t["name"], fmt(t["per_op"]),
                            " (w: %s)" % ",".join(t["writers"][:2])
                            if t["name"].startswith("heap") and t["writers"]
                            and "descriptor" not in t["name"]
                            else "")
            for t in p["top"][:3])
        L.append("- %d %s, %s, %d %%: %s" % (b, p["name"],
                                             CONFIG_TITLES.get(c, c), u,
                                             lines))
    rs = [s for s in doc.get("samples", []) if s.get("resize")]
    if rs:
        L += ["", "Lookups during a continuous resize (18: CHT, 20: "
              "reader-writer-lock table; readers on CPUs 0..smp-2, the "
              "resizer wired to the last CPU). The goal: no more transfers "
              "per lookup than the resizer's rewrites force. The plugin "
              "splits each reader's terms by the other CPU they involve "
              "(`load_from`: a load term in proportion to each other CPU's "
              "stores on the line; `store_from`: a store term in proportion "
              "to each other CPU's accesses): *forced* is the readers' part "
              "due to the resizer's CPU (the lines it rewrites, and the "
              "cross-calls and acknowledgements of its grace periods), "
              "*forced max* the most the resizer's stores can force on the "
              "readers' loads (per line, min(reader loads, resizer stores)), "
              "*rest* everything else the readers pay (lines they share "
              "among themselves or with nobody's resize), with its hottest "
              "lines (`top_rest`). Met "
              "when the rest is within the read-path goal (0.001 per lookup "
              "at -smp 2 and 4, 0.005 at 8): the readers then pay only for "
              "the lines the resize rewrites, plus the background every read "
              "path has. For scale: the resizer's distinct lines stored and "
              "its stores x readers, per lookup.", "",
              "| id | build | -smp | boot | lookups | resizes | readers' "
              "transfers/lookup | forced | forced max | rest | rest's hottest "
              "lines | resizer lines/lookup | resizer stores x readers/lookup "
              "| goal |", "|---|---|---|---|---|---|---|---|---|---|---|---|"
              "---|---|"]
        for s in sorted(rs, key=lambda s: (s["bench"], order.get(
                s["config"], 9), s["smp"], s["rep"])):
            z = s["resize"]
            upper = z["resizer_stores_per_op"] * s["cpus"]
            if "rest_per_op" in z:
                goal = READ_GOAL_8 if s["smp"] >= 8 else READ_GOAL
                verdict = "met" if z["rest_per_op"] <= goal else "missed"
                cols = (fmt(z["forced_per_op"]), fmt(z["forced_max_per_op"]),
                        fmt(z["rest_per_op"]), "; ".join(z["rest_top"]))
            else:
                verdict, cols = "not measured", ("-", "-", "-", "-")
            L.append("| %d | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s "
                     "| %s | %s | %s |" % (
                         s["bench"], CONFIG_TITLES.get(s["config"],
                                                       s["config"]),
                         s["smp"], s["rep"], s["ops"],
                         s["resizes"] if s["resizes"] is not None else "-",
                         fmt(z["readers_per_op"]), cols[0], cols[1], cols[2],
                         cols[3], fmt(z["resizer_lines_per_op"]), fmt(upper),
                         verdict))
    L += ["", "![transfers per operation](results/sharing.png)", "",
          "Files: `bench/results/sharing.csv` (one row per boot and point), "
          "`bench/results/sharing.json` (the same with the top lines, the "
          "medians and ranges); the plugin's raw windows are in "
          "`build/bench/sharing/*.jsonl`."]
    return "\n".join(L) + "\n"


def splice(existing, block, begin=SH_BEGIN, end=SH_END):
    """Put ``block`` between ``begin`` and ``end`` in ``existing`` (the
    section is appended when the markers are absent)."""
    return results_md.splice(existing, block, begin, end)


PLOT_SERIES = [
    # (label, config, bench, update)
    ("list read, RCU (3)", "a-rcu", 3, 0),
    ("list read, spinlock (4)", "a-rcu", 4, 0),
    ("ht lookup, spinlock (10)", "a-rcu", 10, 0),
    ("ht lookup, bucket locks (11)", "a-rcu", 11, 0),
    ("CHT lookup, A-RCU (12)", "a-rcu", 12, 0),
    ("CHT lookup, Podzimek (12)", "podzimek-rcu", 12, 0),
    ("CHT update 20 % (15)", "a-rcu", 15, 20),
    ("bucket-locked update 20 % (14)", "a-rcu", 14, 20),
    ("page-hash lookup, CHT (21)", "a-rcu", 21, 0),
    ("page-hash lookup, locked (21)", "locked", 21, 0),
    ("fault + unmap, CHT (22)", "a-rcu", 22, 0),
    ("fault + unmap, locked (22)", "locked", 22, 0),
]


MARKERS = "osv^D<>pP*Xh"


def plot(doc, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("bench_sharing.py: matplotlib is missing; run `make "
                         "bench-deps`")
    floor = 1e-5
    fig, ax = plt.subplots(figsize=(8, 5.5))
    idx = {(p["config"], p["bench"], p["update"], p["smp"]): p
           for p in doc["points"]}
    for i, (label, c, b, u) in enumerate(PLOT_SERIES):
        xs = sorted(s for (cc, bb, uu, s) in idx if (cc, bb, uu) == (c, b, u))
        if not xs:
            continue
        ys = [max(idx[(c, b, u, s)]["median"], floor) for s in xs]
        lo = [y - max(idx[(c, b, u, s)]["min"], floor) for y, s in zip(ys, xs)]
        hi = [max(idx[(c, b, u, s)]["max"], floor) - y for y, s in zip(ys, xs)]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker=MARKERS[i % len(MARKERS)],
                    capsize=3, label=label, color=plt.cm.tab20(i % 20),
                    linestyle="--" if c == "locked" or b in (4, 10, 11, 14)
                    else "-")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("CPUs (-smp)")
    ax.set_ylabel("cache-line transfers per operation (bound; %g = 0)" % floor)
    ax.set_title("Sharing per operation (median, range of %d boots)"
                 % doc["reps"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# The scaling model (a model, not a measurement)
# --------------------------------------------------------------------------

#: Cross-core transfer latency of a modified line, same socket: Intel Memory
#: Latency Checker's L2-to-L2 modified intervention latency on a Xeon
#: E5-2660 v4 (Broadwell-EP), 40.3-42.3 ns, reported by John D. McCalpin in
#: Intel's developer forum thread "Core-to-Core Communication Latency in
#: Skylake/Kaby Lake" (2016-2017).  Nehalem's Performance Analysis Guide
#: gives about 75 cycles (25 ns at 3 GHz) for the same event.
T_X_NS = 40.0
#: Assumed for the local work: instructions per cycle and clock (GHz).
IPC = 1.0
GHZ = 3.0
MODEL_CPUS = [1, 2, 4, 8, 16, 32, 64]


def model_rows(doc, cost):
    """Per plotted design: instructions per op (icount, one CPU), measured
    transfers per op and on the hottest line at each -smp, and the modelled
    throughput bound (Mops/s) at MODEL_CPUS."""
    ipo = {}
    for p in cost.get("points", []):
        if p.get("cpus") == 1 and p.get("instructions_per_op"):
            ipo[(p["config"], p["bench"], p["update"])] = \
                p["instructions_per_op"]
    idx = {(p["config"], p["bench"], p["update"], p["smp"]): p
           for p in doc["points"]}
    rows = []
    for label, c, b, u in PLOT_SERIES:
        smps = sorted(s for (cc, bb, uu, s) in idx if (cc, bb, uu) == (c, b, u))
        if not smps or (c, b, u) not in ipo:
            continue
        instr = ipo[(c, b, u)]
        t0 = instr / (IPC * GHZ)                      # ns of local work
        meas = {s: (idx[(c, b, u, s)]["median"],
                    idx[(c, b, u, s)]["top"][0]["per_op"]
                    if idx[(c, b, u, s)]["top"] else 0.0) for s in smps}

        def at(n):
            if n == 1:
                return 0.0, 0.0
            le = [s for s in smps if s <= n]
            return meas[max(le)] if le else meas[min(smps)]
        bound = {}
        for n in MODEL_CPUS:
            x, h = at(n)
            per_cpu = n / (t0 + x * T_X_NS)           # ops per ns
            line = 1.0 / (h * T_X_NS) if h > 0 else float("inf")
            bound[n] = min(per_cpu, line) * 1e3       # Mops/s
        rows.append({"label": label, "config": c, "bench": b, "update": u,
                     "instructions_per_op": instr, "measured": meas,
                     "mops": bound})
    return rows


def model_md(rows, timed=None, goals_rev=None):
    L = ["", "### Scaling model (a model on paper, not a measurement)", "",
         "Throughput bound X(N) = min(N / (t0 + x(N) t_x), 1 / (h(N) t_x)) "
         "operations per second at N CPUs, where t0 = I / (IPC f) is the "
         "local work of one operation (I: instructions per operation at one "
         "CPU, exact, from `make bench-cost`, bench/results/cost.json; IPC = "
         "%g and f = %g GHz are assumptions), x(N) the measured transfers "
         "per operation above (the bound; for N above the largest measured "
         "-smp the largest -smp's value, for N = 1 zero), h(N) the transfers "
         "per operation on the hottest line (one line moves between cores "
         "one transfer at a time, so it caps the whole machine), and t_x = "
         "%g ns the latency of moving a modified line between two cores of "
         "one socket: Intel Memory Latency Checker's L2-to-L2 modified "
         "intervention latency on a Xeon E5-2660 v4 (Broadwell-EP), "
         "40.3-42.3 ns, as reported by John D. McCalpin in Intel's developer "
         "forum thread \"Core-to-Core Communication Latency in Skylake/Kaby "
         "Lake\" (the Nehalem-era Performance Analysis Guide gives about 75 "
         "cycles). Not modelled: cross-socket latency (2-3x more), queueing "
         "on the hot line beyond serialization, caches and memory "
         "bandwidth, and growth of x(N) past 8 CPUs (a lock's transfers per "
         "operation grow with its waiters, so the locked designs' curves "
         "are optimistic)." % (IPC, GHZ, T_X_NS), "",
         "| design | instr/op | x(2) / x(4) / x(8) | hottest line h(8) | %s "
         "| 1 -> 2 CPUs: model / measured (timed) |"
         % " | ".join("%d CPUs" % n for n in MODEL_CPUS),
         "|---|---|---|---|%s---|" % ("---|" * len(MODEL_CPUS))]
    timed = timed or {}
    for r in rows:
        m = r["measured"]
        big = max(m)
        t = timed.get((r["config"], r["bench"], r["update"]))
        sp = "%.2f / %s" % (r["mops"][2] / r["mops"][1], "%.2f (%.2f-%.2f)" % (
            t["speedup"]["median"], t["speedup"]["min"], t["speedup"]["max"])
            if t else "-")
        L.append("| %s | %.0f | %s | %s | %s | %s |" % (
            r["label"], r["instructions_per_op"],
            " / ".join(fmt(m[s][0]) if s in m else "-" for s in (2, 4, 8)),
            fmt(m[big][1]),
            " | ".join("%.3g" % r["mops"][n] for n in MODEL_CPUS), sp))
    L += ["", "Cells: modelled Mops/s. The last column sets the model's "
          "1 -> 2 CPU speedup X(2) / X(1) beside the one `make bench-goals` "
          "timed (bench/results/goals.json%s: -smp 2 under TCG on this "
          "2-vCPU host, each repetition's 2-CPU point over its 1-CPU point; "
          "median and range of the repetitions): a measurement of this host, "
          "not of the model's hardware. In the figure the hollow markers are "
          "those timed throughputs at 1 and 2 CPUs (TCG runs a few times "
          "slower than the model's 3 GHz core) and the right panel the two "
          "speedups. ![model](results/sharing-model.png)"
          % (", git %s" % goals_rev[:12] if goals_rev else "")]
    return "\n".join(L) + "\n"


#: The designs of the model that `make bench-goals` timed at 1 and 2 CPUs
#: (bench/results/goals.json): model row (config, bench, update).
TIMED_DESIGNS = [("a-rcu", 12, 0), ("a-rcu", 14, 20), ("a-rcu", 15, 20),
                 ("a-rcu", 21, 0), ("a-rcu", 22, 0), ("locked", 22, 0)]


def timed_points(goals):
    """The measured, timed points of ``make bench-goals`` (goals.json, -smp
    2 under TCG on this host) for the model's designs: per (config, bench,
    update), Mops/s at 1 and 2 CPUs (median, min, max of the repetitions)
    and the 1 -> 2 CPU speedup of each repetition (its 2-CPU point over its
    1-CPU point, as goals.md pairs them) with their median and range."""
    pts = {}
    for p in goals.get("points", []):
        key = (p["config"], p["bench"], p["update"])
        if key not in TIMED_DESIGNS or p.get("smp") != 2:
            continue
        pts.setdefault(key, {})[p["cpus"]] = {
            s["rep"]: s["ops_per_s"] / 1e6 for s in p["samples"]}
    out = {}
    for key, by_cpus in pts.items():
        if 1 not in by_cpus or 2 not in by_cpus:
            continue
        reps = sorted(set(by_cpus[1]) & set(by_cpus[2]))
        ratios = [by_cpus[2][r] / by_cpus[1][r] for r in reps]
        mops = {}
        for c in (1, 2):
            v = list(by_cpus[c].values())
            mops[c] = {"median": statistics.median(v), "min": min(v),
                       "max": max(v)}
        out[key] = {"mops": mops, "speedup": {
            "ratios": [round(r, 3) for r in ratios],
            "median": statistics.median(ratios), "min": min(ratios),
            "max": max(ratios)}}
    return out


def plot_model(rows, path, timed=None):
    """The model's bound per design against CPUs; with ``timed`` (see
    timed_points()) a second panel: the model's 1 -> 2 CPU speedup beside
    the speedup ``make bench-goals`` timed on this host, and the timed
    1- and 2-CPU throughputs as hollow markers in the first panel."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    timed = timed or {}
    shown = [r for r in rows if (r["config"], r["bench"], r["update"]) in timed]
    if shown:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 8.5),
                                      gridspec_kw={"width_ratios": [3, 2]})
    else:
        fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, r in enumerate(rows):
        color = plt.cm.tab20(i % 20)
        ax.plot(MODEL_CPUS, [r["mops"][n] for n in MODEL_CPUS],
                marker=MARKERS[i % len(MARKERS)], label="model: " + r["label"],
                color=color,
                linestyle="--" if r["config"] == "locked" or
                r["bench"] in (4, 10, 11, 14) else "-")
        t = timed.get((r["config"], r["bench"], r["update"]))
        if t:
            ys = [t["mops"][c]["median"] for c in (1, 2)]
            ax.errorbar([1, 2], ys, yerr=[
                [y - t["mops"][c]["min"] for y, c in zip(ys, (1, 2))],
                [t["mops"][c]["max"] - y for y, c in zip(ys, (1, 2))]],
                marker=MARKERS[i % len(MARKERS)], markerfacecolor="none",
                markersize=9, color=color, linestyle=":", capsize=3,
                label="measured (timed, TCG, this host): " + r["label"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("CPUs")
    ax.set_ylabel("throughput (Mops/s): model bound; hollow = measured")
    ax.set_title("MODEL: throughput bound from instructions and transfers "
                 "per op (t_x = %g ns)" % T_X_NS, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if shown:
        ax.legend(fontsize=7, loc="upper center", ncol=2,
                  bbox_to_anchor=(0.5, -0.1))
        import numpy as np
        x = np.arange(len(shown))
        model_s = [r["mops"][2] / r["mops"][1] for r in shown]
        meas = [timed[(r["config"], r["bench"], r["update"])]["speedup"]
                for r in shown]
        ax2.bar(x - 0.2, model_s, 0.4, label="model X(2) / X(1)",
                color="0.75", edgecolor="k")
        ax2.bar(x + 0.2, [m["median"] for m in meas], 0.4,
                yerr=[[m["median"] - m["min"] for m in meas],
                      [m["max"] - m["median"] for m in meas]],
                capsize=3, color="tab:blue", edgecolor="k",
                label="measured (timed, make bench-goals, -smp 2 TCG on "
                      "this host): median, range")
        ax2.axhline(1.0, color="k", linewidth=0.8)
        ax2.axhline(2.0, color="k", linewidth=0.8, linestyle=":")
        ax2.set_xticks(x)
        ax2.set_xticklabels([r["label"] for r in shown], rotation=35,
                            ha="right", fontsize=7)
        ax2.set_ylabel("speedup 1 -> 2 CPUs")
        ax2.set_title("1 -> 2 CPUs: model vs measured (timed)", fontsize=9)
        ax2.legend(fontsize=7, loc="upper right")
        ax2.set_ylim(0, max(2.2, max(model_s) * 1.1,
                            max(m["max"] for m in meas) * 1.1))
    else:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_samples(out_dir, doc, header, row, lineterminator="\n"):
    """``out_dir``/sharing.json (``doc``) and sharing.csv: ``header``, then
    ``row(sample)`` for each of doc["samples"] (here and in
    bench/userspace/run_sharing.py)."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "sharing.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out_dir, "sharing.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator=lineterminator)
        w.writerow(header)
        for s in doc["samples"]:
            w.writerow(row(s))


def write_outputs(doc):
    write_samples(RESULTS_DIR, doc, [
        "config", "smp", "rep", "bench", "name", "cpus", "update", "ops",
        "transfers_per_op", "shared_lines", "top_line"], lambda s: [
        s["config"], s["smp"], s["rep"], s["bench"], s["name"], s["cpus"],
        s["update"], s["ops"], "%.6g" % s["per_op"], s["shared_lines"],
        s["top"][0]["name"].replace(",", ";") if s["top"] else ""])


MODEL_HEAD = "### Scaling model (a model on paper, not a measurement)"


def model(doc):
    """The scaling model from ``doc`` (sharing.json), cost.json and, when
    present, goals.json's timed points: writes sharing-model.{json,png}
    and returns its part of the section ("" without cost.json)."""
    cost_path = os.path.join(RESULTS_DIR, "cost.json")
    if not os.path.exists(cost_path):
        return ""
    with open(cost_path) as f:
        rows = model_rows(doc, json.load(f))
    if not rows:
        return ""
    goals_path = os.path.join(RESULTS_DIR, "goals.json")
    timed, goals_rev = {}, None
    if os.path.exists(goals_path):
        with open(goals_path) as f:
            goals = json.load(f)
        timed = timed_points(goals)
        goals_rev = goals.get("host", {}).get("git_rev")
    plot_model(rows, os.path.join(RESULTS_DIR, "sharing-model.png"), timed)
    with open(os.path.join(RESULTS_DIR, "sharing-model.json"), "w") as f:
        json.dump({"t_x_ns": T_X_NS, "ipc": IPC, "ghz": GHZ,
                   "cpus": MODEL_CPUS, "rows": rows,
                   "timed_goals_git_rev": goals_rev,
                   "timed": [dict(zip(("config", "bench", "update"), k), **v)
                             for k, v in sorted(timed.items())]},
                  f, indent=1)
    return model_md(rows, timed, goals_rev)


def splice_model(existing, block):
    """Replace only the model's part of the sharing section (from its
    heading to the section's end marker), keeping the rest as it is."""
    if MODEL_HEAD not in existing or SH_END not in existing:
        raise SystemExit("bench_sharing.py: no model part in the sharing "
                         "section of bench/RESULTS.md; run --report-only")
    a = existing.index(MODEL_HEAD)
    b = existing.index(SH_END, a)
    return existing[:a] + block.lstrip("\n") + existing[b:]


def write_md(text, path=RESULTS_MD):
    """Replace ``path`` by ``text`` at once (a temporary file renamed)."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def report(doc):
    plot(doc, os.path.join(RESULTS_DIR, "sharing.png"))
    block = generate_md(doc) + model(doc)
    existing = open(RESULTS_MD).read() if os.path.exists(RESULTS_MD) else None
    write_md(splice(existing, block))
    log("wrote bench/results/sharing.{csv,json,png} and the sharing section "
        "of bench/RESULTS.md")


def report_model(doc):
    """Only the model: sharing-model.{json,png} and the model's part of the
    section, from the recorded sharing.json, cost.json and goals.json."""
    block = model(doc)
    if not block:
        raise SystemExit("bench_sharing.py: no model (bench/results/cost.json "
                         "missing?)")
    write_md(splice_model(open(RESULTS_MD).read(), block))
    log("wrote bench/results/sharing-model.{json,png} and the model's part "
        "of the sharing section of bench/RESULTS.md")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smp", default=",".join(map(str, SMPS)))
    ap.add_argument("--reps", type=int, default=REPS)
    ap.add_argument("--seconds", type=int, default=SECONDS)
    ap.add_argument("--configs", default="a-rcu,podzimek-rcu,locked")
    ap.add_argument("--ids", default="", help="only these ids (comma list)")
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--model-only", action="store_true",
                    help="only the model (figure, JSON, its part of the "
                    "section) from the recorded JSON files")
    ap.add_argument("--note", default="", help="a sentence for the section")
    a = ap.parse_args(argv)
    if a.report_only or a.model_only:
        with open(os.path.join(RESULTS_DIR, "sharing.json")) as f:
            (report_model if a.model_only else report)(json.load(f))
        return 0
    smps = [int(x) for x in a.smp.split(",")]
    configs = a.configs.split(",")
    ids = {int(x) for x in a.ids.split(",") if x}
    if not a.no_build:
        cb.build(configs, 2)
        r = subprocess.run(["make", "--no-print-directory", "-C", REPO,
                            "plugin"])
        if r.returncode:
            raise SystemExit("bench_sharing.py: make plugin failed")
    host = cb.host_info()
    samples = []
    for rep in range(1, a.reps + 1):
        for smp in smps:
            for config in configs:
                log("boot %s -smp %d rep %d" % (config, smp, rep))
                ss = run_boot(config, smp, rep, a.seconds, ids, a.mem)
                for s in ss:
                    log("  %-36s %s/op  top: %s" % (
                        s["command"], fmt(s["per_op"]),
                        s["top"][0]["name"] if s["top"] else "-"))
                samples += ss
    doc = {"generated_by": "bench/bench_sharing.py", "date_utc": host["date_utc"],
           "git_rev": host["git_rev"], "qemu_version": host["qemu_version"],
           "host": host, "smps": smps, "reps": a.reps, "seconds": a.seconds,
           "configs": configs, "note": a.note,
           "wall_s": round(time.monotonic() - T0),
           "points": summarize(samples), "samples": samples}
    write_outputs(doc)
    report(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
