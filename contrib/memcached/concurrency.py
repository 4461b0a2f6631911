#!/usr/bin/env python3
"""Concurrency check of a memcached server (ours: libcht; also runs on stock).

N client processes do SET/GET/GETS/DELETE/APPEND/INCR on a small set of
overlapping keys while a filler process grows the table from empty to
--fill items (1 M by default) and deletes them all again (the table shrinks
back). The oracle: every value a GET returns was SET for that key, never
another key's and never freed memory:

  - contended keys "k<j>" only ever hold "k<j>:<client>:<seq>" followed by
    any number of ":a" (APPEND); the value must match that pattern with the
    same j, and "<client>:<seq>" must be a SET some client really issued
    before the GET returned (each client reports its SETs at the end);
  - counter keys "n<j>" only ever hold a decimal number (SET 0, INCR);
  - filler keys "f<i>" hold "f<i>:<i*7919 % 1000003>" and are read back
    while the table grows.

The check also reads `stats`: the hash table must have grown (hash_power_level
at least 19 with --fill 1000000) and shrunk back to its start after the
deletes. It exits 0 only if every check passed. The server is started by the
caller (contrib/memcached/test.py) or given with --port.
"""
import argparse
import multiprocessing as mp
import os
import random
import re
import sys
import time

import mcnet

NKEYS = 32      # contended keys k0..k31 and counters n0..n31


class Conn(mcnet.Conn):
    def __init__(self, port):
        super().__init__(port, timeout=120)

    def send(self, data):
        self.s.sendall(data)

    def line(self):
        self.fill_until(lambda buf: b"\r\n" in buf)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        self.fill_until(lambda buf: len(buf) >= n)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def cmd(self, data):
        self.send(data)
        return self.line()

    def get_values(self, req):
        """Sends a get/gets request; returns {key: value}."""
        self.send(req)
        out = {}
        while True:
            line = self.line()
            if line == b"END":
                return out
            parts = line.split()
            if parts[0] != b"VALUE":
                raise AssertionError("bad GET reply line %r" % line)
            n = int(parts[3])
            data = self.exact(n + 2)
            if data[-2:] != b"\r\n":
                raise AssertionError("bad GET data terminator %r" % data)
            out[parts[1]] = data[:-2]

    def stats(self):
        self.send(b"stats\r\n")
        st = {}
        while True:
            line = self.line()
            if line == b"END":
                return st
            _, k, v = line.split(b" ", 2)
            st[k.decode()] = v.decode()


K_RE = re.compile(rb"^k(\d+):(\d+):(\d+)((?::a)*)$")


def client(idx, port, stop, q):
    """One contended client until @stop is set; puts its results on q."""
    rnd = random.Random(idx * 7777 + os.getpid())
    errors = []
    sets = set()        # (j, seq) this client stored
    seen = []           # (j, client, seq) returned by GETs
    counts = {"get": 0, "hit": 0, "set": 0, "del": 0, "append": 0, "incr": 0}
    seq = 0
    try:
        c = Conn(port)
        while not stop.is_set() and len(errors) < 10:
            op = rnd.random()
            j = rnd.randrange(NKEYS)
            if op < 0.50:
                many = rnd.random() < 0.3
                js = [j] + ([rnd.randrange(NKEYS) for _ in range(3)] if many else [])
                verb = b"gets " if rnd.random() < 0.2 else b"get "
                keys = [b"k%d" % x for x in js] + [b"n%d" % j]
                vals = c.get_values(verb + b" ".join(keys) + b"\r\n")
                counts["get"] += 1
                for key, v in vals.items():
                    counts["hit"] += 1
                    if key.startswith(b"n"):
                        if not v.strip().isdigit():
                            errors.append("counter %r holds %r" % (key, v))
                        continue
                    m = K_RE.match(v)
                    if not m or b"k" + m.group(1) != key:
                        errors.append("key %r returned %r (not a value set for it)"
                                      % (key, v[:80]))
                        continue
                    seen.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
            elif op < 0.70:
                seq += 1
                v = b"k%d:%d:%d" % (j, idx, seq)
                sets.add((j, seq))
                r = c.cmd(b"set k%d 0 0 %d\r\n%s\r\n" % (j, len(v), v))
                counts["set"] += 1
                if r != b"STORED":
                    errors.append("set k%d: %r" % (j, r))
            elif op < 0.78:
                r = c.cmd(b"delete k%d\r\n" % j)
                counts["del"] += 1
                if r not in (b"DELETED", b"NOT_FOUND"):
                    errors.append("delete k%d: %r" % (j, r))
            elif op < 0.88:
                r = c.cmd(b"append k%d 0 0 2\r\n:a\r\n" % j)
                counts["append"] += 1
                if r not in (b"STORED", b"NOT_STORED"):
                    errors.append("append k%d: %r" % (j, r))
            elif op < 0.92:
                r = c.cmd(b"set n%d 0 0 1\r\n0\r\n" % j)
                if r != b"STORED":
                    errors.append("set n%d: %r" % (j, r))
            else:
                r = c.cmd(b"incr n%d %d\r\n" % (j, rnd.randrange(1, 1000)))
                counts["incr"] += 1
                if not (r.isdigit() or r == b"NOT_FOUND"):
                    errors.append("incr n%d: %r" % (j, r))
    except Exception as e:  # connection loss = server crash
        errors.append("client %d: %s: %s" % (idx, type(e).__name__, e))
    q.put((idx, errors, sorted(sets), seen, counts))


