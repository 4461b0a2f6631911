"""``make -C uspace bench-sharing``: cache lines the userspace tables share
between threads, per operation (docs/SHARING.md).

Runs ``bench_us sharing IMPL -t THREADS -u UPDATE -o OPS`` (harness.c) under
QEMU's user-mode emulator with the sharing counter,
``qemu-x86_64 -plugin build/plugins/sharing.so,out=FILE,top=N``: every guest
thread is a vCPU of its own and lines are keyed by guest virtual address.
The harness opens the window after its threads have set up and warmed up
and closes it when the last one has done its OPS operations, then reports
THREADS x OPS operations: the plugin's ``per_op`` is the bound on coherence
transfers per operation (lookups of present keys, or with UPDATE %
probability an insert and remove of a key of the thread's own, as
chtbench's updates).  The count depends only on what each thread accessed,
not on the host's speed, so a few operations suffice; each point is run
``--reps`` times for the spread (the interleaving still changes what a
lookup meets).

The hottest lines are named from the guest's /proc/self/maps (the harness
writes the emulator's view of it, ``-M``) and the symbols of the mapped
files (``nm``; ``nm -D`` for stripped shared libraries): a line inside a
file's segments is ``SYMBOL+0xOFF`` (``FILE+0xOFF`` without a symbol), the
main thread's stack ``stack``, any other line ``heap``; with the functions
whose stores (``w:``) and loads (``r:``) touched it.

Writes bench/results/userspace/sharing.{csv,json,png} and the section of
bench/RESULTS.md between ``<!-- userspace-sharing:begin -->`` and
``<!-- userspace-sharing:end -->`` (the rest of the file is kept).

Usage::

    python3 -m bench.userspace.run_sharing                      # 2/4/8 threads, 0/20/100 %, 2 reps
    python3 -m bench.userspace.run_sharing --impls cht,rwlock --threads 2 --updates 0
    python3 -m bench.userspace.run_sharing --report-only        # figure and section from the JSON
"""

import argparse
import bisect
import csv
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

from bench import bench_sharing  # splice, fmt
from tools.sharing import names_at

from bench.userspace.common import (BIN, HERE, OUT, REPO,
                                    RESULTS_MD, run_make)

PLUGIN = os.path.join(REPO, "build", "plugins", "sharing.so")
QEMU = "qemu-x86_64"
RUN_DIR = os.path.join(REPO, "build", "bench-userspace", "sharing")
BEGIN = "<!-- userspace-sharing:begin -->"
END = "<!-- userspace-sharing:end -->"

#: Every table library of the harness; presized where the harness has the
#: variant (no resize before or in the window: under the emulator
#: lfht-memb's automatic resizes from one bucket made the prefill take 50 s
#: and more, once past the 20-s stall watchdog, and lfht-qsbr with 100 %
#: updates had not finished after 120 s); ck and libcuckoo grow in the
#: prefill, and the insert/remove pairs leave the key count as it is.
IMPLS = ["cht-presized", "lfht-memb-presized", "lfht-qsbr-presized", "ckhs",
         "ckht", "cuckoo", "rwlock-presized"]
THREADS = [2, 4, 8]
UPDATES = [0, 20, 100]
REPS = 2
OPS = 20000          # per thread
KEYS = 65536
TOP = 8

T0 = time.monotonic()


def log(msg):
    print("[%5.0fs] %s" % (time.monotonic() - T0, msg), flush=True)


# --------------------------------------------------------------------------
# Naming guest virtual addresses
# --------------------------------------------------------------------------

MAPS_RE = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)$")


def _elf_layout(path):
    """(is ET_EXEC, end of the highest PT_LOAD segment in memory) of an
    ELF64 little-endian file, read from its headers (struct)."""
    with open(path, "rb") as f:
        eh = f.read(64)
        if len(eh) < 64 or eh[:4] != b"\x7fELF" or eh[4] != 2:
            return False, 0
        e_type, = struct.unpack_from("<H", eh, 16)
        e_phoff, = struct.unpack_from("<Q", eh, 32)
        e_phentsize, e_phnum = struct.unpack_from("<HH", eh, 54)
        f.seek(e_phoff)
        ph = f.read(e_phentsize * e_phnum)
    end = 0
    for i in range(e_phnum):
        p_type, _, _, p_vaddr, _, _, p_memsz, _ = struct.unpack_from(
            "<IIQQQQQQ", ph, i * e_phentsize)
        if p_type == 1:                      # PT_LOAD
            end = max(end, p_vaddr + p_memsz)
    return e_type == 2, end


