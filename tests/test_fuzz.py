"""Console input that is never lost, and a seeded fuzz of the kernel console.

One boot of build/kernel.elf at -smp 2 (class ``TestConsoleFuzz``; its methods
are its steps, in order):

* ``test_flood``: while a command keeps the console busy, several lines of
  2,000-6,000 characters are sent back to back without waiting, each followed
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
* ``test_after``: ``test atomic1`` passes and ``chtstat``, ``pageht`` and
  ``workq`` are back at the reading taken before the fuzz.

Environment: ``KTEST_FUZZ_SEED`` (default 15), ``KTEST_FUZZ_LINES`` (default
2000).  A failure prints the seed and the line, so it reproduces.
"""

import os
import random
import re
import time

import pytest

import kconsole
from conftest import KERNEL_ELF

BOOT_TIMEOUT = 180
CMD_TIMEOUT = 60
MARK_TIMEOUT = 60        # a marker after a line (benchmarks run 1 s)
HALT_TIMEOUT = 60

SEED = int(os.environ.get("KTEST_FUZZ_SEED", "15"))
LINES = int(os.environ.get("KTEST_FUZZ_LINES", "2000"))
LINE_MAX = 255           # KCONSOLE_LINE_MAX
HISTORY = 16             # kconsole.c HISTORY


@pytest.fixture(scope="class")
def fuzz_boot(request, boot_factory):
    """kernel.elf booted with -smp 2 for the flood and fuzz steps."""
    boot = boot_factory(request, smp=2, kernel=KERNEL_ELF, name="fuzz-smp2")
    boot.smp = 2
    return boot


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


class TestConsoleFuzz:
    """Console input flood and fuzz on one boot at -smp 2."""

    def test_boot(self, fuzz_boot):
        """The kernel reaches the prompt."""
        k = fuzz_boot.k
        k.wait_prompt(BOOT_TIMEOUT)
        fuzz_boot.serial = 0

    def test_flood(self, fuzz_boot):
        """Long lines sent back to back while the console is busy: every
        marker after them is answered (no input is dropped)."""
        k = fuzz_boot.k
        rng = random.Random(SEED)
        # Keeps the console from reading for 2 s while the lines arrive.
        k.send_line("chtbench 1 1 0 -t 2")
        tokens = []
        for i in range(6):
            fuzz_boot.serial += 1
            token = "flood%05d" % fuzz_boot.serial
            tokens.append(token)
            k.send_line(_random_text(rng, rng.randint(2000, 6000)))
            k.send_line(token)
        missing = []
        for token in tokens:
            start = k.pos
            try:
                k.expect(_marker_re(token), 5 if missing else MARK_TIMEOUT,
                         "the answer to the marker %r" % token)
            except kconsole.KernelTimeout:
                missing.append(token)
                k.pos = start
        k.send_line("")
        k.wait_prompt(CMD_TIMEOUT)
        assert not missing, (
            "seed %d: markers never answered after the flood: %s (input "
            "was lost); log: %s" % (SEED, ", ".join(missing), k.log_path))
