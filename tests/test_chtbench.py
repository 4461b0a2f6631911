"""The ``chtbench`` command: every benchmark runs and reports honestly.

Timings are not checked (debug build, TCG, shared host): these steps check
that each benchmark id runs with ``-w -t 1``, prints one line per thread on
the CPU it was wired to and exactly one well-formed ``result:`` line, that the
resize experiments really resize and never miss an item, that the debug-build
warning is printed, and that the tables a benchmark creates are gone
afterwards.  Wrong arguments must print the usage and run nothing.

The real measurements are ``make bench`` (release builds, bench/).

Groups (one QEMU each):

* ``TestChtbenchARcu``: -smp 4, every id of the table.
* ``TestChtbenchPodzimek``: -smp 4, the RCU rows (1, 3, 7, 12, 15, 18).
* ``TestChtbenchLockedPageHT``: -smp 2, the page hash table rows.
"""

import re

import pytest

from conftest import flavour_kernel, flavours
from test_kernel import check_workq_idle
from test_rcu import check_rcu_stats

BOOT_TIMEOUT = 180
CMD_TIMEOUT = 60
#: A 1 s benchmark plus its set-up (the resize rows insert 2^16 items) and
#: teardown in a debug build under TCG.
BENCH_TIMEOUT = 240

#: Every id of the table (CHTBENCH.md): name, and the cpus/update to run with.
ALL_IDS = {
    1: "rcu-empty", 2: "list-read/ideal", 3: "list-read/rcu",
    4: "list-read/spinlock", 5: "list-read/rwlock", 6: "list-upd/ideal",
    7: "list-upd/rcu", 8: "list-upd/spinlock", 10: "ht-lookup/spinlock",
    11: "ht-lookup/bktlock", 12: "ht-lookup/cht", 13: "ht-upd/spinlock",
    14: "ht-upd/bktlock", 15: "ht-upd/cht", 16: "resize/cht-fixed-8k",
    17: "resize/cht-fixed-16k", 18: "resize/cht-continuous",
    19: "resize/rwlock-fixed-8k", 20: "resize/rwlock-continuous",
    21: "pageht-lookup", 22: "pageht-fault",
}
SINGLE_CPU = {6}
UPDATE_IDS = {6, 7, 8, 13, 14, 15}
RESIZER_IDS = {18, 20}

RESULT_RE = re.compile(
    r"^result: bench=(?P<bench>\d+) name=(?P<name>\S+) rcu=(?P<rcu>\S+) "
    r"cpus=(?P<cpus>\d+) update=(?P<update>\d+) seconds=(?P<seconds>\d+) "
    r"ops=(?P<ops>\d+) ops_per_s=(?P<rate>\d+)(?: pageht=(?P<pageht>\S+))?$",
    re.MULTILINE)
THREAD_RE = re.compile(r"^thread (\d+) \(cpu (\d+)\): ops=(\d+)$", re.MULTILINE)
RESIZES_RE = re.compile(r"^resizes=(\d+)$", re.MULTILINE)

#: (flavour, smp, ids).
GROUPS = [
    ("a-rcu", 4, sorted(ALL_IDS)),
    ("podzimek-rcu", 4, [1, 3, 7, 12, 15, 18]),
    ("a-rcu+pageht-locked", 2, [21, 22]),
]


def rcu_of(flavour):
    return "podzimek-rcu" if flavour.startswith("podzimek") else "a-rcu"


def pageht_of(flavour):
    return "locked" if flavour.endswith("pageht-locked") else "cht"


def plan():
    """(flavour, smp, id, cpus, update) for every enabled group."""
    points = []
    for flavour, smp, ids in GROUPS:
        if flavour not in flavours():
            continue
        for bench in ids:
            cpus = 1 if bench in SINGLE_CPU else (
                smp - 1 if bench in RESIZER_IDS else min(2, smp))
            update = 20 if bench in UPDATE_IDS else 0
            points.append((flavour, smp, bench, cpus, update))
    return points


