"""The leak check the task tests share: the kernel's resource counters read
from ``zones``, ``slabs``, ``page_ht``, ``tasks`` and ``as``, read again until
they are back at a baseline (tests/test_tasks.py, tests/test_limits.py,
tests/test_security.py, tests/test_fuzz_sys.py).
"""

import re
import time

#: Slab caches whose object count legitimately changes (magazines are
#: kept per CPU; the cache descriptors are fixed at boot).
SLABS_IGNORED = ("slab_magazine", "slab_cache")


def counters(k, timeout, every_slab=False):
    """Read zones, slabs, page_ht, tasks and as; return the compared values:
    busy frames outside the slabs, heap allocations, page hash entries,
    tasks and address spaces, and the objects in use of the ``pte_rec``
    slab cache (``every_slab``: of every cache but SLABS_IGNORED)."""
    zones = k.cmd("zones", timeout)
    slabs = k.cmd("slabs", timeout)
    page_ht = k.cmd("page_ht", timeout)
    tasks = k.cmd("tasks", timeout)
    aspaces = k.cmd("as", timeout)
    busy = int(re.search(r"^total\s+\d+\s+\d+\s+(\d+)\s*$", zones,
                         re.MULTILINE).group(1))
    heap = int(re.search(r"^total: (\d+) allocations", zones,
                         re.MULTILINE).group(1))
    slab_frames = int(re.search(r"^\d+ caches, (\d+) frames", slabs,
                                re.MULTILINE).group(1))
    values = {
        "frames outside slabs": busy - slab_frames,
        "heap allocations": heap,
        "page hash entries": int(re.search(r"^entries: (\d+)", page_ht,
                                           re.MULTILINE).group(1)),
        "tasks": int(re.search(r"^(\d+) tasks$", tasks,
                               re.MULTILINE).group(1)),
        "address spaces": int(re.search(r"^(\d+) address spaces$", aspaces,
                                        re.MULTILINE).group(1)),
    }
    if not every_slab:
        values["pte_rec objects"] = int(re.search(
            r"^pte_rec\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+(\d+)", slabs,
            re.MULTILINE).group(1))
        return values
    # name size align slab slabs frames in-use used total mag hits misses
    for m in re.finditer(r"^(\S+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+(\d+)\s+",
                         slabs, re.MULTILINE):
        if m.group(1) not in SLABS_IGNORED and m.group(1) != "name":
            values["slab %s in use" % m.group(1)] = int(m.group(2))
    return values


def settle(read, baseline=None, timeout=30.0):
    """Repeat ``read()`` until it returns ``baseline`` (a liveness bound of
    ``timeout`` seconds; the last reading is returned either way), or
    without a baseline until two readings 0.5 s apart agree (deferred frees
    of a warm-up run done)."""
    deadline = time.monotonic() + timeout
    prev = None
    while True:
        now = read()
        if baseline is None and now == prev:
            return now
        if now == baseline or time.monotonic() > deadline:
            return now
        prev = now
        time.sleep(0.5)


def diff(now, baseline):
    """The values that differ, as 'name: now (baseline b)'."""
    return ", ".join("%s: %s (baseline %s)" % (key, now.get(key),
                                               baseline.get(key))
                     for key in sorted(set(now) | set(baseline))
                     if now.get(key) != baseline.get(key))
