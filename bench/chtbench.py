"""Host-side driver of the in-kernel ``chtbench`` command.

Builds the release kernels a suite needs, boots QEMU (TCG) with the wanted
``-smp``, runs whole sweeps of ``chtbench`` commands inside one boot, repeats
every point, and writes ``bench/results/<suite>.csv`` and ``.json`` (mean,
standard deviation, every sample, configuration, host).  ``bench/plot.py``
turns those into figures and ``bench/RESULTS.md``.

Suites (see docs/CHTBENCH.md and the seed wiki's Benchmarks
section):

``seed``
    the seed's list and hash table benchmarks: list read scalability (ideal,
    A-RCU, Podzimek RCU, spinlock, rwlock vs CPUs), list update overhead vs
    update %, hash table lookup scalability (ht/spinlock, ht/bktlock, cht) and
    hash table update overhead.  In the full mode it also runs every command
    line of the seed wiki exactly as written (default 10 s each) once.
``resize``
    the relativistic paper's experiment: CHT lookups at fixed 2^13 and 2^14
    buckets and during continuous 2^13 <-> 2^14 resizes; the same on a
    reader-writer-lock table.
``page_ht``
    the global page hash table: lookups and the fault path, CHT build vs the
    global-lock build.
``all``
    the three above.
``goals``
    only the points of the CHT's timed goals (lookup, update and page-hash
    scaling 1 -> 2 CPUs, faults CHT / locked, continuous resize / fixed
    2^13) at -smp 2, 5 repetitions: writes ``goals.md`` (per-repetition
    ratios, median, range) and ``goals-ratios.json`` besides goals.csv and goals.json
    (about 6 minutes; ``make bench-goals``).  Not part of ``all``.
``cost``
    instructions per operation, exactly: every benchmark that runs on one CPU
    (updates at 0, 20 and 100 % where the benchmark takes them) on a release
    kernel booted with ``-accel tcg -icount shift=0,sleep=off -smp 1``.  In
    that mode the guest clock advances one nanosecond per guest instruction,
    so instructions per operation = 1e9 / (ops/s of the ``result:`` line), and
    two boots agree to about 6 digits (a second boot repeats a few points to
    check it).  Writes ``cost.csv`` and ``cost.json``; not part of ``all``.
    With ``--arch arm64`` (``make bench-cost ARCH=arm64``) the same on the
    arm64 release kernels (build/bench-arm64-*) booted on
    ``qemu-system-aarch64 -M virt -cpu cortex-a72``: ``cost-arm64.csv`` and
    ``cost-arm64.json`` (the only suite on arm64).

Method: one QEMU boot per (kernel configuration, -smp, repetition) runs the
whole sweep of that configuration; inside a boot the variants alternate
(A B C A B C ..., rotated every repetition) and the boots of a repetition
alternate between configurations (reversed every other repetition), so slow
drift of the host affects every variant alike.  Any ``missed`` line, panic,
missing or mismatching ``result:`` line stops the run with an error.

Usage::

    python3 -m bench.chtbench --suite all            # full (about 40 min)
    python3 -m bench.chtbench --suite all --quick    # -t 1, 2 reps (< 10 min)
    python3 -m bench.chtbench --suite seed --reps 5 --seconds 10 --smp 4
    python3 -m bench.chtbench --suite cost           # icount (about 10 min)
    python3 -m bench.chtbench --suite cost --arch arm64
    python3 -m bench.chtbench --suite goals          # the CHT's timed goals
"""

import argparse
import contextlib
import datetime
import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

from tools import kconsole

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)

RESULTS_DIR = os.path.join(BENCH_DIR, "results")
LOG_DIR = os.path.join(REPO, "build", "bench", "logs")

#: Kernel configurations: make variables and the build directory.
CONFIGS = {
    "a-rcu": {
        "build": "build/bench-arcu",
        "make": ["DEBUG=0", "RCU=a-rcu", "PAGE_HT=cht", "RCU_BROKEN=0"],
        "rcu": "a-rcu", "page_ht": "cht",
    },
    "podzimek-rcu": {
        "build": "build/bench-podzimek",
        "make": ["DEBUG=0", "RCU=podzimek-rcu", "PAGE_HT=cht", "RCU_BROKEN=0"],
        "rcu": "podzimek-rcu", "page_ht": "cht",
    },
    "locked": {
        "build": "build/bench-locked",
        "make": ["DEBUG=0", "RCU=a-rcu", "PAGE_HT=locked", "RCU_BROKEN=0"],
        "rcu": "a-rcu", "page_ht": "locked",
    },
}
#: The architecture of CONFIGS (select_arch()): "amd64" or "arm64".
ARCH = "amd64"
#: The same configurations on arm64 (only the cost suite runs there): the
#: same make variables with ARCH=arm64, in build/bench-arm64-*.
ARCH_CONFIGS = {
    "amd64": CONFIGS,
    "arm64": {name: dict(c, build=c["build"].replace("bench-",
                                                      "bench-arm64-"),
                         make=["ARCH=arm64"] + c["make"])
              for name, c in CONFIGS.items()},
}


def select_arch(arch):
    """Make ``arch``'s kernels the ones CONFIGS names (and boots)."""
    global ARCH, CONFIGS
    ARCH, CONFIGS = arch, ARCH_CONFIGS[arch]


def cost_basename(arch=None):
    """cost (amd64) or cost-arm64: the cost suite's file names."""
    arch = arch or ARCH
    return "cost" if arch == "amd64" else "cost-" + arch

#: The ids of the experiments the plans below run.  The table of benchmarks
#: itself (every id, its name, whether it takes updates or runs a resizer) is
#: the kernel's: ``chtbench 0 0 0`` prints it (see
#: kernel/test/bench/chtbench/runner.c); the driver reads it from every boot
#: (kconsole.Kernel.chtbench_table()) and checks the plans against it.
B_LIST_IDEAL, B_LIST_RCU, B_LIST_SPIN, B_LIST_RW = 2, 3, 4, 5
B_UPD_IDEAL, B_UPD_RCU, B_UPD_SPIN = 6, 7, 8
B_HT_SPIN, B_HT_BKT, B_HT_CHT = 10, 11, 12
B_HTU_SPIN, B_HTU_BKT, B_HTU_CHT = 13, 14, 15
B_RS_CHT13, B_RS_CHT14, B_RS_CHT_CONT, B_RS_RW13, B_RS_RW_CONT = \
    16, 17, 18, 19, 20
B_PH_LOOKUP, B_PH_FAULT = 21, 22

#: The seed's update percentages (list: up to 100 %, hash table: up to 40 %).
LIST_UPD_PCTS = [0, 5, 10, 20, 30, 40, 60, 100]
HT_UPD_PCTS = [0, 5, 10, 20, 30, 40]
#: Update percentage of the ht-upd scaling points (the CHT's timed goal).
HT_UPD_SCALING_PCT = 20

