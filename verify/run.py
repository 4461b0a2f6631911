#!/usr/bin/env python3
"""Runs the SPIN models of verify/ and every broken variant (make verify).

For each run: copy the model into build/verify/<model>/<variant>-<mode>/,
``spin [-DBROKEN_x] -a``, compile pan with gcc, run it, parse ``errors: N``,
the state counts, the depth and the time. A model must finish with 0 errors
and a complete search (no "max search depth too small", no memory bound); a
broken variant must report >= 1 error of the expected kind and leave a
.trail file (replay: ``spin -DBROKEN_x -t -p model.pml`` in that directory).

Modes:
  safety    gcc -DSAFETY -DNOCLAIM, ./pan: assertions and invalid end states
  liveness  gcc -DNFAIR=3, ./pan -a -f: the model's ltl claim under weak
            fairness (assertions are checked too)

    python3 verify/run.py             # everything, a table at the end
    python3 verify/run.py --short     # the runs that make test runs
    python3 verify/run.py --only arcu # one model (all its variants)
    python3 verify/run.py --list
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.join(REPO, "build", "verify")

#: pan's search depth limit (-m) and memory bound (MB, -DMEMLIM).
DEPTH = 200000
MEMLIM = 1024

# The error each broken variant must produce (a regex on pan's output).
FREED = r"assertion violated .*freed"
REACH = r"assertion violated .*freed_reachable"
#: An old dummy still on the list after its dummies_retire() search
#: (cht.pml, retired_check()), or a freed node reachable at a free.
RETIRED = r"assertion violated .*(cur!=d|freed_reachable)"
MISS = r"assertion violated .*(found|missed)"
#: A present item (or a dummy of the published array) not on the list from
#: the head at the end (cht.pml, complete_check()), or a lookup's miss.
LOST = r"assertion violated .*(found|missed|seen)"
INVALID_END = r"invalid end state"
CYCLE = r"acceptance cycle"
LIST = r"assertion violated \(t_list"
#: a variant that must verify (0 errors, complete): the change is harmless
#: in the model (e.g. a barrier whose ordering the atomic beside it gives)
PASS = "PASS"


class Run:
    """One pan run: a model, a variant (None: the correct model), a mode."""

    def __init__(self, model, variant, mode, expect=None, short=True,
                 cflags=(), why="", pml=None, defs=(), memlim=None):
        self.model = model          # the model's name (table, directory)
        self.pml = pml or model + ".pml"    # its file in verify/
        self.defs = list(defs)      # spin -D options of the model (scenario)
        self.variant = variant      # e.g. "BROKEN_NO_CS_MB", or None
        self.mode = mode            # "safety" or "liveness"
        self.expect = expect        # regex the failure must match (broken)
        self.short = short          # part of make test (a few seconds)
        self.cflags = list(cflags)  # extra pan compile flags (e.g. COLLAPSE)
        self.why = why              # one line: what the variant breaks
        self.memlim = memlim or MEMLIM   # pan's memory bound (MB)

    @property
    def name(self):
        return "%s/%s/%s" % (self.model, self.variant or "model", self.mode)

    @property
    def broken(self):
        return self.variant is not None and self.expect != PASS


def model_runs(model, broken, short=True, cflags=(), pml=None, defs=(),
               liveness=True, live_memlim=None):
    """The correct model in both modes, then each (variant, mode, expect, why).

    @short: the correct model's safety run is part of make test (its
    liveness run, a few times longer, is in make verify only); broken
    variants stop at their first error and are part of make test, in the
    first mode listed (a variant checked in both modes runs the second in
    make verify only). @live_memlim: the correct model's liveness bound in
    MB when it needs more than MEMLIM.
    """
    kw = dict(cflags=cflags, pml=pml, defs=defs)
    runs = [Run(model, None, "safety", short=short, **kw)]
    if liveness:
        runs.append(Run(model, None, "liveness", short=False,
                        memlim=live_memlim, **kw))
    seen = set()
    for variant, mode, expect, why in broken:
        # a PASS variant searches the whole space: make verify only
        runs.append(Run(model, variant, mode, expect, why=why,
                        short=variant not in seen and expect != PASS, **kw))
        seen.add(variant)
    return runs


#: podzimek's liveness run with the interrupt reader and the detector's
#: wake-up count (mutation round) and the reader without preemption_disable()
#: on its fast path (its hints and slow paths are more steps), and the
#: switch-in's assertions: 10.99 M states, 1.56 GB of pan's memory
LIVE_MEMLIM_PODZIMEK = 2048

#: podzimek_migrate's liveness run: over 45 M states and 1.2 GB when it was
#: stopped (not exhaustive within the memory bound): safety only
LIVE_MIGRATE = False

RUNS = []
RUNS += model_runs("arcu", [
    ("BROKEN_SAMPLE_SKIP", "safety", FREED,
     "arcu_sample_cpu() acks a CPU found in a reader without listing it"),
    ("BROKEN_ALWAYS_NEXT", "safety", FREED,
     "rcu_add_preempted_locked() always picks next_preempted"),
    ("BROKEN_NO_WAIT_PREEMPTED", "safety", FREED,
     "run_gp() skips wait_for_preempted_readers()"),
    ("BROKEN_NO_CS_MB", "safety", PASS,
     "record_cs_qs() without memory_barrier(): redundant, the seq_cst "
     "(release) store after it orders T's loads before it"),
    ("BROKEN_NO_CS_MB_RELAXED", "safety", FREED,
     "record_cs_qs() without memory_barrier() and with a relaxed store"),
    ("BROKEN_NO_CS_MB_AFTER", "safety", FREED,
     "record_cs_qs() without memory_barrier_after_atomic(): the next "
     "reader's loads pass the announcement"),
    ("BROKEN_SAMPLE_DEPTH1", "safety", FREED,
     "arcu_sample_cpu() tests nesting == CNT_INC (depth exactly one)"),
    ("BROKEN_CHECK_BIT", "safety", INVALID_END,
     "the unlock's check and re-check test the preempted bit only: the "
     "inner unlock of a nested section leaves the list"),
    ("BROKEN_UNLOCK_NO_RECHECK", "safety", LIST,
     "rcu_read_unlock_preempted() without its re-check under the lock: "
     "a double list_remove()"),
    ("BROKEN_LEFT_NO_WAKE", "safety", INVALID_END,
     "rcu_preempted_reader_left_locked() never wakes the detector"),
    ("BROKEN_WAITS_AFTER_UNLOCK", "safety", INVALID_END,
     "wait_for_preempted_readers() raises detector_waits_readers after "
     "dropping the lock: a lost wake-up"),
    ("BROKEN_IPI_NO_BARRIER", "safety", FREED,
     "the IPI is not a barrier on the reader's CPU"),
    ("BROKEN_CB_NO_MB", "safety", FREED,
     "no full barrier between the unlink and reading cur_gp for the callback"),
    ("BROKEN_IDLE_LATE_CLEAR", "safety", FREED,
     "CPU 0 runs a reader before it clears its idle flag"),
    ("BROKEN_EL1_RESTORE", "safety", LIST,
     "arm64's return from an EL1 exception restores x18: the IPI's "
     "preempted mark is lost, and the switch-out hook lists the listed "
     "reader again (a double list_append())"),
    ("BROKEN_UNLOCK_NO_CHECK", "safety", INVALID_END,
     "rcu_read_unlock() skips its preempted check: the detector waits forever"),
    ("BROKEN_UNLOCK_NO_CHECK", "liveness", CYCLE,
     "the same: the grace period never ends (ltl gp_ends)"),
])
RUNS += model_runs("podzimek", [
    ("BROKEN_NO_QS_MB", "safety", PASS,
     "rcu_record_qs() without memory_barrier(): redundant, the seq_cst "
     "(release) store after it orders the loads before it"),
    ("BROKEN_NO_QS_MB_RELAXED", "safety", FREED,
     "rcu_record_qs() without memory_barrier() and with a relaxed store"),
    ("BROKEN_NO_QS_MB_AFTER", "safety", FREED,
     "rcu_record_qs() without memory_barrier_after_atomic()"),
    ("BROKEN_LOCK_QS_NESTED", "safety", FREED,
     "rcu_read_lock() records a QS without testing nesting == 0"),
    ("BROKEN_UNLOCK_DEPTH1", "safety", FREED,
     "rcu_read_unlock() takes nesting <= 1 for the outermost unlock"),
    ("BROKEN_RELIST", "safety", LIST,
     "podzimek_after_thread_ran() lists T without testing rcu_preempted: "
     "a double list_append()"),
    ("BROKEN_LEFT_NO_WAKE", "safety", INVALID_END,
     "rcu_preempted_reader_left_locked() never wakes the detector"),
    ("BROKEN_WAITS_AFTER_UNLOCK", "safety", INVALID_END,
     "detector_waits_readers raised after dropping the lock: lost wake-up"),
    ("BROKEN_SAMPLE_SKIP", "safety", FREED,
     "podzimek_sample_cpu() acks a CPU inside a reader"),
    ("BROKEN_NO_WAIT_DELAYING", "safety", FREED,
     "run_gp() does not wait for the delaying CPUs"),
    ("BROKEN_NO_WAIT_PREEMPTED", "safety", FREED,
     "run_gp() skips wait_for_preempted_readers()"),
    ("BROKEN_IPI_NO_BARRIER", "safety", FREED,
     "the IPI is not a barrier on the reader's CPU"),
    ("BROKEN_IDLE_LATE_CLEAR", "safety", FREED,
     "CPU 0 runs a reader before it clears its idle flag"),
    ("BROKEN_UNLOCK_NO_QS", "liveness", CYCLE,
     "the outermost unlock never announces a QS: the GP never ends"),
    ("BROKEN_LOCK_SPLIT", "safety", PASS,
     "rcu_read_lock()'s increment as a load through CPU and a later store "
     "(no preemption_disable()): harmless on one CPU (podzimek_migrate "
     "catches it)"),
    ("BROKEN_UNLOCK_SPLIT", "safety", PASS,
     "rcu_read_unlock()'s decrement split the same way: harmless on one CPU "
     "(podzimek_migrate catches it)"),
], live_memlim=LIVE_MEMLIM_PODZIMEK)
# T migrates: switched out on CPU 0, it may resume on CPU 1 (one switch)
RUNS += model_runs("podzimek_migrate", [
    ("BROKEN_LOCK_SPLIT", "safety", INVALID_END,
     "rcu_read_lock()'s increment as a load through CPU and a later store: "
     "T, preempted between them, resumes on CPU 1 and stores into CPU 0's "
     "count (the one-instruction update is what the reader needs)"),
    ("BROKEN_UNLOCK_SPLIT", "safety", INVALID_END,
     "rcu_read_unlock()'s decrement split the same way: the store on the "
     "CPU T left"),
], pml="podzimek.pml", defs=["-DMIGRATE"], short=False, liveness=LIVE_MIGRATE)
# Two callers of rcu_wait_for_gp() (U and W), T one section, no switch-out:
# a GP past U's target can complete before U looks, so U must wait for
# completed_gp >= target, not == (no broken variant: the mutation score
# checks it; make verify only, a few seconds)
RUNS += model_runs("podzimek_waiters", [], pml="podzimek.pml",
                   defs=["-DWAITERS"], short=False)
RUNS += model_runs("urcu", [
    ("BROKEN_NO_MEMBARRIER", "safety", FREED,
     "writer_barrier() is no barrier on the readers' CPUs"),
    ("BROKEN_UNLOCK_RELAXED", "safety", FREED,
     "the unlock's ctr = 0 store without release"),
    ("BROKEN_NO_WAIT", "safety", FREED,
     "cht_rcu_synchronize() does not wait for readers (CHT_RCU_FI_NO_WAIT)"),
    ("BROKEN_SHARED_GE", "safety", FREED,
     "the shared-GP check gp_completed >= snap"),
    ("BROKEN_NO_SYNC_FENCE", "safety", FREED,
     "cht_rcu_synchronize() without its first full fence"),
    ("BROKEN_SNAPSHOT_RELAXED", "safety", FREED,
     "the reader's load of seq relaxed: its protected load passes it"),
])
RUNS += model_runs("urcu_fence", [
    ("BROKEN_NO_READER_FENCE", "safety", FREED,
     "fence flavour: the reader's fence after its ctr store left out"),
    ("BROKEN_NO_SYNC_FENCE", "safety", FREED,
     "fence flavour: cht_rcu_synchronize() without its first full fence"),
    ("BROKEN_WRITER_NO_FENCE", "safety", FREED,
     "fence flavour: writer_barrier() without its fence (the store of seq "
     "passed by the scan of ctr)"),
    ("BROKEN_SNAPSHOT_RELAXED", "safety", FREED,
     "fence flavour: the reader's load of seq relaxed"),
], pml="urcu.pml", defs=["-DFENCE"])
RUNS += model_runs("urcu_cb", [
    ("BROKEN_SLEEP_RELAXED", "safety", INVALID_END,
     "reclaimer_sleeping = 1 not seq_cst: a lost wake-up"),
    ("BROKEN_LOOK_BEFORE_PUSH", "safety", INVALID_END,
     "cht_rcu_call() looks at reclaimer_sleeping before its push"),
    ("BROKEN_NO_REVERSE", "safety", r"assertion violated .*before_b",
     "reclaimer_main() runs the batch newest first: cht_rcu_barrier() "
     "returns before an earlier callback ran"),
    ("BROKEN_RECLAIM_NO_GP", "safety", r"assertion violated .*pre\[",
     "reclaimer_main() runs the batch without cht_rcu_synchronize()"),
    ("BROKEN_GP_BEFORE_TAKE", "safety", r"assertion violated .*pre\[",
     "reclaimer_main() waits for the grace period before taking the list"),
])
RUNS += model_runs("cht_list", [
    ("BROKEN_NO_MARK", "safety", LOST,
     "remove unlinks without marking: the insert right after it is lost"),
    ("BROKEN_ITEM_NO_GP", "safety", FREED,
     "an unlinked item is freed without a grace period"),
], pml="cht.pml")
RUNS += model_runs("cht_collide", [
    ("BROKEN_REMOVE_NOT_FIRST", "safety", r"assertion violated",
     "cht_remove_key() unlinks with one CAS without only_first: the first "
     "item of the run (another key) is unlinked"),
    ("BROKEN_REMOVE_ANY_KEY", "safety", MISS + "|remove_missed",
     "cht_remove_key() marks equal hashes without key_equal()"),
    ("BROKEN_SEARCH_RETRY_PREV", "liveness", CYCLE,
     "cht__search() continues from prev after a failed unlink CAS "
     "(prev deleted: retries forever)"),
], pml="cht.pml", defs=["-DCOLLIDE"], short=False)
# cht_list with a second cht_remove_key(9) in I's section: concurrent
# removers split the items (cht.h), the two counts sum to 1
RUNS += model_runs("cht_twin", [
    ("BROKEN_REMOVE_MARKED", "safety", r"assertion violated",
     "cht_remove_key() marks an item without its !MARKED test: both "
     "removers count K2"),
], pml="cht.pml", defs=["-DTWIN"], short=False)
RUNS += model_runs("cht_grow", [
    ("BROKEN_PUBLISH_EARLY", "safety", MISS,
     "the new array is published before its dummies are linked"),
    ("BROKEN_DUMMY_RELAXED", "safety", MISS,
     "dummy_link()'s CAS without release: a new dummy's next visible late"),
    ("BROKEN_NO_SECOND_GP", "safety", FREED,
     "the old array is freed right after its dummies are unlinked"),
    ("BROKEN_RETIRE_SKIP_HEAD", "safety", RETIRED,
     "dummies_retire() does not unlink the old dummy of hash 0 (its search "
     "from the head skipped): the old array is freed while linked"),
    ("BROKEN_SEARCH_RETRY_PREV", "liveness", CYCLE,
     "cht__search() continues from prev after a failed unlink CAS"),
], pml="cht.pml", defs=["-DGROW"], short=False)
RUNS += model_runs("cht_shrink", [
    ("BROKEN_NO_FIRST_GP", "liveness", CYCLE,
     "no grace period between publish and retire: an insert retries forever"),
    ("BROKEN_RETIRE_SKIP_HEAD", "safety", RETIRED,
     "dummies_retire() does not unlink the old dummy of hash 0"),
], pml="cht.pml", defs=["-DSHRINK"], short=False)


def parse(out):
    """pan's statistics: errors, stored, transitions, depth, seconds."""
    def num(pattern, cast=int):
        m = re.search(pattern, out)
        return cast(m.group(1)) if m else None
    return {
        "errors": num(r"errors: (\d+)"),
        "stored": num(r"([\d.e+]+) states, stored", lambda s: int(float(s))),
        "transitions": num(r"([\d.e+]+) transitions", lambda s: int(float(s))),
        "depth": num(r"depth reached (\d+)"),
        "pan_time": num(r"elapsed time ([\d.e+-]+) seconds", float),
    }


