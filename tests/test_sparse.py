"""User and RCU pointers the compiler can tell apart (sparse).

``make check`` runs sparse over every kernel C file in each configuration
(tools/sparse_check.py): a ``__user`` pointer (a user address) and an
``__rcu`` pointer (RCU-protected) have address spaces of their own
(kernel/generic/include/compiler.h), so a dereference that bypasses
copy_from_user()/copy_to_user()/uaccess_*() or rcu_access() and its
siblings is reported. Here: the tree is clean, and a scratch file (written
into a temporary directory, never part of the kernel build) with deliberate
violations fails the same check with the expected message on each violating
line and on no other line. No build, no QEMU: about 15 s on a loaded host.
"""

import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from tools import sparse_check

SPARSE = shutil.which("sparse")
needs_sparse = pytest.mark.skipif(
    SPARSE is None and not os.environ.get("KTEST_NO_BUILD"),
    reason="sparse not installed (tools/ensure-deps.sh check)")

# Each violation is marked in the source with a comment naming the message
# sparse must print for that line. Every other line must stay silent: the
# accessors used correctly right next to the violations prove that.
SCRATCH = r"""
#include <typedefs.h>
#include <errno.h>
#include <arch/uaccess.h>
#include <proc/task.h>
#include <synch/rcu.h>
#include <adt/cht.h>

int scratch_user_deref(uint64_t arg);
int scratch_user_deref(uint64_t arg)
{
	const uint32_t __user *p = uptr(arg);
	return (int) *p;  /* EXPECT: dereference of noderef expression */
}

int scratch_user_copy(uint64_t arg);
int scratch_user_copy(uint64_t arg)
{
	uint32_t v = 0;
	int rc = copy_from_user(&v, uptr(arg), sizeof(v));  /* correct */
	return rc == EOK ? (int) v : rc;
}

uint32_t *scratch_user_launder(uint32_t __user *p);
uint32_t *scratch_user_launder(uint32_t __user *p)
{
	return p;  /* EXPECT: incorrect type in return expression (different address spaces) */
}

int scratch_user_kernel_ptr(void *kbuf);
int scratch_user_kernel_ptr(void *kbuf)
{
	return copy_to_user(kbuf, kbuf, 8);  /* EXPECT: incorrect type in argument 1 (different address spaces) */
}

int scratch_user_cast(void *kbuf);
int scratch_user_cast(void *kbuf)
{
	return copy_to_user((void __user *) kbuf, kbuf, 8);  /* EXPECT: cast adds address space '__user' to expression */
}

int scratch_futex(uintptr_t addr);
int scratch_futex(uintptr_t addr)
{
	return futex_wake((const uint32_t *) addr, 1);  /* EXPECT: incorrect type in argument 1 (different address spaces) */
}

typedef struct scratch_obj {
	int x;
	struct scratch_obj __rcu *next;
} scratch_obj_t;

static scratch_obj_t __rcu *scratch_cur;

int scratch_rcu_deref(void);
int scratch_rcu_deref(void)
{
	return scratch_cur->x;  /* EXPECT: dereference of noderef expression */
}

int scratch_rcu_plain_load(void);
int scratch_rcu_plain_load(void)
{
	scratch_obj_t *p = scratch_cur;  /* EXPECT: incorrect type in initializer (different address spaces) */
	return p->x;
}

int scratch_rcu_atomic_load(void);
int scratch_rcu_atomic_load(void)
{
	scratch_obj_t *p = __atomic_load_n(&scratch_cur, __ATOMIC_ACQUIRE);  /* EXPECT: incorrect type in initializer (different address spaces) */
	return p->x;
}

void scratch_rcu_plain_store(scratch_obj_t *fresh);
void scratch_rcu_plain_store(scratch_obj_t *fresh)
{
	scratch_cur = fresh;  /* EXPECT: incorrect type in assignment (different address spaces) */
}

int scratch_rcu_next(scratch_obj_t *o);
int scratch_rcu_next(scratch_obj_t *o)
{
	return o->next->x;  /* EXPECT: dereference of noderef expression */
}

int scratch_rcu_ok(scratch_obj_t *fresh);
int scratch_rcu_ok(scratch_obj_t *fresh)
{
	rcu_init_ptr(fresh->next, rcu_access_owned(scratch_cur));  /* correct */
	rcu_assign(scratch_cur, fresh);                            /* correct */
	scratch_obj_t *p = rcu_access(scratch_cur);               /* correct */
	return p->x + rcu_access(p->next)->x;                     /* correct */
}

size_t scratch_cht_buckets(cht_t *h);
size_t scratch_cht_buckets(cht_t *h)
{
	return h->b->order;  /* EXPECT: dereference of noderef expression */
}

size_t scratch_cht_ok(cht_t *h);
size_t scratch_cht_ok(cht_t *h)
{
	return cht_env_rcu_access(h->b)->order;  /* correct */
}
"""


