"""The page hash table suite (page_ht.json): lookups and the fault path,
CHT vs the global-lock build.
"""

from .common import cb  # noqa: F401  (bench/chtbench.py: ids)
from .common import (
    draw, fmt_ratio, host_cores, judge_gt, key, ncpus, save, verdict)


def fig_page_ht(data, plt, path):
    smps = [s for s in data.smps if data.cpus_of("a-rcu", s, cb.B_PH_LOOKUP)]
    if not smps:
        return None
    hc = host_cores(data)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    M, K = 1e-6, 1e-3
    ls = {smps[0]: "-"}
    for s in smps[1:]:
        ls[s] = ":"
    look, fault = [], []
    xs_l, xs_f = set(), set()
    for smp in smps:
        for config, label in (("a-rcu", "cht"), ("locked", "locked")):
            xl = data.cpus_of(config, smp, cb.B_PH_LOOKUP)
            xf = data.cpus_of(config, smp, cb.B_PH_FAULT)
            xs_l |= set(xl)
            xs_f |= set(xf)
            look.append(("%s (-smp %d)" % (label, smp), data.series(
                config, smp, cb.B_PH_LOOKUP, xl, scale=M),
                dict(linestyle=ls[smp])))
            fault.append(("%s (-smp %d)" % (label, smp), data.series(
                config, smp, cb.B_PH_FAULT, xf, scale=K),
                dict(linestyle=ls[smp])))
    draw(axes[0], look, "page_mapping_find / s (millions)",
         "CPUs (benchmark threads)",
         "Page hash table lookups: CHT vs global lock", hc,
         xs=sorted(xs_l))
    draw(axes[1], fault, "page faults / s (thousands)",
         "CPUs (benchmark threads)",
         "Page faults (fault in, unmap + shootdown)", None, xs=sorted(xs_f))
    return save(plt, fig, path)


def readings_page_ht(ctx):
    """The page hash table (page_ht.json)."""
    R, read, d, hc, smps, honest, seed_smp = ctx.names()
    ph = {}
    for smp in smps:
        xs = d.cpus_of("a-rcu", smp, cb.B_PH_LOOKUP)
        if not xs:
            continue
        e = {"xs": xs}
        for n in xs:
            e["l%d" % n] = R.add("page hash lookups, CHT / locked, %s"
                                 % ncpus(n), smp,
                                 R.r(key("a-rcu", smp, cb.B_PH_LOOKUP, n),
                                     key("locked", smp, cb.B_PH_LOOKUP, n)),
                                 "CHT replaces the global lock (goal)")
        for n in d.cpus_of("a-rcu", smp, cb.B_PH_FAULT):
            e["f%d" % n] = R.add("page faults, CHT / locked, %s" % ncpus(n), smp,
                                 R.r(key("a-rcu", smp, cb.B_PH_FAULT, n),
                                     key("locked", smp, cb.B_PH_FAULT, n)), "")
        for cfg, label in (("a-rcu", "CHT"), ("locked", "locked")):
            e["s-" + label] = R.add(
                "page hash lookup scaling 1 -> 2 CPUs, %s" % label, smp,
                R.r(key(cfg, smp, cb.B_PH_LOOKUP, 2), key(cfg, smp, cb.B_PH_LOOKUP, 1)), "")
        ph[smp] = e
    if ph:
        s = honest if honest in ph else list(ph)[0]
        e = ph[s]
        txt = []
        if e.get("l1") and e.get("s-CHT") and e.get("s-locked"):
            ok = judge_gt(e["s-CHT"], e["s-locked"])
            txt.append(
                "- *Seed: the CHT is meant to replace the global page hash "
                "table (lookups without a global lock).* %s At -smp %d, "
                "CHT / locked = %s at 1 CPU%s; from 1 to 2 CPUs the CHT "
                "gives x%.2f, the locked table x%.2f. The two back ends are "
                "different builds, so each comparison pairs adjacent boots."
                % (verdict(ok), s, fmt_ratio(e["l1"]),
                   ", %s at 2" % fmt_ratio(e["l2"]) if e.get("l2") else "",
                   e["s-CHT"][0], e["s-locked"][0]))
        if e.get("f1"):
            txt.append(
                "- The fault path (fault in a page, later unmap it with a TLB "
                "shootdown per page) is dominated by the shootdown cross-calls "
                "once two CPUs run it: CHT / locked = %s at 1 CPU%s. Each "
                "fault inserts and each unmap removes a page hash entry; the "
                "CHT's insert and remove (CAS, shared item count, rcu_call) "
                "cost more than a locked chain's, and this path does few "
                "lookups per update, so a CHT deficit here is expected."
                % (fmt_ratio(e["f1"]), ", %s at 2" % fmt_ratio(e["f2"])
                   if e.get("f2") else ""))
        read["page_ht"] = "\n".join(txt)

