"""Console input that is never lost, and a seeded fuzz of the kernel console.

One boot of build/kernel.elf at -smp 2 (class ``TestConsoleFuzz``; its methods
are its steps, in order):

* ``test_flood``: while a command keeps the console busy, eight lines of
  1,100-2,000 characters are sent back to back without waiting, each followed
  by a marker line (an unknown command with a unique name); every marker must
  be answered.  A console that drops input when its ring is full loses line
  ends and the markers with them.
* ``test_fuzz``: at least 2,000 seeded lines (random text, control characters,
  escape sequences, lines of 200-6,000 characters, every command with junk,
  edge and overflowing arguments); after each line a unique marker line whose
  ``Unknown command`` answer must come back.  A Python model of the line
  editor predicts what each line amounts to, so that no line can run ``halt``,
  a test, or a benchmark or torture run longer than 1 s, and so that the
  answer can be checked (``Unknown command: WORD``, ``Line too long``).
* ``test_found``: the lines the fuzz found crashing the kernel (``FOUND``).
* ``test_after``: ``test atomic1`` passes and ``chtstat``, ``page_ht`` and
  ``workq`` are back at the reading taken before the fuzz.

``test_fuzz_soak`` (``make soak``): a boot per seed, 10,000 lines each
(``KTEST_FUZZ_SOAK_LINES``).

Environment: ``KTEST_FUZZ_SEED`` (default 15), ``KTEST_FUZZ_LINES`` (default
2000).  A failure prints the seed and the line, so it reproduces.
"""

import os
import random
import re
import time

import pytest

from tools import kconsole
from conftest import (BOOT_TIMEOUT, CMD_TIMEOUT, HALT_TIMEOUT, KERNEL_ELF,
                      MARK_TIMEOUT, class_boot)

SEED = int(os.environ.get("KTEST_FUZZ_SEED", "15"))
LINES = int(os.environ.get("KTEST_FUZZ_LINES", "2000"))
LINE_MAX = 255           # KCONSOLE_LINE_MAX
HISTORY = 16             # kconsole.c HISTORY


fuzz_boot = class_boot("kernel.elf booted with -smp 2 for the flood and fuzz "
                       "steps.", smp=2, kernel=KERNEL_ELF, name="fuzz-smp2")


def _random_text(rng, length):
    """Printable text that is no command and matches no panic pattern."""
    while True:
        text = "zz" + "".join(chr(rng.randint(0x20, 0x7e))
                              for _ in range(max(0, length - 2)))
        if not kconsole.PANIC_RE.search(text):
            return text


def _marker_re(token):
    return re.compile(re.escape(
        ("Unknown command: %s " % token).encode()))


def flood(k, serial, seed=SEED):
    """The flood step: while ``chtbench 1 1 0 -t 2`` keeps the console from
    reading for 2 s, eight lines of 1,100-2,000 characters (each longer than
    the kernel's 1,024-byte input ring), each followed by a marker line
    (``floodNNNNN``), are sent back to back. At the harness's pace (16 bytes
    per 5 ms) about four lines and their markers arrive inside the 2 s, so
    a console that drops bytes once its ring is full loses markers there
    (with six lines of 2,000-6,000 characters the drops could all fall
    inside the first line: the flood passed with the drop put back,
    make BROKEN=inputflood). Returns the markers never answered and the
    last serial used (also the control, tests/test_controls.py)."""
    rng = random.Random(seed)
    k.send_line("chtbench 1 1 0 -t 2")
    tokens = []
    for _ in range(8):
        serial += 1
        token = "flood%05d" % serial
        tokens.append(token)
        k.send_line(_random_text(rng, rng.randint(1100, 2000)))
        k.send_line(token)
    # The console answers lines in order: once the last marker's answer is
    # there, every earlier marker it received was answered before it (no
    # verdict from a timeout unless the last one itself never comes).
    start = k.pos
    try:
        _, _, before = k.expect(_marker_re(tokens[-1]), MARK_TIMEOUT,
                                "the answer to the marker %r" % tokens[-1])
        last_missing = []
    except kconsole.KernelTimeout:
        before = k.buf[start:]
        k.pos = start
        last_missing = [tokens[-1]]
    missing = [t for t in tokens[:-1] if not _marker_re(t).search(before)]
    return missing + last_missing, serial


