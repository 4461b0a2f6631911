"""The Big-Memory benchmark's workloads, small, for correctness only
(`make -C uspace bench-big`, bench/userspace/big.c and run_big.py).

Every table of `bench_us list` (except the pointer and presized variants,
which run as the presized growth) goes through every workload at 2^14 keys
and 2 threads: growth from empty and into a presized table, lookups, YCSB
A/B/C/D/F uniform and zipfian, forced resizes (where the table allows them),
churn, the rate-limited soak, the threshold crossing, then the check (every
key present with a value the harness wrote, then removed) and the teardown.
Asserted: no error of any kind (a lost key, a wrong value, a failed insert or
remove, an absent key found), every workload ran (or says why it cannot),
the key counts, and the heap back to its start after the teardown. Never a
time. The negative control (-X: a key silently not inserted) must fail the
check, so the check can fail.

Needs the peers (make -C uspace bench-deps); skipped without them.
"""

import os
import subprocess
import time

import pytest

from conftest import build_bench_us, skip_without_deps

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "build", "bench-userspace", "bench_us")

#: Every table runs these (names as in big.c's rows).
WORKLOADS = (["grow", "lookup-hit", "lookup-miss"]
             + ["ycsb-%s-%s" % (m, d) for m in "cbafd"
                for d in ("uniform", "zipf")]
             + ["shrink", "soak-lookups-alone", "soak-lookups", "soak-writes",
                "check", "crossing", "crossing-check"])
#: The heap a table may keep after its teardown (per-thread caches of the
#: libraries: ck_epoch records, liburcu's thread registry, TBB's pools).
HEAP_LEFT_MAX = 256 << 10
#: ... and for TBB's tables the first region tbbmalloc maps (2.3 MiB, kept
#: for the process's life): the allocator's figure counts the resident part
#: of a library's own mappings (bench/userspace/mapcount.c), and the pages
#: the tables touched in it stay resident after the caches are emptied
#: (0.6 MB at 2^14 keys, 2.0 MB at 2^20).
HEAP_LEFT_TBB = (5 << 19) + HEAP_LEFT_MAX


def heap_left_max(peer):
    """The heap ``peer`` may keep after its teardown."""
    return HEAP_LEFT_TBB if peer.startswith("tbb") else HEAP_LEFT_MAX


@pytest.fixture(scope="module")
def big():
    skip_without_deps("test-user", "the userspace peers are missing (make "
                      "-C uspace bench-deps)")
    build_bench_us()
    from bench.userspace import run_big
    return run_big


@pytest.fixture(scope="module")
def test_run(big, tmp_path_factory):
    """One run of the test plan; returns (exit status, rows, peers)."""
    out = str(tmp_path_factory.mktemp("big"))
    rc = big.main(["--test", "--out", out, "--no-plots", "--no-build"])
    import json
    with open(os.path.join(out, "big.json")) as f:
        doc = json.load(f)
    return rc, doc["rows"], doc["meta"]


def test_every_peer_listed(big):
    peers = big.peers_of(big.list_impls())
    for p in ("cht", "chtmap-u64", "lfht-memb", "lfht-qsbr", "cuckoo", "ckhs", "tbb-hm",
              "tbb-um", "rwlock"):
        assert p in peers, "%s missing from the big run's tables %s" % (
            p, peers)
    assert not [p for p in peers if p.endswith(("-presized", "-ptr"))]


def test_report_order_names_real_tables(big):
    """Every name in the report's ORDER is a table of the big run: a name
    that no table has (a renamed peer) silently sends that table to the end
    of the report (it once named ``cht-map`` after the map was renamed)."""
    peers = big.peers_of(big.list_impls())
    stale = [n for n in big.ORDER if n not in peers]
    assert not stale, "ORDER names no table of the big run: %s (tables %s)" % (
        stale, peers)
    assert len(set(big.ORDER)) == len(big.ORDER), "ORDER repeats a name"


def test_big_workloads_correct(test_run):
    rc, rows, meta = test_run
    assert not meta["failures"], "\n".join(meta["failures"])
    assert rc == 0
    by, b_run = {}, {}
    for r in rows:
        by.setdefault(r["peer"], {})[(r["workload"], r["metric"])] = r["value"]
        if r["run"] == "B":
            b_run.setdefault(r["peer"], {})[(r["workload"], r["metric"])] = \
                r["value"]
    keys = meta["keys"]
    for peer in meta["peers"]:
        d = by.get(peer)
        assert d, "%s: no rows" % peer
        errs = {k: v for k, v in d.items()
                if k[1] in ("errors", "ring_errors") and v != 0}
        assert not errs, "%s: errors %s" % (peer, errs)
        for wl in WORKLOADS:
            assert (wl, "errors") in d, "%s: %s did not run" % (peer, wl)
        for wl in ("resize", "churn"):
            ran = (wl + "-resizing" if wl == "resize" else wl, "errors") in d
            assert ran or (wl, "unsupported") in d, (
                "%s: %s neither ran nor said it cannot" % (peer, wl))
        assert ("grow-presized", "errors") in d, "%s: no presized run" % peer
        assert d[("grow", "ops")] == keys
        assert d[("grow-presized", "ops")] == keys
        # Churn and YCSB D move and extend the key window, the shrink cuts
        # it to an eighth: the check saw exactly the kept keys.
        # (The presized run checks its N keys: the B run's rows here.)
        b = b_run[peer]
        assert b[("check", "keys")] == b[("shrink", "keys_after")]
        _check_shrink(peer, b)
        assert d[("crossing-check", "keys")] == d[("crossing", "to_keys")]
        _check_crossing_placed(peer, d)
        assert d[("memory", "heap_left_bytes")] < heap_left_max(peer), (
            "%s: %d bytes of heap left after the teardown" % (
                peer, d[("memory", "heap_left_bytes")]))
        _check_memory_reported(peer, d)


