"""The arm64 kernel on QEMU's virt board, Cortex-A72.

``make arm64`` builds seven configurations (ARM64_CONFIGS, tests/configs.mk):
A-RCU (build/arm64) and Podzimek (build/arm64-podzimek) over the CHT page
hash table, A-RCU over the locked one (build/arm64-locked), the release build
(DEBUG=0, A-RCU, CHT: build/arm64-release) and the broken-RCU controls
(build/arm64-rcu-broken, build/arm64-podzimek-broken) and the
``BROKEN=shootdown+asid`` control (build/arm64-broken-shootdown: a local TLBI
where tlb_shootdown() must broadcast, and a released ASID freed for reuse
without its invalidation); ``make arm64-soak``
Podzimek over the locked page hash table (build/arm64-podzimek-locked), which
only ``make soak`` boots; ``make arm64-controls`` every other ``BROKEN=`` knob
for arm64 (not booted here). These tests boot them with ``qemu-system-aarch64 -M virt -cpu
cortex-a72`` (tools/kconsole.py's ``arch="arm64"``):

* A-RCU at -smp 4: the prompt comes with 4 CPUs online (PSCI CPU_ON),
  ``cpus`` and ``uptime`` show every CPU's timer ticking. In the same boot,
  the symbol table and the frame-pointer walk (what a panic's and lockdep's
  reports print): ``version`` counts the symbols of the image's text and
  ``backtrace`` names the console's callers, functions ``nm`` finds in the
  kernel; last, ``test fault1`` (unsafe, it halts) must end in the data
  abort report at 0x1000 in fault1_touch: before any user program ran, so
  a CPU that kept the boot identity map in TTBR0 is caught. ``halt`` powers
  off (PSCI SYSTEM_OFF: QEMU exits 0) at the end of the other boots.
* The arm64 matrix (MATRIX): ``test *`` passes at -smp 1, 2, 4 and 8 on
  both RCU flavours over both page hash back ends, and on the release build
  at -smp 2 and 4. ``make test`` runs A-RCU at -smp 2 and 4 and Podzimek at
  -smp 4 (MAKE_TEST_MATRIX); ``make soak`` (KTEST_SOAK=1, ``-m soak``) the
  other 15 (test_all_tests_soak). ``pagefault1``'s unmap inside another
  CPU's fault (``faults_unmapped``) comes from its held faults (a fault held
  between lookup and lock until the page is unmapped: certain on any host
  load); the free-running rounds only print how often it happened by itself
  (at -smp 8 on 2 host cores with other QEMUs beside it, load 11-13, once
  after 59 rounds and once not in 128, which failed the boot when it was
  required).
* ``make test`` also boots the locked page hash table and the release build
  at -smp 2 for a short look (test_short_smp2): the version line and the
  page hash back end say the configuration, a few tests that use the page
  hash table pass, ``run hello`` exits 0.
* The broken-RCU builds (grace periods do not wait) fail ``rcutorture`` with
  the oracle's reason and fail ``rcu1``: the tests can catch a broken RCU on
  arm64 too.
* The ``BROKEN=shootdown`` build (tlb_shootdown() uses the non-broadcast
  ``tlbi vae1``: only the unmapping CPU's TLB forgets the page) fails
  ``pagefault1`` with a stale translation at -smp 2: TCG keeps a vCPU's TLB
  until that vCPU is told, so the broadcast is what the test sees. (The
  broadcast build's as1 and pagefault1 check that no shootdown sends a
  cross-call: part of ``test *``.) The same build's ASIDs are reused
  without invalidation (``BROKEN=asid``): ``asid1`` must fail with
  "stale translation" (the next owner of the released ASID read the old
  owner's word without a fault; TCG drops its TLB only when TTBR0's ASID
  changes, and the CPU keeps it while it runs the kernel alone). The
  correct build's asid1 (part of ``test *``) checks the reuse, the counts
  of switches and unmaps and a rollover (docs/ARM64.md, "TLB and ASIDs").

* User tasks at EL0 at -smp 2: ``run hello``, ``run threads``,
  ``run sysjunk``, ``run ufault`` and ``run chtuser -t 3`` (the OS build of
  libcht and its user RCU), ``run arearace`` (no page lost) and
  ``run futexrace`` exit 0; the loader refuses bigbss with the amd64 lines, and
  ``tasks`` is empty afterwards.

* The ``fault`` variants, attack, limits, sysfuzz and futexbench:
  tests/test_arm64_programs.py.

Everything skips, with the reason, when aarch64-linux-gnu-gcc or
qemu-system-aarch64 is missing.
"""