class _FileSyms:
    """The symbols of one ELF file (``nm -n -S``, or ``nm -D`` when it has
    no symbol table), by file virtual address."""

    def __init__(self, path, nm="nm"):
        rows = []
        for extra in ([], ["-D"]):
            p = subprocess.run([nm, "-n", "-S", "--defined-only"] + extra +
                               [path], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            for line in p.stdout.splitlines():
                f = line.split()
                if len(f) == 4:
                    rows.append((int(f[0], 16), int(f[1], 16),
                                 f[3].split("@")[0]))
                elif len(f) == 3:
                    rows.append((int(f[0], 16), 0, f[2].split("@")[0]))
            if rows:
                break
        rows.sort()
        self.rows = rows
        self.addrs = [r[0] for r in rows]

    def lookup(self, a):
        """``name+0xoff`` of a symbol covering ``a`` (a sized one, else the
        preceding unsized one), or None."""
        i = bisect.bisect_right(self.addrs, a) - 1
        j = i
        while j >= 0 and i - j < 64:
            addr, size, name = self.rows[j]
            if size and addr <= a < addr + size:
                return "%s+0x%x" % (name, a - addr)
            j -= 1
        if i >= 0 and not self.rows[i][1]:
            return "%s+0x%x" % (self.rows[i][2], a - self.rows[i][0])
        return None


class GuestMap:
    """Names guest addresses from a /proc/self/maps copy and the symbols of
    the files it maps (the emulator's guest view: guest addresses)."""

    def __init__(self, maps_text, nm="nm"):
        self.files = []      # (lo, hi, bias, path)
        self.stack = None
        maps = []
        for line in maps_text.splitlines():
            m = MAPS_RE.match(line)
            if m:
                maps.append((int(m.group(1), 16), int(m.group(2), 16),
                             int(m.group(4), 16), m.group(5).strip()))
        by_path = {}
        for lo, hi, off, path in maps:
            if path == "[stack]":
                self.stack = (lo, hi)
            if not path.startswith("/"):
                continue
            e = by_path.setdefault(path, {"lo": lo, "bias": None})
            e["lo"] = min(e["lo"], lo)
            if off == 0 and e["bias"] is None:
                e["bias"] = lo
        self._syms = {}
        for path, e in by_path.items():
            if not os.path.isfile(path):
                continue
            is_exec, end = _elf_layout(path)
            bias = 0 if is_exec else (e["bias"] or e["lo"])
            # Up to the end of the last segment in memory: its bss, not
            # the brk heap that follows it.
            self.files.append((e["lo"], bias + end, bias, path))
        self.files.sort()
        self.nm = nm

    def _file(self, va):
        for lo, hi, bias, path in self.files:
            if lo <= va < hi:
                return bias, path
        return None

    def _syms_of(self, path):
        if path not in self._syms:
            self._syms[path] = _FileSyms(path, self.nm)
        return self._syms[path]

    def name(self, va):
        """``symbol+0xoff`` for an address in a mapped file, ``FILE+0xoff``
        when no symbol covers it, else None."""
        f = self._file(va)
        if not f:
            return None
        bias, path = f
        return self._syms_of(path).lookup(va - bias) or \
            "%s+0x%x" % (os.path.basename(path), va - bias)

    def line_name(self, va, offsets=()):
        """What a line holds: the symbols at the accessed offsets, else
        ``stack`` or ``heap``."""
        names = names_at(self.name, va, offsets)
        if names:
            return names
        if self.stack and self.stack[0] <= va < self.stack[1]:
            return "stack"
        return "heap"

    def pc_name(self, pc):
        """The function of a code address (``func+0xoff``)."""
        return self.name(pc) or "0x%x" % pc


def resolve(window, gmap, top=TOP):
    """The window's top lines with ``name``, ``writers``, ``readers`` and
    ``per_op`` (as tools/sharing.py resolve() does for the kernel)."""
    ops = window.get("ops") or 0
    lines = []
    for t in window.get("top", [])[:top]:
        va = int(t["va"], 16)
        offs = [o for o, n in zip(t["store_off"], t["stores"]) if n]
        offs += [o for o, n in zip(t["load_off"], t["loads"]) if n]
        lines.append({
            "va": t["va"], "bound": t["bound"],
            "per_op": t["bound"] / ops if ops else float("nan"),
            "name": gmap.line_name(va, offs),
            "writers": sorted({gmap.pc_name(int(p, 16)) for p, s in
                               zip(t["store_pc"], t["stores"])
                               if s and int(p, 16)}),
            "readers": sorted({gmap.pc_name(int(p, 16)) for p, n in
                               zip(t["load_pc"], t["loads"])
                               if n and int(p, 16)}),
            "loads": t["loads"], "stores": t["stores"]})
    return lines


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def build():
    for cmd in (["make", "-s", "-C", HERE, "-j2"],
                ["make", "--no-print-directory", "-C", REPO, "plugin"]):
        run_make(cmd, "run_sharing.py: %s failed" % " ".join(cmd))


def run_one(impl, threads, update, ops=OPS, keys=KEYS, top=TOP, qemu=QEMU,
            binary=BIN, plugin=PLUGIN, timeout=300, workdir=None, rep=1):
    """One window: ``bench_us sharing`` under the plugin. Returns a sample
    dict (per_op, the resolved top lines, ...); raises RuntimeError when
    the run fails, its operations disagree with the plugin's or the
    plugin's tables overflowed."""
    own = workdir is None
    d = workdir or tempfile.mkdtemp(prefix="ushare-")
    tag = "%s-t%d-u%d-r%d" % (impl, threads, update, rep)
    jsonl = os.path.join(d, tag + ".jsonl")
    maps = os.path.join(d, tag + ".maps")
    cmd = [qemu, "-plugin", "%s,out=%s,top=%d" % (plugin, jsonl, top),
           binary, "sharing", impl, "-t", str(threads), "-u", str(update),
           "-o", str(ops), "-k", str(keys), "-M", maps]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    if p.returncode:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), p.returncode,
                                                  p.stdout, p.stderr))
    rows = {}
    for r in csv.reader(p.stdout.splitlines()):
        if len(r) == 7 and r[0] == "sharing":
            rows[r[5]] = float(r[6])
    with open(jsonl) as f:
        windows = [json.loads(x) for x in f if x.strip()]
    if len(windows) != 1:
        raise RuntimeError("%s: %d windows" % (tag, len(windows)))
    w = windows[0]
    if w.get("mode") != "user" or w["ops"] != int(rows.get("ops", -1)):
        raise RuntimeError("%s: the plugin counted %s operations, the "
                           "harness %s" % (tag, w["ops"], rows.get("ops")))
    if w["incomplete"] or rows.get("errors", 1):
        raise RuntimeError("%s: incomplete window or errors" % tag)
    with open(maps) as f:
        gmap = GuestMap(f.read())
    s = {"impl": impl, "threads": threads, "update": update,
         "ops": w["ops"], "lookups": int(rows["lookups"]),
         "updates": int(rows["updates"]), "per_op": w["per_op"],
         "bound": w["bound"], "vcpus": w["vcpus"], "lines": w["lines"],
         "shared_lines": w["shared_lines"], "top": resolve(w, gmap, top)}
    if own:
        for path in (jsonl, maps):
            os.unlink(path)
        os.rmdir(d)
    return s


