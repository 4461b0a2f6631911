"""RCU: the negative control, the ``rcutorture`` command and the soak runs.

Both RCU flavours run the whole suite through ``TestSMP`` in test_kernel.py
(``test *`` includes ``rcu1`` and ``rcutorture``, then ``rcu`` must show grace
periods completed and no pending callbacks: :func:`check_rcu_stats`).  This
file adds:

* ``TestRCUBroken``: build/rcu-broken/kernel.elf (``make RCU_BROKEN=1``: grace
  period detection does not wait for readers) at -smp 4.  ``test rcutorture``
  MUST report ``Test failed`` with a reason from the oracle (an object aged
  past one grace period, poisoned or reused under a reader); a pass, a panic,
  a hang or QEMU dying all fail this group.  A torture test that cannot fail
  proves nothing.
  The other RCU controls (``rcu1`` on this build; ``rcu1`` and
  ``rcutorture`` on the Podzimek broken build) are in test_controls.py.
* ``TestRCUCommand``: -smp 2: ``help`` lists ``rcu`` and ``rcutorture``;
  ``rcutorture -t 2`` passes; ``rcu`` statistics.
* Soak (marker ``soak``, only with ``KTEST_SOAK=1``, ``make soak``): ten boots
  in a row at -smp 4 per flavour running ``test rcu1`` and ``test
  rcutorture``; ``rcutorture -t 30`` at -smp 8 and under single-threaded TCG;
  ``test *`` under single-threaded TCG; the broken control at -smp 2 and 8.
* ``TestRCUParsers``: the ``rcu`` output parser on canned text.

Verdicts never depend on timing; timeouts are liveness bounds.
"""

import re
import time

import pytest

from tools import kconsole
from conftest import (BROKEN_ELF, DEFAULT_RCU, KERNEL_ELF, class_boot,
                      flavour_kernel, flavours)
from conftest import (BOOT_TIMEOUT, CMD_TIMEOUT, HALT_TIMEOUT, TEST_ALL_TIMEOUT,
                      TEST_ONE_TIMEOUT, run_test_expect_pass)
from patterns import ORACLE_FAILURE_RE

#: Times ``rcu`` is asked again (1 s apart) while callbacks are still pending.
RCU_SETTLE_TRIES = 30
#: Duration of the soak rcutorture runs (seconds of guest time).
SOAK_TORTURE_SECONDS = 30
SOAK_BOOTS = 10



# --------------------------------------------------------------------------
# The `rcu` statistics
# --------------------------------------------------------------------------

_ALGO_RE = re.compile(r"^\s*rcu: algorithm (\S+)(.*)$", re.MULTILINE)
_GPS_RE = re.compile(r"^\s*GPs completed:\s*(\d+)\s*$", re.MULTILINE)
_PENDING_RE = re.compile(r"^\s*pending callbacks:\s*(\d+)\s*$", re.MULTILINE)


def parse_rcu_stats(text):
    """Parse the output of ``rcu``.

    Returns a dict with ``algorithm`` (the flavour name), ``broken`` (the
    algorithm line says BROKEN), ``gps_completed`` and ``pending`` (ints), or
    None when one of the lines ``rcu: algorithm NAME``, ``GPs completed: N``
    and ``pending callbacks: N`` is missing.
    """
    text = kconsole.normalize(text)
    algo = _ALGO_RE.search(text)
    gps = _GPS_RE.search(text)
    pending = _PENDING_RE.search(text)
    if not (algo and gps and pending):
        return None
    return {"algorithm": algo.group(1),
            "broken": "BROKEN" in algo.group(2).upper(),
            "gps_completed": int(gps.group(1)),
            "pending": int(pending.group(1))}


def check_rcu_stats(k, flavour, broken=False, min_gps=1):
    """Run ``rcu`` on ``k`` and check it after the tests.

    The algorithm must be ``flavour`` (and BROKEN exactly when ``broken``),
    at least ``min_gps`` grace periods (and at least one) must have completed
    and no callback may be pending.
    Callbacks posted just before may still be in flight: ``rcu`` is asked
    again (1 s apart, RCU_SETTLE_TRIES times) until none is pending, so the
    verdict does not depend on timing.  Returns the last output.
    """
    __tracebackhide__ = True
    for attempt in range(RCU_SETTLE_TRIES):
        out = k.cmd("rcu", CMD_TIMEOUT)
        assert "unknown command" not in out.lower(), \
            "the 'rcu' command does not exist:\n" + out
        stats = parse_rcu_stats(out)
        assert stats is not None, (
            "'rcu' printed no 'rcu: algorithm NAME', 'GPs completed: N' or "
            "'pending callbacks: N' line:\n" + out)
        if stats["pending"] == 0:
            break
        time.sleep(1.0)
    assert stats["algorithm"] == flavour, \
        "'rcu' reports algorithm %r, expected %r:\n%s" % (
            stats["algorithm"], flavour, out)
    assert stats["broken"] == broken, \
        "'rcu' %s a BROKEN build:\n%s" % (
            "does not report" if broken else "reports", out)
    min_gps = max(1, min_gps)
    assert stats["gps_completed"] >= min_gps, \
        "%d grace periods completed, the tests reported using %d:\n%s" % (
            stats["gps_completed"], min_gps, out)
    assert stats["pending"] == 0, \
        "%d callbacks still pending after %d tries:\n%s" % (
            stats["pending"], RCU_SETTLE_TRIES, out)
    return out


