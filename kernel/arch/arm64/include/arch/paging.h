/** @file paging.h
 * arm64 user page tables (TTBR0): four levels of 512 entries, 4 KiB pages,
 * the same shape as amd64's, so the generic address-space code walks them
 * through the same functions: the roots in paging.c, the walk in
 * genarch/src/mm/pt4.c.
 */
#ifndef KERN_ARCH_PAGING_H_
#define KERN_ARCH_PAGING_H_

#include <typedefs.h>
#include <arch/mm.h>
#include <arch/asm.h>
#include <mm/tlb_stats.h>

/*
 * The descriptor bits of the shared 4-level walk (genarch/mm/pt4.h; its
 * defaults: 4 KiB pages, 512 entries, the root slots below USER_SPACE_END,
 * 2^47: half of them). A new intermediate table is a valid table
 * descriptor: permissions are decided at the last level.
 */
#define PT4_PRESENT     PTE_VALID
#define PT4_TABLE_FLAGS (PTE_VALID | PTE_TABLE)
#define PT4_ADDR_MASK   PTE_ADDR_MASK

/**
 * After a store that made an entry valid (a new table in paging_walk(), a
 * new page in as_page_fault(); genarch/mm/pt4.h): `dsb ishst`. On arm64 the
 * table walker is not ordered by the release store (or by any DMB) against
 * this CPU's later accesses: the DSB waits until every earlier store of this
 * CPU, the entry included, is complete for the inner shareable domain, so no
 * later walk, by any CPU, reads the entry invalid and faults again. The walk
 * that needs it on this CPU is the retried access after the fault handler's
 * ERET, a context synchronization event: it does what an ISB would (the
 * retried instruction is fetched and translated after the DSB completed),
 * so none is added here. No invalid entry is held in a TLB (VMSAv8-64
 * caches only valid translations), so no TLB invalidation is needed either.
 */
static inline void paging_entry_installed(void)
{
	asm volatile ("dsb ishst" ::: "memory");
}

#include <genarch/mm/pt4.h>

/**
 * The kernel's empty lower-half root table (4 KiB, all zero, never written):
 * TTBR0 of a CPU with no user address space. start.S loads it on every CPU
 * as soon as the CPU runs in the direct map, so low addresses (NULL) fault.
 */
extern uint64_t paging_empty_root[512];

/** Root of the kernel's (empty) lower-half table. */
uintptr_t paging_kernel_root_phys(void);

/** Allocates an empty root table for a user address space; 0 on ENOMEM. */
uintptr_t paging_create_root(void);

/**
 * Hardware bits of a present user page: EL0 access, read-only unless
 * @a writable, never executable by EL1 (PXN, the counterpart of SMEP),
 * executable by EL0 only if @a exec; not global (nG), inner shareable,
 * Normal memory, accessed.
 */
static inline uint64_t paging_user_flags(bool writable, bool exec)
{
	uint64_t f = PTE_VALID | PTE_TABLE | PTE_ATTR(MAIR_IDX_NORMAL) |
	    PTE_AP_EL0 | PTE_SH_INNER | PTE_AF | PTE_NG | PTE_PXN;
	if (!writable)
		f |= PTE_AP_RO;
	if (!exec)
		f |= PTE_UXN;
	return f;
}

/**
 * arm64's TLB maintenance is broadcast in hardware: `tlbi ...is` reaches
 * every CPU of the inner shareable domain (this one included) and is
 * complete, on all of them, when this CPU's following `dsb ish` completes.
 * So the generic shootdown (mm/as.c, tlb_shootdown()) sends no cross-call
 * here: it calls tlb_invalidate_pages_broadcast() once, as Linux's arm64
 * flush_tlb_range() does (arm64 Linux keeps no mm_cpumask for it). See
 * arch.h, "TLB invalidation".
 */
#define ARCH_TLB_BROADCAST 1

/**
 * Above this many pages (or tables) an invalidation drops the address
 * space's whole ASID (`tlbi aside1is`) instead of one `tlbi vae1is` per
 * page (as amd64's TLB_INVLPG_MAX and Linux's MAX_DVM_OPS bound on a range).
 */