#: The tables that give memory back when their keys are deleted: their
#: nodes go back to malloc (after a grace period) and their bucket arrays
#: shrink. The others keep it: open addressing (ck, libcuckoo) never
#: shrinks, TBB's tbbmalloc keeps its pools, the managed maps' allocator
#: returns only wholly free 64 KiB slabs (after the churn, the byte-string
#: map gave back 0.75 of the 2.27 MiB its growth took), and the inline 8-byte
#: map never shrinks.
SHRINKS = ("cht", "lfht-memb", "lfht-qsbr", "rwlock")
#: ... and the tables whose bucket count falls (the byte-string map's CHT
#: shrinks, its slabs stay).
FEWER_BUCKETS = ("cht", "rwlock", "chtmap")
#: The grow limit (items per bucket) of the intrusive libcht table: after
#: the shrink it must have at most twice the buckets the kept keys need at
#: that load (what a growth to the same count leaves). libcht's default
#: limit is 1 (uspace's cht_env_posix.h). A shrink that stopped once the
#: load was back at a quarter of the limit left 4x (2^14 keys: 8192 buckets
#: for 2048, bench/RESULTS.md). With that rule put back (bench_us rebuilt
#: from it), 3 of 4 runs of the test plan failed here (14,343 kept keys in
#: 32,768 buckets, 14,025 in 32,768, 17,013 in 65,536) and one passed
#: (17,113 in 32,768: the shrink ran while the deletes went on, and the
#: table's approximate count saw the quarter when the keys were just above
#: a power of two); the fixed rule left 16,384 for 12,247-15,284 kept keys
#: in 3 of 3. The deterministic test of the rule is test_api's
#: test_shrink_deep (uspace/tests).
SHRINK_LOAD = {"cht": 1.0}


def _check_shrink(peer, d):
    """The shrink (the window's keys deleted down to an eighth, big.c
    phase_shrink()): every delete succeeded, every deleted key is absent,
    the counts exact; no table holds more memory after deleting; a table
    that frees and shrinks (SHRINKS) gave back at least half of what its
    growth took; the tables in FEWER_BUCKETS have fewer buckets, those in
    SHRINK_LOAD at most twice what the kept keys need at their load."""
    g = lambda m: d[("shrink", m)]
    n, kept = g("keys_before"), g("keys_after")
    assert n >= d[("grow", "ops")] and kept == n // 8, (peer, n, kept)
    assert g("ops") == n - kept, "%s: %d deletes for %d keys" % (
        peer, g("ops"), n - kept)
    assert g("errors") == 0 and g("absent_errors") == 0, (
        "%s: shrink: %d failed deletes, %d deleted keys found" % (
            peer, g("errors"), g("absent_errors")))
    before, after = g("heap_before_mb"), g("heap_settled_mb")
    # (Slack: a library's own mappings count by their resident pages, and
    # tbbmalloc touches some of its metadata while freeing.)
    assert after <= before * 1.0625 + 0.0625, "%s: %.3f MiB after " \
        "deleting, %.3f before" % (peer, after, before)
    if peer in SHRINKS:
        grown = d[("grow", "final_heap_mb")]
        assert before - after >= grown / 2, "%s: deleting 7/8 of the keys " \
            "gave back %.3f MiB of the %.3f its growth took" % (
                peer, before - after, grown)
    if peer in FEWER_BUCKETS:
        assert g("buckets_after") < g("buckets_before"), (
            "%s: still %d buckets after the shrink" % (
                peer, g("buckets_after")))
    if peer in SHRINK_LOAD:
        most = 2 * kept / SHRINK_LOAD[peer]
        assert g("buckets_after") <= most, (
            "%s: %d buckets after the shrink for %d keys, more than %d "
            "(twice what they need at its load %g)" % (
                peer, g("buckets_after"), kept, most, SHRINK_LOAD[peer]))


#: The bytes a table must at least hold per 8-byte key and value: the key
#: and the value (ck_hs is a set: its value is the key).
MIN_BYTES_PER_KEY = {"ckhs": 8}


def _check_memory_reported(peer, d):
    """Every table reports its memory the same way: RSS and the allocator's
    figure (malloc's bytes in use plus what the library mapped itself,
    bench/userspace/mapcount.c), per key, after the growth and the presized
    growth; neither may be missing or below what the keys and values alone
    take. The allocator's figure was 0.03 bytes per key for TBB's tables
    (tbbmalloc maps its own memory) and 9 for the managed inline map (its
    bucket segments are mmap'ed) before mapcount.c."""
    least = MIN_BYTES_PER_KEY.get(peer, 16)
    # Huge pages at every timed phase's end (0 is a figure: this size gets
    # none in madvise mode).
    for wl in ("grow", "grow-presized", "lookup-hit", "shrink"):
        assert d.get((wl, "anon_huge_mb"), -1) >= 0, (
            "%s: %s reports no AnonHugePages" % (peer, wl))
    for wl in ("grow", "grow-presized"):
        for m in ("bytes_per_key_heap", "bytes_per_key_rss"):
            v = d.get((wl, m))
            assert v is not None, "%s: %s reports no %s" % (peer, wl, m)
            assert v >= least, "%s: %s %s %.2f, below the %d bytes its " \
                "keys and values take" % (peer, wl, m, v, least)