def expect_broken_failure(k):
    """``test rcutorture`` on the broken build must fail cleanly."""
    __tracebackhide__ = True
    out = k.cmd("test rcutorture", TEST_ONE_TIMEOUT)
    verdicts = kconsole.parse_verdicts(out)
    assert verdicts, "no verdict from 'test rcutorture':\n" + out
    reasons = [r for ok, r in verdicts if not ok]
    assert reasons, ("the broken build (grace periods do not wait) PASSED "
                     "rcutorture: the oracle cannot fail:\n" + out)
    assert ORACLE_FAILURE_RE.search(reasons[0]), \
        "rcutorture failed, but not because of a short grace period (%r):\n%s" \
        % (reasons[0], out)
    return out


# --------------------------------------------------------------------------
# The negative control: RCU_BROKEN=1 must fail rcutorture
# --------------------------------------------------------------------------

broken_boot = class_boot("build/rcu-broken/kernel.elf booted with -smp 4.",
                         smp=4, kernel=BROKEN_ELF, name="rcu-broken-smp4")


class TestRCUBroken:
    """The broken build (GP detection skips the wait) fails rcutorture."""

    def test_boot(self, broken_boot):
        """The broken kernel reaches the prompt."""
        broken_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_is_broken(self, broken_boot):
        """``rcu`` says it is the broken build (the right image booted)."""
        out = broken_boot.k.cmd("rcu", CMD_TIMEOUT)
        stats = parse_rcu_stats(out)
        assert stats is not None, "unexpected 'rcu' output:\n" + out
        assert stats["broken"], "'rcu' does not report a BROKEN build:\n" + out

    def test_rcutorture_fails(self, broken_boot):
        """``test rcutorture`` reports ``Test failed`` (no pass, no panic)."""
        expect_broken_failure(broken_boot.k)

    def test_no_panic(self, broken_boot):
        """The failure is reported, not a crash."""
        broken_boot.k.check_no_panic()

    def test_halt(self, broken_boot):
        """The kernel still halts cleanly after the failed test."""
        broken_boot.k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# The rcutorture command
# --------------------------------------------------------------------------

rcucmd_boot = class_boot("The default kernel booted with -smp 2.", smp=2,
                         kernel=KERNEL_ELF, name="rcucmd-smp2")


class TestRCUCommand:
    """``rcu`` and ``rcutorture [-t SECONDS]`` on the console."""

    def test_boot(self, rcucmd_boot):
        """The kernel reaches the prompt."""
        rcucmd_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_help(self, rcucmd_boot):
        """``help`` lists ``rcu`` and ``rcutorture`` (registered at boot)."""
        out = rcucmd_boot.k.cmd("help", CMD_TIMEOUT)
        missing = [c for c in ("rcu", "rcutorture")
                   if not re.search(r"^\s*%s\s" % c, kconsole.normalize(out),
                                    re.MULTILINE)]
        assert not missing, "help does not list %s:\n%s" % (missing, out)

    def test_rcutorture_command(self, rcucmd_boot):
        """``rcutorture -t 2`` runs the test for 2 s and passes."""
        out = run_test_expect_pass(rcucmd_boot.k, "rcutorture -t 2")
        assert re.search(r"\b2 s\b", out), \
            "the run does not say it lasts 2 s:\n" + out
        assert re.search(r"age histogram:( \w+:\d+)+", out), \
            "no age histogram:\n" + out

    def test_rcu_stats(self, rcucmd_boot):
        """``rcu``: this flavour, GPs completed, nothing pending."""
        check_rcu_stats(rcucmd_boot.k, DEFAULT_RCU)

    def test_no_panic(self, rcucmd_boot):
        """Nothing in the log is a panic or exception report."""
        rcucmd_boot.k.check_no_panic()

    def test_halt(self, rcucmd_boot):
        """``halt`` makes QEMU exit with status 33."""
        rcucmd_boot.k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# Soak: only with KTEST_SOAK=1 (make soak)
