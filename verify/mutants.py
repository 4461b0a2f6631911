#!/usr/bin/env python3
"""Mutation score of the SPIN models (make verify-mutants).

Generates mutants of each model mechanically, one change each, in the code
the model runs (the lines active in at least one of its scenarios, inside
its inline and proctype bodies; not assertions, declarations, preprocessor
lines or comments; not the memory-model helper processes and the checking
helpers named in HARNESS):

  NEG   a guard negated: ``:: G ->``, ``atomic { G -> ...``, a blocking
        expression statement ``G;``
  WEAK  one top-level conjunct of a guard dropped (``A && B`` -> ``B``), one
        disjunct dropped (``A || B`` -> ``B``)
  REL   a relational operator replaced: >= by == and >, <= by == and <, ==
        by !=, != by ==, > by >=, < by <=
  LOGIC && by ||, || by &&
  DROP  a statement replaced by skip (a one-line statement, or the action of
        a one-line option)
  SWAP  two adjacent one-line statements of one block exchanged

Each mutant is run (spin -a, gcc, pan) in each scenario of its model where
the changed lines are active, safety first (-DSAFETY, assertions and invalid
end states), then liveness (pan -a -f, the model's ltl claim) in the first
two of those scenarios (cheapest first); it is KILLED by
the first run that reports an error, or by a search that cannot complete
within its bound (depth, memory, the time bound per run: reported as
"bound"). Otherwise it SURVIVED, unless verify/equivalent.txt lists its id
with an argument (EQUIVALENT). Mutants that SPIN or gcc reject are counted
as stillborn and left out.

Ids are stable (model, operator, a hash of the line(s) before and after and
the occurrence), so verify/equivalent.txt and the result file survive edits
elsewhere in the model. Results go to build/verify/mutants/results.jsonl,
one line per mutant (keyed by id and the mutant's code; "runs" lists each
pan run's scenario, mode, states stored and memory in MB as pan printed
them): a run that is stopped resumes where it was, skipping every mutant
recorded for the same code. verify/mutants-results.jsonl, a copy
committed after a round, is read as well (so a fresh worktree resumes
from it); to keep a round's results:
cp build/verify/mutants/results.jsonl verify/mutants-results.jsonl.

    python3 verify/mutants.py                 # every model, -j2, a table
    python3 verify/mutants.py --only arcu -j1
    python3 verify/mutants.py --list --only urcu   # the mutants, not run
    python3 verify/mutants.py --report        # the table from the results
    python3 verify/mutants.py --only cht --sample 40 --seed 1   # a sample

--sample N --seed S restricts a run and its table to a seeded random sample
of N of each model's mutants (drawn one at a time with
random.Random("S:model") from the mutants sorted by id: the same sample for
the same model and seed, and a larger N extends a smaller one); the
table then says "sample N of M (seed S)" and its score is that of the
sample, an estimate of the model's, not a full score.
"""

import argparse
import concurrent.futures
import fcntl
import hashlib
import json
import random
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.join(REPO, "build", "verify", "mutants")
RESULTS = os.path.join(WORK, "results.jsonl")
#: the results kept in the tree (a copy of RESULTS committed after a round:
#: build/ does not survive a worktree); read as well, RESULTS wins
KEPT = os.path.join(HERE, "mutants-results.jsonl")
EQUIV = os.path.join(HERE, "equivalent.txt")

DEPTH = 200000
MEMLIM = 1024
#: liveness bounds above MEMLIM (MB), as run.py gives the correct model's
#: liveness run: a mutant of the model needs at least as much
LIVE_MEMLIM = {"podzimek.pml": 2048}
TIMEOUT = 180           # seconds of CPU per pan run (the time bound;
                        # CPU, not wall: the host is shared)
WALL = 3600             # a wall-clock bound besides, for a stuck run

#: model file -> its scenarios (name, spin -D options), cheapest first (but
#: podzimek_waiters, the cheapest of podzimek's, is last: liveness runs in
#: the first scenario that runs a mutant's lines, and the waiters' scenario
#: has T's sections cut to one, never switched out)
MODELS = {
    "arcu": [("arcu", [])],
    "podzimek": [("podzimek", []), ("podzimek_migrate", ["-DMIGRATE"]),
                 ("podzimek_waiters", ["-DWAITERS"])],
    "urcu": [("urcu", []), ("urcu_fence", ["-DFENCE"])],
    "urcu_cb": [("urcu_cb", [])],
    "cht": [("cht_list", []), ("cht_collide", ["-DCOLLIDE"]),
            ("cht_shrink", ["-DSHRINK"]), ("cht_grow", ["-DGROW"]),
            # last, so liveness stays in cht_list and cht_collide: the
            # cht_list set-up with a second remover of K2 (1.13 M states)
            ("cht_twin", ["-DTWIN"])],
}

