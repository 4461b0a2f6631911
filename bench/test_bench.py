"""Unit tests of the benchmark driver's pure parts (no QEMU).

    python3 -m pytest bench/test_bench.py
"""

import pytest

from bench import chtbench as cb
from bench import plot

OK_OUT = """\
thread 0 (cpu 0): ops=100
thread 1 (cpu 1): ops=50
resizes=7
result: bench=18 name=resize/cht-continuous rcu=a-rcu cpus=2 update=0 \
seconds=3 ops=150 ops_per_s=50"""

EXPECT = {"bench": 18, "cpus": 2, "update": 0, "seconds": 3, "rcu": "a-rcu"}


#: ``chtbench 0 0 0`` as a kernel prints it (canned: the planner's input).
TABLE_OUT = """\
chtbench <bench-id> <cpus> <update-percent> [-w] [-t SECONDS]
  id  name                      flags  measures
   1  rcu-empty                 -      empty RCU reader sections (read-side overhead alone)
   2  list-read/ideal           -      traversals of a 5-element immutable list, no synchronization
   3  list-read/rcu             -      the same traversals in an RCU reader section
   4  list-read/spinlock        -      the same under a preemption-disabling spinlock
   5  list-read/rwlock          -      the same under a spinning reader-writer lock (read side)
   6  list-upd/ideal            u1     walk or replace (update %) an element, one CPU, no synchronization
   7  list-upd/rcu              u      walk (RCU reader) or replace an element (spinlock, old one freed by rcu_call)
   8  list-upd/spinlock         u      the same mix, everything under one spinlock
  10  ht-lookup/spinlock        -      lookups in a fixed 127-bucket chained table under one spinlock (load 4, half miss)
  11  ht-lookup/bktlock         -      the same table with a spinlock per bucket
  12  ht-lookup/cht             -      the CHT with 128 buckets, resizing out of reach, same keys
  13  ht-upd/spinlock           u      lookups mixed with (update %) insert/remove pairs, global spinlock
  14  ht-upd/bktlock            u      the same, per-bucket locks
  15  ht-upd/cht                u      the same on the CHT
  16  resize/cht-fixed-8k       -      CHT lookups, 2^16 items, fixed 2^13 buckets (every lookup must hit)
  17  resize/cht-fixed-16k      -      the same with fixed 2^14 buckets
  18  resize/cht-continuous     r      the same while a resizer flips 2^13 <-> 2^14 buckets
  19  resize/rwlock-fixed-8k    -      a reader-writer-lock chained table, 2^16 items, fixed 2^13 buckets
  20  resize/rwlock-continuous  r      the same while a resizer rehashes 2^13 <-> 2^14 under the write lock
  21  page_ht-lookup             -      page_mapping_find on 1024 mapped pages of one address space (page hash table back end as built)
  22  page_ht-fault              -      page faults: touch 1024 pages (each thread its slice), unmap, repeat; ops = faults
flags: u takes the update percentage, r runs a resizer thread (on CPU <cpus> when online), 1 runs updates on one CPU only
"""
TABLE = cb.kconsole.parse_chtbench_table(TABLE_OUT)


def test_parse_table():
    assert sorted(TABLE) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15,
                             16, 17, 18, 19, 20, 21, 22]
    assert TABLE[18]["name"] == "resize/cht-continuous"
    assert TABLE[18]["resizer"] and not TABLE[18]["updates"]
    assert TABLE[6]["updates"] and TABLE[6]["single_cpu"]
    assert sorted(b for b in TABLE if TABLE[b]["updates"]) == \
        [6, 7, 8, 13, 14, 15]
    assert sorted(b for b in TABLE if TABLE[b]["resizer"]) == [18, 20]
    assert TABLE[1]["desc"].startswith("empty RCU reader sections")


def test_parse_results():
    (r,) = cb.kconsole.parse_chtbench_results(OK_OUT)
    assert r["bench"] == 18 and r["name"] == "resize/cht-continuous"
    assert r["ops_per_s"] == 50 and "page_ht" not in r
    with pytest.raises(ValueError):
        cb.kconsole.parse_chtbench_results("result: bench=1 junk")


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
                                         ("page_ht", "cht")])
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


