"""User tasks in ring 3: programs from the boot image, faults, system calls.

One QEMU boot per configuration (A-RCU at -smp 1, 2 and 4, the last two with
``-cpu max`` so that SMEP is on; a cheaper subset on Podzimek and on the
locked page hash table at -smp 2; SMEP and SMAP are on with ``-cpu max``).  The steps of a boot, in order:

* ``programs`` lists hello, fault, sysjunk, threads and busy;
* ``run hello a b`` prints its line with the arguments and ``task N (hello)
  exited with status 0``;
* every ``fault`` variant (NULL write, bad jump, #UD, #DE, #GP, kernel
  address, write to text, execute the stack) prints the one-line report
  ``task N (fault) thread T killed: CLASS, address A, pc P`` naming the task
  and the fault's generic class (FAULT_CLASSES), then ``killed (CLASS)``,
  and the next ``run hello`` still works;
* ``run sysjunk`` (every system call with junk) exits with status 0;
* ``run threads N`` (N = CPUs; wired threads, futex mutex and condition
  variable, membarrier) exits with status 0 and an exact counter;
* ``run ufault -t 1`` (a thread per CPU faulting, shrinking and regrowing
  its area) exits 0: every remapped page read zero;
* ``run chtuser -t 3`` (libcht built for the OS: a thread wired to every
  CPU inserting, removing and looking up keys in one table, exact
  accounting, use-after-free poison checks) reports ``errors=0``, exits 0
  and leaves the kernel's counters at their baseline; at -smp 2 (A-RCU) the
  negative control ``run chtnowait -t 2 -k 16`` (chtuser over a libcht
  whose RCU synchronize does not wait for readers) must report errors;
* ``run -b busy`` is listed by ``tasks`` (4 threads, running) and ``kill``
  ends it: its exit line comes, ``tasks`` is empty again;
* ``kill`` at several moments of running ``threads``, ``ufault`` and ``busy``
  tasks ends each with its line;
* many runs of ``hello`` in a row (100; 20 in the cheap subset) leave the
  heap allocations, the page-table-record slab objects, the page hash
  entries, the frames outside slabs, the tasks and the address spaces at
  their baseline (taken after one warm-up run).  Frames are freed after an
  RCU grace period, so the check repeats ``zones``/``slabs`` until the values
  are back (a liveness bound of 30 s, never a time assertion).

Every boot ends with ``halt`` and no panic.
"""

import os
import re
import time

import pytest

from tools import kconsole
from conftest import BOOT_TIMEOUT, LONG_CMD_TIMEOUT as CMD_TIMEOUT
from conftest import TASK_SETTLE_TIMEOUT as SETTLE_TIMEOUT
from conftest import flavour_kernel, flavours
import leaks
from patterns import (EXIT_RE, FAULT_CLASSES, FAULTS, KILLED_RE,
                      REPORT_RE)

#: Every OS program of the boot image: the directories of uspace/app with a
#: Makefile.inc (the top Makefile builds exactly these).
_APPS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "uspace", "app")
PROGRAMS = tuple(sorted(d for d in os.listdir(_APPS) if os.path.isfile(
    os.path.join(_APPS, d, "Makefile.inc"))))
assert {"hello", "fault", "chtuser"} <= set(PROGRAMS), PROGRAMS

#: (flavour, smp, -cpu max, hello runs of the leak check, full fault list)
CONFIGS = [
    ("a-rcu", 1, False, 100, True),
    ("a-rcu", 2, True, 100, True),
    ("a-rcu", 4, True, 100, True),
    ("podzimek-rcu", 2, False, 20, False),
    ("a-rcu+page_ht-locked", 2, False, 20, False),
]
CONFIGS = [c for c in CONFIGS if c[0] in flavours()]

@pytest.fixture(scope="class", params=CONFIGS,
                ids=lambda c: "%s-smp%d%s" % (c[0], c[1],
                                               "-cpumax" if c[2] else ""))
def task_boot(request, boot_factory):
    """A kernel with the programs as boot modules (-initrd)."""
    flavour, smp, cpumax, runs, all_faults = request.param
    boot = boot_factory(request, smp=smp, kernel=flavour_kernel(flavour),
                        extra_args=["-cpu", "max"] if cpumax else [],
                        name="%s-tasks-smp%d" % (flavour, smp))
    boot.cpumax = cpumax
    boot.runs = runs
    boot.faults = FAULTS if all_faults else ("null", "ud")
    boot.flavour = flavour
    return boot


