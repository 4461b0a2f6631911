#!/usr/bin/env python3
"""Size limits of the C sources (the structure goals of docs/ARCHITECTURE.md).

* No production C function over 80 lines (kernel/generic, kernel/genarch,
  kernel/arch, common/ but its tests, uspace/lib).
* No production C file over 900 lines.
* No kernel test function (kernel/test/, and common/test/: the tests built
  into the kernel and into user tasks) over 120 lines.

A function's length is counted from the line that names it to the line of
its closing brace, both included (what ``ctags --fields=+ne`` reports as
``end - line + 1``). The parser is a brace matcher over the text with
comments, strings, character constants and preprocessor lines blanked: a
``{`` at file scope that follows ``name(...)`` (optionally attributes) opens
a function; one that follows ``=``, ``struct``, ``union`` or ``enum`` does
not.

Usage: tools/size_check.py [--list] [--all]
  Prints every violation and exits 1 if there is any. --all lists the
  violations the allow-list excuses too.

Exit status 0 when nothing is over its limit.
"""

import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FUNC_LIMIT = 80
FILE_LIMIT = 900
TEST_FUNC_LIMIT = 120

#: Production C sources (function and file limits).
PRODUCTION = re.compile(
    r"^(kernel/(generic|genarch|arch)/|common/(?!test/)|uspace/lib/)"
    r".*\.[ch]$")
#: Kernel tests (the test-function limit): kernel/test/ and the shared
#: tests of common/test/ that the kernel and user tasks build.
KERNEL_TEST = re.compile(r"^(kernel/test/|common/test/).*\.[ch]$")

#: Violations excused for now, as (path, name or None for the file's size).
ALLOW = set()

#: Words before a '(' that are not a function's name.
NOT_NAMES = {"if", "while", "for", "switch", "return", "sizeof", "do",
             "__attribute__", "__typeof__", "typeof", "alignof",
             "_Alignof", "__alignof__", "asm", "__asm__"}


def tracked():
    out = subprocess.run(["git", "-C", REPO, "ls-files", "*.c", "*.h"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def blank(text):
    """The text with comments, strings, character constants and
    preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line with its continuations.
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    out.append(" \n")
                    continue
                j += 1
                out.append(" ")
            i = j
            continue
        if c in " \t" and line_start:
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, line count) of every function defined in text."""
    src = blank(text)
    result = []
    depth = 0
    prev_end = 0          # where the current file-scope declaration began
    open_at = None        # (name, line) of the function being read
    for m in re.finditer(r"[{};]", src):
        ch = m.group()
        if ch == "{":
            if depth == 0:
                head = src[prev_end:m.start()]
                open_at = None
                fm = None
                for fm in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", head):
                    if fm.group(1) not in NOT_NAMES:
                        break
                else:
                    fm = None
                if (fm and not re.search(r"=|\b(struct|union|enum)\s*\w*\s*$",
                                         head.rstrip())
                        and ")" in head[fm.end():]):
                    line = src.count("\n", 0, prev_end + fm.start()) + 1
                    open_at = (fm.group(1), line)
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if open_at:
                    end = src.count("\n", 0, m.start()) + 1
                    result.append((open_at[0], open_at[1],
                                   end - open_at[1] + 1))
                    open_at = None
                prev_end = m.end()
            elif depth < 0:
                depth = 0
        elif depth == 0:
            prev_end = m.end()
    return result


def violations(files=None, read=None):
    """(path, name or None, lines, limit) over every limit, sorted."""
    out = []
    for f in files if files is not None else tracked():
        prod, test = PRODUCTION.match(f), KERNEL_TEST.match(f)
        if not (prod or test):
            continue
        text = read(f) if read else open(os.path.join(REPO, f),
                                          errors="replace").read()
        if prod:
            n = text.count("\n")
            if n > FILE_LIMIT:
                out.append((f, None, n, FILE_LIMIT))
        if f.endswith(".c") or prod:
            limit = FUNC_LIMIT if prod else TEST_FUNC_LIMIT
            for name, _line, count in functions(text):
                if count > limit:
                    out.append((f, name, count, limit))
    return sorted(out, key=lambda v: (v[3], v[0], -v[2]))


def report(vs):
    return "\n".join(
        "%s: %s %d lines (limit %d)" % (
            f, "file" if name is None else name + "()", n, lim)
        for f, name, n, lim in vs)


def main(argv):
    vs = violations()
    if "--all" not in argv:
        vs = [v for v in vs if (v[0], v[1]) not in ALLOW]
    if vs:
        print(report(vs))
        print("%d over their limits" % len(vs))
        return 1
    print("no function or file over its limit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
