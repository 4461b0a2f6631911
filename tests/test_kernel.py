"""Boot the kernel in QEMU and drive kconsole over the serial line.

Groups (one QEMU each; the methods of a class are its steps, in order):

* ``TestSMP[CONFIG-smpN]``: the kernel of each configuration (a-rcu:
  build/kernel.elf, podzimek-rcu: build/podzimek/kernel.elf,
  with -smp 1, 2, 4, 8 (Podzimek 1, 2, 4); a-rcu+page_ht-locked: build/locked/kernel.elf and
  a-rcu+release: build/release/kernel.elf, DEBUG=0, with -smp 2 and 4):
  prompt, ``cpus`` reports N CPUs online, ``help``, ``version`` (debug or
  release as built), ``zones``, ``uptime`` advances, the ``test`` listing,
  one test by name, ``test *`` with no failure and a verdict per test, then
  ``rcu`` shows this flavour, at least the grace periods that ``rcu1`` and
  ``rcutorture`` reported using and no pending callbacks, ``workq`` idle,
  ``page_ht`` empty, ``lockdep`` (debug builds) active with no report and
  every learned edge allowed by docs/LOCKING.md's order, no panic, ``halt`` exits QEMU with status 33.
* Soak (``make soak``): the locked page hash table at -smp 1 and 8 and
  Podzimek RCU at -smp 8, ``test *`` and the same checks after it
  (``test_soak_locked``).
* ``TestISO``: image.iso with -cdrom and -smp 2: prompt, ``cpus``,
  ``version``, ``programs`` lists the GRUB modules, ``run hello`` exits 0,
  no panic, ``halt``.
* ``TestBadInput``: -smp 2: unknown commands, wrong arguments, huge numbers,
  long lines, control characters, escape sequences, NUL, invalid UTF-8;
  after each line the prompt must come back, and the console must answer
  ``version`` exactly as before.

Timeouts are generous and scaled by KTEST_TIMEOUT_SCALE; no verdict depends on
timing.
"""

import os
import random
import re
import time

import pytest

from tools import kconsole
from conftest import (ARCU_SOAK_SMP, LOCKED_SOAK_SMP, PODZIMEK_SOAK_SMP, RELEASE_SOAK_SMP,
                      flavour_kernel,
                      flavours)
from conftest import (BAD_LINE_PROMPT_TIMEOUT, BOOT_TIMEOUT, CMD_TIMEOUT,
                      HALT_TIMEOUT, TEST_ALL_TIMEOUT, TEST_ONE_TIMEOUT)
from test_rcu import check_rcu_stats
from test_rcu_checks import stall_lines_outside
from test_lockdep import check_lockdep_after_tests


#: Core commands `help` must mention.
CORE_COMMANDS = ("help", "version", "cpus", "test", "halt")


def console_md_commands():
    """The command names of docs/CONSOLE.md: (its table's, its sample
    ``help`` output's), each sorted."""
    path = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "docs", "CONSOLE.md")
    text = open(path).read()
    table = re.findall(r"^\| `(\w+)[^`]*` \|", text, re.M)
    block = re.search(r"kconsole> help\nCommands:\n(.*?)\nkconsole>", text,
                      re.S)
    sample = re.findall(r"^  (\w+)  ", block.group(1), re.M) if block else []
    return sorted(table), sorted(sample)


def assert_known(out, command):
    """Fail if ``command`` was not recognised or printed nothing."""
    assert "unknown command" not in out.lower(), \
        "%r is not recognised:\n%s" % (command, out)
    assert out.strip(), "%r printed nothing" % command


def check_workq_idle(k, tries=30):
    """Ask ``workq`` (1 s apart) until the system work queue is idle.

    Work posted just before may still be finishing, so the verdict does not
    depend on timing: only a queue that never drains in ``tries`` seconds
    fails.  Returns the last output.
    """
    __tracebackhide__ = True
    out = ""
    idle = False
    for _ in range(tries):
        out = k.cmd("workq", CMD_TIMEOUT)
        active = re.search(r"^\s*active:\s*(\d+)", out, re.M)
        queued = re.search(r"^\s*queued items:\s*(\d+)", out, re.M)
        assert active and queued, "cannot parse 'workq':\n" + out
        idle = int(active.group(1)) == 0 and int(queued.group(1)) == 0
        if idle:
            break
        time.sleep(1)
    # An assertion (a wrong answer), not pytest.fail: the boot stays usable
    # and its later steps still run (conftest.pytest_runtest_makereport).
    assert idle, "the system work queue is not idle after %d s:\n%s" % (
        tries, out)
    return out


