"""Figures and bench/RESULTS.md from bench/results/<suite>.json.

Reads what ``bench/chtbench.py`` wrote (seed.json, resize.json, page_ht.json,
whichever exist), draws one PNG per figure into bench/results/ (error bars: one
standard deviation of the per-run rate, as in the seed) and regenerates the
chtbench part of bench/RESULTS.md: the part between ``<!-- chtbench:begin -->``
and ``<!-- chtbench:end -->``.  Everything else in that file (in particular
the userspace section between ``<!-- userspace:begin -->`` and
``<!-- userspace:end -->``) is kept as it is.

If ``cost.json`` (``make bench-cost``) exists, it also regenerates the cost
section between ``<!-- cost:begin -->`` and ``<!-- cost:end -->``:
instructions per operation under QEMU icount beside the CHT's one-CPU goals;
if ``cost-arm64.json`` (``make bench-cost ARCH=arm64``) exists, the arm64
section between ``<!-- cost-arm64:begin -->`` and ``<!-- cost-arm64:end -->``
(its table puts the ratios between designs of both architectures side by
side).  ``--cost-only`` regenerates just those sections (no figures, no
other suite needed).

The work is split by suite: bench/plotlib/seed.py, resize.py, page_ht.py and
cost.py draw each suite's figures and write its readings and ratio rows
(bench/plotlib/common.py holds the data access, the figure style and the
ratio report); this file assembles RESULTS.md.

Usage::

    python3 -m bench.plot [--results DIR] [--out FILE] [--no-figures]
    python3 -m bench.plot --cost-only
"""

import argparse
import os
import sys

from bench import results_md
from bench.plotlib import cost, page_ht, resize, seed
from bench.plotlib.common import cb  # noqa: F401
# Re-exported for bench/test_bench.py and other users of plot.py.
from bench.plotlib.common import (  # noqa: F401
    BEGIN, COST_BEGIN, COST_END, END, US_BEGIN, US_END, UNCLEAR, both, judge)
from bench.plotlib.cost import (  # noqa: F401
    COST_ARM64_BEGIN, COST_ARM64_END, splice_cost, splice_cost_arm64)
from bench.plotlib.common import (
    Data, Report, fmt_ratio, host_cores, load_pyplot, md_escape, write_text)

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)


FIGURES = [
    ("list-read.png", seed.fig_list_read),
    ("list-upd.png", seed.fig_list_upd),
    ("ht-lookup.png", seed.fig_ht_lookup),
    ("ht-upd.png", seed.fig_ht_upd),
    ("resize.png", resize.fig_resize),
    ("page_ht.png", page_ht.fig_page_ht),
]


class Context:
    """What every suite's readings function works on: the data, the report
    it adds ratio rows to, the readings per figure, and the -smp facts."""

    def __init__(self, data):
        self.R = Report(data)
        self.read = {}
        self.data = data
        self.hc = host_cores(data) or 2
        self.smps = data.smps
        honest = [s for s in self.smps if s <= self.hc]
        self.honest = max(honest) if honest else None
        self.seed_smp = cb.SEED_SMP if cb.SEED_SMP in self.smps else (
            self.smps[0] if self.smps else None)

    def names(self):
        """(R, read, data, hc, smps, honest, seed_smp): the names every
        readings function works with, in that order."""
        return (self.R, self.read, self.data, self.hc, self.smps,
                self.honest, self.seed_smp)


#: Every suite's readings, in the order of RESULTS.md.
READINGS = [seed.readings_list_read, seed.readings_list_upd,
            seed.readings_ht_lookup, seed.readings_ht_upd,
            resize.readings_resize, page_ht.readings_page_ht]


def build_ratios_and_readings(data):
    """Return (ratio rows, {figure: reading markdown})."""
    ctx = Context(data)
    for fn in READINGS:
        fn(ctx)
    return ctx.R.rows, ctx.read


