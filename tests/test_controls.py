"""Negative controls: builds with a fault injected must FAIL their test.

A test that passes a build it exists to catch proves nothing, so ``make
test`` builds one configuration per oracle with a fault injected (``make
controls``, docs/CONTROLS.md: a fault-injection point, ``fault_inject()``,
or a reverted defect, ``tests/controls/KNOB.patch`` applied to a copy of the
tree) and requires the test to fail *for the reason the oracle gives*: a pass, a
failure with another reason, a panic, a hang or QEMU dying all fail the
control.  Each control is one boot at -smp 2 running only its test(s).

==================  ====================================  ==================
build               fault                                 must fail
==================  ====================================  ==================
podzimek-broken     Podzimek GP detection does not wait   rcutorture, rcu1
rcu-broken          A-RCU GP detection does not wait      rcu1 (rcutorture:
                                                          test_rcu.py)
broken-shootdown    tlb_shootdown() does nothing          pagefault1
                    (arm64: local TLBI, test_arm64.py)
broken-smpcall      one cross-call in 500 dropped         smpcall1
broken-workq        one work item in 1000 dropped         workqueue
broken-chtcount     CHT insert counts after its linking   chtcount
                    CAS (the round-2 defect)
broken-rcuunlock1   A-RCU switch-out hook leaves a reader rcuunlock1
                    between the unlock's two steps listed
broken-arearace     area_mtx released before the unmap    run arearace
                    of a shrink or destroy                (-d): pages lost
broken-futexrace    a timed-out waiter a waker counted    run futexrace:
                    leaves the remembered wake-up         waiter assertion
broken-inputflood   a full console ring drops UART bytes  the flood: lost
                                                          markers
broken-asrace1      a fault inserts its record after      asrace1
                    releasing the area lock (the locked
                    look-up as it was)
broken-areaseq      the lock-free area look-up inserts    asrace1
                    without re-checking area_seq under
                    the page-table lock
broken-mapping2     an update inserts a new record and    mapping2
                    removes the old one
broken-ptwalk1      paging_walk() installs a new table    ptwalk1long
                    with a store, not a CAS (-smp 4)      (-smp 4)
broken-framedf1     a double free diagnosed from the      framedf1: the
                    frame's own state                     old wrong panic
broken-uctx         the scheduler skips the user          run regs check,
                    register state (proc/uctx.h)          run regs threads
==================  ====================================  ==================

The ``broken-KNOB`` builds after broken-workq put a fixed defect back
(``tests/controls/KNOB.patch``, one per race test written for a defect; the
builds before it are fault-injection points), so each such test keeps its
power to fail; tests/test_control_patches.py fails at once when a patch no
longer applies.  ``ptwalk1``'s
defect (paging_walk()'s plain store) could not show while every allocating
walk ran under the address space's area lock; since the fault's
area look-up is lock-free (mm/as.c) it failed again in 1 of 2 runs of
ptwalk1 at -smp 4, so its control runs ``ptwalk1long`` (20x the rounds) at
-smp 4.  ``make soak`` repeats the arearace
control with ten rounds.  The futexrace control runs at -smp 2 only: at
-smp 1 the broken build panicked on the first run in one boot and passed
three runs (about 1,000 timed-out waits each) in another.

rcu1 must name *both* a callback run early and rcu_synchronize returning
early (it runs every part and lists all failing ones).  Printed at -smp 2
(see TestControlReasons for the exact text):

- rcu-broken, podzimek-broken: "4 parts failed: preempted readers: preempted
  before GP detection: the callback ran while the reader was still inside its
  section; rcu_synchronize waits for a reader: rcu_synchronize returned while
  a preempted (yielding) reader was inside; thread exits inside a reader: a
  callback posted inside the section of an exiting thread ran before the
  thread exited; sequence check: 1 readers saw a callback posted after their
  start complete while they were inside" (the sequence check is a race: it
  is not always among them).
- broken-workq: "21 items accepted and never run (queue idle)", about 2 s
  after the loss instead of the stress run's 120 s bound.

The A-RCU broken build's rcutorture control is ``TestRCUBroken`` in
test_rcu.py (-smp 4); the userspace RCU's is in test_uspace.py.
"""

import os
import re

import pytest

from tools import kconsole
from conftest import (BOOT_TIMEOUT, BROKEN_ELF, CMD_TIMEOUT, HALT_TIMEOUT,
                      PODZIMEK_BROKEN_ELF, REPO, TEST_ONE_TIMEOUT,
                      expect_test_panic)