def check_result(out, flavour, bench, cpus, update):
    """Assert that ``out`` is one honest run of ``bench``."""
    assert "usage" not in out.lower(), "usage instead of a run:\n" + out
    assert "note: this is a debug build" in out, \
        "no debug-build warning:\n" + out
    results = list(RESULT_RE.finditer(out))
    assert len(results) == 1, "expected one result: line:\n" + out
    r = results[0]
    assert int(r["bench"]) == bench and r["name"] == ALL_IDS[bench], out
    assert r["rcu"] == rcu_of(flavour), out
    assert (int(r["cpus"]), int(r["update"]), int(r["seconds"])) == (
        cpus, update, 1), out
    threads = THREAD_RE.findall(out)
    assert [int(t[0]) for t in threads] == list(range(cpus)), \
        "one line per benchmark thread expected:\n" + out
    for index, cpu, ops in threads:
        assert index == cpu, "thread %s of a -w run ran on cpu %s:\n%s" % (
            index, cpu, out)
        assert int(ops) > 0, "thread %s did nothing:\n%s" % (index, out)
    assert int(r["ops"]) == sum(int(t[2]) for t in threads), \
        "ops is not the sum of the per-thread counts:\n" + out
    assert int(r["rate"]) > 0, out
    if bench >= 21:
        assert r["pageht"] == pageht_of(flavour), out
    else:
        assert r["pageht"] is None, out
    assert "missed an item" not in out, out
    resizes = RESIZES_RE.findall(out)
    if bench in RESIZER_IDS:
        assert "resizer wired to cpu %d" % cpus in out, out
        assert resizes and int(resizes[0]) > 0, \
            "the continuous-resize run did not resize:\n" + out
    else:
        assert not resizes, out


def pytest_generate_tests(metafunc):
    """``test_bench`` of a group's class runs the group's planned ids."""
    if "bench" in metafunc.fixturenames and metafunc.cls is not None:
        ids = [p[2] for p in plan() if p[0] == metafunc.cls.FLAVOUR]
        metafunc.parametrize("bench", ids, ids=[str(i) for i in ids])


@pytest.fixture(scope="class")
def bench_boot(request, boot_factory):
    """The class's configuration booted with its group's -smp."""
    flavour = request.cls.FLAVOUR
    if flavour not in flavours():
        pytest.skip("configuration %s not selected (KTEST_FLAVOURS)" % flavour)
    smp = {g[0]: g[1] for g in GROUPS}[flavour]
    boot = boot_factory(request, smp=smp, kernel=flavour_kernel(flavour),
                        name="chtbench-%s-smp%d" % (flavour, smp))
    boot.flavour = flavour
    boot.smp = smp
    return boot


#: Wrong arguments: each must print the usage and run nothing.
BAD_ARGS = [
    "chtbench 9 1 0",            # id 9 is not in the table
    "chtbench 23 1 0",
    "chtbench 99999999999999999999 1 0",
    "chtbench -3 1 0",
    "chtbench 2 0 0",            # cpus 0
    "chtbench 2 {over} 0",       # above the online count
    "chtbench 2 -1 0",
    "chtbench 2 1 101",          # percent above 100
    "chtbench 2 1 -5",
    "chtbench 2 1",              # missing argument
    "chtbench abc 1 0",
    "chtbench 2 1 0 -x",
    "chtbench 2 1 0 -t",
    "chtbench 2 1 0 -t 0",
    "chtbench 2 1 0 -t abc",
    "chtbench 2 1 0 -t 99999",
    "chtbench 2 1 0 -w -w -w -w",
]


