"""Checks of the built kernel images that need no boot.

TLB shootdown fence: ``tlb_shootdown()`` in
kernel/generic/src/mm/as.c loads the mask of CPUs running the address space
after its caller cleared page table entries.  Store-then-load needs a full
fence (C11 lets the load move before the stores; x86-64's store buffer does
it), so the compiled function must execute a full fence (``mfence`` or a
``lock``-prefixed instruction) before its first load through its first
argument (``as``, in %rdi).  Before the fix the function loaded
``as->cpus_running`` first and the only locked instruction was an unrelated
counter update elsewhere in the caller.  Checked in the debug and the release
image (the release one is where a compiler may move things).

The arm64 shootdown (ARCH_TLB_BROADCAST, kernel/generic/include/arch.h):
``tlb_shootdown()`` in build/arm64 calls nothing (no ``smp_call``: the
``tlbi vae1is`` / ``aside1is`` broadcast, by the address space's ASID,
reaches every CPU) and orders its invalidation as arch/paging.h argues:
``dsb ish`` before the first TLBI (a full one since the ASID is read after
the cleared entries: ``dsb ishst`` was enough before ASIDs), ``dsb ish``
then ``isb`` after the last.
"""

import os
import re
import shutil
import subprocess

import pytest

from conftest import KERNEL_ELF, RELEASE_ELF, REPO

OBJDUMP = shutil.which("objdump")
ARM64_OBJDUMP = shutil.which("aarch64-linux-gnu-objdump")
ARM64_ELF = os.path.join(REPO, "build", "arm64", "kernel.elf")


def disassemble(elf, func, objdump=None):
    """Return the instruction lines of @func in @elf (objdump -d)."""
    out = subprocess.run(
        [objdump or OBJDUMP, "-d", "--disassemble=" + func, "--no-show-raw-insn", elf], capture_output=True,
        text=True, check=True).stdout
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?:\n\n|\Z)" % re.escape(func), out,
                  re.S | re.M)
    assert m, "%s: function %s not found (inlined?)" % (elf, func)
    insns = []
    for line in m.group(1).splitlines():
        parts = line.split("\t", 1)
        if len(parts) == 2:
            insns.append(parts[1].strip())
    return insns


def fence_before_first_arg_load(insns):
    """Return (ok, what): is a full fence executed before the first load
    through %rdi (the function's first argument)?"""
    for insn in insns:
        if insn.startswith("mfence") or insn.startswith("lock "):
            return True, insn
        # A memory operand based on %rdi read by a mov/cmp/test/or load.
        if re.search(r"\(%rdi[,)]", insn) and not re.match(
                r"(lea|nop)", insn):
            return False, insn
        if insn.startswith(("call", "ret", "j")):
            return False, insn
    return False, "end of function"


_objdump = pytest.mark.skipif(OBJDUMP is None, reason="objdump not installed")
#: The amd64 checks run on the debug and the release image, with objdump.
amd64_images = pytest.mark.parametrize("elf", [
    pytest.param(KERNEL_ELF, id="debug", marks=_objdump),
    pytest.param(RELEASE_ELF, id="release", marks=_objdump)])


@amd64_images
def test_tlb_shootdown_fence(elf):
    if not os.path.exists(elf):
        pytest.fail("%s not built (make all flavours)" % elf)
    insns = disassemble(elf, "tlb_shootdown")
    ok, what = fence_before_first_arg_load(insns)
    assert ok, ("%s: tlb_shootdown loads through its argument before any "
                "full fence: first was '%s'" % (elf, what))


def test_checker_rejects_unfenced_load():
    """Negative control of the checker on the code main had before the fix."""
    before = ["push   %rbp", "mov    %rsp,%rbp", "push   %r14",
              "mov    %rsi,-0x28(%rbp)", "mov    0x70(%rdi),%r12",
              "cmpl   $0x0,0x1c4485(%rip)", "lock addq $0x1,0x80(%r13)"]
    ok, what = fence_before_first_arg_load(before)
    assert not ok and what == "mov    0x70(%rdi),%r12"
    after = before[:4] + ["lock orq $0x0,(%rsp)"] + before[4:]
    assert fence_before_first_arg_load(after)[0]


def arm64_broadcast_shootdown_ok(insns):
    """Return (ok, what): does @insns (an arm64 tlb_shootdown) call nothing,
    use only broadcast TLBIs (by VA and ASID, or by ASID), put ``dsb ish``
    before the first and ``dsb ish``, ``isb`` after the last?"""
    ops = [re.sub(r"\s+", " ", i).split("//")[0].strip() for i in insns]
    for op in ops:
        if re.match(r"(bl|blr|br) ", op) or op.startswith("b ") and \
                "<tlb_shootdown" not in op:
            return False, "calls or jumps out: " + op
    tlbis = [n for n, op in enumerate(ops) if op.startswith("tlbi ")]
    if not tlbis:
        return False, "no tlbi"
    for n in tlbis:
        if not re.match(r"tlbi (vae1is|aside1is)\b", ops[n]):
            return False, "not a broadcast TLBI by ASID: " + ops[n]
    if "dsb ish" not in ops[:tlbis[0]]:
        return False, "no dsb ish before the first tlbi"
    for n in tlbis:
        if not _reaches_dsb_isb(ops, n):
            return False, "no dsb ish, isb after the tlbi: " + ops[n]
    return True, ""


def _reaches_dsb_isb(ops, n):
    """Does the path from ops[n] (falling through conditional branches,
    following an unconditional ``b`` to an offset in the function: the
    compiler may lay a branch's TLBI out after the return) come to ``dsb
    ish`` and then ``isb`` before a ``ret``?"""
    seen = set()
    while n < len(ops) and n not in seen:
        seen.add(n)
        op = ops[n]
        if op == "dsb ish":
            return "isb" in ops[n + 1:n + 2]
        if op == "ret":
            return False
        m = re.match(r"b [0-9a-f]+ <tlb_shootdown\+0x([0-9a-f]+)>", op)
        n = int(m.group(1), 16) // 4 if m else n + 1
    return False