#: liveness runs in this many of the scenarios that run a mutant's lines
#: (the cheapest first); podzimek_migrate's liveness search is too large for
#: every survivor (its safety search is run)
LIVENESS_SCENARIOS = {"arcu": 1, "podzimek": 1, "urcu": 2, "urcu_cb": 1,
                      "cht": 2}

#: blocks that are not the modelled code: the memory model's helper
#: processes, the observers, the abstractions of other modules (adt/list.h,
#: the wait queue, RCU inside the CHT model) and the checks
HARNESS = {
    "arcu": {"LQ", "USB", "CSB", "list_append", "list_remove", "wq_wake"},
    "podzimek": {"LQ", "USB", "QSB", "list_append", "list_remove",
                 "wq_wake", "irq_arrives", "irq_reader"},
    "urcu": {"LQ", "RSB", "WSB", "WSQ", "sb_push", "END"},
    "urcu_cb": {"SB", "RD"},
    "cht": {"reach_check", "init_check", "complete_check", "retired_check",
            "rcu_lock", "rcu_unlock", "synchronize"},
}

#: instrumentation (what the checks read, not what the protocol does): a
#: line whose code matches is not mutated
CHECKS = {
    "arcu": r"rpend = p\b",
    "podzimek": r"rpend = p\b|\birq_reader\(",
    "urcu": r"rpend = p\b",
    "urcu_cb": r"\bpre\[|\bposted\b|\bbefore_b\b|\bnran\b|\bran\[",
    "cht": r"\bcalled\[|present_missed|removed_found|remove_missed|"
           r"present = |CHECK\(res\)|init_check\(|complete_check\(|"
           r"retired_check\(|twin_removed|\bdoneC\b",
}

BLOCK = re.compile(r"^(?:active\s+)?(?:proctype|inline)\s+(\w+)\s*\(|^init\b")
DECL = re.compile(r"^\s*(?:byte|bool|short|int|bit|unsigned)\s")
KEYWORD_START = re.compile(r"^(?:do|od|if|fi|else|break|skip|goto)\b")


# ---------------------------------------------------------------------------
# Which lines each scenario runs (the preprocessor, BROKEN_* undefined)

def eval_cond(expr, defined):
    e = re.sub(r"defined\s*\(\s*(\w+)\s*\)",
               lambda m: str(m.group(1) in defined), expr)
    e = e.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"!(?!=)", " not ", e)
    return bool(eval(e, {}, {}))


def active_lines(lines, defs):
    """Set of line indices active with the macros @defs defined."""
    defined = {d[2:].split("=")[0] for d in defs}
    stack = []          # (this branch active, some branch taken, parent)
    active = set()
    on = True
    for i, line in enumerate(lines):
        s = line.strip()
        m = re.match(r"#\s*(\w+)\s*(.*)", s)
        if m:
            kw, rest = m.group(1), m.group(2)
            rest = re.sub(r"/\*.*?\*/", "", rest).strip()
            if kw in ("ifdef", "ifndef", "if"):
                if kw == "ifdef":
                    c = rest in defined
                elif kw == "ifndef":
                    c = rest not in defined
                else:
                    c = eval_cond(rest, defined)
                stack.append((on, c))
                on = on and c
            elif kw == "elif":
                parent, taken = stack[-1]
                c = (not taken) and eval_cond(rest, defined)
                stack[-1] = (parent, taken or c)
                on = parent and c
            elif kw == "else":
                parent, taken = stack[-1]
                on = parent and not taken
                stack[-1] = (parent, True)
            elif kw == "endif":
                on = stack.pop()[0]
            elif kw == "define" and on:
                defined.add(rest.split()[0].split("(")[0])
            continue
        if on:
            active.add(i)
    return active


# ---------------------------------------------------------------------------
# Mutant generation

