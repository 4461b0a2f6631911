"""User programs and fault reports on arm64 (issue 32), one -smp 2 boot.

The arm64 A-RCU kernel (build/arm64, ``make arm64``) with every program of
uspace/app linked into its image. In order, on one boot:

* every ``fault`` variant kills only its task with the report line amd64
  prints for it, addresses aside (tests/test_tasks.py's REPORT_RE and
  FAULT_CLASSES: the class is generic, task_user_fault()); ``fault div``
  is the checked division (``brk #0x5503``, AArch64's UDIV does not trap)
  reported as a divide error, and ``fault udiv0`` shows the bare UDIV by
  zero giving 0 and exiting 0;
* ``tasks`` is empty and ``test rcu1`` passes afterwards (the kernel is
  intact), and no panic.
"""

import os
import re
import shutil

import pytest

import kconsole
from conftest import REPO
from test_tasks import EXIT_RE, KILLED_RE, REPORT_RE, FAULTS, FAULT_CLASSES

CROSS = "aarch64-linux-gnu-gcc"
QEMU = "qemu-system-aarch64"
KERNEL = os.path.join(REPO, "build", "arm64", "kernel.elf")
BOOT_TIMEOUT = 120
CMD_TIMEOUT = 300

pytestmark = pytest.mark.skipif(
    shutil.which(CROSS) is None or shutil.which(QEMU) is None,
    reason="arm64 needs %s and %s (apt-get install gcc-aarch64-linux-gnu "
    "qemu-system-arm, or make deps)" % (CROSS, QEMU))


@pytest.fixture(scope="module")
def k():
    """The arm64 A-RCU kernel at -smp 2, at its prompt (``make arm64``
    builds it; make test builds it before pytest)."""
    if not os.path.exists(KERNEL):
        pytest.fail("missing %s: make arm64" % KERNEL)
    kern = kconsole.Kernel(smp=2, kernel=KERNEL, arch="arm64",
                           name="arm64-programs-smp2")
    kern.start()
    try:
        kern.wait_prompt(BOOT_TIMEOUT)
        yield kern
    finally:
        kern.close()


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


def test_kernel_intact(k):
    """After everything: no task left, rcu1 passes, no panic."""
    out = k.cmd("tasks", CMD_TIMEOUT)
    assert "0 tasks" in out, out
    ok, reason, out = k.run_test("rcu1", CMD_TIMEOUT)
    assert ok, "rcu1 failed (%s):\n%s" % (reason, out)
    k.check_no_panic()
    k.halt()
