#!/usr/bin/env python3
"""Host-side driver of the in-kernel ``chtbench`` command.

Builds the release kernels a suite needs, boots QEMU (TCG) with the wanted
``-smp``, runs whole sweeps of ``chtbench`` commands inside one boot, repeats
every point, and writes ``bench/results/<suite>.csv`` and ``.json`` (mean,
standard deviation, every sample, configuration, host).  ``bench/plot.py``
turns those into figures and ``bench/RESULTS.md``.

Suites (see ../shared/design/CHTBENCH.md and the seed wiki's Benchmarks
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
``pageht``
    the global page hash table: lookups and the fault path, CHT build vs the
    global-lock build.
``all``
    the three above.

Method: one QEMU boot per (kernel configuration, -smp, repetition) runs the
whole sweep of that configuration; inside a boot the variants alternate
(A B C A B C ..., rotated every repetition) and the boots of a repetition
alternate between configurations (reversed every other repetition), so slow
drift of the host affects every variant alike.  Any ``missed`` line, panic,
missing or mismatching ``result:`` line stops the run with an error.

Usage::

    python3 bench/chtbench.py --suite all            # full (about 40 min)
    python3 bench/chtbench.py --suite all --quick    # -t 1, 2 reps (< 10 min)
    python3 bench/chtbench.py --suite seed --reps 5 --seconds 10 --smp 4
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
sys.path.insert(0, os.path.join(REPO, "tools"))

import kconsole  # noqa: E402  (tools/kconsole.py)

RESULTS_DIR = os.path.join(BENCH_DIR, "results")
LOG_DIR = os.path.join(REPO, "build", "bench", "logs")

#: Kernel configurations: make variables and the build directory.
CONFIGS = {
    "a-rcu": {
        "build": "build/bench-arcu",
        "make": ["DEBUG=0", "RCU=a-rcu", "PAGE_HT=cht", "RCU_BROKEN=0"],
        "rcu": "a-rcu", "pageht": "cht",
    },
    "podzimek-rcu": {
        "build": "build/bench-podzimek",
        "make": ["DEBUG=0", "RCU=podzimek-rcu", "PAGE_HT=cht", "RCU_BROKEN=0"],
        "rcu": "podzimek-rcu", "pageht": "cht",
    },
    "locked": {
        "build": "build/bench-locked",
        "make": ["DEBUG=0", "RCU=a-rcu", "PAGE_HT=locked", "RCU_BROKEN=0"],
        "rcu": "a-rcu", "pageht": "locked",
    },
}

#: Benchmark ids of chtbench (kernel/generic/src/bench/chtbench.c).
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

class Boot:
    """One boot's work: a kernel configuration, -smp, and a list of groups.

    A group is a list of "rows"; each row is a list of points (bench, cpus,
    update) that are alternated (one row = one x value, its variants).
    """

    def __init__(self, suite, config, smp, groups):
        self.suite = suite
        self.config = config
        self.smp = smp
        self.groups = groups

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
        boots.append(Boot("seed", "a-rcu", smp, a_groups))
        boots.append(Boot("seed", "podzimek-rcu", smp, p_groups))
    return boots


def plan_resize(smps):
    boots = []
    for smp in smps:
        # One CPU is left to the resizer and the work queue when there is one
        # to spare (the paper ran fewer readers than CPUs).
        cpus = list(range(1, max(1, smp - 1) + 1))
        groups = [rows_cpus([B_RS_CHT13, B_RS_CHT14, B_RS_CHT_CONT, B_RS_RW13,
                             B_RS_RW_CONT], cpus)]
        boots.append(Boot("resize", "a-rcu", smp, groups))
    return boots


def plan_pageht(smps):
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
            boots.append(Boot("pageht", config, smp, groups))
    return boots


PLANNERS = {"seed": plan_seed, "resize": plan_resize, "pageht": plan_pageht}


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------

RESULT_RE = re.compile(r"^result: (.*)$", re.MULTILINE)
THREAD_RE = re.compile(r"^thread (\d+) \(cpu (\d+)\): ops=(\d+)\s*$",
                       re.MULTILINE)
RESIZES_RE = re.compile(r"^resizes=(\d+)\s*$", re.MULTILINE)
MISSED_RE = re.compile(r"^chtbench: (\d+) lookups missed.*$", re.MULTILINE)


class BenchError(Exception):
    """chtbench misbehaved: missed lookups, no or a wrong result line."""


def parse_result(out, command, expect):
    """Parse one chtbench output; check it against ``expect``.

    ``expect`` holds the fields the result line must show (bench, cpus,
    update, seconds, rcu and, for the page hash table benchmarks, pageht).
    Returns a sample dict.  Raises BenchError.
    """
    m = MISSED_RE.search(out)
    if m:
        raise BenchError("correctness failure in %r: %s" % (command, m.group(0)))
    if "debug build" in out:
        raise BenchError("%r ran on a debug build: %s" % (command, out))
    found = RESULT_RE.findall(out)
    if len(found) != 1:
        raise BenchError("%r printed %d result: lines (expected exactly 1):\n%s"
                         % (command, len(found), out))
    fields = dict(kv.split("=", 1) for kv in found[0].split())
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
    qemu = shlex.split(os.environ.get("QEMU") or "qemu-system-x86_64")
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


class Runner:
    def __init__(self, args):
        self.args = args
        self.mem = args.mem
        self.versions = {}      # config -> `version` output
        self.qemu_argv = {}     # (config, smp) -> argv
        self.done = 0
        self.total = 0
        self.cmd_time = 0.0

    @contextlib.contextmanager
    def boot(self, config, smp, name):
        """Boot ``config`` with ``-smp smp``; yield the Kernel; kill QEMU."""
        c = CONFIGS[config]
        k = kconsole.Kernel(smp=smp, mem=self.mem,
                            kernel=os.path.join(REPO, c["build"], "kernel.elf"),
                            name=name, log_dir=LOG_DIR)
        with k:
            k.wait_prompt(180)
            if config not in self.versions:
                self.versions[config] = k.cmd("version", 60)
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
            expect["pageht"] = c["pageht"]
        t = time.monotonic()
        pid = k._child.pid if k._child is not None else None
        cpu0 = process_cpu_s(pid) if pid else None
        try:
            out = k.cmd(command, timeout=3 * seconds + 120)
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
                name = "%s-%s-smp%d-rep%d" % (b.suite, b.config, b.smp, rep + 1)
                log("boot %s: %d points%s" % (name, b.count(), self.eta()))
                with self.boot(b.config, b.smp, name) as k:
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
            "pageht": CONFIGS[config]["pageht"], "smp": smp, "bench": bench,
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


CSV_FIELDS = ["suite", "config", "rcu", "pageht", "smp", "bench", "name",
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
            row = [p["suite"], p["config"], p["rcu"], p["pageht"], p["smp"],
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
    ap.add_argument("--suite", choices=["seed", "resize", "pageht", "all"],
                    default="all")
    ap.add_argument("--quick", action="store_true",
                    help="-t 1, 2 repetitions, no as-written seed pass")
    ap.add_argument("--reps", type=int, help="repetitions of every point "
                    "(default 3; quick 2)")
    ap.add_argument("--seconds", type=int, help="-t of every sweep point "
                    "(default 3; quick 1)")
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
    ap.add_argument("--dry-run", action="store_true",
                    help="print the boots and commands, run nothing")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every point's rate")
    args = ap.parse_args(argv)

    reps = args.reps or (2 if args.quick else 3)
    seconds = args.seconds or (1 if args.quick else 3)
    verbatim = args.verbatim if args.verbatim is not None else not args.quick
    if reps < 1 or seconds < 1 or seconds > 3600:
        ap.error("--reps must be >= 1 and --seconds 1..3600")
    suites = ["seed", "resize", "pageht"] if args.suite == "all" \
        else [args.suite]

    plans = {s: PLANNERS[s](args.smp) for s in suites}
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
    except (BenchError, kconsole.KernelError) as e:
        print("\nchtbench.py: FAILED\n%s" % e, file=sys.stderr)
        return 1
    log("done in %.0f s (build %.0f s)" % (time.monotonic() - t_start,
                                           t_built - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
