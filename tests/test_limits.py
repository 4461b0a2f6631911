"""Per-task limits: a task that asks for a resource until the
kernel refuses gets the limit's error code, the kernel stays up, and after
the task's exit every counter is back at its baseline.

One QEMU boot (A-RCU, -smp 2, ``-cpu max``); the steps, in order:

* ``run limits threads``: threads that exit at once and are never joined
  until SYS_THREAD_CREATE fails: it must fail with ELIMIT (the records of
  exited, unjoined threads count against TASK_THREADS_MAX), joining them all
  makes room again; counters back at the baseline after the exit;
* ``run limits areas``: one-page areas until refused: ELIMIT at
  TASK_AREAS_MAX; counters back;
* ``run limits bigareas``: 1 GiB areas until refused (ELIMIT at
  TASK_AREA_BYTES_MAX, about 1 TiB of areas), one page written in every
  64th; the task's exit (teardown of about a terabyte of areas mapping a few
  pages) must be over (the address space gone, every counter back) within
  the liveness bounds of the command and of the settle loop;
* ``run -b limits hold 16000`` (a task holding 16,000 areas): ``as`` lists
  at most AS_PRINT_AREAS areas of it and says how many it left out (the
  printout runs with interrupts off: it must not grow with the areas), and
  ``kill`` ends the task; counters back;
* ``run bigbss``: a program whose data segment's memory size is stretched
  to about 128 TiB must be refused by the loader with its message (it used
  to load, run, exit 0 and then hold the console forever in the teardown);
  the prompt must come back.

The verdicts come from what the kernel printed; the timeouts are liveness
bounds (a teardown that looks up every page of a terabyte area takes
hours under TCG), never a time measurement.  Every boot ends with ``halt``
and no panic.
"""

import re
import time

from tools import kconsole
from conftest import BOOT_TIMEOUT, KERNEL_ELF, class_boot
from conftest import LIMITS_CMD_TIMEOUT as CMD_TIMEOUT
from patterns import EXIT_RE
from test_tasks import counters, settle
import pytest

#: May share the 2 host CPUs in make test's first pytest run (conftest.py):
#: each verdict is a refusal or a counter, none needs two vCPUs to
#: interleave.
pytestmark = pytest.mark.concurrent

#: Most areas ``as`` prints per address space (AS_PRINT_AREAS, mm/as.c).
AS_PRINT_AREAS = 32


limits_boot = class_boot("kernel.elf booted with -smp 2 and -cpu max.",
                         smp=2, kernel=KERNEL_ELF, extra_args=["-cpu", "max"],
                         name="limits-smp2")


def run_timed(k, line):
    """Run ``line``; return (status, output, seconds until the prompt)."""
    __tracebackhide__ = True
    t0 = time.monotonic()
    # A timeout here (KernelTimeout, with the log's tail) is the failure
    # this file exists for: the task's load or exit never ended.
    out = k.cmd(line, CMD_TIMEOUT * kconsole.timeout_scale())
    took = time.monotonic() - t0
    m = EXIT_RE.search(out)
    return (int(m.group(3)) if m else None), out, took


