"""Benchmarks of the OS's user space: libcht in user tasks (bench/RESULTS.md).

  python3 -m bench.chtuser lookups [--rounds R] [--seconds S] [--smp 1,2]
      libcht lookups per second in a user task (``run chtuser -l``) against
      ``chtbench 12`` in the kernel (the same table, keys and loop), both
      in the same boot, alternated R times; prints each round and the
      median ratio user/kernel.
  python3 -m bench.chtuser icount
      the same at -smp 1 under ``-icount shift=0,sleep=off``: guest ns are
      instructions, so ns per lookup = instructions per lookup (exact).
  python3 -m bench.chtuser ufault [--rounds R] [--seconds S] [--smp 1,2]
      user page faults per second (``run ufault``) with the CHT and with the
      locked page hash table (two kernels, so two boots, alternated R
      times). Each boot also runs ``chtbench 12`` as a reference that does
      not depend on the page hash table: faults/s divided by it is a ratio
      within one boot, which cancels the host's speed of the moment.
      With --icount: -smp 1 under icount, instructions per fault.

Kernels: release builds, ``make DEBUG=0 BUILD=build/rel kernel`` and
``make DEBUG=0 BUILD=build/rel-locked PAGE_HT=locked kernel`` (--rel,
--rel-locked to change). The host is shared and noisy: only the ratios mean
anything, and only the icount figures are exact.
"""

import argparse
import os
import re
import statistics

from tools import kconsole

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ICOUNT = ["-icount", "shift=0,sleep=off"]
KRES = re.compile(r"^result: bench=12 .* ops=(\d+) ops_per_s=(\d+)", re.M)
URES = re.compile(r"^chtuser: lookups threads=(\d+) ops=(\d+) hits=\d+ "
                  r"ns=(\d+)", re.M)
FRES = re.compile(r"^ufault: threads=(\d+) pages=\d+ faults=(\d+) ns=(\d+) "
                  r"faults_per_s=\d+ errors=0", re.M)


def boot(kernel, smp, name, icount=False):
    k = kconsole.Kernel(smp=smp, kernel=kernel, name=name,
                        accel="tcg" if icount else "tcg,thread=multi",
                        extra_args=ICOUNT if icount else [])
    k.start()
    k.wait_prompt(180)
    return k


def need(regex, out, what):
    m = regex.search(out)
    if not m:
        raise SystemExit("%s: no result in:\n%s" % (what, out))
    return m


def kernel_lookups(k, smp, seconds):
    """chtbench 12: lookups per second (ops over the nominal seconds)."""
    out = k.cmd("chtbench 12 %d 0 -t %d" % (smp, seconds), 60 + 4 * seconds)
    m = need(KRES, out, "chtbench 12")
    return int(m.group(1)), int(m.group(2))


def user_lookups(k, seconds):
    """chtuser -l: (ops, ns, lookups per second by the task's own clock)."""
    out = k.cmd("run chtuser -l -t %d" % seconds, 60 + 4 * seconds)
    m = need(URES, out, "chtuser -l")
    ops, ns = int(m.group(2)), int(m.group(3))
    return ops, ns, ops * 1e9 / ns


def cmd_lookups(a):
    for smp in a.smp:
        k = boot(a.rel, smp, "bench-chtuser-lookups-smp%d" % smp)
        ratios = []
        try:
            for r in range(a.rounds):
                _, kps = kernel_lookups(k, smp, a.seconds)
                _, _, ups = user_lookups(k, a.seconds)
                ratios.append(ups / kps)
                print("smp %d round %d: kernel %.0f/s user %.0f/s "
                      "user/kernel %.3f" % (smp, r, kps, ups, ups / kps),
                      flush=True)
        finally:
            k.halt()
        print("smp %d: median user/kernel %.3f (min %.3f max %.3f)"
              % (smp, statistics.median(ratios), min(ratios), max(ratios)),
              flush=True)


def cmd_icount(a):
    k = boot(a.rel, 1, "bench-chtuser-icount", icount=True)
    try:
        _, kps = kernel_lookups(k, 1, a.seconds)
        uops, uns, _ = user_lookups(k, a.seconds)
    finally:
        k.halt()
    # Guest ns = instructions: ns per lookup is instructions per lookup.
    kinst = 1e9 / kps
    uinst = uns / uops
    print("icount -smp 1: kernel chtbench 12 %.1f instructions/lookup, "
          "user chtuser -l %.1f (user/kernel speed %.3f)"
          % (kinst, uinst, kinst / uinst))


def ufault(k, seconds):
    out = k.cmd("run ufault -t %d" % seconds, 60 + 4 * seconds)
    m = need(FRES, out, "ufault")
    return int(m.group(2)), int(m.group(3))


def cmd_ufault(a):
    kernels = (("cht", a.rel), ("locked", a.rel_locked))
    for smp in ([1] if a.icount else a.smp):
        per = {"cht": [], "locked": []}
        for r in range(a.rounds):
            for name, path in kernels:
                k = boot(path, smp, "bench-ufault-%s-smp%d" % (name, smp),
                         icount=a.icount)
                try:
                    faults, ns = ufault(k, a.seconds)
                    _, ref = kernel_lookups(k, smp, a.seconds)
                finally:
                    k.halt()
                fps = faults * 1e9 / ns
                per[name].append((fps, fps / ref, ns / faults))
                print("smp %d round %d %-6s: %.0f faults/s, %.1f guest ns "
                      "per fault%s, per reference lookup %.5f"
                      % (smp, r, name, fps, ns / faults,
                         " (= instructions)" if a.icount else "",
                         fps / ref), flush=True)
        raw = statistics.median(c[0] for c in per["cht"]) / \
            statistics.median(c[0] for c in per["locked"])
        norm = statistics.median(c[1] for c in per["cht"]) / \
            statistics.median(c[1] for c in per["locked"])
        print("smp %d: CHT/locked faults per second %.3f raw, %.3f "
              "normalized by the in-boot reference (medians of %d)"
              % (smp, raw, norm, a.rounds), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("lookups", "icount", "ufault"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=3)
    p.add_argument("--smp", default="1,2")
    p.add_argument("--icount", action="store_true")
    p.add_argument("--rel", default=os.path.join(REPO, "build/rel/kernel.elf"))
    p.add_argument("--rel-locked", default=os.path.join(
        REPO, "build/rel-locked/kernel.elf"))
    a = p.parse_args()
    a.smp = [int(x) for x in a.smp.split(",") if x]
    {"lookups": cmd_lookups, "icount": cmd_icount,
     "ufault": cmd_ufault}[a.what](a)


if __name__ == "__main__":
    main()