#: Lines the fuzz found crashing the kernel, and what they print now.
FOUND = [
    # seed 15: list-upd/ideal (no synchronization) updated from two CPUs: a
    # walker read a freed element, #GP in b_list_upd_ideal.
    ("chtbench 6 2 10 -w -t 1", "runs on one CPU only"),
    # Ctrl-U clears an over-long line: what follows is a new line.
    ("x" * 300 + "\x15" + "zzctrlu", "Unknown command: zzctrlu "),
]


class TestConsoleFuzz:
    """Console input flood and fuzz on one boot at -smp 2."""

    # No verdict needs the two vCPUs to interleave: make test runs it beside
    # another test (tests/conftest.py).
    pytestmark = pytest.mark.concurrent

    def test_boot(self, fuzz_boot):
        """The kernel reaches the prompt."""
        k = fuzz_boot.k
        k.wait_prompt(BOOT_TIMEOUT)
        fuzz_boot.serial = 0

    def test_flood(self, fuzz_boot):
        """Long lines sent back to back while the console is busy: every
        marker after them is answered (no input is dropped)."""
        k = fuzz_boot.k
        missing, fuzz_boot.serial = flood(k, fuzz_boot.serial)
        assert not missing, (
            "seed %d: markers never answered after the flood: %s (input "
            "was lost); log: %s" % (SEED, ", ".join(missing), k.log_path))
        k.wait_prompt(CMD_TIMEOUT)  # the one after the last marker

    def test_baseline(self, fuzz_boot):
        """Read ``chtstat``, ``page_ht`` and ``workq`` before the fuzz."""
        fuzz_boot.commands, fuzz_boot.tests, fuzz_boot.before = \
            fuzz_prepare(fuzz_boot.k)

    def test_found(self, fuzz_boot):
        """Lines the fuzz found crashing the kernel (seed, then the line):
        each must be refused or run, and the console answer after it."""
        k = fuzz_boot.k
        for line, expect in FOUND:
            fuzz_boot.serial += 1
            token = "found%05d" % fuzz_boot.serial
            k.send_line(line)
            k.send_line(token)
            _, _, before = k.expect(_marker_re(token), MARK_TIMEOUT,
                                    "the answer to %r after %r" % (token, line))
            output = kconsole.normalize(before)
            assert expect in output, "%r: expected %r in:\n%s" % (
                line, expect, output)
        k.wait_prompt(CMD_TIMEOUT)

    def test_fuzz(self, fuzz_boot):
        """At least LINES seeded lines; the marker after each is answered,
        and what the line editor model predicts shows up."""
        fuzz_run(fuzz_boot, SEED, LINES)

    def test_after(self, fuzz_boot):
        """``test atomic1`` passes; nothing is left behind by the fuzz."""
        fuzz_check_after(fuzz_boot.k, fuzz_boot.before, SEED)

    def test_no_panic(self, fuzz_boot):
        """Nothing in the whole log is a panic or exception report."""
        fuzz_boot.k.check_no_panic()

    def test_halt(self, fuzz_boot):
        """``halt`` still works."""
        fuzz_boot.k.halt(HALT_TIMEOUT)


@pytest.mark.soak
@pytest.mark.parametrize("seed", [101, 102, 103])
def test_fuzz_soak(request, boot_factory, seed):
    """The long variant (make soak): a boot per seed, 10,000 lines each."""
    boot = boot_factory(request, smp=2, kernel=KERNEL_ELF,
                        name="fuzz-soak-%d" % seed)
    k = boot.k
    k.wait_prompt(BOOT_TIMEOUT)
    boot.serial = 0
    boot.commands, boot.tests, before = fuzz_prepare(k)
    fuzz_run(boot, seed, int(os.environ.get("KTEST_FUZZ_SOAK_LINES",
                                            "10000")))
    fuzz_check_after(k, before, seed)
    k.check_no_panic()
    k.halt(HALT_TIMEOUT)


# --------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------

def fuzz_prepare(k):
    """Return the commands (from ``help``), the test names and the reading
    of what must be back at its baseline after the fuzz."""
    commands = _parse_help(k.cmd("help", CMD_TIMEOUT))
    assert {"help", "test", "halt", "chtbench", "rcutorture"} <= set(
        commands), "unexpected 'help':\n%r" % commands
    tests = [name for name, _, _ in kconsole.parse_test_list(
        k.cmd("test", CMD_TIMEOUT))]
    assert "atomic1" in tests
    return commands, tests, _leftovers(k)


