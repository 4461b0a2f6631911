#!/usr/bin/env python3
"""Drive the kernel console (kconsole) over QEMU's serial line.

The kernel's COM1 is its console.  This module boots the kernel in QEMU
with the serial line on a pseudo-terminal (``pexpect.spawn``), waits for the
prompt ``kconsole> `` (pexpect's ``expect()``), types commands and returns
what they printed.  Everything the kernel prints is kept in memory and
written to a log file (``build/logs/<name>.log``).

Library use::

    with Kernel(smp=4, name="smp4") as k:
        k.wait_prompt()
        print(k.cmd("cpus"))
        ok, reason, out = k.run_test("atomic1")
        summary = k.run_all_tests()
        k.check_no_panic()
        k.halt()                      # expects QEMU exit status 33

Command-line use (prints each command's output, exits non-zero on a panic, a
timeout, QEMU exiting on its own, or a bad exit status after ``halt``)::

    python3 tools/kconsole.py --smp 4 -- 'cpus' 'test *'

Every failure raises a :class:`KernelError` (or a subclass) whose message names
the log file and quotes its tail.

Environment:

``QEMU``
    QEMU command (default ``qemu-system-x86_64``); may contain arguments,
    e.g. ``QEMU='taskset -c 0 qemu-system-x86_64'``.
``KTEST_TIMEOUT_SCALE``
    Factor applied to every timeout (default 1.0).
``KTEST_LOG_DIR``
    Directory for the logs (default ``build/logs`` in the repository).
"""

import argparse
import collections
import errno
import fcntl
import os
import re
import shlex
import shutil
import signal
import sys
import time

try:
    import pexpect
except ImportError:  # pragma: no cover - depends on the host
    pexpect = None

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_KERNEL = os.path.join(REPO, "build", "kernel.elf")
DEFAULT_ISO = os.path.join(REPO, "build", "image.iso")
DEFAULT_LOG_DIR = os.path.join(REPO, "build", "logs")

PROMPT = "kconsole> "
PROMPT_RE = re.compile(re.escape(PROMPT.encode()))

#: Text that means the kernel crashed or is broken, wherever it appears in the
#: log: panics and exception reports, a spinlock deadlock (the debug build's
#: spin watchdog: "Deadlock:" with the wait-for cycle; "Deadlock probable:"
#: from kernels before the watchdog looked for cycles) and an
#: interrupt on a vector nobody registered ("Unexpected interrupt") and a
#: report of the debug builds' lock validator ("LOCKDEP REPORT", docs/LOCKING.md).
PANIC_RE = re.compile(
    r"PANIC|Kernel panic|Unhandled exception|Exception #|Triple fault|"
    r"Deadlock(?: probable)?:|Unexpected interrupt|LOCKDEP REPORT")
PANIC_RE_B = re.compile(PANIC_RE.pattern.encode())

#: Exit status QEMU returns when the kernel writes 0x10 to isa-debug-exit
#: ((0x10 << 1) | 1).
HALT_STATUS = 33

#: The panic check searches again over this many bytes of already checked
#: output, so that a report split across two reads is found.
OVERLAP = 4096

#: Seconds between two tries to write to a full terminal (output is read
#: meanwhile).
WRITE_RETRY = 0.01

#: Any output at all (waiting for a panic report to end).
ANY_OUTPUT_RE = re.compile(rb"(?s).+")

#: Seconds of silence after a panic message before the report is considered
#: complete (registers, backtrace), and the most to wait for it.
PANIC_SETTLE = 2.0
PANIC_SETTLE_MAX = 15.0

TestRun = collections.namedtuple("TestRun", "passed failed verdicts output")
TestRun.__doc__ = """Result of ``test *``: counts from the summary line, the
list of per-test verdicts ``(passed, reason)`` in order, and the output."""


