"""RCU checks: the sleep-in-reader assertion, stall warnings, the unlock window.

Per RCU flavour (a-rcu, podzimek-rcu):

* ``TestRCUSleepAssert``: the unsafe kernel test ``rcusleep1`` sleeps inside a
  reader section; the debug build must panic with ``blocking inside an RCU
  reader section`` (the check in the wait queue sleep).  A ``Test failed``
  line or no panic fails.
* ``TestRCUChecks`` (-smp 2): ``rcu`` shows the stall limit (10000 ms) and no
  warning; ``rcu1``, ``rcutorture`` and ``rcuunlock1`` pass and print no stall
  warning at the default limit; ``rcustall1`` passes and its one warning names
  its reader thread ``rcustall1-r``; ``rcu`` then counts exactly 1 warning and
  shows the limit restored; no stall warning appears anywhere in the boot's log
  outside the ``rcustall1`` section (:func:`stall_lines_outside`, which a
  ``test *`` check can reuse).
* ``TestStallParser``: the section parser on canned text.

Verdicts never depend on timing; timeouts are liveness bounds.
"""

import re

import pytest

from tools import kconsole
from conftest import (BOOT_TIMEOUT, CMD_TIMEOUT, HALT_TIMEOUT, PANIC_TIMEOUT,
                      expect_test_panic, flavour_kernel, flavours,
                      run_test_expect_pass)
from patterns import VERDICT_TEXT_RE

#: The debug assertion's message (rcu_assert_may_block / the sleep hook).
SLEEP_ASSERT_RE = re.compile(
    rb"PANIC[^\n]*blocking inside an RCU reader section")
#: Lines of a stall warning.
STALL_RE = re.compile(r"^\s*rcu: INFO: stall", re.MULTILINE)
_HEADER_RE = re.compile(r"^== test (\S+):")
_LIMIT_RE = re.compile(r"^\s*stall warning limit:\s*(\d+) ms\s*$", re.MULTILINE)
_COUNT_RE = re.compile(r"^\s*stall warnings:\s*(\d+)\s*$", re.MULTILINE)

#: The RCU flavours with a kernel of their own (the locked page table build
#: has the same RCU as a-rcu).
RCU_FLAVOURS = [f for f in flavours() if f in ("a-rcu", "podzimek-rcu")]


def stall_lines_outside(text, allowed=("rcustall1",)):
    """Return the stall warning lines of ``text`` outside the allowed tests.

    A line belongs to the test whose ``== test NAME: ...`` header came last,
    up to that test's verdict line; anything else (other tests, commands,
    idle time) is outside.  ``text`` may be a whole log or ``test *`` output.
    """
    found = []
    current = None
    for line in kconsole.normalize(text).split("\n"):
        m = _HEADER_RE.match(line)
        if m:
            current = m.group(1)
            continue
        if STALL_RE.match(line) and current not in allowed:
            found.append(line.strip())
        if VERDICT_TEXT_RE.search(line):
            current = None
    return found


def parse_stall_stats(text):
    """Return ``(limit_ms, warnings)`` from ``rcu`` output (None if missing)."""
    text = kconsole.normalize(text)
    limit = _LIMIT_RE.search(text)
    count = _COUNT_RE.search(text)
    if not (limit and count):
        return None
    return int(limit.group(1)), int(count.group(1))


# --------------------------------------------------------------------------
# Sleeping inside a reader panics (debug build)
# --------------------------------------------------------------------------

@pytest.mark.parametrize("flavour", RCU_FLAVOURS)
def test_sleep_in_reader_panics(flavour):
    """``test rcusleep1`` ends in the assertion's panic, not a verdict."""
    with kconsole.Kernel(smp=2, kernel=flavour_kernel(flavour),
                         name="%s-rcusleep1" % flavour) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        expect_test_panic(k, "rcusleep1", SLEEP_ASSERT_RE, PANIC_TIMEOUT,
                          "the assertion's panic (sleeping inside a reader "
                          "section)")


# --------------------------------------------------------------------------
# Stall warnings, the unlock window, and no stray warnings
# --------------------------------------------------------------------------

@pytest.fixture(scope="class", params=RCU_FLAVOURS)
def checks_boot(request, boot_factory):
    """Each RCU flavour's kernel booted with -smp 2."""
    flavour = request.param
    boot = boot_factory(request, smp=2, kernel=flavour_kernel(flavour),
                        name="%s-rcuchecks-smp2" % flavour)
    boot.flavour = flavour
    return boot