WHY = """\
Why our numbers differ from the seed's (and where they cannot be compared):

- **TCG, not hardware.** Every vCPU is a host thread running translated code;
  a guest load or store is several host instructions, a locked
  read-modify-write is emulated with a host atomic, and cache-line transfer
  between vCPUs is the host's. The relative cost of an atomic operation
  versus plain loads, which decides spinlock-versus-RCU, is not the one of an
  i7 920. Only ratios of variants measured in the same boot (or in adjacent
  boots of the same repetition) are meaningful; absolute rates are not.
- **Two host cores.** With -smp 4 the 4 vCPUs time-slice on 2 host cores.
  Beyond 2 CPUs the curves measure QEMU's and the host's scheduling: the
  unsynchronized traversal stops gaining, and a lock whose holder's vCPU is
  descheduled makes every waiter spin (lock-holder preemption), so spinlocks
  and the rwlock look worse than on real cores. The -smp 2 panels (one vCPU
  per host core) are the honest scalability measurement; the -smp 4 ones
  follow the seed's command lines. Other jobs on the host (see the load
  average above) add noise.
- **Release build, as in the seed.** All kernels are `make DEBUG=0` (-O2,
  asserts off); a debug build would weigh the lock and RCU paths differently
  (the kernel prints a note and the driver refuses it).
- **Our rwlock is a spinning one** (Linux `rwlock_t` style: one word, a
  reader count and a writer bit; every `read_lock` is a CAS on the shared
  word), like the relativistic paper's baseline, not HelenOS's blocking
  `rwlock_t`.
- **Our CHT is a relativistic split-ordered list** (Shalev and Shavit's
  recursive split ordering with RCU readers and Michael/Harris deletion
  marks), not Hraska's HelenOS CHT (per-bucket lists that are joined and split
  by moving nodes). A resize publishes a new bucket array of dummy pointers
  and needs one grace period; the list itself never moves.
- **Shorter and fewer runs.** The seed ran 10 to 20 runs of 10 s per point
  until the confidence interval was within 1 %; the paper 10 runs of 10 s. We
  run each point a few times for a few seconds to stay within the time budget;
  the error bars (one standard deviation of a single run's rate, as in the
  seed) show what that buys.
"""


SEED_CLAIMS = {
    "list-read": "A-RCU fares the best and has optimal scaling; the spinlock "
                 "scales negatively; Podzimek RCU scales perfectly but its "
                 "base cost is on par with a spinlock on one CPU, while "
                 "A-RCU's is significantly lower than both.",
    "list-upd": "With few updates RCU-protected lists significantly "
                "outperform the spinlock; as updates grow the spinlock "
                "catches up; crossover about 40 % (Podzimek) and 60 % "
                "(A-RCU); A-RCU a bit better than Podzimek.",
    "ht-lookup": "One global spinlock scales negatively; per-bucket locks "
                 "scale fairly well but are significantly slower than the "
                 "CHT; the CHT is slightly better than both on one CPU.",
    "ht-upd": "(The seed gives only the figure.)",
    "resize": "Relativistic paper: lookups during continuous resizes fall "
              "between the two fixed sizes (resizing adds little or no "
              "overhead); rwlock lookups collapse by two orders of magnitude "
              "with a resizer; 125x the rwlock's lookup rate during resize.",
    "page_ht": "Seed wiki: the CHT must be suitable to replace the global page "
              "hash table.",
}


FIG_TITLES = {
    "list-read": "RCU read side scalability (list traversals)",
    "list-upd": "RCU write side overhead (list updates)",
    "ht-lookup": "Hash table lookup scalability",
    "ht-upd": "Hash table update overhead",
    "resize": "Lookups during continuous resize (relativistic paper)",
    "page_ht": "Page hash table: CHT vs global lock",
}