from test_rcu import parse_rcu_stats
from patterns import ANY_PANIC_RE, ORACLE_FAILURE_RE

#: rcu1 runs every part and names all failing ones in its one reason
#: ("N parts failed: part: reason; ...").  Its reasons for a callback run
#: while a reader that predates the grace period is still inside (the
#: preempted-reader, thread-exit, sequence and one-callback parts) ...
RCU1_CB_EARLY_RE = re.compile(
    r"the callback ran while the reader was still inside its section|"
    r"ran before the thread exited|"
    r"readers saw a callback posted after their start complete|"
    r"a callback ran before the GP counter advanced")
#: ... and for rcu_synchronize returning while such a reader is inside (the
#: part "rcu_synchronize waits for a reader": a yielding and a spinning one).
RCU1_SYNC_EARLY_RE = re.compile(
    r"rcu_synchronize returned while a .* reader .*was inside")
#: The prefix of every rcu1 failure.
RCU1_PARTS_RE = re.compile(r"^\d+ parts? failed(?: \(stopped [^)]*\))?: ")


def _rcu1_both_early(reason):
    """rcu1 caught both: a callback run early and rcu_synchronize early."""
    return bool(RCU1_PARTS_RE.search(reason)
                and RCU1_CB_EARLY_RE.search(reason)
                and RCU1_SYNC_EARLY_RE.search(reason))

#: smpcall1: a caller counted fewer calls than it made (one was dropped).
SMPCALL_SHORT_RE = re.compile(
    r"^(?:sync\+async|pairs): CPU \d+ counted (?P<got>\d+) calls, "
    r"expected (?P<want>\d+)$")

#: pagefault1: a translation survived an unmap.
STALE_RE = re.compile(
    r"^\d+ errors, first: (?:stale translation|.*a write through a stale "
    r"entry)")

#: workqueue: items were accepted and never run, seen as soon as the queue
#: is idle (no queued item, every worker idle) with items outstanding, not
#: after the run's 120 s bound.
WORKQ_LOST_RE = re.compile(
    r"^(?P<n>\d+) items? accepted and never run \(queue idle\)$")


#: chtcount: the unclamped item count went below zero (a remover decremented
#: before the insert of its item counted it).
CHTCOUNT_NEG_RE = re.compile(
    r"^the item count read -\d+, below zero: a remove was counted before "
    r"the insert of its item")


#: rcuunlock1: the grace period waited for a reader whose section was over.
RCUUNLOCK_RE = re.compile(
    r"^a grace period did not complete while a reader was switched out "
    r"between the subtraction and the check of rcu_read_unlock")


#: asrace1: a page's record outlived its area (a fault inserted it after the
#: destroy's or shrink's unmap).
ASRACE_RE = re.compile(
    r"^cycle \d+: page 0x[0-9a-f]+ has a record after its area was "
    r"(?:destroyed|shrunk)")

#: ptwalk1: an entry went into a table another CPU's install orphaned (the
#: access faulted again, as a minor fault), or the orphaned tables leaked.
PTWALK1_RE = re.compile(
    r"^round \d+: \d+ faults \(\d+ minor\) for \d+ first touches: an entry went "
    r"into a table the hardware does not reach|page tables leaked")

#: mapping2: more than one record for the page, an update that brought a
#: removed page back, or a lookup of a mapping nobody wrote.
MAPPING2_RE = re.compile(
    r"^part 1: after \d+ concurrent updates each the page has (?:[02-9]|"
    r"\d\d+) records|^part 2 round \d+: the page is mapped again after its "
    r"remove|^part 2 round \d+: update after the remove returned EOK|"
    r"^part 3: lookup returned frame 0x[0-9a-f]+ flags 0x[0-9a-f]+, "
    r"never written")


def _workq_lost(reason):
    m = WORKQ_LOST_RE.search(reason)
    return bool(m) and int(m["n"]) > 0


def broken_elf(knob):
    """The image of ``make control BUILD=build/broken-KNOB BROKEN=KNOB``."""
    return os.path.join(REPO, "build", "broken-" + knob, "kernel.elf")


def _smpcall_short(reason):
    m = SMPCALL_SHORT_RE.search(reason)
    return bool(m) and int(m["got"]) < int(m["want"])