# --------------------------------------------------------------------------

def _soak_kernel(name, **kwargs):
    return kconsole.Kernel(name="soak-" + name, **kwargs)


@pytest.mark.soak
@pytest.mark.parametrize("boot_no", range(1, SOAK_BOOTS + 1),
                         ids=lambda n: "boot%02d" % n)
@pytest.mark.parametrize("flavour", flavours())
def test_soak_boots(flavour, boot_no):
    """Ten boots in a row at -smp 4: rcu1 and rcutorture pass every time."""
    with _soak_kernel("%s-smp4-boot%02d" % (flavour, boot_no), smp=4,
                      kernel=flavour_kernel(flavour)) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        run_test_expect_pass(k, "test rcu1")
        run_test_expect_pass(k, "test rcutorture")
        check_rcu_stats(k, flavour)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


SOAK_TORTURE = [
    ("smp8", 8, "tcg,thread=multi"),
    ("smp4-single-tcg", 4, "tcg,thread=single"),
]


@pytest.mark.soak
@pytest.mark.parametrize("label,smp,accel", SOAK_TORTURE,
                         ids=[t[0] for t in SOAK_TORTURE])
@pytest.mark.parametrize("flavour", flavours())
def test_soak_torture(flavour, label, smp, accel):
    """``rcutorture -t 30`` passes (many vCPUs; single-threaded TCG)."""
    with _soak_kernel("%s-%s-torture" % (flavour, label), smp=smp,
                      accel=accel, kernel=flavour_kernel(flavour)) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        run_test_expect_pass(k, "rcutorture -t %d" % SOAK_TORTURE_SECONDS,
                             TEST_ONE_TIMEOUT + 10 * SOAK_TORTURE_SECONDS)
        check_rcu_stats(k, flavour)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


@pytest.mark.soak
@pytest.mark.parametrize("flavour", flavours())
def test_soak_all_single_tcg(flavour):
    """``test *`` under single-threaded TCG (other interleavings), -smp 4."""
    with _soak_kernel("%s-smp4-single-tcg-all" % flavour, smp=4,
                      accel="tcg,thread=single",
                      kernel=flavour_kernel(flavour)) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        run = k.run_all_tests(TEST_ALL_TIMEOUT)
        failures = [r for ok, r in run.verdicts if not ok]
        assert run.failed == 0 and not failures, \
            "%d failed (%s):\n%s" % (run.failed, failures, run.output)
        check_rcu_stats(k, flavour)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


@pytest.mark.soak
@pytest.mark.parametrize("smp", [1, 2, 8], ids=lambda n: "smp%d" % n)
def test_soak_broken(smp):
    """The broken build fails rcutorture at other vCPU counts too."""
    with _soak_kernel("rcu-broken-smp%d" % smp, smp=smp,
                      kernel=BROKEN_ELF) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        expect_broken_failure(k)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# The parser on canned text (no QEMU)
# --------------------------------------------------------------------------

CANNED_RCU = (
    "rcu: algorithm a-rcu\r\n"
    "tunables: detect sleep 10000 us, poll 1000 us\r\n"
    "GPs completed: 173\r\n"
    "GPs started: 173\r\n"
    "pending callbacks: 0\r\n"
    "cpu  last-seen-gp  posted      run         pending  max-batch\r\n"
    "  0           173  47575       47575             0       3096\r\n")


class TestRCUParsers:
    """What the harness reads from ``rcu``."""

    def test_parse(self):
        """Algorithm, GPs completed and pending callbacks are found."""
        assert parse_rcu_stats(CANNED_RCU) == {
            "algorithm": "a-rcu", "broken": False, "gps_completed": 173,
            "pending": 0}

    def test_broken(self):
        """The BROKEN note on the algorithm line is recognised."""
        text = CANNED_RCU.replace(
            "a-rcu\r", "podzimek-rcu (BROKEN build: grace periods do not "
            "wait)\r")
        stats = parse_rcu_stats(text)
        assert stats["algorithm"] == "podzimek-rcu" and stats["broken"]

    def test_missing(self):
        """Output without the three lines gives None."""
        assert parse_rcu_stats("Unknown command: rcu\n") is None
        assert parse_rcu_stats(CANNED_RCU.replace("pending", "queued")) is None

    def test_oracle_reasons(self):
        """The reasons rcutorture gives for a short GP match; others not."""
        assert ORACLE_FAILURE_RE.search(
            "4 reader sections saw their object aged past 1 (up to 3 grace "
            "periods)")
        assert ORACLE_FAILURE_RE.search(
            "5 reader sections saw a freed (poisoned) object")
        assert not ORACLE_FAILURE_RE.search("cannot create the threads")
