"""The lock-dependency validator (debug builds; docs/LOCKING.md, "Lock
validator").

* ``test_unsafe_reported[lockdepN]``: each unsafe kernel test ends in its
  ``LOCKDEP REPORT`` and the validator's panic, never in a verdict, and the
  report names both sides with their call sites: ``lockdep1`` (two locks in
  both orders from one thread: the new edge and the existing chain, each
  with the sites where it was first seen), ``lockdep2`` (a lock taken with
  interrupts enabled, then in a timer interrupt: both sites), ``lockdep3``
  (``mutex_lock`` under a spinlock: the held lock and its site),
  ``lockdep4`` (an interrupt-taken lock held while taking a lock taken
  elsewhere with interrupts enabled: the chain and both sites),
  ``lockdep5`` (two mutexes in both orders: both chains with their sites
  and the thread's held sleeping locks), ``lockdep6`` (``rcu_synchronize``
  holding a mutex an RCU callback takes: the lock, the callback's site, the
  holder's site and the caller of ``rcu_synchronize``), ``lockdep7`` (a
  rwlock write-locked then a mutex, later the mutex then the rwlock
  read-locked: both chains), ``lockdep8`` (``workq_stop`` holding a mutex
  a work item of the queue takes: the lock, the item's site, the holder's
  site and the caller), ``lockdep9`` (``lockdep6`` the other way round:
  ``rcu_synchronize`` holding a mutex, then a callback takes it: reported
  in the callback with the same sites).
* ``test_doc_order_table``: docs/LOCKING.md's table of allowed
  ``outer -> inner`` pairs parses and has no cycle.
* ``test_doc_check_can_fail``: the order check rejects an edge whose pair
  is removed from the table (on the real table, every pair in turn) and a
  reversed edge.
* ``test_release_has_no_lockdep``: the release kernel has no validator
  symbol.
* ``test_spin_watchdog`` (``make soak``, one -smp 4 boot of the debug
  build): the spin watchdog of synch/spinlock.c reports a deadlock when the
  CPUs spin in a cycle and only then: ``spindead1`` (ABBA on two CPUs: each
  prints ``Deadlock:`` with both locks and their holders), ``spindead2`` (a
  lock taken twice: a cycle of one CPU), ``spinslow1`` (a holder that keeps
  its lock 8 s waiting for nothing, as a descheduled vCPU: one ``long
  wait`` line and no ``Deadlock``; the watchdog of wall time printed
  ``Deadlock probable`` here). The unnamed locks keep the validator out.
* :func:`check_lockdep_after_tests` is the step ``TestSMP.test_lockdep`` of
  tests/test_kernel.py runs after ``test *`` on every debug configuration:
  the validator still active, no report, every learned edge allowed by the
  documented order.  (Any ``LOCKDEP REPORT`` anywhere in a log is already a
  failure: tools/kconsole.py counts it as a panic.)

Verdicts never depend on timing; timeouts are liveness bounds.
"""

import os
import re
import subprocess

import pytest

from tools import kconsole
import lockdep_order
from patterns import VERDICT_RE
from conftest import (BOOT_TIMEOUT, CMD_TIMEOUT, KERNEL_ELF, RELEASE_ELF,
                      REPORT_TIMEOUT, soak_enabled)

#: May share the 2 host CPUs in make test's first pytest run (conftest.py):
#: the validator reports from one thread's lock order, no interleaving
#: needed.
pytestmark = pytest.mark.concurrent

_SITE = r"[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+"

