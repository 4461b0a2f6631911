/** @file regs_arm64.c
 * `regs` on arm64: V0-V31, FPCR, FPSR and TPIDR_EL0 (`-l`: TPIDR_EL0 only,
 * what a kernel that trapped FP/SIMD at EL0 let a task write).
 * Built with -mgeneral-regs-only like every program: the compiler uses no
 * FP/SIMD register, so only the assembly here touches them.
 */
#ifdef __aarch64__
#include <stdio.h>
#include <string.h>
#include <sys.h>
#include "regs_arch.h"

/* DIT and SSBS by their encodings (binutils may not name them for armv8-a). */
#define SYSREG_DIT  "s3_3_c4_c2_5"
#define SYSREG_SSBS "s3_3_c4_c2_6"
#define PSTATE_DIT  (1UL << 24)
#define PSTATE_SSBS (1UL << 12)

const char *regs_groups(int legacy)
{
	if (regs_pstate)
		return legacy ? "TPIDR_EL0, DIT, SSBS" :
		    "V0-V31, FPCR, FPSR, TPIDR_EL0, DIT, SSBS";
	return legacy ? "TPIDR_EL0" : "V0-V31, FPCR, FPSR, TPIDR_EL0";
}

#define QLD(a, b) "ldp q" #a ", q" #b ", [%0, #" #a "*16]\n\t"
#define QST(a, b) "stp q" #a ", q" #b ", [%0, #" #a "*16]\n\t"

void regs_write(uint64_t seed, int legacy)
{
	uint64_t p = regs_pattern(seed, 0);
	__asm__ volatile ("msr tpidr_el0, %0" :: "r" (regs_pattern(seed, 1)));
	if (regs_pstate) {
		/* Bits 7 and 8 of the pattern; nothing the compiler emits changes
		 * DIT or SSBS, so they hold until read back. */
		uint64_t dit = (p >> 7) & 1 ? PSTATE_DIT : 0;
		uint64_t ssbs = (p >> 8) & 1 ? PSTATE_SSBS : 0;
		__asm__ volatile ("msr " SYSREG_DIT ", %0\n\tmsr " SYSREG_SSBS
		    ", %1" :: "r" (dit), "r" (ssbs));
	}
	if (legacy)
		return;
	uint64_t v[64];
	for (int i = 0; i < 64; i++)
		v[i] = regs_pattern(seed, 2 + i);
	__asm__ volatile (QLD(0, 1) QLD(2, 3) QLD(4, 5) QLD(6, 7) QLD(8, 9)
	    QLD(10, 11) QLD(12, 13) QLD(14, 15) QLD(16, 17) QLD(18, 19)
	    QLD(20, 21) QLD(22, 23) QLD(24, 25) QLD(26, 27) QLD(28, 29)
	    QLD(30, 31) :: "r" (v) : "memory");
	/* FPCR: AHP, DN, FZ, RMode (bits 26-22); FPSR: IDC, IXC..IOC, QC. */
	uint64_t fpcr = (p & 0x1f) << 22;
	uint64_t fpsr = ((p >> 5) & 0x1f) | (((p >> 10) & 1) << 7) |
	    (((p >> 11) & 1) << 27);
	__asm__ volatile ("msr fpcr, %0\n\tmsr fpsr, %1" :: "r" (fpcr), "r" (fpsr));
}

void regs_read(regs_t *r, int legacy)
{
	memset(r, 0, sizeof(*r));
	__asm__ volatile ("mrs %0, tpidr_el0" : "=r" (r->tpidr));
	if (regs_pstate) {
		__asm__ volatile ("mrs %0, " SYSREG_DIT "\n\tmrs %1, " SYSREG_SSBS
		    : "=r" (r->dit), "=r" (r->ssbs));
	}
	if (legacy)
		return;
	__asm__ volatile (QST(0, 1) QST(2, 3) QST(4, 5) QST(6, 7) QST(8, 9)
	    QST(10, 11) QST(12, 13) QST(14, 15) QST(16, 17) QST(18, 19)
	    QST(20, 21) QST(22, 23) QST(24, 25) QST(26, 27) QST(28, 29)
	    QST(30, 31) :: "r" (r->v) : "memory");
	__asm__ volatile ("mrs %0, fpcr\n\tmrs %1, fpsr" : "=r" (r->fpcr),
	    "=r" (r->fpsr));
}

int regs_count(int legacy)
{
	return (legacy ? 1 : 35) + (regs_pstate ? 2 : 0);
}

int regs_diff(const regs_t *now, const regs_t *want, int legacy,
    const char *where)
{
	int n = regs_diff_word(where, "TPIDR_EL0", now->tpidr, want->tpidr);
	if (regs_pstate) {
		n += regs_diff_word(where, "DIT", now->dit, want->dit);
		n += regs_diff_word(where, "SSBS", now->ssbs, want->ssbs);
	}
	if (legacy)
		return n;
	n += regs_diff_word(where, "FPCR", now->fpcr, want->fpcr);
	n += regs_diff_word(where, "FPSR", now->fpsr, want->fpsr);
	for (int i = 0; i < 32; i++) {
		if (memcmp(now->v[i], want->v[i], 16) == 0)
			continue;
		uint64_t a[2], b[2];
		memcpy(a, now->v[i], 16);
		memcpy(b, want->v[i], 16);
		if (where)
			printf("regs: %s: V%d = %#lx:%016lx, expected "
			    "%#lx:%016lx\n", where, i, a[1], a[0], b[1], b[0]);
		n++;
	}
	return n;
}

int regs_diff_initial(const regs_t *r, int legacy, const char *where)
{
	regs_t init;
	memset(&init, 0, sizeof(init));
	return regs_diff(r, &init, legacy, where);
}
/*
 * `regs x18 N`: the kernel keeps its RCU reader count in x18 (the kernel's
 * arch/rcu_arch.h) and must neither use the user's value nor leave its own
 * in the register. Each round sets x18 to 2 (one open reader section, to a
 * kernel that used the user's value: the debug build then panics with
 * "blocking inside an RCU reader section" at the sleep), sleeps in
 * SYS_FUTEX_WAIT for 1 ms and reads x18 back, all in one asm statement (user
 * code may use x18 as a scratch register). Returns the rounds in which x18
 * came back changed.
 */
int regs_x18(long rounds)
{
	static uint32_t word;   /* never changes: every wait times out */
	int bad = 0;
	for (long i = 0; i < rounds; i++) {
		register long x8 __asm__("x8") = SYS_FUTEX_WAIT;
		register long x0 __asm__("x0") = (long) &word;
		register long x1 __asm__("x1") = 0;
		register long x2 __asm__("x2") = 1000000;
		uint64_t back;
		__asm__ volatile ("mov x18, #2\n\tsvc #0\n\tmov %[back], x18"
		    : [back] "=r" (back), "+r" (x0)
		    : "r" (x8), "r" (x1), "r" (x2) : "x18", "memory");
		if (back != 2) {
			printf("regs x18: round %ld: x18 %#lx, wait %ld\n", i,
			    (unsigned long) back, x0);
			bad++;
		}
	}
	return bad;
}
#endif
