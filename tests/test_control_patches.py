"""The negative controls' sources (docs/CONTROLS.md), checked without QEMU.

* Every reverted defect, ``tests/controls/KNOB.patch``, still applies to the
  tree exactly (``git apply --check``, and ``patch --dry-run -F0`` as
  ``make controls`` applies it): a patch whose code has changed fails here
  at once, with its name, instead of rotting until its control is booted.
* The production sources hold no ``CONFIG_BROKEN_*``: a fault no correct
  kernel has goes through the one predicate ``fault_inject()``
  (kernel/generic/include/debug/fault_inject.h).
* The knob list of tests/controls/controls.mk matches the code: every
  ``FI_*`` point is a ``BROKEN=`` knob and every knob names a point; every
  control is built by ``make controls`` and read by a test.
"""

import glob
import os
import re
import subprocess

import pytest

from conftest import REPO

CONTROLS_DIR = os.path.join(REPO, "tests", "controls")
PATCHES = sorted(glob.glob(os.path.join(CONTROLS_DIR, "*.patch")))
FAULT_INJECT_H = os.path.join(REPO, "kernel", "generic", "include", "debug",
                              "fault_inject.h")


def knob(path):
    return os.path.splitext(os.path.basename(path))[0]


def make_print(var, *args):
    out = subprocess.run(["make", "--no-print-directory", "-s", *args,
                          "print-" + var], cwd=REPO, check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env={k: v for k, v in os.environ.items()
                              if k not in ("MAKEFLAGS", "MFLAGS",
                                           "MAKELEVEL")})
    return out.stdout.decode().split()


def test_there_are_patches():
    assert len(PATCHES) >= 11, PATCHES


@pytest.mark.parametrize("patch", PATCHES, ids=[knob(p) for p in PATCHES])
def test_patch_applies(patch):
    """The patch applies to the working tree exactly (no fuzz)."""
    rel = os.path.relpath(patch, REPO)
    git = subprocess.run(["git", "apply", "--check", rel], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert git.returncode == 0, (
        "%s no longer applies to the tree: the code it reverts has changed; "
        "remake it (docs/CONTROLS.md, 'Remaking a patch'):\n%s"
        % (rel, git.stdout.decode()))
    with open(patch, "rb") as f:
        p = subprocess.run(["patch", "-p1", "--dry-run", "--batch", "-F0",
                            "--forward"], cwd=REPO, stdin=f,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode == 0, "%s: patch -F0 --dry-run:\n%s" % (
        rel, p.stdout.decode())


@pytest.mark.parametrize("patch", PATCHES, ids=[knob(p) for p in PATCHES])
def test_patch_changes_code(patch):
    """A patch adds or removes a line of code, not only comments, and says
    what its control must fail in its header."""
    with open(patch) as f:
        text = f.read()
    header = text.split("\ndiff --git ", 1)[0]
    assert "must" in header, "%s: no description of what must fail" % patch
    changed = [l[1:].strip() for l in text.splitlines()
               if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    code = [l for l in changed if l and not l.startswith(("/*", "*", "*/"))]
    assert code, "%s changes only comments" % patch


def test_no_broken_knobs_in_sources():
    """No CONFIG_BROKEN_* in the production sources."""
    out = subprocess.run(["git", "grep", "-n", "CONFIG_BROKEN", "--",
                          "kernel", "common", "uspace"], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert out.returncode == 1 and not out.stdout, out.stdout.decode()


def test_fault_points_match_the_code():
    """FAULT_POINTS (controls.mk) names exactly the FI_* of fault_inject.h,
    and every FI_* point is asked somewhere in the kernel."""
    with open(FAULT_INJECT_H) as f:
        h = f.read()
    enum = h[h.index("enum {"):h.index("FI_POINTS")]
    points = re.findall(r"^\s*(FI_\w+),", enum, re.M)
    assert points, enum
    # In the same order: bit i of CONFIG_FAULT_INJECT is the i-th point.
    mk = [p.split(":")[1] for p in make_print("FAULT_POINTS")]
    assert mk == points, "controls.mk FAULT_POINTS %s, fault_inject.h %s" % (
        mk, points)
    for p in points:
        used = subprocess.run(["git", "grep", "-l", "fault_inject(%s)" % p,
                               "--", "kernel", "common"], cwd=REPO,
                              stdout=subprocess.PIPE)
        assert used.stdout.strip(), "%s is never asked" % p


#: Fault points that only arm64 code asks (asid: asid_release()).
ARM64_ONLY_KNOBS = ("asid",)


def test_every_control_is_built_and_tested():
    """make controls builds build/broken-KNOB for every knob, and a test
    reads each of them."""
    configs = make_print("CONTROL_CONFIGS")
    names = {c.split(":")[0] for c in configs}
    knobs = make_print("BROKEN_KNOBS")
    assert set(knob(p) for p in PATCHES) <= set(knobs)
    tests = ""
    for path in glob.glob(os.path.join(REPO, "tests", "test_*.py")):
        with open(path) as f:
            tests += f.read()
    arm64 = make_print("ARM64_CONFIGS")
    for k in knobs:
        if k in ARM64_ONLY_KNOBS:
            # asked only by arm64 code: built into an arm64 control of
            # ARM64_CONFIGS (tests/configs.mk), whose boot runs its test
            assert any(re.search(r"BROKEN=(?:\w+\+)*%s\b" % k, c)
                       for c in arm64), "make arm64 does not build %s" % k
            continue
        if k == "rcu":
            assert {"rcu-broken", "podzimek-broken"} <= names
            continue
        assert "broken-" + k in names, "make controls does not build %s" % k
        assert re.search(r'broken_elf\("%s"\)|_defect_kernel\("%s"|'
                         r'"broken-%s"' % (k, k, k), tests), (
            "no test boots build/broken-%s" % k)


def test_patch_knob_refused_outside_control():
    """make BROKEN=<patch knob> kernel stops with the way to build it."""
    k = knob(PATCHES[0])
    out = subprocess.run(["make", "-n", "BROKEN=" + k, "kernel"], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert out.returncode != 0
    assert b"make control BROKEN=" in out.stdout, out.stdout.decode()
