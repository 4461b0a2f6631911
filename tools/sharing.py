#!/usr/bin/env python3
"""Host side of the sharing counter (tools/plugins/sharing.c, docs/SHARING.md).

The plugin writes one JSON line per window (``out=FILE``): the operations,
the bound on coherence transfers (total and per operation), the loads and
stores per vCPU and the lines with the largest bound (physical address, loads
and stores per vCPU, the guest PC of one load and one store per vCPU).  This
module names those lines with the kernel's symbol table (``nm`` on
kernel.elf):

* a line inside the kernel image (physical ``kernel_load_phys`` ..
  ``kernel_end_phys``; the image is linked at KERNEL_VMA + physical address,
  kernel/arch/amd64/_link.ld) is named by the data symbol covering
  KERNEL_VMA + pa (``fixed_global+0x0``);
* any other line is heap or frame memory, reached through the direct map
  (PHYS_MAP_BASE + pa, kernel/arch/amd64/include/arch/mm.h): it is named
  ``heap`` with the functions whose loads and stores touched it (the PCs,
  resolved to ``function+offset``).

Usage::

    python3 tools/sharing.py report FILE --kernel build/release/kernel.elf
    python3 tools/sharing.py report FILE --kernel K --json   # resolved JSON
"""

import argparse
import bisect
import json
import re
import subprocess
import sys

KERNEL_VMA = 0xffffffff80000000
PHYS_MAP_BASE = 0xffff800000000000


def names_at(lookup, va, offsets=()):
    """The distinct names ``lookup`` gives the accessed offsets of the line at
    ``va`` (or its start when none was recorded), comma-separated in offset
    order; None when it names none of them."""
    names = []
    for off in sorted(set(offsets)) or [0]:
        s = lookup(va + off)
        if s and s not in names:
            names.append(s)
    return ",".join(names) or None