def code_parts(lines):
    """[(code, comment tail)] per line: comments removed (multi-line too)."""
    res = []
    incomment = False
    for line in lines:
        code = ""
        i = 0
        while i < len(line):
            if incomment:
                j = line.find("*/", i)
                if j < 0:
                    i = len(line)
                else:
                    incomment = False
                    i = j + 2
            else:
                j = line.find("/*", i)
                if j < 0:
                    code += line[i:]
                    i = len(line)
                else:
                    code += line[i:j]
                    incomment = True
                    i = j + 2
        res.append(code.rstrip())
    return res


def blocks(lines, code):
    """{line index: the name of the inline/proctype/init body it is in}."""
    where = {}
    name = None
    depth = 0
    for i, line in enumerate(lines):
        m = BLOCK.match(line)
        if m and depth == 0:
            name = m.group(1) or "init"
        if name is not None:
            where[i] = name
        depth += code[i].count("{") - code[i].count("}")
        if name is not None and depth == 0 and "}" in code[i]:
            name = None
    return where


def split_top(expr, op):
    """expr split on the top-level binary operator @op ('&&' or '||')."""
    parts, depth, cur, i = [], 0, "", 0
    while i < len(expr):
        c = expr[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if depth == 0 and expr.startswith(op, i):
            parts.append(cur)
            cur = ""
            i += 2
            continue
        cur += c
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts]


def guard_of(code):
    """(prefix, guard, suffix) of a line's guard, or None."""
    m = re.match(r"^(\s*::\s*)(.*?)(\s*->.*)$", code)
    if m and m.group(2).strip() not in ("else", "") and \
            not m.group(2).lstrip().startswith(("atomic", "d_step")):
        return m.group(1), m.group(2), m.group(3)
    m = re.match(r"^(.*?\b(?:atomic|d_step)\s*\{\s*)(.*?)(\s*->.*)$", code)
    if m and "=" not in m.group(2).replace("==", "").replace(
            "!=", "").replace(">=", "").replace("<=", ""):
        return m.group(1), m.group(2), m.group(3)
    m = re.match(r"^(\s*)([^:{}]+?)(\s*->\s*)$", code)
    if m:               # the guard of a multi-line atomic or option
        return m.group(1), m.group(2), m.group(3)
    m = re.match(r"^(\s*)([^=;:{}]*?|.*?(?:==|!=|>=|<=).*?)(\s*;?\s*)$", code)
    if m and is_expr_stmt(m.group(2)):
        return m.group(1), m.group(2), m.group(3)
    return None


def is_expr_stmt(s):
    s = s.strip()
    if not s or KEYWORD_START.match(s) or "->" in s or "{" in s or \
            "}" in s or "::" in s:
        return False
    if re.search(r"(?<![=!<>])=(?!=)", s) or "++" in s or "--" in s:
        return False
    if re.match(r"^\w+\s*\(", s) and not re.match(r"^\(", s):
        return False        # an inline call
    return True


def simple_stmt(code):
    """(indent, statement, separator) of a one-line statement, or None."""
    m = re.match(r"^(\s*)(.*?)(\s*;?)$", code)
    if not m:
        return None
    st = m.group(2).strip()
    if not st or st.startswith("::") or KEYWORD_START.match(st) or \
            st.startswith("#") or st.count("{") != st.count("}") or \
            st in ("}", "{") or re.match(r"^\w+\s*:", st) and \
            not st.startswith(("atomic", "d_step")):
        return None
    if re.search(r"\b(do|if)\s*$", st):
        return None
    return m.group(1), st, m.group(3)


REL = [(">=", ["==", ">"]), ("<=", ["==", "<"]), ("==", ["!="]),
       ("!=", ["=="]), (">", [">="]), ("<", ["<="])]
REL_RE = re.compile(r"(?<![-<>=!])(>=|<=|==|!=|>|<)(?![=<>])")


