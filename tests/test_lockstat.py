"""Lock statistics (``make LOCK_STAT=1``, the ``lockstat`` command).

The lock statistics build (``build/lockstat``, made by ``make flavours``)
counts, per lock class, acquisitions, contended acquisitions, wait and hold
cycles.  The counts are checked against operations whose locking is known
exactly:

* a page fault with its unmap (chtbench 22) takes no area lock (its area
  look-up is lock-free, mm/as.c) and its page-table lock once (the insert
  and install); the unmap takes it once per 2 MiB region of each round
  (one CPU: 1024 pages, two regions, so 2 per 1024 faults), so over a run
  ``as.areas`` is taken only by the benchmark's set-up and teardown and
  ``as.pt`` once per fault plus at most one per 256 faults, give or take
  those handful of acquisitions;
* two CPUs doing nothing but updates under one global spinlock (chtbench 13
  at 100 %) must contend: ``chtbench.ht`` shows contended acquisitions and
  wait cycles, and its hold cycles are bounded by the run's length;
* ``lockstat -r`` resets: a second snapshot right after holds only the few
  acquisitions the console itself made.

A statistic that was not counted, or counted twice, fails one of these.
"""

import os
import re

import pytest

from conftest import LONG_CMD_TIMEOUT as CMD_TIMEOUT
from conftest import REPO

LOCKSTAT_ELF = os.path.join(REPO, "build", "lockstat", "kernel.elf")
ROW_RE = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$",
                    re.MULTILINE)
RESULT_RE = re.compile(r"^result: bench=(\d+) .* ops=(\d+) ops_per_s=(\d+)",
                       re.MULTILINE)


def parse(out):
    """{class: (acquisitions, contended, wait, hold, avg, max)}"""
    assert "lock statistics per class" in out, out
    return {m.group(1): tuple(int(m.group(i)) for i in range(2, 8))
            for m in ROW_RE.finditer(out)}


def run(k, cmd):
    out = k.cmd(cmd, CMD_TIMEOUT)
    m = RESULT_RE.search(out)
    assert m, "no result line:\n%s" % out
    return int(m.group(2))


@pytest.fixture(scope="class")
def lockstat_boot(request, boot_factory):
    if not os.path.exists(LOCKSTAT_ELF):
        pytest.fail("%s is missing: make flavours" % LOCKSTAT_ELF)
    boot = boot_factory(request, smp=2, kernel=LOCKSTAT_ELF,
                        name="lockstat-smp2")
    boot.k.wait_prompt()
    return boot


class TestLockstat:
    def test_fault_locking_counted(self, lockstat_boot):
        k = lockstat_boot.k
        k.cmd("lockstat -r", CMD_TIMEOUT)
        faults = run(k, "chtbench 22 1 0 -w -t 1")
        st = parse(k.cmd("lockstat -r", CMD_TIMEOUT))
        assert faults > 1000, faults
        areas, pt = st["as.areas"][0], st["as.pt"][0]
        print("faults %d: as.areas %d, as.pt %d" % (faults, areas, pt))
        assert areas <= 16, \
            "as.areas taken %d times for %d faults" % (areas, faults)
        assert faults <= pt <= faults + faults // 256 + 16, \
            "as.pt taken %d times for %d faults" % (pt, faults)
        for name, (acq, _, _, hold, avg, mx) in st.items():
            assert acq > 0 and avg == hold // acq and mx <= hold, \
                "inconsistent row %s: %r" % (name, st[name])

    def test_contention_counted(self, lockstat_boot):
        k = lockstat_boot.k
        k.cmd("lockstat -r", CMD_TIMEOUT)
        run(k, "chtbench 13 2 100 -w -t 1")
        st = parse(k.cmd("lockstat -r", CMD_TIMEOUT))
        acq, contended, wait, hold, _, _ = st["chtbench.ht"]
        print("chtbench.ht: %d acquisitions, %d contended, wait %d, hold %d"
              % (acq, contended, wait, hold))
        assert 0 < contended < acq and wait > 0, st["chtbench.ht"]

    def test_reset(self, lockstat_boot):
        k = lockstat_boot.k
        k.cmd("lockstat -r", CMD_TIMEOUT)
        st = parse(k.cmd("lockstat", CMD_TIMEOUT))
        assert "chtbench.ht" not in st and "as.pt" not in st, st
        assert sum(row[0] for row in st.values()) < 10000, st

    def test_no_panic(self, lockstat_boot):
        lockstat_boot.k.check_no_panic()