#: Output that must never appear after a fuzz line.
BAD_OUTPUT = ("Test failed", "missed an item")


def fuzz_run(boot, seed, lines):
    """Send ``lines`` seeded lines, each followed by a marker whose answer
    must come back; check what the editor model predicts."""
    __tracebackhide__ = True
    k = boot.k
    gen = FuzzGen(random.Random(seed), boot.commands, boot.tests)
    model = EditorModel()
    # Fill the kernel's history with lines the model knows (Up/Down in the
    # fuzz lines recall them).
    for i in range(HISTORY):
        line = "hist%02d" % i
        out = k.cmd(line, CMD_TIMEOUT)
        assert "Unknown command: %s " % line in out, out
        model.feed(line.encode() + k.eol)
    t0 = time.monotonic()
    for i in range(lines):
        data, events = gen.line(model)
        boot.serial += 1
        token = "mark%05d" % boot.serial
        where = "seed %d, line %d of %d: %r" % (seed, i, lines, data)
        try:
            k.send(data, chunk_size=CHUNK, chunk_delay=CHUNK_DELAY,
                   timeout=MARK_TIMEOUT)
            k.send_line(token)
            model.feed(token.encode() + k.eol)
            _, _, before = k.expect(
                _marker_re(token), MARK_TIMEOUT,
                "the answer to the marker %r after %s" % (token, where))
        except kconsole.KernelError as e:
            pytest.fail("%s\n%s" % (where, e), pytrace=False)
        output = kconsole.normalize(before)
        for bad in BAD_OUTPUT:
            assert bad not in output, "%s: printed %r:\n%s" % (
                where, bad, output[-3000:])
        pos = 0
        for text in _expected_texts(events):
            at = output.find(text, pos)
            assert at >= 0, (
                "%s: expected %r in the output (in order), got:\n%s"
                % (where, text, output[-3000:]))
            pos = at + len(text)
    k.wait_prompt(CMD_TIMEOUT)  # the one after the last marker
    print("fuzz: seed %d, %d lines, %d bytes, %d accepted runs, %.0f s"
          % (seed, lines, gen.bytes_sent, gen.runs, time.monotonic() - t0))


def fuzz_check_after(k, before, seed):
    """``test atomic1`` passes and the reading is back at ``before``."""
    __tracebackhide__ = True
    ok, reason, out = k.run_test("atomic1", 600)
    assert ok, "seed %d: test atomic1 after the fuzz: %s\n%s" % (
        seed, reason, out)
    after = None
    for _ in range(30):
        after = _leftovers(k)
        if after == before:
            break
        time.sleep(1)
    assert after == before, (
        "seed %d: left behind after the fuzz (before -> after):\n%r\n%r"
        % (seed, before, after))


# --------------------------------------------------------------------------
# Readings
# --------------------------------------------------------------------------

def _parse_help(out):
    """Command names from ``help``."""
    return [m.group(1) for m in re.finditer(r"^  (\S+)\s", out, re.M)]


def _leftovers(k):
    """What must be back at its baseline: live hash tables and their items,
    page hash table entries, busy work queue state."""
    chtstat = k.cmd("chtstat", CMD_TIMEOUT)
    tables = []
    for line in chtstat.split("\n")[1:]:
        f = line.split()
        if len(f) >= 8:
            tables.append((f[0], f[1], f[-1]))  # name, items, resizing
    page_ht = k.cmd("page_ht", CMD_TIMEOUT)
    m = re.search(r"^entries:\s*(\d+)", page_ht, re.M)
    assert m, "cannot parse 'page_ht':\n" + page_ht
    workq = k.cmd("workq", CMD_TIMEOUT)
    busy = {}
    for key in ("active", "blocked", "queued items"):
        w = re.search(r"^\s*%s:\s*(\d+)" % key, workq, re.M)
        assert w, "cannot parse 'workq':\n" + workq
        busy[key] = int(w.group(1))
    return {"chtstat": sorted(tables), "page_ht entries": int(m.group(1)),
            "workq": busy}


# --------------------------------------------------------------------------
# A model of the kconsole line editor (kernel/generic/src/console/kconsole.c)
# --------------------------------------------------------------------------