@pytest.mark.parametrize("mod", ["bench.userspace.run", "contrib.memcached.bench"])
def test_userspace_and_memcached_sections_splice(tmp_path, mod):
    """bench/userspace/run.py and contrib/memcached/bench.py write their
    sections through results_md.splice: in place, the rest kept byte for
    byte; appended when absent; a new file gets the title."""
    import importlib
    m = importlib.import_module(mod)
    if mod.endswith("run"):
        begin, end, write = m.BEGIN, m.END, m.update_results
    else:
        begin, end = m.MD_BEGIN, m.MD_END

        def write(text, path):
            m.write_results_md(text, path)
    p = tmp_path / "RESULTS.md"
    head = "# Benchmark results\n\n" + plot.BEGIN + "\nX\n" + plot.END + "\n\n"
    tail = "\n\n<!-- other:begin -->\nY\n<!-- other:end -->\n"
    p.write_text(head + begin + "\nold\n" + end + tail)
    write("new\n", str(p))
    assert p.read_text() == head + begin + "\nnew\n" + end + tail
    p.write_text(head.rstrip("\n") + "\n\n\n")
    write("new\n", str(p))
    assert p.read_text() == head + begin + "\nnew\n" + end + "\n"
    p.unlink()
    write("new\n", str(p))
    assert p.read_text() == ("# Benchmark results\n\n" + begin + "\nnew\n" +
                             end + "\n")


def test_judge():
    assert plot.judge((2.0, 0.1, 3), 1.0) is True
    assert plot.judge((0.5, 0.1, 3), 1.0) is False
    assert plot.judge((1.05, 0.1, 3), 1.0) == plot.UNCLEAR
    assert plot.both(True, plot.UNCLEAR) == plot.UNCLEAR
    assert plot.both(True, False) is False


# --------------------------------------------------------------------------
# The cost suite (icount: instructions per operation)
# --------------------------------------------------------------------------

#: The baseline measurements, before the CHT's optimisation work, as
#: (config, bench, update, instructions per operation).
ISSUE_COSTS = [("a-rcu", 12, 0, 126.0), ("a-rcu", 11, 0, 95.3),
               ("a-rcu", 15, 20, 318.9), ("a-rcu", 14, 20, 164.6),
               ("a-rcu", 21, 0, 159.3), ("locked", 21, 0, 136.0),
               ("a-rcu", 22, 0, 4431.0), ("locked", 22, 0, 4008.0),
               ("a-rcu", 3, 0, 37.0), ("a-rcu", 2, 0, 30.0)]


def cost_pts(costs):
    return [{"config": c, "bench": b, "update": u, "instructions_per_op": i}
            for c, b, u, i in costs]


def test_instructions_per_op():
    assert cb.instructions_per_op(33330268) == pytest.approx(30.0027, 1e-5)
    assert cb.instructions_per_op("1000000000") == 1.0
    assert cb.instructions_per_op(0) is None


def test_cost_plan():
    boots = cb.plan_cost(table=TABLE)
    assert [(b.suite, b.config) for b in boots] == [
        ("cost", "a-rcu"), ("cost", "podzimek-rcu"), ("cost", "locked"),
        ("cost-check", "a-rcu")]
    for b in boots:
        assert b.smp == 1 and b.accel == "tcg"     # icount: no thread=multi
        assert b.qemu_args == ["-icount", "shift=0,sleep=off"]
        assert all(cpus == 1 for _, cpus, _ in b.points(0))
    a = boots[0].points(0)
    assert sorted({p[0] for p in a}) == sorted(TABLE)
    for bench in TABLE:
        pcts = sorted(u for b, _, u in a if b == bench)
        assert pcts == ([0, 20, 100] if TABLE[bench]["updates"] else [0])
    assert len(a) == 33
    assert {p[0] for p in boots[2].points(0)} == {21, 22}
    # Every point the check boot repeats is one the A-RCU boot ran.
    assert set(boots[3].points(0)) <= set(a)
    # Every goal's points are run.
    run = {(b.config, p[0], p[2]) for b in boots[:3] for p in b.points(0)}
    for g in cb.COST_GOALS:
        assert g["ours"] in run and g["ref"] in run


