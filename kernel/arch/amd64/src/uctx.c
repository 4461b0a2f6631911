/** @file uctx.c
 * amd64 per-thread user register state (proc/uctx.h): the x87/MMX, SSE and
 * (where the CPU has it) AVX state through XSAVE/XRSTOR, or FXSAVE/FXRSTOR
 * on a CPU without XSAVE, and the data segment selectors DS, ES, FS, GS.
 *
 * Every CPU (fpu_init_cpu(), from userspace_arch_init_cpu()): CR0.MP = 1,
 * EM = 0, TS = 0 (no #NM: the state is switched eagerly), NE = 1 (x87
 * errors are #MF, vector 16, not the legacy FERR# pin); CR4.OSFXSR (SSE
 * instructions and FXSAVE of the XMM registers) and OSXMMEXCPT (unmasked SSE
 * exceptions are #XM, vector 19); with CPUID.1:ECX.XSAVE also CR4.OSXSAVE
 * and XCR0 = x87 | SSE | AVX (AVX where CPUID.1:ECX.AVX says so; nothing
 * else: AVX-512, MPX, PKRU and AMX stay disabled, their instructions #UD).
 * #MF and #XM from ring 3 kill only the task (`arithmetic trap`,
 * interrupt.c). The kernel never executes an x87 or SSE instruction (its
 * flags: -mno-sse -mno-sse2 -mno-mmx -mno-3dnow -mno-avx -msoft-float) other
 * than the saves and restores here, so a pending x87 exception of a user
 * thread stays pending (FXSAVE/XSAVE and the restores do not raise it) until
 * that thread's next waiting x87 instruction.
 *
 * The selectors: ring 3 may load DS, ES, FS and GS with a null selector
 * (any RPL) or the user data selector (0x20, any RPL); nothing else loads
 * (no LDT, and the GDT's other descriptors have DPL 0 or are not data).
 * The kernel does not use DS/ES/FS/GS in 64-bit mode, so it neither saves
 * nor reloads them on entry: the values a user thread set are in the CPU
 * until the next user thread's are loaded here. The FS and GS bases stay 0
 * for user code: FSGSBASE is off (CR4.FSGSBASE clear, so no wrfsbase or
 * wrgsbase in ring 3), MSR_FS_BASE and MSR_KERNEL_GS_BASE are written only
 * by the kernel (to 0), and every descriptor ring 3 can load has base 0, so
 * a selector load gives base 0. If FSGSBASE is ever enabled, the two bases
 * join this state. GS needs care: while the kernel runs, MSR_GS_BASE holds
 * its per-CPU base (cpu_t), and a GS load replaces the base with the
 * descriptor's (or, for a null selector, with 0 on some CPUs and QEMU);
 * uctx_load() therefore loads GS between two swapgs with interrupts
 * disabled, i.e. into the user GS base, which is 0 before and after. An
 * NMI, #DB or #MC between the two swapgs finds a user GS base in
 * MSR_GS_BASE and swaps on entry (isr.S's paranoid entries), as it does in
 * the syscall entry's first instructions.
 */
#include <proc/uctx.h>
#include <arch/asm.h>
#include <mm/malloc.h>
#include <lib/str.h>
#include <print.h>
#include <arch/userspace.h>
#include <debug.h>
#include <panic.h>

#define CR0_MP (1UL << 1)
#define CR0_EM (1UL << 2)
#define CR0_TS (1UL << 3)
#define CR0_NE (1UL << 5)
#define CR4_OSFXSR     (1UL << 9)
#define CR4_OSXMMEXCPT (1UL << 10)
#define CR4_OSXSAVE    (1UL << 18)
#define CPUID1_ECX_XSAVE (1U << 26)
#define CPUID1_ECX_AVX   (1U << 28)
#define CPUID1_EDX_FXSR  (1U << 24)
#define XCR0_X87 (1UL << 0)
#define XCR0_SSE (1UL << 1)
#define XCR0_AVX (1UL << 2)

/** The legacy area of FXSAVE and XSAVE: 512 bytes; the XSAVE header follows. */
#define FXSAVE_SIZE   512
#define FXSAVE_ALIGN  16
#define XSAVE_ALIGN   64
#define FX_OFF_FCW    0
#define FX_OFF_MXCSR  24
#define XSAVE_OFF_XSTATE_BV 512
/** Initial x87 control word (every exception masked, 64-bit precision). */
#define FCW_INIT   0x037f
/** Initial MXCSR (every exception masked, round to nearest). */
#define MXCSR_INIT 0x1f80

/**
 * How the FP state is saved, the same on every CPU (one CPU model): set by
 * the boot CPU in fpu_init_cpu() before any user thread exists, checked
 * (equal) by every other CPU. Read-only afterwards.
 */
static bool fpu_use_xsave;
static size_t fpu_size;
static uint64_t fpu_xcr0;

/** One user thread's state; see the file comment. */
struct uctx {
	/** FP area, fpu_size bytes, 64-byte (XSAVE) or 16-byte aligned. */
	uint8_t *fpu;
	/** DS, ES, FS, GS. */
	uint16_t sel[4];
	/* The FP area follows in the same allocation. */
};

static void cpuid_sub(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b,
    uint32_t *c, uint32_t *d)
{
	asm volatile ("cpuid" : "=a" (*a), "=b" (*b), "=c" (*c), "=d" (*d)
	    : "a" (leaf), "c" (sub));
}