class EditorModel:
    """Predicts what read_line() makes of the bytes typed: a list of events
    ``("line", text)``, ``("toolong", None)``, ``("abandon", None)``.

    Mirrors kconsole.c: CR LF is one line end; Backspace/DEL erase; Ctrl-U
    clears the line; Ctrl-C abandons it; ESC starts a sequence (read_escape)
    whose Up/Down walk the history of 16 lines; a control character inside a
    sequence ends it and counts as input; tabs become spaces; other control
    characters and bytes above 0x7e are ignored; more than 255 characters make
    the line too long.
    """

    def __init__(self):
        self.history = []        # every added line, oldest first
        self.last = None         # static 'last' of read_line
        self._reset()

    def _reset(self):
        self.buf = []
        self.overflow = False
        self.hist_pos = 0
        self.esc = None          # None, or the state of a sequence
        self.esc_count = 0

    def feed(self, data):
        """Feed bytes; return the events of the lines they complete."""
        events = []
        for b in data:
            self._byte(b, events)
        return events

    def _byte(self, c, events):
        if self.esc is not None:
            if not self._escape(c):
                return
            # A control character ended the sequence: it is ordinary input.
        prev, self.last = self.last, c
        if c == 0x0a and prev == 0x0d:
            return
        if c in (0x0d, 0x0a):
            if self.overflow:
                events.append(("toolong", None))
            else:
                line = "".join(self.buf)
                events.append(("line", line))
                self._history_add(line)
            self._reset()
            return
        if c in (0x08, 0x7f):
            if self.buf:
                self.buf.pop()
            return
        if c == 0x15:
            self.buf = []
            self.overflow = False
            return
        if c == 0x03:
            events.append(("abandon", None))
            self._reset()
            return
        if c == 0x1b:
            self.esc = "start"
            return
        if c == 0x09:
            c = 0x20
        if c < 0x20 or c > 0x7e:
            return
        if len(self.buf) >= LINE_MAX:
            self.overflow = True
            return
        self.buf.append(chr(c))

    def _escape(self, c):
        """One byte of a sequence; True if it must be handled as input."""
        if self.esc == "start":
            if c not in (ord("["), ord("O")):
                self.esc = None
                return c < 0x20
            self.esc = "body"
            self.esc_count = 0
            return False
        signed = c - 256 if c > 0x7f else c
        if 0x40 <= c <= 0x7e:
            self.esc = None
            if c in (ord("A"), ord("B")):
                self._recall(chr(c))
            return False
        if c < 0x20:
            self.esc = None
            return True
        self.esc_count += 1
        if signed > 0x3f or self.esc_count >= 16:
            self.esc = None
        return False

    def _recall(self, direction):
        count = len(self.history)
        if count == 0:
            return
        if direction == "A" and self.hist_pos < min(count, HISTORY):
            self.hist_pos += 1
        elif direction == "B" and self.hist_pos > 0:
            self.hist_pos -= 1
        if self.hist_pos == 0:
            self.buf = []
        else:
            self.buf = list(self.history[count - self.hist_pos])
        self.overflow = False

    def _history_add(self, line):
        if line and (not self.history or self.history[-1] != line):
            self.history.append(line)


def _words(line):
    return [w for w in line.split(" ") if w]


#: kconsole_exec: at most 1 + 2 * KCONSOLE_ARGS_MAX words.
WORDS_MAX = 17


def _expected_texts(events):
    """What the output must show for the events, in order."""
    texts = []
    for kind, line in events:
        if kind == "toolong":
            texts.append("Line too long")
        elif kind == "abandon":
            texts.append("^C")
        elif kind == "line":
            words = _words(line)
            if len(words) > WORDS_MAX:
                texts.append("Too many arguments")
            elif words and words[0] not in FuzzGen.known:
                texts.append("Unknown command: %s " % words[0])
    return texts


# --------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------

#: Bytes per write and pause between writes for fuzz lines (the console
#: holds back what it cannot take yet, so larger chunks are safe).
CHUNK = 256
CHUNK_DELAY = 0.002

