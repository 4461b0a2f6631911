"""Shared fixtures for the kernel tests: build once, boot QEMU per group.

A *boot* is one QEMU run shared by the tests of one class (a fresh QEMU per
group).  The tests of a class are its steps, in order.  A step that fails on
an assertion (a wrong answer) leaves the boot usable; a step that fails on a
driver error (timeout, panic, QEMU gone) makes the later steps of the same
boot skip instead of failing with follow-on errors: the first failure says
what went wrong.

Environment:

``KTEST_NO_BUILD=1``
    Do not run ``make`` first (``make test`` has just built everything).
``KTEST_KERNEL``, ``KTEST_ISO``
    Images to boot (default build/kernel.elf and build/image.iso).
``KTEST_RCU``
    RCU flavour of KTEST_KERNEL (default ``a-rcu``; ``make test`` passes its
    ``RCU``).
``KTEST_PODZIMEK_KERNEL``, ``KTEST_LOCKED_KERNEL``, ``KTEST_RELEASE_KERNEL``
    The other configurations (default build/podzimek/kernel.elf, make
    RCU=podzimek-rcu; build/locked/kernel.elf, make PAGE_HT=locked;
    build/release/kernel.elf, make DEBUG=0; ``make flavours`` builds them).
``KTEST_BROKEN_KERNEL``, ``KTEST_PODZIMEK_BROKEN_KERNEL``
    The broken-RCU negative controls (build/rcu-broken, make BROKEN=rcu;
    build/podzimek-broken, make RCU=podzimek-rcu BROKEN=rcu); the other
    controls are in build/broken-KNOB (tests/test_controls.py); ``make
    controls`` builds them all.
``KTEST_FLAVOURS``
    Comma-separated configurations the SMP groups boot (default
    ``a-rcu,podzimek-rcu,a-rcu+page_ht-locked,a-rcu+release``).
``KTEST_SMP``, ``KTEST_PODZIMEK_SMP``, ``KTEST_LOCKED_SMP``, ``KTEST_RELEASE_SMP``
    vCPU counts of the SMP groups (A-RCU: default 1,2,4; Podzimek RCU:
    default 1,2), of the locked page hash table's groups (default 2) and of
    the release build's groups (default 2); the other counts run in ``make
    soak`` (smp_values()).
``KTEST_SOAK=1``
    Also run the tests marked ``soak`` (many boots, long rcutorture runs,
    single-threaded TCG); ``make soak`` sets it and selects only them.
``KTEST_TIMEOUT_SCALE``, ``QEMU``, ``KTEST_LOG_DIR``
    See tools/kconsole.py.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tools import kconsole  # tools/kconsole.py
from patterns import ANY_PANIC_RE, VERDICT_RE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNEL_ELF = os.environ.get("KTEST_KERNEL") or kconsole.DEFAULT_KERNEL
IMAGE_ISO = os.environ.get("KTEST_ISO") or kconsole.DEFAULT_ISO

#: RCU flavour of KERNEL_ELF (the default build).
DEFAULT_RCU = os.environ.get("KTEST_RCU") or "a-rcu"
PODZIMEK_ELF = os.environ.get("KTEST_PODZIMEK_KERNEL") or os.path.join(
    REPO, "build", "podzimek", "kernel.elf")
#: The negative control: GP detection does not wait (make RCU_BROKEN=1).
BROKEN_ELF = os.environ.get("KTEST_BROKEN_KERNEL") or os.path.join(
    REPO, "build", "rcu-broken", "kernel.elf")

#: The other negative control: Podzimek RCU whose GP detection does not wait
#: (make RCU=podzimek-rcu BROKEN=rcu).
PODZIMEK_BROKEN_ELF = os.environ.get("KTEST_PODZIMEK_BROKEN_KERNEL") or \
    os.path.join(REPO, "build", "podzimek-broken", "kernel.elf")

#: The locked page hash table back end (make PAGE_HT=locked), with A-RCU.
LOCKED_ELF = os.environ.get("KTEST_LOCKED_KERNEL") or os.path.join(
    REPO, "build", "locked", "kernel.elf")
#: The release build (make DEBUG=0: -O2, asserts off), A-RCU.
RELEASE_ELF = os.environ.get("KTEST_RELEASE_KERNEL") or os.path.join(
    REPO, "build", "release", "kernel.elf")
#: Kernel image per configuration ("RCU flavour[+variant]").
ALL_FLAVOURS = ("a-rcu", "podzimek-rcu", "a-rcu+page_ht-locked",
                "a-rcu+release")
FLAVOUR_KERNELS = {"a-rcu": KERNEL_ELF, "podzimek-rcu": PODZIMEK_ELF,
                   "a-rcu+page_ht-locked": LOCKED_ELF,
                   "a-rcu+release": RELEASE_ELF}
if DEFAULT_RCU == "podzimek-rcu":
    FLAVOUR_KERNELS = {"podzimek-rcu": KERNEL_ELF}


def flavours():
    """Return the configurations to test (env ``KTEST_FLAVOURS``)."""
    raw = os.environ.get("KTEST_FLAVOURS", ",".join(ALL_FLAVOURS))
    names = [x for x in raw.replace(" ", "").split(",") if x]
    unknown = [n for n in names if n not in ALL_FLAVOURS]
    if unknown:
        raise ValueError("KTEST_FLAVOURS: unknown flavour(s) %s" % unknown)
    return [n for n in names if n in FLAVOUR_KERNELS]


def flavour_kernel(flavour):
    """Return the kernel image of an RCU flavour."""
    return FLAVOUR_KERNELS[flavour]


def soak_enabled():
    """True when the soak tests should run (``KTEST_SOAK=1``)."""
    return os.environ.get("KTEST_SOAK") == "1"


# ---- Timeouts -------------------------------------------------------------
# Seconds, in one place.  kconsole.Kernel multiplies every timeout it is given
# by KTEST_TIMEOUT_SCALE; no verdict depends on them, they bound a hung boot.
# A test file imports the ones it uses, under its own local names where its
# value differs (``from conftest import LONG_CMD_TIMEOUT as CMD_TIMEOUT``).

#: QEMU start to the first prompt (TCG, -smp 8, GRUB).
BOOT_TIMEOUT = 180
#: An ordinary command.
CMD_TIMEOUT = 60
#: ``test NAME``.
TEST_ONE_TIMEOUT = 600
#: ``test *``.
TEST_ALL_TIMEOUT = 900
#: ``halt`` to QEMU's exit.
HALT_TIMEOUT = 60
#: The prompt back after a bad input line (tests/test_kernel.py).
BAD_LINE_PROMPT_TIMEOUT = 30
#: The answer to a marker line after a fuzz line (benchmarks run 1 s).
MARK_TIMEOUT = 60
#: A 1 s benchmark plus its set-up (the resize rows insert 2^16 items) and
#: teardown in a debug build under TCG (tests/test_chtbench.py).
BENCH_TIMEOUT = 240
#: A panic report expected after ``test NAME`` (tests/test_mm_checks.py,
#: tests/test_rcu_checks.py).
PANIC_TIMEOUT = 120
#: A lock validator report expected after ``test NAME`` (tests/test_lockdep.py).
REPORT_TIMEOUT = 120
#: A command that runs user programs or benchmarks (tests/test_tasks.py,
#: tests/test_fuzz_sys.py, tests/test_lockstat.py).
LONG_CMD_TIMEOUT = 120
#: The liveness bound of one command of tests/test_limits.py.
LIMITS_CMD_TIMEOUT = 150
#: The release build's boot in tests/test_mm_checks.py.
MM_BOOT_TIMEOUT = 120
#: A boot and a command under the sharing plugin (tests/test_sharing.py).
SHARING_BOOT_TIMEOUT = 300
SHARING_CMD_TIMEOUT = 600
#: The counters back at their baseline after tasks ended
#: (tests/test_tasks.py).
TASK_SETTLE_TIMEOUT = 30
#: The counters back at their baseline after the system-call fuzzer
#: (tests/test_fuzz_sys.py).
SYSFUZZ_SETTLE_TIMEOUT = 60
#: arm64 (QEMU virt, TCG on 2 host cores): the boot to the prompt; an
#: ordinary command or user program; ``test *`` (about 5 minutes at -smp 4
#: on an idle host). tests/test_arm64.py, test_arm64_programs.py,
#: test_useraccess.py.
ARM64_BOOT_TIMEOUT = 120
ARM64_CMD_TIMEOUT = 300
ARM64_ALL_TESTS_TIMEOUT = 1500
#: One named kernel test on arm64 (``test NAME``).
ARM64_TEST_ONE_TIMEOUT = 600

# ---- arm64 ------------------------------------------------------------
#: The cross compiler and QEMU the arm64 tests need (Debian's
#: gcc-aarch64-linux-gnu and qemu-system-arm).
ARM64_CROSS = "aarch64-linux-gnu-gcc"
ARM64_QEMU = "qemu-system-aarch64"
#: Configuration name -> build directory of the arm64 kernels (``make arm64``
#: and ``make arm64-soak``, ARM64_CONFIGS and ARM64_SOAK_CONFIGS of
#: tests/configs.mk).
ARM64_BUILDS = {
    "a-rcu": "arm64",
    "podzimek": "arm64-podzimek",
    "a-rcu-locked": "arm64-locked",
    "podzimek-locked": "arm64-podzimek-locked",
    "release": "arm64-release",
    "a-rcu-broken": "arm64-rcu-broken",
    "podzimek-broken": "arm64-podzimek-broken",
    "broken-shootdown": "arm64-broken-shootdown",
}
ARM64_KERNELS = {c: os.path.join(REPO, "build", d, "kernel.elf")
                 for c, d in ARM64_BUILDS.items()}
ARM64_KERNEL = ARM64_KERNELS["a-rcu"]
#: Skips a test (``@needs_arm64``) or a file (``pytestmark = needs_arm64``)
#: when the arm64 cross compiler or QEMU is missing.
needs_arm64 = pytest.mark.skipif(
    shutil.which(ARM64_CROSS) is None or shutil.which(ARM64_QEMU) is None,
    reason="arm64 needs %s and %s (apt-get install gcc-aarch64-linux-gnu "
    "qemu-system-arm, or make deps)" % (ARM64_CROSS, ARM64_QEMU))


#: vCPU counts of the locked page hash table that only ``make soak`` boots
#: (-smp 4 moved there: its `test *` took 79 s of a
#: loaded `make test`; -smp 2 stays).
LOCKED_SOAK_SMP = (1, 4, 8)
#: The release build's `test *` at -smp 4 runs in the soak only (moved with
#: the locked -smp 4 boot; 77 s loaded); -smp 2 stays in `make test`, and
#: the soak's race boots run the release build at -smp 4 too.
RELEASE_SOAK_SMP = (4,)
#: Podzimek RCU at -smp 8 runs in the soak only: its `test *` boot took 96 s
#: of the then 15-minute `make test` budget (A-RCU keeps -smp 8 in `make test`).
#: Its amd64 -smp 4 boot moved there in round 4 (about 60 s of a 20.6-minute
#: `make test`, over budget): Podzimek's `test *` at -smp 4 stays in
#: `make test` on arm64 (tests/test_arm64.py), its chtbench rows at -smp 4 on
#: amd64 (tests/test_chtbench.py), and -smp 1 and 2 on amd64.
PODZIMEK_SOAK_SMP = (4, 8)
#: A-RCU's debug build at -smp 8 runs in the soak only since round 3's arm64
#: boots joined `make test` (its `test *` took 104 s of a 19-minute pytest run;
#: 8 vCPUs on 2 host cores). -smp 1, 2 and 4 stay.
ARCU_SOAK_SMP = (8,)


def smp_values(flavour=None):
    """Return the vCPU counts to test a configuration with.

    Env ``KTEST_SMP`` (default 1,2,4: ARCU_SOAK_SMP in the soak); for the locked page hash table
    ``KTEST_LOCKED_SMP`` (default 2: LOCKED_SOAK_SMP run in the soak), for
    Podzimek RCU ``KTEST_PODZIMEK_SMP`` (default 1,2: PODZIMEK_SOAK_SMP in the
    soak), for
    the release build ``KTEST_RELEASE_SMP`` (default 2: RELEASE_SOAK_SMP in
    the soak).
    """
    if flavour == "a-rcu+release":
        raw = os.environ.get("KTEST_RELEASE_SMP", "2")
    elif flavour == "a-rcu+page_ht-locked":
        raw = os.environ.get("KTEST_LOCKED_SMP", "2")
    elif flavour == "podzimek-rcu":
        raw = os.environ.get("KTEST_PODZIMEK_SMP", "1,2")
    else:
        raw = os.environ.get("KTEST_SMP", "1,2,4")
    return [int(x) for x in raw.replace(" ", "").split(",") if x]


def pytest_report_header(config):
    """Show what the harness will run."""
    qemu = os.environ.get("QEMU", "qemu-system-x86_64")
    try:
        proc = subprocess.run(
            shlex.split(qemu) + ["--version"], capture_output=True,
            stdin=subprocess.DEVNULL, text=True, timeout=10)
        version = proc.stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        version = "not runnable"
    return ["qemu: %s (%s)" % (qemu, version),
            "kernel: %s, iso: %s" % (KERNEL_ELF, IMAGE_ISO),
            "rcu flavours: %s; broken control: %s; soak: %s" % (
                ", ".join("%s=%s" % (f, flavour_kernel(f)) for f in flavours()),
                BROKEN_ELF, "on" if soak_enabled() else "off"),
            "timeout scale: %s, smp: %s (release: %s), logs: %s" % (
                kconsole.timeout_scale(), smp_values(),
                smp_values("a-rcu+release"),
                os.environ.get("KTEST_LOG_DIR", kconsole.DEFAULT_LOG_DIR))]


#: Modules whose tests run long host jobs without QEMU (the SPIN models, the
#: userspace library's sanitizer builds): marked ``slow`` too.
SLOW_HOST_MODULES = ("test_models", "test_uspace")


def _boots_qemu(item):
    """True if ``item`` may boot QEMU: it uses a boot fixture, or its module
    imports kconsole (and so may drive kconsole.Kernel itself; its tests on
    canned text are counted too), or it is in SLOW_HOST_MODULES."""
    if "boot_factory" in getattr(item, "fixturenames", ()):
        return True
    module = getattr(item, "module", None)
    return module is not None and (
        getattr(module, "kconsole", None) is kconsole
        or module.__name__ in SLOW_HOST_MODULES)


#: Host-only modules that build in the same directory (bench/userspace,
#: build/uspace): one xdist group, so that two workers never run their
#: ``make`` at once.
HOST_GROUPS = {"test_uspace": "uspace-builds",
               "test_uspace_misses": "uspace-builds",
               "test_bench_big": "uspace-builds"}

#: A test id naming one vCPU (``a-rcu-smp1``, ``smp1``): its boot uses one
#: host CPU.
_SMP1_RE = re.compile(r"(?<![0-9A-Za-z])smp1(?![0-9])")


def _host_only(item):
    """True if ``item`` never starts QEMU (nor kconsole's stand-in)."""
    module = getattr(item, "module", None)
    return "boot_factory" not in getattr(item, "fixturenames", ()) and \
        module is not None and getattr(module, "kconsole", None) is not kconsole


def _smp1(item):
    """True if ``item``'s parameters name -smp 1."""
    callspec = getattr(item, "callspec", None)
    return callspec is not None and bool(_SMP1_RE.search(callspec.id))


def _concurrent(item):
    """True if ``item`` may run beside another test on the 2 host CPUs: it
    is marked ``concurrent``, runs on the host only, or boots one vCPU.
    The others (the -smp 2 and 4 boots, whose race tests must see the vCPUs
    interleave, the negative controls, the sharing counts) run alone."""
    return (item.get_closest_marker("concurrent") is not None
            or _host_only(item) or _smp1(item))


def xdist_group(nodeid):
    """The pytest-xdist group of a test id: the steps of one boot (one class,
    one vCPU count), and the tests of one module-scoped build, stay on one
    worker in order."""
    path, _, rest = nodeid.partition("::")
    module = os.path.splitext(os.path.basename(path))[0]
    if module in HOST_GROUPS:
        return HOST_GROUPS[module]
    parts = rest.split("::")
    name = path + ("::" + parts[0] if len(parts) > 1 else "")
    param = nodeid[nodeid.index("[") + 1:] if "[" in nodeid else ""
    if _SMP1_RE.search(param):
        name += "@smp1"
    return name


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (make test): each xdist_group() on one worker.
    pytest-xdist's own loadgroup reads xdist_group markers and renames the
    node ids, which pytest 9 ignores (its tests then go one by one to any
    worker), so the groups are computed here from the node ids, over
    xdist's scope scheduler."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return xdist_group(nodeid)

    return GroupScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tests that boot QEMU ``slow`` and those that may share the
    CPUs ``concurrent`` (the markers are registered in pytest.ini); skip the
    soak tests unless KTEST_SOAK=1."""
    for item in items:
        if _boots_qemu(item):
            item.add_marker(pytest.mark.slow)
        if _concurrent(item):
            item.add_marker(pytest.mark.concurrent)
    if soak_enabled():
        return
    skip = pytest.mark.skip(reason="soak test: set KTEST_SOAK=1 (make soak)")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


def pytest_sessionfinish(session, exitstatus):
    """Treat 'no tests collected' (exit status 5) as a failure."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        sys.stderr.write("error: no tests were collected or selected\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


#: Modules that need no kernel image: they read the sources, run make's
#: dry runs and print-VAR, or build what they need themselves (uspace/,
#: the SPIN models). A session that collects only these builds nothing and
#: checks for no image, so ``python3 -m pytest tests/test_docs.py`` runs in
#: seconds on a fresh clone.
NO_KERNEL_MODULES = {"test_docs", "test_tree", "test_knobs",
                     "test_control_patches", "test_models", "test_sparse",
                     "test_uspace", "test_uspace_misses", "test_bench_big",
                     "test_ensure_deps"}


#: Modules that boot only the sanitizer kernels: test_sanitizers (the
#: session builds ``make sanitizers``, ``sanitizers-soak`` too under
#: KTEST_SOAK=1) and test_kcsan (its own ``make kcsan`` fixture). A session
#: of only these (and NO_KERNEL_MODULES) needs no default image, so ``make
#: sanitizers-soak`` and one soak test run without ``make all flavours
#: controls``.
SANITIZER_MODULES = {"test_sanitizers", "test_kcsan"}


def _modules(session):
    """The names of the modules of the collected tests."""
    names = set()
    for item in getattr(session, "items", ()):
        module = getattr(item, "module", None)
        names.add(module.__name__.rpartition(".")[2] if module else None)
    return names


def _needs_kernels(session):
    """False if every collected test is in a NO_KERNEL_MODULES module."""
    return bool(_modules(session) - NO_KERNEL_MODULES)


def _build_targets(session):
    """What ``make`` builds for the session, and whether the default images
    must exist after it."""
    names = _modules(session) - NO_KERNEL_MODULES
    sanitizers = ["sanitizers"] + (
        ["sanitizers-soak"] if soak_enabled() else [])
    if names <= SANITIZER_MODULES:
        return (sanitizers if "test_sanitizers" in names else []), False
    return ["all", "flavours", "controls", "plugin"] + sanitizers, True


@pytest.fixture(scope="session", autouse=True)
def build(request):
    """Run ``make`` once per session (unless KTEST_NO_BUILD=1, or the
    session collected only NO_KERNEL_MODULES)."""
    if not _needs_kernels(request.session):
        return
    targets, default_images = _build_targets(request.session)
    if os.environ.get("KTEST_NO_BUILD") != "1" and targets:
        env = dict(os.environ)
        for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
            env.pop(var, None)
        # all: build/kernel.elf and the ISO; flavours: the other
        # configurations; controls: the negative controls (make BROKEN=...);
        # plugin: the sharing counter (tests/test_sharing.py); sanitizers:
        # the KASAN and UBSAN kernels (tests/test_sanitizers.py), and the
        # soak's Podzimek ones under KTEST_SOAK=1 (_build_targets()).
        proc = subprocess.run(["make"] + targets,
                              cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            out = proc.stdout.decode("utf-8", "replace")
            pytest.exit("make failed with status %d:\n%s" % (
                proc.returncode, kconsole.tail_lines(out, 60)), returncode=1)
    if not default_images:
        return
    images = [KERNEL_ELF, IMAGE_ISO, BROKEN_ELF, PODZIMEK_BROKEN_ELF] + [
        flavour_kernel(f) for f in flavours()]
    missing = [p for p in images if not os.path.isfile(p)]
    if missing:
        pytest.exit("the build did not produce %s" % ", ".join(missing),
                    returncode=1)


class SharedBoot:
    """One QEMU run shared by the steps of a test class."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.smp = kernel.smp    # the -smp it was booted with
        self.failure = None      # node id of the first failed step
        self.halted = False

    @property
    def k(self):
        """The :class:`kconsole.Kernel`; skips if an earlier step failed."""
        if self.failure is not None:
            pytest.skip("an earlier step of this boot failed: %s"
                        % self.failure)
        return self._kernel


def run_test_expect_pass(k, command, timeout=TEST_ONE_TIMEOUT):
    """Run a console command that runs one test; require ``Test passed``;
    return its output."""
    __tracebackhide__ = True
    out = k.cmd(command, timeout)
    verdicts = kconsole.parse_verdicts(out)
    assert verdicts, "no verdict line in the output of %r:\n%s" % (
        command, out)
    failed = [r for ok, r in verdicts if not ok]
    assert not failed, "%r failed: %s\n%s" % (command, failed[0], out)
    return out


def skip_without_deps(group, what):
    """Skip the calling test (or fixture) unless ``tools/ensure-deps.sh
    --check GROUP`` finds every package of GROUP; ``what`` says what is
    missing and how to install it."""
    chk = subprocess.run(["bash", os.path.join(REPO, "tools",
                                               "ensure-deps.sh"),
                          "--check", group],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if chk.returncode:
        pytest.skip("%s: %s" % (what, chk.stdout.strip()))


def build_bench_us():
    """Build bench_us (bench/userspace, two jobs) or fail with make's
    output; returns the bench.userspace.common module."""
    from bench.userspace import common
    b = subprocess.run(["make", "-s", "-C", common.HERE, "-j2"],
                       env=common.make_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    assert b.returncode == 0, "bench_us does not build:\n" + b.stdout
    return common


def expect_test_panic(k, test, panic_re, timeout, what, any_panic=False):
    """Run ``test TEST`` on a test that must end in a panic: require
    ``panic_re`` before a verdict (and, with ``any_panic``, before any other
    panic line). Returns the match. ``what`` names the panic for the
    failure messages."""
    __tracebackhide__ = True
    k.send_line("test " + test)
    expected = [panic_re] + ([ANY_PANIC_RE] if any_panic else []) + \
        [VERDICT_RE]
    idx, m, before = k.expect(expected, timeout, "%s after 'test %s'"
                              % (what, test), check_panic=False)
    assert idx == 0, "'test %s' did not end in %s: %r\n%s" % (
        test, what, kconsole.decode(m.group(0)), kconsole.decode(before))
    return m


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember the first failed step of each boot."""
    outcome = yield
    report = outcome.get_result()
    # A wrong answer leaves the console usable; an exception from the driver
    # (timeout, panic, QEMU gone) or a failed set-up does not.
    broken = report.failed and not (
        call.excinfo is not None and report.when == "call"
        and call.excinfo.errisinstance(AssertionError))
    if broken:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, SharedBoot) and value.failure is None:
                value.failure = item.nodeid


@pytest.fixture(scope="session")
def boot_factory(request):
    """Return ``make(**kw)`` starting a QEMU (kconsole.Kernel arguments).

    QEMU is killed when the fixture that asked for the boot ends.
    """
    def make(owner, **kwargs):
        kernel = kconsole.Kernel(**kwargs).start()
        owner.addfinalizer(kernel.close)
        return SharedBoot(kernel)
    return make


@pytest.fixture(scope="class",
                params=[(f, n) for f in flavours() for n in smp_values(f)],
                ids=lambda p: "%s-smp%d" % p)
def smp_boot(request, boot_factory):
    """Each configuration's kernel booted with -smp N, one QEMU per pair."""
    flavour, smp = request.param
    boot = boot_factory(request, smp=smp, kernel=flavour_kernel(flavour),
                        name="%s-smp%d" % (flavour, smp))
    boot.flavour = flavour
    return boot


def class_boot(doc, **kwargs):
    """A class-scoped fixture (assign it to the fixture's name) that boots
    one QEMU, ``kconsole.Kernel(**kwargs)``, for the steps of a test class;
    ``doc`` says what it boots."""
    def boot(request, boot_factory):
        return boot_factory(request, **kwargs)
    boot.__doc__ = doc
    return pytest.fixture(scope="class")(boot)


iso_boot = class_boot("image.iso booted with -cdrom and -smp 2.",
                      smp=2, iso=IMAGE_ISO, name="iso-smp2")
badinput_boot = class_boot("kernel.elf booted with -smp 2 for the bad-input "
                           "tests.", smp=2, kernel=KERNEL_ELF,
                           name="badinput-smp2")