class Symbols:
    """The symbols of kernel.elf (``nm -n -S``), for address lookups."""

    def __init__(self, elf, nm="nm"):
        out = subprocess.run([nm, "-n", "-S", elf], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        self.addrs, self.syms = [], []
        self.marks = {}
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4:
                addr, size, kind, name = int(f[0], 16), int(f[1], 16), f[2], f[3]
            elif len(f) == 3:
                addr, size, kind, name = int(f[0], 16), 0, f[1], f[2]
            else:
                continue
            self.marks[name] = addr
            if addr < KERNEL_VMA:
                continue
            self.addrs.append(addr)
            self.syms.append((addr, size, kind, name))
        self.img_lo = self.marks.get("ktext_start", KERNEL_VMA + 0x100000)
        self.img_hi = self.marks.get("kernel_end", 0)

    def lookup(self, va):
        """``name+0xoff`` of the symbol covering ``va`` (or preceding it
        when sizes are unknown); None outside the image."""
        if not self.addrs or va < self.addrs[0] or \
                (self.img_hi and va >= self.img_hi):
            return None
        i = bisect.bisect_right(self.addrs, va) - 1
        # Prefer a sized symbol that covers va among equal-address ones.
        addr, size, kind, name = self.syms[i]
        j = i
        while j >= 0 and self.syms[j][0] == addr:
            if self.syms[j][1] and va < self.syms[j][0] + self.syms[j][1]:
                addr, size, kind, name = self.syms[j]
                break
            j -= 1
        return "%s+0x%x" % (name, va - addr)

    def line_name(self, pa, offsets=()):
        """What a physical line holds: the kernel-image symbols at the
        accessed offsets (or at the line's start), or heap."""
        va = KERNEL_VMA + pa
        if self.img_lo <= va < self.img_hi:
            names = names_at(self.lookup, va, offsets)
            if names:
                return names
        return "heap 0x%x" % (PHYS_MAP_BASE + pa)

    def pc_name(self, pc):
        if not pc:
            return None
        return self.lookup(pc) or "0x%x" % pc


class SlabMap:
    """The slab allocator's ranges printed by ``chtbench ... -m`` (lines
    ``slabmap NAME desc|slab START BYTES``): names a heap line by its cache."""

    LINE_RE = re.compile(r"^slabmap (\S+) (desc|slab) (0x[0-9a-fA-F]+) (\d+)\s*$",
                         re.MULTILINE)

    def __init__(self, text=""):
        descs, slabs = [], []
        for m in self.LINE_RE.finditer(text):
            e = (int(m.group(3), 16), int(m.group(4)), m.group(1))
            (descs if m.group(2) == "desc" else slabs).append(e)
        self.descs = sorted(descs)
        self.slabs = sorted(slabs)

    def __bool__(self):
        return bool(self.descs or self.slabs)

    @staticmethod
    def _find(ranges, va):
        i = bisect.bisect_right(ranges, (va, float("inf"), "")) - 1
        if i >= 0 and ranges[i][0] <= va < ranges[i][0] + ranges[i][1]:
            return ranges[i]
        return None

    def name(self, va):
        """``slab cache NAME descriptor+0xOFF`` or ``NAME slab object``
        for a direct-map address, or None."""
        d = self._find(self.descs, va)
        if d:
            return "slab cache %s descriptor+0x%x" % (d[2], va - d[0])
        s = self._find(self.slabs, va)
        if s:
            return "%s object (slab +0x%x)" % (s[2], va - s[0])
        return None


def read_windows(path):
    """The plugin's windows, in order (one dict per JSON line)."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def resolve(window, syms, top=10, slabmap=None):
    """``window`` with its top lines named (``name``, ``writers``,
    ``readers``: the functions whose stores / loads touched the line); heap
    lines by their slab cache when ``slabmap`` (a SlabMap) covers them."""
    w = dict(window)
    for key in ("top", "top_rest"):
        w[key] = [_name_line(t, syms, slabmap)
                  for t in window.get(key, [])[:top]]
    return w


def _name_line(t, syms, slabmap):
    """One plugin top-list entry with ``name``, ``writers``, ``readers``."""
    pa = int(t["pa"], 16)
    x = dict(t)
    offs = [o for o, n in zip(t.get("store_off", []), t["stores"]) if n]
    offs += [o for o, n in zip(t.get("load_off", []), t["loads"]) if n]
    x["name"] = syms.line_name(pa, offs)
    if slabmap and x["name"].startswith("heap"):
        off = min(offs) if offs else 0
        named = slabmap.name(PHYS_MAP_BASE + pa + off)
        if named:
            x["name"] = "heap %s" % named
    x["writers"] = sorted({syms.pc_name(int(p, 16))
                           for p, s in zip(t["store_pc"], t["stores"])
                           if s and int(p, 16)})
    x["readers"] = sorted({syms.pc_name(int(p, 16))
                           for p, n in zip(t["load_pc"], t["loads"])
                           if n and int(p, 16)})
    return x


def per_op(window, line):
    ops = window.get("ops") or 0
    return line["bound"] / ops if ops else float("nan")


def summary(window, label="", top=5):
    """Human summary of one resolved window."""
    L = []
    L.append("%s%d ops, %d vCPUs: %.6g transfers/op (bound; %d lines "
             "touched, %d shared)" % (label + ": " if label else "",
                                       window["ops"], window["vcpus"],
                                       window["per_op"], window["lines"],
                                       window["shared_lines"]))
    for t in window["top"][:top]:
        L.append("  %-36s %10.4g/op  loads %s stores %s%s%s" % (
            t["name"], per_op(window, t), t["loads"], t["stores"],
            "  w: " + ",".join(t["writers"]) if t["writers"] else "",
            "  r: " + ",".join(t["readers"]) if t["readers"] else ""))
    return "\n".join(L)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report", help="name the hot lines of a plugin output")
    r.add_argument("file")
    r.add_argument("--kernel", required=True, help="the booted kernel.elf")
    r.add_argument("--top", type=int, default=10)
    r.add_argument("--json", action="store_true",
                   help="print the resolved windows as JSON lines")
    a = ap.parse_args(argv)
    syms = Symbols(a.kernel)
    for w in read_windows(a.file):
        rw = resolve(w, syms, a.top)
        if a.json:
            print(json.dumps(rw))
        else:
            print(summary(rw, "window %d" % w["window"], a.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