import os
import re
import subprocess

import pytest

from conftest import (ARM64_ALL_TESTS_TIMEOUT, ARM64_BOOT_TIMEOUT,
                      ARM64_BUILDS, ARM64_KERNELS, ARM64_TEST_ONE_TIMEOUT,
                      REPO, needs_arm64)
from tools import kconsole

BUILDS = ARM64_BUILDS
KERNELS = ARM64_KERNELS
#: Built by ``make arm64-soak`` (ARM64_SOAK_CONFIGS), booted only by the soak.
SOAK_ONLY = ("podzimek-locked",)
BOOT_TIMEOUT = ARM64_BOOT_TIMEOUT
ALL_TESTS_TIMEOUT = ARM64_ALL_TESTS_TIMEOUT
TEST_ONE_TIMEOUT = ARM64_TEST_ONE_TIMEOUT

pytestmark = needs_arm64


@pytest.fixture(scope="module", autouse=True)
def arm64_build():
    """``make arm64`` once, and ``make arm64-soak`` with KTEST_SOAK=1 (unless
    KTEST_NO_BUILD=1, as make test and make soak set)."""
    soak = os.environ.get("KTEST_SOAK") == "1"
    if os.environ.get("KTEST_NO_BUILD") != "1":
        env = dict(os.environ)
        for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
            env.pop(var, None)
        proc = subprocess.run(["make", "arm64"] + (["arm64-soak"] if soak
                                                   else []),
                              cwd=REPO, env=env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        assert proc.returncode == 0, "make arm64 failed:\n" + \
            proc.stdout.decode("utf-8", "replace")[-3000:]
    missing = [k for c, k in KERNELS.items() if not os.path.exists(k)
               and (soak or c not in SOAK_ONLY)]
    if missing:
        pytest.fail("missing %s: make arm64%s" % (
            ", ".join(missing), " arm64-soak" if soak else ""))


class boot:
    """``with boot(config, smp) as k``: QEMU started, prompt reached."""

    def __init__(self, config, smp):
        self.k = kconsole.Kernel(smp=smp, kernel=KERNELS[config],
                                 arch="arm64",
                                 name="arm64-%s-smp%d" % (config, smp))

    def __enter__(self):
        self.k.start()
        try:
            self.k.wait_prompt(BOOT_TIMEOUT)
        except BaseException:
            self.k.close()
            raise
        return self.k

    def __exit__(self, exc_type, exc, tb):
        self.k.close()
        return False


#: A backtrace line: "  0x<return address> <name+0xoff>" or "<?>".
BACKTRACE_LINE_RE = re.compile(
    r"^  (?:0x)?([0-9a-f]+) <(?:([A-Za-z_][\w.]*)\+0x([0-9a-f]+)|\?)>$", re.M)


def kernel_text_symbols(config):
    """{address: name} of the function symbols of the arm64 kernel ``config``
    (``nm``), to tell a real function from a made-up name."""
    out = subprocess.run(["aarch64-linux-gnu-nm", KERNELS[config]],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            syms[parts[2]] = int(parts[0], 16)
    return syms


def check_symbols(k, config):
    """``version`` counts the symbol table; ``backtrace`` (the walk a panic
    prints) names the console's callers, each a function of the image at the
    printed return address."""
    out = k.cmd("version", 60)
    m = re.search(r"; (\d+) symbols$", out, re.M)
    assert m, out
    count = int(m.group(1))
    # The table holds every function of .text: several hundred at least.
    assert count > 100, "the symbol table has %d symbols:\n%s" % (count, out)
    out = k.cmd("backtrace", 60)
    frames = BACKTRACE_LINE_RE.findall(out)
    assert frames, "no backtrace lines:\n" + out
    syms = kernel_text_symbols(config)
    named = [(int(ret, 16), name, int(off, 16))
             for ret, name, off in frames if name]
    # cmd_backtrace() is called by kconsole_exec() (the command table),
    # itself called by kconsole_run(): the first frame and the next.
    assert [n for _, n, _ in named[:2]] == ["kconsole_exec", "kconsole_run"], \
        "the backtrace does not name the console's callers:\n" + out
    for ret, name, off in named:
        assert name in syms and syms[name] + off == ret, \
            "%s+%#x is not the function at %#x:\n%s" % (name, off, ret, out)


#: The report of ``test fault1``'s kernel write to 0x1000 (a data abort,
#: ESR class 0x25, at fault1_touch) up to the backtrace's end.
FAULT1_REPORT_RE = re.compile(
    rb"PANIC on CPU \d+: Data/instruction abort at 0x[0-9a-f]+, fault address "
    rb"0x0+1000, ESR 0x96[0-9a-f]{6} \(kernel address space\)\r*\n"
    rb"PC=[0-9a-f]+ <fault1_touch\+0x[0-9a-f]+>\r*\n"
    rb"(?:.*\n)*?Backtrace:\r*\n(?:  .*\n)*?"
    rb"  0x[0-9a-f]+ <test_run\+0x[0-9a-f]+>\r*\n(?:  .*\n)*?"
    rb"System halted\.")
#: A verdict line: fault1 returned (no fault).
VERDICT_RE = re.compile(rb"Test passed|Test failed[^\r\n]*")


def check_fault1(k):
    """``test fault1`` (unsafe, halts: the boot's last command): the write
    to 0x1000 from the console's kernel thread is a data abort reported with
    its fault address, PC in fault1_touch and a backtrace through test_run.
    A CPU whose TTBR0 still held the boot identity map took no fault there
    (QEMU virt's flash at physical 0x1000 ignores the write) and the test
    said "Test failed: the write to an unmapped address did not fault"."""
    k.send_line("test fault1")
    idx, m, before = k.expect([FAULT1_REPORT_RE, VERDICT_RE],
                              TEST_ONE_TIMEOUT,
                              "the exception report of 'test fault1'",
                              check_panic=False)
    text = kconsole.decode(before + m.group(0))
    assert idx == 0, "'test fault1' did not fault at 0x1000:\n" + text


def test_boot_smp4_and_fault1():
    """4 CPUs online by PSCI; every CPU ticks; the symbol table and the
    backtrace name functions; a kernel write to 0x1000 faults (no CPU keeps
    the boot identity map: no user program ran in this boot to hide it)."""
    with boot("a-rcu", 4) as k:
        assert "SMP: 4 of 4 CPUs online" in k.log_text, k.log_text[-2000:]
        out = k.cmd("cpus", 60)
        assert out.rstrip().endswith("4 CPUs online"), out
        out = k.cmd("uptime", 60)
        assert "Interrupts (all CPUs): timer" in out, out
        check_symbols(k, "a-rcu")
        check_fault1(k)


#: The arm64 matrix: ``test *`` on both RCU flavours and both page hash
#: back ends at -smp 1, 2, 4 and 8, and the release build (CHT, A-RCU) at
#: -smp 2 and 4.
MATRIX = [(rcu if ht == "cht" else rcu + "-locked", smp)
          for rcu in ("a-rcu", "podzimek") for ht in ("cht", "locked")
          for smp in (1, 2, 4, 8)] + [("release", 2), ("release", 4)]
#: The part of MATRIX that ``make test`` runs (test_all_tests); make soak
#: runs the rest (test_all_tests_soak): each `test *` boot takes minutes
#: under TCG on 2 host cores.
MAKE_TEST_MATRIX = [("a-rcu", 2), ("a-rcu", 4), ("podzimek", 4)]
SOAK_MATRIX = [c for c in MATRIX if c not in MAKE_TEST_MATRIX]


def test_matrix_covers_every_configuration_once():
    """No boot: make test and make soak together run `test *` on every
    (RCU flavour, page hash back end, -smp) and the release
    build, each once, and each configuration is a build of ``make arm64``."""
    want = {(r, h, n) for r in ("a-rcu", "podzimek") for h in ("cht", "locked")
            for n in (1, 2, 4, 8)}
    got = [(c.replace("-locked", ""), "locked" if c.endswith("-locked")
            else "cht", n) for c, n in MAKE_TEST_MATRIX + SOAK_MATRIX
           if c != "release"]
    assert sorted(got) == sorted(want)
    assert sorted(n for c, n in SOAK_MATRIX if c == "release") == [2, 4]
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    def configs(var):
        out = subprocess.run(["make", "-s", "print-" + var], cwd=REPO,
                             env=env, stdout=subprocess.PIPE, text=True,
                             check=True).stdout.split()
        return {c.split(":")[0] for c in out}
    soak_dirs = configs("ARM64_SOAK_CONFIGS")
    assert soak_dirs == {BUILDS[c] for c in SOAK_ONLY}
    assert configs("ARM64_CONFIGS") | soak_dirs == set(BUILDS.values())
    # make test boots nothing that only make arm64-soak builds.
    assert not {c for c, _ in MAKE_TEST_MATRIX} & set(SOAK_ONLY)
    assert not set(SHORT_BOOTS) & set(SOAK_ONLY)


def _all_tests(config, smp):
    """``test *`` passes, no panic, and the system halts."""
    with boot(config, smp) as k:
        run = k.run_all_tests(timeout=ALL_TESTS_TIMEOUT)
        assert run[1] == 0 and run[0] > 0, \
            "%d passed, %d failed:\n%s" % (run[0], run[1], run[3][-4000:])
        k.check_no_panic()
        k.halt()


def _ids(p):
    return p if isinstance(p, str) else "smp%d" % p


@pytest.mark.parametrize("config,smp", MAKE_TEST_MATRIX, ids=_ids)
def test_all_tests(config, smp):
    """``test *`` passes, no panic, and the system halts."""
    _all_tests(config, smp)


@pytest.mark.soak
@pytest.mark.parametrize("config,smp", SOAK_MATRIX, ids=_ids)
def test_all_tests_soak(config, smp):
    """make soak: the rest of the matrix (-smp 1 and 8 everywhere, the
    locked page hash table, Podzimek at -smp 2, release)."""
    _all_tests(config, smp)


#: make test's short look at the builds whose `test *` is in the soak: the
#: version line, the page hash back end, the tests that use the page hash
#: table and a user program (each a few seconds under TCG).
SHORT_BOOTS = {
    "a-rcu-locked": ("Build: debug (asserts on)", "locked",
                     ("mapping1", "as1", "pagefault1")),
    "release": ("Build: release (asserts off)", "cht",
                ("mapping1", "pagefault1", "rcu1")),
}


@pytest.mark.parametrize("config", sorted(SHORT_BOOTS))
def test_short_smp2(config):
    """The locked page hash table and the release build at -smp 2: the
    configuration the build says, a few tests pass, a program runs."""
    build, backend, tests = SHORT_BOOTS[config]
    with boot(config, 2) as k:
        out = k.cmd("version", 60)
        assert build in out, out
        out = k.cmd("page_ht", 60)
        assert "page hash table: backend %s" % backend in out, out
        for name in tests:
            ok, reason, out = k.run_test(name, TEST_ONE_TIMEOUT)
            assert ok, "%s failed on %s: %s\n%s" % (name, config, reason,
                                                   out[-3000:])
        out = k.cmd("run hello x", 120)
        assert "task 1 (hello) exited with status 0" in out, out
        k.check_no_panic()
        k.halt()


def test_user_programs_smp2():
    """EL0 programs run, make system calls and exit 0; tasks are reaped."""
    with boot("a-rcu", 2) as k:
        out = k.cmd("run hello a b", 120)
        assert "Hello from user space: task 1, 2 CPUs [a] [b]" in out, out
        assert "task 1 (hello) exited with status 0" in out, out
        out = k.cmd("run threads", 300)
        assert re.search(r"counter (\d+) of \1, wrong CPU 0, errors 0", out), out
        assert "(threads) exited with status 0" in out, out
        out = k.cmd("run sysjunk", 300)
        assert ", 0 did not return an error" in out, out
        assert "(sysjunk) exited with status 0" in out, out
        out = k.cmd("run ufault", 300)
        assert "errors=0" in out and "(ufault) exited with status 0" in out, \
            out
        out = k.cmd("run chtuser -t 3", 300)
        assert re.search(r"chtuser: threads=2 ops=\d+ errors=0", out), out
        assert "(chtuser) exited with status 0" in out, out
        out = k.cmd("run bigbss", 120)
        assert re.search(r"^run: cannot start bigbss: ", out, re.M), out
        for mode in ("", " -d"):
            out = k.cmd("run arearace -r 100" + mode, 300)
            assert re.search(r"^arearace: \w+: rounds 100, raced \d+, lost 0$",
                             out, re.M), out
        out = k.cmd("run futexrace", 300)
        assert "(futexrace) exited with status 0" in out, out
        out = k.cmd("tasks", 60)
        assert "0 tasks" in out, out
        k.check_no_panic()
        k.halt()


@pytest.mark.parametrize("config", ["a-rcu-broken", "podzimek-broken"])
def test_broken_rcu_fails(config):
    """A build whose grace periods do not wait fails rcutorture (the
    oracle's reason) and rcu1."""
    with boot(config, 4) as k:
        ok, reason, out = k.run_test("rcutorture", TEST_ONE_TIMEOUT)
        assert not ok, "broken RCU passed rcutorture on arm64:\n" + out
        assert reason and ("aged past 1" in reason or "freed" in reason or
                           "reused" in reason or "backwards" in reason), \
            "rcutorture failed for another reason: %r\n%s" % (reason, out)
        ok, reason, out = k.run_test("rcu1", TEST_ONE_TIMEOUT)
        assert not ok, "broken RCU passed rcu1 on arm64:\n" + out


def test_broken_shootdown_fails():
    """A shootdown that invalidates only the unmapping CPU's TLB (the
    non-broadcast TLBI) leaves another CPU a stale translation: pagefault1
    must fail with it, as the amd64 control (no cross-call) does. The same
    build (BROKEN=shootdown+asid, one boot for both controls) frees a
    released ASID for reuse without invalidating it: asid1 must read the
    released address space's word through the reused ASID."""
    with boot("broken-shootdown", 2) as k:
        ok, reason, out = k.run_test("asid1", TEST_ONE_TIMEOUT)
        assert not ok, "ASID reuse without invalidation passed asid1:\n" + out
        assert reason and reason.startswith(
            "stale translation: ASID "), \
            "asid1 failed for another reason: %r\n%s" % (reason, out)
        ok, reason, out = k.run_test("pagefault1", TEST_ONE_TIMEOUT)
        assert not ok, "local-only TLBI passed pagefault1 on arm64:\n" + out
        assert reason and re.match(
            r"\d+ errors, first: (?:stale translation|.*a write through a "
            r"stale entry)", reason), \
            "pagefault1 failed for another reason: %r\n%s" % (reason, out)
        k.halt()
