"""Checks of the documentation (README.md and docs/*.md), no build and no QEMU.

* Every relative link (``[text](path)``) names a file or directory that exists.
* Every path of the tree named in backquotes (``kernel/...``, ``tests/...``)
  exists, unless a part of it is a placeholder (``uspace/app/NAME/``).
* Every ``make TARGET`` (and ``make -C DIR TARGET``) named in backquotes or in
  a code block is a target of that Makefile.
* README.md is a front page: at most MAX_README_LINES lines.
* No paragraph is longer than MAX_PARAGRAPH characters (a table row: MAX_ROW).

Each checker is a function of the text, so that the tests below can show it
failing on a broken example.
"""

import glob
import os
import re
import subprocess
from fnmatch import fnmatch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MAX_README_LINES = 150
MAX_PARAGRAPH = 1000
MAX_ROW = 1100
#: Pages whose long paragraphs may stay (none: every page is split).
LONG_PARAGRAPHS_ALLOWED = set()
#: Table rows allowed over MAX_ROW: (page, the row's first cell). The
#: arch boundary's exceptions row is the fault policy's, being reworked.
LONG_ROWS_ALLOWED = {("docs/ARCHITECTURE.md", "exceptions")}

#: Top-level directories: a backquoted path starting with one is checked.
TOP_DIRS = ("common", "kernel", "uspace", "tests", "tools", "bench", "verify",
            "contrib", "docs", "boot")
#: Directories a path may also be relative to (a page about the kernel names
#: `boot/multiboot.S` of amd64, `bench/chtbench/` of kernel/test/).
ROOTS = ("", "kernel/test/", "kernel/arch/amd64/src/", "kernel/arch/arm64/src/",
         "kernel/generic/src/", "kernel/genarch/src/")
#: Suffixes a path may leave out (a test program named by its binary).
SUFFIXES = ("", ".c", ".py")


def doc_files():
    return ["README.md"] + sorted(
        os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs",
                                                                 "*.md")))


