#!/usr/bin/env python3
"""Runs libcht's userspace test suites (``make -C uspace test`` calls it).

Every suite is one run of a test program from one build variant:

* ``plain``  -O2, linked against libcht.a
* ``tsan``   -fsanitize=thread (library and test instrumented)
* ``asan``   -fsanitize=address,undefined (leak checking on)
* ``broken`` the negative control (CHT_RCU_FI_NO_WAIT configured): the
  RCU's synchronize does not wait; the torture test must FAIL there, or it
  proves nothing.

A run passes when the program exits 0 (or, for the negative control, exits
non-zero with the oracle's verdict) and its output has no sanitizer report.
ThreadSanitizer on kernels with high mmap ASLR entropy can die with
"unexpected memory mapping"; the run is then repeated under ``setarch -R``
(ASLR off for that process) and the retry is noted.

The install check installs into a scratch prefix, copies uspace/app/example
out of the tree and builds it with nothing but ``pkg-config --cflags --libs
cht`` (PKG_CONFIG_PATH pointing at the scratch prefix), runs it, and checks
that it loaded the installed libcht.so; it also checks a DESTDIR install.

Usage: run.py [--build DIR] [--example-only] [--list] [NAME-SUBSTRING ...]
Environment: TEST_SCALE multiplies the durations (e.g. 0.5 or 3).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

USPACE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(USPACE)
DEFAULT_BUILD = os.path.join(REPO, "build", "uspace")

SANITIZER_ENV = {
    "TSAN_OPTIONS": "halt_on_error=1:exitcode=66:second_deadlock_stack=1",
    "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:exitcode=67:"
                    "check_initialization_order=1:strict_string_checks=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=68",
}

#: Text that means a sanitizer (or the library) reported a problem.
REPORT_PATTERNS = [
    r"WARNING: ThreadSanitizer",
    r"FATAL: ThreadSanitizer",
    r"ERROR: AddressSanitizer",
    r"ERROR: LeakSanitizer",
    r"runtime error:",
    r"SUMMARY: \w+Sanitizer",
    r"libcht: assertion failed",
]

TSAN_MMAP = "unexpected memory mapping"


class Suite:
    """One run of one test program from one build variant."""

    def __init__(self, variant, program, args=(), env=None, expect_fail=False,
                 note=""):
        self.variant = variant
        self.program = program
        self.args = [str(a) for a in args]
        self.env = dict(env or {})
        self.expect_fail = expect_fail
        self.note = note

    @property
    def name(self):
        parts = [self.variant, self.program] + self.args
        parts += ["%s=%s" % kv for kv in sorted(self.env.items())]
        return " ".join(parts)

    @property
    def ident(self):
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", self.name)


def scaled(seconds):
    """The duration argument of a test program: ``seconds`` unscaled.

    The programs multiply it by TEST_SCALE themselves (tu_seconds() in
    tutil.h; test_rcutorture also shrinks its flood when TEST_SCALE < 1), so
    scaling it here as well applied TEST_SCALE twice.
    """
    return seconds


def suites():
    """The matrix ``make test`` runs (about a minute on 2 cores)."""
    s = []
    for v in ("plain", "tsan", "asan"):
        s.append(Suite(v, "test_api"))
        s.append(Suite(v, "test_stress", [scaled(3), 4]))
        s.append(Suite(v, "test_rcutorture", [scaled(3), 3]))
        s.append(Suite(v, "test_workfail"))
        s.append(Suite(v, "test_sigsafe", [scaled(2)]))
        s.append(Suite(v, "test_map", [scaled(1.5)]))
    # The fence fallback of the RCU (as on kernels without membarrier).
    s.append(Suite("plain", "test_rcutorture", [scaled(2), 3],
                   {"CHT_RCU_FLAVOUR": "fence"}))
    s.append(Suite("tsan", "test_rcutorture", [scaled(2), 3],
                   {"CHT_RCU_FLAVOUR": "fence"}))
    s.append(Suite("plain", "test_stress", [scaled(2), 2],
                   {"CHT_RCU_FLAVOUR": "fence"}))
    s.append(Suite("plain", "test_sigsafe", [scaled(2)],
                   {"CHT_RCU_FLAVOUR": "fence"}))
    # Helper threads that cannot start for want of address space (the
    # sanitizers' shadow memory does not fit under a lowered RLIMIT_AS).
    s.append(Suite("plain", "test_workfail", ["all", "rlimit"]))
    # Negative control: must fail.
    s.append(Suite("broken", "test_rcutorture", [scaled(3), 3],
                   expect_fail=True,
                   note="negative control: synchronize does not wait"))
    return s


def has_report(text):
    for pat in REPORT_PATTERNS:
        m = re.search(pat, text)
        if m:
            return m.group(0)
    return None


def _exec(argv, env, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        out = p.stdout.decode("utf-8", "replace")
        rc = p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        out += "\n[run.py: timeout after %d s]\n" % timeout
        rc = None
    return rc, out, time.monotonic() - t0


def run_suite(suite, build=DEFAULT_BUILD, timeout=180):
    """Runs one suite. Returns (ok, message, output, seconds)."""
    exe = os.path.join(build, suite.variant, suite.program)
    if not os.path.isfile(exe):
        return False, "missing %s (run make -C uspace tests)" % exe, "", 0.0
    env = dict(os.environ)
    env.update(SANITIZER_ENV)
    env.update(suite.env)
    argv = [exe] + suite.args
    rc, out, secs = _exec(argv, env, timeout)
    note = ""
    if suite.variant == "tsan" and TSAN_MMAP in out:
        rc, out, secs = _exec(["setarch", os.uname().machine, "-R"] + argv,
                              env, timeout)
        note = " (rerun under setarch -R: TSan and mmap ASLR)"
    log_dir = os.path.join(build, "logs")
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, suite.ident + ".log"), "w") as f:
        f.write("$ %s\n%s" % (" ".join(argv), out))
    report = has_report(out)
    if rc is None:
        return False, "timeout" + note, out, secs
    if suite.expect_fail:
        if rc == 1 and "FAILED" in out and not report:
            return True, "failed as it must" + note, out, secs
        return False, "the negative control did not fail (exit %s)" % rc, \
            out, secs
    if report:
        return False, "sanitizer report: %s%s" % (report, note), out, secs
    if rc != 0:
        return False, "exit status %s%s" % (rc, note), out, secs
    if "PASSED" not in out:
        return False, "no PASSED verdict" + note, out, secs
    return True, "ok" + note, out, secs


def _run(cmd, env=None, cwd=None):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def make_env():
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    return env


def example_check(build=DEFAULT_BUILD, keep=False):
    """Install into a scratch prefix; build and run the example through
    pkg-config alone. Returns (ok, message, log)."""
    log = []
    tmp = tempfile.mkdtemp(prefix="libcht-install-")
    try:
        prefix = os.path.join(tmp, "prefix")
        env = make_env()
        rc, out = _run(["make", "-C", USPACE, "--no-print-directory",
                        "install", "PREFIX=" + prefix, "B=" + build], env)
        log.append(out)
        if rc != 0:
            return False, "make install failed", "\n".join(log)
        # DESTDIR: staged under DESTDIR, pc file still names PREFIX.
        dest = os.path.join(tmp, "dest")
        rc, out = _run(["make", "-C", USPACE, "--no-print-directory",
                        "install", "PREFIX=/opt/cht", "DESTDIR=" + dest,
                        "B=" + build], env)
        log.append(out)
        if rc != 0:
            return False, "make install DESTDIR=... failed", "\n".join(log)
        staged = ["lib/libcht.a", "lib/libcht.so", "lib/libcht.so.2",
                  "lib/libcht.so.2.0.0", "lib/pkgconfig/cht.pc",
                  "include/cht/cht.h", "include/cht/cht_rcu.h",
                  "include/cht/adt/cht.h", "include/cht/adt/cht_env_posix.h"]
        for f in staged:
            if not os.path.exists(os.path.join(dest, "opt/cht", f)):
                return False, "DESTDIR install lacks %s" % f, "\n".join(log)
        with open(os.path.join(dest, "opt/cht/lib/pkgconfig/cht.pc")) as f:
            if "prefix=/opt/cht" not in f.read():
                return False, "DESTDIR leaked into cht.pc", "\n".join(log)

        # The example, copied out of the tree: only pkg-config finds libcht.
        src = os.path.join(tmp, "example")
        shutil.copytree(os.path.join(USPACE, "app", "example"), src)
        env = make_env()
        env["PKG_CONFIG_PATH"] = os.path.join(prefix, "lib", "pkgconfig")
        env.pop("LD_LIBRARY_PATH", None)
        env.pop("CPATH", None)
        env.pop("C_INCLUDE_PATH", None)
        env.pop("LIBRARY_PATH", None)
        rc, out = _run(["pkg-config", "--cflags", "--libs", "cht"], env)
        log.append("pkg-config --cflags --libs cht: " + out)
        if rc != 0:
            return False, "pkg-config does not find cht", "\n".join(log)
        rc, out = _run(["make", "--no-print-directory"], env, cwd=src)
        log.append(out)
        if rc != 0:
            return False, "the example does not build", "\n".join(log)
        exe = os.path.join(src, "example")
        rc, out = _run(["ldd", exe], env)
        log.append(out)
        m = re.search(r"libcht\.so\.2 => (\S+)", out)
        if not m or not os.path.realpath(m.group(1)).startswith(
                os.path.realpath(prefix)):
            return False, "the example does not load the installed libcht", \
                "\n".join(log)
        rc, out = _run([exe], env)
        log.append(out)
        if rc != 0 or "example: OK" not in out:
            return False, "the example failed (exit %s)" % rc, "\n".join(log)
        # The managed map's example (cht_map.h), built by the same Makefile.
        rc, out = _run([os.path.join(src, "map_example")], env)
        log.append(out)
        if rc != 0 or "map_example: OK" not in out:
            return False, "the map example failed (exit %s)" % rc, \
                "\n".join(log)
        return True, "installed, built with pkg-config alone, ran", \
            "\n".join(log)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=DEFAULT_BUILD)
    ap.add_argument("--example-only", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("filters", nargs="*")
    a = ap.parse_args()
    if a.example_only:
        ok, msg, log = example_check(a.build)
        print("%s  install + example: %s" % ("PASS" if ok else "FAIL", msg))
        if not ok:
            print(log)
        return 0 if ok else 1
    todo = [s for s in suites()
            if not a.filters or any(f in s.name for f in a.filters)]
    if a.list:
        for s in todo:
            print(s.name)
        return 0
    failed = 0
    t0 = time.monotonic()
    for s in todo:
        ok, msg, out, secs = run_suite(s, a.build)
        print("%s  %-55s %5.1f s  %s" % ("PASS" if ok else "FAIL", s.name,
                                         secs, msg), flush=True)
        if not ok:
            failed += 1
            print("---- output (last 60 lines) ----")
            print("\n".join(out.splitlines()[-60:]))
            print("----")
    print("%d suites, %d failed, %.0f s" % (len(todo), failed,
                                             time.monotonic() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
