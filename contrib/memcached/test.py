#!/usr/bin/env python3
"""make memcached-test: outside suites on stock memcached and on memcached
with libcht, plus our concurrency check.

  1. memcached's own suite (what `make test` of the memcached tree runs):
     ./sizes, ./testapp and `prove -j2 t/` in build/memcached-stock and in
     build/memcached. Tests failing on both are listed (environment); a test
     failing only on ours is a failure.
  2. memccapable (libmemcached-tools) against both servers: every test that
     passes on stock must pass on ours.
  3. contrib/memcached/concurrency.py (N clients on overlapping keys while the
     table grows to --fill items and shrinks back) against ours plain, under
     AddressSanitizer and under ThreadSanitizer; a sanitizer report in the
     server's output is a failure, and so is a ThreadSanitizer data race in
     which either access is made by libcht or by a lock-free reader of our
     patch (races between memcached's own accesses are counted; the
     unpatched stock-tsan build shows the same kinds). Also against stock
     (the oracle must hold there too; stock never shrinks its table).
  4. Negative controls: the same check against two builds whose GET fast
     path is broken on purpose (build.sh cht-broken1: the item is copied
     after leaving the reader section and waiting for the pending frees;
     cht-broken2: the item of another key is returned). The check must fail
     on both with a wrong GET value (a value not SET for that key, or bytes
     that are not a value at all); if it passes on either, the target fails.

Logs and a summary go to build/memcached-test/. Exit 0 if all passed.
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time

from mcnet import free_port

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = os.path.join(ROOT, "build")
OUT = os.path.join(B, "memcached-test")
TREES = {"stock": "memcached-stock", "cht": "memcached",
         "cht-asan": "memcached-asan", "cht-tsan": "memcached-tsan",
         "stock-tsan": "memcached-stock-tsan",
         "cht-broken1": "memcached-broken1", "cht-broken2": "memcached-broken2"}
# Functions of our patch that read item headers without the item lock.
OUR_READERS = ("process_get_fast", "assoc_key_equal", "assoc_equal", "assoc_item_key",
               "assoc_find_rcu", "assoc_hash")
# libcht's code: its sources, and the inline paths of its installed headers
# (cht_find_fast(), cht_insert_fast() and the walk are inlined into assoc.c).
LIBCHT_SRC = re.compile(r"(?:common/adt/cht\.c|uspace/lib/|"
                        r"libcht-prefix/include/|common/include/adt/cht)")
# The first frame of each access of a race report ("Read of size 2 at ... by
# thread T1:", "Previous atomic write of size 2 ...") and the frames under it.
ACCESS_RE = re.compile(r"^  (?:Previous )?(?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite) of size \d+ at .*?:\n"
                       r"((?:    #\d+ .*\n)+)", re.M)
# Sanitizer interceptors (memcpy, memcmp...) are not the accessing code.
INTERCEPTOR = re.compile(r"sanitizer_common|tsan_interceptors|/tsan/|^__tsan|^__interceptor")
# The negative controls must be caught by the oracle: a GET value that was
# not SET for its key, or bytes that are not a value.
ORACLE_FAIL = re.compile(r"not a value set for it|returned a value no client SET|"
                         r"filler: f\d+ returned|bad GET data terminator|bad GET reply line|"
                         r"counter \S+ holds")
NEGATIVE_CONTROLS = ("cht-broken1", "cht-broken2")
SAN_RE = re.compile(r"ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|"
                    r"ERROR: LeakSanitizer")


def log(msg):
    print(msg, flush=True)


def run_suite(variant):
    """sizes, testapp and prove in the tree; returns (failed set, skipped, ok, log)."""
    tree = os.path.join(B, TREES[variant])
    path = os.path.join(OUT, "suite-%s.log" % variant)
    failed = set()
    with open(path, "w") as f:
        for prog in ("./sizes", "./testapp"):
            r = subprocess.run([prog], cwd=tree, stdout=f, stderr=subprocess.STDOUT,
                               timeout=900)
            if r.returncode != 0:
                failed.add(prog)
        f.flush()
        t0 = time.time()
        r = subprocess.run(["prove", "-j2", "t/"], cwd=tree, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=3600, text=True)
        f.write(r.stdout)
    out = r.stdout
    if "Test Summary Report" in out:
        for line in out.split("Test Summary Report", 1)[1].splitlines():
            m = re.match(r"^(t/\S+\.t)\s+\(", line)
            if m:
                failed.add(m.group(1))
    if r.returncode != 0 and not failed:
        failed.add("prove (exit %d)" % r.returncode)
    skipped = sorted(set(re.findall(r"^(t/\S+\.t) \.+ skipped", out, re.M)))
    files = re.search(r"Files=(\d+), Tests=(\d+)", out)
    return failed, skipped, files.groups() if files else ("?", "?"), \
        time.time() - t0, path


class Server:
    def __init__(self, variant, args, name):
        self.port = free_port()
        exe = os.path.join(B, TREES[variant], "memcached")
        cmd = [exe, "-p", str(self.port), "-U", "0", "-l", "127.0.0.1"] + args
        if os.geteuid() == 0:
            cmd += ["-u", "root"]
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
        env["TSAN_OPTIONS"] = "halt_on_error=0:report_signal_unsafe=0"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1"
        self.errpath = os.path.join(OUT, name + ".server.log")
        self.err = open(self.errpath, "w")
        self.p = subprocess.Popen(cmd, stdout=self.err, stderr=subprocess.STDOUT, env=env)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.p.poll() is not None:
                    break
                time.sleep(0.1)
        raise RuntimeError("%s did not start (see %s)" % (exe, self.errpath))

    def stop(self):
        """Stops the server; returns (exit status, sanitizer report lines)."""
        alive = self.p.poll() is None
        if alive:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()
        text = open(self.errpath, errors="replace").read()
        return alive, [l for l in text.splitlines() if SAN_RE.search(l)]


def run_capable(variant):
    srv = Server(variant, ["-t", "2", "-m", "64"], "memccapable-%s" % variant)
    try:
        r = subprocess.run(["memccapable", "-h", "127.0.0.1", "-p", str(srv.port), "-t", "10"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
    finally:
        alive, _ = srv.stop()
    with open(os.path.join(OUT, "memccapable-%s.log" % variant), "w") as f:
        f.write(r.stdout)
    res = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(.*?)\s+\[(\w+)\]\s*$", line)
        if m:
            res[m.group(1).strip()] = m.group(2)
    return res, alive


def concurrency_run(variant, fill, clients, extra, timeout):
    """Starts @variant's server, runs concurrency.py against it (extra
    arguments @extra) and stops it; the check's output goes to
    concurrency-VARIANT.log. Returns (output, exit status, server alive at
    the end, sanitizer lines, server log path, seconds); a timeout is exit
    status None."""
    t0 = time.time()
    srv = Server(variant, ["-t", "4", "-m", "1024", "-o", "hashpower=14"],
                 "concurrency-%s" % variant)
    cmd = [sys.executable, os.path.join(ROOT, "contrib", "memcached", "concurrency.py"),
           "--port", str(srv.port), "--fill", str(fill), "--clients", str(clients)] + extra
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        out, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + "\nTIMEOUT", None
    alive, san = srv.stop()
    with open(os.path.join(OUT, "concurrency-%s.log" % variant), "w") as f:
        f.write(out)
    return out, rc, alive, san, srv.errpath, time.time() - t0


def run_concurrency(variant, fill, clients):
    extra = ["--min-power", str(max(15, (fill // 2).bit_length()))]
    if variant.startswith("stock"):
        extra.append("--no-shrink-check")     # stock never shrinks its table
    out, rc, alive, san, errpath, secs = concurrency_run(variant, fill, clients, extra, 3600)
    races = classify_tsan(errpath) if variant.endswith("tsan") else {}
    if variant.endswith("tsan"):
        # Data races are judged by who makes the accesses (see
        # classify_tsan); any other sanitizer line still fails.
        san = [l for l in san if "ThreadSanitizer: data race" not in l]
        ok = rc == 0 and alive and not san and races.get("libcht", 0) == 0 \
            and races.get("ours", 0) == 0
    else:
        ok = rc == 0 and alive and not san
    return ok, out.strip().splitlines()[-3:], alive, san, secs, races


def access_tops(rep):
    """The accessing function and source of each access of a race report:
    the first frame that is not a sanitizer interceptor."""
    tops = []
    for m in ACCESS_RE.finditer(rep):
        for fr in m.group(1).splitlines():
            f = fr.split()
            if len(f) >= 3 and not INTERCEPTOR.search(f[1]) and not INTERCEPTOR.search(f[2]):
                tops.append((f[1], f[2]))
                break
    return tops


def classify_tsan(path):
    """Counts ThreadSanitizer data race reports by who makes the accesses:
    libcht: either access is made by libcht (cht.c, uspace/lib); ours: either
            access is made by a lock-free reader of our patch (the GET fast
            path, the table's hash and key-compare callbacks) - both failures:
            the fields they read that memcached's locked code changes are
            atomics on both sides (patch 0002); memcached: both accesses are
            memcached's own code (e.g. it reads it_flags under an LRU lock
            while the item lock's holder changes it; stock-tsan shows the same
            kinds in the unpatched build; the writer may be memcached's LRU
            bump called by the fast path under the item lock)."""
    text = open(path, errors="replace").read()
    counts = {"libcht": 0, "ours": 0, "memcached": 0}
    for rep in text.split("WARNING: ThreadSanitizer: data race")[1:]:
        rep = rep.split("SUMMARY:")[0]
        tops = access_tops(rep)
        if any(LIBCHT_SRC.search(src) for _, src in tops):
            counts["libcht"] += 1
        elif any(fn in OUR_READERS for fn, _ in tops):
            counts["ours"] += 1
        else:
            counts["memcached"] += 1
    return counts


def run_negative_control(variant, fill, clients):
    """The concurrency check against a deliberately broken build: returns
    (caught, first oracle failure line or why not, number of such lines,
    seconds)."""
    out, rc, _, _, _, secs = concurrency_run(variant, fill, clients, ["--min-power", "0"],
                                             1800)
    hits = [l for l in out.splitlines() if l.startswith("FAIL") and ORACLE_FAIL.search(l)]
    caught = rc not in (0, None) and bool(hits)
    why = hits[0] if hits else "no wrong GET value reported (exit %s)" % rc
    return caught, why, len(hits), secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fill", type=int, default=1000000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--skip-suite", action="store_true")
    ap.add_argument("--skip-capable", action="store_true")
    ap.add_argument("--skip-concurrency", action="store_true")
    ap.add_argument("--variants", default="cht,cht-asan,cht-tsan,stock,stock-tsan",
                    help="concurrency check variants")
    ap.add_argument("--skip-negative", action="store_true")
    ap.add_argument("--negative-fill", type=int, default=200000,
                    help="items the filler sets in the negative-control runs")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    summary = []
    ok = True

    def say(line):
        log(line)
        summary.append(line)

    if not args.skip_suite:
        res = {}
        for v in ("stock", "cht"):
            log("== memcached's suite (sizes, testapp, prove -j2 t/) on %s" % v)
            res[v] = run_suite(v)
            failed, skipped, (files, tests), secs, path = res[v]
            say("suite %-5s: %s test files, %s tests, %.0f s; failed: %s; skipped: %d (%s)"
                % (v, files, tests, secs, ", ".join(sorted(failed)) or "none",
                   len(skipped), path))
        both = res["stock"][0] & res["cht"][0]
        only = res["cht"][0] - res["stock"][0]
        only_stock = res["stock"][0] - res["cht"][0]
        say("suite: failing on both (environment): %s" % (", ".join(sorted(both)) or "none"))
        say("suite: failing only on stock: %s" % (", ".join(sorted(only_stock)) or "none"))
        say("suite: failing only on libcht: %s" % (", ".join(sorted(only)) or "none"))
        if only:
            ok = False

    if not args.skip_capable:
        cap = {}
        for v in ("stock", "cht"):
            log("== memccapable on %s" % v)
            cap[v], alive = run_capable(v)
            counts = {}
            for st in cap[v].values():
                counts[st] = counts.get(st, 0) + 1
            say("memccapable %-5s: %s%s" % (v, ", ".join("%s %d" % kv for kv in sorted(counts.items())),
                                            "" if alive else " (server died)"))
            if not alive:
                ok = False
        regress = [t for t, st in cap["stock"].items()
                   if st == "pass" and cap["cht"].get(t) != "pass"]
        say("memccapable: passing on stock but not on libcht: %s" % (", ".join(regress) or "none"))
        if regress or not cap["cht"]:
            ok = False

    if not args.skip_concurrency:
        for v in args.variants.split(","):
            log("== concurrency check on %s (fill %d, %d clients)" % (v, args.fill, args.clients))
            good, tail, alive, san, secs, races = run_concurrency(v, args.fill, args.clients)
            say("concurrency %-10s: %s in %.0f s; %s%s" % (
                v, "PASS" if good else "FAIL", secs, " | ".join(tail),
                "" if alive else " | SERVER DIED"))
            if races:
                say("    ThreadSanitizer data races: %d with an access by libcht (must be 0), "
                    "%d with an access by a lock-free reader of our patch (must be 0), "
                    "%d between memcached's own accesses" %
                    (races["libcht"], races["ours"], races["memcached"]))
            for line in san[:5]:
                say("    sanitizer: " + line)
            if san or races:
                say("    (%d other sanitizer lines; see %s)" % (len(san), os.path.join(OUT, "concurrency-%s.server.log" % v)))
            if not good:
                ok = False

    if not args.skip_negative:
        for v in NEGATIVE_CONTROLS:
            log("== negative control: concurrency check on %s (must fail)" % v)
            caught, why, n, secs = run_negative_control(v, args.negative_fill, args.clients)
            say("negative control %s: %s in %.0f s (%d wrong GET values reported; first: %s)"
                % (v, "caught" if caught else "NOT CAUGHT", secs, n, why))
            if not caught:
                ok = False

    say("memcached-test: %s" % ("PASS" if ok else "FAIL"))
    with open(os.path.join(OUT, "summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
