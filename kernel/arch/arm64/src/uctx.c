/** @file uctx.c
 * arm64 per-thread user register state (proc/uctx.h): V0-V31, FPCR, FPSR
 * and TPIDR_EL0, saved and loaded by uctx_asm.S.
 *
 * CPACR_EL1.FPEN is 0b11 on every CPU (arch.c, el0_access_init()): FP and
 * Advanced SIMD run at EL0 without a trap; ZEN and SMEN stay 0, so SVE and
 * SME instructions trap (EC 0x19, 0x1d) and kill the task as `invalid
 * instruction`. The kernel is compiled with -mgeneral-regs-only and touches
 * V0-V31, FPCR and FPSR only here; it never uses TPIDR_EL0 (its per-CPU base
 * is TPIDR_EL1) and sets TPIDRRO_EL0 to 0 at boot on every CPU and never
 * after, so no task can read anything through it. So the state a user thread
 * left in the CPU stays there until the next user thread's is loaded.
 *
 * The rest of EL0's state is in the exception frame of each thread's kernel
 * stack (vectors.S): X0-X30, SP_EL0, ELR_EL1 and SPSR_EL1, i.e. PSTATE with
 * NZCV, DIT, SSBS, BTYPE and the rest. The exclusive monitor is cleared by
 * every return to EL0 (`clrex` before `eret`, vectors.S), so a thread's
 * store-exclusive never succeeds on a reservation another thread's
 * load-exclusive made.
 */
#include <proc/uctx.h>
#include <mm/malloc.h>
#include <lib/str.h>

/** Layout used by uctx_asm.S: V0-V31 at 0 (16-byte aligned), then the rest. */
struct uctx {
	uint64_t v[64];
	uint64_t fpcr;
	uint64_t fpsr;
	uint64_t tpidr_el0;
	/** The allocation (this structure is aligned inside it). */
	void *block;
};

_Static_assert(offsetof(struct uctx, fpcr) == 512, "uctx_asm.S: fpcr");
_Static_assert(offsetof(struct uctx, fpsr) == 520, "uctx_asm.S: fpsr");
_Static_assert(offsetof(struct uctx, tpidr_el0) == 528, "uctx_asm.S: tpidr_el0");

size_t uctx_size(void)
{
	return sizeof(struct uctx) + 15;
}

struct uctx *uctx_create(void)
{
	void *block = malloc(uctx_size());
	if (!block)
		return NULL;
	/* ldp/stp of Q registers: 16-byte aligned (not required, but whole). */
	struct uctx *u = (struct uctx *) ALIGN_UP((uintptr_t) block, 16);
	/* The initial state: V0-V31, FPCR, FPSR and TPIDR_EL0 all 0. */
	memset(u, 0, sizeof(*u));
	u->block = block;
	return u;
}

void uctx_destroy(struct uctx *u)
{
	free(u->block);
}
