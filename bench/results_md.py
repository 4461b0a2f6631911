"""The sections of bench/RESULTS.md: each generator owns the text between
its two markers (``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``) and
rewrites only that; this is the one function that splices a section in
(bench/plot.py, bench/plotlib/cost.py, bench/bench_sharing.py,
bench/userspace/run.py, bench/userspace/run_sharing.py and
contrib/memcached/bench.py)."""

TITLE = "# Benchmark results"


def splice(existing, block, begin, end, before=None):
    """Return ``existing`` (the file's text, or None for a new file) with
    ``block`` between the markers ``begin`` and ``end``.

    A section already there is replaced in place.  A new one goes before the
    first of the markers ``before`` that ``existing`` has, or, when it has
    none of them, right after the title line (at the top without a title);
    with ``before`` None a new section is appended at the end.  A new file
    is the title and the section.
    """
    mine = begin + "\n" + block + end
    if existing is None:
        return TITLE + "\n\n" + mine + "\n"
    if begin in existing and end in existing:
        a = existing.index(begin)
        b = existing.index(end, a) + len(end)
        return existing[:a] + mine + existing[b:]
    if before is None:
        return existing.rstrip("\n") + "\n\n" + mine + "\n"
    for marker in before:
        if marker in existing:
            a = existing.index(marker)
            return existing[:a] + mine + "\n\n" + existing[a:]
    lines = existing.split("\n", 1)
    if lines[0].startswith("# "):
        rest = lines[1] if len(lines) > 1 else ""
        return lines[0] + "\n\n" + mine + "\n\n" + rest.lstrip("\n")
    return mine + "\n\n" + existing
