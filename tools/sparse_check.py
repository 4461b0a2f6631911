#!/usr/bin/env python3
"""Run sparse over kernel C files and fail on any diagnostic (make check).

    tools/sparse_check.py [--sparse PATH] [--label TEXT] FILE... -- FLAG...

Each FILE is checked with `sparse FLAG... FILE` (the kernel's CFLAGS: its
include paths and configuration defines; sparse defines __CHECKER__, which
turns on the address-space annotations of kernel/generic/include/compiler.h).
Every warning or error sparse prints is reported, grouped with its
continuation lines and the "in included file" note before it, and the exit
status is 1 if there was any, 0 if the files are clean, 2 on a usage error or
when sparse cannot be run.

One diagnostic is not reported, a false positive of sparse 0.6.4 (Debian 12):
an __atomic builtin on an object of an enum type is "error: invalid type for
argument 1" with the type `... enum NAME *` (sparse's atomic builtins accept
integer and pointer objects but not enums; GCC accepts enums, which are
integers). It is dropped only when that type line names no address space
(no `__user`, `__rcu`, `noderef`), so it can never hide a user or RCU pointer.
tests/test_sparse.py checks that this filter keeps everything else.
"""

import argparse
import re
import shutil
import subprocess
import sys

# file:line:col: (warning|error): message   (or file: note: ...)
HEAD = re.compile(r"^(?P<loc>[^:\s]+(?::\d+:\d+)?): (?P<kind>warning|error|note): "
                  r"(?P<msg>.*)$")
CONT = re.compile(r"^[^:\s]+:\d+:\d+:\s{2,}\S")


def group(lines):
    """Split sparse's output into diagnostics: lists of lines, each a head
    line with its continuation lines, a leading note attached to the next."""
    groups, pending = [], []
    for line in lines:
        m = HEAD.match(line)
        if m and m.group("kind") == "note":
            pending.append(line)
        elif m:
            groups.append(pending + [line])
            pending = []
        elif groups and CONT.match(line):
            groups[-1].append(line)
        elif line.strip():
            # Anything else sparse prints (a fatal message) counts too.
            groups.append(pending + [line])
            pending = []
    if pending:
        groups.append(pending)
    return groups


ENUM_TYPE = re.compile(r"\benum \w+ \*$")


def is_enum_atomic_false_positive(diag):
    """The sparse 0.6.4 false positive described in the module docstring."""
    heads = [line for line in diag if HEAD.match(line)
             and HEAD.match(line).group("kind") != "note"]
    if len(heads) != 1:
        return False
    m = HEAD.match(heads[0])
    if m.group("kind") != "error" or not re.fullmatch(
            r"invalid type for argument \d+:", m.group("msg")):
        return False
    conts = diag[diag.index(heads[0]) + 1:]
    if len(conts) != 1:
        return False
    ty = conts[0].split(":", 3)[3].strip()
    return (ENUM_TYPE.search(ty) is not None and "__user" not in ty
            and "__rcu" not in ty and "noderef" not in ty)


def check(sparse, files, flags):
    """Return (diagnostics, dropped) over @files: lists of line groups."""
    reported, dropped = [], []
    for f in files:
        r = subprocess.run([sparse] + flags + [f], capture_output=True,
                           text=True)
        out = (r.stdout + r.stderr).splitlines()
        for diag in group(out):
            (dropped if is_enum_atomic_false_positive(diag)
             else reported).append(diag)
        if r.returncode != 0 and not out:
            reported.append(["%s: sparse exited with status %d" %
                             (f, r.returncode)])
    return reported, dropped


def main(argv):
    if "--" not in argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    split = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparse", default="sparse")
    ap.add_argument("--label", default="")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv[:split])
    flags = argv[split + 1:]
    sparse = shutil.which(args.sparse)
    if not sparse:
        print("sparse_check: %s not found (tools/ensure-deps.sh check)" %
              args.sparse, file=sys.stderr)
        return 2
    reported, dropped = check(sparse, args.files, flags)
    for diag in reported:
        print("\n".join(diag))
    label = " (%s)" % args.label if args.label else ""
    print("sparse%s: %d files, %d diagnostics%s" % (
        label, len(args.files), len(reported),
        ", %d enum-atomic false positives dropped" % len(dropped)
        if dropped else ""))
    return 1 if reported else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
