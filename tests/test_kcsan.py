"""KCSAN, the kernel data-race detector (``make SANITIZE=kcsan``,
docs/SANITIZERS_KCSAN.md), on amd64 (build/kcsan) and arm64
(build/arm64-kcsan), both built by ``make kcsan``.

One boot per architecture at -smp 4 runs, in this order:

* a short clean subset: kernel tests that exercise RCU (rcu1) and the page
  hash table, a CHT under RCU (mapping1), and user programs (hello, threads,
  chtuser, ufault's page faults, a faulting program killed); no KCSAN report
  may appear and the ``kcsan`` statistics must count no race and no stack
  saved in the stack depot (stacks are saved for a report only);
* the negative controls: ``test kcsan2`` (two CPUs increment one counter
  with atomics: no report on it) and ``test kcsan1`` (two CPUs increment a
  plain int: the race must be reported, "BUG: KCSAN: data-race in
  kcsan1_plain_inc / kcsan1_plain_inc", both accesses on two different CPUs,
  at least one a write, each with its stack from the stack depot through
  plain_worker: the one that hit the watchpoint and the watcher's);
* the panic mode: after ``kcsan panic`` the same race ends in a panic.

make soak (``-m soak``): ``test *`` at -smp 4 on the A-RCU and Podzimek
KCSAN kernels of each architecture (build/kcsan-podzimek-locked and
build/arm64-kcsan-podzimek-locked from ``make kcsan-soak``, over the locked
page hash table: with the A-RCU ones over the CHT, both page-hash back ends),
then the user programs and a 10-minute sysfuzz: no report.
"""

import os
import re
import shutil
import subprocess

import pytest

from conftest import ARM64_CROSS, ARM64_QEMU, REPO, soak_enabled
from patterns import EXIT_RE
from tools import kconsole

ELF = {
    "amd64": os.path.join(REPO, "build", "kcsan", "kernel.elf"),
    "arm64": os.path.join(REPO, "build", "arm64-kcsan", "kernel.elf"),
}
SOAK_ELF = {
    "amd64": os.path.join(REPO, "build", "kcsan-podzimek-locked",
                          "kernel.elf"),
    "arm64": os.path.join(REPO, "build", "arm64-kcsan-podzimek-locked",
                          "kernel.elf"),
}
HAVE_ARM64 = shutil.which(ARM64_CROSS) and shutil.which(ARM64_QEMU)
ARCHES = ["amd64", pytest.param("arm64", marks=pytest.mark.skipif(
    not HAVE_ARM64, reason="arm64 needs %s and %s" % (ARM64_CROSS,
                                                     ARM64_QEMU)))]
BOOT_TIMEOUT = 300
CMD_TIMEOUT = 600
ALL_TESTS_TIMEOUT = 7200  # `test *` under KCSAN: over an hour on a loaded host

#: The clean subset: RCU, and the page hash table (a CHT) under RCU.
#: (Under KCSAN on a loaded 2-core host: rcu1 27 s, mapping1 38 s; cht 60 s
#: and pagefault1 464 s are left to the soak's `test *`.)
SUBSET_TESTS = ("rcu1", "mapping1")
#: User programs of the clean subset (each must exit 0): threads, the CHT in
#: user space, demand paging faults.
SUBSET_PROGRAMS = ("run hello", "run threads 4 2000", "run chtuser -t 2",
                   "run ufault -t 1")

SEP = "=" * 66
TITLE_RE = re.compile(r"^BUG: KCSAN: data-race in (\S+)(?: / (\S+))?$",
                      re.MULTILINE)
ACCESS_RE = re.compile(
    r"^(race at unknown origin, with )?((?:\(marked\) )?(?:read|write)) to "
    r"(0x[0-9a-f]+) of (\d+) bytes by thread (\d+) on cpu (\d+):\n"
    r"((?: \S+\n)+)", re.MULTILINE)
STATS_RE = re.compile(r"^kcsan: mode (\w+), skip (\d+), delay (\d+), "
                      r"watchpoints set (\d+), races (\d+), unknown-origin "
                      r"(\d+), printed (\d+), suppressed (\d+)$", re.MULTILINE)