#: id -> (kernel, is an RCU control, [(test, check, what)]).
CONTROLS = {
    "podzimek-rcu-broken": (PODZIMEK_BROKEN_ELF, True, [
        ("rcu1", _rcu1_both_early,
         "a callback run AND rcu_synchronize returning under a reader"),
        ("rcutorture", ORACLE_FAILURE_RE.search,
         "an object aged past one GP, poisoned or reused under a reader"),
    ]),
    "a-rcu-broken": (BROKEN_ELF, True, [
        ("rcu1", _rcu1_both_early,
         "a callback run AND rcu_synchronize returning under a reader"),
    ]),
    "shootdown": (broken_elf("shootdown"), False, [
        ("pagefault1", STALE_RE.search, "a stale translation after an unmap"),
    ]),
    "smpcall": (broken_elf("smpcall"), False, [
        ("smpcall1", _smpcall_short, "a CPU counted fewer calls than made"),
    ]),
    "workq": (broken_elf("workq"), False, [
        ("workqueue", _workq_lost,
         "work items accepted and never run (queue idle)"),
    ]),
    "rcuunlock1": (broken_elf("rcuunlock1"), False, [
        ("rcuunlock1", RCUUNLOCK_RE.search,
         "a grace period held up by a reader outside its section"),
    ]),
    "asrace1": (broken_elf("asrace1"), False, [
        # asrace1long (20 x asrace1's 2000 cycles) stops at the first
        # leak: at -smp 2 asrace1 failed at cycles 58-1442 in 7 of 7
        # boots, close enough to its end for a pass now and then.
        ("asrace1long", ASRACE_RE.search, "a record outliving its area"),
    ]),
    "areaseq": (broken_elf("areaseq"), False, [
        # The fault's lock-free look-up (mm/as.c, "Area look-up") without
        # its re-check under the page-table lock: the same leak as asrace1.
        ("asrace1long", ASRACE_RE.search, "a record outliving its area"),
    ]),
    "mapping2": (broken_elf("mapping2"), False, [
        ("mapping2", MAPPING2_RE.search,
         "two records of a page, a resurrected page or a torn mapping"),
    ]),
    "chtcount": (broken_elf("chtcount"), False, [
        ("chtcount", CHTCOUNT_NEG_RE.search,
         "the item count below the linked items (counted after the CAS)"),
    ]),
}


def expect_failure(k, test, check, what):
    """Run ``test NAME`` on a broken build: it must fail with ``check``."""
    __tracebackhide__ = True
    out = k.cmd("test " + test, TEST_ONE_TIMEOUT)
    verdicts = kconsole.parse_verdicts(out)
    assert verdicts, "no verdict from 'test %s':\n%s" % (test, out)
    reasons = [r for ok, r in verdicts if not ok]
    assert reasons, ("the broken build PASSED %s: the test cannot catch %s:"
                     "\n%s" % (test, what, out))
    assert check(reasons[0]), (
        "%s failed, but not with the expected reason (%s): %r\n%s"
        % (test, what, reasons[0], out))
    return reasons[0]


def pytest_generate_tests(metafunc):
    """``test_fails`` of a control's class runs the control's tests."""
    if "test" in metafunc.fixturenames and metafunc.cls is not None \
            and getattr(metafunc.cls, "CONTROL", None):
        tests = [t[0] for t in CONTROLS[metafunc.cls.CONTROL][2]]
        metafunc.parametrize("test", tests, ids=tests)


@pytest.fixture(scope="class")
def control_boot(request, boot_factory):
    """The class's broken kernel booted with -smp 2."""
    ident = request.cls.CONTROL
    kernel, is_rcu, tests = CONTROLS[ident]
    if not os.path.isfile(kernel):
        pytest.fail("%s is missing: run 'make controls'" % kernel)
    boot = boot_factory(request, smp=2, kernel=kernel,
                        name="control-%s-smp2" % ident)
    boot.ident, boot.is_rcu = ident, is_rcu
    boot.tests = {t[0]: t for t in tests}
    return boot


