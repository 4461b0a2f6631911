"""User programs and fault reports on arm64, one -smp 2 boot.

The arm64 A-RCU kernel (build/arm64, ``make arm64``) with every program of
uspace/app linked into its image. In order, on one boot:

* a warm-up ``run hello`` and the baseline of the kernel's counters
  (tests/leaks.py: frames, heap allocations, page hash entries, page-table
  records, tasks, address spaces);
* every ``fault`` variant kills only its task with the report line amd64
  prints for it, addresses aside (tests/test_tasks.py's REPORT_RE and
  FAULT_CLASSES: the class is generic, task_user_fault()); ``fault div``
  is the checked division (``brk #0x5503``: AArch64's UDIV does not trap)
  reported as a divide error, and ``fault udiv0`` shows the bare UDIV by
  zero giving 0 and exiting 0;
* every ``attack`` variant of uspace/app/attack/attack_arm64.c (EL1
  registers and instructions, trapped EL0 accesses, breakpoints, kernel and
  direct-map accesses and branches, alignment, system calls with junk
  immediates, numbers and stack pointers) ends exactly as ATTACKS says:
  killed with that class, or (``ok``) a legitimate return and exit 0; the
  program's own ``attack list`` must name the same variants and outcomes;
* ``limits threads`` and ``limits areas`` are refused with ELIMIT and exit
  0; ``run -b limits hold 2000`` is listed by ``tasks`` and ended by
  ``kill``; a 5-second ``sysfuzz`` with a fixed seed finds no anomaly, is not
  killed and exits 0; a short ``futexbench`` has no errors;
* afterwards ``tasks`` is empty, the counters are back at the baseline,
  ``test rcu1`` passes and there was no panic.

``make soak`` (test_soak_smp4) boots -smp 4 for the fault and attack
variants, three 60-s sysfuzz seeds with 8 threads and a longer futexbench,
with the same end checks.

The verdicts come from what the kernel printed; the timeouts are liveness
bounds only.
"""

import contextlib
import os
import re
import subprocess

import pytest

from tools import kconsole
import leaks
from conftest import REPO, ARM64_KERNEL as KERNEL, needs_arm64
from conftest import ARM64_BOOT_TIMEOUT as BOOT_TIMEOUT
from conftest import ARM64_CMD_TIMEOUT as CMD_TIMEOUT
from conftest import TASK_SETTLE_TIMEOUT as SETTLE_TIMEOUT
from patterns import EXIT_RE, KILLED_RE, REPORT_RE, FAULTS, FAULT_CLASSES
from test_regs import ARM64_GROUPS, check_regs

SYSFUZZ_SEED = 32
SYSFUZZ_SECONDS = 5

