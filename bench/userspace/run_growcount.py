"""The intrusive table's inserts while it grows, counted exactly.

    python3 -m bench.userspace.run_growcount [--grow 2097152] [--end-mult 2]
        [--out DIR] [--bin build/bench-userspace/growcount]

Runs growcount (growcount.c) under valgrind's callgrind with its cache
simulator and the fixed hierarchy of run_misses.py, three times:

1. the auto-resized table created at GROW buckets (-1), crossing its grow
   point GROW -> 2 GROW buckets, the resizer's work collected too
   (--toggle-collect=resize_work, its own thread's file) with --dump-instr,
   so that each instruction is attributed to the function it was inlined
   into (addr2line -i: buckets_alloc, dummies_link, dummy_link,
   dummies_retire, cht__mark_deleted);
2. the same keys into a table presized at 2 GROW buckets, its phases cut at
   the key indices the first run saw (-b).

Collection toggles are per thread in callgrind: the client requests of the
inserting thread collect its events only; the resizer's come from
--toggle-collect. The simulated caches are shared by all threads (the
resizer's lines evict the inserter's as on one CPU).

Prints, per phase (pre / link / retire / after, growcount.c), the inserts and
their Ir and LL misses (ILmr + DLmr + DLmw) per insert, auto and presized,
then the resizer's Ir and LL misses per function. --lookups: growcount -l,
the counts of one lookup of a present key after each insert instead.
"""

import argparse
import collections
import glob
import os
import re
import subprocess
import sys

from bench.userspace import run_misses

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
VG = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
      "--separate-threads=yes", "--cache-sim=yes", "--I1=32768,8,64",
      "--D1=32768,8,64", "--LL=8388608,16,64"]
PHASES = ["pre", "link", "retire", "after"]
RESIZER_FUNCS = ("buckets_alloc", "dummy_link", "dummies_link",
                 "cht__mark_deleted", "dummies_retire")


def run(argv, out):
    p = subprocess.run(argv, capture_output=True, text=True)
    with open(out + ".log", "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit("failed: %s (%s.log)" % (" ".join(argv), out))
    return p.stdout


def summary(f):
    """{event: count} of one callgrind file."""
    ev = None
    for s in open(f):
        if s.startswith("events:"):
            ev = s.split()[1:]
        elif s.startswith("summary:"):
            return dict(zip(ev, [int(x) for x in s.split()[1:]]))
    return {}


def ll(e):
    return e.get("ILmr", 0) + e.get("DLmr", 0) + e.get("DLmw", 0)


def phases(prefix):
    """{phase: {event: count}} of the inserting thread's dumps (thread 1)."""
    res = {}
    for f in glob.glob(prefix + ".*.*-01"):
        part = re.search(r"\.(\d+)-01$", f)
        if not part:
            continue
        trig = [s for s in open(f) if s.startswith("desc: Trigger")]
        name = trig[0].split(":")[-1].strip() if trig else "?"
        res[name] = summary(f)
    return res


def attribute(f, binary):
    """{function: [Ir, LL misses]} of a --dump-instr=yes file, each
    instruction charged to the first of RESIZER_FUNCS in its inline chain."""
    cost = collections.defaultdict(lambda: [0, 0])
    for _fl, obj, addr, _line, e in run_misses.dump_costs(f):
        if obj is None or os.path.basename(binary) not in obj:
            continue
        cost[addr][0] += e.get("Ir", 0)
        cost[addr][1] += ll(e)
    addrs = sorted(cost)
    out = subprocess.run(["addr2line", "-i", "-f", "-a", "-e", binary] +
                         ["0x%x" % a for a in addrs], capture_output=True,
                         text=True).stdout
    chains, cur = {}, None
    for line in out.splitlines():
        if line.startswith("0x"):
            cur = int(line, 16)
            chains[cur] = []
        elif not line.startswith("/") and not line.startswith("??"):
            chains[cur].append(line)
    agg = collections.defaultdict(lambda: [0, 0])
    for a in addrs:
        ch = chains.get(a, [])
        key = next((fn for fn in RESIZER_FUNCS if fn in ch), "other")
        agg[key][0] += cost[a][0]
        agg[key][1] += cost[a][1]
    return agg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grow", type=int, default=1 << 21)
    ap.add_argument("--end-mult", type=float, default=2.0)
    ap.add_argument("--lookups", action="store_true",
                    help="count a lookup after each insert instead of the "
                    "inserts (growcount -l)")
    ap.add_argument("--out", default=os.path.join(
        ROOT, "bench/results/userspace/growcount"))
    ap.add_argument("--bin", default=os.path.join(
        ROOT, "build/bench-userspace/growcount"))
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    g, end = args.grow, int(args.grow * args.end_mult)
    tag = os.path.join(args.out, "g%d%s" % (g, "-l" if args.lookups else ""))
    look = ["-l"] if args.lookups else []
    for f in glob.glob(tag + "-*.*"):
        os.remove(f)
    o = run(["nice", "-n", "19"] + VG + [
        "--toggle-collect=resize_work", "--dump-instr=yes",
        "--callgrind-out-file=%s-auto.%%p" % tag, args.bin, str(g), str(end),
        "-1"] + look, tag + "-auto")
    b = re.search(r"bounds,(\d+),(\d+),(\d+)", o).groups()
    cnt = {p: int(n) for p, n in re.findall(r"phase,(\w+),inserts,(\d+)", o)}
    run(["nice", "-n", "19"] + VG + [
        "--callgrind-out-file=%s-presized.%%p" % tag, args.bin, str(g),
        str(end), "presized", "-b", ",".join(b)] + look, tag + "-presized")
    auto, pres = phases(tag + "-auto"), phases(tag + "-presized")
    print("growcount %d -> %d buckets, keys %d..%d (phase bounds %s), "
          "8 MiB LL" % (g, 2 * g, g - g // 64, end, ",".join(b)))
    op = "lookup" if args.lookups else "insert"
    print("| phase | %ss | Ir/%s auto | Ir/%s presized | LL misses/%s auto "
          "| LL misses/%s presized | auto / presized |" % ((op,) * 5))
    print("|---|---|---|---|---|---|---|")
    for p in PHASES:
        n = cnt.get(p, 0)
        if not n or p not in auto or p not in pres:
            continue
        a, q = auto[p], pres[p]
        print("| %s | %d | %.1f | %.1f | %.3f | %.3f | %.3f |" % (
            p, n, a["Ir"] / n, q["Ir"] / n, ll(a) / n, ll(q) / n,
            ll(a) / ll(q) if ll(q) else float("nan")))
    thr = [f for f in glob.glob(tag + "-auto.*-0*")
           if summary(f).get("Ir", 0) > 1000 and not f.endswith("-01")]
    if thr:
        agg = attribute(thr[0], args.bin)
        tot = [sum(v[0] for v in agg.values()),
               sum(v[1] for v in agg.values())]
        ins = sum(ll(auto[p]) for p in ("link", "retire") if p in auto)
        print("resizer (%s): Ir %d, LL misses %d; the counted operations' in "
              "link + retire: %d (resizer / them %.2f)" % (
                  os.path.basename(thr[0]), tot[0], tot[1], ins,
                  tot[1] / ins if ins else float("nan")))
        for k, v in sorted(agg.items(), key=lambda kv: -kv[1][1]):
            print("  %-18s Ir %11d  LL misses %9d (%.1f %%)" % (
                k, v[0], v[1], 100.0 * v[1] / tot[1] if tot[1] else 0))


if __name__ == "__main__":
    main()