def _check_crossing_placed(peer, d):
    """The crossing window of ``peer`` (rows ``d``) starts below the grow
    point it was placed at and holds a resize: the bucket count crossed a
    power of two between the window's start and its end. A table that does
    not say its size (ck_hs, ck_ht, cds_lfht) or that has no grow point at
    or below N (libcuckoo's first table holds 2^18 keys) says so instead.
    The control (the same window into a table created for it) ran too."""
    g = lambda m: d[("crossing", m)]
    lo, at, hi = g("from_keys"), g("at_keys"), g("to_keys")
    assert lo <= at < hi, "%s: window [%d, %d) misses its grow point %d" % (
        peer, lo, hi, at)
    if g("crossed") == -1:
        assert g("buckets_before") == -1 or g("no_grow_point") == 1, (
            peer, g("buckets_before"), g("no_grow_point"))
    else:
        b0, b1 = int(g("buckets_before")), int(g("buckets_after"))
        assert g("crossed") == 1 and b0.bit_length() < b1.bit_length(), (
            "%s: no resize in the crossing window [%d, %d): %d -> %d "
            "buckets" % (peer, lo, hi, b0, b1))
        # The resize was seen inside the window, after its start.
        assert lo < g("crossed_at_keys") <= hi, (peer, g("crossed_at_keys"))
    pb0, pb1 = (int(d[("crossing-presized", "buckets_before")]),
                int(d[("crossing-presized", "buckets_after")]))
    assert pb0 < 0 or pb0.bit_length() == pb1.bit_length(), (
        "%s: the control resized in its window: %d -> %d buckets" % (
            peer, pb0, pb1))
    assert d[("crossing-presized", "errors")] == 0
    assert d[("crossing-presized", "ops")] == hi - lo
    assert d[("crossing-presized-check", "keys")] == hi