INVALID = "invalid instruction"
PROT = "protection fault"
NOAREA = "page fault: no area at that address"
#: attack_arm64.c's variants and what the kernel must make of each: the
#: class of the report that kills the task, or "ok" (exit 0).
ATTACKS = {
    # EL1 system registers and instructions: UNDEFINED at EL0 (EC 0).
    "msr-ttbr0": INVALID, "mrs-ttbr1": INVALID, "msr-vbar": INVALID,
    "mrs-sctlr": INVALID, "msr-sctlr": INVALID, "mrs-tpidr1": INVALID,
    "msr-spsel": INVALID, "msr-tpidrro": INVALID, "eret": INVALID,
    "hvc": INVALID, "smc": INVALID, "at": INVALID, "tlbi": INVALID,
    "dc-ivac": INVALID, "udf": INVALID,
    # SVE and SME: absent on the Cortex-A72 (EC 0; under -cpu max trapped
    # by CPACR_EL1.ZEN/SMEN, EC 0x19/0x1d, tests/test_regs.py); LSE atomics
    # absent on the Cortex-A72.
    "sve": INVALID, "sme": INVALID, "ldadd": INVALID,
    # Trapped by SCTLR_EL1 (UMA, nTWI, DZE, UCI, UCT), CNTKCTL_EL1 and
    # PMUSERENR_EL0 (EC 0x18, 0x01).
    "daif": PROT, "daifclr": PROT, "wfi": PROT, "dc-zva": PROT,
    "dc-civac": PROT, "ic-ivau": PROT, "mrs-ctr": PROT, "mrs-cntvct": PROT,
    "mrs-cntfrq": PROT, "mrs-pmccntr": PROT, "msr-cntv-ctl": PROT,
    "brk": "breakpoint", "brk-div": "divide error",
    # Kernel addresses (UXN on the direct map: no EL0 fetch either).
    "load-kernel": NOAREA, "store-kernel": NOAREA, "load-linear": NOAREA,
    "store-linear": NOAREA, "load-uart": NOAREA, "store-uart": NOAREA,
    "jump-kernel": NOAREA, "jump-linear": NOAREA, "sp-kernel": NOAREA,
    "pc-align": "alignment fault", "ldxr-align": "alignment fault",
    # Legitimate at EL0 (sp-align: SCTLR_EL1.SA0 clear and QEMU omits
    # the check; wfe: SCTLR_EL1.nTWE set).
    "sp-align": "ok", "svc-imm": "ok", "svc-junk": "ok", "svc-sp": "ok",
    "tpidr": "ok", "wfe": "ok", "nzcv": "ok",
    # FP/SIMD is EL0's own (per-thread V0-V31, FPCR, FPSR: proc/uctx.h).
    "fp": "ok",
}
#: Where the report's address must be (the rest: the instruction's).
ATTACK_ADDRESSES = {
    "load-kernel": 0xffff800040200000, "store-kernel": 0xffff800040200000,
    "jump-kernel": 0xffff800040200000, "load-linear": 0xffff800048000000,
    "store-linear": 0xffff800048000000, "jump-linear": 0xffff800048000000,
    "load-uart": 0xffff800009000000, "store-uart": 0xffff800009000000,
    "sp-kernel": 0xffff8000401ffff0,
}

pytestmark = needs_arm64