def fval(i):
    return b"f%d:%d" % (i, i * 7919 % 1000003)


def filler(port, nfill, q):
    """Grows the table to nfill items and deletes them all; reads some back."""
    errors = []
    log = []
    try:
        c = Conn(port)
        st0 = c.stats()
        log.append(("start", int(st0["hash_power_level"]), int(st0["curr_items"])))
        batch = 2000
        maxpower = int(st0["hash_power_level"])
        for base in range(0, nfill, batch):
            req = []
            for i in range(base, min(base + batch, nfill)):
                v = fval(i)
                req.append(b"set f%d 0 0 %d noreply\r\n%s\r\n" % (i, len(v), v))
            c.send(b"".join(req))
            # read back a sample (also a barrier for the noreply batch)
            sample = [base + k for k in range(0, batch, 97) if base + k < nfill]
            vals = c.get_values(b"get " + b" ".join(b"f%d" % i for i in sample) + b"\r\n")
            for i in sample:
                v = vals.get(b"f%d" % i)
                if v != fval(i):
                    errors.append("filler: f%d returned %r" % (i, v))
            if base % 100000 == 0:
                st = c.stats()
                maxpower = max(maxpower, int(st["hash_power_level"]))
            if len(errors) > 10:
                break
        time.sleep(1.5)     # hash stats are refreshed by the 1 s clock
        st = c.stats()
        maxpower = max(maxpower, int(st["hash_power_level"]))
        log.append(("full", int(st["hash_power_level"]), int(st["curr_items"])))
        for base in range(0, nfill, batch):
            c.send(b"".join(b"delete f%d noreply\r\n" % i
                            for i in range(base, min(base + batch, nfill))))
            if base % 20000 == 0:
                vals = c.get_values(b"get f%d f%d\r\n" % (base, nfill - 1))
                if b"f%d" % base in vals:
                    errors.append("filler: f%d still there after its delete" % base)
                v = vals.get(b"f%d" % (nfill - 1))
                if v is not None and v != fval(nfill - 1):
                    errors.append("filler: f%d returned %r" % (nfill - 1, v))
        c.cmd(b"version\r\n")
        power = None
        for _ in range(30):     # the shrink runs in the background
            time.sleep(1)
            st = c.stats()
            power = int(st["hash_power_level"])
            if power <= int(st0["hash_power_level"]):
                break
        log.append(("emptied", power, int(st["curr_items"])))
        q.put(("filler", errors, maxpower, log))
    except Exception as e:
        errors.append("filler: %s: %s" % (type(e).__name__, e))
        q.put(("filler", errors, 0, log))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--fill", type=int, default=1000000)
    ap.add_argument("--min-power", type=int, default=19,
                    help="hash_power_level the table must reach (0: no check)")
    ap.add_argument("--no-shrink-check", action="store_true",
                    help="stock memcached never shrinks its table")
    args = ap.parse_args()

    q = mp.Queue()
    fq = mp.Queue()
    stop = mp.Event()
    procs = [mp.Process(target=client, args=(i, args.port, stop, q))
             for i in range(args.clients)]
    for p in procs:
        p.start()
    fp = mp.Process(target=filler, args=(args.port, args.fill, fq))
    fp.start()
    results = [fq.get(timeout=3600)]    # the clients run while the filler works
    stop.set()
    results += [q.get(timeout=600) for _ in range(args.clients)]
    fp.join()
    for p in procs:
        p.join()

    ok = True
    all_sets = set()
    seen = []
    total = {}
    for r in results:
        if r[0] == "filler":
            _, errs, maxpower, log = r
            print("filler: %s" % ", ".join("%s: hash_power_level %s, %s items" % x for x in log))
            for e in errs:
                print("FAIL " + e)
                ok = False
            if args.min_power and maxpower < args.min_power:
                print("FAIL the table did not grow: hash_power_level max %d < %d"
                      % (maxpower, args.min_power))
                ok = False
            if not args.no_shrink_check and log and log[-1][0] == "emptied" \
                    and log[-1][1] > log[0][1]:
                print("FAIL the table did not shrink back: hash_power_level %s > %s"
                      % (log[-1][1], log[0][1]))
                ok = False
        else:
            idx, errs, sets, s, counts = r
            for e in errs:
                print("FAIL " + e)
                ok = False
            all_sets.update((j, idx, sq) for j, sq in sets)
            seen.extend(s)
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
    bogus = [x for x in seen if x not in all_sets]
    if bogus:
        ok = False
        print("FAIL %d GETs returned a value no client SET for that key, e.g. %r"
              % (len(bogus), bogus[:5]))
    print("clients: %d, ops %s, %d GET values checked against %d SETs"
          % (args.clients, total, len(seen), len(all_sets)))
    print("concurrency check: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