def generate_md(data, figures, rows, readings):
    doc = data.any_doc
    host = doc["host"]
    L = []
    L.append("## Kernel benchmarks (chtbench)")
    L.append("")
    L.append("Generated by `bench/plot.py` from `bench/results/*.json`, "
             "which `bench/chtbench.py` wrote. Do not edit this section by "
             "hand: `make bench` (full) or `make bench-quick` regenerates it "
             "and the figures.")
    L.append("")
    L.append("> Under TCG on a %s-core host only ratios measured in the same "
             "run mean anything. Absolute rates depend on QEMU's translation "
             "and on whatever else the host runs; beyond %s vCPUs the vCPUs "
             "time-slice on the host cores." % (host["nproc"], host["nproc"]))
    L.append("")

    # ---- how produced
    modes = {s: data.docs[s]["mode"] for s in data.docs}
    walls = sum(data.docs[s].get("suite_wall_s", 0) for s in data.docs)
    build_s = max(data.docs[s].get("build_s", 0) for s in data.docs)
    L.append("### How these numbers were produced")
    L.append("")
    L.append("| | |")
    L.append("|---|---|")
    L.append("| command | `%s` then `bench/plot.py` |" %
             md_escape(doc.get("generated_by", "?")))
    if len(set(modes.values())) == 1:
        L.append("| mode | %s (suites: %s) |" % (
            list(modes.values())[0], ", ".join(sorted(modes))))
    else:
        L.append("| mode | %s |" % ", ".join("%s: %s" % kv
                                             for kv in sorted(modes.items())))
    L.append("| repetitions x duration | %d x `-t %d` per point (runs of one "
             "repetition interleaved: variants alternate inside a boot, boots "
             "alternate between builds) |" % (doc["reps"], doc["seconds"]))
    if "seed" in data.docs and data.docs["seed"].get("seed_verbatim"):
        L.append("| seed command lines | each also run once exactly as "
                 "written (10 s) |")
    L.append("| wall clock | %.0f s of runs + %.0f s of builds (%.1f min) |"
             % (walls, build_s, (walls + build_s) / 60))
    L.append("| date | %s |" % host["date_utc"])
    dirty = host.get("git_dirty_files") or []
    L.append("| git revision | `%s`%s |" % (
        host["git_rev"], " **with uncommitted changes in kernel/, tools/ or "
        "the Makefile** (%s)" % md_escape(", ".join(
            "`%s`" % f.strip() for f in dirty[:6]) +
            (", ..." if len(dirty) > 6 else ""))
        if host.get("git_dirty_kernel") else " (kernel/, tools/ and the "
        "Makefile as committed)"))
    L.append("")
    L.append("### Machine and QEMU")
    L.append("")
    L.append("| | |")
    L.append("|---|---|")
    L.append("| host CPU | %s, `nproc` = %s |" % (host["cpu_model"],
                                                  host["nproc"]))
    if host.get("mem_gib"):
        L.append("| host memory | %s GiB |" % host["mem_gib"])
    L.append("| host OS | %s |" % host["kernel"])
    L.append("| QEMU | %s, `-accel %s`, `-m %s` |" % (
        host["qemu_version"], doc.get("accel", "tcg,thread=multi"),
        doc.get("mem", "512M")))
    la0 = host.get("loadavg_start")
    la1 = doc.get("loadavg_end")
    if la0:
        L.append("| host load average (1/5/15 min) | at start %s; at end %s |"
                 % ("/".join("%.1f" % x for x in la0),
                    "/".join("%.1f" % x for x in la1) if la1 else "?"))
    for smp in data.smps:
        p = data.get("a-rcu", smp, cb.B_LIST_IDEAL, min(smp, 2))
        if p and p.get("mean_qemu_host_cores") is not None and smp >= 2:
            cores = [s["qemu_host_cores"] for s in p["samples"]
                     if "qemu_host_cores" in s]
            L.append("| host cores QEMU got, 2 busy vCPUs (-smp %d, "
                     "list-read/ideal) | %.2f on average (%.2f to %.2f): 2 "
                     "means each vCPU had a core |"
                     % (smp, p["mean_qemu_host_cores"], min(cores),
                        max(cores)))
    L.append("| -smp | %s (%d is the seed's) |" % (
        ", ".join(str(s) for s in data.smps), cb.SEED_SMP))
    kv = {}
    for s in data.docs.values():
        kv.update(s.get("kernel_version") or {})
    for cfg in sorted(kv):
        build_line = [x for x in (kv[cfg] or "").split("\n")
                      if x.startswith("Build:")]
        L.append("| kernel `%s` | `%s`; %s |" % (
            cfg, " ".join(cb.CONFIGS[cfg]["make"]),
            md_escape(build_line[0]) if build_line else "?"))
    argv = {}
    for s in data.docs.values():
        argv.update(s.get("qemu_argv") or {})
    if argv:
        k0 = sorted(argv)[0]
        L.append("| QEMU command line (e.g. %s) | `%s` |" % (
            k0, md_escape(argv[k0])))
    L.append("")
    L.append("The seed's figures came from a Core i7 920 (4 cores, 8 "
             "threads) running QEMU with `-smp 4`; the relativistic paper's "
             "from a 24-thread Westmere Xeon running Linux natively.")
    L.append("")

    # ---- ratio table
    L.append("### The ratios that matter")
    L.append("")
    L.append("Mean ± one standard deviation over the repetitions of the "
             "per-repetition ratio (numerator and denominator from the same "
             "boot; \"adjacent boots\" where the two come from different "
             "builds). Crossovers are interpolated from the means.")
    L.append("")
    L.append("| ratio | -smp | ours | seed / paper |")
    L.append("|---|---|---|---|")
    for what, smp, r, seed in rows:
        if r is None:
            val = "n/a"
        elif what.startswith("list update crossover"):
            val = "%.0f %%" % r[0]
        else:
            val = fmt_ratio(r)
        L.append("| %s | %d | %s | %s |" % (md_escape(what), smp, val,
                                           md_escape(seed)))
    L.append("")

    # ---- figures
    L.append("### Figures")
    L.append("")
    for fname, _ in FIGURES:
        stem = fname[:-4]
        if stem not in figures and not readings.get(stem):
            continue
        L.append("#### %s" % FIG_TITLES[stem])
        L.append("")
        if stem in figures:
            L.append("![%s](results/%s)" % (stem, fname))
            L.append("")
        L.append("*Claim:* %s" % SEED_CLAIMS[stem])
        L.append("")
        if readings.get(stem):
            L.append(readings[stem])
            L.append("")

    L.append("### Why we differ")
    L.append("")
    L.append(WHY)

    # ---- seed command lines
    if "seed" in data.docs:
        sd = data.docs["seed"]
        verb = {(v["config"], v["command"]): v
                for v in sd.get("seed_verbatim") or []}
        L.append("### Every command line of the seed wiki")
        L.append("")
        if verb:
            L.append("Each line below was typed at `kconsole> ` exactly as "
                     "the wiki writes it (default 10 s) on a release kernel "
                     "booted with `-smp %d`, and printed its `result:` line. "
                     "The last column is the sweep's mean for the same point "
                     "(`-t %d`, %d runs)." % (cb.SEED_SMP, sd["seconds"],
                                              sd["reps"]))
        else:
            L.append("Quick mode: the wiki's command lines were not run as "
                     "written (10 s each); the sweep ran each of them with "
                     "`-t %d` appended. `make bench` runs them as written."
                     % sd["seconds"])
        L.append("")
        L.append("| # | build | command | as written: ops/s | sweep: "
                 "mean ± SD ops/s |")
        L.append("|---|---|---|---|---|")
        for i, (cfg, command) in enumerate(cb.seed_command_lines(), 1):
            b, n, u = (int(w) for w in command.split()[1:4])
            v = verb.get((cfg, command))
            p = data.get(cfg, cb.SEED_SMP, b, n, u)
            L.append("| %d | %s | `%s` | %s | %s |" % (
                i, cfg, command, "%d" % v["ops_per_s"] if v else "not run",
                "%.0f ± %.0f" % (p["mean"], p["stdev"]) if p else "n/a"))
        L.append("")

    L.append("### Files")
    L.append("")
    L.append("- `bench/results/<suite>.csv`: one row per point (suite, "
             "build, -smp, benchmark, CPUs, update %, n, mean, SD, min, "
             "max, every sample).")
    L.append("- `bench/results/<suite>.json`: the same with every run's "
             "per-thread counts, resizes, wall time, the host and QEMU "
             "description, and the `version` output of each kernel.")
    L.append("- `bench/results/*.png`: the figures above. Serial logs of "
             "every boot go to `build/bench/logs/`.")
    return "\n".join(L) + "\n"