class ChtbenchSteps:
    """Steps of one boot, in order; a subclass names the configuration."""

    FLAVOUR = None

    def test_boot(self, bench_boot):
        bench_boot.k.wait_prompt(BOOT_TIMEOUT)

    def test_list(self, bench_boot):
        """``chtbench`` and ``chtbench 0 0 0`` list the whole table."""
        k = bench_boot.k
        for line in ("chtbench", "chtbench 0 0 0"):
            out = k.cmd(line, CMD_TIMEOUT)
            for bench, name in ALL_IDS.items():
                assert re.search(r"^\s*%d\s+%s\s" % (bench, re.escape(name)),
                                 out, re.MULTILINE), \
                    "%r does not list %d %s:\n%s" % (line, bench, name, out)
            assert "result:" not in out

    @pytest.mark.parametrize("line", BAD_ARGS)
    def test_bad_args(self, bench_boot, line):
        line = line.format(over=bench_boot.smp + 1)
        out = bench_boot.k.cmd(line, CMD_TIMEOUT)
        if line.endswith("-w -w -w -w"):
            # More words than the command takes: the console's usage.
            assert "usage" in out.lower() or "too many" in out.lower(), out
        else:
            assert "usage" in out.lower(), "%r: no usage:\n%s" % (line, out)
        assert "result:" not in out, "%r ran:\n%s" % (line, out)

    def test_bench(self, bench_boot, bench):
        """One planned id: ``-w -t 1``, then check the output."""
        _, _, _, cpus, update = [p for p in plan() if p[0] == bench_boot.flavour
                                 and p[2] == bench][0]
        line = "chtbench %d %d %d -w -t 1" % (bench, cpus, update)
        out = bench_boot.k.cmd(line, BENCH_TIMEOUT)
        check_result(out, bench_boot.flavour, bench, cpus, update)

    def test_tables_gone(self, bench_boot):
        """Only the page hash table is left; it is empty; nothing pending."""
        k = bench_boot.k
        out = k.cmd("chtstat", CMD_TIMEOUT)
        rows = [ln.split()[0] for ln in out.splitlines()[1:] if ln.strip()]
        expected = [] if bench_boot.flavour.endswith("locked") else ["page_ht"]
        assert rows == expected, "tables left behind:\n" + out
        out = k.cmd("pageht", CMD_TIMEOUT)
        assert re.search(r"^entries: 0$", out, re.MULTILINE), out
        # Resizes and frees posted at the end may still be in flight.
        check_workq_idle(k)
        check_rcu_stats(k, rcu_of(bench_boot.flavour))

    def test_no_panic(self, bench_boot):
        bench_boot.k.check_no_panic()

    def test_halt(self, bench_boot):
        bench_boot.k.halt(CMD_TIMEOUT)


class TestChtbenchARcu(ChtbenchSteps):
    FLAVOUR = "a-rcu"


class TestChtbenchPodzimek(ChtbenchSteps):
    FLAVOUR = "podzimek-rcu"


class TestChtbenchLockedPageHT(ChtbenchSteps):
    FLAVOUR = "a-rcu+pageht-locked"


# --------------------------------------------------------------------------
# The checker itself, on canned console text (no QEMU)
# --------------------------------------------------------------------------

GOOD_18 = """chtbench: note: this is a debug build (asserts on, -O1); benchmarks
resizer wired to cpu 3
thread 0 (cpu 0): ops=100
thread 1 (cpu 1): ops=50
thread 2 (cpu 2): ops=25
resizes=7
result: bench=18 name=resize/cht-continuous rcu=a-rcu cpus=3 update=0 \
seconds=1 ops=175 ops_per_s=170
"""


class TestChecker:
    def test_good(self):
        check_result(GOOD_18, "a-rcu", 18, 3, 0)

    @pytest.mark.parametrize("old,new", [
        ("ops=175 ", "ops=176 "),                 # not the sum
        ("resizes=7", "resizes=0"),               # no resize happened
        ("thread 1 (cpu 1)", "thread 1 (cpu 2)"),  # -w not honoured
        ("thread 2 (cpu 2): ops=25\n", ""),        # a thread line missing
        ("rcu=a-rcu", "rcu=podzimek-rcu"),
        ("resizer wired to cpu 3\n", ""),
        ("chtbench: note: this is a debug build", ""),
        ("resizes=7\n", "resizes=7\nchtbench: 3 lookups missed an item "
         "that was present\n"),
    ])
    def test_bad(self, old, new):
        assert old in GOOD_18
        with pytest.raises(AssertionError):
            check_result(GOOD_18.replace(old, new), "a-rcu", 18, 3, 0)
