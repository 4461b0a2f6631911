"""What the kernel and the test programs print, as the tests match it.

The patterns more than one test file uses, defined once (``from patterns
import ...``; tests/ is on pytest's ``pythonpath``). Byte patterns are for
``kconsole.Kernel.expect()`` on the raw console; str patterns for decoded
output.
"""

import re

#: Any panic line, to quote a wrong reason in a failure message.
ANY_PANIC_RE = re.compile(rb"PANIC on CPU \d+:[^\n]*\n")

_VERDICT = r"Test (?:passed|failed)[^\n]*"
#: A kernel test's verdict line on the console.
VERDICT_RE = re.compile(_VERDICT.encode())
#: The same in decoded output (one line at a time or a whole transcript).
VERDICT_TEXT_RE = re.compile(_VERDICT)

#: Reasons the kernel's rcutorture oracle gives when a grace period was too
#: short (test_rcu.py, the BROKEN=rcu controls of test_controls.py).
ORACLE_FAILURE_RE = re.compile(
    r"aged past 1|freed \(poisoned\)|reused under them|go backwards")

#: The userspace library's rcutorture oracle (uspace/tests/test_rcutorture.c):
#: a grace period that ended under a reader (test_uspace.py).
USPACE_ORACLE_FAILURE_RE = re.compile(
    r"^FAIL \S*test_rcutorture\.c:\d+: (?:beyond|dead_seen) == 0: "
    r"[1-9]\d* reads saw (?:an object older than one grace period|"
    r"a freed object)$", re.MULTILINE)

#: A user task's end (proc/task.c): its exit status, a kill by `kill`, or the
#: report of the fault that killed it (task_user_fault()).
EXIT_RE = re.compile(r"^task (\d+) \((\S+)\) exited with status (-?\d+)$",
                     re.MULTILINE)
KILLED_RE = re.compile(r"^task (\d+) \((\S+)\) killed \(([^)]*)\)$",
                       re.MULTILINE)
REPORT_RE = re.compile(
    r"^task (\d+) \((\S+)\) thread (\d+) killed: ([^,]+), address (0x[0-9a-f]+|0),"
    r" pc (0x[0-9a-f]+|0)$", re.MULTILINE)

#: The variants of uspace/app/fault common to both architectures.
FAULTS = ("null", "jump", "ud", "div", "gp", "kernel", "ro", "nx")
#: The class each fault variant's report names (the kernel's generic wording,
#: task_user_fault(): the same on amd64 and arm64).
FAULT_CLASSES = {
    "null": "page fault: no area at that address",
    "jump": "page fault: no area at that address",
    "ud": "invalid instruction",
    "div": "divide error",
    "gp": "protection fault",
    "kernel": "page fault: no area at that address",
    "ro": "page fault: access not permitted by the area",
    "nx": "page fault: access not permitted by the area",
}