#: Per unsafe test: the report lines that must appear (regexes).
EXPECTED = {
    "lockdep1": [
        r"LOCKDEP REPORT: possible circular locking dependency",
        r'new dependency on CPU \d+: "lockdep1\.b" -> "lockdep1\.a"',
        r'"lockdep1\.b" held, acquired at test_lockdep1\+0x[0-9a-f]+',
        r'"lockdep1\.a" acquired at test_lockdep1\+0x[0-9a-f]+',
        r'existing chain "lockdep1\.a" -> \.\.\. -> "lockdep1\.b"',
        r'"lockdep1\.a" -> "lockdep1\.b": "lockdep1\.a" acquired at '
        r'test_lockdep1\+0x[0-9a-f]+, then "lockdep1\.b" at '
        r'test_lockdep1\+0x[0-9a-f]+',
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: circular locking dependency",
    ],
    "lockdep2": [
        r'LOCKDEP REPORT: inconsistent interrupt state: class '
        r'"lockdep2\.irq-unsafe" taken in an interrupt handler and with '
        r'interrupts enabled',
        r"taken in an interrupt handler at ld2_handler\+0x[0-9a-f]+",
        r"taken with interrupts enabled at test_lockdep2\+0x[0-9a-f]+",
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: lock taken in an interrupt and with "
        r"interrupts enabled",
    ],
    "lockdep3": [
        r"LOCKDEP REPORT: mutex_lock may sleep, called on CPU \d+ while "
        r"holding spinlocks",
        r'#0 "lockdep3\.spin" acquired at test_lockdep3\+0x[0-9a-f]+',
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: sleeping while holding a spinlock",
    ],
    "lockdep4": [
        r'LOCKDEP REPORT: interrupt-safe class "lockdep4\.irq-safe" -> class '
        r'"lockdep4\.irq-unsafe" taken with interrupts enabled',
        r'"lockdep4\.irq-safe" -> "lockdep4\.irq-unsafe": '
        r'"lockdep4\.irq-safe" acquired at test_lockdep4\+0x[0-9a-f]+, then '
        r'"lockdep4\.irq-unsafe" at test_lockdep4\+0x[0-9a-f]+',
        r'"lockdep4\.irq-safe" taken in an interrupt handler at '
        r'ld4_handler\+0x[0-9a-f]+',
        r'"lockdep4\.irq-unsafe" taken with interrupts enabled at '
        r'test_lockdep4\+0x[0-9a-f]+',
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: interrupt-safe to interrupt-unsafe dependency",
    ],
    "lockdep5": [
        r"LOCKDEP REPORT: possible circular locking dependency",
        r'new dependency on CPU \d+: "lockdep5\.b" -> "lockdep5\.a"',
        r'"lockdep5\.b" held, acquired at test_lockdep5\+0x[0-9a-f]+',
        r'"lockdep5\.a" acquired at test_lockdep5\+0x[0-9a-f]+',
        r'existing chain "lockdep5\.a" -> \.\.\. -> "lockdep5\.b"',
        r'"lockdep5\.a" -> "lockdep5\.b": "lockdep5\.a" acquired at '
        r'test_lockdep5\+0x[0-9a-f]+, then "lockdep5\.b" at '
        r'test_lockdep5\+0x[0-9a-f]+',
        r'sleeping locks held by thread "[^"]+" \(oldest first\):\s+'
        r'#0 "lockdep5\.b" acquired at test_lockdep5\+0x[0-9a-f]+',
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: circular locking dependency",
    ],
    "lockdep6": [
        r'LOCKDEP REPORT: rcu_synchronize while holding lock '
        r'"lockdep6\.mtx", which an RCU callback takes',
        r'"lockdep6\.mtx" taken in an RCU callback at ld6_cb\+0x[0-9a-f]+',
        r'"lockdep6\.mtx" held, acquired at test_lockdep6\+0x[0-9a-f]+',
        r"rcu_synchronize called from test_lockdep6\+0x[0-9a-f]+",
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: RCU wait while holding a lock an RCU "
        r"callback takes",
    ],
    "lockdep7": [
        r"LOCKDEP REPORT: possible circular locking dependency",
        r'new dependency on CPU \d+: "lockdep7\.mtx" -> "lockdep7\.rw"',
        r'"lockdep7\.mtx" held, acquired at test_lockdep7\+0x[0-9a-f]+',
        r'"lockdep7\.rw" acquired at test_lockdep7\+0x[0-9a-f]+',
        r'"lockdep7\.rw" -> "lockdep7\.mtx": "lockdep7\.rw" acquired at '
        r'test_lockdep7\+0x[0-9a-f]+, then "lockdep7\.mtx" at '
        r'test_lockdep7\+0x[0-9a-f]+',
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: circular locking dependency",
    ],
    "lockdep8": [
        r'LOCKDEP REPORT: workq_stop while holding lock "lockdep8\.mtx", '
        r'which a work queue item takes',
        r'"lockdep8\.mtx" taken in a work queue item at '
        r'ld8_func\+0x[0-9a-f]+',
        r'"lockdep8\.mtx" held, acquired at test_lockdep8\+0x[0-9a-f]+',
        r"workq_stop called from test_lockdep8\+0x[0-9a-f]+",
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: workq_stop while holding a lock a work item "
        r"takes",
    ],
    "lockdep9": [
        r'LOCKDEP REPORT: rcu_synchronize or rcu_barrier while holding lock '
        r'"lockdep9\.mtx", which an RCU callback takes',
        r'"lockdep9\.mtx" taken in an RCU callback at ld9_cb\+0x[0-9a-f]+',
        r'"lockdep9\.mtx" held, acquired at test_lockdep9\+0x[0-9a-f]+',
        r"rcu_synchronize or rcu_barrier called from "
        r"test_lockdep9\+0x[0-9a-f]+",
        r"LOCKDEP REPORT end",
        r"PANIC[^\n]*lockdep: RCU wait while holding a lock an RCU "
        r"callback takes",
    ],
}