_RCU1_GPS_RE = re.compile(r"^rcu1: all parts ok: (\d+) GPs in ", re.M)
_TORTURE_GPS_RE = re.compile(
    r"^rcutorture: \d+ ms, writer version .*, (\d+) GPs$", re.M)


def claimed_gps(output):
    """Grace periods ``rcu1`` and ``rcutorture`` reported using in ``output``.

    Each prints how far the global GP counter advanced during its run; the
    tests of ``test *`` run one after the other, so the counter must have
    advanced by at least the sum.  Returns ``(sum, missing)`` where
    ``missing`` names the tests whose line is absent.
    """
    text = kconsole.normalize(output)
    total, missing = 0, []
    for name, regex in (("rcu1", _RCU1_GPS_RE),
                        ("rcutorture", _TORTURE_GPS_RE)):
        found = regex.findall(text)
        if found:
            total += sum(int(x) for x in found)
        else:
            missing.append(name)
    return total, missing


# --------------------------------------------------------------------------
# Boot with -smp 1, 2, 4, 8
# --------------------------------------------------------------------------

class TestSMP:
    """One boot per vCPU count; the steps run in order."""

    def test_boot(self, smp_boot):
        """The kernel reaches the prompt."""
        smp_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_cpus(self, smp_boot):
        """``cpus`` ends with ``N CPUs online`` for N = -smp."""
        out = smp_boot.k.cmd("cpus", CMD_TIMEOUT)
        online = kconsole.parse_cpus_online(out)
        assert online is not None, "no 'N CPUs online' line:\n" + out
        assert online == smp_boot.smp, \
            "%d CPUs online with -smp %d:\n%s" % (online, smp_boot.smp, out)

    def test_help(self, smp_boot):
        """``help`` lists the core commands."""
        out = smp_boot.k.cmd("help", CMD_TIMEOUT)
        assert_known(out, "help")
        missing = [c for c in CORE_COMMANDS
                   if not re.search(r"\b%s\b" % c, out)]
        assert not missing, "help does not list %s:\n%s" % (missing, out)
        listed = re.findall(r"^  (\w+)  ", out, re.M)
        table, sample = console_md_commands()
        assert sorted(listed) == table, (
            "help and docs/CONSOLE.md's command table differ: help only %s, "
            "table only %s" % (sorted(set(listed) - set(table)),
                               sorted(set(table) - set(listed))))
        assert sample == table, "CONSOLE.md's sample help is not its table"

    def test_version(self, smp_boot):
        """``version`` names the build kind of this configuration."""
        out = smp_boot.k.cmd("version", CMD_TIMEOUT)
        assert_known(out, "version")
        kind = "release" if smp_boot.flavour.endswith("+release") else "debug"
        assert re.search(r"\b%s\b" % kind, out), \
            "'version' does not say %r:\n%s" % (kind, out)

    def test_zones(self, smp_boot):
        """``zones`` prints something."""
        assert_known(smp_boot.k.cmd("zones", CMD_TIMEOUT), "zones")

    def test_uptime(self, smp_boot):
        """``uptime`` advances across a 1.2 s pause (a frozen clock fails)."""
        k = smp_boot.k
        first = k.cmd("uptime", CMD_TIMEOUT)
        t1 = kconsole.parse_uptime(first)
        assert t1 is not None, "no number in the uptime output:\n" + first
        time.sleep(1.2)
        second = k.cmd("uptime", CMD_TIMEOUT)
        t2 = kconsole.parse_uptime(second)
        assert t2 is not None, "no number in the uptime output:\n" + second
        assert t2 > t1, "uptime did not advance in 1.2 s: %r then %r" % (
            first, second)

    def test_list(self, smp_boot):
        """``test`` lists tests, at least one of them safe."""
        out = smp_boot.k.cmd("test", CMD_TIMEOUT)
        listed = kconsole.parse_test_list(out)
        smp_boot.tests = listed
        assert listed, "'test' listed no test ('NAME [safe] desc'):\n" + out
        assert any(safe for _, safe, _ in listed), \
            "'test' listed no safe test:\n" + out

    def test_one_by_name(self, smp_boot):
        """``test NAME`` on the first safe test prints ``Test passed``."""
        k = smp_boot.k
        names = [n for n, safe, _ in getattr(smp_boot, "tests", []) if safe]
        if not names:
            pytest.skip("no safe test listed")
        passed, reason, out = k.run_test(names[0], TEST_ONE_TIMEOUT)
        assert passed, "test %s: %s\n%s" % (names[0], reason, out)

    def test_all_safe(self, smp_boot):
        """``test *``: no failure, a verdict per test, every safe test run."""
        run = smp_boot.k.run_all_tests(TEST_ALL_TIMEOUT)
        smp_boot.all_output = run.output
        failures = [r for ok, r in run.verdicts if not ok]
        assert run.failed == 0 and not failures, \
            "%d failed (%s):\n%s" % (run.failed, failures, run.output)
        assert run.passed >= 1, "no test passed:\n" + run.output
        assert len(run.verdicts) == run.passed + run.failed, \
            "%d verdict lines for '%d passed, %d failed':\n%s" % (
                len(run.verdicts), run.passed, run.failed, run.output)
        # RCU stall warnings belong to the stall test only (rcustall1).
        stalls = stall_lines_outside(run.output)
        assert not stalls, "RCU stall warnings outside rcustall1:\n" + \
            "\n".join(stalls)
        safe = [n for n, s, _ in getattr(smp_boot, "tests", []) if s]
        if safe:
            assert run.passed + run.failed == len(safe), \
                "'test *' ran %d tests, 'test' lists %d safe ones (%s)" % (
                    run.passed + run.failed, len(safe), " ".join(safe))

    def test_rcu_stats(self, smp_boot):
        """``rcu`` after the tests: at least the GPs the tests reported using
        (rcu1, rcutorture), no pending callbacks."""
        output = getattr(smp_boot, "all_output", None)
        if output is None:
            pytest.skip("'test *' did not complete")
        min_gps, missing = claimed_gps(output)
        # A test that failed prints no GP count (test_all_safe reports it).
        all_passed = not any(not ok for ok, _ in
                             kconsole.parse_verdicts(output))
        assert not (missing and all_passed), \
            "'test *' printed no GP count of %s:\n%s" % (
                ", ".join(missing), output)
        # A configuration name is the RCU algorithm, maybe '+' a variant.
        check_rcu_stats(smp_boot.k, smp_boot.flavour.split("+")[0],
                        min_gps=min_gps)

    def test_workq_idle(self, smp_boot):
        """``workq`` after the tests: no active worker, no queued item.

        Work posted by the last tests may still be finishing, so ``workq`` is
        asked again (1 s apart) until the queue is idle; the verdict does not
        depend on timing, only a queue that never drains fails.
        """
        check_workq_idle(smp_boot.k)

    def test_page_ht(self, smp_boot):
        """``page_ht`` after the tests: no mapping is left behind."""
        out = smp_boot.k.cmd("page_ht", CMD_TIMEOUT)
        m = re.search(r"^entries:\s*(\d+)", out, re.M)
        assert m, "cannot parse 'page_ht':\n" + out
        assert int(m.group(1)) == 0, "page hash table entries left:\n" + out

    def test_lockdep(self, smp_boot):
        """``lockdep`` after the tests: no report, every learned lock order
        allowed by docs/LOCKING.md (tests/test_lockdep.py)."""
        if getattr(smp_boot, "all_output", None) is None:
            pytest.skip("'test *' did not complete")
        check_lockdep_after_tests(
            smp_boot.k, smp_boot.flavour.endswith("+release"))

    def test_no_panic(self, smp_boot):
        """Nothing in the whole log is a panic or exception report."""
        smp_boot.k.check_no_panic()

    def test_halt(self, smp_boot):
        """``halt`` makes QEMU exit with status 33 (isa-debug-exit)."""
        smp_boot.k.halt(HALT_TIMEOUT)