def splice(existing, block):
    """Put ``block`` between the chtbench markers of ``existing`` (before
    the userspace section; a new file gets an empty userspace section)."""
    if existing is None:
        existing = results_md.TITLE + "\n\n" + US_BEGIN + "\n" + US_END + "\n"
    return results_md.splice(existing, block, BEGIN, END, before=(US_BEGIN,))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(BENCH_DIR, "results"))
    ap.add_argument("--out", default=os.path.join(BENCH_DIR, "RESULTS.md"))
    ap.add_argument("--no-figures", action="store_true")
    ap.add_argument("--cost-only", action="store_true",
                    help="regenerate only the cost section from cost.json")
    args = ap.parse_args(argv)

    existing = None
    if os.path.exists(args.out):
        with open(args.out) as f:
            existing = f.read()
    if args.cost_only:
        text = cost.splice_costs(existing, args.results)
        if text is None:
            raise SystemExit("plot.py: no cost.json or cost-arm64.json in %s; "
                             "run bench/chtbench.py --suite cost first"
                             % args.results)
        write_text(args.out, text)
        return 0

    data = Data(args.results)
    if not data.docs:
        raise SystemExit("plot.py: no results in %s; run bench/chtbench.py "
                         "first" % args.results)
    figures = {}
    if not args.no_figures:
        plt = load_pyplot()
        for fname, fn in FIGURES:
            path = fn(data, plt, os.path.join(args.results, fname))
            if path:
                figures[fname[:-4]] = path
                print("plot.py: wrote %s" % os.path.relpath(path, REPO))
    else:
        for fname, _ in FIGURES:
            if os.path.exists(os.path.join(args.results, fname)):
                figures[fname[:-4]] = fname
    rows, readings = build_ratios_and_readings(data)
    block = generate_md(data, figures, rows, readings)
    text = splice(existing, block)
    text = cost.splice_costs(text, args.results) or text
    write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
