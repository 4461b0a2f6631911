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
 * intermediate tables when @a alloc (NULL if missing/ENOMEM). A missing table
 * is installed by compare-and-swap (release), so CPUs walking different parts
 * of one address space need no common lock; a CPU that loses the race frees
 * its table and uses the winner's. Writing the returned entry is the caller's
 * business: it holds the lock of the entry's 2 MiB region (as_t.pt_locks).
 * Tables are only freed by paging_destroy_root(). Any context; never sleeps.
 */
uint64_t *paging_walk(uintptr_t root_phys, uintptr_t va, bool alloc);
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