def mutate_line(code):
    """[(op, new code)] for one line."""
    out = []
    g = guard_of(code)
    if g:
        pre, guard, suf = g
        g = guard.strip()
        tail = ""
        for op in ("&&", "||"):
            if g.endswith(op):      # continued on the next line
                g, tail = g[:-2].rstrip(), " " + op
        out.append(("NEG", pre + "!(" + g + ")" + tail + suf))
        for op in ("&&", "||"):
            # a guard continued on the next line ends in its operator: that
            # is no conjunct (dropping the empty part made a mutant that
            # removed only the operator); the real parts are dropped and
            # the operator kept
            g = guard.rstrip()
            tail = ""
            if g.endswith(op):
                g, tail = g[:-2].rstrip(), " " + op
            parts = split_top(g, op)
            if len(parts) > 1 and all(parts):
                for k in range(len(parts)):
                    rest = (" %s " % op).join(p for j, p in enumerate(parts)
                                              if j != k)
                    out.append(("WEAK", pre + rest + tail + suf))
    for m in REL_RE.finditer(code):
        for old, news in REL:
            if m.group(1) == old:
                for new in news:
                    out.append(("REL", code[:m.start()] + new +
                                code[m.end():]))
    for m in re.finditer(r"&&|\|\|", code):
        new = "||" if m.group(0) == "&&" else "&&"
        out.append(("LOGIC", code[:m.start()] + new + code[m.end():]))
    m = re.match(r"^(\s*::\s*[^;]*?->\s*)(.+?)\s*$", code)
    if m and not m.group(1).lstrip().startswith(":: else") and \
            m.group(2).strip() not in ("break", "skip") and \
            m.group(2).count("{") == m.group(2).count("}"):
        out.append(("DROP", m.group(1) + "skip"))
    elif re.match(r"^\s*[^:{}]+?\s*->\s*$", code):
        out.append(("DROP", re.sub(r"^(\s*).*?(\s*->\s*)$", r"\1true\2",
                                   code)))
    elif not code.strip().startswith("::"):
        s = simple_stmt(code)
        if s and s[1] not in ("skip", "break"):
            out.append(("DROP", s[0] + "skip" + s[2]))
    return out


def mid(model, op, before, after, k):
    h = hashlib.sha1(("%s|%s|%d" % ("\n".join(x.strip() for x in before),
                                     "\n".join(x.strip() for x in after),
                                     k)).encode()).hexdigest()[:10]
    return "%s:%s:%s" % (model, op, h)


def src_key(src):
    """The key of a mutant's result: a hash of its code, comments left out
    (a model whose comments changed keeps its results)."""
    code = "\n".join(c for c in code_parts(src.split("\n")) if c.strip())
    return hashlib.sha1(code.encode()).hexdigest()[:12]


def generate(model, path=None):
    """[(id, op, [line indices], description, mutated source)]."""
    with open(path or os.path.join(HERE, model + ".pml")) as f:
        src = f.read()
    lines = src.split("\n")
    code = code_parts(lines)
    where = blocks(lines, code)
    act = set()
    for _, defs in MODELS[model]:
        act |= active_lines(lines, defs)
    ok = {i for i in act
          if i in where and where[i] not in HARNESS[model] and code[i].strip()
          and "assert" not in code[i] and not DECL.match(code[i])
          and not code[i].lstrip().startswith("#")
          and not re.search(CHECKS[model], code[i])
          and not BLOCK.match(lines[i])}
    muts = []
    seen = {}

    def add(op, idx, new_lines, desc):
        before = [lines[i] for i in idx]
        key = (op, tuple(x.strip() for x in before),
               tuple(x.strip() for x in new_lines))
        seen[key] = seen.get(key, 0) + 1
        m_id = mid(model, op, before, new_lines, seen[key])
        out = list(lines)
        for i, nl in zip(idx, new_lines):
            # keep the line's comment out of the mutant: code only
            out[i] = nl
        muts.append((m_id, op, idx, desc, "\n".join(out)))

    for i in sorted(ok):
        for op, new in mutate_line(code[i]):
            if new != code[i]:
                add(op, [i], [new], "line %d: %s  =>  %s" % (
                    i + 1, code[i].strip(), new.strip()))
        # SWAP with the next line of the same block and indentation
        j = i + 1
        if j in ok and where.get(j) == where.get(i):
            a, b = simple_stmt(code[i]), simple_stmt(code[j])
            if a and b and a[0] == b[0] and not code[i].strip().startswith(
                    "::") and not code[j].strip().startswith("::"):
                add("SWAP", [i, j], [a[0] + b[1] + a[2], b[0] + a[1] + b[2]],
                    "lines %d-%d swapped: %s / %s" % (i + 1, j + 1, a[1],
                                                     b[1]))
    return muts, lines, code


# ---------------------------------------------------------------------------
# Running

def cpu_limit():
    resource.setrlimit(resource.RLIMIT_CPU, (TIMEOUT, TIMEOUT + 10))


