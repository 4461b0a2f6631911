"""Per-thread user register state (proc/uctx.h): nothing crosses between threads or tasks.

``uspace/app/regs`` fills every user-writable register that is not a
general-purpose one with a pattern (amd64: x87/MMX, FCW/FSW/FTW, MXCSR,
XMM0-15, the upper halves of YMM0-15 where AVX is on, DS/ES/FS/GS; arm64:
V0-V31, FPCR, FPSR, TPIDR_EL0) and checks them; ``check_regs()`` is the
sequence every boot runs:

* ``regs check`` in a fresh task: the defined initial state (amd64 FCW
  0x37f, MXCSR 0x1f80, everything else 0; arm64 all 0);
* ``regs set`` (wired to CPU 0, the pattern, then exit), then ``regs check``
  again on CPU 0: still the initial state, nothing of the task before;
* ``regs threads 4 200`` and ``regs -l threads 4 200``: four threads wired
  to CPU 0, each starting in the initial state, writing its own pattern,
  yielding or sleeping so that they interleave and reading it back: no
  round may see another thread's registers;
* ``regs -m threads 4 30``: the same, but each round every thread wires
  itself to the next CPU: the state saved on one CPU is loaded on another.

The boots: amd64 -smp 2 with QEMU's default qemu64 (FXSAVE) and with
``-cpu max`` (XSAVE with AVX, UMIP on) in tests/test_security.py's
TestAttack; arm64 Cortex-A72 in tests/test_arm64_programs.py; arm64
``-cpu max`` here (with ``regs -p``: PSTATE.DIT and SSBS too), with the
FP/SVE/SME attack variants (SVE and SME must be
killed as ``invalid instruction``, EC 0x19 and 0x1d).

Before the fix (the program on the unfixed kernel), amd64 -smp 2:
``regs -l set`` then ``regs -l check`` printed ``ST0 =
0xeae:0c72973e78feb40f, expected 0:0000000000000000`` (and ST1-7, FTW, FS,
GS: 11 differ), and ``regs -l threads 2 1000`` ``1981 of 2000 rounds
corrupted, 23 registers not in the initial state at thread start``; SSE
could not run at all (CR4.OSFXSR clear). arm64: ``regs -l check`` after
``regs -l set`` printed ``TPIDR_EL0 = 0xc72973e78feb40f, expected 0``,
``regs -l threads 2 1000`` ``1993 of 2000 rounds corrupted``, and ``regs
check`` (V registers) was killed as ``invalid instruction``. Under arm64
``-cpu max`` without the EC 0x19/0x1d mapping, ``attack sve`` and ``attack
sme`` were killed as ``unexpected exception``.
"""

import os
import re

import pytest

from tools import kconsole
from conftest import (ARM64_KERNEL, ARM64_BOOT_TIMEOUT, ARM64_CMD_TIMEOUT,
                      needs_arm64)
from patterns import EXIT_RE, KILLED_RE, REPORT_RE

#: May share the 2 host CPUs in make test's first pytest run (conftest.py):
#: the threads are wired and switch by yield, sleep or a move to the next
#: CPU, never by a race.
pytestmark = pytest.mark.concurrent

#: This file does not build the arm64 kernel (make arm64 or
#: test_arm64_programs.py does): without it the arm64 test skips.
needs_arm64_kernel = pytest.mark.skipif(
    not os.path.exists(ARM64_KERNEL),
    reason="no build/arm64 kernel (make arm64)")

THREADS = 4
ROUNDS = 200
#: Rounds of ``regs -m``: each one a wire to another CPU (a tick's sleep).
MIGRATE_ROUNDS = 30

