"""Unit tests of the benchmark driver's pure parts (no QEMU).

    python3 -m pytest bench/test_bench.py
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import chtbench as cb  # noqa: E402
import plot  # noqa: E402

OK_OUT = """\
thread 0 (cpu 0): ops=100
thread 1 (cpu 1): ops=50
resizes=7
result: bench=18 name=resize/cht-continuous rcu=a-rcu cpus=2 update=0 \
seconds=3 ops=150 ops_per_s=50"""

EXPECT = {"bench": 18, "cpus": 2, "update": 0, "seconds": 3, "rcu": "a-rcu"}


def test_parse_ok():
    s = cb.parse_result(OK_OUT, "chtbench 18 2 0 -w -t 3", EXPECT)
    assert s["ops"] == 150 and s["ops_per_s"] == 50 and s["resizes"] == 7
    assert [t["cpu"] for t in s["threads"]] == [0, 1]


def test_parse_missed_fails():
    out = OK_OUT.replace("resizes=7", "resizes=7\nchtbench: 3 lookups missed "
                         "an item that was present")
    with pytest.raises(cb.BenchError, match="correctness"):
        cb.parse_result(out, "c", EXPECT)


def test_parse_missing_result_fails():
    with pytest.raises(cb.BenchError, match="0 result"):
        cb.parse_result(OK_OUT.rsplit("\n", 1)[0], "c", EXPECT)


def test_parse_two_results_fail():
    with pytest.raises(cb.BenchError, match="2 result"):
        cb.parse_result(OK_OUT + "\n" + OK_OUT.rsplit("\n", 1)[1], "c", EXPECT)


@pytest.mark.parametrize("field,value", [("rcu", "podzimek-rcu"),
                                         ("cpus", 4), ("seconds", 10),
                                         ("pageht", "cht")])
def test_parse_mismatch_fails(field, value):
    expect = dict(EXPECT, **{field: value})
    with pytest.raises(cb.BenchError):
        cb.parse_result(OK_OUT, "c", expect)


def test_parse_thread_sum_checked():
    with pytest.raises(cb.BenchError, match="add up"):
        cb.parse_result(OK_OUT.replace("ops=50\n", "ops=51\n", 1), "c",
                        EXPECT)


def test_parse_debug_build_refused():
    out = ("chtbench: note: this is a debug build (asserts on, -O1); "
           "benchmarks are meant for a release build (make DEBUG=0)\n" +
           OK_OUT)
    with pytest.raises(cb.BenchError, match="debug"):
        cb.parse_result(out, "c", EXPECT)


def test_seed_command_lines():
    lines = cb.seed_command_lines()
    assert len(lines) == 71
    assert lines[0] == ("a-rcu", "chtbench 2 1 0 -w")
    assert ("podzimek-rcu", "chtbench 7 4 100 -w") in lines
    assert all(c.endswith(" -w") for _, c in lines)


def test_every_seed_command_is_a_sweep_point():
    points = {(b.config, bench, cpus, upd)
              for b in cb.plan_seed([4, 2]) if b.smp == 4
              for bench, cpus, upd in b.points(0)}
    for config, command in cb.seed_command_lines():
        bench, cpus, upd = (int(w) for w in command.split()[1:4])
        assert (config, bench, cpus, upd) in points, command


def test_rotation_keeps_points():
    b = cb.plan_seed([4])[0]
    assert sorted(b.points(0)) == sorted(b.points(1)) == sorted(b.points(2))
    assert b.points(0) != b.points(1)


def test_splice_keeps_userspace_section():
    old = ("# Benchmark results\n\n" + plot.BEGIN + "\nold\n" + plot.END +
           "\n\n" + plot.US_BEGIN + "\nTHEIRS\n" + plot.US_END + "\n")
    new = plot.splice(old, "new\n")
    assert "THEIRS" in new and "old" not in new and "new" in new
    assert new.count(plot.BEGIN) == 1
    # No markers of ours yet: inserted before theirs.
    only_theirs = "# T\n\n" + plot.US_BEGIN + "\nTHEIRS\n" + plot.US_END + "\n"
    new = plot.splice(only_theirs, "mine\n")
    assert new.index("mine") < new.index("THEIRS")
    assert plot.splice(None, "x\n").count(plot.US_BEGIN) == 1


def test_judge():
    assert plot.judge((2.0, 0.1, 3), 1.0) is True
    assert plot.judge((0.5, 0.1, 3), 1.0) is False
    assert plot.judge((1.05, 0.1, 3), 1.0) == plot.UNCLEAR
    assert plot.both(True, plot.UNCLEAR) == plot.UNCLEAR
    assert plot.both(True, False) is False