def sh(cmd, cwd, timeout=None, limit=False):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=timeout,
                           preexec_fn=cpu_limit if limit else None)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return None, out


def pan_stats(out):
    """{'states': states stored, 'mb': total memory usage} from pan's
    output (what it printed; empty when it printed no summary)"""
    st = {}
    m = re.search(r"^\s*([\d.e+]+) states, stored", out, re.M)
    if m:
        st["states"] = int(float(m.group(1)))
    m = re.search(r"^\s*([\d.]+)\s+total actual memory usage", out, re.M)
    if m:
        st["mb"] = round(float(m.group(1)))
    return st


def pan_run(d, pml, defs, mode, stats=None):
    """'error: ...', 'bound: ...', 'ok' or 'stillborn: ...'; appends pan's
    figures (states stored, memory) to @stats when given."""
    rc, out = sh(["spin"] + defs + ["-a", pml], d, 120)
    if rc != 0:
        return "stillborn: spin: " + (out.strip().splitlines() or ["?"])[-1]
    # safety first, usually stopped early: compiling dominates (-O0);
    # liveness runs only for a mutant that passed safety: a full search
    memlim = MEMLIM if mode == "safety" else LIVE_MEMLIM.get(
        os.path.basename(pml), MEMLIM)
    cflags = ["-O0" if mode == "safety" else "-O1", "-w",
              "-DMEMLIM=%d" % memlim]
    args = ["-m%d" % DEPTH]
    if mode == "safety":
        cflags += ["-DSAFETY", "-DNOCLAIM"]
    else:
        cflags += ["-DNFAIR=3"]
        args = ["-a", "-f"] + args
    rc, out = sh(["gcc"] + cflags + ["-o", "pan", "pan.c"], d, 300)
    if rc != 0:
        return "stillborn: gcc"
    rc, out = sh(["./pan"] + args, d, WALL, limit=True)
    if stats is not None:
        st = pan_stats(out)
        st["mode"] = mode
        stats.append(st)
    if rc is None:
        return "timeout: over %d s of wall time (%s)" % (WALL, mode)
    if rc in (-signal.SIGXCPU, -signal.SIGKILL):
        return "timeout: over %d s of CPU (%s)" % (TIMEOUT, mode)
    if rc < 0:
        # pan killed by a signal (the run was stopped): record nothing
        raise RuntimeError("pan killed by signal %d" % -rc)
    m = re.search(r"errors: (\d+)", out)
    first = re.search(r"^pan:1: (.*)$", out, re.M)
    if m and int(m.group(1)) > 0:
        return "error: %s: %s" % (mode, first.group(1).strip() if first
                                  else "?")
    inc = re.search(r"max search depth too small|out of memory|"
                    r"reached -DMEMLIM", out)
    if inc:
        return "bound: %s (%s)" % (inc.group(0), mode)
    if not m:
        return "bound: no result (%s)" % mode
    return "ok"


#: run_mutant()'s answer when another process is running the same mutant
BUSY = "busy"


def run_mutant(model, m_id, idx, src, quick=False, quick_in=None):
    """The result of one mutant (None: --quick left it for the full run;
    BUSY: another process holds its directory, nothing was run). Two
    processes given the same id (e.g. two --ids lists that meet) used to
    share the directory: the second's rmtree broke the first's run ("a
    stillborn: gcc" recorded beside its "survived"); a lock on the mutant
    now lets only one run it."""
    os.makedirs(os.path.join(WORK, model), exist_ok=True)
    d = os.path.join(WORK, model, m_id.split(":", 1)[1].replace(":", "-"))
    lk = open(d + ".lock", "w")
    try:
        fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lk.close()
        return BUSY
    try:
        return _run_mutant(model, m_id, idx, src, d, quick, quick_in)
    finally:
        lk.close()