def expected_lines(src):
    """{line number: message} of the EXPECT comments in @src."""
    out = {}
    for no, line in enumerate(src.splitlines(), 1):
        m = re.search(r"/\* EXPECT: (.*?) \*/", line)
        if m:
            out[no] = m.group(1)
    return out


def run_check_one(path):
    """make check-one on @path alone (the default configuration's flags)."""
    return subprocess.run(
        ["make", "--no-print-directory", "-s", "check-one", "SRC_C=" + path],
        cwd=REPO, capture_output=True, text=True, timeout=120)


@needs_sparse
def test_make_check_is_clean():
    """make check: every configuration, every kernel C file, no diagnostic."""
    r = subprocess.run(["make", "--no-print-directory", "check"], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, "make check failed:\n" + out
    summaries = re.findall(r"^sparse \((\S+)\): (\d+) files, (\d+) diagnostics",
                           out, re.M)
    assert len(summaries) >= 6, "expected one summary per configuration:\n" + out
    for config, files, diags in summaries:
        assert int(files) > 100 and diags == "0", (config, files, diags)
    # Both RCU flavours and both page hash tables were checked, on both
    # architectures.
    names = " ".join(c for c, _, _ in summaries)
    for what in ("a-rcu", "podzimek-rcu", "page_htcht", "page_htlocked",
                 "release", "lockstat", "arm64-"):
        assert what in names, "%s not checked: %s" % (what, names)
    print(out)


@needs_sparse
def test_deliberate_violations_fail_the_check(tmp_path):
    """Each deliberate direct dereference (user and RCU) is reported on its
    line with its message, the correct accessor uses next to them are not,
    and the check exits non-zero."""
    src = tmp_path / "scratch_violations.c"
    src.write_text(SCRATCH)
    want = expected_lines(SCRATCH)
    assert len(want) == 11
    r = run_check_one(str(src))
    out = r.stdout + r.stderr
    assert r.returncode != 0, "the check passed the violations:\n" + out
    got = {}
    for m in re.finditer(r"^%s:(\d+):\d+: (?:warning|error): (.*)$" %
                         re.escape(str(src)), out, re.M):
        got.setdefault(int(m.group(1)), []).append(m.group(2))
    for line, msg in want.items():
        assert msg in got.get(line, []), (
            "line %d: expected '%s', got %s\n%s" % (line, msg, got.get(line),
                                                   out))
    extra = {ln: m for ln, m in got.items() if ln not in want}
    assert not extra, "diagnostics on correct lines: %s\n%s" % (extra, out)
    print(out)


@needs_sparse
def test_clean_scratch_passes(tmp_path):
    """The scratch file without its violating functions passes: the check
    fails above because of the violations, not for another reason."""
    chunks = SCRATCH.split("\n\n")
    clean = "\n\n".join(c for c in chunks if "EXPECT:" not in c)
    assert "scratch_rcu_ok" in clean and "scratch_cht_ok" in clean
    assert "scratch_user_copy" in clean and "EXPECT" not in clean
    src = tmp_path / "scratch_clean.c"
    src.write_text(clean)
    r = run_check_one(str(src))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"1 files, 0 diagnostics", r.stdout), r.stdout


def test_false_positive_filter_is_narrow():
    """The one dropped sparse 0.6.4 false positive (an __atomic builtin on an
    enum object) is dropped only as such, never with an address space."""
    loc = "kernel/x.c:1:2:"
    fp = [loc + " error: invalid type for argument 1:",
          loc + "         unsigned int enum cpu_state_t *"]
    assert sparse_check.is_enum_atomic_false_positive(fp)
    for ty in ("unsigned int enum cpu_state_t [noderef] __user *",
               "unsigned int enum cpu_state_t [noderef] __rcu *",
               "unsigned int *", "struct foo *"):
        assert not sparse_check.is_enum_atomic_false_positive(
            [fp[0], loc + "         " + ty]), ty
    other = [loc + " warning: dereference of noderef expression"]
    assert not sparse_check.is_enum_atomic_false_positive(other)
    groups = sparse_check.group(
        ["kernel/a.c: note: in included file:",
         "kernel/a.h:3:4: warning: dereference of noderef expression",
         loc + " error: invalid type for argument 1:",
         loc + "         unsigned int enum cpu_state_t *"])
    assert len(groups) == 2 and len(groups[0]) == 2 and len(groups[1]) == 2