#define TLB_TLBI_MAX 32

/**
 * The ASID of the address space whose TLB tag (as_t.tlb_ctx) is at
 * @a tlb_ctx, shifted into a TLBI operand's ASID field (bits 63:48); 0 when
 * it was never loaded (no CPU can hold a translation of it). Read after the
 * caller's `dsb ish` (see tlb_invalidate_pages_broadcast()).
 */
static inline uint64_t tlb_asid_operand(const uint64_t *tlb_ctx)
{
	uint64_t ctx = __atomic_load_n(tlb_ctx, __ATOMIC_RELAXED);
	return (ctx & 0xffUL) << 48;
}

/**
 * Invalidates the TLB entries of the user pages [@a base, @a base + @a pages
 * * PAGE_SIZE) of the address space whose tag is at @a tlb_ctx on every CPU
 * (the inner shareable domain), complete on return: `tlbi vae1is` (address
 * and ASID) per page, or `tlbi aside1is` (the ASID) above TLB_TLBI_MAX
 * pages; neither touches the kernel's global entries or another address
 * space's. Any context (it masks interrupts itself, see below); call after
 * clearing the entries.
 *
 * The ordering, step by step:
 *   1. `dsb ish`: the caller's stores that cleared the entries are
 *      complete for the inner shareable domain, table walkers included,
 *      before the ASID is read and the TLBIs are issued. A DMB would not
 *      do: it orders accesses against accesses, and a TLBI is not one, nor
 *      is another CPU's walk. Without it a remote walk that starts after
 *      our TLBI reached its CPU could still read the old entry and cache
 *      the stale translation again, after the invalidation. The full DSB
 *      (not ST) also keeps the load of the ASID after those stores: a CPU
 *      that gives the address space its first or a new ASID concurrently
 *      (asid_switch() stores as_t.tlb_ctx, then arch_as_load()'s `dsb ish`,
 *      then walks) either stored before our load (we invalidate that
 *      number) or its walks come after our cleared entry is visible (the
 *      store-buffering pattern, with a full barrier on both sides). An ASID
 *      of an earlier generation names entries the CPUs that hold them
 *      cannot reach any more (arch/asid.h): invalidating by it is harmless.
 *   2. `tlbi vae1is` (VA and ASID) or `tlbi aside1is` (ASID): the entries
 *      are nG (paging_user_flags()), tagged with the ASID. VAE1 (not VALE1)
 *      also drops the walk caches of the intermediate levels.
 *   3. `dsb ish`: waits until the TLBIs are complete on every CPU of the
 *      domain. Completion also covers the accesses the other CPUs made
 *      through the old translations (the architecture's completion rule for
 *      broadcast TLB maintenance): after it no CPU can still read or write
 *      the old frame through the entry, which is what lets the caller free
 *      the frame after its RCU reader section and a grace period (mm/as.c).
 *   4. `isb`: this CPU's later instructions are fetched and translated
 *      after the invalidation (a uaccess of the page right after the unmap
 *      faults, not a stale hit). Remote CPUs need no ISB: their next use of
 *      the page misses the TLB and walks the cleared entry; a kernel-mode
 *      instruction of theirs already in flight completed under step 3.
 * Interrupts are masked from step 1 to step 4: a DSB waits only for the
 * TLBIs its own CPU issued, and a thread preempted between its TLBIs and
 * its `dsb ish` and resumed on another CPU would wait there for nothing
 * (context_switch() executes no DSB; Linux's __switch_to() has a `dsb ish`
 * for this). At most TLB_TLBI_MAX TLBIs are issued with interrupts masked.
 * An address space never loaded (ASID 0 read) needs no TLBI at all.
 */