def _run_mutant(model, m_id, idx, src, d, quick, quick_in):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    pml = model + ".pml"
    with open(os.path.join(d, pml), "w") as f:
        f.write(src)
    lines = src.split("\n")
    t0 = time.monotonic()
    scen = [(n, defs) for n, defs in MODELS[model]
            if all(i in active_lines(lines, defs) for i in idx)]
    verdict, by = "survived", ""
    # a time-out or a bound is final only if no later run kills the mutant
    # (a search too large in one scenario, e.g. cht_grow's safety, can end
    # in an error in another, e.g. cht_shrink's liveness)
    unfinished = None
    runs = []           # pan's figures per run (scenario, mode, states, MB)
    if quick:
        # the first pass: safety in the cheapest scenario only; a mutant
        # it does not kill is left for the full run (not recorded)
        # (--quick-in NAME: that scenario instead, when it runs the lines)
        scen = [s for s in scen if s[0] == quick_in] or scen[:1]
    for mode in (("safety",) if quick else ("safety", "liveness")):
        # liveness in the two cheapest scenarios that run the lines (cht:
        # cht_list and cht_collide, or cht_shrink and cht_grow)
        for name, defs in (scen if mode == "safety" else
                           scen[:LIVENESS_SCENARIOS[model]]):
            stats = []
            r = pan_run(d, pml, defs, mode, stats)
            for st in stats:
                st["scenario"] = name
            runs += stats
            if r.startswith("stillborn"):
                verdict, by = "stillborn", r
                break
            if r.startswith("error"):
                verdict, by = "killed", "%s %s" % (name, r)
                break
            if r != "ok" and unfinished is None:
                unfinished = (r.split(":")[0], "%s %s" % (name, r))
        if verdict != "survived":
            break
    if verdict == "survived" and unfinished is not None:
        verdict, by = unfinished
    shutil.rmtree(d, ignore_errors=True)
    if quick and verdict == "survived":
        return None         # a time-out or a bound is final: recorded
    return {"verdict": verdict, "by": by, "secs": round(time.monotonic() - t0,
                                                         1),
            "scenarios": [n for n, _ in scen], "runs": runs}


def load_results():
    """{(id, code key): result} from the kept copy, then RESULTS (a later
    line for the same key wins)."""
    res = {}
    for path in (KEPT, RESULTS):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                res[(r["id"], r["src"])] = r
    return res


def load_equivalent():
    """{id: argument} from verify/equivalent.txt (``id  argument``)."""
    eq = {}
    if os.path.exists(EQUIV):
        with open(EQUIV) as f:
            cur = None
            for line in f:
                if line.startswith("#") or not line.strip():
                    cur = None
                    continue
                if not line[0].isspace():
                    cur, _, arg = line.strip().partition(" ")
                    eq[cur] = arg.strip()
                elif cur:
                    eq[cur] += " " + line.strip()
    return eq


def by_id(results):
    """{id: the verdict recorded for any version of the model, a kill or a
    kill first (anything else is carried as it was: conservative)}"""
    res = {}
    for (m_id, _), r in results.items():
        if r["verdict"] == "killed" or m_id not in res:
            res[m_id] = r
    return res


def sample_ids(model, muts, n, seed):
    """The ids of a seeded random sample of @n of @model's mutants (all of
    them when @n is 0 or not smaller)."""
    ids = sorted(m[0] for m in muts)
    if not n or n >= len(ids):
        return set(ids)
    # picked one at a time (the pool method of random.sample, written out
    # so that it does not depend on n): a larger n extends a smaller one
    rng = random.Random("%s:%s" % (seed, model))
    pool, pick = list(ids), []
    for i in range(n):
        j = rng.randrange(len(ids) - i)
        pick.append(pool[j])
        pool[j] = pool[len(ids) - i - 1]
    return set(pick)


def carry_from_keys(dirs, models):
    """{(id, code key in the current model): code key of the same id in an
    earlier version DIR/<model>.pml} for each DIR of --carry-from"""
    keys = {}
    for snap in dirs:
        for model in models:
            path = os.path.join(snap, model + ".pml")
            if not os.path.exists(path):
                continue
            old = dict((m[0], src_key(m[4])) for m in generate(model, path)[0])
            for m in generate(model)[0]:
                if m[0] in old:
                    keys.setdefault((m[0], src_key(m[4])), []).append(
                        old[m[0]])
    return keys


def carried_from(results, keys, m_id, h):
    """the result of mutant m_id (code key h) recorded for an earlier
    version named by --carry-from, a kill first, else None"""
    found = None
    for k in keys.get((m_id, h), []):
        r = results.get((m_id, k))
        if r is not None and (found is None or r["verdict"] == "killed"):
            found = r
    return found