def timeout_scale():
    """Return the factor from ``KTEST_TIMEOUT_SCALE`` (default 1.0)."""
    raw = os.environ.get("KTEST_TIMEOUT_SCALE", "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("KTEST_TIMEOUT_SCALE must be a number, got %r" % raw)
    if value <= 0:
        raise ValueError("KTEST_TIMEOUT_SCALE must be positive, got %r" % raw)
    return value


# --------------------------------------------------------------------------
# Parsing helpers (pure functions: unit-testable on canned text)
# --------------------------------------------------------------------------

def decode(data):
    """Decode serial bytes to text, never failing (bad bytes become U+FFFD)."""
    if isinstance(data, str):
        return data
    return bytes(data).decode("utf-8", errors="replace")


def normalize(text):
    """Return ``text`` with line ends made ``\\n`` (all ``\\r`` removed).

    The kernel may end lines with ``\\r\\n`` or ``\\n`` and the pseudo-terminal
    may turn ``\\n`` into ``\\r\\n`` once more.
    """
    return decode(text).replace("\r", "")


def strip_echo(segment, line=None):
    """Return a command's output from the text between two prompts.

    ``segment`` is everything after the prompt the command was typed at and
    before the next prompt: the echo of the typed line, a line end, then the
    output.  The echo is the first line; it is dropped whether or not it equals
    ``line`` (the kernel may render control characters differently).
    """
    text = normalize(segment)
    nl = text.find("\n")
    if nl < 0:
        return ""
    return text[nl + 1:].rstrip("\n")


def find_panic(text):
    """Return the first panic/exception match in ``text``, or None."""
    return PANIC_RE.search(normalize(text))


_CPUS_RE = re.compile(r"^\s*(\d+)\s+CPUs?\s+online\s*$", re.MULTILINE)


def parse_cpus_online(text):
    """Return N from the last ``N CPUs online`` line of ``text``, or None."""
    found = _CPUS_RE.findall(normalize(text))
    return int(found[-1]) if found else None


_SUMMARY_RE = re.compile(r"(?<![\w-])(\d+) passed, (\d+) failed\b")


def parse_summary(text):
    """Return ``(passed, failed)`` from the last ``N passed, N failed``."""
    found = _SUMMARY_RE.findall(normalize(text))
    if not found:
        return None
    passed, failed = found[-1]
    return int(passed), int(failed)


_VERDICT_RE = re.compile(r"Test passed|Test failed(?::[ \t]*(.*))?")


def parse_verdicts(text):
    """Return the verdict lines of ``text`` as a list of (passed, reason).

    A verdict is ``Test passed`` or ``Test failed: <reason>`` anywhere in a
    line (a prefix such as the test name is allowed).  ``reason`` is None for a
    pass and the text after the colon (possibly empty) for a failure.
    """
    verdicts = []
    for line in normalize(text).split("\n"):
        m = _VERDICT_RE.search(line)
        if not m:
            continue
        if m.group(0).startswith("Test passed"):
            verdicts.append((True, None))
        else:
            verdicts.append((False, (m.group(1) or "").strip()))
    return verdicts


_TEST_LINE_RE = re.compile(
    r"^\s*(?P<name>[^\s\[\]]+)\s+\[?(?P<flag>safe|unsafe)\]?"
    r"(?:\s+(?P<desc>.*))?$")


def parse_test_list(text):
    """Parse the listing printed by ``test``.

    Expected lines look like ``  NAME  [safe]  description`` (brackets
    optional).  Returns a list of ``(name, safe, description)``; lines that do
    not match (headers, usage) are ignored.
    """
    tests = []
    for line in normalize(text).split("\n"):
        m = _TEST_LINE_RE.match(line)
        if m:
            tests.append((m.group("name"), m.group("flag") == "safe",
                          (m.group("desc") or "").strip()))
    return tests


#: One row of ``chtbench 0 0 0``: id, name, flags (u, r, 1 or -), description.
_CHTBENCH_ROW_RE = re.compile(
    r"^\s*(\d+)\s+(\S+)\s+([-ur1]+)\s+(\S.*?)\s*$", re.MULTILINE)


def parse_chtbench_table(text):
    """The benchmark table that ``chtbench 0 0 0`` prints, the one list of
    benchmark ids (kernel/test/bench/chtbench/runner.c).

    Returns ``{id: {"name", "updates", "resizer", "single_cpu", "desc"}}`` in
    the kernel's order: ``updates`` (flag u) the id takes the update
    percentage, ``resizer`` (r) it runs a resizer thread, ``single_cpu`` (1)
    its updates run on one CPU only.  Other lines are ignored.
    """
    table = {}
    for m in _CHTBENCH_ROW_RE.finditer(normalize(text)):
        flags = m.group(3)
        table[int(m.group(1))] = {
            "name": m.group(2), "updates": "u" in flags,
            "resizer": "r" in flags, "single_cpu": "1" in flags,
            "desc": m.group(4)}
    return table


#: The ``result:`` line of one chtbench run.
_CHTBENCH_RESULT_RE = re.compile(r"^result: (.*?)\s*$", re.MULTILINE)
#: Its fields with integer values.
_CHTBENCH_INT_FIELDS = ("bench", "cpus", "update", "seconds", "ops",
                        "ops_per_s")


def parse_chtbench_results(text):
    """Every ``result: key=value ...`` line of chtbench output, in order, as
    dicts (bench, name, rcu, cpus, update, seconds, ops, ops_per_s and, for
    the page hash table ids, page_ht).  The integer fields are ints; a line
    whose fields do not parse raises ValueError."""
    out = []
    for m in _CHTBENCH_RESULT_RE.finditer(normalize(text)):
        fields = {}
        for kv in m.group(1).split():
            key, sep, value = kv.partition("=")
            if not sep or not key:
                raise ValueError("malformed result field %r in %r"
                                 % (kv, m.group(0)))
            fields[key] = value
        for key in _CHTBENCH_INT_FIELDS:
            if key in fields:
                fields[key] = int(fields[key])
        out.append(fields)
    return out


_HMS_RE = re.compile(r"\b(\d+):(\d{2}):(\d{2}(?:\.\d+)?)\b")
_LONG_UNITS = [
    (re.compile(r"(\d+(?:\.\d+)?)\s*days?\b"), 86400.0),
    (re.compile(r"(\d+(?:\.\d+)?)\s*(?:hours?|hrs?)\b"), 3600.0),
    (re.compile(r"(\d+(?:\.\d+)?)\s*(?:minutes?|mins?)\b"), 60.0),
    (re.compile(r"(\d+(?:\.\d+)?)\s*(?:seconds?|secs?|s)\b"), 1.0),
]
_SHORT_UNIT_RE = re.compile(
    r"(\d+(?:\.\d+)?)\s*(seconds?|secs?|s|ms|us|\u00b5s|ns)\b")
_SHORT_UNITS = {"ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "ns": 1e-9}


def parse_uptime(text):
    """Return the uptime in seconds printed by ``uptime``, or None.

    Accepts ``Up 0 days, 0 hours, 1 minutes, 5 seconds`` (summed),
    ``Up 0.017 s (17575 us)`` (the first number with a unit wins),
    ``1234 ms``, ``00:01:05`` or a bare number (taken as seconds).
    """
    text = normalize(text)
    m = _HMS_RE.search(text)
    if m:
        hours, minutes = int(m.group(1)), int(m.group(2))
        return hours * 3600 + minutes * 60 + float(m.group(3))
    if re.search(r"\b(?:days?|hours?|hrs?|minutes?|mins?)\b", text):
        return sum(float(value) * factor for pattern, factor in _LONG_UNITS
                   for value in pattern.findall(text))
    m = _SHORT_UNIT_RE.search(text)
    if m:
        return float(m.group(1)) * _SHORT_UNITS.get(m.group(2), 1.0)
    m = re.search(r"\d+(?:\.\d+)?", text)
    return float(m.group(0)) if m else None


_HEADER_RE = re.compile(r"^== test (\S+):", re.MULTILINE)


def running_test(text):
    """Return the name of the test whose header is the last one in ``text``
    and that printed no verdict after it, or None."""
    text = normalize(text)
    headers = list(_HEADER_RE.finditer(text))
    if not headers:
        return None
    last = headers[-1]
    if parse_verdicts(text[last.end():]):
        return None
    return last.group(1)


def tail_lines(text, n=40):
    """Return the last ``n`` lines of ``text`` (normalized)."""
    lines = normalize(text).split("\n")
    return "\n".join(lines[-n:])


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

class KernelError(Exception):
    """The kernel or QEMU misbehaved (timeout, panic, exit, bad output)."""


class KernelTimeout(KernelError):
    """Expected output did not arrive in time."""


class KernelPanic(KernelError):
    """The log contains a panic or exception report."""


class KernelExited(KernelError):
    """QEMU exited while the harness still expected output."""

    def __init__(self, message, status=None, signal_number=None):
        super().__init__(message)
        self.status = status
        self.signal_number = signal_number


# --------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------

class Match:
    """A match returned by :meth:`Kernel.expect` and :meth:`Kernel.wait_for`:
    the ``re.Match`` of pexpect's search, whose ``start()``, ``end()`` and
    ``span()`` are offsets into :attr:`Kernel.buf`."""

    def __init__(self, match, base):
        self._match = match
        self._base = base        # offset in buf of what pexpect searched

    def __getattr__(self, name):  # group(), groups(), groupdict(), re, ...
        return getattr(self._match, name)

    def __getitem__(self, group):
        return self._match[group]

    def start(self, group=0):
        at = self._match.start(group)
        return at if at < 0 else at + self._base

    def end(self, group=0):
        at = self._match.end(group)
        return at if at < 0 else at + self._base

    def span(self, group=0):
        return self.start(group), self.end(group)


class _Transcript:
    """pexpect's ``logfile_read``: every byte read from the serial line goes
    to the kernel's ``buf``, its log file and its mirror."""

    def __init__(self, kernel):
        self._kernel = kernel

    def write(self, data):
        self._kernel._append(data)

    def flush(self):
        pass


def boot_programs(kernel):
    """Return the user programs built next to ``kernel`` (sorted paths).

    ``make`` puts them in ``<build dir>/programs/``; a ``-kernel`` boot passes
    them to QEMU as multiboot modules with ``-initrd`` (the ISO has them as
    GRUB modules).
    """
    d = os.path.join(os.path.dirname(os.path.abspath(kernel)), "programs")
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if os.path.isfile(os.path.join(d, f)))


class Kernel:
    """A kernel booted in QEMU with its console on a pseudo-terminal.

    Use as a context manager (QEMU is killed on exit if still running) or call
    :meth:`start` and :meth:`close`.  All ``timeout`` arguments are in seconds
    and are multiplied by ``KTEST_TIMEOUT_SCALE``.

    :param smp: number of virtual CPUs.
    :param mem: memory size for ``-m``.
    :param kernel: ELF to boot with ``-kernel`` (default build/kernel.elf).
    :param iso: ISO to boot with ``-cdrom`` instead of ``kernel``.
    :param name: log name: output goes to ``<log_dir>/<name>.log`` and QEMU's
        own stderr to ``<log_dir>/<name>.stderr``.
    :param extra_args: further QEMU arguments.
    :param accel: value for ``-accel``.
    :param qemu: QEMU command (default: env ``QEMU`` or qemu-system-x86_64).
    :param chunk_size: bytes written to the serial line at once.
    :param chunk_delay: pause in seconds between two chunks (output is drained
        meanwhile, so the kernel's echo never blocks).
    :param eol: bytes sent to end a line (a terminal's Enter is ``\\r``).
    :param mirror: a text stream that receives the serial output live.
    """

    def __init__(self, smp=1, mem="512M", kernel=None, iso=None, name=None,
                 extra_args=(), accel="tcg,thread=multi", qemu=None,
                 log_dir=None, chunk_size=16, chunk_delay=0.005, eol=b"\r",
                 mirror=None, arch="amd64"):
        if pexpect is None:
            raise KernelError(
                "the Python module 'pexpect' is missing for %s; install it "
                "(Debian: apt-get install python3-pexpect, or "
                "%s -m pip install pexpect)"
                % (sys.executable, sys.executable))
        #: "amd64" (qemu-system-x86_64, PC) or "arm64" (qemu-system-aarch64
        #: -M virt -cpu cortex-a72: PL011 console, PSCI SYSTEM_OFF exits 0).
        self.arch = arch
        self.halt_status = HALT_STATUS if arch == "amd64" else 0
        self.smp = int(smp)
        self.mem = mem
        self.iso = iso
        self.kernel = None if iso else (kernel or DEFAULT_KERNEL)
        self.name = name or ("iso-smp%d" % self.smp if iso
                             else "smp%d" % self.smp)
        self.extra_args = list(extra_args)
        self.accel = accel
        self.qemu = shlex.split(qemu or (os.environ.get("QEMU")
                                         if arch == "amd64" else None)
                                or ("qemu-system-x86_64" if arch == "amd64"
                                    else "qemu-system-aarch64"))
        self.log_dir = log_dir or os.environ.get("KTEST_LOG_DIR") \
            or DEFAULT_LOG_DIR
        self.log_path = os.path.join(self.log_dir, self.name + ".log")
        self.stderr_path = os.path.join(self.log_dir, self.name + ".stderr")
        self.chunk_size = max(1, int(chunk_size))
        self.chunk_delay = float(chunk_delay)
        self.eol = eol if isinstance(eol, bytes) else eol.encode()
        self.mirror = mirror
        self.scale = timeout_scale()

        self.buf = bytearray()       # everything the serial line printed
        self.pos = 0                 # end of what expect() has consumed
        #                              (set it back to search again)
        self._panic_scanned = 0      # buf[:_panic_scanned] holds no panic
        self._child = None
        self._log = None
        self._eof = False
        self.exit_status = None      # QEMU's exit status once it is gone
        self.exit_signal = None
        self.argv = None

    # ---- life cycle ------------------------------------------------------

    def command_line(self):
        """Return the QEMU argv this instance runs."""
        common = [
            "-accel", self.accel,
            "-smp", str(self.smp),
            "-m", str(self.mem),
            "-display", "none",
            # Same as -serial stdio, but the terminal's signal characters
            # (^C, ^Z, ^\) reach the guest instead of killing QEMU.
            "-chardev", "stdio,id=kcon,signal=off",
            "-serial", "chardev:kcon",
            "-monitor", "none",
            "-no-reboot",
        ]
        if self.arch == "arm64":
            return (list(self.qemu) + ["-M", "virt", "-cpu", "cortex-a72"] +
                    common + ["-kernel", self.kernel] + self.extra_args)
        argv = list(self.qemu) + common + [
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
        ]
        if self.iso:
            argv += ["-cdrom", self.iso]
        else:
            argv += ["-kernel", self.kernel]
            programs = boot_programs(self.kernel)
            if programs and "-initrd" not in self.extra_args:
                argv += ["-initrd", ",".join(
                    p.replace(",", ",,") for p in programs)]
        return argv + self.extra_args

    def start(self):
        """Start QEMU.  Raises KernelError if QEMU or the image is missing."""
        image = self.iso or self.kernel
        if not os.path.isfile(image):
            raise KernelError("image %s does not exist (run make)" % image)
        if shutil.which(self.qemu[0]) is None:
            raise KernelError("QEMU binary %r not found (set QEMU or install "
                              "qemu-system-x86)" % self.qemu[0])
        os.makedirs(self.log_dir, exist_ok=True)
        self.argv = self.command_line()
        self._log = open(self.log_path, "wb")
        stderr_path = self.stderr_path

        def redirect_stderr():
            fd = os.open(stderr_path,
                         os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            os.close(fd)

        self._child = pexpect.spawn(self.argv[0], self.argv[1:], echo=False,
                                    preexec_fn=redirect_stderr, timeout=None,
                                    dimensions=(50, 200), maxread=65536)
        self._child.delaybeforesend = None
        self._child.logfile_read = _Transcript(self)
        # Writes must not block (see _write()); pexpect reads after select().
        fd = self._child.child_fd
        fcntl.fcntl(fd, fcntl.F_SETFL,
                    fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def alive(self):
        """Return True while QEMU runs."""
        if self._child is None:
            return False
        if self.exit_status is not None or self.exit_signal is not None:
            return False
        if self._child.isalive():
            return True
        self._record_exit()
        return False

    def _record_exit(self):
        self.exit_status = self._child.exitstatus
        self.exit_signal = self._child.signalstatus

    def wait_exit(self, timeout=10.0):
        """Wait up to ``timeout`` (unscaled) seconds for QEMU to be reaped.

        Returns the exit status (None if killed by a signal or still alive).
        """
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        return self.exit_status

    def close(self):
        """Kill QEMU if it still runs and close the log."""
        if self._child is not None:
            if self.alive():
                self._child.kill(signal.SIGTERM)
                if self.wait_exit(5.0) is None and self.alive():
                    self._child.kill(signal.SIGKILL)
                    self.wait_exit(5.0)
            try:
                self._child.close(force=True)
            except Exception:  # pragma: no cover - best effort
                pass
        if self._log is not None:
            self._log.close()
            self._log = None

    # ---- serial I/O: pexpect ----------------------------------------------
    #
    # pexpect reads the terminal (its expect() waits for patterns, timeouts
    # and EOF) and hands every byte it reads to _Transcript, which keeps the
    # whole serial output in ``buf`` and the log.  pexpect's own buffer is
    # the unconsumed output, buf[pos:] (_sync() restores it after pos was set
    # back); a match's offsets are turned into offsets into buf.

    def _t(self, timeout):
        return None if timeout is None else timeout * self.scale

    def _append(self, data):
        self.buf += data
        if self._log is not None:
            self._log.write(data)
            self._log.flush()
        if self.mirror is not None:
            self.mirror.write(decode(data))
            self.mirror.flush()

    def _sync(self):
        """Make pexpect's buffer the unconsumed output, buf[pos:]."""
        unconsumed = len(self.buf) - self.pos
        if len(self._child.buffer) != unconsumed:
            self._child.buffer = bytes(self.buf[self.pos:])

    def _expect_list(self, patterns, timeout):
        """pexpect's expect() over buf[pos:]: the index of the first of
        ``patterns`` (compiled bytes regexes, pexpect.EOF, pexpect.TIMEOUT)
        to match within ``timeout`` seconds (unscaled)."""
        i = self._child.expect_list(patterns, timeout=max(0.0, timeout))
        if patterns[i] is pexpect.EOF:
            self._eof = True
            self.wait_exit(10.0)
        return i

    def _drain(self, seconds):
        """Read what the kernel prints for ``seconds`` (kept unconsumed);
        False once QEMU has closed the terminal."""
        if self._eof:
            return False
        self._sync()
        return self._expect_list([pexpect.TIMEOUT, pexpect.EOF],
                                 seconds) == 0

    def _write(self, data, timeout):
        """Write all of ``data``, reading output while the line is full."""
        __tracebackhide__ = True  # pytest: show the caller
        deadline = time.monotonic() + timeout
        while data:
            if self._eof:
                raise self._exited_error("writing %r" % data[:32])
            try:
                # Non-blocking: a full terminal raises BlockingIOError.
                data = data[self._child.send(data):]
            except BlockingIOError:
                pass
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                self._eof = True
                self.wait_exit(10.0)
                raise self._exited_error("writing")
            if not data:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KernelTimeout(self._describe(
                    "the console did not accept input for %.0f s (is the "
                    "kernel still reading the serial line?)" % timeout))
            # The kernel's echo must not block it: read while waiting.
            self._drain(min(remaining, WRITE_RETRY))

    def send(self, data, chunk_size=None, chunk_delay=None, timeout=60):
        """Send raw ``data`` (bytes or str) in chunks.

        Output is read while sending, so the kernel's echo cannot block.
        """
        __tracebackhide__ = True  # pytest: show the caller
        if isinstance(data, str):
            data = data.encode("utf-8")
        size = chunk_size or self.chunk_size
        delay = self.chunk_delay if chunk_delay is None else chunk_delay
        for i in range(0, len(data), size):
            self._write(data[i:i + size], self._t(timeout))
            if delay > 0 and i + size < len(data):
                self._drain(delay)

    def send_line(self, line, **kw):
        """Send ``line`` followed by the end-of-line bytes."""
        __tracebackhide__ = True  # pytest: show the caller
        if isinstance(line, str):
            line = line.encode("utf-8")
        self.send(line + self.eol, **kw)

    # ---- matching ---------------------------------------------------------

    def _check_panic_stream(self, what):
        """Raise KernelPanic if new output holds a panic report."""
        __tracebackhide__ = True  # pytest: show the caller
        start = max(0, self._panic_scanned - OVERLAP)
        m = PANIC_RE_B.search(self.buf, start)
        self._panic_scanned = len(self.buf)
        if m is None:
            return
        # Let the report (registers, backtrace) finish before quoting it:
        # read until PANIC_SETTLE seconds pass without output.
        end = time.monotonic() + self._t(PANIC_SETTLE_MAX)
        while time.monotonic() < end:
            if self._expect_list([ANY_OUTPUT_RE, pexpect.TIMEOUT, pexpect.EOF],
                                 PANIC_SETTLE) != 0:
                break
        self._panic_scanned = len(self.buf)
        raise KernelPanic(self._describe(
            "kernel reported %r while waiting for %s"
            % (decode(m.group(0)), what), around=m.start()))

    def _wait(self, patterns, timeout, what, check_panic):
        """Wait with pexpect's expect() for the first of ``patterns`` in the
        unconsumed output, checking every byte read for a panic report.

        Returns the index of the pattern that matched (its match in
        ``self._child.match``), or ``pexpect.EOF`` or ``pexpect.TIMEOUT``.
        """
        __tracebackhide__ = True  # pytest: show the caller
        n = len(patterns)
        plist = list(patterns) + ([PANIC_RE_B] if check_panic else []) + [
            pexpect.EOF, pexpect.TIMEOUT]
        deadline = time.monotonic() + self._t(timeout)
        self._sync()
        while True:
            i = self._expect_list(plist, deadline - time.monotonic())
            if check_panic:
                self._check_panic_stream(what)
            if i < n or plist[i] in (pexpect.EOF, pexpect.TIMEOUT):
                return plist[i] if i >= n else i
            # A panic report the stream check has already raised: wait on.

    def expect(self, patterns, timeout, what, check_panic=True):
        """Wait for the first of ``patterns`` after the consumed output.

        :param patterns: compiled ``bytes`` regexes (or one of them).
        :param timeout: seconds (scaled) to wait in total.
        :param what: description used in error messages.
        :returns: ``(index, match, before)`` where ``match`` is a
            :class:`Match` (offsets into ``buf``) and ``before`` is the bytes
            between the previous position and the match.  The position moves
            past the match.
        :raises KernelTimeout, KernelExited, KernelPanic:
        """
        __tracebackhide__ = True  # pytest: show the caller
        if not isinstance(patterns, (list, tuple)):
            patterns = [patterns]
        start = self.pos
        i = self._wait(patterns, timeout, what, check_panic)
        if i is pexpect.TIMEOUT:
            raise KernelTimeout(self._describe(
                "timed out after %.0f s waiting for %s"
                % (self._t(timeout), what)))
        if i is pexpect.EOF:
            raise self._exited_error(what)
        # pexpect's buffer now holds what follows the match: buf[end:].
        end = len(self.buf) - len(self._child.buffer)
        m = Match(self._child.match, end - self._child.match.end())
        self.pos = end
        return i, m, bytes(self.buf[start:m.start()])

    def wait_prompt(self, timeout=120):
        """Wait for the next ``kconsole> ``; return the text before it."""
        __tracebackhide__ = True  # pytest: show the caller
        _, _, before = self.expect(PROMPT_RE, timeout,
                                   "the prompt %r" % PROMPT)
        return normalize(before)

    def wait_for(self, regex, timeout=60, what=None):
        """Wait for ``regex`` (str or bytes) in the output; return it."""
        __tracebackhide__ = True  # pytest: show the caller
        if isinstance(regex, str):
            regex = re.compile(regex.encode())
        elif isinstance(regex, bytes):
            regex = re.compile(regex)
        _, m, _ = self.expect(regex, timeout, what or repr(regex.pattern))
        return m

    def wait_line(self, out, regex, timeout=60, what=None):
        """Wait for ``regex`` (str or bytes), a line that a background task
        prints, unless ``out`` already has it; return its match (an
        ``re.Match`` in ``out``, or a :class:`Match` as :meth:`wait_for`).

        ``out`` is the output of the command that started the task
        (``run -b``), up to its prompt.  The task runs beside the console, so
        its lines may come before or after that prompt, and :meth:`cmd` has
        consumed what came before it: :meth:`wait_for` alone searches only
        after the prompt and would wait the whole timeout for a line that
        has already gone by.
        """
        __tracebackhide__ = True  # pytest: show the caller
        if isinstance(regex, bytes):
            regex = regex.decode()
        m = re.search(regex, normalize(out), re.MULTILINE)
        if m:
            return m
        return self.wait_for(regex, timeout, what)

    # ---- console commands -------------------------------------------------

    def cmd(self, line, timeout=60):
        """Type ``line``, wait for the next prompt and return the output.

        The output is the text between the echo of the command and the next
        prompt, with line ends normalized to ``\\n``.
        """
        __tracebackhide__ = True  # pytest: show the caller
        self.send_line(line)
        _, _, before = self.expect(PROMPT_RE, timeout,
                                   "the prompt after %r" % _short(line))
        return strip_echo(before, line)

    def chtbench_table(self, timeout=60):
        """Run ``chtbench 0 0 0`` and return its parsed table (see
        parse_chtbench_table()); raises KernelError for an empty one."""
        out = self.cmd("chtbench 0 0 0", timeout)
        table = parse_chtbench_table(out)
        if not table:
            raise KernelError("'chtbench 0 0 0' listed no benchmark:\n" + out)
        return table

    def run_test(self, name, timeout=600):
        """Run ``test NAME``; return ``(passed, reason, output)``.

        ``passed`` is True only if the output has a ``Test passed`` line and
        no ``Test failed`` line; ``reason`` is None then.
        """
        __tracebackhide__ = True  # pytest: show the caller
        out = self.cmd("test " + name, timeout)
        verdicts = parse_verdicts(out)
        if not verdicts:
            reason = "no verdict line in the output of 'test %s'" % name
            return False, reason, out
        for passed, reason in verdicts:
            if not passed:
                return False, reason or "(no reason given)", out
        return True, None, out

    def run_all_tests(self, timeout=900):
        """Run ``test *``; return a :class:`TestRun`.

        Raises KernelError if the summary line ``N passed, N failed`` is
        missing.
        """
        __tracebackhide__ = True  # pytest: show the caller
        try:
            out = self.cmd("test *", timeout)
        except KernelTimeout as e:
            running = running_test(self.buf[self.pos:])
            if running is None:
                raise
            raise KernelTimeout("'test *' hung in test %s (no verdict): %s"
                                % (running, e)) from None
        summary = parse_summary(out)
        if summary is None:
            raise KernelError(self._describe(
                "'test *' printed no 'N passed, N failed' line"))
        return TestRun(summary[0], summary[1], parse_verdicts(out), out)

    def halt(self, timeout=60, expect_status=None):
        """Send ``halt`` and wait for QEMU to exit with ``expect_status``
        (default: the architecture's, 33 on amd64, 0 on arm64).

        Returns the exit status.  Raises KernelError on another status,
        KernelTimeout if QEMU keeps running, KernelPanic on a panic.
        """
        __tracebackhide__ = True  # pytest: show the caller
        if expect_status is None:
            expect_status = self.halt_status
        self.send_line("halt")
        if self._wait([], timeout, "QEMU to exit after 'halt'",
                      True) is pexpect.TIMEOUT:
            raise KernelTimeout(self._describe(
                "QEMU still runs %.0f s after 'halt'" % self._t(timeout)))
        self.pos = len(self.buf)
        status = self.wait_exit(10.0)
        if status is None and self.alive():
            raise KernelError(self._describe(
                "QEMU closed the console after 'halt' but did not exit"))
        if expect_status is not None and status != expect_status:
            raise KernelError(self._describe(
                "QEMU exited with %s after 'halt', expected status %d "
                "(isa-debug-exit)" % (self._status_text(), expect_status)))
        return status

    def check_no_panic(self):
        """Raise KernelPanic if anything printed so far is a panic report."""
        __tracebackhide__ = True  # pytest: show the caller
        m = PANIC_RE_B.search(self.buf)
        if m:
            raise KernelPanic(self._describe(
                "kernel reported %r" % decode(m.group(0)), around=m.start()))

    # ---- reporting ----------------------------------------------------------

    @property
    def log_text(self):
        """Everything printed so far, decoded and normalized."""
        return normalize(self.buf)

    def tail(self, n=40):
        """Return the last ``n`` lines of the serial log."""
        return tail_lines(self.buf, n)

    def _status_text(self):
        if self.exit_signal is not None:
            return "signal %d" % self.exit_signal
        if self.exit_status is None:
            return "unknown status"
        note = ""
        if self.exit_status == 0:
            note = " (a triple fault under -no-reboot exits 0)"
        elif self.exit_status == 1:
            note = " (QEMU error? see %s)" % self.stderr_path
        return "status %d%s" % (self.exit_status, note)

    def _exited_error(self, what):
        msg = "QEMU exited on its own with %s while waiting for %s" % (
            self._status_text(), what)
        return KernelExited(self._describe(msg), self.exit_status,
                            self.exit_signal)

    def _describe(self, message, around=None):
        """Return ``message`` with the log path and an excerpt of the log."""
        parts = [message, "log: %s" % self.log_path]
        if around is not None:
            excerpt = self.buf[max(0, around - 3000):around + 6000]
            parts.append("--- log around the report ---\n" +
                         tail_lines(excerpt, 120))
        else:
            parts.append("--- last lines of the log ---\n" + self.tail(40))
        stderr = _read_small(self.stderr_path)
        if stderr.strip():
            parts.append("--- QEMU stderr ---\n" + tail_lines(stderr, 15))
        return "\n".join(parts)


def _short(line, n=60):
    text = repr(line)
    return text if len(text) <= n else text[:n] + "..."


def _read_small(path, limit=65536):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return decode(f.read())
    except OSError:
        return ""


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def main(argv=None):
    """Boot, run the given commands, print their output, halt."""
    parser = argparse.ArgumentParser(
        description="Boot the kernel in QEMU, run kconsole commands, print "
                    "their output and halt.  Exits 1 on a panic, a timeout, "
                    "QEMU exiting on its own or a wrong exit status.",
        epilog="example: %(prog)s --smp 4 -- 'cpus' 'test *'")
    parser.add_argument("--smp", type=int, default=1)
    parser.add_argument("--mem", default="512M")
    parser.add_argument("--kernel", help="ELF for -kernel "
                        "(default build/kernel.elf)")
    parser.add_argument("--iso", nargs="?", const=DEFAULT_ISO,
                        help="boot an ISO with -cdrom (default "
                             "build/image.iso)")
    parser.add_argument("--accel", default="tcg,thread=multi")
    parser.add_argument("--qemu-arg", action="append", default=[],
                        help="extra QEMU argument (repeatable)")
    parser.add_argument("--name", help="log name (build/logs/NAME.log)")
    parser.add_argument("--boot-timeout", type=float, default=120)
    parser.add_argument("--timeout", type=float, default=600,
                        help="per-command timeout in seconds (scaled by "
                             "KTEST_TIMEOUT_SCALE)")
    parser.add_argument("--chunk-size", type=int, default=16)
    parser.add_argument("--chunk-delay", type=float, default=0.005)
    parser.add_argument("--no-halt", action="store_true",
                        help="kill QEMU at the end instead of 'halt'")
    parser.add_argument("--check-verdicts", action="store_true",
                        help="also exit 1 if a test failed")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="mirror the serial line to stderr")
    parser.add_argument("commands", nargs="*")
    args = parser.parse_args(argv)

    failed_tests = False
    try:
        with Kernel(smp=args.smp, mem=args.mem, kernel=args.kernel,
                    iso=args.iso, name=args.name or "cli-smp%d" % args.smp,
                    extra_args=args.qemu_arg, accel=args.accel,
                    chunk_size=args.chunk_size, chunk_delay=args.chunk_delay,
                    mirror=sys.stderr if args.verbose else None) as k:
            k.wait_prompt(args.boot_timeout)
            for command in args.commands:
                out = k.cmd(command, args.timeout)
                print(PROMPT + command)
                if out:
                    print(out)
                sys.stdout.flush()
                if any(not ok for ok, _ in parse_verdicts(out)):
                    failed_tests = True
                summary = parse_summary(out)
                if summary and summary[1]:
                    failed_tests = True
            k.check_no_panic()
            if not args.no_halt:
                k.halt()
    except KernelError as e:
        sys.stdout.flush()
        print("kconsole: %s" % e, file=sys.stderr)
        return 1
    if args.check_verdicts and failed_tests:
        print("kconsole: a test failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