@pytest.mark.soak
@pytest.mark.parametrize("flavour,smp",
                         [("a-rcu", n) for n in ARCU_SOAK_SMP] +
                         [("a-rcu+page_ht-locked", n) for n in LOCKED_SOAK_SMP] +
                         [("podzimek-rcu", n) for n in PODZIMEK_SOAK_SMP] +
                         [("a-rcu+release", n) for n in RELEASE_SOAK_SMP],
                         ids=lambda p: str(p))
def test_soak_locked(flavour, smp):
    """The configurations at the vCPU counts ``make test`` skips: A-RCU at
    -smp 8, the locked
    page hash table at -smp 1, 4 and 8, Podzimek RCU at -smp 4 and 8, the release
    build at -smp 4."""
    if flavour not in flavours():
        pytest.skip("configuration %s not selected" % flavour)
    with kconsole.Kernel(smp=smp, kernel=flavour_kernel(flavour),
                         name="soak-%s-smp%d" % (flavour, smp)) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        run = k.run_all_tests(TEST_ALL_TIMEOUT)
        failures = [r for ok, r in run.verdicts if not ok]
        assert run.failed == 0 and not failures, \
            "%d failed (%s):\n%s" % (run.failed, failures, run.output)
        min_gps, missing = claimed_gps(run.output)
        assert not missing, "no GP count of %s" % ", ".join(missing)
        check_rcu_stats(k, "podzimek-rcu" if flavour == "podzimek-rcu"
                        else "a-rcu", min_gps=min_gps)
        check_workq_idle(k)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


