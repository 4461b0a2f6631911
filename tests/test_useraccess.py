"""The user-access guard (SMAP on amd64, PAN on arm64).

``test useraccess1`` (unsafe) makes a kernel thread posing as a task's
thread read a present user page directly, outside the uaccess functions.
With the guard on (QEMU ``-cpu max``) the kernel must panic naming it --
``kernel access to a user page outside uaccess (SMAP)`` on amd64, ``(PAN)``
on arm64 -- and the boot line must say the guard is on. Without it (arm64's
Cortex-A72, ARMv8.0) the boot line says PAN is off and the read succeeds
(the test passes). One boot each.
"""

import os
import re

import pytest

from tools import kconsole

from conftest import (ARM64_BOOT_TIMEOUT, ARM64_CMD_TIMEOUT, ARM64_KERNEL,
                      BOOT_TIMEOUT, KERNEL_ELF, PANIC_TIMEOUT,
                      expect_test_panic, needs_arm64)

#: May share the 2 host CPUs in make test's first pytest run (conftest.py):
#: the guard panics or not on one CPU, whatever the other does.
pytestmark = pytest.mark.concurrent

#: This file does not build the arm64 kernel (make arm64 or test_arm64.py
#: does): without it the arm64 tests skip.
needs_arm64_kernel = pytest.mark.skipif(
    not os.path.exists(ARM64_KERNEL),
    reason="no build/arm64 kernel (make arm64)")


def _panics(k, guard, timeout):
    expect_test_panic(
        k, "useraccess1",
        re.compile(rb"PANIC on CPU \d+: [^\n]*kernel access to a user page "
                   rb"outside uaccess \(" + guard.encode() + rb"\)"),
        timeout, "the %s panic" % guard)


def test_smap_panics_amd64():
    with kconsole.Kernel(smp=2, kernel=KERNEL_ELF, extra_args=["-cpu", "max"],
                         name="useraccess-amd64-max") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        assert re.search(r"SMEP on, SMAP on", k.log_text)
        _panics(k, "SMAP", PANIC_TIMEOUT)


@needs_arm64
@needs_arm64_kernel
def test_pan_panics_arm64():
    with kconsole.Kernel(smp=2, kernel=ARM64_KERNEL, arch="arm64",
                         extra_args=["-cpu", "max"],
                         name="useraccess-arm64-max") as k:
        k.wait_prompt(ARM64_BOOT_TIMEOUT)
        assert re.search(r"User space: .*PAN on", k.log_text)
        _panics(k, "PAN", ARM64_CMD_TIMEOUT)


@needs_arm64
@needs_arm64_kernel
def test_no_pan_on_cortex_a72():
    with kconsole.Kernel(smp=2, kernel=ARM64_KERNEL, arch="arm64",
                         name="useraccess-arm64-a72") as k:
        k.wait_prompt(ARM64_BOOT_TIMEOUT)
        assert re.search(r"User space: .*PAN off", k.log_text)
        out = k.cmd("test useraccess1", ARM64_CMD_TIMEOUT)
        assert "no guard on this CPU" in out and "Test passed" in out, out
        k.check_no_panic()
        k.halt()