def test_cost_points_from_output():
    out = ("thread 0 (cpu 0): ops=15958644\nresult: bench=12 "
           "name=ht-lookup/cht rcu=a-rcu cpus=1 update=0 seconds=2 "
           "ops=15958644 ops_per_s=7939639")
    s = cb.parse_result(out, "chtbench 12 1 0 -w -t 2",
                        {"bench": 12, "cpus": 1, "update": 0, "seconds": 2,
                         "rcu": "a-rcu"})
    results = {("cost", "a-rcu", 1, 12, 1, 0): {"name": s["name"],
                                                "samples": [s]}}
    (p,) = cb.cost_points(results, TABLE)
    assert p["config"] == "a-rcu" and p["bench"] == 12 and p["update"] == 0
    assert p["instructions_per_op"] == pytest.approx(125.95, abs=0.01)
    assert p["resizer_shares_cpu"] is False
    assert cb.cost_lookup([p], "a-rcu", 12) == p["instructions_per_op"]
    assert cb.cost_lookup([p], "locked", 12) is None


def test_cost_goals_reproduce_the_issue():
    rows = cb.cost_goal_rows(cost_pts(ISSUE_COSTS))
    assert [round(r["ratio"], 2) for r in rows] == [0.76, 0.52, 0.85, 0.9,
                                                    0.81]
    assert all(r["met"] is False for r in rows)
    assert rows[0]["ours_ipo"] == 126.0 and rows[0]["ref_ipo"] == 95.3


def test_cost_goal_met_and_missing():
    better = cost_pts([("a-rcu", 12, 0, 70.0), ("a-rcu", 11, 0, 95.3),
                       ("a-rcu", 3, 0, 35.0), ("a-rcu", 2, 0, 30.0)])
    rows = {r["what"]: r for r in cb.cost_goal_rows(better)}
    assert rows["ht-lookup: cht (12) vs bktlock (11)"]["met"] is True
    assert rows["list-read: A-RCU (3) vs ideal (2)"]["met"] is True  # 0.857
    missing = rows["page_ht-fault (22): CHT vs locked build"]
    assert missing["ratio"] is None and missing["met"] is None
    # Exactly at the threshold counts as met.
    at = cost_pts([("a-rcu", 15, 20, 100.0), ("a-rcu", 14, 20, 100.0)])
    assert cb.cost_goal_rows(at)[1]["met"] is True


def test_agreement_digits_and_determinism():
    # The issue's two boots of id 2.
    assert cb.agreement_digits(33330268, 33330308) == pytest.approx(5.92,
                                                                    abs=0.01)
    assert cb.agreement_digits(5, 5) is None
    assert cb.agreement_digits(0, 5) is None
    points = [{"config": "a-rcu", "bench": 2, "update": 0,
               "ops_per_s": 33330268}]
    check = {("cost-check", "a-rcu", 1, 2, 1, 0): {
        "name": "list-read/ideal", "samples": [{"ops_per_s": 33330308}]}}
    (d,) = cb.cost_determinism(points, check)
    assert d["ops_per_s"] == [33330268, 33330308]
    assert d["rel_diff"] == pytest.approx(1.2e-6, rel=0.01)


def cost_doc(tmp_path):
    pts = []
    for c, b, u, i in ISSUE_COSTS:
        pts.append({"config": c, "rcu": cb.CONFIGS[c]["rcu"],
                    "page_ht": cb.CONFIGS[c]["page_ht"], "smp": 1, "bench": b,
                    "name": "n%d" % b, "cpus": 1, "update": u, "seconds": 2,
                    "ops": 2, "ops_per_s": round(1e9 / i),
                    "instructions_per_op": i, "resizer_shares_cpu": False,
                    "wall_s": 1.0})
    meta = {"seconds": 2, "smp_list": [1], "accel": "tcg",
            "qemu_args": ["-icount", "shift=0,sleep=off"],
            "configs": {c: cb.CONFIGS[c] for c in cb.COST_CONFIGS},
            "host": {"git_rev": "abc123", "git_dirty_kernel": False,
                     "date_utc": "today", "qemu_version": "QEMU 7.2"}}
    det = [{"config": "a-rcu", "bench": 2, "update": 0, "name": "n2",
            "ops_per_s": [33330268, 33330308], "rel_diff": 1.2e-6,
            "digits": 5.9}]
    return cb.write_cost_outputs(pts, det, meta, str(tmp_path))