class TestRCUChecks:
    """Stall warnings only where a reader really holds a grace period."""

    def test_boot(self, checks_boot):
        """The kernel reaches the prompt."""
        checks_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_rcu_shows_limit(self, checks_boot):
        """``rcu`` shows the default limit (10000 ms) and no warning yet."""
        out = checks_boot.k.cmd("rcu", CMD_TIMEOUT)
        stats = parse_stall_stats(out)
        assert stats == (10000, 0), \
            "'rcu' stall lines wrong or missing (%r):\n%s" % (stats, out)

    @pytest.mark.parametrize("name", ["rcu1", "rcutorture", "rcuunlock1"])
    def test_no_warning_at_default(self, checks_boot, name):
        """The RCU tests pass and trip no stall warning at 10 s."""
        out = run_test_expect_pass(checks_boot.k, "test " + name)
        stray = stall_lines_outside(out, allowed=())
        assert not stray, "stall warning during %s:\n%s" % (
            name, "\n".join(stray))

    def test_rcustall1(self, checks_boot):
        """One warning, naming the reader thread; ``rcu`` counts 1."""
        k = checks_boot.k
        out = run_test_expect_pass(k, "test rcustall1")
        lines = STALL_RE.findall(out)
        assert lines, "rcustall1 passed but printed no stall warning:\n" + out
        assert re.search(r"rcu: INFO: stall: grace period \d+ held up for "
                         r"\d+ ms \(limit 200 ms\)", out), \
            "no stall warning header with the 200 ms limit:\n" + out
        assert re.search(r"rcu: INFO: stall: .*'rcustall1-r' \(tid \d+",
                         out), "the warning does not name the reader:\n" + out
        stats = parse_stall_stats(k.cmd("rcu", CMD_TIMEOUT))
        assert stats == (10000, 1), \
            "after rcustall1 'rcu' shows (limit, warnings) = %r, expected " \
            "(10000, 1)" % (stats,)

    def test_no_stray_warnings(self, checks_boot):
        """The whole log has stall warnings inside rcustall1 only."""
        k = checks_boot.k
        stray = stall_lines_outside(kconsole.decode(bytes(k.buf)))
        assert not stray, "stall warning outside rcustall1:\n" + \
            "\n".join(stray)

    def test_no_panic(self, checks_boot):
        """Nothing in the log is a panic or exception report."""
        checks_boot.k.check_no_panic()

    def test_halt(self, checks_boot):
        """``halt`` makes QEMU exit with status 33."""
        checks_boot.k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# Parsers on canned text (no QEMU)
# --------------------------------------------------------------------------

CANNED = (
    "== test rcu1: RCU ==\r\n"
    "Test passed\r\n"
    "== test rcustall1: stall ==\r\n"
    "rcu: INFO: stall: grace period 2 held up for 203 ms (limit 200 ms) by "
    "1 reader(s):\r\n"
    "rcu: INFO: stall: CPU 1 in a reader section: thread 'rcustall1-r' "
    "(tid 7) holds grace period 2 for 203 ms\r\n"
    "Test passed\r\n"
    "kconsole> rcu\r\n"
    "stall warning limit: 10000 ms\r\n"
    "stall warnings: 1\r\n")


class TestStallParser:
    """What this file reads from the console."""

    def test_allowed_section(self):
        """Warnings inside rcustall1 are allowed, elsewhere not."""
        assert stall_lines_outside(CANNED) == []
        assert len(stall_lines_outside(CANNED, allowed=())) == 2
        late = CANNED + "rcu: INFO: stall: grace period 9 held up\r\n"
        assert stall_lines_outside(late) == [
            "rcu: INFO: stall: grace period 9 held up"]
        inside_other = CANNED.replace("Test passed\r\n== test rcustall1",
                                      "rcu: INFO: stall: x\r\nTest passed"
                                      "\r\n== test rcustall1")
        assert stall_lines_outside(inside_other) == ["rcu: INFO: stall: x"]

    def test_stats(self):
        """The limit and the count are read from ``rcu``."""
        assert parse_stall_stats(CANNED) == (10000, 1)
        assert parse_stall_stats("rcu: algorithm a-rcu\n") is None
