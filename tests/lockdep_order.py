"""The lock order of docs/LOCKING.md, machine-checked against ``lockdep``.

docs/LOCKING.md holds a table of allowed ``outer -> inner`` pairs of lock
classes between the markers ``<!-- lockdep-order: begin -->`` and
``<!-- lockdep-order: end -->`` (one row per pair: ``| `outer` | `inner` |
why |``).  A learned edge A -> B (``edge A -> B count=N at SITE SITE`` in the
``lockdep`` command's output) agrees with the document when B is reachable
from A through the documented pairs (the documented order is a partial
order, so A -> C is allowed when A -> B and B -> C are).  A self-pair
``X -> X`` (two locks of one class nested) must be listed itself.  The
documented pairs themselves must not form a cycle.

Sleeping locks (mutexes, rwlocks; ``class NAME ... sleeping`` in the
``lockdep`` output) are classes of the same graph.  The row ``| `(sleeping)` |
`(spinlock)` |`` allows every edge from a sleeping lock class to a spinlock
class: no spinlock leads back to a sleeping lock (taking one with a spinlock
held is the might-sleep report; a trylock adds no edge), so no cycle passes
through such an edge.  Edges between sleeping locks, and between spinlocks,
need their rows.

Command line: ``python3 tests/lockdep_order.py LOG [LOCKING.md]`` checks the
``lockdep`` output in LOG and prints every edge the document does not allow
(exit 1 if any).
"""

import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCKING_MD = os.path.join(REPO, "docs", "LOCKING.md")

_BEGIN = "<!-- lockdep-order: begin -->"
_END = "<!-- lockdep-order: end -->"
_ROW_RE = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|")
EDGE_RE = re.compile(r"^edge (\S+) -> (\S+) count=(\d+) at (\S+) (\S+)\s*$",
                     re.MULTILINE)
CLASS_RE = re.compile(r"^class (\S+) acq=\d+ .*?( sleeping)?\s*$", re.MULTILINE)
#: Pseudo-classes of the rule row (sleeping -> spinlock).
SLEEPING = "(sleeping)"
SPINLOCK = "(spinlock)"
HEADER_RE = re.compile(
    r"^lockdep: (active|off), (\d+) classes, (\d+) edges, (\d+) reports",
    re.MULTILINE)


def parse_doc(path=LOCKING_MD):
    """Return the set of documented (outer, inner) pairs."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if _BEGIN not in text or _END not in text:
        raise ValueError("%s: no lockdep-order table" % path)
    body = text.split(_BEGIN, 1)[1].split(_END, 1)[0]
    pairs = set()
    for line in body.splitlines():
        m = _ROW_RE.match(line.strip())
        if m:
            pairs.add((m.group(1), m.group(2)))
    if not pairs:
        raise ValueError("%s: the lockdep-order table is empty" % path)
    return pairs


def parse_edges(output):
    """Return [(from, to, count, from_site, to_site)] of ``lockdep`` output."""
    return [(m.group(1), m.group(2), int(m.group(3)), m.group(4), m.group(5))
            for m in EDGE_RE.finditer(output)]


def parse_sleeping(output):
    """Return the set of sleeping lock classes of ``lockdep`` output."""
    return {m.group(1) for m in CLASS_RE.finditer(output) if m.group(2)}


def parse_header(output):
    """Return (state, classes, edges, reports) or None."""
    m = HEADER_RE.search(output)
    if not m:
        return None
    return m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))


def _closure(pairs):
    succ = {}
    for a, b in pairs:
        if a != b:
            succ.setdefault(a, set()).add(b)
    reach = {}
    for a in succ:
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            for y in succ.get(x, ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        reach[a] = seen
    return reach


def doc_cycles(pairs):
    """Return the classes that reach themselves through documented pairs."""
    reach = _closure(pairs)
    return sorted(a for a, r in reach.items() if a in r)


def violations(edges, pairs, sleeping=()):
    """Return the learned edges the documented order does not allow
    (``sleeping``: the sleeping lock classes, for the rule row)."""
    reach = _closure(pairs)
    rule = (SLEEPING, SPINLOCK) in pairs
    bad = []
    for e in edges:
        a, b = e[0], e[1]
        if rule and a in sleeping and b not in sleeping:
            continue
        if a == b:
            if (a, b) not in pairs:
                bad.append(e)
        elif b not in reach.get(a, ()):
            bad.append(e)
    return bad


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        out = f.read().replace("\r", "")
    pairs = parse_doc(argv[2] if len(argv) > 2 else LOCKING_MD)
    edges = parse_edges(out)
    sleeping = parse_sleeping(out)
    rc = 0
    cyc = doc_cycles(pairs)
    if cyc:
        print("documented order has a cycle through: %s" % ", ".join(cyc))
        rc = 1
    for a, b, n, sa, sb in violations(edges, pairs, sleeping):
        print("undocumented edge %s -> %s (count %d; %s then %s)" % (
            a, b, n, sa, sb))
        rc = 1
    print("%d edges checked against %d documented pairs: %s" % (
        len(edges), len(pairs), "ok" if rc == 0 else "FAILED"))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