#: The seed's -smp (the wiki boots "with eg 4 CPUs").
SEED_SMP = 4


def seed_command_lines():
    """Every command line of the seed wiki's Benchmarks section, in order.

    Returns ``[(config, command), ...]``: the wiki runs the first group on the
    A-RCU build, then says "build with Podzimek-RCU and rerun" the second.
    """
    a, p = [], []
    for b in (2, 3, 4):
        for n in range(1, 5):
            a.append("chtbench %d %d 0 -w" % (b, n))
    for n in range(1, 5):
        p.append("chtbench 3 %d 0 -w" % n)
    a.append("chtbench 6 1 0 -w")
    for b in (7, 8):
        for pct in LIST_UPD_PCTS:
            a.append("chtbench %d 4 %d -w" % (b, pct))
    for pct in LIST_UPD_PCTS:
        p.append("chtbench 7 4 %d -w" % pct)
    for b in (10, 11, 12):
        for n in range(1, 5):
            a.append("chtbench %d %d 0 -w" % (b, n))
    for b in (13, 14, 15):
        for pct in HT_UPD_PCTS:
            a.append("chtbench %d 4 %d -w" % (b, pct))
    return [("a-rcu", c) for c in a] + [("podzimek-rcu", c) for c in p]


# --------------------------------------------------------------------------
# Plans: which boots run which points
# --------------------------------------------------------------------------

class BootPlan:
    """One boot's work: a kernel configuration, -smp, and a list of groups.

    A group is a list of "rows"; each row is a list of points (bench, cpus,
    update) that are alternated (one row = one x value, its variants).
    """

    def __init__(self, suite, config, smp, groups, accel="tcg,thread=multi",
                 qemu_args=()):
        self.suite = suite
        self.config = config
        self.smp = smp
        self.groups = groups
        self.accel = accel
        self.qemu_args = list(qemu_args)

    @property
    def key(self):
        return "%s/%s/smp%d" % (self.suite, self.config, self.smp)

    def points(self, rep):
        """The points of this boot in run order for repetition ``rep``."""
        out = []
        for group in self.groups:
            for row in group:
                k = rep % len(row) if row else 0
                out.extend(row[k:] + row[:k])      # rotate the variants
        return out

    def count(self):
        return sum(len(row) for group in self.groups for row in group)


def rows_cpus(benches, cpus_list, update=0):
    return [[(b, n, update) for b in benches] for n in cpus_list]


def rows_update(benches, cpus, pcts, ideal=None):
    rows = []
    for pct in pcts:
        row = [(b, cpus, pct) for b in benches]
        if ideal is not None:
            row.insert(0, (ideal, 1, pct))
        rows.append(row)
    return rows


def plan_seed(smps):
    boots = []
    upd_smp = max(smps)
    for smp in smps:
        cpus = list(range(1, smp + 1))
        a_groups = [
            rows_cpus([B_LIST_IDEAL, B_LIST_RCU, B_LIST_SPIN, B_LIST_RW], cpus),
            rows_cpus([B_HT_SPIN, B_HT_BKT, B_HT_CHT], cpus),
        ]
        p_groups = [rows_cpus([B_LIST_IDEAL, B_LIST_RCU, B_LIST_SPIN], cpus)]
        if smp == upd_smp:
            a_groups.append(rows_update([B_UPD_RCU, B_UPD_SPIN], smp,
                                        LIST_UPD_PCTS, ideal=B_UPD_IDEAL))
            a_groups.append(rows_update([B_HTU_SPIN, B_HTU_BKT, B_HTU_CHT],
                                        smp, HT_UPD_PCTS))
            p_rows = rows_update([B_UPD_RCU, B_UPD_SPIN], smp, LIST_UPD_PCTS)
            p_rows[0].insert(0, (B_UPD_IDEAL, 1, 0))
            p_groups.append(p_rows)
        # ht-upd scaling 1 -> 2 CPUs at 20 % updates (a timed goal); the point
        # at cpus == smp of the update sweep is not measured twice.
        sc = [c for c in (1, 2) if c <= smp and
              not (smp == upd_smp and c == smp)]
        if smp >= 2 and sc:
            a_groups.append(rows_cpus([B_HTU_CHT, B_HTU_BKT], sc,
                                      update=HT_UPD_SCALING_PCT))
        boots.append(BootPlan("seed", "a-rcu", smp, a_groups))
        boots.append(BootPlan("seed", "podzimek-rcu", smp, p_groups))
    return boots


def plan_resize(smps):
    boots = []
    for smp in smps:
        # One CPU is left to the resizer and the work queue when there is one
        # to spare (the paper ran fewer readers than CPUs).
        cpus = list(range(1, max(1, smp - 1) + 1))
        groups = [rows_cpus([B_RS_CHT13, B_RS_CHT14, B_RS_CHT_CONT, B_RS_RW13,
                             B_RS_RW_CONT], cpus)]
        boots.append(BootPlan("resize", "a-rcu", smp, groups))
    return boots


def plan_page_ht(smps):
    boots = []
    for smp in smps:
        groups = [
            rows_cpus([B_PH_LOOKUP], range(1, smp + 1)),
            # The fault path unmaps with a TLB shootdown per page; beyond the
            # two host cores a shootdown waits for descheduled vCPUs and the
            # run measures QEMU's scheduling, so it stops at 2 CPUs.
            rows_cpus([B_PH_FAULT], range(1, min(2, smp) + 1)),
        ]
        for config in ("a-rcu", "locked"):
            boots.append(BootPlan("page_ht", config, smp, groups))
    return boots


#: The cost suite: single-threaded TCG with icount, one CPU (icount needs
#: single-threaded TCG, so no thread=multi).  shift=0: one guest nanosecond per
#: guest instruction; sleep=off: an idle guest's clock jumps ahead instead of
#: waiting for the host.
COST_ACCEL = "tcg"
COST_QEMU_ARGS = ["-icount", "shift=0,sleep=off"]
COST_SMP = 1
COST_SECONDS = 2
#: Update percentages of the ids that take updates (flag u of the kernel's
#: table); the others run at 0.  Ids with a resizer thread (flag r): at -smp 1
#: it shares the reader's CPU, so their cost includes the resizer's
#: instructions.
COST_UPD_PCTS = [0, 20, 100]
#: Ids run per build.  A-RCU runs every id of the kernel's table (None); the
#: Podzimek build the ids whose operation enters an RCU reader section or
#: updates under RCU (the others run the same code as on A-RCU); the locked
#: build the page hash table ids (its only difference).
COST_IDS = {
    "a-rcu": None,
    "podzimek-rcu": [1, B_LIST_RCU, B_UPD_RCU, B_HT_CHT, B_HTU_CHT,
                     B_RS_CHT13, B_RS_CHT14, B_RS_CHT_CONT, B_PH_LOOKUP,
                     B_PH_FAULT],
    "locked": [B_PH_LOOKUP, B_PH_FAULT],
}
#: Points a second A-RCU boot repeats to check that two boots agree.
COST_CHECK_POINTS = [(B_LIST_IDEAL, 1, 0), (B_HT_CHT, 1, 0),
                     (B_HTU_CHT, 1, 20), (B_PH_FAULT, 1, 0)]


