#!/usr/bin/env python3
"""The broken variants written for the extended models (nesting, real lists,
wake-ups, collisions), on the stock models and the new.

For each variant: the stock model (verify/*.pml at STOCK, before the extension)
with the same change written into it (a text replacement), or unchanged when
the stock model cannot express the change (it has no such step), and the new
model with -DBROKEN_x. Prints SPIN's verdict both ways and writes the table
to verify/own-variants.txt. The point of each: it passes on the stock model
and is caught by the new one.

    python3 verify/own_variants.py            # about 2 minutes
"""

import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as verify  # noqa: E402

STOCK = "ae3a91c"       # the tree before the models were extended
WORK = os.path.join(REPO, "build", "verify", "own")

# (variant, pml, defs, mode, [(old, new), ...] on the stock file or None)
VARIANTS = [
    ("BROKEN_SAMPLE_DEPTH1", "arcu.pml", [], "safety",
     [(":: n >= CNT_INC && (n & WAS_PREEMPTED) == 0 ->\n\t\t\tc0_nesting",
       ":: n == CNT_INC && (n & WAS_PREEMPTED) == 0 ->\n\t\t\tc0_nesting")]),
    ("BROKEN_CHECK_BIT", "arcu.pml", [], "safety",
     [("preempted = (c0_nesting == WAS_PREEMPTED)",
       "preempted = ((c0_nesting & WAS_PREEMPTED) != 0)"),
      (":: c0_nesting == WAS_PREEMPTED ->\n\t\t\t\t\tt_on_cur = 0",
       ":: (c0_nesting & WAS_PREEMPTED) != 0 ->\n\t\t\t\t\tt_on_cur = 0")]),
    ("BROKEN_UNLOCK_NO_RECHECK", "arcu.pml", [], "safety",
     [("\t\t\t\tif\n\t\t\t\t:: c0_nesting == WAS_PREEMPTED ->\n"
       "\t\t\t\t\tt_on_cur = 0; t_on_next = 0; c0_nesting = 0\n"
       "\t\t\t\t:: else\n\t\t\t\tfi",
       "\t\t\t\tt_on_cur = 0; t_on_next = 0; c0_nesting = 0")]),
    ("BROKEN_LEFT_NO_WAKE", "arcu.pml", [], "safety", None),
    ("BROKEN_WAITS_AFTER_UNLOCK", "arcu.pml", [], "safety", None),
    ("BROKEN_NO_CS_MB_AFTER", "arcu.pml", [], "safety", None),
    ("BROKEN_LOCK_QS_NESTED", "podzimek.pml", [], "safety",
     [("rec = (c0_nesting == 0 && c0_last_seen != cur_gp)",
       "rec = (c0_last_seen != cur_gp)")]),
    ("BROKEN_UNLOCK_DEPTH1", "podzimek.pml", [], "safety",
     [("z = (c0_nesting == 0)", "z = (c0_nesting <= 1)")]),
    ("BROKEN_RELIST", "podzimek.pml", [], "safety",
     [(":: t_nesting > 0 && !t_preempted ->", ":: t_nesting > 0 ->")]),
    ("BROKEN_LEFT_NO_WAKE", "podzimek.pml", [], "safety", None),
    ("BROKEN_WAITS_AFTER_UNLOCK", "podzimek.pml", [], "safety", None),
    ("BROKEN_NO_QS_MB_AFTER", "podzimek.pml", [], "safety", None),
    ("BROKEN_SNAPSHOT_RELAXED", "urcu.pml", [], "safety",
     [("\t\ts = seq;                                /* acquire load */",
       "\t\tif\n\t\t:: p = ptr; early = 1\n\t\t:: skip\n\t\tfi;\n"
       "\t\ts = seq;"),
      ("\t\tp = ptr;\n\t\tatomic { rpend == NONE -> rpend = p };",
       "\t\tif\n\t\t:: !early -> p = ptr\n\t\t:: else\n\t\tfi;\n"
       "\t\tearly = 0;\n\t\tatomic { rpend == NONE -> rpend = p };"),
      ("\tbyte p, s, i;\n", "\tbyte p, s, i;\n\tbool early;\n")]),
    ("BROKEN_WRITER_NO_FENCE", "urcu.pml", ["-DFENCE"], "safety",
     [("\tatomic { (me != 1 || !wsb_full) -> skip }\n#endif",
       "\tskip\n#endif")]),
    ("BROKEN_NO_REVERSE", "urcu_cb.pml", [], "safety", None),
    ("BROKEN_RECLAIM_NO_GP", "urcu_cb.pml", [], "safety", None),
    ("BROKEN_GP_BEFORE_TAKE", "urcu_cb.pml", [], "safety", None),
    ("BROKEN_REMOVE_NOT_FIRST", "cht.pml", [], "safety",
     [(":: only_first && next[prev] == cur * 2 ->",
       ":: next[prev] == cur * 2 ->")]),
    ("BROKEN_REMOVE_ANY_KEY", "cht.pml", [], "safety", None),
    ("BROKEN_SEARCH_RETRY_PREV", "cht.pml", [], "liveness",
     [("\t\t\t\t:: ok -> cur = PTR(nx)\n\t\t\t\t:: else -> break",
       "\t\t\t\t:: ok -> cur = PTR(nx)\n\t\t\t\t:: else -> ok = 1; "
       "atomic { CHECK(prev); cur = PTR(next[prev]) }")]),
    ("BROKEN_SEARCH_RETRY_PREV", "cht.pml", ["-DGROW"], "liveness", "same"),
    ("BROKEN_RETIRE_SKIP_HEAD", "cht.pml", ["-DGROW"], "safety",
     [("\t\t:: else ->\n\t\t\tsearch(HEAD, hash[d], true, prev, cur, nx, ok)",
       "\t\t:: else -> skip")]),
    ("BROKEN_RETIRE_SKIP_HEAD", "cht.pml", ["-DSHRINK"], "safety", "same"),
]
# the new model's scenario where the stock one has none
NEW_DEFS = {("BROKEN_REMOVE_NOT_FIRST", ""): ["-DCOLLIDE"],
            ("BROKEN_REMOVE_ANY_KEY", ""): ["-DCOLLIDE"],
            ("BROKEN_SEARCH_RETRY_PREV", ""): ["-DCOLLIDE"]}