def table(models, results, eq, details=False, carry=False, sample=0,
          seed=0, carry_keys=None):
    rows = []
    keys = ("mutants", "killed", "bound", "timeout", "survived",
            "equivalent", "stillborn", "pending", "carried")
    tot = dict((k, 0) for k in keys)
    out = []
    carried = by_id(results)
    for model in models:
        muts, _, _ = generate(model)
        total = len(muts)
        if sample:
            pick = sample_ids(model, muts, sample, seed)
            muts = [m for m in muts if m[0] in pick]
        c = dict((k, 0) for k in keys)
        surv = []
        unfinished = []
        for m_id, op, idx, desc, src in muts:
            h = src_key(src)
            r = results.get((m_id, h))
            if r is None and carry_keys:
                r = carried_from(results, carry_keys, m_id, h)
                if r is not None:
                    c["carried"] += 1
            if r is None and carry:
                r = carried.get(m_id)
                if r is not None:
                    c["carried"] += 1
            if r is None:
                c["pending"] += 1
                continue
            v = r["verdict"]
            if v == "stillborn":
                c["stillborn"] += 1
                continue
            c["mutants"] += 1
            if v in ("survived", "timeout", "bound") and m_id in eq:
                c["equivalent"] += 1
            elif v == "survived":
                c["survived"] += 1
                surv.append((m_id, desc))
            else:
                c[v] += 1
                if v != "killed":
                    unfinished.append((m_id, "%s (%s)" % (desc, r["by"])))
        ne = c["mutants"] - c["equivalent"]
        # a time-out or a depth/memory bound is not a kill: it counts
        # against the score
        score = 100.0 * c["killed"] / ne if ne else 100.0
        rows.append("| %s | %d | %d | %d | %d | %d | %d | %s | %d |" % (
            model, c["mutants"], c["killed"], c["timeout"], c["bound"],
            c["survived"], c["equivalent"],
            "%.1f %%" % score if ne else "-", c["pending"]) +
            (" (%d carried)" % c["carried"] if c["carried"] else "") +
            (" sample %d of %d (seed %s)" % (len(muts), total, seed)
             if len(muts) < total else ""))
        for k in tot:
            tot[k] += c[k]
        if details and surv:
            out.append("survivors of %s (not in verify/equivalent.txt):"
                       % model)
            out += ["  %s  %s" % s for s in surv]
        if details and unfinished:
            out.append("timed out or bounded in %s (not counted as killed):"
                       % model)
            out += ["  %s  %s" % s for s in unfinished]
    hdr = ["| model | mutants | killed | timed out | depth/memory bound | "
           "survived | equivalent | score (killed / non-equivalent) | "
           "not run yet |",
           "|---|---|---|---|---|---|---|---|---|"]
    return "\n".join(hdr + rows), "\n".join(out), tot