#: The race tests of the correctness issue and how often a soak boot runs
#: each (asrace1long and ptwalk1long are asrace1 and ptwalk1 with 20x the
#: cycles; semaphore1long, semaphore2long and mutex1long are the lock stress
#: tests with 8x the work of their `test *` runs; the others repeat).
SOAK_RACES = (("asrace1long", 1), ("ptwalk1long", 1), ("mapping2", 10),
              ("chtcount", 10), ("rcuunlock1", 5), ("pagefault1", 5),
              ("semaphore1long", 1), ("semaphore2long", 1),
              ("mutex1long", 1))


@pytest.mark.soak
@pytest.mark.parametrize("smp", (2, 4), ids=lambda n: "smp%d" % n)
@pytest.mark.parametrize("flavour", ("a-rcu", "podzimek-rcu", "a-rcu+release",
                                     "a-rcu+page_ht-locked"))
def test_soak_races(flavour, smp):
    """Long and repeated runs of the race tests in each configuration."""
    if flavour not in flavours():
        pytest.skip("configuration %s not selected" % flavour)
    with kconsole.Kernel(smp=smp, kernel=flavour_kernel(flavour),
                         name="soak-races-%s-smp%d" % (flavour, smp)) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        for name, reps in SOAK_RACES:
            for i in range(reps):
                passed, reason, out = k.run_test(name, TEST_ALL_TIMEOUT)
                assert passed, "%s run %d: %s\n%s" % (name, i + 1, reason,
                                                        out)
        check_workq_idle(k)
        k.check_no_panic()
        k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# Boot the ISO through GRUB
# --------------------------------------------------------------------------

class TestISO:
    """image.iso via -cdrom with -smp 2."""

    def test_boot(self, iso_boot):
        """GRUB loads the kernel and the prompt appears."""
        iso_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_cpus(self, iso_boot):
        """``cpus`` reports 2 CPUs online."""
        out = iso_boot.k.cmd("cpus", CMD_TIMEOUT)
        assert kconsole.parse_cpus_online(out) == 2, \
            "expected '2 CPUs online':\n" + out

    def test_version(self, iso_boot):
        """``version`` prints something."""
        assert_known(iso_boot.k.cmd("version", CMD_TIMEOUT), "version")

    def test_programs(self, iso_boot):
        """The GRUB modules are the programs; ``run hello`` exits 0."""
        out = iso_boot.k.cmd("programs", CMD_TIMEOUT)
        assert re.search(r"^  hello\s+\d+$", out, re.MULTILINE), out
        out = iso_boot.k.cmd("run hello", CMD_TIMEOUT)
        assert re.search(r"^Hello from user space: task \d+, 2 CPUs$", out,
                         re.MULTILINE), out
        assert re.search(r"^task \d+ \(hello\) exited with status 0$", out,
                         re.MULTILINE), out

    def test_no_panic(self, iso_boot):
        """Nothing in the log is a panic or exception report."""
        iso_boot.k.check_no_panic()

    def test_halt(self, iso_boot):
        """``halt`` makes QEMU exit with status 33."""
        iso_boot.k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# Bad input must never panic; the prompt comes back after each line
