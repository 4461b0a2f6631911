"""Ring 3 must never take the kernel down: entry paths and fault
classification.

One QEMU boot per configuration runs every variant of ``uspace/app/attack``
in sequence (``make test``: -smp 2 with and without ``-cpu max``; ``make
soak``: -smp 1 and 4, both ways, and -smp 2 with ``-cpu
max,vendor=GenuineIntel``, where ``sysenter`` meets SYSENTER_CS = 0).  Each ``run attack VARIANT`` must end
with the task killed (the one-line report ``task N (attack) thread T
killed: ...`` and ``task N (attack) killed (...)``) or, for a legitimate far
transfer to the 64-bit user code segment, with the task's exit; the
console must answer (the prompt returns); no PANIC and QEMU still running.
After all of them ``tasks`` is empty and the kernel's counters are back at
their baseline (the same check as tests/test_tasks.py).

Before the fix: ``compat-syscall`` and ``ljmp32`` make QEMU
exit without a word (CSTAR unset: RIP 0 in ring 0 on the user stack, triple
fault); ``lretq-fault`` panics in every configuration (QEMU pops far-return
frames as supervisor accesses: error code U=0, judged a kernel fault);
under ``-cpu max`` every far return in user mode panics with "kernel access
to a user page outside uaccess (SMAP)".

QEMU 7.2 quirk: with SMAP on, it does the stack pops of a user-mode lretq or
iretq as supervisor accesses even when they are legitimate, so under ``-cpu
max`` a far return to 0x2b may also be a fault; the task is then killed
(with a page-fault report, #PF) -- either outcome is accepted there, never a panic.
"""

import re

import pytest

from tools import kconsole

from conftest import KERNEL_ELF, expect_test_panic
from patterns import EXIT_RE, KILLED_RE, REPORT_RE
from test_tasks import CMD_TIMEOUT, BOOT_TIMEOUT, settle, run_exit
from test_regs import AMD64_AVX, AMD64_BASE, check_regs

#: What ring 3 learns without UMIP.
UMIP_VARIANTS = ("sidt", "sgdt", "sldt", "str", "smsw")

#: (smp, -cpu model or None for QEMU's default qemu64, soak only). The
#: GenuineIntel model makes `sysenter` in 64-bit mode reach its SYSENTER_CS
#: check (#GP) instead of the AMD #UD.
CONFIGS = [
    (2, "max", False),
    (2, None, False),
    (1, "max", True),
    (1, None, True),
    (4, "max", True),
    (4, None, True),
    (2, "max,vendor=GenuineIntel", True),
]


def _cpu_id(cpu):
    return "" if cpu is None else "-cpu" + cpu.replace(",vendor=", "-")

#: Selectors for lretq/ljmp/iretq: every GDT slot (0x00..0x38) and the
#: first one past the end with RPL 0 and 3, LDT selectors, the largest one.
SELECTORS = sorted({i * 8 + rpl for i in range(9) for rpl in (0, 3)} |
                   {0x04, 0x07, 0x1c, 0x1f, 0xfffb, 0xffff})
#: The 64-bit user code segment: a far transfer to it is legitimate (an
#: ljmp also with RPL 0: a jump sets CS.RPL to the CPL; a far return or
#: iretq to RPL 0 is a return to ring 0 and faults).
UCODE = {"lretq": (0x2b,), "ljmp": (0x28, 0x2b), "iretq": (0x2b,)}


def _param(c):
    smp, cpu, soak = c
    return pytest.param(c, marks=[pytest.mark.soak] if soak else [],
                        id="smp%d%s" % (smp, _cpu_id(cpu)))


@pytest.fixture(scope="class", params=[_param(c) for c in CONFIGS])
def sec_boot(request, boot_factory):
    """The default kernel with the programs, at the configuration's -smp
    and -cpu."""
    smp, cpu, _ = request.param
    boot = boot_factory(request, smp=smp, kernel=KERNEL_ELF,
                        extra_args=["-cpu", cpu] if cpu else [],
                        name="security-smp%d%s" % (smp, _cpu_id(cpu)))
    # SMAP on: the QEMU 7.2 far-return quirk applies.
    boot.cpumax = cpu is not None and cpu.startswith("max")
    return boot