def build():
    """Build build/arm64 as ``make arm64`` does (unless KTEST_NO_BUILD=1, as
    make test sets: it has built it)."""
    if os.environ.get("KTEST_NO_BUILD") == "1":
        return
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    proc = subprocess.run(["make", "--no-print-directory", "ARCH=arm64",
                           "BUILD=build/arm64", "RCU=a-rcu", "RCU_BROKEN=0",
                           "BROKEN=", "PAGE_HT=cht", "kernel"], cwd=REPO,
                          env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    assert proc.returncode == 0, "make ARCH=arm64 failed:\n" + \
        proc.stdout.decode("utf-8", "replace")[-3000:]


@contextlib.contextmanager
def booted(smp):
    """The arm64 A-RCU kernel at -smp ``smp``, at its prompt;
    ``k.baseline``: the counters after a warm-up run."""
    build()
    if not os.path.exists(KERNEL):
        pytest.fail("missing %s: make arm64" % KERNEL)
    kern = kconsole.Kernel(smp=smp, kernel=KERNEL, arch="arm64",
                           name="arm64-programs-smp%d" % smp)
    kern.start()
    try:
        kern.wait_prompt(BOOT_TIMEOUT)
        run_exit(kern, "run hello")
        kern.baseline = leaks.settle(lambda: counters(kern), None,
                                     SETTLE_TIMEOUT)
        yield kern
    finally:
        kern.close()


@pytest.fixture(scope="module")
def k():
    """The -smp 2 boot every test but the soak one shares."""
    with booted(2) as kern:
        yield kern


def counters(k):
    return leaks.counters(k, CMD_TIMEOUT)


def expect_killed(k, line, prog, kind):
    """``line`` kills its task (``prog``) with the report of class ``kind``;
    returns the report's match."""
    __tracebackhide__ = True
    out = k.cmd(line, CMD_TIMEOUT)
    rep = REPORT_RE.search(out)
    killed = KILLED_RE.search(out)
    assert rep and killed, "%s: no report or kill line:\n%s" % (line, out)
    assert rep.group(2) == prog and rep.group(1) == killed.group(1), out
    assert rep.group(4) == kind == killed.group(3), \
        "%s: expected %r:\n%s" % (line, kind, out)
    assert "survived" not in out and not EXIT_RE.search(out), out
    return rep


def run_exit(k, line, timeout=CMD_TIMEOUT):
    """Run ``line``: its task must exit 0; returns the output."""
    __tracebackhide__ = True
    out = k.cmd(line, timeout)
    m = EXIT_RE.search(out)
    assert m and int(m.group(3)) == 0, "%s: no exit 0:\n%s" % (line, out)
    assert not KILLED_RE.search(out), out
    return out


def test_faults(k):
    """Every fault variant: amd64's line (class), only its task killed."""
    for variant in FAULTS:
        rep = expect_killed(k, "run fault " + variant, "fault",
                            FAULT_CLASSES[variant])
        pc = int(rep.group(6), 16)
        addr = int(rep.group(5), 16)
        # Instruction faults report the instruction's address.
        if variant in ("ud", "div", "gp", "jump", "nx"):
            assert addr == pc, rep.group(0)
    out = run_exit(k, "run fault udiv0")
    assert "fault: udiv 1 / 0 = 0 (no trap on AArch64)" in out, out


def test_attack(k):
    """Every arm64 attack variant ends as ATTACKS says; the kernel stays
    up (the next command answers)."""
    check_attacks(k)


def check_attacks(k):
    __tracebackhide__ = True
    out = run_exit(k, "run attack list")
    listed = dict(re.findall(r"^attack: ([a-z0-9-]+): (.+)$", out, re.M))
    assert listed == ATTACKS, "attack list differs from ATTACKS:\n" + out
    for variant, outcome in sorted(ATTACKS.items()):
        line = "run attack " + variant
        if outcome == "ok":
            out = run_exit(k, line)
            assert "attack: returned from %s" % variant in out, out
            continue
        rep = expect_killed(k, line, "attack", outcome)
        assert "attack: %s: " % variant in rep.string, rep.string
        addr, pc = int(rep.group(5), 16), int(rep.group(6), 16)
        want = ATTACK_ADDRESSES.get(variant)
        if want is not None:
            assert addr == want, rep.group(0)
        elif outcome != "alignment fault" or variant == "pc-align":
            assert addr == pc, rep.group(0)


def test_regs(k):
    """V0-V31, FPCR, FPSR and TPIDR_EL0 per thread, the initial state in
    every new task and thread (tests/test_regs.py; before the fix a new task
    read the previous task's TPIDR_EL0 and two threads on one CPU corrupted
    each other's in 1993 of 2000 rounds)."""
    check_regs(k, CMD_TIMEOUT, ARM64_GROUPS)


def test_regs_x18(k):
    """x18 is the kernel's RCU reader count (arch/arm64/include/arch/
    rcu_arch.h): an exception from EL0 runs the kernel with 0 and gives the
    user's x18 back. ``regs x18`` sleeps 20 times with x18 = 2 (one open
    reader section to a kernel that used it). With the reset on entry left
    out (the defect put back once) the debug kernel panicked: "Assertion
    failed: blocking inside an RCU reader section, in waitq_sleep_finish()"
    (from sys_futex_wait); with the restore on return left out the program
    printed "20 sleeps with x18 = 2: 20 changed it" (x18 came back 0)."""
    out = run_exit(k, "run regs x18 20")
    assert "regs x18: 20 sleeps with x18 = 2: 0 changed it" in out, out


def test_limits(k):
    """Thread records and areas: refused with ELIMIT, exit 0."""
    out = run_exit(k, "run limits threads")
    assert re.search(r"^limits threads: refused after \d+ unjoined threads: "
                     r"-?\d+ \(ELIMIT\)$", out, re.M), out
    assert re.search(r"^limits threads: joined \d+ \(0 failed\), then "
                     r"create: \d+$", out, re.M), out
    out = run_exit(k, "run limits areas")
    assert re.search(r"^limits: refused after \d+ areas of 4 KiB .*"
                     r"\(ELIMIT\)$", out, re.M), out


def test_kill(k):
    """A background task holding 2,000 areas: listed by ``tasks``, ended by
    ``kill`` with its line."""
    out = k.cmd("run -b limits hold 2000", CMD_TIMEOUT)
    m = re.search(r"^task (\d+) \(limits\) started in the background$", out,
                  re.M)
    assert m, out
    tid = int(m.group(1))
    k.wait_line(out, r"limits hold: 2000 areas", CMD_TIMEOUT)
    out = k.cmd("tasks", CMD_TIMEOUT)
    assert re.search(r"^\s+%d\s+limits\s" % tid, out, re.M), out
    out = k.cmd("kill %d" % tid, CMD_TIMEOUT)
    assert "task %d (limits) killed by request" % tid in out, out
    k.wait_line(out, r"task %d \(limits\) killed \(kill command\)" % tid,
                CMD_TIMEOUT)


def test_sysfuzz(k):
    """A short fixed-seed system-call fuzz: no anomaly, not killed, exit 0,
    every system call issued."""
    check_sysfuzz(k, SYSFUZZ_SEED, SYSFUZZ_SECONDS, 4)


def check_sysfuzz(k, seed, seconds, threads):
    __tracebackhide__ = True
    line = "run sysfuzz -s %d -t %d -n %d" % (seed, seconds, threads)
    out = run_exit(k, line, CMD_TIMEOUT + 3 * seconds)
    assert re.search(r"^sysfuzz: seed %d threads %d seconds %d" % (
        seed, threads, seconds), out, re.M), out
    assert not re.search(r"^sysfuzz: ANOMALY", out, re.M), out
    assert re.search(r"^sysfuzz: seed %d: \d+ calls, \d+ errors, "
                     r"0 anomalies" % seed, out, re.M), out
    rows = dict(re.findall(r"^sysfuzz: +\d+ (\w+) +calls +(\d+) ", out, re.M))
    assert len(rows) >= 16 and all(int(n) > 0 for n in rows.values()), out


def test_futexbench(k):
    """Futex calls from a thread per CPU: every call's result right."""
    out = run_exit(k, "run futexbench -c 2000")
    assert re.search(r"^futexbench: threads=2 calls=4000 errors=0 ns=\d+$",
                     out, re.M), out


def test_kernel_intact(k):
    """After everything: no task left, counters back, rcu1 passes, no
    panic."""
    check_intact(k)


@pytest.mark.soak
def test_soak_smp4():
    """make soak: at -smp 4, every fault and attack variant, three
    sysfuzz seeds of 60 s with 8 threads, futexbench, then the same
    end checks."""
    with booted(4) as kern:
        for variant in FAULTS:
            expect_killed(kern, "run fault " + variant, "fault",
                          FAULT_CLASSES[variant])
        check_attacks(kern)
        for seed in (1, 2, 3):
            check_sysfuzz(kern, seed, 60, 8)
        out = run_exit(kern, "run futexbench -c 20000")
        assert re.search(r"^futexbench: threads=4 calls=80000 errors=0 ",
                         out, re.M), out
        check_intact(kern)


def check_intact(k):
    __tracebackhide__ = True
    out = k.cmd("tasks", CMD_TIMEOUT)
    assert "0 tasks" in out, out
    now = leaks.settle(lambda: counters(k), k.baseline, SETTLE_TIMEOUT)
    assert now == k.baseline, "counters not back: " + leaks.diff(
        now, k.baseline)
    ok, reason, out = k.run_test("rcu1", CMD_TIMEOUT)
    assert ok, "rcu1 failed (%s):\n%s" % (reason, out)
    k.check_no_panic()
    k.halt()