class ControlSteps:
    """One broken build: its test(s) fail with the oracle's reason."""

    CONTROL = None

    def test_boot(self, control_boot):
        """The broken kernel reaches the prompt."""
        control_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_is_broken(self, control_boot):
        """An RCU control's ``rcu`` says BROKEN (the right image booted)."""
        if not control_boot.is_rcu:
            pytest.skip("not an RCU control")
        out = control_boot.k.cmd("rcu", CMD_TIMEOUT)
        stats = parse_rcu_stats(out)
        assert stats is not None, "unexpected 'rcu' output:\n" + out
        assert stats["broken"], "'rcu' does not report a BROKEN build:\n" + out

    def test_fails(self, control_boot, test):
        """``test NAME`` reports ``Test failed: <the oracle's reason>``."""
        _, check, what = control_boot.tests[test]
        expect_failure(control_boot.k, test, check, what)

    def test_no_panic(self, control_boot):
        """The failure is reported, not a crash."""
        control_boot.k.check_no_panic()

    def test_halt(self, control_boot):
        """The kernel still halts cleanly after the failed test."""
        control_boot.k.halt(HALT_TIMEOUT)


def _control_class(ident):
    """The steps of control ``ident`` as a class of their own (one boot, one
    xdist group), named after it: ``shootdown`` -> TestControlShootdown."""
    name = "TestControl" + "".join(w.capitalize()
                                   for w in re.split(r"[-_]", ident))
    return type(name, (ControlSteps,), {
        "CONTROL": ident, "__doc__": "Control %s: %s" % (
            ident, ControlSteps.__doc__)})


for _ident in CONTROLS:
    _cls = _control_class(_ident)
    globals()[_cls.__name__] = _cls
del _ident, _cls


def _defect_kernel(knob, smp, name, extra_args=()):
    kernel = broken_elf(knob)
    if not os.path.isfile(kernel):
        pytest.fail("%s is missing: run 'make controls'" % kernel)
    return kconsole.Kernel(smp=smp, kernel=kernel, extra_args=extra_args,
                           name=name)


#: What arearace prints at the end of a run (shrink or destroy).
AREARACE_RE = re.compile(
    r"^arearace: (\w+): rounds (\d+), raced (\d+), lost (\d+)$", re.M)


def _arearace_fails(rounds, name):
    with _defect_kernel("arearace", 2, name, ["-cpu", "max"]) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        for mode in ("", "-d"):
            out = k.cmd("run arearace -r %d %s" % (rounds, mode),
                        CMD_TIMEOUT * 2)
            m = AREARACE_RE.search(out)
            assert m, out
            assert int(m.group(4)) > 0, (
                "the broken build lost no page: arearace cannot catch the "
                "unmap after the release:\n%s" % out)
            assert re.search(r"^task \d+ \(arearace\) exited with status "
                             r"1$", out, re.M), out
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


def test_control_arearace():
    """Control arearace.patch (area_mtx released before the unmap): arearace
    (shrink, then -d: destroy) must report lost rounds and exit 1 (printed
    at -smp 2: 'rounds 3, raced 3, lost 3' for both; 10 of 10 with -r 10).
    Three rounds each here (about 8 s), ten in make soak."""
    _arearace_fails(3, "control-arearace")


@pytest.mark.soak
def test_control_arearace_soak():
    """make soak: the same with arearace's ten rounds per mode."""
    _arearace_fails(10, "control-arearace-soak")


#: What `regs threads` prints at its end (tests/test_regs.py).
REGS_THREADS_RE = re.compile(
    r"^regs threads: .*: (\d+) threads on CPU 0, (\d+) rounds each: (\d+) of "
    r"(\d+) rounds corrupted, (\d+) registers not in the initial state", re.M)


def test_control_uctx():
    """Control uctx.patch (the scheduler neither saves nor loads a user
    thread's register state, proc/uctx.h, with user FP/SIMD enabled): ``regs check`` after ``regs set`` must see the previous
    task's registers and ``regs threads 4 200`` corrupted rounds, exit 1
    (printed at -smp 2: 'regs check: ...: 31 differ from the initial
    state', '755 of 800 rounds corrupted, 124 registers not in the initial
    state at thread start')."""
    with _defect_kernel("uctx", 2, "control-uctx") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        k.cmd("run regs set", CMD_TIMEOUT)
        out = k.cmd("run regs check", CMD_TIMEOUT)
        m = re.search(r"regs check: .*: (\d+) differ", out)
        assert m and int(m.group(1)) > 0 and re.search(
            r"exited with status 1$", out, re.M), (
            "the broken build kept the registers apart: regs check cannot "
            "see the previous task's state:\n" + out)
        out = k.cmd("run regs threads 4 200", CMD_TIMEOUT)
        m = REGS_THREADS_RE.search(out)
        assert m and int(m.group(3)) > 0 and re.search(
            r"exited with status 1$", out, re.M), (
            "no corrupted round on the broken build:\n" + out)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


