"""Shared by the suites' modules: the results data, formatting, the figure
style, the ratio report and its verdicts.
"""

import json
import math
import os
import statistics
import sys

from bench import chtbench as cb  # ids, seed commands

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH_DIR)


BEGIN = "<!-- chtbench:begin -->"


END = "<!-- chtbench:end -->"


US_BEGIN = "<!-- userspace:begin -->"


US_END = "<!-- userspace:end -->"


COST_BEGIN = "<!-- cost:begin -->"


COST_END = "<!-- cost:end -->"


class Data:
    """Every point of every suite, indexed by (config, smp, bench, cpus, upd)."""

    def __init__(self, results_dir):
        self.docs = {}
        self.points = {}
        for suite in ("seed", "resize", "page_ht"):
            path = os.path.join(results_dir, suite + ".json")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                doc = json.load(f)
            self.docs[suite] = doc
            for p in doc["points"]:
                key = (p["config"], p["smp"], p["bench"], p["cpus"],
                       p["update"])
                self.points[key] = p
        self.smps = sorted({k[1] for k in self.points}, reverse=True)

    def get(self, config, smp, bench, cpus, update=0):
        return self.points.get((config, smp, bench, cpus, update))

    def mean(self, *key):
        p = self.get(*key)
        return p["mean"] if p else None

    def series(self, config, smp, bench, xs, by="cpus", update=0, cpus=None,
               scale=1.0):
        """[(x, mean, sd)] for the points that exist."""
        out = []
        for x in xs:
            if by == "cpus":
                p = self.get(config, smp, bench, x, update)
            else:
                p = self.get(config, smp, bench, cpus, x)
            if p:
                out.append((x, p["mean"] * scale, p["stdev"] * scale))
        return out

    def cpus_of(self, config, smp, bench, update=0):
        return sorted(k[3] for k in self.points
                      if k[0] == config and k[1] == smp and k[2] == bench
                      and k[4] == update)

    def ratio(self, num, den, num_scale=1.0):
        """Per-repetition ratio num/den (samples paired by repetition).

        ``num`` and ``den`` are keys (config, smp, bench, cpus, update).
        Returns (mean, sd, n) or None.  Pairing by repetition means both come
        from the same boot when the configuration is the same, and from
        adjacent boots otherwise.
        """
        a, b = self.get(*num), self.get(*den)
        if not a or not b:
            return None
        ra = {s["rep"]: s["ops_per_s"] for s in a["samples"]}
        rb = {s["rep"]: s["ops_per_s"] for s in b["samples"]}
        vals = [ra[r] * num_scale / rb[r] for r in sorted(ra)
                if r in rb and rb[r]]
        if not vals:
            return None
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        return statistics.fmean(vals), sd, len(vals)

    def rel_scaling(self, cfg, smp, bench, n, ref_bench=2):
        """Per-repetition (x(n)/x(1)) / (ref(n)/ref(1)), all from one boot.

        The reference is the unsynchronized list traversal of the same boot:
        how much the host gave the extra vCPUs at all.  Returns (mean, sd, n)
        or None.
        """
        keys = [(cfg, smp, bench, n, 0), (cfg, smp, bench, 1, 0),
                (cfg, smp, ref_bench, n, 0), (cfg, smp, ref_bench, 1, 0)]
        pts = [self.get(*k) for k in keys]
        if not all(pts):
            return None
        by_rep = [{s["rep"]: s["ops_per_s"] for s in p["samples"]}
                  for p in pts]
        vals = []
        for r in sorted(by_rep[0]):
            if all(r in b and b[r] for b in by_rep):
                xn, x1, in_, i1 = (b[r] for b in by_rep)
                vals.append((xn / x1) / (in_ / i1))
        if not vals:
            return None
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        return statistics.fmean(vals), sd, len(vals)

    @property
    def any_doc(self):
        for s in ("seed", "resize", "page_ht"):
            if s in self.docs:
                return self.docs[s]
        return None


def fmt_ratio(r, digits=2):
    if r is None:
        return "n/a"
    m, sd, n = r
    if m >= 100:
        return "%.0f ± %.0f" % (m, sd)
    if m >= 10:
        return "%.1f ± %.1f" % (m, sd)
    return "%.*f ± %.*f" % (digits, m, digits, sd)


