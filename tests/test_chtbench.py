"""The ``chtbench`` command: every benchmark runs and reports honestly.

Timings are not checked (debug build, TCG, shared host): these steps check
that each benchmark id runs with ``-w -t 1``, prints one line per thread on
the CPU it was wired to and exactly one well-formed ``result:`` line, that the
resize experiments really resize and never miss an item, that the debug-build
warning is printed, and that the tables a benchmark creates are gone
afterwards.  Wrong arguments must print the usage and run nothing.

The real measurements are ``make bench`` (release builds, bench/).

The table of benchmarks (ids, names, which take updates or run a resizer)
is the kernel's: every group reads it from ``chtbench 0 0 0``
(``tools/kconsole.py`` parses it and the ``result:`` lines); this file only
names the ids a group runs when it runs a subset.

Groups (one QEMU each):

* ``TestChtbenchARcu``: -smp 4, every id of the kernel's table.
* ``TestChtbenchPodzimek``: -smp 4, the RCU rows (1, 3, 7, 12, 15, 18).
* ``TestChtbenchLockedPageHT``: -smp 2, the page hash table rows.
"""

import re

import pytest

from tools import kconsole
from conftest import (BENCH_TIMEOUT, BOOT_TIMEOUT, CMD_TIMEOUT, flavour_kernel,
                      flavours)
from test_kernel import check_workq_idle
from test_rcu import check_rcu_stats

THREAD_RE = re.compile(r"^thread (\d+) \(cpu (\d+)\): ops=(\d+)$", re.MULTILINE)
RESIZES_RE = re.compile(r"^resizes=(\d+)$", re.MULTILINE)

#: (flavour, smp, ids); None: every id of the kernel's table.
GROUPS = [
    ("a-rcu", 4, None),
    ("podzimek-rcu", 4, [1, 3, 7, 12, 15, 18]),
    ("a-rcu+page_ht-locked", 2, [21, 22]),
]


def rcu_of(flavour):
    return "podzimek-rcu" if flavour.startswith("podzimek") else "a-rcu"


def page_ht_of(flavour):
    return "locked" if flavour.endswith("page_ht-locked") else "cht"


def point_of(table, smp, bench):
    """(cpus, update) of ``bench`` in a group booted with ``smp`` CPUs: one CPU
    for a single-CPU baseline, smp - 1 readers beside a resizer (which gets
    the last CPU), else two; 20 % updates for the ids that take them."""
    info = table[bench]
    cpus = 1 if info["single_cpu"] else (
        smp - 1 if info["resizer"] else min(2, smp))
    return cpus, 20 if info["updates"] else 0


def check_result(out, flavour, table, bench, cpus, update):
    """Assert that ``out`` is one honest run of ``bench`` (``table``: the
    kernel's benchmark table)."""
    assert "usage" not in out.lower(), "usage instead of a run:\n" + out
    assert "note: this is a debug build" in out, \
        "no debug-build warning:\n" + out
    results = kconsole.parse_chtbench_results(out)
    assert len(results) == 1, "expected one result: line:\n" + out
    r = results[0]
    assert r["bench"] == bench and r["name"] == table[bench]["name"], out
    assert r["rcu"] == rcu_of(flavour), out
    assert (r["cpus"], r["update"], r["seconds"]) == (cpus, update, 1), out
    threads = THREAD_RE.findall(out)
    assert [int(t[0]) for t in threads] == list(range(cpus)), \
        "one line per benchmark thread expected:\n" + out
    for index, cpu, ops in threads:
        assert index == cpu, "thread %s of a -w run ran on cpu %s:\n%s" % (
            index, cpu, out)
        assert int(ops) > 0, "thread %s did nothing:\n%s" % (index, out)
    assert r["ops"] == sum(int(t[2]) for t in threads), \
        "ops is not the sum of the per-thread counts:\n" + out
    assert r["ops_per_s"] > 0, out
    if table[bench]["name"].startswith("page_ht-"):
        assert r.get("page_ht") == page_ht_of(flavour), out
    else:
        assert "page_ht" not in r, out
    assert "missed an item" not in out, out
    resizes = RESIZES_RE.findall(out)
    if table[bench]["resizer"]:
        assert "resizer wired to cpu %d" % cpus in out, out
        assert resizes and int(resizes[0]) > 0, \
            "the continuous-resize run did not resize:\n" + out
    else:
        assert not resizes, out


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
        """``chtbench``, ``chtbench 0`` and ``chtbench 0 0 0`` list the same
        table: unique ids and names, the group's ids among them."""
        k = bench_boot.k
        bench_boot.table = k.chtbench_table(CMD_TIMEOUT)
        table = bench_boot.table
        names = [t["name"] for t in table.values()]
        assert len(set(names)) == len(names), table
        for line in ("chtbench", "chtbench 0"):
            out = k.cmd(line, CMD_TIMEOUT)
            assert kconsole.parse_chtbench_table(out) == table, out
            assert "result:" not in out
        ids = {g[0]: g[2] for g in GROUPS}[bench_boot.flavour]
        assert set(ids or table) <= set(table), \
            "the group names ids the kernel does not have: %s" % table

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

    def test_benches(self, bench_boot):
        """Every id of the group (of the kernel's table for None), each
        ``-w -t 1``, each output checked; all failures are reported."""
        table = getattr(bench_boot, "table", None)
        if table is None:
            pytest.skip("no table (test_list did not run)")
        ids = {g[0]: g[2] for g in GROUPS}[bench_boot.flavour] or sorted(table)
        failures = []
        for bench in ids:
            cpus, update = point_of(table, bench_boot.smp, bench)
            line = "chtbench %d %d %d -w -t 1" % (bench, cpus, update)
            out = bench_boot.k.cmd(line, BENCH_TIMEOUT)
            try:
                check_result(out, bench_boot.flavour, table, bench, cpus,
                             update)
            except AssertionError as e:
                failures.append("%s: %s" % (line, e))
        assert not failures, "\n\n".join(failures)

    def test_tables_gone(self, bench_boot):
        """Only the page hash table is left; it is empty; nothing pending."""
        k = bench_boot.k
        out = k.cmd("chtstat", CMD_TIMEOUT)
        rows = [ln.split()[0] for ln in out.splitlines()[1:] if ln.strip()]
        expected = [] if bench_boot.flavour.endswith("locked") else ["page_ht"]
        assert rows == expected, "tables left behind:\n" + out
        out = k.cmd("page_ht", CMD_TIMEOUT)
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
    FLAVOUR = "a-rcu+page_ht-locked"


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


#: Two rows of a table as ``chtbench 0 0 0`` prints it.
TABLE = kconsole.parse_chtbench_table("""\
  12  ht-lookup/cht             -      the CHT with 128 buckets
  18  resize/cht-continuous     r      the same while a resizer flips
""")


class TestChecker:
    def test_good(self):
        check_result(GOOD_18, "a-rcu", TABLE, 18, 3, 0)

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
            check_result(GOOD_18.replace(old, new), "a-rcu", TABLE, 18, 3, 0)