def sh(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def run_one(run):
    """Runs @run; returns a dict with the statistics, ok and a reason."""
    spin = shutil.which("spin")
    if not spin:
        return {"ok": False, "reason": "spin not installed "
                "(tools/ensure-deps.sh verify installs it)"}
    d = os.path.join(WORK, run.model, "%s-%s" % (run.variant or "model",
                                                 run.mode))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    pml = run.pml
    shutil.copy(os.path.join(HERE, pml), d)
    t0 = time.monotonic()
    defs = run.defs + (["-D" + run.variant] if run.variant else [])
    rc, out = sh([spin] + defs + ["-a", pml], d)
    if rc != 0:
        return {"ok": False, "reason": "spin -a failed:\n" + out}
    # A broken variant stops at its first error: compile it quickly (-O0);
    # a correct model searches its whole state space (-O1).
    opt = "-O0" if run.broken else "-O1"
    cflags = [opt, "-w", "-DMEMLIM=%d" % run.memlim] + run.cflags
    if run.mode == "safety":
        cflags += ["-DSAFETY", "-DNOCLAIM"]
        pan_args = ["-m%d" % DEPTH]
    else:
        cflags += ["-DNFAIR=3"]
        pan_args = ["-a", "-f", "-m%d" % DEPTH]
    rc, cout = sh(["gcc"] + cflags + ["-o", "pan", "pan.c"], d)
    if rc != 0:
        return {"ok": False, "reason": "gcc pan.c failed:\n" + cout}
    rc, out = sh(["./pan"] + pan_args, d)
    wall = time.monotonic() - t0
    with open(os.path.join(d, "pan.out"), "w") as f:
        f.write(out)
    res = parse(out)
    res["wall"] = wall
    res["dir"] = os.path.relpath(d, REPO)
    trail = os.path.join(d, pml + ".trail")
    res["trail"] = os.path.exists(trail)
    first = re.search(r"^pan:1: (.*)$", out, re.M)
    res["error"] = first.group(1).strip() if first else ""
    incomplete = re.search(r"max search depth too small|"
                           r"out of memory|reached -DMEMLIM", out)
    if res["errors"] is None:
        res.update(ok=False, reason="no 'errors:' line in pan's output "
                   "(see %s/pan.out)" % res["dir"])
    elif not run.broken:
        # the correct model, or a variant that must verify (PASS)
        if res["errors"] != 0:
            res.update(ok=False, reason="model FAILED: %s (trail in %s)"
                       % (res["error"], res["dir"]))
        elif incomplete:
            res.update(ok=False, reason="search incomplete: "
                       + incomplete.group(0))
        else:
            res.update(ok=True, reason="0 errors, complete search")
    else:
        if res["errors"] < 1:
            res.update(ok=False, reason="broken variant NOT caught: 0 errors "
                       "(%s)" % run.why)
        elif not res["trail"]:
            res.update(ok=False, reason="error reported but no .trail written")
        elif run.expect and not re.search(run.expect, res["error"]):
            res.update(ok=False, reason="failed for another reason: '%s' "
                       "(expected /%s/)" % (res["error"], run.expect))
        else:
            res.update(ok=True, reason="caught: %s; trail %s/%s.trail "
                       "(replay: spin %s -t -p %s)" % (
                           res["error"], res["dir"], pml,
                           " ".join(defs), pml))
    return res


def fmt(n):
    return "-" if n is None else str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--short", action="store_true",
                    help="only the short runs (those make test runs)")
    ap.add_argument("--only", action="append", default=[],
                    help="only this model (repeatable)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    runs = [r for r in RUNS if (not args.short or r.short) and
            (not args.only or r.model in args.only)]
    if args.list:
        for r in runs:
            print("%-45s %s" % (r.name, r.why))
        return 0
    hdr = "%-11s %-26s %-8s %10s %11s %6s %7s  %s" % (
        "model", "variant", "mode", "stored", "transitions", "depth",
        "time(s)", "verdict")
    rows = []
    bad = 0
    t0 = time.monotonic()
    for r in runs:
        res = run_one(r)
        verdict = ("PASS" if r.broken is False else "CAUGHT") if res["ok"] \
            else "FAIL"
        bad += not res["ok"]
        row = "%-11s %-26s %-8s %10s %11s %6s %7.2f  %s" % (
            r.model, r.variant or "(model)", r.mode, fmt(res.get("stored")),
            fmt(res.get("transitions")), fmt(res.get("depth")),
            res.get("wall", 0.0), verdict)
        rows.append(row)
        print(row + ("" if res["ok"] else "\n    " + res["reason"]),
              flush=True)
    print()
    print(hdr)
    for row in rows:
        print(row)
    print("\n%d runs, %d failed, %.1f s (time: spin + gcc + pan, wall)"
          % (len(runs), bad, time.monotonic() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