def load_pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(
            "plot.py: matplotlib is missing for %s; run `make bench-deps` "
            "(or %s -m pip install matplotlib)" % (sys.executable,
                                                   sys.executable))
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(plt, fig, path):
    """Lays a figure out, writes it to ``path`` (110 dpi) and closes it;
    returns ``path``."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


STYLE = {
    "ideal": dict(color="black", marker="o", linestyle="--"),
    "a-rcu": dict(color="tab:blue", marker="s"),
    "podzimek-rcu": dict(color="tab:orange", marker="^"),
    "spinlock": dict(color="tab:red", marker="v"),
    "rwlock": dict(color="tab:purple", marker="D"),
    "ht/spinlock": dict(color="tab:red", marker="v"),
    "ht/bktlock": dict(color="tab:green", marker="D"),
    "cht/a-rcu": dict(color="tab:blue", marker="s"),
    "cht fixed 2^13": dict(color="tab:green", marker="v", linestyle="--"),
    "cht fixed 2^14": dict(color="tab:olive", marker="^", linestyle="--"),
    "cht continuous resize": dict(color="tab:blue", marker="s"),
    "rwlock fixed 2^13": dict(color="tab:purple", marker="D", linestyle="--"),
    "rwlock continuous resize": dict(color="tab:red", marker="v"),
    "cht": dict(color="tab:blue", marker="s"),
    "locked": dict(color="tab:red", marker="v"),
}


def draw(ax, series, scale_label, xlabel, title, host_cores=None,
         logy=False, xs=None):
    """Plot [(label, [(x, mean, sd)], style-overrides)] on ax."""
    for item in series:
        label, pts = item[0], item[1]
        extra = item[2] if len(item) > 2 else {}
        if not pts:
            continue
        style = dict(STYLE.get(label.split(" (")[0], {}))
        style.update(extra)
        x = [p[0] for p in pts]
        y = [p[1] for p in pts]
        e = [p[2] for p in pts]
        ax.errorbar(x, y, yerr=e, label=label, capsize=3, linewidth=1.5,
                    markersize=5, **style)
    if host_cores and xs and max(xs) > host_cores:
        ax.axvspan(host_cores + 0.5, max(xs) + 0.5, color="0.9", zorder=0,
                   label="vCPUs > %d host cores" % host_cores)
    if xs:
        ax.set_xticks(xs)
        ax.set_xlim(min(xs) - 0.3, max(xs) + 0.3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(scale_label)
    ax.set_title(title, fontsize=10)
    if logy:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def smp_title(smp, host_cores):
    if smp == cb.SEED_SMP:
        t = "-smp %d (the seed's)" % smp
    else:
        t = "-smp %d" % smp
    if host_cores and smp > host_cores:
        t += ", %d host cores" % host_cores
    elif host_cores and smp <= host_cores:
        t += ", a host core per vCPU"
    return t


def host_cores(data):
    doc = data.any_doc
    try:
        return int(doc["host"]["nproc"])
    except (TypeError, KeyError, ValueError):
        return None


def nreaders(n):
    return "1 reader" if n == 1 else "%d readers" % n


def ncpus(n):
    return "1 CPU" if n == 1 else "%d CPUs" % n


def key(config, smp, bench, cpus, update=0):
    return (config, smp, bench, cpus, update)


class Report:
    def __init__(self, data):
        self.d = data
        self.rows = []          # ratio table rows

    def add(self, what, smp, r, seed):
        self.rows.append((what, smp, r, seed))
        return r

    def r(self, num, den, scale=1.0):
        return self.d.ratio(num, den, scale)


UNCLEAR = "unclear"


#: Below this 1 -> 2 CPU gain of the unsynchronized traversal the host did not
#: give the second vCPU a core, and scalability claims are not judged.
CAPACITY_MIN = 1.5


def verdict(ok, on=None):
    """Bold verdict; ``on`` names what the verdict is about."""
    if ok is None:
        return "**Not measured.**"
    if ok == UNCLEAR:
        return ("**Inconclusive** (%sthe difference is within one standard "
                "deviation)." % ("on " + on.replace("that ", "whether ", 1)
                                 + "; " if on else ""))
    return "**We %s%s.**" % ("agree" if ok else "differ",
                             " " + on if on else "")


def judge(r, thr, above=True):
    """Is ratio r = (mean, sd, n) above (or below) thr by more than 1 SD?"""
    if r is None:
        return None
    m, sd = r[0], r[1]
    if above:
        return True if m - sd > thr else False if m + sd < thr else UNCLEAR
    return True if m + sd < thr else False if m - sd > thr else UNCLEAR


def judge_within(r, lo, hi):
    """Is ratio r inside [lo, hi]? Clearly outside by 1 SD: False."""
    if r is None:
        return None
    m, sd = r[0], r[1]
    if lo <= m <= hi:
        return True
    if m + sd < lo or m - sd > hi:
        return False
    return UNCLEAR


def judge_gt(r1, r2):
    """Is r1 above r2 by more than both SDs?"""
    if r1 is None or r2 is None:
        return None
    if r1[0] - r1[1] > r2[0] + r2[1]:
        return True
    if r1[0] + r1[1] < r2[0] - r2[1]:
        return False
    return UNCLEAR


def both(*vals):
    if any(v is None for v in vals):
        return None
    if any(v is False for v in vals):
        return False
    if any(v == UNCLEAR for v in vals):
        return UNCLEAR
    return True


def m_(r):
    return r[0] if r else None


def md_escape(s):
    return s.replace("|", "\\|")


def write_text(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print("plot.py: wrote %s" % os.path.relpath(path, REPO))