def pan(d, pml, defs, mode):
    """spin + gcc + pan in d; a one-line verdict."""
    rc, out = verify.sh(["spin"] + defs + ["-a", pml], d)
    if rc:
        return "spin -a failed: " + out.strip().splitlines()[-1]
    cflags = ["-O1", "-w", "-DMEMLIM=%d" % verify.MEMLIM]
    args = ["-m%d" % verify.DEPTH]
    if mode == "safety":
        cflags += ["-DSAFETY", "-DNOCLAIM"]
    else:
        cflags += ["-DNFAIR=3"]
        args = ["-a", "-f"] + args
    rc, out = verify.sh(["gcc"] + cflags + ["-o", "pan", "pan.c"], d)
    if rc:
        return "gcc failed"
    rc, out = verify.sh(["./pan"] + args, d)
    res = verify.parse(out)
    first = re.search(r"^pan:1: (.*?)(?: \(at depth \d+\))?$", out, re.M)
    if res["errors"]:
        return "CAUGHT: %s (%s states)" % (first.group(1).strip(),
                                           res["stored"])
    return "passes: 0 errors, %s states" % res["stored"]


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    rows = []
    last = None
    for variant, pml, defs, mode, patch in VARIANTS:
        if patch == "same":
            patch = last
        last = patch
        stock = subprocess.run(["git", "show", "%s:verify/%s" % (STOCK, pml)],
                               cwd=REPO, stdout=subprocess.PIPE, text=True,
                               check=True).stdout
        if patch:
            for old, new in patch:
                assert stock.count(old) >= 1, (variant, old)
                stock = stock.replace(old, new, 1)
        tag = "%s-%s%s-%s" % (pml[:-4], variant, "".join(defs), mode)
        d1 = os.path.join(WORK, "stock", tag)
        os.makedirs(d1)
        with open(os.path.join(d1, pml), "w") as f:
            f.write(stock)
        before = pan(d1, pml, defs, mode)
        ndefs = NEW_DEFS.get((variant, "".join(defs)), defs)
        d2 = os.path.join(WORK, "new", tag)
        os.makedirs(d2)
        shutil.copy(os.path.join(HERE, pml), d2)
        after = pan(d2, pml, ndefs + ["-D" + variant], mode)
        how = "the change written into it" if patch else \
            "unchanged: it cannot express the change"
        row = ("%s, %s %s %s\n  stock model (%s): %s\n  new model "
               "(spin %s -D%s): %s" % (variant, pml, " ".join(defs), mode, how,
                                       before, " ".join(ndefs), variant,
                                       after))
        print(row, flush=True)
        rows.append(row)
    with open(os.path.join(HERE, "own-variants.txt"), "w") as f:
        f.write("# python3 verify/own_variants.py: issue 41's own variants "
                "on the stock models (%s) and the new\n\n" % STOCK)
        f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
