"""The SPIN models of verify/, the short runs.

Each correct model's safety run must end with 0 errors and a complete search;
each broken variant (spin -DBROKEN_x) must be caught: at least one error of
the expected kind (a named assertion, an invalid end state or an acceptance
cycle) and a .trail file written. So a broken variant that stops failing, or
fails for another reason, fails here. ``make verify`` (verify/run.py) runs
these and the longer ones (the liveness runs of the correct models, the
correct cht_grow and cht_shrink) and prints the table; this file needs no
build and no QEMU (about 50 s on a loaded 2-core host).
"""

import os

import pytest

from verify import fingerprint  # verify/fingerprint.py
from verify import run as verify  # verify/run.py (pytest.ini's pythonpath)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SHORT = [r for r in verify.RUNS if r.short]


def test_every_model_and_variant_is_run_somewhere():
    """Every model in verify/ has runs, and make test covers each variant."""
    models = sorted(f[:-4] for f in os.listdir(os.path.join(REPO, "verify"))
                    if f.endswith(".pml"))
    files = {r.pml[:-4] for r in verify.RUNS}
    assert files == set(models), "models without runs in verify/run.py: %s" % (
        set(models) - files)
    broken = {(r.model, r.variant) for r in verify.RUNS if r.broken}
    short = {(r.model, r.variant) for r in SHORT if r.broken}
    assert broken and broken == short, \
        "broken variants left out of make test: %s" % (broken - short)


@pytest.mark.parametrize("run", SHORT, ids=[r.name for r in SHORT])
def test_model(run):
    res = verify.run_one(run)
    stats = "%s states stored, %s transitions, depth %s, %.1f s" % (
        res.get("stored"), res.get("transitions"), res.get("depth"),
        res.get("wall", 0.0))
    if run.broken:
        assert res["ok"], "%s (%s): %s [%s]" % (run.name, run.why,
                                                 res["reason"], stats)
    else:
        assert res["ok"], "%s: %s [%s]" % (run.name, res["reason"], stats)
    print("%s: %s [%s]" % (run.name, res["reason"], stats))


def test_harness_rejects_a_variant_that_is_not_caught():
    """A 'broken' variant that breaks nothing must fail the harness."""
    run = verify.Run("selftest", "BROKEN_NOTHING_AT_ALL", "safety",
                     verify.FREED, pml="urcu.pml",
                     why="no such variant: the model is unchanged")
    res = verify.run_one(run)
    assert not res["ok"] and "NOT caught" in res["reason"], res["reason"]


def test_harness_rejects_a_failing_model():
    """A correct-model run whose model fails must fail the harness."""
    run = verify.Run("selftest", None, "safety", pml="urcu.pml",
                     defs=["-DBROKEN_NO_WAIT"])
    res = verify.run_one(run)
    assert not res["ok"] and "model FAILED" in res["reason"], res["reason"]


def test_models_match_their_c():
    """Drift: every C function marked 'Model: verify/x.pml' has the
    fingerprint (whitespace-normalised sha256 of its text) that x.pml's
    header records. A change to the C fails here, naming the function and
    the model, until someone reviewed the model and ran
    python3 verify/fingerprint.py --update (--print shows the new values)."""
    problems = fingerprint.check()
    assert not problems, (
        "the C changed under its model (review the model, then run "
        "`python3 verify/fingerprint.py --update`; `--print` shows the new "
        "fingerprints):\n  " + "\n  ".join(problems))


def test_drift_check_sees_a_changed_function(tmp_path, monkeypatch):
    """The drift check fails for a changed body and names function and model."""
    real = fingerprint.functions()
    model, path, name, fp = real[0]
    changed = [(model, path, name, "0" * 12)] + real[1:]
    monkeypatch.setattr(fingerprint, "functions", lambda: changed)
    problems = fingerprint.check()
    assert len(problems) == 1 and name in problems[0] and model in problems[0], \
        problems