def read(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def strip_comments(text):
    """The text without HTML comments (merge notes for the lead)."""
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def split_code(text):
    """(prose, code): the text outside fenced code blocks and inside them."""
    prose, code, fence = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        (code if fence else prose).append(line)
    return "\n".join(prose), "\n".join(code)


def bad_links(rel, text):
    """Relative link targets of file ``rel`` that do not exist."""
    prose, _ = split_code(strip_comments(text))
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        full = os.path.normpath(os.path.join(REPO, os.path.dirname(rel), path))
        if not os.path.exists(full):
            bad.append(target)
    return bad


def bad_paths(text):
    """Backquoted paths of the tree that do not exist."""
    prose, _ = split_code(strip_comments(text))
    bad = []
    for span in re.findall(r"`([^`\n]+)`", prose):
        if not re.fullmatch(r"(?:%s)/[\w./+-]*" % "|".join(TOP_DIRS), span):
            continue
        if any(os.path.exists(os.path.join(REPO, root + span + suffix))
               for root in ROOTS for suffix in SUFFIXES):
            continue
        # A placeholder part (NAME, KNOB, PART.json) stands for any name.
        if any(re.fullmatch(r"[A-Z][A-Z0-9_]{2,}(\.\w+)?", part)
               for part in span.split("/")):
            continue
        bad.append(span)
    return bad


def make_commands(text):
    """(directory, target) of every make command in backquotes or code."""
    prose, code = split_code(strip_comments(text))
    spans = re.findall(r"`([^`\n]+)`", prose) + code.splitlines()
    found = []
    for span in spans:
        # Words separated by single spaces: a column of a code block (two
        # spaces or more) or a comment ends the command.
        for m in re.finditer(r"(?<![\w-])make((?: \S+)*)", span):
            words = m.group(1).split()
            directory = "."
            i = 0
            while i < len(words):
                w = words[i].rstrip(",;:)")
                if w == "-C" and i + 1 < len(words):
                    directory = words[i + 1].rstrip(",;:)")
                    i += 2
                    continue
                if "=" in w or w.startswith("-"):
                    i += 1
                    continue
                if re.fullmatch(r"[a-z][\w.%-]*", w) and w == words[i].rstrip(")"):
                    found.append((directory, w))
                    i += 1
                    if words[i - 1].endswith((",", ";", ")")):
                        break
                    continue
                break
    return found


_TARGETS = {}


def makefile_targets(directory):
    """Every target of DIR's Makefile, from make's database (make -p)."""
    if directory not in _TARGETS:
        out = subprocess.run(
            ["make", "--no-print-directory", "-C",
             os.path.join(REPO, directory), "-pRrq", ":"],
            capture_output=True, text=True).stdout
        names = set()
        for line in out.splitlines():
            m = re.match(r"([\w./%-][\w./% -]*?):(?!=)", line)
            if m and not line.startswith(("#", "\t")):
                names.update(m.group(1).split())
        _TARGETS[directory] = names
    return _TARGETS[directory]


def bad_make_targets(text):
    bad = []
    for directory, target in make_commands(text):
        names = makefile_targets(directory)
        if target not in names and not any(
                "%" in n and fnmatch(target, n.replace("%", "*"))
                for n in names):
            bad.append(("make -C %s" % directory if directory != "." else
                        "make") + " " + target)
    return bad


def long_paragraphs(text, rows_allowed=()):
    """(line, length) of each paragraph or table row over its limit; a row
    whose first cell is in ``rows_allowed`` may be longer."""
    out, cur, start, fence = [], [], 0, False

    def flush():
        if cur:
            t = " ".join(cur)
            if len(t) > MAX_PARAGRAPH:
                out.append((start, len(t)))
        cur.clear()

    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if line.startswith("```"):
            flush()
            fence = not fence
            continue
        if fence or not s or s.startswith(("#", "<!--")):
            flush()
            continue
        if s.startswith("|"):
            flush()
            first = s.strip("|").split("|")[0].strip()
            if len(s) > MAX_ROW and first not in rows_allowed:
                out.append((n, len(s)))
            continue
        if re.match(r"([-*]|\d+\.)\s", s):
            flush()
        if not cur:
            start = n
        cur.append(s)
    flush()
    return out


# The checks on the tree.

def test_links_exist():
    bad = {f: bad_links(f, read(f)) for f in doc_files()}
    bad = {f: b for f, b in bad.items() if b}
    assert not bad, "links to files that do not exist: %s" % bad


def test_paths_exist():
    bad = {f: bad_paths(read(f)) for f in doc_files()}
    bad = {f: b for f, b in bad.items() if b}
    assert not bad, "paths that do not exist: %s" % bad


def test_make_targets_exist():
    bad = {f: bad_make_targets(read(f)) for f in doc_files()}
    bad = {f: b for f, b in bad.items() if b}
    assert not bad, "make targets that do not exist: %s" % bad


def test_readme_is_a_front_page():
    n = len(read("README.md").splitlines())
    assert n <= MAX_README_LINES, \
        "README.md has %d lines (a front page: at most %d; reference " \
        "material goes to docs/)" % (n, MAX_README_LINES)


def test_no_long_paragraphs():
    bad = {f: long_paragraphs(read(f), {c for p, c in LONG_ROWS_ALLOWED
                                        if p == f})
           for f in doc_files() if f not in LONG_PARAGRAPHS_ALLOWED}
    bad = {f: b for f, b in bad.items() if b}
    assert not bad, "paragraphs over %d characters (line, length): %s" % (
        MAX_PARAGRAPH, bad)


# The checkers can fail.

def test_checkers_find_what_is_broken():
    text = ("See [the tests](TESTING.md), [nothing](NOWHERE.md) and "
            "[a section](CHT.md#design).\n"
            "`kernel/generic/src/nowhere.c`, `common/adt/cht.c`, "
            "`uspace/app/NAME/`\n\n"
            "`make test`, `make no-such-target`, `make -C uspace bench-big`, "
            "`make print-CFLAGS`, `make DEBUG=0 BUILD=build/rel kernel`\n"
            "<!-- [merge note](CONTROLS.md), `make controls2` -->\n"
            "```\nmake run ARCH=arm64   # the arm64 kernel\n"
            "make -C uspace nothing-here\n```\n")
    assert bad_links("docs/X.md", text) == ["NOWHERE.md"]
    assert bad_paths(text) == ["kernel/generic/src/nowhere.c"]
    assert make_commands(text) == [
        (".", "test"), (".", "no-such-target"), ("uspace", "bench-big"),
        (".", "print-CFLAGS"), (".", "kernel"), (".", "run"),
        ("uspace", "nothing-here")]
    assert bad_make_targets(text) == ["make no-such-target",
                                      "make -C uspace nothing-here"]
    assert long_paragraphs("a\n" + "word " * 300 + "\n\n| row |\n") == [
        (1, 1501)]
    row = "| x | " + "y" * MAX_ROW + " |\n"
    assert long_paragraphs(row) == [(1, MAX_ROW + 8)]
    assert long_paragraphs(row, {"x"}) == []