_PANIC_RE = re.compile(rb"PANIC[^\n]*lockdep: [^\n]*\n")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_unsafe_reported(name):
    """``test NAME`` ends in its report (both sides named) and a panic."""
    with kconsole.Kernel(smp=2, kernel=KERNEL_ELF,
                         name="a-rcu-%s" % name) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        k.send_line("test %s" % name)
        idx, m, before = k.expect([_PANIC_RE, VERDICT_RE], REPORT_TIMEOUT,
                                  "the lockdep report after 'test %s'" % name,
                                  check_panic=False)
        text = kconsole.decode(before + m.group(0))
        assert idx == 0, "'test %s' was not reported: %r\n%s" % (
            name, kconsole.decode(m.group(0)), text)
        report = text[text.find("LOCKDEP REPORT"):]
        missing = [p for p in EXPECTED[name] if not re.search(p, report)]
        assert not missing, "report of 'test %s' lacks %s:\n%s" % (
            name, missing, report)


def test_doc_order_table():
    """The documented order parses and is acyclic."""
    pairs = lockdep_order.parse_doc()
    assert len(pairs) >= 10, pairs
    assert not lockdep_order.doc_cycles(pairs), \
        "docs/LOCKING.md's order has a cycle through %s" % (
            lockdep_order.doc_cycles(pairs))


def test_doc_check_can_fail():
    """Removing any documented pair makes its own edge a violation; a
    reversed edge is always one."""
    pairs = lockdep_order.parse_doc()
    for a, b in sorted(pairs):
        edge = (a, b, 1, "x+0x0", "y+0x0")
        assert not lockdep_order.violations([edge], pairs)
        fewer = pairs - {(a, b)}
        if a == b or b not in lockdep_order._closure(fewer).get(a, ()):
            assert lockdep_order.violations([edge], fewer) == [edge], \
                "edge %s -> %s allowed without its row" % (a, b)
        if a != b:
            rev = (b, a, 1, "y+0x0", "x+0x0")
            assert lockdep_order.violations([rev], pairs) == [rev], \
                "reversed edge %s -> %s allowed" % (b, a)


def test_release_has_no_lockdep():
    """The release build has no validator code (nm finds no lockdep_acquire)."""
    if not os.path.exists(RELEASE_ELF):
        pytest.skip("no release build (make flavours)")
    syms = subprocess.run(["nm", RELEASE_ELF], capture_output=True,
                          text=True, check=True).stdout
    assert not re.search(r"\blockdep_acquire", syms)
    assert not re.search(r"\bspinlock_lock_ip\b", syms)


