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
 * Invalidates the TLB entries of the user pages [@a base, @a base + @a pages
 * * PAGE_SIZE) on every CPU of the inner shareable domain: `tlbi vae1is`
 * broadcasts in hardware (so the generic cross-call shootdown is redundant
 * here, as Linux's arm64 flush_tlb_range() needs none). The DSB ISHST before
 * orders the caller's cleared entries before the invalidation (a walk after
 * it cannot reload the old entry); the DSB ISH after waits until every CPU
 * completed it; the ISB makes this CPU's later accesses use the result.
 */
static inline void tlb_invalidate_pages_local(uintptr_t base, size_t pages)
{
	asm volatile ("dsb ishst" ::: "memory");
	if (pages > 32) {
		asm volatile ("tlbi vmalle1is" ::: "memory");
	} else {
		for (size_t i = 0; i < pages; i++) {
			uint64_t arg = ((base + i * PAGE_SIZE) >> 12) &
			    ((1UL << 44) - 1);
			asm volatile ("tlbi vae1is, %0" :: "r" (arg) : "memory");
		}
	}
	asm volatile ("dsb ish\n\tisb" ::: "memory");
}

#endif