#: The register groups `regs info` names per architecture and CPU feature.
AMD64_BASE = "x87/MMX, MXCSR, XMM0-15, DS/ES/FS/GS"
AMD64_AVX = "x87/MMX, MXCSR, XMM0-15, YMM0-15, DS/ES/FS/GS"
ARM64_GROUPS = "V0-V31, FPCR, FPSR, TPIDR_EL0"
#: With ``-p`` (FEAT_DIT and FEAT_SSBS, -cpu max).
ARM64_GROUPS_PSTATE = ARM64_GROUPS + ", DIT, SSBS"


def _exit(k, line, timeout):
    __tracebackhide__ = True
    out = k.cmd(line, timeout)
    m = EXIT_RE.search(out)
    assert m and not KILLED_RE.search(out), \
        "%s: no exit line:\n%s" % (line, out)
    return int(m.group(3)), out


def check_regs(k, timeout, groups, opts=""):
    """The sequence of the module docstring on booted kernel ``k``; ``groups``
    is what ``regs info`` must print (the registers covered); ``opts`` goes
    before every mode (``"-p "``: arm64's PSTATE.DIT and SSBS too)."""
    __tracebackhide__ = True
    status, out = _exit(k, "run regs %sinfo" % opts, timeout)
    assert status == 0 and "regs: %s\n" % groups in out + "\n", out
    status, out = _exit(k, "run regs %scheck" % opts, timeout)
    assert status == 0 and ": 0 differ from the initial state" in out, out
    status, out = _exit(k, "run regs %sset" % opts, timeout)
    m = re.search(r"regs set: .*: (\d+) of (\d+) registers differ", out)
    assert status == 0 and m and 2 * int(m.group(1)) >= int(m.group(2)), out
    status, out = _exit(k, "run regs %scheck" % opts, timeout)
    assert status == 0 and ": 0 differ from the initial state" in out, \
        "a new task sees the previous task's registers:\n" + out
    for flag, rounds in (("", ROUNDS), ("-l ", ROUNDS),
                         ("-m ", MIGRATE_ROUNDS)):
        line = "run regs %s%sthreads %d %d" % (opts, flag, THREADS, rounds)
        status, out = _exit(k, line, timeout)
        assert status == 0 and re.search(
            r"regs threads: .*: %d threads (on CPU 0|moving between CPUs), "
            r"%d rounds each: 0 of %d rounds corrupted, 0 registers not in "
            r"the initial state" % (THREADS, rounds, THREADS * rounds),
            out), out


def expect_killed(k, line, kind, timeout):
    __tracebackhide__ = True
    out = k.cmd(line, timeout)
    rep, killed = REPORT_RE.search(out), KILLED_RE.search(out)
    assert rep and killed and rep.group(4) == kind == killed.group(3), \
        "%s: expected a kill as %r:\n%s" % (line, kind, out)
    assert "survived" not in out, out


@needs_arm64
@needs_arm64_kernel
def test_regs_arm64_cpu_max():
    """arm64 ``-cpu max`` (SVE, SME, FEAT_DIT, FEAT_SSBS): the register
    sequence with ``-p`` (PSTATE.DIT and SSBS, kept in each thread's
    exception frame, join the checked registers); FP/SIMD is legitimate, SVE and SME are killed as ``invalid
    instruction`` (not ``unexpected exception``), TPIDRRO_EL0 reads 0."""
    with kconsole.Kernel(smp=2, kernel=ARM64_KERNEL, arch="arm64",
                         extra_args=["-cpu", "max"],
                         name="regs-arm64-max") as k:
        k.wait_prompt(ARM64_BOOT_TIMEOUT)
        check_regs(k, ARM64_CMD_TIMEOUT, ARM64_GROUPS_PSTATE, "-p ")
        for v in ("fp", "tpidr"):
            status, out = _exit(k, "run attack " + v, ARM64_CMD_TIMEOUT)
            assert status == 0 and "attack: returned from " + v in out, out
        for v in ("sve", "sme"):
            expect_killed(k, "run attack " + v, "invalid instruction",
                          ARM64_CMD_TIMEOUT)
        k.check_no_panic()
        k.halt()
