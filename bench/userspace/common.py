"""What the userspace benchmark drivers (run.py, run_big.py, run_misses.py,
run_sharing.py) share: the paths, the build of bench_us, the host's
description and the figure helpers."""

import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(REPO, "build", "bench-userspace", "bench_us")
OUT = os.path.join(REPO, "bench", "results", "userspace")
RESULTS_MD = os.path.join(REPO, "bench", "RESULTS.md")


def make_env():
    """The environment for a nested make: the outer make's flags removed
    (a driver started from `make -C uspace bench` must not inherit its
    jobserver or its variables)."""
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    return env


def run_make(cmd, what):
    """Runs one make command with make_env(); on failure prints its output
    and exits with ``what``."""
    p = subprocess.run(cmd, env=make_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.stdout.write(p.stdout.decode("utf-8", "replace"))
        sys.exit(what)


def build(prog, deps=True):
    """Builds bench_us (bench/userspace/Makefile, two jobs); with ``deps``
    first checks the peer libraries (tools/ensure-deps.sh uspace-bench).
    Exits with ``prog: ...`` when either fails."""
    if deps:
        dep = subprocess.run(["bash", os.path.join(REPO, "tools",
                                                   "ensure-deps.sh"),
                              "uspace-bench"])
        if dep.returncode != 0:
            sys.exit("%s: dependencies missing (make -C uspace bench-deps)"
                     % prog)
    run_make(["make", "-s", "-C", HERE, "-j2"], "%s: build failed" % prog)


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_available():
    """MemAvailable of /proc/meminfo in bytes (0 when absent)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def pyplot_or_none(log):
    """matplotlib.pyplot on the Agg backend, or None (said through ``log``)
    when matplotlib is not installed: the figures are optional."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plots")
        return None
    return plt


def save_fig(plt, fig, out, name, made, dpi=110):
    """Lays out, writes ``out/name`` and closes ``fig``; appends the path
    to ``made``."""
    fig.tight_layout()
    path = os.path.join(out, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    made.append(path)