# --------------------------------------------------------------------------

def _random_line(seed, length):
    """Return a printable line that is no command and matches no panic."""
    rng = random.Random(seed)
    while True:
        body = "".join(chr(rng.randint(0x20, 0x7e)) for _ in range(length - 2))
        line = "zz" + body
        if not kconsole.PANIC_RE.search(line):
            return line.encode()


_CONTROL = bytes(b for b in range(1, 0x20) if b not in (0x0a, 0x0d))

#: (id, bytes typed before Enter, what the output must show or None).
#: "unknown": an 'Unknown command' message; "usage": a usage line;
#: "nopass": no 'Test passed'.
BAD_INPUTS = [
    ("unknown-command", b"frobnicate", "unknown"),
    ("unknown-command-args", b"frobnicate 1 2 3", "unknown"),
    ("unknown-command-long-name", b"x" * 200, None),
    ("uppercase-command", b"HELP", None),
    ("test-too-many-args", b"test a b c", "usage"),
    ("test-two-args", b"test atomic1 extra", "usage"),
    ("test-star-extra", b"test * extra", "usage"),
    ("test-nonexistent", b"test nonexistent", "nopass"),
    ("test-double-star", b"test **", "nopass"),
    ("test-huge-number", b"test 99999999999999999999999", "nopass"),
    ("test-negative-number", b"test -1", "nopass"),
    ("test-long-name", b"test " + b"n" * 1000, "nopass"),
    ("cpus-extra-args", b"cpus extra args", "usage"),
    ("rcutorture-bad-flag", b"rcutorture -x", "usage"),
    ("rcutorture-missing-seconds", b"rcutorture -t", "usage"),
    ("rcutorture-seconds-not-a-number", b"rcutorture -t abc", "usage"),
    ("rcutorture-zero-seconds", b"rcutorture -t 0", "usage"),
    ("rcutorture-negative-seconds", b"rcutorture -t -5", "usage"),
    ("rcutorture-huge-seconds", b"rcutorture -t 99999999999999999999",
     "usage"),
    ("rcutorture-too-many-args", b"rcutorture -t 1 -t 2", "usage"),
    ("rcu-extra-args", b"rcu extra", "usage"),
    ("lockstat-extra-args", b"lockstat extra", "usage"),
    ("lockstat-bad-flag", b"lockstat -x", "usage"),
    ("lockdep-extra-args", b"lockdep extra", "usage"),
    ("lockdep-bad-flag", b"lockdep -r", "usage"),
    ("cpus-huge-hex", b"cpus 0xffffffffffffffffffffffffffff", None),
    ("version-extra-arg", b"version 1", None),
    ("zones-huge-numbers", b"zones 99999999999999999999 -9999999999999",
     None),
    ("uptime-extra-args", b"uptime now please", None),
    ("help-extra-args", b"help " + b" ".join([b"x"] * 50), None),
    ("many-args", b"test " + b" ".join([b"a"] * 300), None),
    ("only-spaces", b" " * 80, None),
    ("empty-line", b"", None),
    ("tabs", b"\ttest\t\tnonexistent\t", None),
    ("leading-spaces-command", b"     frobnicate    ", "unknown"),
    ("long-a-4k", b"a" * 4096, None),
    ("long-random-4k", _random_line(1234, 4096), None),
    ("control-chars", _CONTROL, None),
    ("control-chars-in-command", b"ver" + _CONTROL + b"sion", None),
    ("delete-past-start", b"\x7f" * 40 + b"\x08" * 40, None),
    ("delete-then-text", b"abc" + b"\x7f" * 10 + b"frobnicate", "unknown"),
    ("escape-arrows", b"\x1b[A\x1b[B\x1b[C\x1b[D", None),
    ("escape-arrows-many", b"frob" + b"\x1b[D" * 50 + b"\x1b[C" * 50, None),
    ("escape-alone", b"\x1b", None),
    ("escape-then-text", b"\x1bfrobnicate", None),
    ("escape-csi-unterminated", b"\x1b[1;2;3;4;5;6;7;8;9", None),
    ("escape-csi-long-params", b"\x1b[" + b"9" * 200 + b"m", None),
    ("escape-ss3-and-tilde", b"\x1bOA\x1b[3~\x1b[1;5C\x1b[200~x\x1b[201~",
     None),
    ("nul", b"\x00", None),
    ("nul-in-command", b"ver\x00sion", None),
    ("utf8", "caf\u00e9 \u00e9\u00e9 \u2603 \U0001f600".encode("utf-8"), None),
    ("invalid-utf8", b"\xff\xfe\xc3 \xc3\xa9\xff", None),
    ("high-bytes", bytes(range(0x80, 0x100)), None),
    ("ctrl-c-after-text", b"test nonexistent\x03", None),
    ("ctrl-d", b"\x04", None),
    ("bell-and-formfeed", b"\x07\x0c", None),
]