def run_exit(k, line):
    """Run ``line``; return (task id, status, output); require the exit line."""
    __tracebackhide__ = True
    out = k.cmd(line, CMD_TIMEOUT)
    m = EXIT_RE.search(out)
    assert m, "no exit line after %r:\n%s" % (line, out)
    return int(m.group(1)), int(m.group(3)), out


def wait_line(k, out, regex):
    """Wait for the asynchronous line ``regex`` unless ``out`` (the output
    of the command before it, up to its prompt) has it already."""
    __tracebackhide__ = True
    if not re.search(regex, out):
        k.wait_for(regex, CMD_TIMEOUT)


def counters(k):
    """Return the values the leak check compares."""
    return leaks.counters(k, CMD_TIMEOUT)


def settle(k, baseline=None):
    """Repeat counters() until they equal ``baseline`` (liveness bound).

    Without a baseline: until two readings 0.5 s apart agree (deferred
    frees of the warm-up run done).
    """
    return leaks.settle(lambda: counters(k), baseline, SETTLE_TIMEOUT)


class TestTasks:
    """User tasks: run, faults, junk system calls, threads, kill, leaks."""

    def test_boot(self, task_boot):
        """The kernel reaches the prompt; SMEP and SMAP are on with -cpu max."""
        k = task_boot.k
        k.wait_prompt(BOOT_TIMEOUT)
        m = re.search(r"User space: syscall/sysretq, SMEP (\w+)[^,]*, SMAP (\w+)",
                      k.log_text)
        assert m, "no user space line in the boot log"
        if task_boot.cpumax:
            assert m.group(1) == "on" and m.group(2) == "on", \
                "SMEP or SMAP not on with -cpu max: %s" % m.group(0)

    def test_programs(self, task_boot):
        """``programs`` lists every program of the boot image."""
        out = task_boot.k.cmd("programs", CMD_TIMEOUT)
        names = re.findall(r"^  (\S+)\s+\d+$", out, re.MULTILINE)
        for p in PROGRAMS:
            assert p in names, "%s missing from 'programs':\n%s" % (p, out)
        assert re.search(r"^%d programs$" % len(names), out, re.MULTILINE)

    def test_hello(self, task_boot):
        """``run hello a b`` prints its line and exits 0."""
        tid, status, out = run_exit(task_boot.k, "run hello a b")
        assert re.search(r"^Hello from user space: task %d, %d CPUs \[a\] \[b\]$"
                         % (tid, task_boot.smp), out, re.MULTILINE), out
        assert status == 0, out

    def test_faults(self, task_boot):
        """Each fault variant kills only its task, with its report."""
        k = task_boot.k
        for variant in task_boot.faults:
            out = k.cmd("run fault %s" % variant, CMD_TIMEOUT)
            rep = REPORT_RE.search(out)
            killed = KILLED_RE.search(out)
            assert rep and killed, "fault %s: no report or kill line:\n%s" % (
                variant, out)
            assert rep.group(2) == "fault" and rep.group(1) == killed.group(1)
            assert rep.group(4) == FAULT_CLASSES[variant] == \
                killed.group(3), out
            assert "survived" not in out, out
            _, status, out = run_exit(k, "run hello")
            assert status == 0, "hello after fault %s:\n%s" % (variant, out)

    def test_sysjunk(self, task_boot):
        """Every system call with junk returns an error; the task exits 0."""
        _, status, out = run_exit(task_boot.k, "run sysjunk")
        assert status == 0, out
        assert re.search(r"sysjunk: \d+ calls with junk, 0 did not return an "
                         r"error", out), out

    def test_threads(self, task_boot):
        """Wired threads, futex mutex/condvar, membarrier: exact counter."""
        n = max(2, task_boot.smp)
        _, status, out = run_exit(task_boot.k, "run threads %d 3000" % n)
        assert status == 0, out
        assert "counter %d of %d, wrong CPU 0, errors 0" % (3000 * n, 3000 * n) \
            in out, out

    def test_ufault(self, task_boot):
        """Areas shrunk and regrown while threads fault them (one per CPU):
        every remapped page reads zero; exits 0."""
        _, status, out = run_exit(task_boot.k, "run ufault -t 1")
        m = re.search(r"ufault: threads=(\d+) pages=64 faults=(\d+) ns=\d+ "
                      r"faults_per_s=\d+ errors=(\d+)", out)
        assert m, out
        assert int(m.group(1)) == task_boot.smp and int(m.group(2)) > 0 \
            and int(m.group(3)) == 0 and status == 0, out

    def test_chtuser(self, task_boot):
        """libcht in a user task: a thread per CPU, exact accounting, no
        use-after-free, every byte freed (by the program's malloc count and
        by the kernel's counters afterwards)."""
        k = task_boot.k
        run_exit(k, "run hello")
        baseline = settle(k)
        _, status, out = run_exit(k, "run chtuser -t 3")
        m = re.search(r"^chtuser: threads=(\d+) ops=(\d+) errors=(\d+)$", out,
                      re.MULTILINE)
        assert m, out
        assert int(m.group(1)) == task_boot.smp and int(m.group(2)) > 0 \
            and int(m.group(3)) == 0 and status == 0, out
        now = settle(k, baseline)
        assert now == baseline, "after chtuser: %s, baseline %s" % (
            now, baseline)

    def test_chtuser_broken_rcu(self, task_boot):
        """Negative control: in chtnowait (chtuser linked with a libcht whose
        grace periods do not wait, CHT_RCU_FI_NO_WAIT) the poison check of
        the slow readers must report errors (at -smp 2 on A-RCU only: it
        needs two CPUs, and its outcome does not depend on the kernel's
        RCU)."""
        if task_boot.smp != 2 or task_boot.flavour != "a-rcu":
            pytest.skip("negative control runs at -smp 2, A-RCU only")
        out = task_boot.k.cmd("run chtnowait -t 2 -k 16", CMD_TIMEOUT)
        m = re.search(r"^chtuser: threads=2 ops=\d+ errors=(\d+)$", out,
                      re.MULTILINE)
        ex = EXIT_RE.search(out)
        killed = KILLED_RE.search(out)
        # Freed items may also corrupt the heap and get the task killed.
        assert killed or (m and ex and int(m.group(1)) > 0 and
                          int(ex.group(3)) == 1), out

    def test_background_and_kill(self, task_boot):
        """``run -b busy`` is listed by ``tasks``; ``kill`` ends it."""
        k = task_boot.k
        out = k.cmd("run -b busy", CMD_TIMEOUT)
        m = re.search(r"^task (\d+) \(busy\) started in the background$", out,
                      re.MULTILINE)
        assert m, out
        tid = int(m.group(1))
        wait_line(k, out, r"busy: task %d running 4 threads until killed" % tid)
        out = k.cmd("tasks", CMD_TIMEOUT)
        assert re.search(r"^\s*%d\s+busy\s+4\s+running\s" % tid, out,
                         re.MULTILINE), out
        out = k.cmd("kill %d" % tid, CMD_TIMEOUT)
        assert "task %d (busy) killed by request" % tid in out, out
        wait_line(k, out, r"task %d \(busy\) killed \(kill command\)" % tid)
        out = k.cmd("kill 999999", CMD_TIMEOUT)
        assert "kill: no task 999999" in out, out
        out = k.cmd("run nosuchprogram", CMD_TIMEOUT)
        assert "run: no program 'nosuchprogram'" in out, out

    def test_kill_while_running(self, task_boot):
        """``kill`` at several moments of busy programs (threads in the mutex
        loop, ufault faulting and unmapping, busy): each ends with its line,
        nothing is left (the leak check below compares the rest)."""
        k = task_boot.k
        for i in range(6):
            prog = ("threads 4 100000000", "ufault -t 100", "busy")[i % 3]
            out = k.cmd("run -b " + prog, CMD_TIMEOUT)
            m = re.search(r"^task (\d+) \(\w+\) started in the background$",
                          out, re.MULTILINE)
            assert m, out
            tid = int(m.group(1))
            time.sleep(0.1 * i)
            out = k.cmd("kill %d" % tid, CMD_TIMEOUT)
            assert "killed by request" in out, out
            wait_line(k, out, r"task %d \(\w+\) killed \(kill command\)" % tid)
        out = k.cmd("tasks", CMD_TIMEOUT)
        assert re.search(r"^0 tasks$", out, re.MULTILINE), out

    def test_no_leak(self, task_boot):
        """Many runs of hello leave everything at the baseline."""
        k = task_boot.k
        run_exit(k, "run hello")
        baseline = settle(k)
        assert baseline["tasks"] == 0 and baseline["address spaces"] == 0, \
            baseline
        for i in range(task_boot.runs):
            _, status, out = run_exit(k, "run hello")
            assert status == 0, "run %d:\n%s" % (i, out)
        now = settle(k, baseline)
        assert now == baseline, "after %d runs of hello: %s, baseline %s" % (
            task_boot.runs, now, baseline)

    def test_halt(self, task_boot):
        """No panic; halt powers off."""
        k = task_boot.k
        k.check_no_panic()
        k.halt()
