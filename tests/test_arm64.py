"""The arm64 kernel (issue 32) on QEMU's virt board, Cortex-A72.

``make arm64`` builds five configurations into build/arm64* (A-RCU, Podzimek,
their ``BROKEN=rcu`` controls and A-RCU with ``BROKEN=shootdown``); these tests boot them with
``qemu-system-aarch64 -M virt -cpu cortex-a72`` (tools/kconsole.py's
``arch="arm64"``):

* A-RCU at -smp 4: the prompt comes with 4 CPUs online (PSCI CPU_ON),
  ``cpus`` and ``uptime`` show every CPU's timer ticking, ``halt`` powers off
  (PSCI SYSTEM_OFF: QEMU exits 0).
* ``test *`` passes at -smp 2 and -smp 4 on A-RCU and at -smp 4 on Podzimek.
* The broken-RCU builds (grace periods do not wait) fail ``rcutorture`` with
  the oracle's reason and fail ``rcu1``: the tests can catch a broken RCU on
  arm64 too.
* The ``BROKEN=shootdown`` build (tlb_shootdown() uses the non-broadcast
  ``tlbi vae1``: only the unmapping CPU's TLB forgets the page) fails
  ``pagefault1`` with a stale translation at -smp 2: TCG keeps a vCPU's TLB
  until that vCPU is told, so the broadcast is what the test sees. (The
  broadcast build's as1 and pagefault1 check that no shootdown sends a
  cross-call: part of ``test *``.)

* User tasks at EL0 at -smp 2: ``run hello``, ``run threads``,
  ``run sysjunk``, ``run ufault`` and ``run chtuser -t 3`` (the OS build of
  libcht and its user RCU), ``run arearace`` (no page lost) and
  ``run futexrace`` exit 0; the loader refuses bigbss with the amd64 lines, and
  ``tasks`` is empty afterwards.

* The ``fault`` variants, attack, limits, sysfuzz and futexbench:
  tests/test_arm64_programs.py.

Everything skips, with the reason, when aarch64-linux-gnu-gcc or
qemu-system-aarch64 is missing.
"""

import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from tools import kconsole

CROSS = "aarch64-linux-gnu-gcc"
QEMU = "qemu-system-aarch64"
KERNELS = {
    "a-rcu": os.path.join(REPO, "build", "arm64", "kernel.elf"),
    "podzimek": os.path.join(REPO, "build", "arm64-podzimek", "kernel.elf"),
    "a-rcu-broken": os.path.join(REPO, "build", "arm64-rcu-broken",
                                 "kernel.elf"),
    "podzimek-broken": os.path.join(REPO, "build", "arm64-podzimek-broken",
                                    "kernel.elf"),
    "broken-shootdown": os.path.join(REPO, "build", "arm64-broken-shootdown",
                                     "kernel.elf"),
}
BOOT_TIMEOUT = 120
#: `test *` on 2 host cores under TCG (about 5 minutes at -smp 4, idle host).
ALL_TESTS_TIMEOUT = 1500
TEST_ONE_TIMEOUT = 600

pytestmark = pytest.mark.skipif(
    shutil.which(CROSS) is None or shutil.which(QEMU) is None,
    reason="arm64 needs %s and %s (apt-get install gcc-aarch64-linux-gnu "
    "qemu-system-arm, or make deps)" % (CROSS, QEMU))


