"""make memcached-bench: stock memcached vs memcached with libcht, same source.

Three parts, all over loopback on this host (client and server share its CPUs):

  1. Throughput (memcaslap, libmemcached-tools): for server -t 1 / -t 2, both
     builds up at once, each with a warm-up fill of 1 M keys (memcaslap,
     100 % SET), then GET:SET 9:1 and 99:1 runs on the two builds
     alternately, --repeats times (stock, libcht, libcht, stock, ...). While
     each run is in its steady state, the server is measured for a fixed
     window: requests from the server's own counters (cmd_get + cmd_set), CPU
     time of the server process from `perf stat -e task-clock -p PID`.
     Reported: requests/s and server CPU seconds per million requests,
     medians and every run, and the ratios of runs taken back to back.
  2. Instructions per request: `perf stat -e instructions` needs hardware
     counters, which this host's VM does not expose (perf prints
     "<not supported>"; the script checks and uses them when they work).
     Otherwise each build runs under valgrind's callgrind (-t 1, and -t 2
     with one client connection per worker thread): the 1 M-key
     fill uninstrumented, then a fixed, seeded stream of requests with
     instrumentation on; instructions per request = Ir / requests. Exact and
     independent of the host's load.
  3. Resize case (the paper's): server -t 2 starting at 2^12 buckets
     (-o hashpower=12) while memcaslap fills 1 M new keys; two probe clients
     GET 1000 resident keys in lock step and time every request: GET
     requests/s of the probes and their p50/p99/p99.9 latency.

memcaslap's keys are at least 16 bytes (it refuses shorter ones), so the keys
are 16 bytes, not 8-16; values are 32 bytes.

Results: bench/results/memcached/results.json, *.csv, *.png, and the section
between <!-- memcached:begin --> and <!-- memcached:end --> of bench/RESULTS.md.

A quick check of one part: --only throughput|instructions|resize runs that part
alone and writes its figures to --out (default build/memcached-bench/PART.json)
and nothing else (bench/results/memcached and RESULTS.md stay as they are);
--stock / --libcht take other binaries (e.g. a copy of the build before a
change), --threads the server thread counts, e.g. --only instructions
--threads 1 --libcht build/before/memcached.
"""
import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench import results_md

from .mcnet import Conn, free_port

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = os.path.join(ROOT, "build")
RES = os.path.join(ROOT, "bench", "results", "memcached")
BUILDS = {"stock": os.path.join(B, "memcached-stock", "memcached"),
          "libcht": os.path.join(B, "memcached", "memcached")}
MIXES = {"9:1": (0.1, 0.9), "99:1": (0.01, 0.99)}
NKEYS = 1 << 20


def log(msg):
    print(msg, flush=True)


def server_cmd(build, port, threads, extra=(), conns=4096):
    cmd = [BUILDS[build], "-p", str(port), "-U", "0", "-l", "127.0.0.1",
           "-t", str(threads), "-m", "2048", "-c", str(conns)] + list(extra)
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    return cmd


def wait_port(port, proc, secs=120):
    t0 = time.time()
    while time.time() - t0 < secs:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("server exited")
            time.sleep(0.1)
    raise RuntimeError("server did not start")


class Client(Conn):
    def __init__(self, port):
        super().__init__(port, timeout=600)

    def until(self, marker):
        self.fill_until(lambda buf: marker in buf, 1 << 20)
        i = self.buf.index(marker) + len(marker)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def stats(self):
        self.s.sendall(b"stats\r\n")
        out = self.until(b"END\r\n").decode()
        st = {}
        for line in out.split("\r\n"):
            p = line.split(" ")
            if len(p) == 3 and p[0] == "STAT":
                st[p[1]] = p[2]
        return st


def memcaslap_cfg(set_p, get_p):
    f = tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False)
    f.write("key\n16 16 1\nvalue\n32 32 1\ncmd\n0 %g\n1 %g\n" % (set_p, get_p))
    f.close()
    return f.name