#: The debug assertion futexrace's defect trips (the last thread leaving a
#: futex whose waiter count stayed too high).
FUTEX_ASSERT_RE = re.compile(
    rb"PANIC on CPU \d+: Assertion failed: f->waiters == 0, in "
    rb"futex_put_locked\(\)")


def _futexrace_panics(smp):
    with _defect_kernel("futexrace", smp, "control-futexrace-smp%d" % smp) \
            as k:
        k.wait_prompt(BOOT_TIMEOUT)
        for line in ("run futexrace -t 5", "run futexrace -t 5 -n 16",
                     "run futexrace -t 5 -n 16"):
            k.send_line(line)
            idx, m, before = k.expect(
                [FUTEX_ASSERT_RE, ANY_PANIC_RE, kconsole.PROMPT_RE],
                CMD_TIMEOUT, "the end of %r" % line, check_panic=False)
            if idx == 0:
                return
            assert idx == 2, "%s: another panic: %s\n%s" % (
                line, kconsole.decode(m.group(0)), kconsole.decode(before))
        pytest.fail("three futexrace runs ended without the waiter-count "
                    "assertion: the test cannot catch the left-behind wake-up")


def test_control_futexrace():
    """Control futexrace.patch (a timed-out waiter that a waker counted
    leaves the wake-up behind): ``run futexrace`` must end in the waiter
    count's assertion, in one of up to three runs (-smp 2: on the first
    run in 4 of 5 boots, on the second, '-n 16', in the other)."""
    _futexrace_panics(2)


def test_control_inputflood():
    """Control inputflood.patch (a full input ring drops what the UART
    holds): the console flood of tests/test_fuzz.py must lose markers."""
    import test_fuzz
    with _defect_kernel("inputflood", 2, "control-inputflood") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        missing, _ = test_fuzz.flood(k, 0)
        assert missing, ("the broken build answered every marker: the flood "
                         "cannot catch dropped input")


def test_control_ptwalk1():
    """Control ptwalk1.patch (paging_walk() installs a new intermediate table
    with a store that can overwrite one another CPU installed after its
    load): ``test ptwalk1long`` (2000 rounds of
    ptwalk1's race, every CPU faulting in its own 2 MiB region of a fresh
    address space) at -smp 4 must report an orphaned table. ptwalk1's 100
    rounds failed in 1 of 2 runs at -smp 4, so 2000 rounds leave a pass
    about one chance in a million."""
    with _defect_kernel("ptwalk1", 4, "control-ptwalk1") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        expect_failure(k, "ptwalk1long", PTWALK1_RE.search,
                       "a table orphaned by an overwriting install")
        k.check_no_panic()
        k.halt(timeout=BOOT_TIMEOUT)


#: framedf1's panic before the double-free diagnosis (from the frame's own state, which
#: the merge of its first free made FRAME_TAIL).
FRAMEDF1_OLD_RE = re.compile(
    rb"PANIC on CPU \d+: frame_free\(0x[0-9a-f]+, 1\): block is not an "
    rb"allocated single frame \(freed twice or with a wrong count; found "
    rb"when its CPU's cache was flushed\)")


def test_control_framedf1():
    """Control framedf1.patch (debug): framedf1 must end in the old panic,
    which does not name the double free, and tests/test_mm_checks.py's
    oracle must refuse it."""
    from test_mm_checks import DOUBLE_FREE_RE
    with _defect_kernel("framedf1", 2, "control-framedf1") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        m = expect_test_panic(k, "framedf1", FRAMEDF1_OLD_RE,
                              TEST_ONE_TIMEOUT, "the old diagnosis",
                              any_panic=True)
        assert not DOUBLE_FREE_RE.search(m.group(0)), m.group(0)