#: May share the host CPUs (conftest.py): each line typed is answered on
#: its own, no verdict needs two vCPUs to interleave.
@pytest.mark.concurrent
class TestBadInput:
    """Hostile console input: the kernel must answer every time."""

    def test_boot(self, badinput_boot):
        """The kernel reaches the prompt; remember what ``version`` says."""
        k = badinput_boot.k
        k.wait_prompt(BOOT_TIMEOUT)
        badinput_boot.version = k.cmd("version", CMD_TIMEOUT)
        assert_known(badinput_boot.version, "version")
        badinput_boot.serial = 0

    @pytest.mark.parametrize("data,expect", [(d, e) for _, d, e in BAD_INPUTS],
                             ids=[i for i, _, _ in BAD_INPUTS])
    def test_bad_input(self, badinput_boot, data, expect):
        """Type a bad line, then prove the console is alive and sane."""
        k = badinput_boot.k
        start = k.pos
        k.send_line(data)
        # The prompt must come back after the line.  A missing prompt is a
        # wrong answer (asserted below, after the resynchronisation), not a
        # driver error, so the remaining bad lines still run.
        try:
            k.wait_prompt(BAD_LINE_PROMPT_TIMEOUT)
            prompt_back = True
        except kconsole.KernelTimeout:
            prompt_back = False
        # Sync on a unique marker: '~' ends any half-typed escape sequence.
        badinput_boot.serial += 1
        token = "sync%04d" % badinput_boot.serial
        k.send_line("~~ " + token)
        marker = k.wait_for(token, CMD_TIMEOUT,
                            "the echo of %r typed after the bad line" % token)
        output = kconsole.normalize(k.buf[start:marker.start()])
        k.wait_prompt(CMD_TIMEOUT)
        assert prompt_back, "no prompt within %d s after the line %r:\n%s" % (
            BAD_LINE_PROMPT_TIMEOUT, data[:80], output)
        version = k.cmd("version", CMD_TIMEOUT)
        assert version == badinput_boot.version, \
            "after the bad line 'version' printed %r instead of %r" % (
                version, badinput_boot.version)
        low = output.lower()
        if expect == "unknown":
            assert "unknown command" in low, \
                "no 'Unknown command' message:\n" + output
        elif expect == "usage":
            assert "usage" in low, "no usage line:\n" + output
            assert not kconsole.parse_verdicts(output), \
                "a test ran despite the wrong arguments:\n" + output
        elif expect == "nopass":
            assert "test passed" not in low, \
                "a bad test name passed:\n" + output

    def test_no_panic(self, badinput_boot):
        """Nothing in the whole log is a panic or exception report."""
        badinput_boot.k.check_no_panic()

    def test_halt(self, badinput_boot):
        """``halt`` still works after all that."""
        badinput_boot.k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# The harness's own parsers, on canned console text (no QEMU)
# --------------------------------------------------------------------------

CANNED_CPUS = (
    "cpu  apic  state     timer-Hz  lapic-Hz     ticks\r\n"
    "  0     0  online         100   62498500         1\r\n"
    "  1     1  online         100   62498500         0\r\n"
    "2 CPUs online\r\n")

CANNED_LIST = (
    "Tests (run with 'test NAME', 'test *' runs every safe one):\n"
    "  atomic1      safe   Atomic operations on integers and pointers\n"
    "  rcu1         [safe] Grace periods\n"
    "  fault1       unsafe Deliberate page fault (unsafe)\n")

CANNED_ALL = (
    "== test atomic1: Atomic operations ==\r\n"
    "atomic1: all 46 checks done\r\n"
    "Test passed\r\r\n"
    "== test ipi1: IPIs ==\n"
    "ipi1: 2 CPUs online\n"
    "Test failed: CPU 1 got 299 IPIs, expected 300\n"
    "cht: Test failed\n"
    "1 passed, 2 failed\n")