def memcaslap(port, cfg, secs=None, count=None, conc=16, win="64k"):
    cmd = ["memcaslap", "-s", "127.0.0.1:%d" % port, "-T", "1", "-c", str(conc),
           "-w", win, "-X", "32", "-F", cfg]
    cmd += ["-t", "%ds" % secs] if secs else ["-x", str(count)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def perf_instructions_work():
    r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode == 0 and "not supported" not in r.stdout and \
        re.search(r"^\d+,", r.stdout, re.M) is not None


def perf_window(pid, secs, events):
    r = subprocess.run(["perf", "stat", "-x,", "-e", events, "-p", str(pid), "--",
                        "sleep", str(secs)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    vals = {}
    for line in r.stdout.splitlines():
        p = line.split(",")
        if len(p) >= 3:
            try:
                vals[p[2].split(":")[0]] = float(p[0])
            except ValueError:
                pass
    return vals


def fill(port):
    cfg = memcaslap_cfg(1, 0)
    p = memcaslap(port, cfg, count=NKEYS)
    out = p.communicate()[0]
    os.unlink(cfg)
    return out


def measure_window(srv, c, secs, use_hw):
    """Requests, hits and server CPU over one window of an ongoing run."""
    s0 = c.stats()
    ev = "task-clock" + (",instructions" if use_hw else "")
    pv = perf_window(srv.pid, secs, ev)
    s1 = c.stats()
    gets = int(s1["cmd_get"]) - int(s0["cmd_get"])
    sets = int(s1["cmd_set"]) - int(s0["cmd_set"])
    hits = int(s1["get_hits"]) - int(s0["get_hits"])
    return gets, sets, hits, pv, int(s1["curr_items"])


def throughput(args, use_hw):
    """For each -t: both servers up and filled, then the mixes run on them
    alternately (stock, libcht, libcht, stock, ...) --repeats times, so the
    two builds see the same host load as closely as one host allows."""
    rows = []
    for threads in args.threads:
        srvs, clients = {}, {}
        try:
            for build in BUILDS:
                port = free_port()
                srvs[build] = (subprocess.Popen(server_cmd(build, port, threads),
                                                stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL), port)
                wait_port(port, srvs[build][0])
            for build in BUILDS:
                srv, port = srvs[build]
                t0 = time.time()
                fill(port)
                clients[build] = Client(port)
                log("  %s -t %d: warm-up fill %d items in %.0f s" % (
                    build, threads, int(clients[build].stats()["curr_items"]),
                    time.time() - t0))
            for rep in range(args.repeats):
                for mix, (sp, gp) in MIXES.items():
                    order = list(BUILDS) if rep % 2 == 0 else list(BUILDS)[::-1]
                    for build in order:
                        srv, port = srvs[build]
                        c = clients[build]
                        cfg = memcaslap_cfg(sp, gp)
                        run = memcaslap(port, cfg, secs=args.window + 6)
                        time.sleep(3)
                        gets, sets, hits, pv, items = measure_window(srv, c, args.window,
                                                                     use_hw)
                        run.communicate()
                        os.unlink(cfg)
                        req = gets + sets
                        cpu_s = pv.get("task-clock", 0) / 1e3     # msec -> s
                        row = {"build": build, "threads": threads, "mix": mix, "rep": rep,
                               "window_s": args.window, "requests": req, "gets": gets,
                               "get_hits": hits, "req_per_s": req / args.window,
                               "server_cpu_s": cpu_s,
                               "cpu_s_per_mreq": cpu_s / req * 1e6 if req else None,
                               "items": items, "load1": os.getloadavg()[0]}
                        if use_hw and "instructions" in pv:
                            row["instr_per_req_perf"] = pv["instructions"] / req
                        rows.append(row)
                        log("  %s -t %d %s run %d: %.0f req/s, %.2f server CPU s per M "
                            "requests, %d items, load %.1f" % (
                                build, threads, mix, rep + 1, row["req_per_s"],
                                row["cpu_s_per_mreq"] or 0, items, row["load1"]))
        finally:
            for srv, _ in srvs.values():
                srv.send_signal(signal.SIGTERM)
                srv.wait()
    return rows


def median(v):
    """The median of ``v`` (statistics.median), 0 without runs."""
    v = list(v)
    return statistics.median(v) if v else 0


def tp_summary(tp, threads, mix):
    """Per build: the runs of a point; medians; the paired ratios (libcht run
    i / stock run i, run i of both taken back to back)."""
    r = {b: [x for x in tp if x["threads"] == threads and x["mix"] == mix and x["build"] == b]
         for b in BUILDS}
    if not all(r.values()):
        return None
    out = {}
    for b in BUILDS:
        out[b] = {"req_per_s": [x["req_per_s"] for x in r[b]],
                  "cpu": [x["cpu_s_per_mreq"] for x in r[b]]}
    pairs = list(zip(r["stock"], r["libcht"]))
    out["ratio_rps"] = [b["req_per_s"] / a["req_per_s"] for a, b in pairs]
    out["ratio_cpu"] = [a["cpu_s_per_mreq"] / b["cpu_s_per_mreq"] for a, b in pairs]
    return out


def request_stream(seed, n, keys, set_frac):
    """Pipelined text-protocol batches: (bytes, number of requests, replies marker count)."""
    rnd = random.Random(seed)
    batches = []
    batch = []
    for i in range(n):
        k = keys[rnd.randrange(len(keys))]
        if rnd.random() < set_frac:
            batch.append(b"set %s 0 0 32 noreply\r\n%s\r\n" % (k, b"v" * 32))
        else:
            batch.append(b"get %s\r\n" % k)
        if len(batch) == 100:
            batches.append(batch)
            batch = []
    if batch:
        batches.append(batch)
    return batches


def send_stream(c, batches):
    """Sends the batches; c is a Client or a list of them (one per server
    worker thread: memcached gives connections to its threads in turn), which
    take the batches in turn."""
    conns = c if isinstance(c, list) else [c]
    for i, batch in enumerate(batches):
        cc = conns[i % len(conns)]
        cc.s.sendall(b"".join(batch) + b"version\r\n")
        cc.until(b"VERSION")
        cc.until(b"\r\n")


def fill_direct(c, keys):
    for i in range(0, len(keys), 1000):
        c.s.sendall(b"".join(b"set %s 0 0 32 noreply\r\n%s\r\n" % (k, b"v" * 32)
                             for k in keys[i:i + 1000]) + b"version\r\n")
        c.until(b"VERSION")
        c.until(b"\r\n")


def valgrind_conns():
    """memcached sets RLIMIT_NOFILE to -c; valgrind only accepts its own fd
    limit, the hard limit less the 12 descriptors it keeps for itself."""
    import resource
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 12


def callgrind_ir(build, keys, streams, outdir, threads=1, cache_sim=False):
    port = free_port()
    tag = "%s-t%d" % (build, threads)
    out = os.path.join(outdir, "callgrind.%s.out" % tag)
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
           "--callgrind-out-file=" + out] + (["--cache-sim=yes"] if cache_sim else []) + \
        server_cmd(build, port, threads,
                                                       conns=valgrind_conns())
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res = {}
    try:
        wait_port(port, srv, 300)
        c = Client(port)
        # one connection per worker thread (the first is c)
        conns = [c] + [Client(port) for _ in range(threads - 1)]
        fill_direct(c, keys)
        # warm: every key read twice (ACTIVE in the segmented LRU)
        for _ in range(2):
            send_stream(c, [[b"get %s\r\n" % k for k in keys[i:i + 100]]
                            for i in range(0, len(keys), 100)])
        # stock migrates buckets in the background after a grow: wait for it
        for _ in range(600):
            if c.stats().get("hash_is_expanding", "0") == "0":
                break
            time.sleep(1)
        for name, batches, nreq in streams + streams:
            subprocess.run(["callgrind_control", "-z", str(srv.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(["callgrind_control", "-i", "on", str(srv.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            send_stream(conns, batches)
            subprocess.run(["callgrind_control", "-i", "off", str(srv.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = subprocess.run(["callgrind_control", "-d", name, str(srv.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(1)
            ir = 0          # all threads
            wir = 0         # the worker thread (the one that parses commands)
            wev = {}        # --cache-sim: the worker threads' events by name
            for fn in os.listdir(outdir):
                if fn.startswith("callgrind.%s.out" % tag) and fn != os.path.basename(out):
                    path = os.path.join(outdir, fn)
                    txt = open(path).read()
                    m = re.search(r"^totals:\s+(\d+)", txt, re.M)
                    if m:
                        ir += int(m.group(1))
                        if "process_command_ascii" in txt:
                            wir += int(m.group(1))
                            ev = re.search(r"^events:\s+(.*)$", txt, re.M)
                            tot = re.search(r"^totals:\s+(.*)$", txt, re.M)
                            if cache_sim and ev and tot:
                                for k, v in zip(ev.group(1).split(), tot.group(1).split()):
                                    wev[k] = wev.get(k, 0) + int(v)
                    os.unlink(path)
            # each stream runs twice; the lower count is the one without
            # background work (LRU maintainer, crawler) in its window
            prev = res.get(name)
            runs = (prev["runs"] if prev else []) + [wir / nreq]
            aruns = (prev["all_runs"] if prev else []) + [ir / nreq]
            res[name] = {"requests": nreq, "Ir": ir, "worker_Ir": wir, "runs": runs,
                         "all_runs": aruns, "instr_per_req": min(runs),
                         "all_threads_per_req": min(aruns)}
            if cache_sim:
                # simulated caches (valgrind's model of this host's L1/LL):
                # per request, worker threads, every run
                for k, v in wev.items():
                    key = "worker_%s_per_req" % k
                    res[name][key] = (prev.get(key, []) if prev else []) + [v / nreq]
                log("  %s -t %d %s: worker threads per request: %s" % (
                    build, threads, name, ", ".join("%s %.2f" % (k, v / nreq)
                                                    for k, v in wev.items())))
            log("  %s -t %d %s: %.0f instructions per request in the worker threads, %.0f "
                "in all threads (%d requests)" % (build, threads, name, wir / nreq, ir / nreq,
                                                  nreq))
            del r
    finally:
        srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(timeout=120)
        except subprocess.TimeoutExpired:
            srv.kill()
        for fn in os.listdir(outdir):
            if fn.startswith("callgrind.%s.out" % tag):
                os.unlink(os.path.join(outdir, fn))
    return res


def instructions(args):
    keys = [b"key%013d" % i for i in range(args.ir_keys)]
    streams = []
    for mix, (sp, gp) in MIXES.items():
        batches = request_stream(42, args.ir_requests, keys, sp)
        streams.append(("mix_" + mix.replace(":", "_"), batches, args.ir_requests))
    gets_only = request_stream(43, args.ir_requests, keys, 0)
    streams.append(("get_only", gets_only, args.ir_requests))
    outdir = tempfile.mkdtemp()
    res = {}
    try:
        for threads in args.threads:
            res[threads] = {}
            for build in BUILDS:
                res[threads][build] = callgrind_ir(build, keys, streams, outdir, threads,
                                                   args.cache_sim)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    return res


def probe(port, keys, stop_file, q):
    c = Client(port)
    lat = []
    i = 0
    while not os.path.exists(stop_file):
        k = keys[i % len(keys)]
        i += 1
        t0 = time.perf_counter_ns()
        c.s.sendall(b"get %s\r\n" % k)
        c.until(b"END\r\n")
        lat.append(time.perf_counter_ns() - t0)
    q.put(lat)


def resize_case(args):
    import multiprocessing as mp
    rows = []
    for build in BUILDS:
        port = free_port()
        srv = subprocess.Popen(server_cmd(build, port, 2, ["-o", "hashpower=12"]),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(port, srv)
            c = Client(port)
            keys = [b"resident%08d" % i for i in range(1000)]
            fill_direct(c, keys)
            for _ in range(2):
                for k in keys:
                    c.s.sendall(b"get %s\r\n" % k)
                    c.until(b"END\r\n")
            p0 = int(c.stats()["hash_power_level"])
            stop = tempfile.mktemp()
            q = mp.Queue()
            probes = [mp.Process(target=probe, args=(port, keys, stop, q)) for _ in range(2)]
            for p in probes:
                p.start()
            time.sleep(0.5)
            t0 = time.time()
            fill(port)
            dt = time.time() - t0
            open(stop, "w").close()
            lat = []
            for _ in probes:
                lat += q.get()
            for p in probes:
                p.join()
            os.unlink(stop)
            time.sleep(1.2)
            st = c.stats()
            lat.sort()

            def pct(p):
                return lat[min(len(lat) - 1, int(len(lat) * p))] / 1e3
            row = {"build": build, "threads": 2, "fill_s": dt, "items": int(st["curr_items"]),
                   "power_start": p0, "power_end": int(st["hash_power_level"]),
                   "probe_gets": len(lat), "probe_get_per_s": len(lat) / dt,
                   "p50_us": pct(0.5), "p99_us": pct(0.99), "p999_us": pct(0.999),
                   "max_us": lat[-1] / 1e3}
            rows.append(row)
            log("  %s: fill %d items in %.1f s, hash power %d -> %d, probe GETs %.0f/s, "
                "p50 %.0f us, p99 %.0f us, p99.9 %.0f us" %
                (build, row["items"], dt, p0, row["power_end"], row["probe_get_per_s"],
                 row["p50_us"], row["p99_us"], row["p999_us"]))
        finally:
            srv.send_signal(signal.SIGTERM)
            srv.wait()
    return rows


def plots(doc):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no figures")
        return []
    figs = []
    tp = doc["throughput"]
    if tp:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        labels = ["-t %d %s" % (t, m) for t in (1, 2) for m in MIXES]
        for ax, key, title in ((axes[0], "req_per_s", "requests/s, median (shared host)"),
                               (axes[1], "cpu_s_per_mreq",
                                "server CPU s per M requests, median")):
            for off, build in ((-0.2, "stock"), (0.2, "libcht")):
                vals = []
                for t in (1, 2):
                    for m in MIXES:
                        r = [x for x in tp if x["build"] == build and x["threads"] == t
                             and x["mix"] == m]
                        vals.append(median([x[key] for x in r]) if r else 0)
                ax.bar([i + off for i in range(len(labels))], vals, width=0.4, label=build)
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels)
            ax.set_title(title)
            ax.legend()
        fig.tight_layout()
        path = os.path.join(RES, "throughput.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        figs.append("throughput.png")
    irs = [(t, d) for t, d in ((1, doc.get("instructions")), (2, doc.get("instructions_t2")))
           if d]
    if irs:
        fig, ax = plt.subplots(figsize=(8, 4))
        names = list(next(iter(irs[0][1].values())).keys())
        labels = ["-t %d %s" % (t, n) for t, _ in irs for n in names]
        for off, build in ((-0.2, "stock"), (0.2, "libcht")):
            ax.bar([i + off for i in range(len(labels))],
                   [d[build][n]["instr_per_req"] for _, d in irs for n in names],
                   width=0.4, label=build)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=20, fontsize=8)
        ax.set_title("worker-thread instructions per request (callgrind)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(RES, "instructions.png"), dpi=90)
        plt.close(fig)
        figs.append("instructions.png")
    rz = doc["resize"]
    if rz:
        fig, ax = plt.subplots(figsize=(6, 4))
        names = ["p50_us", "p99_us", "p999_us"]
        for off, r in zip((-0.2, 0.2), rz):
            ax.bar([i + off for i in range(3)], [r[n] for n in names], width=0.4,
                   label=r["build"])
        ax.set_xticks(range(3))
        ax.set_xticklabels(["p50", "p99", "p99.9"])
        ax.set_ylabel("GET latency, us (Python probe)")
        ax.set_title("GET latency while the table grows to 1 M keys")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(RES, "resize.png"), dpi=90)
        plt.close(fig)
        figs.append("resize.png")
    return figs


def section(doc, figs):
    L = []
    L.append("## memcached with libcht (stock vs libcht, same source)")
    L.append("")
    L.append("Generated by `contrib/memcached/bench.py` (`make memcached-bench`) from "
             "`bench/results/memcached/results.json`. Do not edit by hand.")
    L.append("")
    L.append("memcached %s from Debian's source package, built twice from the same tree: "
             "unpatched (stock) and with `contrib/memcached/patches` (libcht; GET fast "
             "path). Measured at commit `%s` on %s." % (doc["memcached"], doc["commit"],
                                                        doc["date"]))
    L.append("")
    L.append("**Shared host.** %s; memcaslap and the server share those CPUs "
             "(the load average counts the benchmark's own processes too: about 2 "
             "while it runs alone), so requests/s measure the client and the host as "
             "much as the server. The per-request costs (server CPU seconds per "
             "million requests, instructions per request) are the numbers to compare." %
             doc["host"])
    L.append("")
    L.append("### Throughput (memcaslap)")
    L.append("")
    L.append("memcaslap -T 1 -c 16 -w 64k, keys 16 bytes (memcaslap refuses keys shorter "
             "than 16), values 32 bytes, after a warm-up fill of %d keys (memcaslap, 100 %% "
             "SET); then each mix runs and the server is measured over a %d s window in its "
             "steady state: requests from its counters (cmd_get + cmd_set), CPU from "
             "`perf stat -e task-clock -p PID`. memcaslap GETs only keys it has set in the "
             "same run, so nearly every GET hits." % (NKEYS, doc["window_s"]))
    L.append("")
    L.append("Each point ran %d times per build, the two builds alternately (both servers "
             "up and filled, then stock, libcht, libcht, stock, ... one memcaslap run at a "
             "time), so that both see the host's load as alike as one shared host allows. "
             "Medians, then every run; ratios are libcht / stock for requests/s and stock / "
             "libcht for CPU (above 1: libcht better), of the medians and of each pair of "
             "runs taken back to back." % doc.get("repeats", 1))
    L.append("")
    L.append("| server | mix | stock req/s | libcht req/s | ratio | paired ratios | "
             "stock CPU s/M req | libcht CPU s/M req | ratio (stock/libcht) | paired ratios |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    tp = doc["throughput"]
    for t in (1, 2):
        for m in MIXES:
            sm = tp_summary(tp, t, m)
            if sm is None:
                continue
            a, b = sm["stock"], sm["libcht"]

            def runs(v, fmt):
                return " (" + " / ".join(fmt % x for x in v) + ")" if len(v) > 1 else ""
            L.append("| -t %d | %s | %.0f%s | %.0f%s | %.2f | %s | %.2f%s | %.2f%s | %.2f | %s |" % (
                t, m, median(a["req_per_s"]), runs(a["req_per_s"], "%.0f"),
                median(b["req_per_s"]), runs(b["req_per_s"], "%.0f"),
                median(b["req_per_s"]) / median(a["req_per_s"]),
                " / ".join("%.2f" % x for x in sm["ratio_rps"]),
                median(a["cpu"]), runs(a["cpu"], "%.2f"),
                median(b["cpu"]), runs(b["cpu"], "%.2f"),
                median(a["cpu"]) / median(b["cpu"]),
                " / ".join("%.2f" % x for x in sm["ratio_cpu"])))
    L.append("")
    ir = doc["instructions"]
    L.append("### Instructions per request")
    L.append("")
    if doc["perf_instructions"]:
        L.append("`perf stat -e instructions` works on this host; the callgrind counts "
                 "below are exact single-run counts.")
    else:
        L.append("`perf stat -e instructions` prints `<not supported>` on this host (a VM "
                 "without hardware counters), so instructions come from valgrind's "
                 "callgrind instead: the server (-t 1, then -t 2 with one client "
                 "connection per worker thread taking the batches in turn) under "
                 "callgrind, %d keys filled "
                 "with instrumentation off, every key read twice, then for each stream "
                 "instrumentation on for %d pipelined requests (100 per batch, seeded "
                 "key choice) and the Ir total of all server threads divided by the "
                 "requests; every stream runs twice and the lower count is shown (a "
                 "window can catch background work: the LRU maintainer, stock's bucket "
                 "migration; the script first waits until stock's expansion is over). "
                 "Exact and unaffected by the host's load; user space only (no "
                 "kernel)." % (doc["ir_keys"], doc["ir_requests"]))
    L.append("")
    if ir:
        L.append("Worker = the threads that parsed the requests (the request path: "
                 "read, parse, look up, respond, write); all threads adds the LRU "
                 "maintainer, the crawler, stock's bucket migration and libcht's "
                 "RCU reclaimer and resize worker. Under valgrind the threads run one at "
                 "a time, so a thread that spins waiting for another (libcht's grace "
                 "period wait spins before it sleeps) is counted for as long as "
                 "valgrind lets it run: the all-threads column overstates spinning.")
        L.append("")
        L.append("| server | stream | worker: stock | worker: libcht | libcht / stock | "
                 "all threads: stock | all threads: libcht | runs (worker) stock | "
                 "runs (worker) libcht |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for t, d in ((1, ir), (2, doc.get("instructions_t2"))):
            if not d:
                continue
            for n in d["stock"]:
                a, b = d["stock"][n]["instr_per_req"], d["libcht"][n]["instr_per_req"]
                ra = " / ".join("%.0f" % x for x in d["stock"][n].get("runs", [a]))
                rb = " / ".join("%.0f" % x for x in d["libcht"][n].get("runs", [b]))
                L.append("| -t %d | %s | %.0f | %.0f | %.3f | %.0f | %.0f | %s | %s |" % (
                    t, n, a, b, b / a, d["stock"][n].get("all_threads_per_req", a),
                    d["libcht"][n].get("all_threads_per_req", b), ra, rb))
        L.append("")
    rz = doc["resize"]
    L.append("### Resize case (the paper's)")
    L.append("")
    L.append("Server -t 2 starting at 2^12 buckets (-o hashpower=12); memcaslap fills "
             "%d new keys (100 %% SET) while two probe processes GET 1000 resident keys "
             "in lock step, timing each request (Python clients: their own overhead is in "
             "every latency, equally for both builds)." % NKEYS)
    L.append("")
    L.append("| build | fill s | hash power | probe GETs/s | p50 us | p99 us | p99.9 us | max us |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in rz:
        L.append("| %s | %.1f | %d -> %d | %.0f | %.0f | %.0f | %.0f | %.0f |" % (
            r["build"], r["fill_s"], r["power_start"], r["power_end"], r["probe_get_per_s"],
            r["p50_us"], r["p99_us"], r["p999_us"], r["max_us"]))
    L.append("")
    for f in figs:
        L.append("![%s](results/memcached/%s)" % (f, f))
        L.append("")
    L.append("### Reading")
    L.append("")
    L.append(doc.get("reading", ""))
    return "\n".join(L).rstrip() + "\n"


MD_BEGIN = "<!-- memcached:begin -->"
MD_END = "<!-- memcached:end -->"


def write_results_md(text, path=os.path.join(ROOT, "bench", "RESULTS.md")):
    """Put ``text`` between MD_BEGIN and MD_END of ``path`` (results_md.splice:
    in place, or appended at the end of the file)."""
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read() or None
    with open(path, "w") as f:
        f.write(results_md.splice(old, text, MD_BEGIN, MD_END))


def only(args):
    """--only PART: that part alone, its figures to --out, nothing else."""
    out = args.out or os.path.join(B, "memcached-bench", args.only + ".json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    use_hw = perf_instructions_work()
    doc = {"part": args.only, "builds": dict(BUILDS), "threads": args.threads,
           "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
           "load1_start": os.getloadavg()[0]}
    if args.only == "throughput":
        doc["throughput"] = throughput(args, use_hw)
        doc["summary"] = {"%d %s" % (t, m): tp_summary(doc["throughput"], t, m)
                          for t in args.threads for m in MIXES}
    elif args.only == "instructions":
        doc["instructions"] = instructions(args)
    else:
        doc["resize"] = resize_case(args)
    json.dump(doc, open(out, "w"), indent=1)
    log("figures: %s" % out)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--window", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3,
                    help="throughput: runs of each point per build, interleaved")
    ap.add_argument("--ir-keys", type=int, default=NKEYS)
    ap.add_argument("--ir-requests", type=int, default=100000)
    ap.add_argument("--skip", default="", help="comma list: throughput,instructions,resize")
    ap.add_argument("--reading", default="", help="text of the Reading paragraph")
    ap.add_argument("--md-only", action="store_true", help="rewrite RESULTS.md from results.json")
    ap.add_argument("--only", choices=("throughput", "instructions", "resize"),
                    help="run this part alone; write only --out")
    ap.add_argument("--out", help="--only: the JSON file of its figures "
                    "(default build/memcached-bench/PART.json)")
    ap.add_argument("--stock", help="stock binary (default %s)" % BUILDS["stock"])
    ap.add_argument("--libcht", help="libcht binary (default %s)" % BUILDS["libcht"])
    ap.add_argument("--threads", default="1,2", help="server -t values, comma list")
    ap.add_argument("--cache-sim", action="store_true",
                    help="instructions: also callgrind's cache simulation (data "
                    "reads and their L1 and last-level misses per request)")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",") if t]
    for b in BUILDS:
        if getattr(args, b):
            BUILDS[b] = os.path.abspath(getattr(args, b))
    if args.only:
        return only(args)
    os.makedirs(RES, exist_ok=True)
    jpath = os.path.join(RES, "results.json")
    if args.md_only:
        doc = json.load(open(jpath))
        if args.reading:
            doc["reading"] = args.reading
            json.dump(doc, open(jpath, "w"), indent=1)
        write_results_md(section(doc, plots(doc)))
        return 0
    skip = set(args.skip.split(",")) - {""}
    use_hw = perf_instructions_work()
    log("perf stat -e instructions: %s" % ("works" if use_hw else "not supported here"))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    ncpu = os.cpu_count()
    doc = {"memcached": "1.6.18", "commit": commit,
           "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
           "host": "%d CPUs (os.cpu_count), load average %s at the start" % (
               ncpu, " ".join("%.1f" % x for x in os.getloadavg())),
           "window_s": args.window, "repeats": args.repeats,
           "ir_keys": args.ir_keys, "ir_requests": args.ir_requests,
           "perf_instructions": use_hw, "throughput": [], "instructions": {}, "resize": []}
    if "throughput" not in skip:
        log("== throughput (memcaslap)")
        doc["throughput"] = throughput(args, use_hw)
        json.dump(doc, open(jpath, "w"), indent=1)
    if "instructions" not in skip:
        log("== instructions per request (callgrind)")
        ir = instructions(args)
        doc["instructions"], doc["instructions_t2"] = ir[1], ir[2]
        json.dump(doc, open(jpath, "w"), indent=1)
    if "resize" not in skip:
        log("== resize case")
        doc["resize"] = resize_case(args)
    doc["reading"] = args.reading
    json.dump(doc, open(jpath, "w"), indent=1)
    with open(os.path.join(RES, "throughput.csv"), "w") as f:
        cols = ["build", "threads", "mix", "req_per_s", "cpu_s_per_mreq", "requests",
                "server_cpu_s", "items"]
        f.write(",".join(cols) + "\n")
        for r in doc["throughput"]:
            f.write(",".join(str(r.get(c, "")) for c in cols) + "\n")
    figs = plots(doc)
    write_results_md(section(doc, figs))
    log("results: %s, bench/RESULTS.md (memcached section)" % RES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
