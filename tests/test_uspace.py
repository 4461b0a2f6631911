"""The userspace CHT library (uspace/): build it, run its suites, install it.

Each suite of uspace/tests/run.py is one test here: the API unit tests, the
multithreaded stress with resizes and the RCU torture oracle, each built
plain, with ThreadSanitizer and with AddressSanitizer+UBSan (a sanitizer
report fails the test), the RCU's fence fallback, and the negative control
(a build whose synchronize does not wait: the torture test must fail, and
for the oracle's own reason: a read saw an object older than one grace period
or a freed object; any other failure does not count). Then
`make -C uspace install` into a scratch prefix and the example built against
it with `pkg-config --cflags --libs cht` alone.

Needs only gcc, make and pkg-config (tools/ensure-deps.sh); not QEMU.
"""

import os
import re
import subprocess

import pytest

from uspace.tests import run as uspace_run  # (pytest.ini's pythonpath)
from patterns import USPACE_ORACLE_FAILURE_RE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USPACE = os.path.join(REPO, "uspace")
BUILD = os.path.join(REPO, "build", "uspace")




def _tail(text, n=60):
    return "\n".join(text.splitlines()[-n:])


@pytest.fixture(scope="module")
def uspace_build():
    """Builds the library and every test variant once."""
    jobs = "-j%d" % max(1, os.cpu_count() or 1)
    proc = subprocess.run(["make", "-C", USPACE, "--no-print-directory", jobs,
                           "tests", "B=" + BUILD],
                          env=uspace_run.make_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        pytest.fail("make -C uspace tests failed:\n" + _tail(out), False)
    return BUILD


@pytest.mark.parametrize("suite", uspace_run.suites(),
                         ids=lambda s: s.ident)
def test_uspace_suite(uspace_build, suite):
    ok, msg, out, secs = uspace_run.run_suite(suite, uspace_build)
    assert ok, "%s: %s (%.1f s)\n%s" % (suite.name, msg, secs, _tail(out))
    if suite.expect_fail:
        assert USPACE_ORACLE_FAILURE_RE.search(out), (
            "%s: the negative control failed, but not with the oracle's "
            "reason (an object older than one grace period, a freed object "
            "seen):\n%s" % (suite.name, _tail(out)))


def test_oracle_reason_regex():
    """The oracle reasons match; other failures do not (no build)."""
    good = ("FAIL /x/uspace/tests/test_rcutorture.c:320: beyond == 0: 2754 "
            "reads saw an object older than one grace period\n"
            "test_rcutorture: FAILED (1 checks)\n")
    assert USPACE_ORACLE_FAILURE_RE.search(good)
    assert USPACE_ORACLE_FAILURE_RE.search(
        "FAIL t/test_rcutorture.c:322: dead_seen == 0: 2 reads saw a freed "
        "object\n")
    assert not USPACE_ORACLE_FAILURE_RE.search(
        "FAIL t/test_rcutorture.c:278: stalls == 0: stalls = 1, expected 0 = "
        "0\ntest_rcutorture: FAILED (1 checks)\n")
    assert not USPACE_ORACLE_FAILURE_RE.search(good.replace("2754", "0"))


def test_uspace_install_example(uspace_build):
    ok, msg, log = uspace_run.example_check(uspace_build)
    assert ok, "%s\n%s" % (msg, _tail(log, 80))