def test_cost_outputs_and_text(tmp_path):
    doc = cost_doc(tmp_path)
    csv = (tmp_path / "cost.csv").read_text().splitlines()
    assert csv[0].split(",")[11] == "instructions_per_op"
    assert len(csv) == 1 + len(ISSUE_COSTS)
    assert "126.000" in csv[1]
    text = cb.format_cost_text(doc)
    assert "MISSED" in text and "0.76" in text and "5.9 digits" in text


def test_cost_md_and_splice(tmp_path):
    cost_doc(tmp_path)
    out = tmp_path / "RESULTS.md"
    other = ("# Benchmark results\n\n" + plot.BEGIN + "\nCHT\n" + plot.END +
             "\n\n" + plot.US_BEGIN + "\nTHEIRS\n" + plot.US_END + "\n")
    out.write_text(other)
    assert plot.main(["--cost-only", "--results", str(tmp_path),
                      "--out", str(out)]) == 0
    text = out.read_text()
    # Inserted before the chtbench section; the others kept as they were.
    assert text.index(plot.COST_BEGIN) < text.index(plot.BEGIN)
    assert text.replace(text[text.index(plot.COST_BEGIN):
                             text.index(plot.COST_END) + len(plot.COST_END)]
                        + "\n\n", "") == other
    assert "Cost per operation (instructions, icount)" in text
    assert ("| ht-lookup: cht (12) vs bktlock (11) | cht <= 0.77 x bktlock "
            "(ratio >= 1.3) | 126.0 vs 95.3 (0.76) | 126.0 vs 95.3 | 0.76 | "
            "**missed** |") in text
    assert "commit `abc123`" in text
    # Regenerating replaces the section in place.
    again = plot.splice_cost(text, "NEW\n")
    assert again.count(plot.COST_BEGIN) == 1 and "NEW" in again
    assert "126.0 vs 95.3 | 0.76" not in again and "THEIRS" in again
    # The chtbench splice keeps the cost section.
    assert "NEW" in plot.splice(again, "CHT2\n")
    assert plot.splice_cost(None, "X\n").startswith("# Benchmark results")


#: The first arm64 measurements, by hand (before bench-cost ran on arm64):
#: ids 11, 12, 21 and 22 on the arm64 release builds.
ARM64_COSTS = [("a-rcu", 11, 0, 88.26), ("a-rcu", 12, 0, 69.54),
               ("a-rcu", 21, 0, 89.84), ("locked", 21, 0, 138.03),
               ("a-rcu", 22, 0, 2996.0), ("locked", 22, 0, 3030.0)]


@pytest.fixture
def arm64_arch():
    """chtbench's configurations switched to arm64 for one test."""
    cb.select_arch("arm64")
    yield
    cb.select_arch("amd64")


def test_arm64_configs(arm64_arch):
    """--arch arm64: the same three release builds with ARCH=arm64, in
    build/bench-arm64-*; the amd64 ones unchanged."""
    assert cb.ARCH == "arm64"
    assert sorted(cb.CONFIGS) == sorted(cb.ARCH_CONFIGS["amd64"])
    for name, c in cb.CONFIGS.items():
        amd = cb.ARCH_CONFIGS["amd64"][name]
        assert c["make"] == ["ARCH=arm64"] + amd["make"]
        assert c["build"] == amd["build"].replace("build/bench-",
                                                  "build/bench-arm64-")
        assert "ARCH=arm64" not in amd["make"]
        assert (c["rcu"], c["page_ht"]) == (amd["rcu"], amd["page_ht"])
    assert cb.CONFIGS["locked"]["make"].count("PAGE_HT=locked") == 1
    assert cb.cost_basename() == "cost-arm64"
    assert cb.cost_basename("amd64") == "cost"
    # The plan is the same on both architectures.
    boots = cb.plan_cost(table=TABLE)
    assert [(b.suite, b.config, b.accel, b.qemu_args) for b in boots] == [
        (s, c, "tcg", ["-icount", "shift=0,sleep=off"]) for s, c in
        [("cost", "a-rcu"), ("cost", "podzimek-rcu"), ("cost", "locked"),
         ("cost-check", "a-rcu")]]