#: Junk, edge and overflowing arguments.
JUNK_ARGS = [
    "0", "-0", "+0", "1", "-1", "2", "7", "100", "101", "255", "256",
    "4294967295", "4294967296", "4294967297", "-4294967297",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "99999999999999999999", "-99999999999999999999", "1" * 60,
    "0x0", "0x1", "0x10", "0xff", "0xFFFFFFFF", "0x100000001",
    "0xffffffffffffffff", "0x10000000000000000", "-0x8000000000000000",
    "0x", "0xg", "x10", "1e3", "1.5", "+", "-", "--", "+-1", "00001",
    "''", '""', "'", '"', "'a", 'b"', "'-t'", '"1"', "\\", "%s%n%x%p",
    "-t", "-w", "-x", "-tt", "--t", "-t1", "-W", "-h", "--help", "*", "**",
    "abc", "NaN", "null", "~", "$HOME", "`", ";", "|", "&&",
]

CONTROL = bytes(b for b in range(1, 0x20) if b not in (0x0a, 0x0d))

ESCAPES = [
    b"\x1b[A", b"\x1b[B", b"\x1b[C", b"\x1b[D", b"\x1bOA", b"\x1bOB",
    b"\x1bOC", b"\x1b[3~", b"\x1b[1;5C", b"\x1b[200~", b"\x1b[201~",
    b"\x1b[?25l", b"\x1b[2J", b"\x1b[0m", b"\x1b", b"\x1b\x1b", b"\x1b[",
    b"\x1bO", b"\x1b[" + b"9" * 30 + b"m", b"\x1b[1;2;3;4;5;6;7;8;9",
    b"\x1b[\x80\x90A", b"\x1b[1\x7f", b"\x1bx", b"\x1b]0;title\x07",
]

#: The user programs of the boot image (``run NAME`` is never generated).
USER_PROGRAMS = {"hello", "fault", "sysjunk", "threads", "busy", "ufault",
                 "chtuser"}

#: Run-time cap of accepted benchmark and torture runs (each is 1 s).
RUNS_MAX = 30


def _kint(text):
    """str_to_int64() of lib/str.c: sign, then decimal or 0x hex; or None."""
    m = re.match(r"^([+-]?)(0[xX][0-9a-fA-F]+|[0-9]+)$", text)
    if not m:
        return None
    value = int(m.group(2), 0) if m.group(2)[:2].lower() == "0x" \
        else int(m.group(2))
    value = -value if m.group(1) == "-" else value
    return value if -2 ** 63 <= value < 2 ** 63 else None


def _chtbench_runs(args):
    """1 if ``chtbench ARGS`` (ending in -t 1) probably runs, else 0; only
    for the cap on run time, so it need not be exact."""
    if len(args) < 5:
        return 0
    nums = [_kint(a) for a in args[:3]]
    if None in nums:
        return 0
    bench, cpus, pct = nums
    if not (1 <= bench < 1000 and 1 <= cpus <= 2 and 0 <= pct <= 100):
        return 0
    return 1