def cost_points_of(config, table):
    """The (bench, cpus, update) points the cost suite runs on ``config``,
    given the kernel's benchmark ``table`` (kconsole.parse_chtbench_table)."""
    ids = COST_IDS[config]
    out = []
    for b in (sorted(table) if ids is None else ids):
        if b not in table:
            raise BenchError("the cost plan names id %d, which the kernel's "
                             "table does not have" % b)
        for pct in (COST_UPD_PCTS if table[b]["updates"] else [0]):
            out.append((b, 1, pct))
    return out


def plan_cost(smps=None, table=None):
    """One icount boot per build, then the determinism check boot.  Needs
    the kernel's benchmark ``table`` (see read_table())."""
    if table is None:
        raise BenchError("plan_cost needs the kernel's benchmark table")
    boots = []
    for config in ("a-rcu", "podzimek-rcu", "locked"):
        rows = [[pt] for pt in cost_points_of(config, table)]
        boots.append(BootPlan("cost", config, COST_SMP, [rows], COST_ACCEL,
                              COST_QEMU_ARGS))
    boots.append(BootPlan("cost-check", "a-rcu", COST_SMP,
                          [[[pt] for pt in COST_CHECK_POINTS]], COST_ACCEL,
                          COST_QEMU_ARGS))
    return boots


#: The CHT's timed goals (against the tables it replaces), each a ratio of two points
#: measured side by side: ``num`` / ``den``, each (config, bench, cpus,
#: update).  Points of one configuration run in one boot, alternated (the two
#: sides of a scaling ratio rotate every repetition); the CHT / locked fault
#: ratio pairs the a-rcu and locked boots of the same repetition, which run
#: back to back.  ``before`` is the baseline, measured before the CHT's
#: optimisation work.
GOALS_SMP = 2
TIMED_GOALS = [
    {"what": "ht-lookup/cht scaling 1 -> 2 CPUs",
     "num": ("a-rcu", B_HT_CHT, 2, 0), "den": ("a-rcu", B_HT_CHT, 1, 0),
     "min_ratio": 1.8, "before": "1.50-1.53"},
    {"what": "page_ht-lookup scaling 1 -> 2 CPUs (CHT build)",
     "num": ("a-rcu", B_PH_LOOKUP, 2, 0), "den": ("a-rcu", B_PH_LOOKUP, 1, 0),
     "min_ratio": 1.8, "before": "1.00-1.10"},
    {"what": "ht-upd/cht at 20 % scaling 1 -> 2 CPUs",
     "num": ("a-rcu", B_HTU_CHT, 2, HT_UPD_SCALING_PCT),
     "den": ("a-rcu", B_HTU_CHT, 1, HT_UPD_SCALING_PCT),
     "min_ratio": 1.5, "before": "not reported"},
    {"what": "page_ht-fault, CHT / locked, 2 CPUs",
     "num": ("a-rcu", B_PH_FAULT, 2, 0), "den": ("locked", B_PH_FAULT, 2, 0),
     "min_ratio": 1.5, "before": "0.68"},
    {"what": "continuous resize / fixed 2^13, 1 reader (18 vs 16)",
     "num": ("a-rcu", B_RS_CHT_CONT, 1, 0), "den": ("a-rcu", B_RS_CHT13, 1, 0),
     "min_ratio": 1.0, "before": "0.75-0.95"},
]
#: References printed beside the goals (not goals): bucket locks' ht-upd
#: scaling, the locked build's fault scaling and the fixed 2^14 table.
TIMED_REFS = [
    {"what": "ht-upd/bktlock at 20 % scaling 1 -> 2 CPUs (reference)",
     "num": ("a-rcu", B_HTU_BKT, 2, HT_UPD_SCALING_PCT),
     "den": ("a-rcu", B_HTU_BKT, 1, HT_UPD_SCALING_PCT)},
    {"what": "page_ht-fault scaling 1 -> 2 CPUs, CHT build (reference)",
     "num": ("a-rcu", B_PH_FAULT, 2, 0), "den": ("a-rcu", B_PH_FAULT, 1, 0)},
    {"what": "page_ht-fault scaling 1 -> 2 CPUs, locked build (reference)",
     "num": ("locked", B_PH_FAULT, 2, 0), "den": ("locked", B_PH_FAULT, 1, 0)},
    {"what": "fixed 2^14 / fixed 2^13, 1 reader (reference: 18's ceiling)",
     "num": ("a-rcu", B_RS_CHT14, 1, 0), "den": ("a-rcu", B_RS_CHT13, 1, 0)},
]


def plan_goals(smps=None):
    """Only the points of the CHT's timed goals, at -smp 2 (``smps`` is
    ignored: the goals are stated for 2 CPUs)."""
    del smps
    pts = {}
    for g in TIMED_GOALS + TIMED_REFS:
        for side in ("num", "den"):
            config, bench, cpus, update = g[side]
            pts.setdefault(config, [])
            if (bench, cpus, update) not in pts[config]:
                pts[config].append((bench, cpus, update))
    boots = []
    for config in ("a-rcu", "locked"):
        # One row per benchmark (and update %): its CPU counts alternate.
        rows = {}
        for bench, cpus, update in pts[config]:
            rows.setdefault((bench, update), []).append((bench, cpus, update))
        # The resize ids alternate with each other (16, 17, 18 at 1 CPU).
        rs = [r for k, r in rows.items() if k[0] in (B_RS_CHT13, B_RS_CHT14,
                                                       B_RS_CHT_CONT)]
        other = [r for k, r in rows.items() if k[0] not in (
            B_RS_CHT13, B_RS_CHT14, B_RS_CHT_CONT)]
        groups = [other]
        if rs:
            groups.append([[pt for r in rs for pt in r]])
        boots.append(BootPlan("goals", config, GOALS_SMP, groups))
    return boots


def goal_ratios(results, goal):
    """Per-repetition ratios num/den of one goal from ``results`` (key
    (suite, config, smp, bench, cpus, update) -> samples with "rep")."""
    def by_rep(pt):
        config, bench, cpus, update = pt
        e = results.get(("goals", config, GOALS_SMP, bench, cpus, update))
        return {s["rep"]: s["ops_per_s"] for s in e["samples"]} if e else {}
    n, d = by_rep(goal["num"]), by_rep(goal["den"])
    return [n[r] / d[r] for r in sorted(n) if r in d and d[r] > 0]


