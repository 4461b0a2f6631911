"""The Makefile's configuration knobs against the code (host only, seconds).

Every ``CONFIG_*`` macro the kernel's sources (kernel/, common/) test must be
one that some setting of a Makefile variable defines (``-DCONFIG_...`` in
``make print-CFLAGS``) or that a header ``#define``s; every macro the Makefile
can define must be read somewhere. A knob added to one side only, or renamed
on one side, fails here. The settings tried are every value of each variable
the Makefile documents: RCU (the ``RCU_SRC_*`` of
kernel/generic/src/Makefile.inc), PAGE_HT (the ``PAGE_HT_SRC_*`` of
kernel/genarch/src/Makefile.inc), DEBUG, LOCK_STAT, LOCKDEP, TESTS, every
BROKEN= knob (``BROKEN_KNOBS``, if the Makefile has them), on both
architectures. A new variable that defines a macro goes into SETTINGS below.
"""

import functools
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFIG_RE = re.compile(r"\bCONFIG_[A-Z0-9_]+\b")
DEFINE_RE = re.compile(r"^\s*#\s*define\s+(CONFIG_[A-Z0-9_]+)\b", re.M)
CFLAG_RE = re.compile(r"-D(CONFIG_[A-Z0-9_]+)\b")


def make(*args, check=True):
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    return subprocess.run(["make", "-s", "--no-print-directory"] + list(args),
                          cwd=REPO, env=env, capture_output=True, text=True,
                          check=check).stdout


def variables_named(prefix):
    """The suffixes of the Makefile variables whose names start with
    ``prefix`` (``RCU_SRC_`` -> the RCU algorithms)."""
    # -q: run nothing (its exit status says print-ARCH is "out of date").
    out = make("-p", "-q", "print-ARCH", check=False)
    return sorted({m.group(1) for m in re.finditer(
        r"^%s(\S+) :?= " % re.escape(prefix), out, re.M)})


# The sanitizers the Makefile accepts (SANITIZE=, docs/SANITIZERS.md).
SANITIZERS = ("kasan", "ubsan", "kcsan")


def settings():
    """Every setting to try: one list of VAR=VALUE per make run."""
    # The fault-injection points (the reverted defects are patches, built from
    # a patched copy by make control: not a setting of this tree).
    broken = make("print-FAULT_KNOBS").split()
    runs = [[]]
    runs += [["RCU=" + r] for r in variables_named("RCU_SRC_")]
    runs += [["PAGE_HT=" + p] for p in variables_named("PAGE_HT_SRC_")]
    runs += [["DEBUG=0"], ["DEBUG=1", "LOCKDEP=0"], ["LOCK_STAT=1"],
             ["TESTS=0"]]
    runs += [["SANITIZE=" + s] for s in SANITIZERS]
    if broken:
        runs.append(["BROKEN=" + ",".join(broken)])
    return [arch + run for arch in ([], ["ARCH=arm64"]) for run in runs]


def kernel_sources():
    files = subprocess.run(["git", "ls-files", "kernel", "common"], cwd=REPO,
                           capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if re.search(r"\.(c|h|S|ld)$", f)]


@functools.lru_cache(maxsize=None)
def code_macros():
    """(macros the code names, macros a source #defines)."""
    used, defined = {}, set()
    for f in kernel_sources():
        with open(os.path.join(REPO, f), errors="replace") as fh:
            text = fh.read()
        for m in CONFIG_RE.finditer(text):
            used.setdefault(m.group(0), f)
        defined.update(DEFINE_RE.findall(text))
    return used, defined


@functools.lru_cache(maxsize=None)
def make_macros():
    """Macro -> the first setting whose CFLAGS define it."""
    found = {}
    for run in settings():
        for name in CFLAG_RE.findall(make(*(run + ["print-CFLAGS"]))):
            found.setdefault(name, " ".join(run) or "(defaults)")
    return found


def test_settings_cover_every_choice():
    """The harness sees both RCU algorithms and both page hash designs (a
    fragment whose map is renamed would leave a knob untried)."""
    assert variables_named("RCU_SRC_") == ["a-rcu", "podzimek-rcu"]
    assert variables_named("PAGE_HT_SRC_") == ["cht", "locked"]


def test_code_reads_only_knobs_the_makefile_sets():
    """Every CONFIG_ macro the code tests is set by some Makefile setting or
    defined by a header."""
    used, defined = code_macros()
    known = set(make_macros()) | defined
    orphans = {m: f for m, f in used.items() if m not in known}
    assert not orphans, (
        "the code reads CONFIG_ macros no Makefile setting defines (a knob "
        "renamed or removed on one side; a new variable belongs in "
        "tests/test_knobs.py's settings()): %s" % orphans)


def test_every_makefile_knob_is_read():
    """Every CONFIG_ macro the Makefile can define is read by the code."""
    used, _ = code_macros()
    unread = {m: s for m, s in make_macros().items() if m not in used}
    assert not unread, (
        "the Makefile defines CONFIG_ macros no kernel source reads: %s"
        % unread)


def test_check_sees_a_drifted_knob():
    """The comparison itself: a macro name the Makefile does not define is
    reported (the check cannot pass vacuously)."""
    used, defined = code_macros()
    known = set(make_macros()) | defined
    assert "CONFIG_DEBUG" in known and "CONFIG_RCU_PODZIMEK" in known
    assert "CONFIG_NO_SUCH_KNOB" not in known
    assert len(used) >= 10, "found only %s" % sorted(used)
