/** @file pt4.c
 * Four-level user page tables, the architecture's entry bits from
 * arch/paging.h (genarch/mm/pt4.h).
 *
 * A table entry is published with a release store (compare-and-swap) after
 * the new table was zeroed; every walk reads entries with acquire loads, so
 * it sees a zeroed table. The hardware walker is not ordered by those: the
 * architecture's paging_entry_installed() after the install does what it
 * needs (arm64: DSB ISHST; arch/paging.h).
 */
#include <arch/paging.h>
#include <arch/mm.h>
#include <mm/frame.h>

/**
 * Frees the table @a entry points to (a table of level @a level: 3 under the
 * root, 1 a last-level table) and every table below it. @return the tables
 * freed.
 */
static size_t free_level(uint64_t entry, int level)
{
	if (!(entry & PT4_PRESENT))
		return 0;
	uintptr_t pa = entry & PT4_ADDR_MASK;
	size_t n = 0;
	if (level > 1) {
		uint64_t *t = PA2KA(pa);
		for (unsigned i = 0; i < PT4_ENTRIES; i++)
			n += free_level(__atomic_load_n(&t[i], __ATOMIC_RELAXED),
			    level - 1);
	}
	/* Level 1 entries map data frames owned by the page hash table records. */
	if (level > 0) {
		frame_free(pa, 1);
		n++;
	}
	return n;
}

size_t paging_free_table(uintptr_t pa, int level)
{
	return free_level(pa | PT4_PRESENT, level);
}

/**
 * paging_prune()'s walk of the table @a t of level @a level + 1 (whose
 * entries point to tables of @a level), which covers the addresses from
 * @a base: every present entry whose coverage meets [@a lo, @a hi).
 */
static size_t prune_level(uint64_t *t, int level, uintptr_t base, uintptr_t lo,
    uintptr_t hi, const paging_prune_ops_t *ops, void *arg)
{
	int shift = PT4_PAGE_SHIFT + level * PT4_INDEX_BITS;
	uintptr_t span = 1UL << shift;
	unsigned first = lo > base ? (unsigned) ((lo - base) >> shift) : 0;
	unsigned last = (unsigned) ((hi - 1 - base) >> shift);
	if (last >= PT4_ENTRIES)
		last = PT4_ENTRIES - 1;
	if (level == 3 && last >= PT4_USER_SLOTS)
		last = PT4_USER_SLOTS - 1;
	size_t n = 0;
	for (unsigned i = first; i <= last; i++) {
		uint64_t e = __atomic_load_n(&t[i], __ATOMIC_ACQUIRE);
		if (!(e & PT4_PRESENT))
			continue;
		uintptr_t va = base + (uintptr_t) i * span;
		if (!ops->used(arg, va, span)) {
			/*
			 * Unlinked: no new walk reaches the table from here.
			 * Relaxed: the caller's shootdown orders it before the
			 * invalidation (arm64 `dsb ishst`, amd64 its fence and
			 * cross-call), and the RCU grace period before the free.
			 */
			__atomic_store_n(&t[i], 0, __ATOMIC_RELAXED);
			ops->unlinked(arg, e & PT4_ADDR_MASK, level, va);
			n++;
		} else if (level > 1) {
			n += prune_level(PA2KA(e & PT4_ADDR_MASK), level - 1, va,
			    lo, hi, ops, arg);
		}
	}
	return n;
}

size_t paging_prune(uintptr_t root_phys, uintptr_t lo, uintptr_t hi,
    const paging_prune_ops_t *ops, void *arg)
{
	if (lo >= hi)
		return 0;
	return prune_level(PA2KA(root_phys), 3, 0, lo, hi, ops, arg);
}

void paging_destroy_root(uintptr_t root_phys)
{
	uint64_t *t = PA2KA(root_phys);
	for (unsigned i = 0; i < PT4_USER_SLOTS; i++) {
		/* PDPT (level 3) -> PD (2) -> PT (1) -> frames (0, not freed here). */
		free_level(t[i], 3);
		t[i] = 0;
	}
	frame_free(root_phys, 1);
}

uint64_t *paging_walk(uintptr_t root_phys, uintptr_t va, uint64_t *tables)
{
	uint64_t *t = PA2KA(root_phys);
	for (int shift = PT4_ROOT_SHIFT; shift > PT4_PAGE_SHIFT;
	    shift -= PT4_INDEX_BITS) {
		unsigned idx = (va >> shift) & (PT4_ENTRIES - 1);
		/* Acquire: pairs with the installer's release (a zeroed table). */
		uint64_t e = __atomic_load_n(&t[idx], __ATOMIC_ACQUIRE);
		if (!(e & PT4_PRESENT)) {
			if (!tables)
				return NULL;
			uintptr_t pa = frame_alloc(1, FRAME_ZERO | FRAME_USER);
			if (!pa)
				return NULL;
			/* Permissions are decided at the last level. */
			uint64_t mine = pa | PT4_TABLE_FLAGS;
			if (__atomic_compare_exchange_n(&t[idx], &e, mine, false,
			    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
				/* The walker too sees the zeroed table (arm64: DSB). */
				paging_entry_installed();
				/* Charged to the address space (as_t.pt_pages). */
				__atomic_fetch_add(tables, 1, __ATOMIC_RELAXED);
				e = mine;
			} else {
				/* Another CPU installed one first: use it. */
				frame_free(pa, 1);
			}
		}
		t = PA2KA(e & PT4_ADDR_MASK);
	}
	return &t[(va >> PT4_PAGE_SHIFT) & (PT4_ENTRIES - 1)];
}

uint64_t *paging_next_leaf(uintptr_t root_phys, uintptr_t *vap, uintptr_t end)
{
	uintptr_t va = *vap;
	while (va < end) {
		uint64_t *t = PA2KA(root_phys);
		int shift;
		for (shift = PT4_ROOT_SHIFT; shift > PT4_PAGE_SHIFT;
		    shift -= PT4_INDEX_BITS) {
			/* Acquire: pairs with paging_walk()'s release install. */
			uint64_t e = __atomic_load_n(
			    &t[(va >> shift) & (PT4_ENTRIES - 1)], __ATOMIC_ACQUIRE);
			if (!(e & PT4_PRESENT))
				break;
			t = PA2KA(e & PT4_ADDR_MASK);
		}
		if (shift == PT4_PAGE_SHIFT) {
			*vap = va;
			return t;
		}
		/* The entry at this level is absent: skip what it would map. */
		uintptr_t step = 1UL << shift;
		uintptr_t next = (va & ~(step - 1)) + step;
		if (next <= va)
			break;
		va = next;
	}
	*vap = end;
	return NULL;
}
