/** @file paging.h
 * amd64 4-level page tables of user address spaces.
 */
#ifndef KERN_ARCH_PAGING_H_
#define KERN_ARCH_PAGING_H_

#include <typedefs.h>
#include <arch/mm.h>
#include <arch/asm.h>

/**
 * Above this many pages an invalidation reloads CR3 (flushes the whole TLB
 * but for global entries) instead of one invlpg per page, as Linux's
 * tlb_single_page_flush_ceiling.
 */
#define TLB_INVLPG_MAX 32

/**
 * Invalidates this CPU's TLB entries of the user pages [@a base, @a base +
 * @a pages * PAGE_SIZE): invlpg each, or a CR3 reload above TLB_INVLPG_MAX
 * pages. Interrupts disabled or inside a cross-call.
 */
static inline void tlb_invalidate_pages_local(uintptr_t base, size_t pages)
{
	if (pages > TLB_INVLPG_MAX) {
		write_cr3(read_cr3());
		return;
	}
	for (size_t i = 0; i < pages; i++)
		invlpg(base + i * PAGE_SIZE);
}

/**
 * Hardware flags of a present user page (user, read; writable and
 * executable as asked): the last-level entry is frame | these.
 */
static inline uint64_t paging_user_flags(bool writable, bool exec)
{
	uint64_t f = PTE_P | PTE_US;
	if (writable)
		f |= PTE_RW;
	if (!exec)
		f |= PTE_NX;
	return f;
}

/** Physical address of the kernel's top-level page table (boot_pml4). */
uintptr_t paging_kernel_pml4_phys(void);
/**
 * Allocates a top-level table for a user address space: the user half empty,
 * the kernel half shared with the kernel's table. @return its physical address
 * or 0 on ENOMEM.
 */
uintptr_t paging_create_pml4(void);
/** Frees the user half's page tables and the top-level table itself. */
void paging_destroy_pml4(uintptr_t pml4_phys);
/**
 * Returns the address of the last-level entry for @a va, allocating missing
 * intermediate tables when @a alloc (NULL if missing/ENOMEM). A missing table
 * is installed by compare-and-swap (release), so CPUs walking different parts
 * of one address space need no common lock; a CPU that loses the race frees
 * its table and uses the winner's. Writing the returned entry is the caller's
 * business: it holds the lock of the entry's 2 MiB region (as_t.pt_locks).
 * Tables are only freed by paging_destroy_pml4(). Any context; never sleeps.
 */
uint64_t *paging_walk(uintptr_t pml4_phys, uintptr_t va, bool alloc);
/**
 * Finds the first last-level table (one 2 MiB region) at or above *@a va and
 * below @a end that exists, skipping every absent table at any level in one
 * step (an absent PML4 entry skips 512 GiB): the cost is one walk per
 * present table and per absent entry passed, not per page. On success sets
 * *@a va to the first address of that region at or above the old *@a va and
 * returns the table (its 512 entries, direct-map address); NULL (*@a va =
 * @a end) when none is left. Reads the tables with acquire loads, so a table
 * installed by paging_walk() (release) before the caller synchronized with
 * its installer is seen. Any context; never sleeps, allocates nothing.
 */
uint64_t *paging_next_leaf(uintptr_t pml4_phys, uintptr_t *va, uintptr_t end);

#endif