class TestLimits:
    """Threads, areas, terabyte areas and oversized segments per task."""

    def test_boot(self, limits_boot):
        k = limits_boot.k
        k.wait_prompt(BOOT_TIMEOUT)
        k.cmd("run hello", CMD_TIMEOUT)
        limits_boot.baseline = settle(k)
        b = limits_boot.baseline
        assert b["tasks"] == 0 and b["address spaces"] == 0, b

    def check_baseline(self, limits_boot, what):
        __tracebackhide__ = True
        now = settle(limits_boot.k, limits_boot.baseline)
        assert now == limits_boot.baseline, "after %s: %s, baseline %s" % (
            what, now, limits_boot.baseline)

    def test_threads(self, limits_boot):
        """Unjoined exited threads are refused with ELIMIT, not a crash."""
        status, out, _ = run_timed(limits_boot.k, "run limits threads")
        m = re.search(r"^limits threads: refused after (\d+) unjoined threads: "
                      r"-?\d+ \((\w+)\)$", out, re.MULTILINE)
        assert m and m.group(2) == "ELIMIT", out
        assert re.search(r"^limits threads: joined \d+ \(0 failed\), then "
                         r"create: \d+$", out, re.MULTILINE), out
        assert status == 0, out
        self.check_baseline(limits_boot, "limits threads")

    def test_areas(self, limits_boot):
        """Areas beyond TASK_AREAS_MAX are refused with ELIMIT."""
        status, out, _ = run_timed(limits_boot.k, "run limits areas")
        m = re.search(r"^limits: refused after (\d+) areas of 4 KiB .*\((\w+)\)$",
                      out, re.MULTILINE)
        assert m and m.group(2) == "ELIMIT", out
        assert status == 0, out
        self.check_baseline(limits_boot, "limits areas")

    def test_bigareas(self, limits_boot):
        """About a terabyte of areas mapping a few pages: refused at the size
        limit, and the exit gives the prompt back."""
        status, out, took = run_timed(limits_boot.k, "run limits bigareas")
        # The exit line and the prompt may come before the address space
        # is torn down (the last reference may be the exiting thread's):
        # the teardown's end is the address space count back at the
        # baseline, within settle()'s liveness bound.
        self.check_baseline(limits_boot, "limits bigareas")
        m = re.search(r"^limits: refused after (\d+) areas of 1048576 KiB "
                      r"\((\d+) GiB\), (\d+) pages written: -?\d+ \((\w+)\)$",
                      out, re.MULTILINE)
        assert m and m.group(4) == "ELIMIT", out
        assert int(m.group(2)) >= 512 and status == 0, out
        print("limits bigareas: %s GiB of areas, %s pages, run and exit "
              "took %.1f s (host time, not a verdict)" % (
                  m.group(2), m.group(3), took))

    def test_hold_as_kill(self, limits_boot):
        """16,000 areas: a bounded ``as`` printout, then ``kill``."""
        k = limits_boot.k
        out = k.cmd("run -b limits hold 16000", CMD_TIMEOUT)
        m = re.search(r"^task (\d+) \(limits\) started in the background$",
                      out, re.MULTILINE)
        assert m, out
        tid = int(m.group(1))
        if "limits hold: 16000 areas" not in out:
            k.wait_for(r"limits hold: 16000 areas", CMD_TIMEOUT)
        out = k.cmd("as", CMD_TIMEOUT)
        lines = len(re.findall(r"^      area ", out, re.MULTILINE))
        more = re.search(r"^      \.\.\. (\d+) more areas", out, re.MULTILINE)
        assert lines <= AS_PRINT_AREAS and more, \
            "as printed %d area lines for 16000 areas (limit %d), summary %s" % (
                lines, AS_PRINT_AREAS, bool(more))
        out = k.cmd("kill %d" % tid, CMD_TIMEOUT)
        assert "killed by request" in out, out
        if not re.search(r"task %d \(limits\) killed \(kill command\)" % tid,
                         out):
            k.wait_for(r"task %d \(limits\) killed \(kill command\)" % tid,
                       CMD_TIMEOUT)
        self.check_baseline(limits_boot, "limits hold 16000 and kill")

    def test_bigbss(self, limits_boot):
        """A segment of about 128 TiB is refused by the loader."""
        status, out, _ = run_timed(limits_boot.k, "run bigbss")
        assert status is None and "ran" not in out, \
            "bigbss was loaded and ran:\n%s" % out
        assert re.search(r"segment \d+ .*exceeds the limit", out), out
        assert re.search(r"^run: cannot start bigbss: ", out, re.MULTILINE), out
        self.check_baseline(limits_boot, "bigbss")

    def test_halt(self, limits_boot):
        k = limits_boot.k
        k.check_no_panic()
        k.halt()