def goal_rows(results):
    rows = []
    for g in TIMED_GOALS + TIMED_REFS:
        rs = goal_ratios(results, g)
        row = {"what": g["what"], "ratios": [round(x, 3) for x in rs],
               "median": round(statistics.median(rs), 3) if rs else None,
               "min": round(min(rs), 3) if rs else None,
               "max": round(max(rs), 3) if rs else None}
        if "min_ratio" in g:
            row["goal"] = ">= %g" % g["min_ratio"]
            row["before"] = g["before"]
            row["met"] = bool(rs) and statistics.median(rs) >= g["min_ratio"]
        rows.append(row)
    return rows


def format_goals(rows, meta):
    out = ["Issue 16's timed goals, -smp %d, `thread=multi`: per-repetition "
           "ratios (each from two points run side by side: one boot, "
           "alternated; the CHT / locked fault ratio from the two builds' "
           "boots of one repetition, back to back), their median and range. "
           "%d repetitions of -t %d; host load average %s at the end; "
           "git %s." % (GOALS_SMP, meta["reps"], meta["seconds"],
                         " ".join("%.1f" % x for x in meta["loadavg_end"]),
                         meta["host"]["git_rev"][:12]),
           "",
           "| ratio | goal | before (the issue) | median | range | every "
           "repetition | met |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        rng = "%.2f-%.2f" % (r["min"], r["max"]) if r["ratios"] else "-"
        med = "%.2f" % r["median"] if r["median"] is not None else "-"
        out.append("| %s | %s | %s | **%s** | %s | %s | %s |" % (
            r["what"], r.get("goal", "-"), r.get("before", "-"), med, rng,
            " / ".join("%.2f" % x for x in r["ratios"]),
            ("yes" if r["met"] else "**no**") if "met" in r else "-"))
    return "\n".join(out) + "\n"


def write_goals(results, meta, results_dir=None):
    results_dir = results_dir or RESULTS_DIR
    rows = goal_rows(results)
    text = format_goals(rows, meta)
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, "goals.md"), "w") as f:
        f.write(text)
    with open(os.path.join(results_dir, "goals-ratios.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
    print(text)
    log("wrote %s" % os.path.join(results_dir, "goals.md"))


PLANNERS = {"seed": plan_seed, "resize": plan_resize, "page_ht": plan_page_ht,
            "cost": plan_cost, "goals": plan_goals}


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------

THREAD_RE = re.compile(r"^thread (\d+) \(cpu (\d+)\): ops=(\d+)\s*$",
                       re.MULTILINE)
RESIZES_RE = re.compile(r"^resizes=(\d+)\s*$", re.MULTILINE)
MISSED_RE = re.compile(r"^chtbench: (\d+) lookups missed.*$", re.MULTILINE)


class BenchError(Exception):
    """chtbench misbehaved: missed lookups, no or a wrong result line."""


def parse_result(out, command, expect):
    """Parse one chtbench output; check it against ``expect``.

    ``expect`` holds the fields the result line must show (bench, cpus,
    update, seconds, rcu and, for the page hash table benchmarks, page_ht).
    Returns a sample dict.  Raises BenchError.
    """
    m = MISSED_RE.search(out)
    if m:
        raise BenchError("correctness failure in %r: %s" % (command, m.group(0)))
    if "debug build" in out:
        raise BenchError("%r ran on a debug build: %s" % (command, out))
    try:
        found = kconsole.parse_chtbench_results(out)
    except ValueError as e:
        raise BenchError("%r: %s:\n%s" % (command, e, out))
    if len(found) != 1:
        raise BenchError("%r printed %d result: lines (expected exactly 1):\n%s"
                         % (command, len(found), out))
    fields = {k: str(v) for k, v in found[0].items()}
    for key, value in expect.items():
        if fields.get(key) != str(value):
            raise BenchError("%r: result line has %s=%s, expected %s:\n%s"
                             % (command, key, fields.get(key), value, out))
    threads = [{"index": int(i), "cpu": int(c), "ops": int(o)}
               for i, c, o in THREAD_RE.findall(out)]
    if len(threads) != int(expect["cpus"]):
        raise BenchError("%r printed %d thread lines for %s CPUs:\n%s"
                         % (command, len(threads), expect["cpus"], out))
    total = sum(t["ops"] for t in threads)
    if total != int(fields["ops"]):
        raise BenchError("%r: thread ops add up to %d, result says ops=%s"
                         % (command, total, fields["ops"]))
    sample = {
        "ops": int(fields["ops"]),
        "ops_per_s": int(fields["ops_per_s"]),
        "seconds": int(fields["seconds"]),
        "name": fields["name"],
        "threads": threads,
    }
    r = RESIZES_RE.search(out)
    if r:
        sample["resizes"] = int(r.group(1))
    notes = [line for line in out.split("\n")
             if line.startswith("chtbench: note:")]
    if notes:
        sample["notes"] = notes
    return sample


# --------------------------------------------------------------------------
# Host and build
# --------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_s(pid):
    """User + system CPU seconds of process ``pid`` (all its threads)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, ValueError, IndexError):
        return None


def run_text(argv, **kw):
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, check=False,
                              **kw).stdout.strip()
    except OSError as e:
        return "unavailable (%s)" % e


def host_info():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    qemu = shlex.split(os.environ.get("QEMU") or (
        "qemu-system-x86_64" if ARCH == "amd64" else "qemu-system-aarch64"))
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    dirty = run_text(["git", "status", "--porcelain", "--", "kernel",
                      "Makefile", "tools"], cwd=REPO)
    mem_kb = None
    try:
        with open("/proc/meminfo") as f:
            mem_kb = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return {
        "nproc": run_text(["nproc"]),
        "cpu_model": model,
        "mem_gib": round(mem_kb / 1048576, 1) if mem_kb else None,
        "kernel": platform.platform(),
        "qemu_version": run_text([qemu[-1], "--version"]).split("\n")[0],
        "qemu_command": " ".join(qemu),
        "git_rev": run_text(["git", "rev-parse", "HEAD"], cwd=REPO),
        "git_dirty_kernel": bool(dirty),
        "git_dirty_files": dirty.split("\n") if dirty else [],
        "python": sys.version.split()[0],
        "loadavg_start": list(load) if load else None,
        "date_utc": datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M:%S UTC"),
    }


def build(configs, jobs):
    """Build the release kernel of every configuration into its directory."""
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(var, None)      # no inherited jobserver from `make bench`
    make = os.environ.get("MAKE_CMD", "make")
    for name in configs:
        c = CONFIGS[name]
        argv = [make, "--no-print-directory", "-C", REPO, "-j%d" % jobs,
                "BUILD=" + c["build"]] + c["make"] + ["kernel"]
        log(" ".join(argv))
        r = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout)
            raise SystemExit("chtbench.py: building %s failed" % name)


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

T0 = time.monotonic()


def log(msg):
    print("[%6.0fs] %s" % (time.monotonic() - T0, msg), flush=True)


def read_table(config, mem="512M"):
    """The benchmark table of ``config``'s kernel: one -smp 1 boot running
    ``chtbench 0 0 0`` (a few seconds)."""
    path = os.path.join(REPO, CONFIGS[config]["build"], "kernel.elf")
    if not os.path.exists(path):
        raise SystemExit("chtbench.py: %s is not built (run without "
                         "--no-build first)" % path)
    k = kconsole.Kernel(smp=1, mem=mem, kernel=path, name="table-%s%s" % (
                            "" if ARCH == "amd64" else ARCH + "-", config),
                        log_dir=LOG_DIR, arch=ARCH)
    with k:
        k.wait_prompt(180)
        table = k.chtbench_table(60)
        k.halt()
    return table


class Runner:
    def __init__(self, args):
        self.args = args
        self.mem = args.mem
        self.versions = {}      # config -> `version` output
        self.tables = {}        # config -> the kernel's benchmark table
        self.qemu_argv = {}     # (config, smp) -> argv
        self.done = 0
        self.total = 0
        self.cmd_time = 0.0

    @contextlib.contextmanager
    def boot(self, config, smp, name, accel="tcg,thread=multi",
             qemu_args=()):
        """Boot ``config`` with ``-smp smp``; yield the Kernel; kill QEMU."""
        c = CONFIGS[config]
        k = kconsole.Kernel(smp=smp, mem=self.mem,
                            kernel=os.path.join(REPO, c["build"], "kernel.elf"),
                            name=name, log_dir=LOG_DIR, accel=accel,
                            extra_args=qemu_args, arch=ARCH)
        with k:
            k.wait_prompt(180)
            if config not in self.versions:
                self.versions[config] = k.cmd("version", 60)
            table = k.chtbench_table(60)
            if self.tables.setdefault(config, table) != table:
                raise BenchError("%s: the benchmark table changed between "
                                 "boots of %s" % (name, config))
            self.qemu_argv[(config, smp)] = " ".join(
                os.path.relpath(a, REPO) if a.startswith(REPO) else a
                for a in k.argv)
            online = kconsole.parse_cpus_online(k.cmd("cpus", 60))
            if online != smp:
                raise BenchError("%s: %s CPUs online, expected %d (log %s)"
                                 % (name, online, smp, k.log_path))
            yield k

    def run_cmd(self, k, config, command, bench, cpus, update, seconds):
        c = CONFIGS[config]
        expect = {"bench": bench, "cpus": cpus, "update": update,
                  "seconds": seconds, "rcu": c["rcu"]}
        if bench >= B_PH_LOOKUP:
            expect["page_ht"] = c["page_ht"]
        table = self.tables.get(config, {})
        if bench not in table:
            raise BenchError("%r: id %d is not in the kernel's table (%s)"
                             % (command, bench, sorted(table)))
        expect["name"] = table[bench]["name"]
        t = time.monotonic()
        pid = k._child.pid if k._child is not None else None
        cpu0 = process_cpu_s(pid) if pid else None
        try:
            # CHTBENCH_CMD_TIMEOUT (s): a loaded host (icount: the guest's
            # -t is instructions, not host time) needs more than the default.
            out = k.cmd(command, timeout=float(os.environ.get(
                "CHTBENCH_CMD_TIMEOUT", 3 * seconds + 120)))
        except kconsole.KernelError as e:
            raise BenchError("%r on %s failed:\n%s" % (command, config, e))
        try:
            sample = parse_result(out, command, expect)
        except BenchError as e:
            raise BenchError("%s\nlog: %s" % (e, k.log_path))
        sample["wall_s"] = round(time.monotonic() - t, 3)
        cpu1 = process_cpu_s(pid) if pid else None
        if cpu0 is not None and cpu1 is not None and sample["wall_s"] > 0:
            # Host cores QEMU used during the command (all vCPU threads):
            # with N busy vCPUs, N means none of them waited for a host core.
            sample["qemu_host_cores"] = round((cpu1 - cpu0) /
                                              sample["wall_s"], 3)
        self.cmd_time += sample["wall_s"]
        self.done += 1
        return sample

    def eta(self):
        if not self.done:
            return ""
        left = (self.total - self.done) * self.cmd_time / self.done
        return " (%d/%d, about %.0f s left)" % (self.done, self.total, left)

    def run_boots(self, boots, reps, seconds, results):
        """Run ``reps`` repetitions of every boot; fill ``results``."""
        for rep in range(reps):
            order = boots if rep % 2 == 0 else list(reversed(boots))
            for b in order:
                name = "%s%s-%s-smp%d-rep%d" % (
                    "" if ARCH == "amd64" else ARCH + "-", b.suite, b.config,
                    b.smp, rep + 1)
                log("boot %s: %d points%s" % (name, b.count(), self.eta()))
                with self.boot(b.config, b.smp, name, b.accel,
                               b.qemu_args) as k:
                    for bench, cpus, update in b.points(rep):
                        command = "chtbench %d %d %d -w -t %d" % (
                            bench, cpus, update, seconds)
                        s = self.run_cmd(k, b.config, command, bench, cpus,
                                         update, seconds)
                        s["rep"] = rep + 1
                        key = (b.suite, b.config, b.smp, bench, cpus, update)
                        entry = results.setdefault(key, {
                            "name": s["name"], "samples": []})
                        entry["samples"].append(s)
                        if self.args.verbose:
                            log("  %-28s %12d ops/s" % (command, s["ops_per_s"]))
                    k.check_no_panic()
                    k.halt()

    def run_verbatim(self):
        """Run every seed command line exactly as written, once."""
        out = []
        by_config = {}
        for config, command in seed_command_lines():
            by_config.setdefault(config, []).append(command)
        for config, commands in by_config.items():
            name = "seed-verbatim-%s-smp%d" % (config, SEED_SMP)
            log("boot %s: %d seed command lines as written%s"
                % (name, len(commands), self.eta()))
            with self.boot(config, SEED_SMP, name) as k:
                for command in commands:
                    words = command.split()
                    bench, cpus, update = (int(w) for w in words[1:4])
                    s = self.run_cmd(k, config, command, bench, cpus, update,
                                     10)
                    out.append({"config": config, "smp": SEED_SMP,
                                "command": command, "bench": bench,
                                "cpus": cpus, "update": update,
                                "name": s["name"], "ops": s["ops"],
                                "ops_per_s": s["ops_per_s"],
                                "seconds": s["seconds"]})
                    if self.args.verbose:
                        log("  %-28s %12d ops/s" % (command, s["ops_per_s"]))
                k.check_no_panic()
                k.halt()
        return out


def summarize(results):
    points = []
    for key in sorted(results):
        suite, config, smp, bench, cpus, update = key
        entry = results[key]
        rates = [s["ops_per_s"] for s in entry["samples"]]
        mean = statistics.fmean(rates)
        sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
        p = {
            "suite": suite, "config": config, "rcu": CONFIGS[config]["rcu"],
            "page_ht": CONFIGS[config]["page_ht"], "smp": smp, "bench": bench,
            "name": entry["name"], "cpus": cpus, "update": update,
            "n": len(rates), "mean": mean, "stdev": sd,
            "rel_stdev": sd / mean if mean else 0.0,
            "min": min(rates), "max": max(rates),
            "samples": entry["samples"],
        }
        cores = [s["qemu_host_cores"] for s in entry["samples"]
                 if "qemu_host_cores" in s]
        if cores:
            p["mean_qemu_host_cores"] = statistics.fmean(cores)
        resizes = [s["resizes"] for s in entry["samples"] if "resizes" in s]
        if resizes:
            p["mean_resizes"] = statistics.fmean(resizes)
        points.append(p)
    return points


CSV_FIELDS = ["suite", "config", "rcu", "page_ht", "smp", "bench", "name",
              "cpus", "update", "seconds", "n", "mean_ops_per_s",
              "stdev_ops_per_s", "rel_stdev", "min_ops_per_s", "max_ops_per_s",
              "mean_resizes", "mean_qemu_host_cores", "samples_ops_per_s"]


def write_outputs(suite, points, meta, verbatim=None, results_dir=None):
    results_dir = results_dir or RESULTS_DIR
    os.makedirs(results_dir, exist_ok=True)
    doc = dict(meta)
    doc["suite"] = suite
    doc["points"] = points
    if verbatim is not None:
        doc["seed_verbatim"] = verbatim
    jpath = os.path.join(results_dir, suite + ".json")
    with open(jpath + ".tmp", "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(jpath + ".tmp", jpath)
    cpath = os.path.join(results_dir, suite + ".csv")
    with open(cpath + ".tmp", "w") as f:
        f.write(",".join(CSV_FIELDS) + "\n")
        for p in points:
            row = [p["suite"], p["config"], p["rcu"], p["page_ht"], p["smp"],
                   p["bench"], p["name"], p["cpus"], p["update"],
                   meta["seconds"], p["n"], "%.1f" % p["mean"],
                   "%.1f" % p["stdev"], "%.4f" % p["rel_stdev"], p["min"],
                   p["max"], "%.2f" % p["mean_resizes"]
                   if "mean_resizes" in p else "",
                   "%.2f" % p["mean_qemu_host_cores"]
                   if "mean_qemu_host_cores" in p else "",
                   ";".join(str(s["ops_per_s"]) for s in p["samples"])]
            f.write(",".join(str(x) for x in row) + "\n")
    os.replace(cpath + ".tmp", cpath)
    log("wrote %s and %s" % (jpath, cpath))


# --------------------------------------------------------------------------
# The cost suite: instructions per operation under icount
# --------------------------------------------------------------------------

#: The CHT's one-CPU instruction-cost goals.  ``ours`` and ``ref`` are
#: (config, bench, update); the ratio is ref's instructions per operation over
#: ours (higher is better: > 1 means ours costs fewer instructions) and the
#: goal holds when it is at least ``min_ratio``.  ``before`` is the baseline,
#: measured before the CHT's optimisation work.
COST_GOALS = [
    {"what": "ht-lookup: cht (12) vs bktlock (11)",
     "ours": ("a-rcu", B_HT_CHT, 0), "ref": ("a-rcu", B_HT_BKT, 0),
     "min_ratio": 1.3, "goal": "cht <= 0.77 x bktlock (ratio >= 1.3)",
     "before": "126.0 vs 95.3 (0.76)"},
    {"what": "ht-upd at 20 %: cht (15) vs bktlock (14)",
     "ours": ("a-rcu", B_HTU_CHT, 20), "ref": ("a-rcu", B_HTU_BKT, 20),
     "min_ratio": 1.0, "goal": "ratio >= 1.0",
     "before": "318.9 vs 164.6 (0.52)"},
    {"what": "page_ht-lookup (21): CHT vs locked build",
     "ours": ("a-rcu", B_PH_LOOKUP, 0), "ref": ("locked", B_PH_LOOKUP, 0),
     "min_ratio": 1.2, "goal": "CHT ratio >= 1.2",
     "before": "159.3 vs 136.0 (0.85)"},
    {"what": "page_ht-fault (22): CHT vs locked build",
     "ours": ("a-rcu", B_PH_FAULT, 0), "ref": ("locked", B_PH_FAULT, 0),
     "min_ratio": 1.0, "goal": "CHT ratio >= 1.0",
     "before": "4431 vs 4008 (0.90)"},
    {"what": "list-read: A-RCU (3) vs ideal (2)",
     "ours": ("a-rcu", B_LIST_RCU, 0), "ref": ("a-rcu", B_LIST_IDEAL, 0),
     "min_ratio": 0.85,
     "goal": ">= 0.85 (a reader section of <= 5 instructions)",
     "before": "37.0 vs 30.0 (0.81)"},
]


def instructions_per_op(ops_per_s):
    """Instructions per operation from an icount ``ops_per_s`` (shift=0: one
    guest nanosecond per instruction), or None for a zero rate."""
    ops_per_s = int(ops_per_s)
    return 1e9 / ops_per_s if ops_per_s > 0 else None


def cost_points(results, table):
    """Turn run_boots results (one sample per point) into cost points;
    ``table`` is the kernel's benchmark table (resizer flags)."""
    points = []
    for key in sorted(results):
        suite, config, smp, bench, cpus, update = key
        entry = results[key]
        s = entry["samples"][-1]
        points.append({
            "config": config, "rcu": CONFIGS[config]["rcu"],
            "page_ht": CONFIGS[config]["page_ht"], "smp": smp, "bench": bench,
            "name": entry["name"], "cpus": cpus, "update": update,
            "seconds": s["seconds"], "ops": s["ops"],
            "ops_per_s": s["ops_per_s"],
            "instructions_per_op": instructions_per_op(s["ops_per_s"]),
            "resizer_shares_cpu": table[bench]["resizer"],
            "wall_s": s.get("wall_s"),
        })
    return points


def cost_lookup(points, config, bench, update=0):
    """Instructions per operation of one point, or None if it was not run."""
    for p in points:
        if (p["config"], p["bench"], p["update"]) == (config, bench, update):
            return p["instructions_per_op"]
    return None


def cost_goal_rows(points, goals=None):
    """Evaluate ``goals`` (default COST_GOALS) on cost points.

    Returns one dict per goal: its fields plus ``ours_ipo``, ``ref_ipo``
    (instructions per operation, None when not measured), ``ratio`` (ref over
    ours, None when either is missing) and ``met`` (True, False or None).
    """
    rows = []
    for g in goals if goals is not None else COST_GOALS:
        a = cost_lookup(points, *g["ours"])
        b = cost_lookup(points, *g["ref"])
        ratio = b / a if a and b else None
        row = dict(g)
        row.update({"ours_ipo": a, "ref_ipo": b, "ratio": ratio,
                    "met": None if ratio is None
                    else ratio >= g["min_ratio"]})
        rows.append(row)
    return rows


def agreement_digits(a, b):
    """Significant digits two rates agree to: -log10(|a - b| / max(a, b)).

    None when they are equal (every digit agrees) or when a rate is zero.
    """
    a, b = float(a), float(b)
    if a <= 0 or b <= 0 or a == b:
        return None
    return -math.log10(abs(a - b) / max(a, b))


def cost_determinism(points, check_results):
    """Compare the check boot's samples with the main boot's points."""
    out = []
    for key in sorted(check_results):
        _, config, smp, bench, cpus, update = key
        again = check_results[key]["samples"][-1]["ops_per_s"]
        first = None
        for p in points:
            if (p["config"], p["bench"], p["update"]) == (config, bench,
                                                           update):
                first = p["ops_per_s"]
        if first is None:
            continue
        out.append({"config": config, "bench": bench, "update": update,
                    "name": check_results[key]["name"],
                    "ops_per_s": [first, again],
                    "rel_diff": abs(first - again) / max(first, again),
                    "digits": agreement_digits(first, again)})
    return out


def fmt_ipo(v):
    """Instructions per operation as printed in the tables."""
    if v is None:
        return "n/a"
    return "%.0f" % v if v >= 1000 else "%.1f" % v


def fmt_digits(d):
    return "all digits" if d is None else "%.1f digits" % d


def cost_table_rows(points):
    """[(bench, name, update, {config: ipo})] in id and update order."""
    rows = {}
    for p in points:
        k = (p["bench"], p["update"])
        rows.setdefault(k, (p["name"], {}))[1][p["config"]] = \
            p["instructions_per_op"]
    return [(b, rows[(b, u)][0], u, rows[(b, u)][1])
            for b, u in sorted(rows)]


COST_CONFIGS = ["a-rcu", "podzimek-rcu", "locked"]


def format_cost_text(doc):
    """The cost tables of a cost.json document as plain text."""
    L = ["Cost per operation (instructions, icount, -smp 1, -t %d)"
         % doc["seconds"], ""]
    L.append("%-3s %-26s %4s %12s %12s %12s" % (("id", "name", "upd%")
                                                 + tuple(COST_CONFIGS)))
    for b, name, u, by in cost_table_rows(doc["points"]):
        L.append("%-3d %-26s %4d %12s %12s %12s" % (
            b, name, u, *(fmt_ipo(by.get(c)) if c in by else "-"
                          for c in COST_CONFIGS)))
    L.append("")
    L.append("%-42s %-22s %-22s %6s %s" % ("goal (issue 16)", "before",
                                            "now (ours vs ref)", "ratio",
                                            "goal"))
    for r in doc["goals"]:
        L.append("%-42s %-22s %-22s %6s %s" % (
            r["what"], r["before"], "%s vs %s" % (fmt_ipo(r["ours_ipo"]),
                                                  fmt_ipo(r["ref_ipo"])),
            "n/a" if r["ratio"] is None else "%.2f" % r["ratio"],
            "%s: %s" % ({True: "met", False: "MISSED", None: "n/a"}[r["met"]],
                        r["goal"])))
    if doc.get("determinism"):
        L.append("")
        L.append("Two boots (A-RCU): " + "; ".join(
            "id %d upd %d: %d vs %d ops/s (%s)" % (
                d["bench"], d["update"], d["ops_per_s"][0],
                d["ops_per_s"][1], fmt_digits(d["digits"]))
            for d in doc["determinism"]))
    return "\n".join(L) + "\n"


def write_cost_outputs(points, determinism, meta, results_dir=None,
                       arch=None):
    """Write cost.json and cost.csv (cost-arm64.* for ``arch`` arm64,
    default ARCH); return the JSON document."""
    results_dir = results_dir or RESULTS_DIR
    arch = arch or ARCH
    os.makedirs(results_dir, exist_ok=True)
    doc = dict(meta)
    doc["suite"] = "cost"
    doc["arch"] = arch
    doc["points"] = points
    doc["goals"] = cost_goal_rows(points)
    doc["determinism"] = determinism
    jpath = os.path.join(results_dir, cost_basename(arch) + ".json")
    with open(jpath + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(jpath + ".tmp", jpath)
    cpath = os.path.join(results_dir, cost_basename(arch) + ".csv")
    fields = ["config", "rcu", "page_ht", "smp", "bench", "name", "cpus",
              "update", "seconds", "ops", "ops_per_s", "instructions_per_op",
              "resizer_shares_cpu"]
    with open(cpath + ".tmp", "w") as f:
        f.write(",".join(fields) + "\n")
        for p in points:
            row = [p[k] for k in fields]
            row[fields.index("instructions_per_op")] = (
                "%.3f" % p["instructions_per_op"]
                if p["instructions_per_op"] is not None else "")
            f.write(",".join(str(x) for x in row) + "\n")
    os.replace(cpath + ".tmp", cpath)
    log("wrote %s and %s" % (jpath, cpath))
    return doc


def run_cost(runner, boots, seconds, host, args, argv, build_s):
    """Run the cost suite's boots, write cost.{json,csv} (cost-arm64.* on
    arm64), print the table."""
    t0 = time.monotonic()
    main_boots = [b for b in boots if b.suite == "cost"]
    check_boots = [b for b in boots if b.suite == "cost-check"]
    results, check = {}, {}
    try:
        runner.run_boots(main_boots, 1, seconds, results)
        runner.run_boots(check_boots, 1, seconds, check)
    except (BenchError, kconsole.KernelError) as e:
        print("\nchtbench.py: FAILED\n%s" % e, file=sys.stderr)
        return 1
    points = cost_points(results, runner.tables["a-rcu"])
    meta = {
        "generated_by": "bench/chtbench.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "mode": "cost", "reps": 1, "seconds": seconds, "smp_list": [COST_SMP],
        "mem": args.mem, "accel": COST_ACCEL, "qemu_args": COST_QEMU_ARGS,
        "host": host, "loadavg_end": list(os.getloadavg()),
        "kernel_version": {c: runner.versions.get(c)
                           for c in sorted(runner.versions)},
        "qemu_argv": {"%s/smp%d" % k: v
                      for k, v in sorted(runner.qemu_argv.items())},
        "configs": {c: CONFIGS[c] for c in sorted({b.config for b in boots})},
        "build_s": build_s,
        "suite_wall_s": round(time.monotonic() - t0, 1),
    }
    doc = write_cost_outputs(points, cost_determinism(points, check), meta,
                             args.results)
    print()
    sys.stdout.write(format_cost_text(doc))
    log("done in %.0f s (build %.0f s)" % (time.monotonic() - t0 + build_s,
                                           build_s))
    return 0


def parse_smps(text):
    try:
        smps = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("--smp takes e.g. 4 or 4,2")
    if not smps or any(s < 1 or s > 16 for s in smps):
        raise argparse.ArgumentTypeError("--smp values must be 1..16")
    return smps


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run chtbench sweeps in QEMU and write bench/results/.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Usage::")[1] if "Usage::" in __doc__ else None)
    ap.add_argument("--suite", choices=["seed", "resize", "page_ht", "all",
                                        "cost", "goals"],
                    default="all")
    ap.add_argument("--quick", action="store_true",
                    help="-t 1, 2 repetitions, no as-written seed pass")
    ap.add_argument("--reps", type=int, help="repetitions of every point "
                    "(default 3; quick 2; cost: 1, and a second boot repeats "
                    "a few points)")
    ap.add_argument("--seconds", type=int, help="-t of every sweep point "
                    "(default 3; quick 1; cost 2)")
    ap.add_argument("--smp", type=parse_smps, default=[SEED_SMP, 2],
                    help="comma-separated -smp values of the sweeps (default "
                    "4,2: the seed's 4 and one vCPU per host core); the "
                    "update sweeps run at the largest")
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--results", default=RESULTS_DIR,
                    help="output directory (default bench/results; plot.py "
                    "takes the same option)")
    ap.add_argument("--verbatim", dest="verbatim", action="store_true",
                    default=None, help="run the seed's command lines as "
                    "written (10 s each) once; default in the full mode")
    ap.add_argument("--no-verbatim", dest="verbatim", action="store_false")
    ap.add_argument("--no-build", action="store_true",
                    help="use the kernels already in build/bench-*")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--arch", choices=sorted(ARCH_CONFIGS), default="amd64",
                    help="the kernels' architecture (arm64: the cost suite "
                    "only, on qemu-system-aarch64 -M virt -cpu cortex-a72)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the boots and commands, run nothing")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every point's rate")
    args = ap.parse_args(argv)

    if args.arch != "amd64" and args.suite != "cost":
        ap.error("--arch %s runs only --suite cost" % args.arch)
    select_arch(args.arch)
    reps = args.reps or (2 if args.quick else
                         5 if args.suite == "goals" else 3)
    seconds = args.seconds or (1 if args.quick else 3)
    verbatim = args.verbatim if args.verbatim is not None else not args.quick
    if args.suite == "cost":
        if args.reps not in (None, 1):
            ap.error("--suite cost runs every point once (counts are exact)")
        reps, verbatim = 1, False
        seconds = args.seconds or COST_SECONDS
    if reps < 1 or seconds < 1 or seconds > 3600:
        ap.error("--reps must be >= 1 and --seconds 1..3600")
    suites = ["seed", "resize", "page_ht"] if args.suite == "all" \
        else [args.suite]

    plans = {s: PLANNERS[s](args.smp) for s in suites if s != "cost"}
    if "cost" in suites:
        # The cost plan runs every id of the kernel's table: read it first
        # (from the kernel built now, or already built with --no-build or
        # --dry-run).
        if not args.no_build and not args.dry_run:
            build(["a-rcu"], args.jobs)
        plans["cost"] = plan_cost(table=read_table("a-rcu", args.mem))
    configs = sorted({b.config for bs in plans.values() for b in bs} |
                     ({"a-rcu", "podzimek-rcu"} if verbatim and "seed" in suites
                      else set()))

    if args.dry_run:
        n = 0
        for suite in suites:
            for rep in range(reps):
                for b in (plans[suite] if rep % 2 == 0
                          else list(reversed(plans[suite]))):
                    print("boot %s rep %d:" % (b.key, rep + 1))
                    for bench, cpus, update in b.points(rep):
                        print("  chtbench %d %d %d -w -t %d"
                              % (bench, cpus, update, seconds))
                        n += 1
        if verbatim and "seed" in suites:
            for config, command in seed_command_lines():
                print("as written on %s -smp %d: %s"
                      % (config, SEED_SMP, command))
                n += 1
        print("%d commands" % n)
        return 0

    host = host_info()
    log("host: %s CPUs, %s; %s; git %s%s"
        % (host["nproc"], host["cpu_model"], host["qemu_version"],
           host["git_rev"][:12],
           " (kernel sources modified)" if host["git_dirty_kernel"] else ""))
    t_start = time.monotonic()
    if not args.no_build:
        build(configs, args.jobs)
    t_built = time.monotonic()

    runner = Runner(args)
    runner.total = sum(b.count() for bs in plans.values() for b in bs) * reps
    if verbatim and "seed" in suites:
        runner.total += len(seed_command_lines())
    log("%s: %d commands, %d repetitions, -t %d%s"
        % ("+".join(suites), runner.total, reps, seconds,
           ", plus the seed's command lines as written" if verbatim
           and "seed" in suites else ""))
    if args.suite == "cost":
        return run_cost(runner, plans["cost"], seconds, host, args, argv,
                        round(t_built - t_start, 1))
    try:
        for suite in suites:
            t_suite = time.monotonic()
            results = {}
            runner.run_boots(plans[suite], reps, seconds, results)
            vb = None
            if suite == "seed" and verbatim:
                vb = runner.run_verbatim()
            meta = {
                "generated_by": "bench/chtbench.py " + " ".join(
                    sys.argv[1:] if argv is None else argv),
                "mode": "quick" if args.quick else "full",
                "reps": reps, "seconds": seconds, "smp_list": args.smp,
                "seed_smp": SEED_SMP, "mem": args.mem,
                "accel": "tcg,thread=multi",
                "host": host,
                "loadavg_end": list(os.getloadavg()),
                "kernel_version": {c: runner.versions.get(c)
                                   for c in sorted(runner.versions)},
                "qemu_argv": {"%s/smp%d" % k: v
                              for k, v in sorted(runner.qemu_argv.items())},
                "configs": {c: CONFIGS[c] for c in configs},
                "build_s": round(t_built - t_start, 1),
                "suite_wall_s": round(time.monotonic() - t_suite, 1),
            }
            write_outputs(suite, summarize(results), meta, vb, args.results)
            if suite == "goals":
                write_goals(results, meta, args.results)
    except (BenchError, kconsole.KernelError) as e:
        print("\nchtbench.py: FAILED\n%s" % e, file=sys.stderr)
        return 1
    log("done in %.0f s (build %.0f s)" % (time.monotonic() - t_start,
                                           t_built - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