class FuzzGen:
    """Seeded lines; every one is checked against the editor model so that
    none runs halt, a test, or a run longer than 1 s."""

    known = set()

    def __init__(self, rng, commands, tests):
        self.rng = rng
        self.commands = list(commands)
        FuzzGen.known = set(commands)
        self.tests = set(tests)
        self.bytes_sent = 0
        self.runs = 0

    def line(self, model):
        """Return ``(bytes, events)`` of a safe line and feed it to the
        model (the model then expects the marker)."""
        while True:
            data = self._candidate() + self._eol()
            trial = EditorModel()
            trial.history = list(model.history)
            trial.last = model.last
            events = trial.feed(data)
            if trial.buf or trial.esc is not None or trial.overflow:
                continue  # must end at a line end (always true; be sure)
            runs = self._safe(events)
            if runs is None or self.runs + runs > RUNS_MAX:
                continue
            if kconsole.PANIC_RE.search(data.decode("latin-1")):
                continue
            self.runs += runs
            self.bytes_sent += len(data)
            return data, model.feed(data)

    def _eol(self):
        return self.rng.choice([b"\r"] * 8 + [b"\r\n", b"\n"])

    def _safe(self, events):
        """Accepted 1 s runs among the events, or None if one is unsafe."""
        runs = 0
        for kind, line in events:
            if kind != "line":
                continue
            if kconsole.PANIC_RE.search(line):
                return None
            words = _words(line)
            if not words or len(words) > WORDS_MAX:
                continue
            cmd, args = words[0], words[1:]
            if re.match(r"mark\d", cmd):
                return None
            if cmd == "halt" and not args:
                return None
            # A user program may run until killed (busy): never start one.
            if cmd == "run" and set(args) & USER_PROGRAMS:
                return None
            if cmd == "test" and len(args) == 1 and (
                    args[0] == "*" or args[0] in self.tests):
                return None
            if cmd == "chtbench" and args:
                if args[-2:] != ["-t", "1"]:
                    return None
                runs += _chtbench_runs(args)
            if cmd == "rcutorture":
                if not args:
                    return None
                if len(args) == 2 and args[0] == "-t":
                    if re.match(r"^\+?[0-9]", args[1]) and args[1] != "1":
                        return None
                    runs += 1
        return runs

    # ---- candidates ----------------------------------------------------

    def _candidate(self):
        r = self.rng.random()
        if r < 0.50:
            return self._command().encode()
        if r < 0.60:
            return self._text(self.rng.randint(0, 200)).encode()
        if r < 0.62:
            return self.rng.choice([b"", b" ", b"\t", b" " * 300])
        if r < 0.68:
            return self._long()
        if r < 0.90:
            return self._mixed()
        return self._edited()

    def _text(self, n):
        return "zz" + "".join(chr(self.rng.randint(0x20, 0x7e))
                              for _ in range(n))

    def _arg(self):
        rng = self.rng
        r = rng.random()
        if r < 0.75:
            return rng.choice(JUNK_ARGS)
        if r < 0.85:
            return str(rng.randint(-2 ** 70, 2 ** 70))
        if r < 0.95:
            return "".join(chr(rng.randint(0x21, 0x7e))
                           for _ in range(rng.randint(1, 12)))
        return "9" * rng.randint(1, 240)

    def _command(self):
        rng = self.rng
        cmd = rng.choice(self.commands)
        if cmd == "chtbench" and rng.random() < 0.5:
            args = [str(rng.randint(0, 24)),
                    rng.choice(["1", "1", "2", "2", "3", "0"]),
                    rng.choice(["0", "10", "50", "100", "101", "-1"])]
            if rng.random() < 0.3:
                args.append("-w")
            args += ["-t", "1"]
        elif cmd == "rcutorture" and rng.random() < 0.2:
            args = ["-t", "1"]
        else:
            args = [self._arg() for _ in range(rng.choice(
                [0, 1, 1, 2, 2, 3, 3, 4, 5, 8, 17, 20]))]
            if cmd == "chtbench" and rng.random() < 0.5:
                args += ["-t", "1"]
        if rng.random() < 0.05:
            args = args * 3  # repeated options
        sep = rng.choice([" "] * 6 + ["  ", "\t", " \t "])
        return sep.join([cmd] + args)

    def _long(self):
        """A line of 200-6,000 characters, sometimes with control bytes."""
        rng = self.rng
        n = rng.randint(200, 6000)
        if rng.random() < 0.5:
            return self._text(n).encode()
        out = bytearray(self._text(rng.randint(0, 300)).encode())
        while len(out) < n:
            out += self._piece()
        return bytes(out[:n]).replace(b"\r", b"").replace(b"\n", b"")

    def _piece(self):
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            return self._text(rng.randint(0, 40)).encode()
        if r < 0.55:
            return bytes(rng.choice(CONTROL) for _ in range(rng.randint(1, 4)))
        if r < 0.80:
            return rng.choice(ESCAPES)
        if r < 0.90:
            return bytes(rng.randint(0x80, 0xff)
                         for _ in range(rng.randint(1, 6)))
        return (" " + rng.choice(self.commands) + " ").encode()

    def _mixed(self):
        """Text, control characters, escape sequences, high bytes."""
        out = b"".join(self._piece() for _ in range(self.rng.randint(1, 8)))
        return out.replace(b"\r", b"").replace(b"\n", b"")

    def _edited(self):
        """A command typed with mistakes and corrections."""
        rng = self.rng
        cmd = self._command()
        out = bytearray()
        for ch in cmd.encode():
            if rng.random() < 0.1:
                junk = self._text(rng.randint(1, 3))[2:].encode()
                out += junk + bytes([rng.choice([0x08, 0x7f])]) * len(junk)
            out.append(ch)
        if rng.random() < 0.2:
            out = bytearray(b"garbage\x15") + out
        return bytes(out)
