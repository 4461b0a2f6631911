/** @file as_impl.h
 * What the files of an address space (mm/as.c, as_fault.c, as_prune.c) share
 * and nothing else may use.
 */
#ifndef KERN_MM_AS_IMPL_H_
#define KERN_MM_AS_IMPL_H_

#include <mm/as.h>
#include <adt/avl.h>
#include <synch/spinlock.h>
#include <debug.h>
#include <cpu.h>

/** The lock of the page-table entries of @a page (see as_t.pt_locks). */
static inline irq_spinlock_t *as_pt_lock(as_t *as, uintptr_t page)
{
	return &as->pt_locks[(page >> 21) & (AS_PT_LOCKS - 1)].lock;
}

/**
 * This CPU's row of @a as's statistics (as_cpu_stats_t). The caller may be
 * preempted and migrate afterwards: the row's counters are updated with
 * atomic adds, so the count stays exact (only the line may be shared then).
 */
static inline as_cpu_stats_t *as_cpu_stats(as_t *as)
{
	unsigned id = CPU->id;
	return &as->stats[id < as->nstats ? id : 0];
}

/**
 * The area containing @a addr, or NULL: the area with the greatest base <=
 * @a addr, if it reaches that far (areas do not overlap). O(log n). Caller
 * holds as->area_lock.
 */
static inline as_area_t *area_find_locked(as_t *as, uintptr_t addr)
{
	assert(irq_spinlock_locked_by_me(&as->area_lock));
	avl_node_t *n = avl_find_le(&as->areas, addr);
	if (!n)
		return NULL;
	as_area_t *a = container_of(n, as_area_t, node);
	return addr - a->base < a->pages * PAGE_SIZE ? a : NULL;
}

/**
 * True when [base, base + size) overlaps an area other than @a except
 * (which, if given, starts at @a base). O(log n). Caller holds
 * as->area_lock. (mm/as.c)
 */
bool area_overlaps_locked(as_t *as, uintptr_t base, size_t size,
    const as_area_t *except);

/**
 * Invalidates, on every CPU that may hold them, the walk-cache entries that
 * point to the tables covering the pages @a va[0..n) (n >= 1), after their
 * parent entries were cleared (mm/as.c, beside tlb_shootdown(), which stays
 * static there). Thread context.
 */
void tlb_shootdown_tables(as_t *as, const uintptr_t *va, size_t n);

/**
 * Frees the page tables whose whole coverage meets [@a lo, @a hi) and no
 * area of @a as any more (mm/as_prune.c). Caller holds area_mtx and has
 * unmapped the range; thread context, interrupts enabled.
 */
void prune_tables(as_t *as, uintptr_t lo, uintptr_t hi);

#endif