def expect_killed(k, variant):
    """``run attack VARIANT`` must kill the task with its report."""
    __tracebackhide__ = True
    out = k.cmd("run attack %s" % variant, CMD_TIMEOUT)
    assert re.search(r"^attack: ", out, re.MULTILINE), \
        "attack %s did not start:\n%s" % (variant, out)
    rep = REPORT_RE.search(out)
    killed = KILLED_RE.search(out)
    assert rep and killed, "attack %s: no report or kill line:\n%s" % (
        variant, out)
    assert rep.group(2) == "attack" and rep.group(1) == killed.group(1), out
    assert "survived" not in out and not EXIT_RE.search(out), out
    return rep


def expect_returned(k, variant, cpumax):
    """A legitimate far transfer: the task exits 0 (or, under -cpu max on
    QEMU 7.2, may be killed by a #PF on the far return's pop)."""
    __tracebackhide__ = True
    out = k.cmd("run attack %s" % variant, CMD_TIMEOUT)
    ex = EXIT_RE.search(out)
    if ex:
        assert int(ex.group(3)) == 0 and "attack: returned through" in out, out
        return
    rep = REPORT_RE.search(out)
    assert cpumax and rep and KILLED_RE.search(out) and \
        rep.group(4).startswith("page fault"), \
        "attack %s: neither exit 0 nor (with -cpu max) a page-fault kill:\n%s" % (
            variant, out)


