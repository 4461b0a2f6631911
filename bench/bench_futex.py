"""Futex calls on different futexes of one task from different CPUs
(docs/SHARING.md "Futexes"): ``run futexbench`` under the sharing
plugin, transfers per call at each -smp, and instructions per call at -smp 1
under ``-icount shift=0,sleep=off`` (the program's ns are guest instructions).

    python3 -m bench.bench_futex [--kernel build/release/kernel.elf]
        [--smp 2,4] [--reps 2] [--calls 20000] [--icount] [--top 5]

Prints one line per boot; counts, never times (the icount figure is exact).
"""

import argparse
import os
import re
import sys
import tempfile

from tools import kconsole, sharing

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(REPO, "build", "plugins", "sharing.so")
RESULT = re.compile(r"futexbench: threads=(\d+) calls=(\d+) errors=(\d+) "
                    r"ns=(\d+)")


def run_bench(k, args, timeout=600):
    """``run futexbench ARGS`` on a booted kernel: (threads, calls, errors,
    ns) and the command's text; fails unless it exited with status 0."""
    text = k.cmd("run futexbench %s" % args, timeout=timeout)
    m = RESULT.search(text)
    if not m or "exited with status 0" not in text:
        raise RuntimeError("futexbench failed:\n%s" % text)
    return tuple(int(x) for x in m.groups()), text


def sharing_boot(elf, smp, calls, name, top=20):
    """One boot at -smp ``smp`` with the plugin: the resolved window and the
    program's result."""
    fd, out = tempfile.mkstemp(prefix="futexbench-", suffix=".jsonl")
    os.close(fd)
    try:
        k = kconsole.Kernel(smp=smp, kernel=elf, name=name, extra_args=[
            "-plugin", "%s,out=%s,top=%d" % (PLUGIN, out, top)])
        with k:
            k.wait_prompt(300)
            res, _ = run_bench(k, "-c %d" % calls)
            k.check_no_panic()
            k.halt(timeout=300)
        windows = sharing.read_windows(out)
    finally:
        os.unlink(out)
    if len(windows) != 1:
        raise RuntimeError("%d plugin windows for one run" % len(windows))
    w = windows[0]
    if w["ops"] != res[1] or w["incomplete"]:
        raise RuntimeError("the plugin counted %d calls, the program %d%s" % (
            w["ops"], res[1], " (incomplete)" if w["incomplete"] else ""))
    return sharing.resolve(w, sharing.Symbols(elf), top), res


def icount_boot(elf, calls, name):
    """Instructions per call at -smp 1 (one thread), exact under icount."""
    k = kconsole.Kernel(smp=1, kernel=elf, name=name,
                        accel="tcg", extra_args=[
                            "-icount", "shift=0,sleep=off"])
    with k:
        k.wait_prompt(300)
        res, _ = run_bench(k, "-n 1 -c %d" % calls)
        k.check_no_panic()
        k.halt(timeout=300)
    return res[3] / res[1], res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default=os.path.join(REPO, "build", "release",
                                                     "kernel.elf"))
    ap.add_argument("--smp", default="2,4")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--icount", action="store_true",
                    help="also instructions per call at -smp 1 (icount)")
    ap.add_argument("--top", type=int, default=5)
    a = ap.parse_args(argv)
    for smp in [int(s) for s in a.smp.split(",") if s]:
        for rep in range(a.reps):
            w, res = sharing_boot(a.kernel, smp, a.calls,
                                  "futexbench-smp%d-%d" % (smp, rep))
            print("smp %d rep %d: %s" % (smp, rep, sharing.summary(
                w, top=a.top)))
            sys.stdout.flush()
    if a.icount:
        for rep in range(a.reps):
            ipc, res = icount_boot(a.kernel, a.calls, "futexbench-icount-%d"
                                   % rep)
            print("icount smp 1 rep %d: %.1f instructions per call (%d calls, "
                  "%d instructions)" % (rep, ipc, res[1], res[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