static inline void tlb_invalidate_pages_broadcast(const uint64_t *tlb_ctx,
    uintptr_t base, size_t pages)
{
	ipl_t ipl = interrupts_disable();
	asm volatile ("dsb ish" ::: "memory");
	uint64_t asid = tlb_asid_operand(tlb_ctx);
	if (!asid) {
		/* Nothing to invalidate; no TLBI to wait for. */
	} else if (pages > TLB_TLBI_MAX) {
		asm volatile ("tlbi aside1is, %0" :: "r" (asid) : "memory");
		tlb_count(TLB_ASID_OPS, 1);
	} else {
		for (size_t i = 0; i < pages; i++) {
			uint64_t arg = asid | (((base + i * PAGE_SIZE) >> 12) &
			    ((1UL << 44) - 1));
			asm volatile ("tlbi vae1is, %0" :: "r" (arg) : "memory");
		}
		tlb_count(TLB_PAGE_OPS, pages);
	}
	asm volatile ("dsb ish\n\tisb" ::: "memory");
	interrupts_restore(ipl);
}

/**
 * Invalidates, on every CPU, the cached walks through the page tables that
 * covered the pages @a va[0..@a n) (one page of each table) of the address
 * space whose tag is at @a tlb_ctx, after the caller cleared the entries
 * that linked them (mm/as_prune.c, prune_tables()): the same steps as
 * tlb_invalidate_pages_broadcast(), with one `tlbi vae1is` (address and
 * ASID) per table. VAE1 is the all-levels form: it drops the walk-cache
 * entries of the non-last levels that translate that address (VALE1 would
 * keep them), which are the entries that point to the unlinked table,
 * whichever level it had; one address per table suffices, since each cached
 * entry that points to a table translates addresses of that table's
 * coverage only. Above TLB_TLBI_MAX tables `tlbi aside1is` (every
 * translation and walk of the ASID). Complete on every CPU on return (`dsb
 * ish`): the table may be freed once no software walker can hold it (a
 * grace period). Any context.
 */
static inline void tlb_invalidate_walks_broadcast(const uint64_t *tlb_ctx,
    const uintptr_t *va, size_t n)
{
	ipl_t ipl = interrupts_disable();
	/* The cleared table entries are visible to every walker first. */
	asm volatile ("dsb ish" ::: "memory");
	uint64_t asid = tlb_asid_operand(tlb_ctx);
	if (!asid) {
		/* Never loaded: no walk of it is cached anywhere. */
	} else if (n > TLB_TLBI_MAX) {
		asm volatile ("tlbi aside1is, %0" :: "r" (asid) : "memory");
		tlb_count(TLB_ASID_OPS, 1);
	} else {
		for (size_t i = 0; i < n; i++) {
			uint64_t arg = asid | ((va[i] >> 12) & ((1UL << 44) - 1));
			asm volatile ("tlbi vae1is, %0" :: "r" (arg) : "memory");
		}
		tlb_count(TLB_PAGE_OPS, n);
	}
	asm volatile ("dsb ish\n\tisb" ::: "memory");
	interrupts_restore(ipl);
}

/**
 * The negative control's invalidation (fault_inject(FI_TLB_SHOOTDOWN), make
 * BROKEN=shootdown): the same as tlb_invalidate_pages_broadcast() with the
 * non-broadcast forms (`tlbi vae1`, `tlbi aside1`, `dsb nsh`), so only this
 * CPU's TLB forgets the pages; the defect the control must show is a remote
 * CPU still translating through the old entry (pagefault1). Never used
 * otherwise: on arm64 the generic code needs no local-only invalidation.
 */
static inline void tlb_invalidate_pages_local(const uint64_t *tlb_ctx,
    uintptr_t base, size_t pages)
{
	ipl_t ipl = interrupts_disable();
	asm volatile ("dsb ish" ::: "memory");
	uint64_t asid = tlb_asid_operand(tlb_ctx);
	if (pages > TLB_TLBI_MAX) {
		asm volatile ("tlbi aside1, %0" :: "r" (asid) : "memory");
	} else {
		for (size_t i = 0; i < pages; i++) {
			uint64_t arg = asid | (((base + i * PAGE_SIZE) >> 12) &
			    ((1UL << 44) - 1));
			asm volatile ("tlbi vae1, %0" :: "r" (arg) : "memory");
		}
	}
	asm volatile ("dsb nsh\n\tisb" ::: "memory");
	interrupts_restore(ipl);
}

#endif