@pytest.fixture(scope="module", autouse=True)
def arm64_build():
    """``make arm64`` once (unless KTEST_NO_BUILD=1, as make test sets)."""
    if os.environ.get("KTEST_NO_BUILD") != "1":
        env = dict(os.environ)
        for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
            env.pop(var, None)
        proc = subprocess.run(["make", "arm64"], cwd=REPO, env=env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        assert proc.returncode == 0, "make arm64 failed:\n" + \
            proc.stdout.decode("utf-8", "replace")[-3000:]
    missing = [k for k in KERNELS.values() if not os.path.exists(k)]
    if missing:
        pytest.fail("missing %s: make arm64" % ", ".join(missing))


class boot:
    """``with boot(config, smp) as k``: QEMU started, prompt reached."""

    def __init__(self, config, smp):
        self.k = kconsole.Kernel(smp=smp, kernel=KERNELS[config],
                                 arch="arm64",
                                 name="arm64-%s-smp%d" % (config, smp))

    def __enter__(self):
        self.k.start()
        try:
            self.k.wait_prompt(BOOT_TIMEOUT)
        except BaseException:
            self.k.close()
            raise
        return self.k

    def __exit__(self, exc_type, exc, tb):
        self.k.close()
        return False


def test_boot_smp4_and_halt():
    """4 CPUs online by PSCI; every CPU ticks; halt is PSCI SYSTEM_OFF."""
    with boot("a-rcu", 4) as k:
        assert "SMP: 4 of 4 CPUs online" in k.log_text, k.log_text[-2000:]
        out = k.cmd("cpus", 60)
        assert out.rstrip().endswith("4 CPUs online"), out
        out = k.cmd("uptime", 60)
        assert "Interrupts (all CPUs): timer" in out, out
        k.halt()


@pytest.mark.parametrize("config,smp", [("a-rcu", 2), ("a-rcu", 4),
                                        ("podzimek", 4)])
def test_all_tests(config, smp):
    """``test *`` passes, no panic, and the system halts."""
    with boot(config, smp) as k:
        run = k.run_all_tests(timeout=ALL_TESTS_TIMEOUT)
        assert run[1] == 0 and run[0] > 0, \
            "%d passed, %d failed:\n%s" % (run[0], run[1], run[3][-4000:])
        k.check_no_panic()
        k.halt()


def test_user_programs_smp2():
    """EL0 programs run, make system calls and exit 0; tasks are reaped."""
    with boot("a-rcu", 2) as k:
        out = k.cmd("run hello a b", 120)
        assert "Hello from user space: task 1, 2 CPUs [a] [b]" in out, out
        assert "task 1 (hello) exited with status 0" in out, out
        out = k.cmd("run threads", 300)
        assert re.search(r"counter (\d+) of \1, wrong CPU 0, errors 0", out), out
        assert "(threads) exited with status 0" in out, out
        out = k.cmd("run sysjunk", 300)
        assert ", 0 did not return an error" in out, out
        assert "(sysjunk) exited with status 0" in out, out
        out = k.cmd("run ufault", 300)
        assert "errors=0" in out and "(ufault) exited with status 0" in out, \
            out
        out = k.cmd("run chtuser -t 3", 300)
        assert re.search(r"chtuser: threads=2 ops=\d+ errors=0", out), out
        assert "(chtuser) exited with status 0" in out, out
        out = k.cmd("run bigbss", 120)
        assert re.search(r"^run: cannot start bigbss: ", out, re.M), out
        for mode in ("", " -d"):
            out = k.cmd("run arearace -r 100" + mode, 300)
            assert re.search(r"^arearace: \w+: rounds 100, raced \d+, lost 0$",
                             out, re.M), out
        out = k.cmd("run futexrace", 300)
        assert "(futexrace) exited with status 0" in out, out
        out = k.cmd("tasks", 60)
        assert "0 tasks" in out, out
        k.check_no_panic()
        k.halt()


@pytest.mark.parametrize("config", ["a-rcu-broken", "podzimek-broken"])
def test_broken_rcu_fails(config):
    """A build whose grace periods do not wait fails rcutorture (the
    oracle's reason) and rcu1."""
    with boot(config, 4) as k:
        ok, reason, out = k.run_test("rcutorture", TEST_ONE_TIMEOUT)
        assert not ok, "broken RCU passed rcutorture on arm64:\n" + out
        assert reason and ("aged past 1" in reason or "freed" in reason or
                           "reused" in reason or "backwards" in reason), \
            "rcutorture failed for another reason: %r\n%s" % (reason, out)
        ok, reason, out = k.run_test("rcu1", TEST_ONE_TIMEOUT)
        assert not ok, "broken RCU passed rcu1 on arm64:\n" + out


def test_broken_shootdown_fails():
    """A shootdown that invalidates only the unmapping CPU's TLB (the
    non-broadcast TLBI) leaves another CPU a stale translation: pagefault1
    must fail with it, as the amd64 control (no cross-call) does."""
    with boot("broken-shootdown", 2) as k:
        ok, reason, out = k.run_test("pagefault1", TEST_ONE_TIMEOUT)
        assert not ok, "local-only TLBI passed pagefault1 on arm64:\n" + out
        assert reason and re.match(
            r"\d+ errors, first: (?:stale translation|.*a write through a "
            r"stale entry)", reason), \
            "pagefault1 failed for another reason: %r\n%s" % (reason, out)
        k.halt()