class TestControlReasons:
    """The reason checks on canned text (no QEMU)."""

    #: What rcu1 printed on build/rcu-broken and build/podzimek-broken
    #: (-smp 2); another A-RCU run printed 3 parts (no sequence check race).
    RCU1_BROKEN_4 = (
        "4 parts failed: preempted readers: preempted before GP detection: "
        "the callback ran while the reader was still inside its section; "
        "rcu_synchronize waits for a reader: rcu_synchronize returned while "
        "a preempted (yielding) reader was inside; thread exits inside a "
        "reader: a callback posted inside the section of an exiting thread "
        "ran before the thread exited; sequence check: 1 readers saw a "
        "callback posted after their start complete while they were inside")
    RCU1_A_RCU_BROKEN = (
        "3 parts failed: preempted readers: preempted before GP detection: "
        "the callback ran while the reader was still inside its section; "
        "rcu_synchronize waits for a reader: rcu_synchronize returned while "
        "a preempted (yielding) reader was inside; thread exits inside a "
        "reader: a callback posted inside the section of an exiting thread "
        "ran before the thread exited")

    def test_rcu1(self):
        assert _rcu1_both_early(self.RCU1_A_RCU_BROKEN)
        assert _rcu1_both_early(self.RCU1_BROKEN_4)
        # Only one of the two kinds: not enough.
        assert not _rcu1_both_early(
            "1 part failed: preempted readers: preempted before GP "
            "detection: the callback ran while the reader was still inside "
            "its section")
        assert not _rcu1_both_early(
            "1 part failed: rcu_synchronize waits for a reader: "
            "rcu_synchronize returned while a spinning reader (preempted by "
            "the timer) was inside")
        assert _rcu1_both_early(
            "2 parts failed (stopped after part 5 of 9): rcu_synchronize "
            "waits for a reader: rcu_synchronize returned while a preempted "
            "(yielding) reader was inside; sequence check: 2 readers saw a "
            "callback posted after their start complete while they were "
            "inside")
        assert not _rcu1_both_early("1 part failed: rcu_barrier: a thread "
                                    "did not finish")

    def test_smpcall(self):
        assert _smpcall_short("pairs: CPU 1 counted 199 calls, expected 200")
        assert not _smpcall_short(
            "pairs: CPU 1 counted 201 calls, expected 200")
        assert not _smpcall_short("sync+async: a call ran on the wrong CPU")

    def test_stale(self):
        assert STALE_RE.search(
            "18 errors, first: stale translation: thread 0 on CPU 0 read "
            "0x42f74b714907831 from page 0x40004000 after thread 1 unmapped "
            "it")
        assert not STALE_RE.search("page hash table entries not back at the "
                                   "baseline")

    def test_chtcount(self):
        # Printed by build/broken-chtcount at -smp 2.
        assert CHTCOUNT_NEG_RE.search(
            "the item count read -2, below zero: a remove was counted before "
            "the insert of its item (counted after linking)")
        assert not CHTCOUNT_NEG_RE.search(
            "the item count read 18446744073709551615 with at most 2 items "
            "in the table (wrapped below zero)")
        assert not CHTCOUNT_NEG_RE.search("the table grew 3 times although "
                                          "it never held more than "
                                          "max_load = 2 items")

    def test_rcuunlock1(self):
        # Printed by build/broken-rcuunlock1 at -smp 2.
        assert RCUUNLOCK_RE.search(
            "a grace period did not complete while a reader was switched "
            "out between the subtraction and the check of rcu_read_unlock "
            "(it stayed on the preempted-readers list)")
        assert not RCUUNLOCK_RE.search(
            "the reader was never marked preempted (no grace period "
            "detection reached it)")

    def test_asrace1(self):
        # Printed by build/broken-asrace1 at -smp 2 and 4.
        assert ASRACE_RE.search(
            "cycle 120: page 0x7002a000 has a record after its area was "
            "destroyed (frame 0x7d3000 outlives it)")
        assert not ASRACE_RE.search("cycle 3: writers did not stop")

    def test_mapping2(self):
        # Printed by build/broken-mapping2 at -smp 2.
        assert MAPPING2_RE.search(
            "part 1: after 3000 concurrent updates each the page has 138 "
            "records (table: 137 entries more than before), mapping not a "
            "last written 0x8f00b2e000")
        assert not MAPPING2_RE.search(
            "part 1: after 3000 concurrent updates each the page has 1 "
            "records (table: 0 entries more than before), mapping not a "
            "last written 0x8f00b2e000")
        # ... and in another boot (part 1 then found one record).
        assert MAPPING2_RE.search(
            "part 2 round 81: update after the remove returned EOK")
        assert not MAPPING2_RE.search("part 3: insert failed")

    def test_workq(self):
        assert _workq_lost("21 items accepted and never run (queue idle)")
        assert _workq_lost("1 item accepted and never run (queue idle)")
        assert not _workq_lost("0 items accepted and never run (queue idle)")
        assert not _workq_lost(
            "stress run did not finish in time (items stuck)")
        assert not _workq_lost("out of memory")