def test_arm64_only_cost_suite():
    with pytest.raises(SystemExit):
        cb.main(["--arch", "arm64", "--suite", "seed", "--dry-run"])
    assert cb.ARCH == "amd64"


def test_arm64_cost_points_from_output(arm64_arch):
    """An arm64 kernel's result line (same format) gives the same point."""
    out = ("thread 0 (cpu 0): ops=28760419\nresult: bench=12 "
           "name=ht-lookup/cht rcu=a-rcu cpus=1 update=0 seconds=2 "
           "ops=28760419 ops_per_s=14380209")
    s = cb.parse_result(out, "chtbench 12 1 0 -w -t 2",
                        {"bench": 12, "cpus": 1, "update": 0, "seconds": 2,
                         "rcu": "a-rcu"})
    results = {("cost", "locked", 1, 12, 1, 0): {"name": s["name"],
                                                 "samples": [s]}}
    (p,) = cb.cost_points(results, TABLE)
    assert p["config"] == "locked" and p["page_ht"] == "locked"
    assert p["instructions_per_op"] == pytest.approx(69.54, abs=0.01)


def arm64_cost_doc(tmp_path):
    """Write cost-arm64.{json,csv} of ARM64_COSTS into tmp_path."""
    pts = []
    for c, b, u, i in ARM64_COSTS:
        pts.append({"config": c, "rcu": cb.ARCH_CONFIGS["arm64"][c]["rcu"],
                    "page_ht": cb.ARCH_CONFIGS["arm64"][c]["page_ht"],
                    "smp": 1, "bench": b, "name": "n%d" % b, "cpus": 1,
                    "update": u, "seconds": 2, "ops": 2,
                    "ops_per_s": round(1e9 / i), "instructions_per_op": i,
                    "resizer_shares_cpu": False, "wall_s": 1.0})
    meta = {"seconds": 2, "smp_list": [1], "accel": "tcg",
            "qemu_args": ["-icount", "shift=0,sleep=off"],
            "configs": {c: cb.ARCH_CONFIGS["arm64"][c]
                        for c in cb.COST_CONFIGS},
            "host": {"git_rev": "def456", "git_dirty_kernel": False,
                     "date_utc": "today", "qemu_version": "QEMU 7.2"}}
    return cb.write_cost_outputs(pts, [], meta, str(tmp_path), arch="arm64")


def test_arm64_cost_outputs(tmp_path):
    doc = arm64_cost_doc(tmp_path)
    assert doc["arch"] == "arm64"
    assert not (tmp_path / "cost.json").exists()
    csv = (tmp_path / "cost-arm64.csv").read_text().splitlines()
    assert len(csv) == 1 + len(ARM64_COSTS) and "69.540" in csv[2]
    rows = {r["what"]: r for r in cb.cost_goal_rows(doc["points"])}
    assert round(rows["ht-lookup: cht (12) vs bktlock (11)"]["ratio"],
                 2) == 1.27
    assert round(rows["page_ht-lookup (21): CHT vs locked build"]["ratio"],
                 2) == 1.54
    assert round(rows["page_ht-fault (22): CHT vs locked build"]["ratio"],
                 2) == 1.01


