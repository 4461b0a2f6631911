/** @file pt4.h
 * Four-level page tables of user address spaces (amd64 PML4 -> PDPT -> PD ->
 * PT, arm64 TTBR0 level 0 -> 1 -> 2 -> 3): the walk, the skip to the next
 * present last-level table and the freeing of the tables, shared by every
 * architecture whose user tables have that shape (pt4.c).
 *
 * Included by arch/paging.h after it defined what differs:
 * - PT4_PRESENT: the bit of a valid entry;
 * - PT4_TABLE_FLAGS: the bits of an entry that installs a new intermediate
 *   table (the table's physical address or'd in; permissions are decided at
 *   the last level);
 * - PT4_ADDR_MASK: the next table's physical address in an entry;
 * - paging_entry_installed(): a static inline called after every store that
 *   makes an entry valid (a new table here, a new page by the generic fault
 *   path), which makes the entry visible to the hardware table walker where
 *   that takes a barrier (arm64: DSB ISHST; amd64: nothing);
 * and, where it differs from the defaults below (4 KiB pages, 512 entries a
 * level, the lower half of the root for user space):
 * - PT4_PAGE_SHIFT: the shift of the last level's index;
 * - PT4_INDEX_BITS: index bits per level;
 * - PT4_USER_SLOTS: the root slots of the user half (the others are the
 *   kernel's, shared or absent, never freed here).
 */
#ifndef KERN_GENARCH_PT4_H_
#define KERN_GENARCH_PT4_H_

#include <typedefs.h>

#ifndef PT4_PAGE_SHIFT
#define PT4_PAGE_SHIFT 12
#endif
#ifndef PT4_INDEX_BITS
#define PT4_INDEX_BITS 9
#endif

/** Entries per table. */
#define PT4_ENTRIES (1U << PT4_INDEX_BITS)
/** The shift of the root level's index (39 with 4 KiB pages). */
#define PT4_ROOT_SHIFT (PT4_PAGE_SHIFT + 3 * PT4_INDEX_BITS)

#ifndef PT4_USER_SLOTS
#define PT4_USER_SLOTS (PT4_ENTRIES / 2)
#endif

/** Frees the user half's page tables and the top-level table itself. */
void paging_destroy_root(uintptr_t root_phys);
/**
 * Returns the address of the last-level entry for @a va, allocating missing
 * intermediate tables when @a tables is not NULL (NULL if missing/ENOMEM;
 * the frames are FRAME_USER ones: refused below the kernel's reserve). A
 * missing table is installed by compare-and-swap (release), so CPUs walking
 * different parts of one address space need no common lock; a CPU that
 * loses the race frees its table and uses the winner's. Every table this
 * call installed adds 1 to *@a tables (relaxed atomic: the address space's
 * count of page-table pages, as_t.pt_pages). Writing the returned entry is
 * the caller's business: it holds the lock of the entry's 2 MiB region
 * (as_t.pt_locks). Tables are freed by paging_destroy_root() and, when no
 * area needs them any more, by paging_prune() and paging_free_table(): a
 * caller that may race with a prune walks inside an RCU reader section
 * (mm/as_prune.c, "Freeing page tables"). Any context; never sleeps.
 */
uint64_t *paging_walk(uintptr_t root_phys, uintptr_t va, uint64_t *tables);

/** What paging_prune() asks of and tells its caller. */
typedef struct {
	/**
	 * Whether [@a va, @a va + @a size) still meets something that needs
	 * tables (an area). Called with the caller's locks, never sleeps.
	 */
	bool (*used)(void *arg, uintptr_t va, uintptr_t size);
	/**
	 * The table at physical @a pa (of @a level: 1 a last-level table,
	 * 3 a table under the root), covering the addresses from @a va, was
	 * unlinked from its parent (the entry cleared): the callee
	 * invalidates the walk caches and frees it (and the tables below it)
	 * once no walker can hold it (paging_free_table()).
	 */
	void (*unlinked)(void *arg, uintptr_t pa, int level, uintptr_t va);
} paging_prune_ops_t;

/**
 * Unlinks every user page table below the root whose whole coverage meets
 * [@a lo, @a hi) and no longer meets anything ops->used() reports: the
 * highest such table of each branch has its parent entry cleared and is
 * passed to ops->unlinked() (the tables below it go with it); tables that
 * are still used are descended into. Neither frees nor invalidates a TLB:
 * that is ops->unlinked()'s caller's business. The caller excludes every
 * other prune and every change of what ops->used() reports (as_t.area_mtx)
 * and has removed every mapping of [@a lo, @a hi). @return the tables
 * unlinked. Thread context; O(tables met).
 */
size_t paging_prune(uintptr_t root_phys, uintptr_t lo, uintptr_t hi,
    const paging_prune_ops_t *ops, void *arg);

/**
 * Frees the unlinked table at physical @a pa of @a level (as passed to
 * paging_prune_ops_t.unlinked) and every table below it (a walk that raced
 * with the prune may have installed one there). @return the tables freed.
 * Call when no software or hardware walker can reach it any more.
 */
size_t paging_free_table(uintptr_t pa, int level);
/**
 * Finds the first last-level table (one 2 MiB region) at or above *@a va and
 * below @a end that exists, skipping every absent table at any level in one
 * step (an absent root entry skips 512 GiB): the cost is one walk per
 * present table and per absent entry passed, not per page. On success sets
 * *@a va to the first address of that region at or above the old *@a va and
 * returns the table (its 512 entries, direct-map address); NULL (*@a va =
 * @a end) when none is left. Reads the tables with acquire loads, so a table
 * installed by paging_walk() (release) before the caller synchronized with
 * its installer is seen. Any context; never sleeps, allocates nothing.
 */
uint64_t *paging_next_leaf(uintptr_t root_phys, uintptr_t *va, uintptr_t end);

#endif