def rekey(snap, models):
    old = {}
    for model in models:
        path = os.path.join(snap, model + ".pml")
        if os.path.exists(path):
            for m_id, _, _, _, src in generate(model, path)[0]:
                old[(m_id, hashlib.sha1(src.encode()).hexdigest()[:12])] = \
                    src_key(src)
    n = 0
    out = []
    with open(RESULTS) as f:
        for line in f:
            r = json.loads(line)
            k = old.get((r["id"], r["src"]))
            if k:
                r["src"] = k
                n += 1
            out.append(json.dumps(r) + "\n")
    with open(RESULTS + ".tmp", "w") as f:
        f.writelines(out)
    os.replace(RESULTS + ".tmp", RESULTS)
    print("%d results rekeyed" % n)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("-j", type=int, default=2, help="parallel runs (<= 2)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--limit", type=int, default=0,
                    help="run at most this many mutants (0: all)")
    ap.add_argument("--ids", default="",
                    help="run only these mutant ids (comma-separated)")
    ap.add_argument("--carry", action="store_true",
                    help="count (and do not rerun) a kill or bound recorded for an earlier version of "
                    "a model (valid for kills when the model changed only by a "
                    "stronger property: an added assertion or ltl conjunct "
                    "keeps every error; survivors are carried as survivors)")
    ap.add_argument("--carry-from", action="append", default=[],
                    metavar="DIR",
                    help="like --carry, but only the results recorded for "
                    "the version of each model in DIR/<model>.pml (e.g. "
                    "git show HEAD~1:verify/cht.pml), valid when the "
                    "current model only adds assertions to it; repeatable")
    ap.add_argument("--quick", action="store_true",
                    help="a first pass: safety in each mutant's cheapest "
                    "scenario only, recording kills, time-outs and bounds "
                    "(a mutant that passes is left for a full run)")
    ap.add_argument("--quick-in", metavar="SCENARIO",
                    help="with --quick: run the safety search in this "
                    "scenario (e.g. podzimek_migrate) instead of the "
                    "cheapest, for a mutant whose lines it runs")
    ap.add_argument("--rekey", metavar="DIR",
                    help="rewrite the results recorded with the old key (a "
                    "hash of the whole mutant text) for the models as they "
                    "are in DIR/<model>.pml to the key of their code")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="run (and report) only a seeded random sample of N "
                    "mutants of each model (reported as a sample)")
    ap.add_argument("--seed", default="1",
                    help="the seed of --sample (default 1)")
    args = ap.parse_args()
    models = args.only or list(MODELS)
    if args.rekey:
        return rekey(args.rekey, models)
    if shutil.which("spin") is None:
        print("spin not installed (tools/ensure-deps.sh verify)")
        return 1
    if args.list:
        for model in models:
            for m_id, op, idx, desc, src in generate(model)[0]:
                print("%s  %s" % (m_id, desc))
        return 0
    eq = load_equivalent()
    if not args.report:
        os.makedirs(WORK, exist_ok=True)
        results = load_results()
        carried = by_id(results) if args.carry else {}
        ckeys = carry_from_keys(args.carry_from, models)
        todo = []
        for model in models:
            muts = generate(model)[0]
            pick = sample_ids(model, muts, args.sample, args.seed)
            for m_id, op, idx, desc, src in muts:
                if m_id not in pick:
                    continue
                h = src_key(src)
                c = carried.get(m_id)
                if c is not None and c["verdict"] != "survived":
                    continue        # a kill or a bound carried (--carry)
                c = carried_from(results, ckeys, m_id, h)
                if c is not None and c["verdict"] == "killed":
                    continue        # a kill carried (--carry-from)
                if (m_id, h) not in results:
                    todo.append((model, m_id, idx, desc, src, h))
        if args.ids:
            want = set(args.ids.split(","))
            todo = [t for t in todo if t[1] in want]
        # the mutants argued equivalent by hand last (each is a full
        # search: the costliest runs), in model order otherwise
        todo.sort(key=lambda t: t[1] in eq)
        if args.limit:
            todo = todo[:args.limit]
        print("%d mutants to run (%d results kept)" % (len(todo),
                                                       len(results)),
              flush=True)
        lock = threading.Lock()
        t0 = time.monotonic()
        done = [0]
        running = [0]

        def one(t):
            model, m_id, idx, desc, src, h = t
            # the second worker starts a mutant only while the machine is
            # otherwise idle (1-minute load average below 2: our own
            # worker counts 1): the cores are shared
            # (or when the other worker is idle: never two runs at load)
            if threading.current_thread().name.endswith("_1"):
                while os.getloadavg()[0] >= 2 and running[0] > 0:
                    time.sleep(5)
            with lock:
                running[0] += 1
            try:
                r = run_mutant(model, m_id, idx, src, quick=args.quick,
                               quick_in=args.quick_in)
            finally:
                with lock:
                    running[0] -= 1
            with lock:
                done[0] += 1
                if r is None or r == BUSY:
                    print("[%d/%d %.0fs] %-28s %s" % (
                        done[0], len(todo), time.monotonic() - t0, m_id,
                        "left for the full run" if r is None else
                        "run by another process now: skipped"), flush=True)
                    return
                r.update(id=m_id, src=h, desc=desc)
                with open(RESULTS, "a") as f:
                    f.write(json.dumps(r) + "\n")
                print("[%d/%d %.0fs] %-28s %-9s %s%s" % (
                    done[0], len(todo), time.monotonic() - t0, m_id,
                    r["verdict"], desc[:60],
                    "" if r["verdict"] != "killed" else ""), flush=True)
        with concurrent.futures.ThreadPoolExecutor(
                max(1, min(args.j, 2)), thread_name_prefix="mut") as ex:
            list(ex.map(one, todo))
    results = load_results()
    tab, surv, tot = table(models, results, eq, details=True,
                           carry=args.carry, sample=args.sample,
                           carry_keys=carry_from_keys(args.carry_from,
                                                      models),
                           seed=args.seed)
    print()
    print(tab)
    if surv:
        print()
        print(surv)
    unknown = [i for i in eq if not any(k[0] == i for k in results)]
    if unknown:
        print("\nverify/equivalent.txt names ids with no result: %s"
              % ", ".join(unknown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
