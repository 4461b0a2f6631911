/** @file asid.h
 * arm64 address space identifiers (ASIDs): each user address space's TLB
 * entries are tagged with its 8-bit ASID (TTBR0_EL1[55:48], TCR_EL1.A1 = 0,
 * TCR_EL1.AS = 0), so a switch between address spaces keeps the other
 * address spaces' translations and the kernel's global ones, and an unmap
 * invalidates by ASID and address (`tlbi vae1is`) or by ASID (`tlbi
 * aside1is`), never every CPU's whole TLB.
 *
 * The allocator is the generic one (genarch/mm/asid.h, shared with amd64's
 * PCIDs); the two hooks below are arm64's: a rollover's local flush and a
 * release's broadcast invalidation of the ASID. docs/ARM64.md, "TLB and
 * ASIDs", has the argument and the counts.
 */
#ifndef KERN_ARCH_ASID_H_
#define KERN_ARCH_ASID_H_

#include <typedefs.h>
#include <arch/asm.h>
#include <mm/tlb_stats.h>
#include <debug/fault_inject.h>

/** Bits of an ASID (TCR_EL1.AS = 0: 8; every ARMv8 core has them). */
#define ASID_BITS 8

/**
 * After a rollover, before this CPU loads a number of the new generation:
 * its whole TLB goes (`tlbi vmalle1`, local: every other CPU does its own
 * at its next slow path). The DSB completes the TLBI before the TTBR0 write
 * (arch_as_load()) lets the new number be used. asid_lock held.
 */
static inline void asid_arch_rollover_flush(void)
{
	asm volatile ("tlbi vmalle1\n\tdsb nsh" ::: "memory");
	tlb_count(TLB_LOAD_FLUSHES, 1);
	tlb_count(TLB_GLOBAL_DROPS, 1);
}

/**
 * A released address space's ASID (context @a ctx) is invalidated on every
 * CPU before the number is freed: every CPU's entries (and walk caches)
 * under the number go. The broken control (make BROKEN=asid) leaves them,
 * and the next owner of the number reads through them (test asid1).
 * `dsb ishst` before: the caller's earlier table stores are visible to
 * every walker; `dsb ish` after: complete on every CPU; `isb`: this CPU's
 * next instructions see it. Interrupts masked as in
 * tlb_invalidate_pages_broadcast() (a DSB waits for its own CPU's TLBIs
 * only). Thread context.
 */
static inline void asid_arch_release(uint64_t ctx)
{
	if (fault_inject(FI_ASID_REUSE))
		return;
	ipl_t ipl = interrupts_disable();
	asm volatile ("dsb ishst\n\ttlbi aside1is, %0\n\tdsb ish\n\tisb"
	    :: "r" ((ctx & ((1UL << ASID_BITS) - 1)) << 48) : "memory");
	tlb_count(TLB_ASID_OPS, 1);
	interrupts_restore(ipl);
}

/** ASIDs are always on (every ARMv8 core has them). */
static inline bool asid_enabled(void)
{
	return true;
}

#include <genarch/mm/asid.h>

#endif