#: May share the host CPUs (conftest.py): every attack is one thread's
#: instructions and the kill or exit it earns, never a race.
@pytest.mark.concurrent
class TestAttack:
    """Each attack kills only its task; the kernel stays up."""

    def test_boot(self, sec_boot):
        """The kernel reaches the prompt; a first task for the baseline."""
        k = sec_boot.k
        k.wait_prompt(BOOT_TIMEOUT)
        run_exit(k, "run hello")
        sec_boot.baseline = settle(k)

    def test_simple(self, sec_boot):
        """sysenter (64-bit), int3/icebp/into, the trap flag."""
        for v in ("sysenter", "int3", "icebp", "into", "tf", "tf-sysenter"):
            expect_killed(sec_boot.k, v)

    def test_nt(self, sec_boot):
        """RFLAGS.NT set by user code survives system calls and interrupts
        (the kernel's iretq and sysretq must not trip over it): exit 0."""
        _, status, out = run_exit(sec_boot.k, "run attack nt")
        assert status == 0 and "attack: returned with NT" in out, out

    def test_int_all(self, sec_boot):
        """``int $N`` for every N kills the task (no gate has DPL 3)."""
        for n in range(256):
            expect_killed(sec_boot.k, "int %d" % n)

    def test_lretq_fault(self, sec_boot):
        """A user lretq whose pop faults (error code U=0) is the task's
        fault: judged by the saved CS, not by the U bit."""
        rep = expect_killed(sec_boot.k, "lretq-fault")
        assert rep.group(4).startswith("page fault"), rep.group(0)

    def test_lretq_ok(self, sec_boot):
        """A legitimate lretq to 0x2b returns (see the QEMU quirk above)."""
        expect_returned(sec_boot.k, "lretq-ok", sec_boot.cpumax)

    def test_compat(self, sec_boot):
        """Compat mode: lretq/ljmp to 0x1b, then syscall/sysenter/ud2."""
        for v in ("lret32", "compat-sysenter", "compat-syscall", "ljmp32"):
            expect_killed(sec_boot.k, v)

    def test_selectors(self, sec_boot):
        """lretq, ljmp and iretq to every GDT selector and some beyond."""
        for kind in ("lretq", "ljmp", "iretq"):
            for sel in SELECTORS:
                v = "%s %#x" % (kind, sel)
                if sel in UCODE[kind]:
                    expect_returned(sec_boot.k, v, sec_boot.cpumax)
                else:
                    expect_killed(sec_boot.k, v)

    def test_flags(self, sec_boot):
        """RFLAGS.AC and DF set by user code: the system call's copy runs
        with both clear (its text arrives forwards), the thread keeps its
        own flag across system calls and timer interrupts: exit 0."""
        for v in ("ac", "df"):
            _, status, out = run_exit(sec_boot.k, "run attack " + v)
            assert status == 0 and "attack: written with the flag set" in out \
                and "flag set before, set after; kept" in out, out

    def test_x87_exception(self, sec_boot):
        """An unmasked x87 divide by zero is #MF (CR0.NE) and kills only
        the task as ``arithmetic trap``. Before the fix (CR0.NE clear) the
        error went nowhere: ``task 1 (attack) exited with status 1``.
        (``attack sse-fpe``, #XM, is not tested: QEMU 7.2's TCG raises no
        SIMD exception.)"""
        rep = expect_killed(sec_boot.k, "x87-fpe")
        assert rep.group(4) == "arithmetic trap", rep.group(0)

    def test_umip(self, sec_boot):
        """With UMIP (``-cpu max``) sidt, sgdt, sldt, str and smsw are
        killed as protection faults; without (qemu64) they run. Before the
        fix, under -cpu max: ``attack: survived sidt (UMIP off): base
        0xffffffff8034a640``."""
        k = sec_boot.k
        m = re.search(r"User space: .*SMAP \w+[^,]*, UMIP (\w+)", k.log_text)
        assert m, "no UMIP in the boot log"
        assert (m.group(1) == "on") == sec_boot.cpumax, m.group(0)
        for v in UMIP_VARIANTS:
            if sec_boot.cpumax:
                rep = expect_killed(k, v)
                assert rep.group(4) == "protection fault", rep.group(0)
            else:
                _, status, out = run_exit(k, "run attack " + v)
                assert status == 1 and "survived %s (UMIP off)" % v in out, out

    def test_regs(self, sec_boot):
        """Per-thread x87/MMX/SSE(/AVX) state and DS/ES/FS/GS
        (tests/test_regs.py): FXSAVE on qemu64, XSAVE with AVX on -cpu
        max."""
        k = sec_boot.k
        m = re.search(r"FP state per thread: (\w+), (\d+) bytes: ([\w ]+)",
                      k.log_text)
        assert m, "no FP state line in the boot log"
        if sec_boot.cpumax:
            assert m.group(1) == "XSAVE" and "AVX" in m.group(3), m.group(0)
        check_regs(k, CMD_TIMEOUT, AMD64_AVX if "AVX" in m.group(3)
                   else AMD64_BASE)

    def test_console_and_baseline(self, sec_boot):
        """``tasks`` answers and is empty; counters back at the baseline."""
        k = sec_boot.k
        out = k.cmd("tasks", CMD_TIMEOUT)
        assert re.search(r"^0 tasks$", out, re.MULTILINE), out
        now = settle(k, sec_boot.baseline)
        assert now == sec_boot.baseline, "after the attacks: %s, baseline %s" \
            % (now, sec_boot.baseline)

    def test_halt(self, sec_boot):
        """No panic; halt powers off."""
        k = sec_boot.k
        k.check_no_panic()
        k.halt()


DF_RE = re.compile(rb"PANIC on CPU \d+: Exception #8 \(#DF Double fault\)")


def test_double_fault_panics():
    """``test dfstack1`` (unsafe): a push on an unmapped stack with the user
    GS base loaded must end in the readable #DF panic (the double fault runs
    on its IST stack and finds the kernel GS base by the MSR), not in a
    silent triple fault or a hang."""
    with kconsole.Kernel(smp=2, kernel=KERNEL_ELF,
                         name="security-dfstack1") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        expect_test_panic(k, "dfstack1", DF_RE, CMD_TIMEOUT, "the #DF panic")