def test_arm64_cost_md_beside_amd64(tmp_path):
    """plot.py --cost-only writes the arm64 section after the amd64 one,
    with both architectures' ratios side by side; each regenerates in
    place; the arm64 section alone works too."""
    out = tmp_path / "RESULTS.md"
    other = ("# Benchmark results\n\n" + plot.BEGIN + "\nCHT\n" + plot.END +
             "\n")
    out.write_text(other)
    arm64_cost_doc(tmp_path)
    assert plot.main(["--cost-only", "--results", str(tmp_path),
                      "--out", str(out)]) == 0
    alone = out.read_text()
    assert plot.COST_BEGIN not in alone
    assert alone.index(plot.COST_ARM64_BEGIN) < alone.index(plot.BEGIN)
    assert ("| page_ht-lookup (21): CHT vs locked build | CHT ratio >= 1.2 | "
            "n/a | n/a | 89.8 vs 138.0 | 1.54 | met |") in alone
    cost_doc(tmp_path)
    assert plot.main(["--cost-only", "--results", str(tmp_path),
                      "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count(plot.COST_BEGIN) == 1
    assert text.count(plot.COST_ARM64_BEGIN) == 1
    assert text.index(plot.COST_END) < text.index(plot.COST_ARM64_BEGIN) \
        < text.index(plot.COST_ARM64_END) < text.index(plot.BEGIN)
    arm = text[text.index(plot.COST_ARM64_BEGIN):
               text.index(plot.COST_ARM64_END)]
    assert "## Cost per operation on arm64 (instructions, icount)" in arm
    assert "`bench/results/cost-arm64.json`" in arm
    assert "make bench-cost ARCH=arm64" in arm
    assert "commit `def456`" in arm and "qemu-system-aarch64" in arm
    # Side by side: amd64 (the issue's numbers) and arm64.
    assert ("| ht-lookup: cht (12) vs bktlock (11) | cht <= 0.77 x bktlock "
            "(ratio >= 1.3) | 126.0 vs 95.3 | 0.76 | 69.5 vs 88.3 | 1.27 | "
            "**missed** |") in arm
    assert ("| page_ht-fault (22): CHT vs locked build | CHT ratio >= 1.0 | "
            "4431 vs 4008 | 0.90 | 2996 vs 3030 | 1.01 | met |") in arm
    assert "| ht-upd at 20 %: cht (15) vs bktlock (14) |" in arm
    assert "(commit `abc123`)" in arm
    # The amd64 section is the one it always was.
    assert "### One-CPU goals of issue 16" in text[:text.index(plot.COST_END)]
    # Regenerating leaves one of each.
    assert plot.main(["--cost-only", "--results", str(tmp_path),
                      "--out", str(out)]) == 0
    assert out.read_text() == text


def test_goals_plan_runs_every_goal_point():
    """Every point a timed goal (or reference) divides is measured, at -smp 2,
    and a scaling ratio's two sides share one boot."""
    boots = cb.plan_goals()
    have = {(b.config, pt) for b in boots for pt in b.points(0)}
    assert {b.smp for b in boots} == {cb.GOALS_SMP}
    for g in cb.TIMED_GOALS + cb.TIMED_REFS:
        for side in ("num", "den"):
            config, bench, cpus, update = g[side]
            assert (config, (bench, cpus, update)) in have, g["what"]
    # Rotation alternates which side runs first, keeping every point.
    for b in boots:
        assert sorted(b.points(0)) == sorted(b.points(1))


def test_goal_ratios_pair_repetitions():
    """A ratio divides the two points of the same repetition; a goal is met on
    the median of those ratios."""
    def res(config, bench, cpus, update, rates):
        return {("goals", config, cb.GOALS_SMP, bench, cpus, update): {
            "samples": [{"rep": i + 1, "ops_per_s": r}
                        for i, r in enumerate(rates)]}}
    results = {}
    results.update(res("a-rcu", cb.B_HT_CHT, 1, 0, [100, 200, 100]))
    results.update(res("a-rcu", cb.B_HT_CHT, 2, 0, [190, 380, 150]))
    g = cb.TIMED_GOALS[0]
    assert cb.goal_ratios(results, g) == [1.9, 1.9, 1.5]
    rows = {r["what"]: r for r in cb.goal_rows(results)}
    assert rows[g["what"]]["median"] == 1.9 and rows[g["what"]]["met"]
    results.update(res("a-rcu", cb.B_HT_CHT, 2, 0, [150, 380, 150]))
    rows = {r["what"]: r for r in cb.goal_rows(results)}
    assert rows[g["what"]]["median"] == 1.5 and not rows[g["what"]]["met"]
    # Goals without data are not met.
    assert not rows[cb.TIMED_GOALS[1]["what"]]["met"]
