#!/usr/bin/env python3
"""Fingerprints of the C functions the SPIN models stand for (drift check).

Every C function modelled in verify/ carries a ``/* Model: verify/x.pml */``
comment right before its definition. This tool finds each of them, takes the
function's text (signature and body, up to the matching closing brace),
drops its comments (a reworded comment changes no protocol), collapses every
run of whitespace to one space and hashes it (sha256, first
12 hex digits). Each model records, in its header comment, the fingerprint of
every function that names it:

     * Fingerprints (verify/fingerprint.py):
     *   kernel/generic/src/synch/rcu_arcu.c record_cs_qs 0123456789ab
     *   ...

tests/test_models.py::test_models_match_their_c (make test) fails when a
function's fingerprint differs from the one its model records: the C changed
and nobody looked at the model. After reviewing (and if needed changing) the
model:

    python3 verify/fingerprint.py --print          # the current fingerprints
    python3 verify/fingerprint.py --update         # write them into the headers
    python3 verify/fingerprint.py --check          # what the test checks

A function that appears twice in one file under one name (e.g. the
rcu_read_lock() of two variants in one file) is named name#2 for its
second occurrence.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

MARK = re.compile(r"/\* Model: ((?:verify/[\w.]+\.pml(?:, )?)+) \*/")
BEGIN = " * Fingerprints (verify/fingerprint.py):"
ENTRY = re.compile(r"^ \*   (\S+) (\S+) ([0-9a-f]{12})$")


def sources():
    """The C sources and headers of the tree (git's list, else a walk)."""
    try:
        out = subprocess.run(["git", "ls-files", "*.c", "*.h"], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, check=True).stdout.split()
        if out:
            return sorted(out)
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for top in ("kernel", "common", "uspace"):
        for d, _, files in os.walk(os.path.join(REPO, top)):
            found += [os.path.relpath(os.path.join(d, f), REPO)
                      for f in files if f.endswith((".c", ".h"))]
    return sorted(found)


def function_at(text, pos):
    """(name, text) of the function definition that starts after @pos."""
    brace = text.index("{", pos)
    sig = text[pos:brace]
    m = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", sig)
    if not m:
        raise ValueError("no function signature after the Model: comment "
                         "at offset %d" % pos)
    # Count braces outside comments, strings and character constants, and
    # only in the first branch of each #if (the #else of a negative control
    # may open a brace its #if branch also opens).
    depth = 0
    skip = []                   # per open #if: inside a later branch
    i = brace
    bol = text.rfind("\n", 0, i) + 1
    while True:
        if i == bol or text[i - 1] == "\n":
            line = text[i:text.find("\n", i)].strip()
            if line.startswith("#"):
                d = line[1:].strip()
                if d.startswith("if"):
                    skip.append(False)
                elif d.startswith(("else", "elif")) and skip:
                    skip[-1] = True
                elif d.startswith("endif") and skip:
                    skip.pop()
                i = text.find("\n", i)
                continue
        c = text[i]
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        if text.startswith("//", i):
            i = text.index("\n", i)
            continue
        if c in "\"'":
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if not any(skip):
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
        i += 1
    return m.group(1), text[pos:i + 1]


def fingerprint(body):
    code = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    return hashlib.sha256(" ".join(code.split()).encode()).hexdigest()[:12]


def functions():
    """[(model file, path, name, fingerprint)] of every marked function."""
    res = []
    for path in sources():
        with open(os.path.join(REPO, path), errors="replace") as f:
            text = f.read()
        seen = {}
        for m in MARK.finditer(text):
            name, body = function_at(text, m.end())
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = "%s#%d" % (name, seen[name])
            for model in m.group(1).split(", "):
                res.append((os.path.basename(model), path, name,
                            fingerprint(body)))
    return res


def recorded(model):
    """{(path, name): fingerprint} from the model's header block."""
    res = {}
    with open(os.path.join(HERE, model)) as f:
        lines = f.read().split("\n")
    if BEGIN not in lines:
        return res
    for line in lines[lines.index(BEGIN) + 1:]:
        m = ENTRY.match(line)
        if not m:
            break
        res[(m.group(1), m.group(2))] = m.group(3)
    return res


def by_model():
    models = {}
    for model, path, name, fp in functions():
        models.setdefault(model, []).append((path, name, fp))
    return models


def block(entries):
    return [BEGIN] + [" *   %s %s %s" % e for e in entries]


def update(model, entries):
    """Writes @entries as the model's block (after the first comment line's
    paragraph: right before the line ' * Safety' or the end of the header)."""
    p = os.path.join(HERE, model)
    with open(p) as f:
        lines = f.read().split("\n")
    if BEGIN in lines:
        i = lines.index(BEGIN)
        j = i + 1
        while j < len(lines) and ENTRY.match(lines[j]):
            j += 1
        lines[i:j] = block(entries)
    else:
        end = lines.index(" */")
        lines[end:end] = [" *"] + block(entries)
    with open(p, "w") as f:
        f.write("\n".join(lines))


def check():
    """The list of problems (empty: every model matches its C)."""
    problems = []
    models = by_model()
    for model, entries in sorted(models.items()):
        if not os.path.exists(os.path.join(HERE, model)):
            problems.append("%s names verify/%s, which does not exist"
                            % (entries[0][0], model))
            continue
        rec = recorded(model)
        for path, name, fp in entries:
            old = rec.pop((path, name), None)
            if old is None:
                problems.append("%s: %s() says 'Model: verify/%s' but the "
                                "model records no fingerprint for it"
                                % (path, name, model))
            elif old != fp:
                problems.append("%s: %s() changed (fingerprint %s, verify/%s "
                                "records %s): review verify/%s against it"
                                % (path, name, fp, model, old, model))
        for (path, name), old in sorted(rec.items()):
            problems.append("verify/%s records %s %s, which no longer carries "
                            "a 'Model: verify/%s' comment" % (model, path,
                                                              name, model))
    for f in sorted(os.listdir(HERE)):
        if f.endswith(".pml") and f not in models and recorded(f):
            problems.append("verify/%s records fingerprints but no C function "
                            "names it" % f)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--print", action="store_true",
                   help="print every model's block (the default)")
    g.add_argument("--update", action="store_true",
                   help="write the current fingerprints into the headers")
    g.add_argument("--check", action="store_true",
                   help="exit 1 and name each function that drifted")
    args = ap.parse_args()
    models = by_model()
    if args.check:
        problems = check()
        for p in problems:
            print(p)
        if problems:
            print("after reviewing the model: python3 verify/fingerprint.py "
                  "--update (or --print)")
        return 1 if problems else 0
    for model, entries in sorted(models.items()):
        if args.update:
            update(model, entries)
            print("verify/%s: %d fingerprints written" % (model, len(entries)))
        else:
            print("verify/%s:" % model)
            print("\n".join(block(entries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