#: Per spin watchdog test: the lines its output must have, and (spinslow1)
#: the line it must not have.
_LOCK = r"'\?' \((0x[0-9a-f]+)\)"
SPIN_WATCHDOG = {
    "spinslow1": [
        r"spinlock: long wait: CPU 0 spinning on lock %s for \d+ s, owner "
        r"CPU 1, no wait-for cycle" % _LOCK,
        r"spinlock: long wait: CPU 0 got lock '\?' after \d+ ms",
        r"spinslow1: 0 deadlock reports, 1 long waits",
    ],
    "spindead2": [
        r"Deadlock: CPU 1 spinning on lock %s, a cycle of 1 CPU\(s\):\n"
        r"  CPU 1 waits for %s, held by CPU 1" % (_LOCK, _LOCK),
        r"spindead2: 1 deadlock reports",
    ],
    "spindead1": [
        r"Deadlock: CPU 1 spinning on lock %s, a cycle of 2 CPU\(s\):\n"
        r"  CPU 1 waits for %s, held by CPU 2\n"
        r"  CPU 2 waits for %s, held by CPU 1" % (_LOCK, _LOCK, _LOCK),
        r"Deadlock: CPU 2 spinning on lock %s, a cycle of 2 CPU\(s\):\n"
        r"  CPU 2 waits for %s, held by CPU 1\n"
        r"  CPU 1 waits for %s, held by CPU 2" % (_LOCK, _LOCK, _LOCK),
        r"spindead1: 2 deadlock reports",
    ],
}


@pytest.mark.soak
def test_spin_watchdog():
    """The spin watchdog's controls in one -smp 4 boot: cycles reported with
    their locks and holders, a slow holder not (see the module's text)."""
    if not soak_enabled():
        pytest.skip("make soak (KTEST_SOAK=1)")
    with kconsole.Kernel(smp=4, kernel=KERNEL_ELF,
                         name="a-rcu-spin-watchdog") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        for name, patterns in SPIN_WATCHDOG.items():
            k.send_line("test %s" % name)
            _, _, before = k.expect(kconsole.PROMPT_RE, REPORT_TIMEOUT,
                                    "the prompt after 'test %s'" % name,
                                    check_panic=False)
            text = kconsole.normalize(before)
            missing = [p for p in patterns if not re.search(p, text)]
            assert not missing, "'test %s' lacks %s:\n%s" % (
                name, missing, text)
            assert "Test passed" in text, "%s:\n%s" % (name, text)
            addr = re.search(r"locks? A (0x[0-9a-f]+)", text).group(1)
            assert all(a == addr or name == "spindead1" for a in
                       re.findall(r"lock '\?' \((0x[0-9a-f]+)\)", text))
            if name == "spinslow1":
                assert "Deadlock" not in text, text
        # The CPUs run on after the rescue: a test passes, nothing new is
        # reported (the reports above are expected, so the panic check of
        # k.cmd() would find them).
        k.send_line("test atomic1")
        _, _, before = k.expect(kconsole.PROMPT_RE, CMD_TIMEOUT,
                                "the prompt after 'test atomic1'",
                                check_panic=False)
        out = kconsole.normalize(before)
        assert "Test passed" in out and not kconsole.find_panic(out), out


def check_lockdep_after_tests(k, release):
    """``lockdep`` after ``test *``: active, no report, the order agrees with
    docs/LOCKING.md (a release build says it has no validator)."""
    __tracebackhide__ = True
    out = kconsole.normalize(k.cmd("lockdep", CMD_TIMEOUT))
    if release:
        assert "no lock validator" in out, out
        return
    head = lockdep_order.parse_header(out)
    assert head, "cannot parse 'lockdep':\n" + out
    state, _, nedges, reports = head
    assert state == "active" and reports == 0, \
        "validator %s with %d reports:\n%s" % (state, reports, out)
    edges = lockdep_order.parse_edges(out)
    assert len(edges) == nedges, "%d edge lines for %d edges:\n%s" % (
        len(edges), nedges, out)
    bad = lockdep_order.violations(edges, lockdep_order.parse_doc(),
                                   lockdep_order.parse_sleeping(out))
    assert not bad, "edges not allowed by docs/LOCKING.md's order:\n" + \
        "\n".join("%s -> %s (count %d; %s then %s)" % e for e in bad)