def test_crossing_at_the_librarys_grow_point(big):
    """The intrusive table says its grow point (cht_stats_t.grow_at: the
    load limit times the buckets); `-w crossing` alone places the window
    there without a grow phase: 2^14 keys, load 1, so the last grow an
    insert of the N keys requests is at 2^13 items, from 2^13 to 2^14
    buckets. The window runs until the resizer published the new array."""
    p = subprocess.run([BIN, "big", "cht", "-k", "16384", "-t", "2", "-w",
                        "crossing"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    assert ("grow", "ops") not in d, "the grow phase ran"
    assert d[("crossing", "at_keys")] == 8192
    assert d[("crossing", "buckets_before")] == 8192
    assert d[("crossing", "buckets_after")] >= 16384
    _check_crossing_placed("cht", d)
    assert d[("crossing-check", "errors")] == 0
    assert d[("memory", "heap_left_bytes")] < HEAP_LEFT_MAX


def test_crossing_tail_attribution(big):
    """-A files each insert of the crossing window and of its presized
    control by what the kernel did to the inserting thread meanwhile (a
    page fault, a context switch, neither: before or after the grow
    published) and says how many of the phase's slowest 0.1 % each class
    holds (bench/RESULTS.md, "Where the crossing's tail goes"). Asserted:
    the classes count every timed insert exactly once; the faulting inserts
    are no more than the threads' page faults (the phase's `faults` row,
    getrusage(RUSAGE_THREAD) around each worker's body), and both took
    some (their items are new heap: test_crossing_control_takes_new_pages);
    the slowest 0.1 % is split among the classes; the control has no
    "after publish" inserts (its table never grows)."""
    p = subprocess.run([BIN, "big", "cht", "-k", "65536", "-t", "2", "-A",
                        "-w", "crossing"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    classes = ("clean_before_publish", "clean_after_publish", "fault",
               "switch")
    for wl in ("crossing", "crossing-presized"):
        ops = d[(wl, "ops")]
        filed = sum(d[(wl, "attrib_%s_ops" % c)] for c in classes)
        assert filed == ops, "%s: %d inserts filed of %d" % (wl, filed, ops)
        assert 1 <= d[(wl, "attrib_fault_ops")] <= d[(wl, "faults")], (
            "%s: %d faulting inserts, %d page faults" % (
                wl, d[(wl, "attrib_fault_ops")], d[(wl, "faults")]))
        above = sum(d[(wl, "attrib_%s_above_p999" % c)] for c in classes)
        assert above == d[(wl, "attrib_above_p999")]
        assert above <= ops / 1000 + 1, (wl, above, ops)
        assert d[(wl, "switches")] >= d[(wl, "attrib_switch_ops")]
        assert 0 <= d[(wl, "switches_preempted")] <= d[(wl, "switches")]
        # The host's steal (ms over all CPUs, read in ticks of 10 ms) fits
        # in the phase's CPU time.
        ncpu = os.cpu_count() or 1
        assert 0 <= d[(wl, "steal_ms")] <= (
            d[(wl, "seconds")] * 1e3 + 20) * ncpu, d[(wl, "steal_ms")]
    assert d[("crossing", "attrib_clean_after_publish_ops")] > 0, (
        "no insert after the grow published: the window did not cross")
    assert d[("crossing-presized", "attrib_clean_after_publish_ops")] == 0


def test_crossing_control_takes_new_pages(big):
    """The crossing's control (its presized table) inserts into memory the
    process has not used before, as the crossing window does (big.c,
    phase_crossing()). When it ran after the crossing's table was
    destroyed, its items reused that table's resident chunks: 1 faulting
    insert of the control's 1.1-1.6 M against the window's 17.8-24.8 k at
    1e7 keys, and the p99.9 ratio compared page faults with none
    (bench/RESULTS.md, "Where the crossing's tail goes"). malloc_trim(0)
    before the control did not fix it: glibc keeps the top of a thread
    arena's last heap, the whole heap at this size (the control took 1
    fault per 300-700 inserts, the window 1 per 64). Now the crossing's
    table stays while the control runs (row control_beside_window), so
    the control's items cannot reuse its pages.

    Asserted on the faults rows (getrusage(RUSAGE_THREAD) around each
    worker's body): the window takes at least 0.9 faults per 64 inserts
    (a 4 KiB page holds 64 of the 64-byte chunks), and the control at
    least half the window's rate per insert (the two windows' lengths
    differ with where the workers stopped)."""
    p = subprocess.run([BIN, "big", "cht", "-k", "65536", "-t", "2",
                        "-w", "crossing"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    assert d[("crossing", "control_beside_window")] == 1
    rate = {}
    for wl in ("crossing", "crossing-presized"):
        ops, faults = d[(wl, "ops")], d[(wl, "faults")]
        assert ops > 0, wl
        rate[wl] = faults / ops
    assert rate["crossing"] * 64 >= 0.9, (
        "the window took %.4f page faults per insert, fewer than its items' "
        "pages (1/64)" % rate["crossing"])
    assert 2 * rate["crossing-presized"] >= rate["crossing"], (
        "the control took %.4f page faults per insert, the window %.4f: it "
        "reused resident memory" % (rate["crossing-presized"],
                                    rate["crossing"]))


def test_monitor_leaves_the_cpus_to_the_workers(big):
    """The main thread of `bench_us big` sleeps while a phase runs until the
    next whole second, the phase's end or a worker's return (big.c,
    ph_wait()), so that on a host whose CPUs the workers and a library's
    threads fill it preempts nobody. It polled every 10 ms before: 2,125 of
    the 2,262 switches of the crossing's inserting thread at 1e8 keys were
    this thread's wake-ups (sched_switch traced, bench/RESULTS.md, "Where
    the crossing's tail goes"). Asserted on 2-second timed phases: at most
    5 of its context switches per second of phase (it measured 4 per
    phase; polling makes about 100 per second), and every phase says its
    figure."""
    p = subprocess.run([BIN, "big", "cht", "-k", "65536", "-t", "1", "-d",
                        "2", "-w", "grow,lookup"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    for wl in ("grow", "lookup-hit", "lookup-miss"):
        assert (wl, "monitor_switches") in d, "%s: no monitor_switches" % wl
    for wl in ("lookup-hit", "lookup-miss"):
        secs, sw = d[(wl, "seconds")], d[(wl, "monitor_switches")]
        assert secs >= 1.9, (wl, secs)
        assert sw <= 5 * (secs + 1), (
            "%s: the main thread switched %d times in a %.1f s phase" % (
                wl, sw, secs))


def test_check_catches_a_lost_key(big):
    """Negative control: key 7 never reaches the table (-X)."""
    p = subprocess.run([BIN, "big", "cht", "-k", "4096", "-t", "2", "-w",
                        "grow", "-X"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 1, p.stderr[-2000:]
    errs = [ln for ln in p.stdout.splitlines()
            if ln.startswith("big,cht,check,") and ",errors," in ln]
    assert errs and float(errs[0].split(",")[-1]) == 1, p.stdout[-2000:]


@pytest.mark.parametrize("args,says", [
    (["-k", "-5"], "-k -5: not a count"),
    (["-k", "4096x"], "not a count"),
    (["-k", "4096.5"], "not a count"),
    (["-t", "99999999999999999999"], "not a count"),
    (["-d", "-1"], "not a number of 0 or more"),
    (["-S", "nan"], "not a number of 0 or more"),
    (["-w", "grow,nosuch"], "no phase 'nosuch'"),
    (["-w", "lookup,,grow"], "no phase ''"),
])
def test_bad_arguments_are_refused(big, args, says):
    """A bad option value ends bench_us big with the usage (exit 2) before
    any table exists: before, -k -5 became 2^64 - 5 keys and inserted until
    memory ran out, and an unknown phase was silently skipped."""
    p = subprocess.run([BIN, "big", "chtmap-u64", "-Q"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=20)
    assert p.returncode == 2 and says in p.stderr, (p.returncode,
                                                     p.stderr[-500:])
    assert not p.stdout, p.stdout[-500:]


def test_counts_in_exponent_form_are_accepted(big):
    """-k 4.096e3 is 4096 keys (the Makefile's KEYS=1e8 form)."""
    p = subprocess.run([BIN, "big", "chtmap-u64", "-k", "4.096e3", "-w",
                        "grow", "-Q"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-500:]
    assert "big,chtmap-u64,grow,4096,1," in p.stdout, p.stdout[:500]


def test_heap_sampler_leaves_the_allocator_to_the_workers(big):
    """The per-second heap figure (mallinfo2(), which holds each arena's lock
    while it walks that arena's free chunks) may not starve the workers.
    -F leaves 10^6 small chunks freed in scattered order in the arena the
    phases' worker mallocs from, the heap that 1e8 items leave after the
    churn and the check: there the intrusive table's crossing fill made 0-141
    inserts a second and the watchdog stopped it. The sampler
    waits HEAP_DUTY (50) times a sample's duration before the next one, so
    its share of the churn phase stays below 1/51; with a sample every second
    (the defect) the fill and the churn stall (exit 3) or the share is far
    above it."""
    p = subprocess.run([BIN, "big", "cht", "-k", "262144", "-t", "1", "-w",
                        "churn", "-c", "4", "-Q", "-F", "1000000"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    assert d[("grow", "ops")] == 262144
    share = d[("churn", "heap_lock_share")]
    assert share <= 0.03, "the heap sampler held the allocator %.3f of " \
        "the churn phase (max sample %.1f ms)" % (
            share, d[("churn", "heap_sample_max_ms")])
    if d[("churn", "heap_sample_max_ms")] >= 100:
        # A slow sample was followed by repeated figures.
        assert d[("churn", "heap_stale_secs")] >= 1


def _stallcheck(seconds):
    """`bench_us stallcheck` on ``seconds``: (progress, run, wait) per
    second; returns its verdict line."""
    text = "".join("%d %.4f %.4f\n" % s for s in seconds)
    p = subprocess.run([BIN, "stallcheck"], input=text,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_watchdog_tells_a_starved_process_from_a_stall(big):
    """The progress watchdog judges operations per second of the CPU the
    process received, not per wall second. The made-up phases: the check
    that `make test` once saw stopped (ckht, 1,759 operations per wall
    second over 30 s) while the process, at nice 19 beside a CPU-bound
    process at nice -15, ran 1 ms a second and waited for a CPU the rest:
    not a stall, however long. A table that burns its CPU at 53 operations
    per CPU second (a lost resize), one that stops with its threads blocked
    (neither running nor waiting), and one that falls to 1/100 of its best
    rate are stalls. No time is measured: the seconds are given."""
    starved, livelock, blocked, slowed = [], [], [], []
    p = 0
    for t in range(400):
        p += 1759 if t < 30 else 60 if t < 200 else 0
        starved.append((p, 0.001, 1.999))
    assert _stallcheck(starved) == "ok 400"
    p = 0
    for t in range(200):
        p += 100
        livelock.append((p, 1.9, 0.1))
    assert _stallcheck(livelock).startswith("stalled 31: 53 ops per CPU "
                                            "second"), _stallcheck(livelock)
    blocked = [(5000, 0.0, 0.0)] * 200
    assert _stallcheck(blocked).startswith("stalled 121: no operation")
    p = 0
    for t in range(200):
        p += 1000000 if t < 40 else 10000
        slowed.append((p, 1.0, 0.5))
    assert _stallcheck(slowed).startswith("stalled 71: ") and \
        "below 1/50 of the phase's best" in _stallcheck(slowed)


def test_watchdog_catches_a_gradual_decay(big):
    """A table that loses its resize at its first grow slows as its chains
    lengthen: cds_lfht memb's crossing fill at 1e8 keys (session 19) ran
    594,000 inserts in its first second, 1.76 M by 10 s, 14.7 M by 860 s,
    about 594,000 * t^0.475 inserts by second t, and was stopped by hand:
    its first 30-second window was its best, and no later one fell below
    1/50 of it. The phase's best counts single seconds too, so this one is
    stopped once a window runs below 1/50 of its first second's rate (at
    about 430 s). Healthy phases are not: one that starts six times faster
    than it ends, stops for 7 s at each of its resizes, and whose progress
    arrives once per second of another clock (a watchdog second then holds
    two of them now and then); and a phase that waits for a CPU most of
    every second. No time is measured: the seconds are given."""
    decay = [(int(594000 * t ** 0.475), 1.0, 0.0) for t in range(1, 1001)]
    v = _stallcheck(decay)
    assert v.startswith("stalled ") and \
        "below 1/50 of the phase's best" in v, v
    assert 300 <= int(v.split()[1].rstrip(":")) <= 600, v
    healthy = []
    p = 0
    for t in range(1000):
        # Progress arrives at whole seconds of a clock 1.3 % faster than
        # the watchdog's: every 77th watchdog second holds two arrivals,
        # the first one second 4, in the fast start (best 6 M, not 3 M).
        arrivals = int((t + 1) * 1.013 + 0.95) - int(t * 1.013 + 0.95)
        for _ in range(arrivals):
            p += 3000000 if t < 5 else 0 if t % 100 >= 93 else 500000
        healthy.append((p, 1.0, 0.0))
    assert _stallcheck(healthy) == "ok 1000"
    starved = []
    p = 0
    for t in range(1000):
        p += 1500 if t % 2 else 0
        starved.append((p, 0.002, 1.9))
    assert _stallcheck(starved) == "ok 1000"


def test_watchdog_leaves_a_pause_to_the_idle_rule(big):
    """A stop-the-world rehash burns the CPU and completes nothing: ck_ht
    created for 1e8 keys still rehashed at 2^26 (session 20) and the
    watchdog stopped its fill after 59 s ("0 ops per CPU second over the
    last 30 s"). Rates count only the seconds that made progress, and a
    window is judged by them only when at least half its seconds did, so
    the made-up fill (2.3 M inserts a second, 10,000 in the second the
    rehash begins, 45 s of rehash on a full CPU, 2.3 M a second again)
    runs on; a fill that stops for good is still stopped by the idle rule
    (nothing for 120 s), and the gradual decay by the rates."""
    fill, p = [], 0
    for t in range(200):
        p += 2300000 if t < 29 or t >= 75 else 10000 if t == 29 else 0
        fill.append((p, 1.0, 0.0))
    assert _stallcheck(fill) == "ok 200", _stallcheck(fill)
    stopped, p = [], 0
    for t in range(300):
        p += 2300000 if t < 29 else 0
        stopped.append((p, 1.0, 0.0))
    assert _stallcheck(stopped).startswith("stalled 149: no operation")


def test_rounds_repeat_every_point(big, tmp_path):
    """`bench_us big -R 3 -1` (run_big_reps.py's repetitions): every lookup
    point at 2 threads and at 1, every YCSB point, once per round, each
    round's rows marked #1..#3 and free of errors; the driver reports each
    point as the median of its samples. It runs the driver's own build step
    as `make -C uspace bench-big-reps` does (bench_us is built: a no-op
    make), which had stopped working (`build() missing 1 required
    positional argument`) with no test to say so."""
    from bench.userspace import run_big_reps
    out = str(tmp_path)
    rc = run_big_reps.main(["--keys", "16384", "--passes", "2", "--rounds",
                            "3", "--secs", "0.02", "--only", "chtmap-u64,cht",
                            "--out", out, "--results",
                            os.path.join(out, "R.md")])
    import json
    with open(os.path.join(out, "big-reps-2t.json")) as f:
        doc = json.load(f)
    assert rc == 0, doc["meta"]["failures"]
    seen = {}
    for r in doc["rows"]:
        if r["metric"] == "errors":
            assert r["value"] == 0, r
        if r["metric"] == "mops" and "#" in r["workload"]:
            base, rd = r["workload"].rsplit("#", 1)
            seen.setdefault((r["peer"], base, r["threads"]), []).append(
                (r["run"], int(rd)))
    for peer in ("chtmap-u64", "cht"):
        for wl, th in run_big_reps.points(2):
            got = sorted(seen.get((peer, wl, th), []))
            assert got == [(run, rd) for run in ("R1", "R2")
                           for rd in (1, 2, 3)], (peer, wl, th, got)
    s = run_big_reps.summarize(doc["rows"])
    vals = s[("cht", "lookup-hit", 1, "mops")]
    assert len(vals) == 6
    text = open(os.path.join(out, "R.md")).read()
    assert "userspace-big-reps-2t:begin" in text
    import statistics
    assert run_big_reps.cell(vals).startswith(
        run_big_reps.rb.fmt(statistics.median(vals)))


def _rows(stdout, impl):
    """{(workload, metric): value} of `bench_us big IMPL` rows."""
    d = {}
    for ln in stdout.splitlines():
        f = ln.split(",")
        if ln.startswith("big,%s," % impl) and len(f) == 7:
            d[(f[2], f[5])] = float(f[6])
    return d


def test_forced_growth_of_the_managed_map(big):
    """The resize phase of a table that only grows (chtmap-u64:
    cht_map_u64_reserve() through the adapter's grow): 3 rounds of lookups at
    the present size, then lookups while a thread grows the map by a third of
    its first bucket count, so that it ends at twice that; every lookup hit,
    every key there at the check, and the crossing's fill and inserts pass a
    power of two of the bucket count (linear hashing: the start of a level)."""
    p = subprocess.run([BIN, "big", "chtmap-u64", "-k", "65536", "-t", "2",
                        "-R", "3", "-d", "0.05", "-w", "resize,crossing"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "chtmap-u64")
    b0 = d[("resize-fixed-n#1", "buckets")]
    prev = b0
    for rd in (1, 2, 3):
        wl = "resize-resizing#%d" % rd
        assert d[(wl, "errors")] == 0 and d[(wl, "ops")] > 0, (wl, d)
        assert d[(wl, "buckets_a")] == prev
        # Grown to b0 + b0 * rd / 3 at least (the grower's target).
        assert d[(wl, "buckets_b")] >= b0 + b0 * rd // 3, (wl, d)
        assert d[("resize-fixed-n#%d" % rd, "errors")] == 0
        prev = d[(wl, "buckets_b")]
    assert d[("resize-fixed-m", "buckets")] >= 2 * b0
    assert d[("check", "errors")] == 0 and d[("check", "keys")] == 65536
    before, after = (d[("crossing", "buckets_before")],
                     d[("crossing", "buckets_after")])
    assert int(before).bit_length() < int(after).bit_length(), (before, after)
    assert d[("crossing-check", "errors")] == 0
    assert d[("memory", "heap_left_bytes")] < HEAP_LEFT_MAX


def test_forced_resize_rounds(big):
    """The resize phase of a table with a resize on demand (cht), -R 2: the
    fixed sizes and the flips once per round, rows #1 and #2, the table
    flipped at least once per round, no lookup missed."""
    p = subprocess.run([BIN, "big", "cht", "-k", "65536", "-t", "2", "-R",
                        "2", "-d", "0.2", "-w", "resize", "-Q"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    for rd in (1, 2):
        for wl in ("resize-fixed-n", "resize-fixed-m", "resize-resizing"):
            assert d[("%s#%d" % (wl, rd), "errors")] == 0, (wl, rd)
        assert d[("resize-resizing#%d" % rd, "resizes")] >= 2
        assert (d[("resize-resizing#%d" % rd, "buckets_b")] * 2
                == d[("resize-resizing#%d" % rd, "buckets_a")])


def test_resizes_that_starve_lookups_are_not_a_stall(big):
    """libcuckoo's rehash holds every bucket lock, so lookups beside forced
    resizes back to back complete none (the 1e8 run of session 20: "cuckoo:
    resize-resizing stalled after 31.4 s: 0 ops per CPU second", exit 3,
    and the process's churn and soak never ran). That is the measurement,
    not a stall: each completed resize counts its keys as progress, and the
    flipper stops at the phase's end before its next resize, not after a
    pair. Here with the watchdog's window cut to 2 s (BENCH_STALL_WINDOW)
    so that a 6-second phase at 2^21 keys shows it: the watchdog judges a
    window from its fourth second on (a 3-second phase ended before that,
    and passed without the progress of the resizes too). Without it:
    "stalled after 4.1 s: 36 ops per CPU second over the last 2 s"."""
    env = dict(os.environ, BENCH_STALL_WINDOW="2")
    p = subprocess.run([BIN, "big", "cuckoo", "-k", "2097152", "-t", "2",
                        "-d", "6", "-w", "resize", "-Q"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cuckoo")
    assert d[("resize-resizing", "resizes")] >= 1
    for wl in ("resize-fixed-n", "resize-fixed-m", "resize-resizing"):
        assert d[(wl, "errors")] == 0, wl


def test_flipper_waits_for_its_phase(big):
    """The flipper of the resize phase starts before the phase's readers and
    must not take the previous phase's end (phase_stop still 1) for its
    own: with the main thread held 50 ms between the two
    (BENCH_RESIZER_LAG_MS, as a preemption there would), every round still
    flips the table. Before, the flipper returned at once in every round
    ("resizes" 0); without the lag it did so only when the main thread was
    preempted there, which failed test_forced_resize_rounds once in CI."""
    env = dict(os.environ, BENCH_RESIZER_LAG_MS="50")
    p = subprocess.run([BIN, "big", "cht", "-k", "65536", "-t", "2", "-R",
                        "3", "-d", "0.2", "-w", "resize", "-Q"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "cht")
    got = [d[("resize-resizing#%d" % rd, "resizes")] for rd in (1, 2, 3)]
    assert all(n >= 2 for n in got), got
    for rd in (1, 2, 3):
        assert d[("resize-resizing#%d" % rd, "errors")] == 0


def test_tbb_um_erase_does_not_walk_empty_buckets(big, tmp_path):
    """TBB's unordered map's erase costs the same with few keys left as
    with many, counted exactly: under callgrind (only inside the adapter's
    um_remove), the shrink's deletes from N down to N/8 keys against the
    check's from N/8 down to 0 (the counters are dumped when the check
    starts), instructions per erase. oneTBB 2021.8's unsafe_erase(key)
    walks past the dummy node of every empty bucket up to the next key, so
    the fewer keys are left the more an erase costs (at 1e8 keys: 1,000 to
    2,000 erases a second near the end); the adapter's
    unsafe_extract(key) does not. Before (unsafe_erase), the check's
    erases cost 1.46x the shrink's at 2^15 keys; after, 0.93x."""
    import shutil
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is missing (tools/ensure-deps.sh test-user)")
    n = 32768
    out = str(tmp_path / "cg.%p")
    p = subprocess.run(["valgrind", "--tool=callgrind",
                        "--toggle-collect=*um_remove*",
                        "--dump-before=check_keys",
                        "--callgrind-out-file=" + out, BIN, "big", "tbb-um",
                        "-k", str(n), "-t", "1", "-w", "shrink"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    d = _rows(p.stdout, "tbb-um")
    erased = {"shrink": d[("shrink", "ops")], "check": d[("check", "keys")]}
    assert erased == {"shrink": n - n // 8, "check": n // 8}, erased
    assert d[("check", "errors")] == 0 and d[("shrink", "errors")] == 0

    def totals(path):
        for line in open(path):
            if line.startswith("totals:"):
                return int(line.split()[1])
        raise AssertionError("no totals in " + path)

    files = sorted(str(f) for f in tmp_path.glob("cg.*"))
    # cg.PID: the end (the check's erases); cg.PID.1: the dump at the
    # check's start (the shrink's).
    assert len(files) == 2 and files[1].endswith(".1"), files
    check, shrink = totals(files[0]), totals(files[1])
    per = (check / erased["check"], shrink / erased["shrink"])
    print("instructions per erase: check %.1f, shrink %.1f" % per)
    assert per[1] > 50, per          # the shrink's erases were counted
    assert per[0] <= 1.15 * per[1], per


def _callgrind_calls(path, fn):
    """Calls to function ``fn`` in callgrind output file ``path`` (the sum of
    every caller's ``calls=`` line; names are compressed to ``(id)`` after
    their first appearance)."""
    import re
    names, total, want = {}, 0, False
    for line in open(path):
        m = re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2)
            want = (line.startswith("cfn=")
                    and names.get(m.group(1)) == fn)
            continue
        if want and line.startswith("calls="):
            total += int(line.split()[0][len("calls="):])
            want = False
    return total


@pytest.mark.parametrize("impl,grow_fn", [("ckhs", "ck_hs_grow"),
                                          ("ckht", "ck_ht_grow_spmc")])
def test_presized_ck_tables_do_not_rehash(big, tmp_path, impl, grow_fn):
    """A ck table created for N keys (-P) holds them without a rehash:
    callgrind counts the library's grow calls in the fill of 2^15 keys (0),
    and in the same fill of a table that grows by itself (more than 0: the
    count sees them). ck_hs and ck_ht keep their load at or below 0.5, so
    the adapter asks for 2N slots; with N (before) each presized fill grew
    once at 2^14 keys, and at 1e8 keys ck_ht's presized fill rehashed for
    30 s."""
    import shutil
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is missing (tools/ensure-deps.sh test-user)")
    calls = {}
    for pre in (True, False):
        out = str(tmp_path / ("%s-%d.cg" % (impl, pre)))
        p = subprocess.run(["valgrind", "--tool=callgrind",
                            "--callgrind-out-file=" + out, BIN, "big", impl,
                            "-k", "32768", "-t", "1", "-w", "grow", "-Q"]
                           + (["-P"] if pre else []),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        d = _rows(p.stdout, impl)
        g = "grow-presized" if pre else "grow"
        assert d[(g, "errors")] == 0 and d[(g, "ops")] == 32768, d
        calls[pre] = _callgrind_calls(out, grow_fn)
    print("%s calls: presized %d, growing %d" % (grow_fn, calls[True],
                                                 calls[False]))
    assert calls[False] > 0, calls
    assert calls[True] == 0, calls


def test_resume_continues_a_cut_run(big, tmp_path):
    """A run cut after its first process resumes from the second: the first
    process's rows come from big.partial.json (a sentinel value put there
    survives, so it was not run again), the others run, and the finished
    run removes the file; a partial file of another run is refused."""
    import json
    argv = ["--test", "--only", "cht,rwlock", "--no-plots", "--no-build",
            "--resume"]
    full = tmp_path / "full"
    assert big.main(argv + ["--out", str(full)]) == 0
    assert not (full / "big.partial.json").exists()
    doc = json.loads((full / "big.json").read_text())
    # The partial file keeps the CDFs thinned: thinning again changes
    # nothing, so a resumed report draws what an uncut one does.
    assert doc["cdf"] and big.thin_cdf(doc["cdf"]) == doc["cdf"]
    runs = big.processes(doc["meta"]["peers"], big.list_impls(),
                         dict(big.PLANS["test"]))
    first = (runs[0][0], runs[0][1])
    mine = [r for r in doc["rows"] if (r["run"], r["impl"]) == first]
    assert mine, "no rows of the first process %s" % (first,)
    for r in mine:
        r["value"] = -4242.0
    ident = dict(plan="test", keys=doc["meta"]["keys"],
                 peers=doc["meta"]["peers"],
                 runs=["%s %s" % (r[0], r[1]) for r in runs],
                 host="%s, %d CPUs" % (big.cpu_model(), os.cpu_count()),
                 source=big.source_fingerprint()[0])
    assert doc["meta"]["source"] == ident["source"]
    cut = tmp_path / "cut"
    big.save_partial(str(cut / "big.partial.json"), ident, 1, 1.0, mine,
                     dict(timeline=[], cdf=[], events=[], info={}), [])
    assert big.main(argv + ["--out", str(cut)]) == 0
    assert not (cut / "big.partial.json").exists()
    res = json.loads((cut / "big.json").read_text())["rows"]
    kept = [r for r in res if (r["run"], r["impl"]) == first]
    assert kept and all(r["value"] == -4242.0 for r in kept), \
        "the first process ran again"
    key = lambda r: (r["run"], r["impl"], r["workload"], r["metric"])
    assert sorted(map(key, res)) == sorted(map(key, doc["rows"]))
    segs = json.loads((cut / "big.json").read_text())["meta"]["segments"]
    assert [(g["first"], g["last"]) for g in segs][-1] == (2, len(runs)), \
        segs
    # Another run's file is refused, naming what differs: here the keys,
    # then the sources bench_us was built from (a library changed between
    # the sessions a run spans), then the host.
    for key, value in (("keys", ident["keys"] + 1),
                       ("source", "0" * 64), ("host", "another CPU, 64 CPUs")):
        other = tmp_path / ("other-" + key)
        changed = dict(ident, **{key: value})
        big.save_partial(str(other / "big.partial.json"), changed, 1, 1.0,
                         mine, dict(timeline=[], cdf=[], events=[], info={}),
                         [])
        with pytest.raises(SystemExit) as e:
            big.main(argv + ["--out", str(other)])
        assert "(%s differs)" % key in str(e.value), str(e.value)
        assert (other / "big.partial.json").exists()


def test_source_files_follow_the_build(big, tmp_path):
    """The fingerprint that guards a resumed run covers what bench_us is
    built from: the harness, the adapters, libcht's sources and headers
    (the shared table's too), a peer's system header and the Makefiles,
    named relative to the repository; the dependency-file parser reads a
    continued first rule and ignores -MP's phony header rules."""
    names = big.source_files()
    for want in ("bench/userspace/big.c", "bench/userspace/impl_cuckoo.cc",
                 "uspace/lib/cht/src/cht_imap.c", "common/adt/cht.c",
                 "common/include/adt/cht.h", "uspace/lib/cht/include/cht.h",
                 "bench/userspace/Makefile", "uspace/Makefile"):
        assert want in names, "%s not in the fingerprint" % want
    assert any("/urcu/" in n and n.startswith("/usr/") for n in names), \
        "no liburcu header in the fingerprint"
    d = tmp_path / "x.d"
    d.write_text("x.o: a.c \\\n b.h /usr/include/c.h\n\nb.h:\n\n"
                 "/usr/include/c.h:\n")
    assert big.depfile_sources(str(d)) == ["a.c", "b.h", "/usr/include/c.h"]


def test_until_stops_between_processes(big, tmp_path, monkeypatch):
    """--until ends a stretch before a process that would not finish by the
    deadline (here every process after the first is said to take 1e9 s):
    the first process's rows stay in big.partial.json with its duration, and
    --resume without --until finishes the run from the second process."""
    import json
    out = tmp_path / "until"
    argv = ["--test", "--only", "cht,rwlock", "--no-plots", "--no-build",
            "--resume", "--out", str(out)]
    monkeypatch.setattr(big, "expected_secs",
                        lambda label, took, keys: 1e9 if took else 0.0)
    hhmm = time.strftime("%H:%M", time.gmtime(time.time() + 3600))
    assert big.main(argv + ["--until", hhmm]) == 0
    part = json.loads((out / "big.partial.json").read_text())
    assert part["done"] == 1, part["done"]
    assert list(part["extra"]["took"]) == [part["ident"]["runs"][0]]
    assert big.took_key("P", "cht-presized", ["-k", "9", "-t", "2"]) == \
        "P cht-presized -t 2"
    assert not (out / "big.json").exists()
    monkeypatch.undo()
    assert big.main(argv) == 0
    doc = json.loads((out / "big.json").read_text())
    runs = big.processes(doc["meta"]["peers"], big.list_impls(),
                         dict(big.PLANS["test"]))
    assert sorted(doc["took"]) == sorted(big.took_key(*r[:3]) for r in runs)
    assert len(doc["took"]) == len(runs)
    segs = doc["meta"]["segments"]
    assert [(g["first"], g["last"]) for g in segs] == [
        (1, 1), (2, len(part["ident"]["runs"]))], segs


def test_until_deadline_and_estimates(big):
    day = 86400 * 20000
    assert big.deadline_of("00:00", now=day + 10) == day + 86400
    assert big.deadline_of("12:30", now=day + 10) == day + 12 * 3600 + 1800
    for bad in ("25:00", "12", "ab:cd", "12:60"):
        with pytest.raises(SystemExit):
            big.deadline_of(bad)
    took = {"A cht": 400.0, "B cht": 900.0, "A ckhs": 500.0}
    assert big.expected_secs("A", took, 10 ** 8) == 500.0
    assert big.expected_secs("H", took, 10 ** 8) == big.DEFAULT_TOOK["H"]
    assert big.expected_secs("H", {}, 10 ** 7) == big.DEFAULT_TOOK["H"] / 10
    impls = big.list_impls()
    full = big.processes(big.peers_of(impls), impls, dict(big.PLANS["full"]))
    keys = [big.took_key(*r[:3]) for r in full]
    assert len(set(keys)) == len(keys), "two processes share a took key"


def test_report_partial_shows_the_finished_tables(big, tmp_path,
                                                  monkeypatch):
    """A run cut after its first table (--until) reports that table in its
    RESULTS section, marked in progress with the count of processes done,
    and leaves the table still to run out; no big.json is written (the
    data stay in the partial file). The quick plan's outputs have names of
    their own, beside the full run's."""
    out = tmp_path / "part"
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n")
    argv = ["--test", "--only", "cht,rwlock", "--no-plots", "--no-build",
            "--out", str(out)]
    monkeypatch.setattr(big, "expected_secs",
                        lambda label, took, keys: 1e9 if len(took) >= 2
                        else 0.0)
    hhmm = time.strftime("%H:%M", time.gmtime(time.time() + 3600))
    assert big.main(argv + ["--resume", "--until", hhmm]) == 0
    assert big.main(argv + ["--report-partial", "--results",
                            str(results)]) == 0
    text = results.read_text()
    begin, end = big.markers("big")
    sec = text[text.index(begin):text.index(end)]
    assert "In progress: 2 of 4 processes done" in sec, sec[:1500]
    rows = [ln for ln in sec.splitlines() if ln.startswith("| ")]
    assert any(ln.startswith("| cht |") for ln in rows), rows
    assert not any(ln.startswith("| rwlock |") for ln in rows), rows
    assert "Still to run: rwlock" in sec, sec[:1500]
    assert not (out / "big.json").exists()
    assert big.prefix_of("quick") == "big-quick"
    assert big.prefix_of("full") == big.prefix_of("test") == "big"
    assert big.markers("big-quick")[0] == "<!-- userspace-big-quick:begin -->"