void fpu_init_cpu(bool boot_cpu)
{
	uint32_t a, b, c, d;
	cpuid_sub(1, 0, &a, &b, &c, &d);
	if (!(d & CPUID1_EDX_FXSR))
		panic("CPU without FXSAVE/FXRSTOR (CPUID.1:EDX.FXSR)");
	write_cr0((read_cr0() | CR0_MP | CR0_NE) & ~(CR0_EM | CR0_TS));
	uint64_t cr4 = read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT;
	bool xsave = (c & CPUID1_ECX_XSAVE) != 0;
	uint64_t xcr0 = 0;
	size_t size = FXSAVE_SIZE;
	if (xsave) {
		write_cr4(cr4 | CR4_OSXSAVE);
		xcr0 = XCR0_X87 | XCR0_SSE | ((c & CPUID1_ECX_AVX) ? XCR0_AVX : 0);
		asm volatile ("xsetbv" :: "c" (0), "a" ((uint32_t) xcr0),
		    "d" ((uint32_t) (xcr0 >> 32)) : "memory");
		/* EBX of leaf 0xd, sub-leaf 0: the size XCR0's features need. */
		cpuid_sub(0xd, 0, &a, &b, &c, &d);
		size = b;
	} else {
		write_cr4(cr4);
	}
	/* Nothing of a previous owner (firmware, boot loader) stays. */
	asm volatile ("fninit" ::: "memory");
	if (boot_cpu) {
		fpu_use_xsave = xsave;
		fpu_size = size;
		fpu_xcr0 = xcr0;
	} else if (xsave != fpu_use_xsave || size != fpu_size || xcr0 != fpu_xcr0) {
		panic("CPUs differ in their FP state (XSAVE %d, %zu bytes, XCR0 %#lx)",
		    xsave, size, xcr0);
	}
}

void fpu_describe(char *buf, size_t size)
{
	if (fpu_use_xsave)
		snprintf(buf, size, "XSAVE, %zu bytes: x87 SSE%s", fpu_size,
		    (fpu_xcr0 & XCR0_AVX) ? " AVX" : "");
	else
		snprintf(buf, size, "FXSAVE, %zu bytes: x87 SSE", fpu_size);
}

size_t uctx_size(void)
{
	size_t align = fpu_use_xsave ? XSAVE_ALIGN : FXSAVE_ALIGN;
	return sizeof(struct uctx) + align - 1 + fpu_size;
}

struct uctx *uctx_create(void)
{
	size_t align = fpu_use_xsave ? XSAVE_ALIGN : FXSAVE_ALIGN;
	assert(fpu_size >= FXSAVE_SIZE);
	struct uctx *u = malloc(uctx_size());
	if (!u)
		return NULL;
	u->fpu = (uint8_t *) ALIGN_UP((uintptr_t) (u + 1), align);
	memset(u->fpu, 0, fpu_size);
	for (int i = 0; i < 4; i++)
		u->sel[i] = 0;
	/*
	 * The initial state written out in full: FCW 0x37f, FSW 0, every tag
	 * empty (abridged tag word 0), registers 0, MXCSR 0x1f80, XMM 0; with
	 * XSAVE the header says x87 and SSE are in the image (XSTATE_BV bits 0
	 * and 1) and AVX is not (bit 2 clear: XRSTOR zeroes the upper halves).
	 */
	uint16_t fcw = FCW_INIT;
	uint32_t mxcsr = MXCSR_INIT;
	memcpy(u->fpu + FX_OFF_FCW, &fcw, sizeof(fcw));
	memcpy(u->fpu + FX_OFF_MXCSR, &mxcsr, sizeof(mxcsr));
	if (fpu_use_xsave) {
		uint64_t bv = XCR0_X87 | XCR0_SSE;
		memcpy(u->fpu + XSAVE_OFF_XSTATE_BV, &bv, sizeof(bv));
	}
	return u;
}

void uctx_destroy(struct uctx *u)
{
	free(u);
}

void uctx_save(struct uctx *u)
{
	if (fpu_use_xsave) {
		/* EDX:EAX all ones: every component XCR0 enables. */
		asm volatile ("xsave64 (%0)" :: "r" (u->fpu), "a" (~0U), "d" (~0U)
		    : "memory");
	} else {
		asm volatile ("fxsave64 (%0)" :: "r" (u->fpu) : "memory");
	}
	asm volatile ("mov %%ds, %0" : "=r" (u->sel[0]));
	asm volatile ("mov %%es, %0" : "=r" (u->sel[1]));
	asm volatile ("mov %%fs, %0" : "=r" (u->sel[2]));
	asm volatile ("mov %%gs, %0" : "=r" (u->sel[3]));
}

void uctx_load(struct uctx *u)
{
	if (fpu_use_xsave) {
		asm volatile ("xrstor64 (%0)" :: "r" (u->fpu), "a" (~0U), "d" (~0U)
		    : "memory");
	} else {
		asm volatile ("fxrstor64 (%0)" :: "r" (u->fpu) : "memory");
	}
	/* A selector load is slow (a descriptor check): only the changed ones. */
	uint16_t s;
	asm volatile ("mov %%ds, %0" : "=r" (s));
	if (s != u->sel[0])
		asm volatile ("mov %0, %%ds" :: "r" (u->sel[0]));
	asm volatile ("mov %%es, %0" : "=r" (s));
	if (s != u->sel[1])
		asm volatile ("mov %0, %%es" :: "r" (u->sel[1]));
	asm volatile ("mov %%fs, %0" : "=r" (s));
	if (s != u->sel[2])
		asm volatile ("mov %0, %%fs" :: "r" (u->sel[2]));
	asm volatile ("mov %%gs, %0" : "=r" (s));
	if (s != u->sel[3]) {
		/* Into the user GS base (see the file comment); IF is clear. */
		assert(interrupts_disabled());
		asm volatile ("swapgs\n\tmov %0, %%gs\n\tswapgs" :: "r" (u->sel[3])
		    : "memory");
	}
}