class TestParsers:
    """The harness parses what the kernel prints; check it on canned text."""

    def test_strip_echo(self):
        """The first line of a segment is the echo of the command."""
        seg = b"cpus\r\r\n" + CANNED_CPUS.encode() + b"\r\n"
        out = kconsole.strip_echo(seg, "cpus")
        assert out.startswith("cpu  apic") and out.endswith("2 CPUs online")
        assert kconsole.strip_echo(b"\r\n", "") == ""
        assert kconsole.strip_echo(b"halt", "halt") == ""

    def test_cpus_online(self):
        """Only a line that is exactly ``N CPUs online`` counts."""
        assert kconsole.parse_cpus_online(CANNED_CPUS) == 2
        assert kconsole.parse_cpus_online("1 CPU online\n") == 1
        assert kconsole.parse_cpus_online("ipi1: 2 CPUs online\n") is None
        assert kconsole.parse_cpus_online("no table") is None

    def test_test_list(self):
        """Listing lines with and without brackets; headers ignored."""
        listed = kconsole.parse_test_list(CANNED_LIST)
        assert [(n, s) for n, s, _ in listed] == [
            ("atomic1", True), ("rcu1", True), ("fault1", False)]

    def test_verdicts_and_summary(self):
        """Verdict lines (with or without prefix/reason) and the summary."""
        assert kconsole.parse_verdicts(CANNED_ALL) == [
            (True, None), (False, "CPU 1 got 299 IPIs, expected 300"),
            (False, "")]
        assert kconsole.parse_summary(CANNED_ALL) == (1, 2)
        assert kconsole.parse_summary("Test passed\n") is None

    def test_panic_regex(self):
        """Panic and exception reports match; ordinary words do not."""
        assert kconsole.find_panic("PANIC on CPU 3: assertion failed")
        assert kconsole.find_panic("Exception #14 (#PF Page fault)")
        assert not kconsole.find_panic(
            "fault1 unsafe Deliberate page fault: exception report\n")
        assert kconsole.find_panic(
            "Deadlock probable: CPU 1 spinning on lock 'rq' (0x1) for 5 s")
        assert kconsole.find_panic(
            "Deadlock probable: false alarm, CPU 1 got lock 'rq'")
        assert kconsole.find_panic(
            "Deadlock: CPU 2 spinning on lock '?' (0x1), a cycle of 2 CPU(s):")
        assert not kconsole.find_panic(
            "spinlock: long wait: CPU 0 spinning on lock 'runq' (0x1) for "
            "5 s, owner CPU 3, no wait-for cycle (a slow or descheduled "
            "holder, not a deadlock)")
        assert kconsole.find_panic(
            "Unexpected interrupt 77 on CPU 0 at 0xffffffff80101234 (ignored)")

    def test_running_test(self):
        """The test a hung ``test *`` was in: the last header, no verdict."""
        assert kconsole.running_test(
            "== test atomic1: A ==\nTest passed\n== test waitq1: W ==\n"
            "waitq1: x\n") == "waitq1"
        assert kconsole.running_test(
            "== test atomic1: A ==\nTest passed\n") is None
        assert kconsole.running_test("kconsole> ") is None

    def test_claimed_gps(self):
        """The GP counts rcu1 and rcutorture print are summed."""
        out = ("rcu1: all parts ok: 120 GPs in 3000 ms; pending callbacks 0; "
               "heap allocations 5 before, 5 after\r\n"
               "rcutorture: 3001 ms, writer version 300 (12 synchronize, 0 "
               "expedited, 13 by callback, 117 age callbacks, pool empty 0 "
               "times), 210 GPs\r\n")
        assert claimed_gps(out) == (330, [])
        assert claimed_gps("rcu1: x\n") == (0, ["rcu1", "rcutorture"])

    def test_uptime(self):
        """Several uptime formats parse to seconds."""
        assert kconsole.parse_uptime("Up 0.017 s (17575 us); CPU 0 ticks: 1") \
            == pytest.approx(0.017)
        assert kconsole.parse_uptime(
            "Up 0 days, 0 hours, 1 minutes, 5 seconds") == 65
        assert kconsole.parse_uptime("1500 ms") == pytest.approx(1.5)
        assert kconsole.parse_uptime("no number") is None
