"""A production kernel: ``make TESTS=0``.

The kernel tests (kernel/test/), the benchmarks (kernel/test/bench/) and the
console commands that run them (console/cmd_test.c, console/cmd_bench.c) are
built only with CONFIG_TEST, which ``TESTS=1`` (the default) defines.  This
file builds ``TESTS=0`` into its own directory (build/notests), checks with
``nm`` that none of their symbols is in it, and boots it once: the console
works and says that ``test``, ``rcutorture`` and ``chtbench`` are not built
in.
"""

import os
import re
import subprocess

import pytest

from tools import kconsole
from conftest import REPO

#: May share the 2 host CPUs in make test's first pytest run (conftest.py):
#: a build, nm and one boot that lists commands.
pytestmark = pytest.mark.concurrent

BUILD = os.path.join("build", "notests")
ELF = os.path.join(REPO, BUILD, "kernel.elf")
#: Names no production kernel defines (ipi1's handler was the last one).
FORBIDDEN_RE = re.compile(r"test|bench|tortur", re.IGNORECASE)


def nm_defined(path):
    """The names an object or executable defines (nm's T, D, B, R ...)."""
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def notests_elf():
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    proc = subprocess.run(
        ["make", "--no-print-directory", "BUILD=" + BUILD, "TESTS=0",
         "BROKEN=", "RCU_BROKEN=0", os.path.join(BUILD, "kernel.elf")],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.returncode == 0, "make TESTS=0 failed:\n%s" % \
        kconsole.tail_lines(proc.stdout.decode("utf-8", "replace"), 40)
    return ELF


def test_no_test_or_benchmark_symbol(notests_elf):
    names = nm_defined(notests_elf)
    bad = sorted(n for n in names if FORBIDDEN_RE.search(n))
    assert not bad, "TESTS=0 kernel defines test/benchmark symbols: %s" % bad


def test_no_symbol_of_a_test_object(notests_elf):
    """Every global a TESTS=1 build's test objects define is absent."""
    sources = subprocess.run(
        ["make", "-s", "--no-print-directory", "list-sources"], cwd=REPO,
        capture_output=True, text=True, check=True).stdout.split()
    gated = [s for s in sources if s.startswith("kernel/test/") or
             s.endswith(("/cmd_test.c", "/cmd_bench.c"))]
    assert gated, "make list-sources names no test source"
    # The objects of the default build (make all), if it is there.
    objs = [os.path.join(REPO, "build", "obj", os.path.splitext(s)[0] + ".o")
            for s in gated]
    objs = [o for o in objs if os.path.exists(o)]
    if not objs:
        pytest.skip("no TESTS=1 objects in build/obj (run make)")
    globals_ = set()
    for o in objs:
        out = subprocess.run(["nm", "--defined-only", "-g", o],
                             capture_output=True, text=True,
                             check=True).stdout
        globals_.update(line.split()[-1] for line in out.splitlines()
                        if line.strip())
    leaked = sorted(globals_ & nm_defined(notests_elf))
    assert not leaked, "TESTS=0 kernel defines: %s" % leaked


def test_boots_without_the_test_commands(request, notests_elf):
    with kconsole.Kernel(smp=2, kernel=notests_elf,
                         name="notests-smp2") as k:
        k.wait_prompt()
        helptext = k.cmd("help")
        for name in ("test", "rcutorture", "chtbench"):
            assert not re.search(r"^\s*%s\b" % name, helptext, re.M), \
                "help lists %r:\n%s" % (name, helptext)
            out = k.cmd(name)
            assert "not built in" in out, out
        assert "GPs completed" in k.cmd("rcu")