DEPOT_RE = re.compile(r"^kcsan: stack depot: (\d+) stacks, (\d+) words$",
                      re.MULTILINE)


def parse_reports(text):
    """Every KCSAN report in ``text``: a list of (title functions, accesses),
    each access (kind, address, size, thread, cpu, [frames], unknown)."""
    reps = []
    for block in text.split(SEP):
        t = TITLE_RE.search(block)
        if not t:
            continue
        accs = []
        for m in ACCESS_RE.finditer(block):
            frames = [f.strip() for f in m.group(7).splitlines() if f.strip()]
            accs.append((m.group(2), int(m.group(3), 16), int(m.group(4)),
                         int(m.group(5)), int(m.group(6)), frames,
                         bool(m.group(1))))
        reps.append(([f for f in t.groups() if f], accs))
    return reps


def stats(k):
    out = k.cmd("kcsan", CMD_TIMEOUT)
    m = STATS_RE.search(out)
    assert m, "no kcsan statistics line:\n" + out
    d = DEPOT_RE.search(out)
    assert d, "no kcsan stack depot line:\n" + out
    return {"races": int(m.group(5)), "unknown": int(m.group(6)),
            "watchpoints": int(m.group(4)), "stacks": int(d.group(1))}


@pytest.fixture(scope="module", autouse=True)
def kcsan_build():
    """``make kcsan`` (``kcsan-soak`` too in the soak) unless KTEST_NO_BUILD=1
    (make test and make soak build first)."""
    if os.environ.get("KTEST_NO_BUILD") != "1":
        env = dict(os.environ)
        for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
            env.pop(var, None)
        target = "kcsan-soak" if soak_enabled() else "kcsan"
        proc = subprocess.run(["make", target], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.returncode == 0, "make %s failed:\n%s" % (
            target, proc.stdout.decode("utf-8", "replace")[-3000:])


def kernel_for(request, arch, elf, name):
    if not os.path.exists(elf):
        pytest.fail("%s is missing: make kcsan" % elf)
    k = kconsole.Kernel(smp=4, kernel=elf, arch=arch, name=name)
    request.addfinalizer(k.close)
    k.start()
    out = k.wait_prompt(BOOT_TIMEOUT)
    assert "KCSAN: enabled" in k.buf.decode("utf-8", "replace"), out
    return k


@pytest.fixture(scope="class", params=ARCHES)
def kcsan_boot(request, boot_factory):
    arch = request.param
    k = kernel_for(request, arch, ELF[arch], "kcsan-%s-smp4" % arch)
    from conftest import SharedBoot
    boot = SharedBoot(k)
    boot.arch = arch
    return boot


def no_reports(out, what):
    reps = parse_reports(out)
    assert not reps, "KCSAN reported %d race(s) during %s:\n%s" % (
        len(reps), what, out)


class TestKcsan:
    def test_clean_subset(self, kcsan_boot):
        """RCU, the CHT, the page hash table, faults and user programs under
        KCSAN: every test passes, no report, no race counted."""
        k = kcsan_boot.k
        for t in SUBSET_TESTS:
            passed, reason, out = k.run_test(t, CMD_TIMEOUT)
            no_reports(out, "test " + t)
            assert passed, "test %s: %s\n%s" % (t, reason, out)
        for line in SUBSET_PROGRAMS:
            out = k.cmd(line, CMD_TIMEOUT)
            no_reports(out, line)
            m = EXIT_RE.search(out)
            assert m and m.group(3) == "0", "%s did not exit 0:\n%s" % (
                line, out)
        out = k.cmd("run fault null", CMD_TIMEOUT)
        no_reports(out, "run fault null")
        st = stats(k)
        assert st["watchpoints"] > 1000, st
        assert st["races"] == 0 and st["unknown"] == 0, \
            "KCSAN counted races in the clean subset (repeats are not " \
            "printed: look at the boot's log): %r" % st
        # Stacks go to the depot only for a report: thousands of
        # watchpoints without a race saved none.
        assert st["stacks"] == 0, \
            "stacks saved in the depot without a race: %r" % st

    def test_atomic_control_clean(self, kcsan_boot):
        """Two CPUs incrementing one counter with atomics: no report."""
        k = kcsan_boot.k
        passed, reason, out = k.run_test("kcsan2", CMD_TIMEOUT)
        no_reports(out, "test kcsan2")
        assert passed, reason + "\n" + out

    def test_plain_control_reported(self, kcsan_boot):
        """Two CPUs incrementing a plain int: the race reported with both
        accesses and both stacks, each from the stack depot: the first
        block's taken by the CPU that hit the watchpoint at that access, the
        second the watcher's, handed over when it saw the hit (a missing one
        prints "(no stack)" and has no frame)."""
        k = kcsan_boot.k
        passed, reason, out = k.run_test("kcsan1", CMD_TIMEOUT)
        assert passed, reason + "\n" + out
        assert "(no stack)" not in out, "a report without a stack:\n" + out
        reps = [(f, a) for f, a in parse_reports(out)
                if f == ["kcsan1_plain_inc", "kcsan1_plain_inc"]]
        assert reps, "no two-access report on kcsan1_plain_inc:\n" + out
        for funcs, accs in reps:
            assert len(accs) == 2, out
            (k1, a1, s1, _, c1, f1, u1), (k2, a2, s2, _, c2, f2, u2) = accs
            assert not u1 and not u2, out
            assert a1 == a2 and s1 == s2 == 4, out
            assert c1 != c2, "both accesses on one CPU:\n" + out
            assert "write" in (k1, k2), out
            for frames in (f1, f2):
                assert frames and frames[0].startswith("kcsan1_plain_inc+"), \
                    "a stack missing or not at the access:\n" + out
                assert any(f.startswith("plain_worker+") for f in frames), out
        # Both stacks are in the depot (two distinct return addresses into
        # kcsan1_plain_inc at least: the read and the write).
        assert stats(k)["stacks"] >= 2, out

    def test_panic_mode(self, kcsan_boot):
        """``kcsan panic``: the same race panics (the boot ends here)."""
        k = kcsan_boot.k
        k.cmd("kcsan panic", CMD_TIMEOUT)
        k.send_line("test kcsan1")
        k.expect([re.compile(rb"PANIC on CPU \d+: KCSAN: data race \(kcsan "
                             rb"panic mode\)")], CMD_TIMEOUT,
                 "the KCSAN panic", check_panic=False)


@pytest.mark.soak
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("flavour", ["a-rcu", "podzimek-rcu"])
def test_all_tests_clean_soak(request, arch, flavour):
    """``test *`` at -smp 4 under KCSAN: every test passes, no report."""
    elf = ELF[arch] if flavour == "a-rcu" else SOAK_ELF[arch]
    k = kernel_for(request, arch, elf, "kcsan-%s-%s-all" % (arch, flavour))
    run = k.run_all_tests(ALL_TESTS_TIMEOUT)
    no_reports(run.output, "test *")
    assert run.failed == 0, run.output
    for line in SUBSET_PROGRAMS + ("run sysjunk", "run futexrace",
                                   "run arearace"):
        out = k.cmd(line, CMD_TIMEOUT)
        no_reports(out, line)
        m = EXIT_RE.search(out)
        assert m and m.group(3) == "0", "%s did not exit 0:\n%s" % (line, out)
    # Imported here: test_sanitizers is a test module of its own.
    from test_sanitizers import soak_sysfuzz
    soak_sysfuzz(k)
    no_reports(k.buf.decode("utf-8", "replace"), "the soak boot")
    st = stats(k)
    assert st["races"] == 0 and st["unknown"] == 0, st


def test_gensyms_keeps_arm64_text():
    """No boot: the symbol table keeps arm64 kernel text (0xffff8000...),
    which KCSAN's arm64 reports name (it held amd64's half only, so arm64
    reports and backtraces printed bare addresses). The table is the text
    between the link script's ktext_start and ktext_end marks, so the boot
    code linked at its physical address stays out."""
    from tools import gensyms
    nm = ("0000000040200000 T _start\n"
          "ffff800040201000 T ktext_start\n"
          "ffff800040238ab0 T kcsan1_plain_inc\n"
          "ffff800040300000 T ktext_end\n")
    names = [n for _, n in gensyms.read_symbols(nm.splitlines())]
    assert names == ["kcsan1_plain_inc"], names