@pytest.mark.skipif(ARM64_OBJDUMP is None,
                    reason="aarch64-linux-gnu-objdump not installed")
def test_arm64_tlb_shootdown_broadcast():
    if not os.path.exists(ARM64_ELF):
        pytest.skip("%s not built (make arm64)" % ARM64_ELF)
    insns = disassemble(ARM64_ELF, "tlb_shootdown", ARM64_OBJDUMP)
    ok, what = arm64_broadcast_shootdown_ok(insns)
    assert ok, "%s: tlb_shootdown: %s\n%s" % (ARM64_ELF, what,
                                               "\n".join(insns))


def test_arm64_checker_rejects():
    """Negative controls of the arm64 checker: a cross-call, a local TLBI,
    a missing dsb ish, a TLBI of every ASID (vmalle1is drops the kernel's
    global entries too)."""
    good = ["dsb\tish", "tlbi\tvae1is, x2", "dsb\tish", "isb", "ret"]
    assert arm64_broadcast_shootdown_ok(good)[0]
    assert not arm64_broadcast_shootdown_ok(
        good[:-1] + ["bl\tffff800040200000 <smp_call>", "ret"])[0]
    assert not arm64_broadcast_shootdown_ok(
        ["dsb\tish", "tlbi\tvae1, x2", "dsb\tnsh", "isb", "ret"])[0]
    assert not arm64_broadcast_shootdown_ok(good[1:])[0]
    assert not arm64_broadcast_shootdown_ok(
        ["dsb\tish", "tlbi\tvmalle1is", "dsb\tish", "isb", "ret"])[0]
    # a TLBI laid out after the return, branching back before the DSB
    tail = ["dsb\tish", "cbz\tx4, ffff800040200010 <tlb_shootdown+0x10>",
            "tlbi\tvae1is, x3", "dsb\tish", "isb", "ret",
            "tlbi\taside1is, x4"]
    assert arm64_broadcast_shootdown_ok(
        tail + ["b\tffff80004020000c <tlb_shootdown+0xc>"])[0]
    assert not arm64_broadcast_shootdown_ok(
        tail + ["b\tffff800040200014 <tlb_shootdown+0x14>"])[0]


# ---- FP/SIMD only where the user state is switched ------------------------
#
# The kernel keeps a user thread's FP/SIMD state in the CPU across kernel
# code (proc/uctx.h): that is correct only while no kernel code touches those
# registers.  The flags forbid it (-mno-sse ... -msoft-float,
# -mgeneral-regs-only); this checks the images: an x87/MMX/SSE/AVX
# instruction or register (amd64) or an FP/SIMD register or FPCR/FPSR (arm64)
# appears only in the functions that save, load and set up that state.

#: amd64: x87 (f...), MMX/SSE/AVX registers, the save/restore instructions.
AMD64_FP_RE = re.compile(r"%[xy]mm\d|%mm\d|%st\b|%st\(|^f[a-z0-9]+\b|"
                         r"^(fx|x)(save|rstor)|^[lv]?(ld|st)mxcsr|^emms|"
                         r"^v[a-z]|^(mov|add|sub|mul|div|cvt|xor|and|or|p[a-z]+)"
                         r"[a-z]*\s+%xmm")
AMD64_FP_ALLOWED = {"uctx_save", "uctx_load", "fpu_init_cpu"}
#: arm64: a Q/D/S/H/B register or vector operand, FPCR/FPSR.
ARM64_FP_RE = re.compile(r"\b[qdsbh]\d+\b|\bv\d+\.|\bfpcr\b|\bfpsr\b|"
                         r"^f[a-z]+\s")
ARM64_FP_ALLOWED = {"uctx_save", "uctx_load"}


def fp_users(elf, objdump, regex):
    """{function: first FP/SIMD instruction} of every function of @elf."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", elf],
                         capture_output=True, text=True, check=True).stdout
    users, func = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            func = m.group(1)
            continue
        parts = line.split("\t", 1)
        if len(parts) != 2 or func is None:
            continue
        insn = parts[1].strip()
        # Data that objdump decodes as code (strings, tables) is not run.
        if func.endswith("_msg") or insn.startswith("(bad)"):
            continue
        if regex.search(insn) and func not in users:
            users[func] = insn
    return users


_arm64_objdump = pytest.mark.skipif(
    ARM64_OBJDUMP is None, reason="aarch64-linux-gnu-objdump not installed")


@pytest.mark.parametrize("elf,objdump,fp_re,allowed", [
    pytest.param(KERNEL_ELF, OBJDUMP, AMD64_FP_RE, AMD64_FP_ALLOWED,
                 id="amd64-debug", marks=_objdump),
    pytest.param(RELEASE_ELF, OBJDUMP, AMD64_FP_RE, AMD64_FP_ALLOWED,
                 id="amd64-release", marks=_objdump),
    pytest.param(ARM64_ELF, ARM64_OBJDUMP, ARM64_FP_RE, ARM64_FP_ALLOWED,
                 id="arm64", marks=_arm64_objdump)])
def test_no_fp_outside_uctx(elf, objdump, fp_re, allowed):
    if not os.path.exists(elf):
        pytest.skip("%s not built" % elf)
    users = fp_users(elf, objdump, fp_re)
    assert set(users) == allowed, \
        "FP/SIMD instructions outside the user-state switch: %s" % {
            f: i for f, i in users.items() if f not in allowed}