def summarize(samples):
    """Median and range of per_op per (impl, update, threads), with the
    top lines of the median sample."""
    groups = {}
    for s in samples:
        groups.setdefault((s["impl"], s["update"], s["threads"]), []).append(s)
    points = []
    for (impl, u, t), ss in sorted(groups.items(), key=lambda kv: (
            IMPLS.index(kv[0][0]) if kv[0][0] in IMPLS else 99, kv[0][1],
            kv[0][2])):
        v = [s["per_op"] for s in ss]
        mid = sorted(ss, key=lambda s: s["per_op"])[(len(ss) - 1) // 2]
        points.append({"impl": impl, "update": u, "threads": t,
                       "median": statistics.median(v), "min": min(v),
                       "max": max(v), "reps": len(v), "top": mid["top"]})
    return points


# --------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------

fmt = bench_sharing.fmt


def _demangle(sym):
    """A C++ symbol demangled (c++filt) without template arguments and
    parameters: ``(anonymous namespace)::i_lookup``."""
    try:
        d = subprocess.run(["c++filt", sym], stdout=subprocess.PIPE,
                           text=True).stdout.strip() or sym
    except OSError:
        return sym
    while True:
        e = re.sub(r"<[^<>]*>", "", d)
        if e == d:
            break
        d = e
    return re.sub(r"\((?!anonymous)[^()]*\)( const)?$", "", d)


def short(name):
    """A line's or function's name for the section: without symbol versions
    (``pthread_rwlock_unlock``, not ``pthread_rwlock_unlock@GLIBC_2.2.5``),
    C++ symbols demangled."""
    name = re.sub(r"@+[A-Za-z0-9_.]+", "", name)
    return re.sub(r"_Z[A-Za-z0-9_]+", lambda m: _demangle(m.group(0)), name)


def fmt_range(p):
    if p["reps"] == 1 or fmt(p["min"]) == fmt(p["max"]):
        return fmt(p["median"])
    return "%s (%s-%s)" % (fmt(p["median"]), fmt(p["min"]), fmt(p["max"]))


def generate_md(doc):
    pts = {(p["impl"], p["update"], p["threads"]): p for p in doc["points"]}
    threads, updates = doc["threads"], doc["updates"]
    L = ["## Userspace tables: cache lines shared per operation "
         "(`make -C uspace bench-sharing`)", "",
         "Generated by bench/userspace/run_sharing.py on %s (git %s, %s). "
         "`bench_us sharing IMPL -t T -u U -o %d` (harness.c) under "
         "`qemu-x86_64 -plugin build/plugins/sharing.so` (QEMU's user-mode "
         "emulator: every thread a vCPU of its own, lines by guest virtual "
         "address; docs/SHARING.md): %d keys, T threads, %d operations "
         "each inside the window (lookups of present keys, or with U %% "
         "probability an insert and remove of a key of the thread's own, "
         "as chtbench's updates). Cells: the bound on cache-line transfers "
         "per operation, median of %d runs (range); 0 means none. The "
         "window's own flags (`sh_go`, `sh_done`) and the start barrier's "
         "line on the main stack cost a few transfers per thread per "
         "window (about %s per operation at %d operations a thread): the "
         "floor of the lookup rows. Wall time %d s." % (
             doc["date_utc"], doc["git_rev"], doc["qemu_version"], doc["ops"],
             doc["keys"], doc["ops"], doc["reps"], fmt(3.0 / doc["ops"]),
             doc["ops"], doc["wall_s"]), "",
         "| table | %s |" % " | ".join("%d %% upd, %d thr" % (u, t)
                                      for u in updates for t in threads),
         "|---|%s" % ("---|" * (len(updates) * len(threads)))]
    for impl in doc["impls"]:
        cells = []
        for u in updates:
            for t in threads:
                p = pts.get((impl, u, t))
                cells.append(fmt_range(p) if p else "-")
        L.append("| `%s` | %s |" % (impl, " | ".join(cells)))
    L += ["", "![sharing per operation](results/userspace/sharing.png)", "",
          "Hottest lines at %d threads (the median run; per operation; "
          "`w:`/`r:` the functions whose stores/loads touched the line):"
          % max(threads), ""]
    for impl in doc["impls"]:
        for u in updates:
            p = pts.get((impl, u, max(threads)))
            if not p or not p["top"]:
                continue
            lines = []
            for t in p["top"][:3]:
                fn = ""
                if t["writers"]:
                    fn += " w: " + ", ".join(map(short, t["writers"][:3]))
                if t["readers"]:
                    fn += " r: " + ", ".join(map(short, t["readers"][:3]))
                lines.append("`%s` %s%s" % (short(t["name"]), fmt(t["per_op"]),
                                            fn))
            L.append("- `%s` %d %%: %s" % (impl, u, "; ".join(lines)))
    L += ["", "Raw windows: build/bench-userspace/sharing/*.jsonl (each "
          "run's /proc/self/maps beside them, *.maps); every run "
          "in bench/results/userspace/sharing.csv, the top lines in "
          "sharing.json."]
    return "\n".join(L) + "\n"


MARKERS = "osv^D<>pP*"


def plot(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    floor = 1e-5
    pts = {(p["impl"], p["update"], p["threads"]): p for p in doc["points"]}
    fig, axes = plt.subplots(1, len(doc["updates"]), sharey=True,
                             figsize=(4 * len(doc["updates"]) + 2, 4.8))
    if len(doc["updates"]) == 1:
        axes = [axes]
    for ax, u in zip(axes, doc["updates"]):
        for i, impl in enumerate(doc["impls"]):
            xs = [t for t in doc["threads"] if (impl, u, t) in pts]
            if not xs:
                continue
            ps = [pts[(impl, u, t)] for t in xs]
            ys = [max(p["median"], floor) for p in ps]
            lo = [y - max(p["min"], floor) for y, p in zip(ys, ps)]
            hi = [max(p["max"], floor) - y for y, p in zip(ys, ps)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker=MARKERS[i % len(MARKERS)],
                        capsize=3, label=impl, color=plt.cm.tab10(i % 10),
                        linestyle="--" if impl == "rwlock" else "-")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(doc["threads"])
        ax.set_xticklabels([str(t) for t in doc["threads"]])
        ax.set_xlabel("threads")
        ax.set_title("%d %% updates" % u)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("cache-line transfers per operation (bound; %g = 0)"
                       % floor)
    axes[-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.suptitle("Userspace tables under qemu-x86_64 with the sharing plugin "
                 "(median, range of %d runs)" % doc["reps"], fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(doc):
    # csv's own line ends (\r\n), as the committed results have them.
    bench_sharing.write_samples(OUT, doc, [
        "impl", "threads", "update", "rep", "ops", "lookups", "updates",
        "transfers_per_op", "shared_lines", "top_line"], lambda s: [
        s["impl"], s["threads"], s["update"], s["rep"], s["ops"],
        s["lookups"], s["updates"], "%.6g" % s["per_op"], s["shared_lines"],
        s["top"][0]["name"] if s["top"] else ""], lineterminator="\r\n")


def report(doc):
    plot(doc, os.path.join(OUT, "sharing.png"))
    existing = open(RESULTS_MD).read() if os.path.exists(RESULTS_MD) else None
    bench_sharing.write_md(bench_sharing.splice(existing, generate_md(doc),
                                                BEGIN, END), RESULTS_MD)
    log("wrote bench/results/userspace/sharing.{csv,json,png} and the "
        "userspace-sharing section of bench/RESULTS.md")


def host_info():
    def out(cmd):
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, cwd=REPO,
                                  stderr=subprocess.DEVNULL,
                                  text=True).stdout.strip()
        except OSError:
            return ""
    return {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "git_rev": out(["git", "rev-parse", "--short", "HEAD"]),
            "qemu_version": out([QEMU, "--version"]).splitlines()[0]
            if out([QEMU, "--version"]) else "?"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impls", default=",".join(IMPLS))
    ap.add_argument("--threads", default=",".join(map(str, THREADS)))
    ap.add_argument("--updates", default=",".join(map(str, UPDATES)))
    ap.add_argument("--reps", type=int, default=REPS)
    ap.add_argument("--ops", type=int, default=OPS,
                    help="operations per thread (default %d)" % OPS)
    ap.add_argument("--keys", type=int, default=KEYS)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args(argv)
    if a.report_only:
        with open(os.path.join(OUT, "sharing.json")) as f:
            report(json.load(f))
        return 0
    impls = a.impls.split(",")
    threads = [int(x) for x in a.threads.split(",")]
    updates = [int(x) for x in a.updates.split(",")]
    if not a.no_build:
        build()
    os.makedirs(RUN_DIR, exist_ok=True)
    samples = []
    for rep in range(1, a.reps + 1):
        for impl in impls:
            for u in updates:
                for t in threads:
                    s = run_one(impl, t, u, a.ops, a.keys,
                                workdir=RUN_DIR, rep=rep)
                    s["rep"] = rep
                    samples.append(s)
                    log("%-10s %3d %% %d threads rep %d: %s/op  top: %s" % (
                        impl, u, t, rep, fmt(s["per_op"]),
                        s["top"][0]["name"] if s["top"] else "-"))
    doc = dict(host_info(), generated_by="bench/userspace/run_sharing.py",
               impls=impls, threads=threads, updates=updates, reps=a.reps,
               ops=a.ops, keys=a.keys, wall_s=round(time.monotonic() - T0),
               points=summarize(samples), samples=samples)
    write_outputs(doc)
    report(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
