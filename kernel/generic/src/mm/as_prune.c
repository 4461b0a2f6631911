/** @file as_prune.c
 * Freeing the page tables of an address space that no area needs any more
 * (after a destroy or a shrink of mm/as.c; docs/LOCKING.md, "Freeing page
 * tables"): unlinked, their walk caches invalidated on every CPU, freed
 * after a grace period.
 */
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <arch.h>
#include <arch/paging.h>
#include <arch/mm.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <debug.h>
#include <errno.h>
#include <cpu.h>
#include <lib/str.h>
#include <abi/syscall.h>
#include "as_impl.h"

/** Unlinked tables one prune batch carries to its RCU callback. */
#define PT_FREE_BATCH 32

/**
 * Tables a prune unlinked, freed together after one walk-cache
 * invalidation and one grace period (prune_tables()). Holds a reference
 * to its address space until the callback ran (the count pt_pages lives
 * there).
 */
typedef struct {
	rcu_item_t rcu;
	as_t *as;
	size_t n;
	/** A page of each table's coverage (the walk-cache invalidation). */
	uintptr_t va[PT_FREE_BATCH];
	uintptr_t pa[PT_FREE_BATCH];
	uint8_t level[PT_FREE_BATCH];
} pt_free_batch_t;

/** What prune_tables() hands paging_prune()'s callbacks. */
typedef struct {
	as_t *as;
	/** The batch being filled; NULL after an allocation failed. */
	pt_free_batch_t *b;
	/** Tables unlinked while no batch could be allocated (freed at once). */
	size_t sync_n;
	uintptr_t sync_va[PT_FREE_BATCH];
	uintptr_t sync_pa[PT_FREE_BATCH];
	uint8_t sync_level[PT_FREE_BATCH];
} prune_ctx_t;

/** RCU callback: frees a prune batch's tables (no walker can hold them). */
static void pt_free_rcu(rcu_item_t *item)
{
	pt_free_batch_t *b = container_of(item, pt_free_batch_t, rcu);
	as_t *as = b->as;
	size_t freed = 0;
	for (size_t i = 0; i < b->n; i++)
		freed += paging_free_table(b->pa[i], b->level[i]);
	__atomic_fetch_sub(&as->pt_pages, freed, __ATOMIC_RELAXED);
	__atomic_fetch_add(&as_cpu_stats(as)->pt_freed, freed,
	    __ATOMIC_RELAXED);
	free(b);
	/* May be the last reference (the task ended meanwhile). */
	as_release(as);
}

/** Invalidates a full (or the last) batch's walk caches and posts its free. */
static void prune_flush(prune_ctx_t *c)
{
	pt_free_batch_t *b = c->b;
	if (b && b->n) {
		tlb_shootdown_tables(c->as, b->va, b->n);
		as_hold(c->as);
		rcu_call(&b->rcu, pt_free_rcu);
		c->b = NULL;
	}
	if (c->sync_n) {
		/*
		 * No memory for a batch: the same steps, waiting for the grace
		 * period here (thread context, no reader section: area_mtx is
		 * a mutex).
		 */
		tlb_shootdown_tables(c->as, c->sync_va, c->sync_n);
		rcu_synchronize();
		size_t freed = 0;
		for (size_t i = 0; i < c->sync_n; i++)
			freed += paging_free_table(c->sync_pa[i], c->sync_level[i]);
		__atomic_fetch_sub(&c->as->pt_pages, freed, __ATOMIC_RELAXED);
		__atomic_fetch_add(&as_cpu_stats(c->as)->pt_freed, freed,
		    __ATOMIC_RELAXED);
		c->sync_n = 0;
	}
}

/** paging_prune_ops_t.used: whether [va, va + size) meets an area. */
static bool prune_used(void *arg, uintptr_t va, uintptr_t size)
{
	prune_ctx_t *c = arg;
	irq_spinlock_lock(&c->as->area_lock, true);
	bool used = area_overlaps_locked(c->as, va, size, NULL);
	irq_spinlock_unlock(&c->as->area_lock, true);
	return used;
}

/** paging_prune_ops_t.unlinked: queues the table for its free. */
static void prune_unlinked(void *arg, uintptr_t pa, int level, uintptr_t va)
{
	prune_ctx_t *c = arg;
	if (!c->b && !c->sync_n) {
		c->b = malloc(sizeof(pt_free_batch_t));
		if (c->b) {
			c->b->as = c->as;
			c->b->n = 0;
		}
	}
	if (c->b) {
		pt_free_batch_t *b = c->b;
		b->va[b->n] = va;
		b->pa[b->n] = pa;
		b->level[b->n] = (uint8_t) level;
		if (++b->n == PT_FREE_BATCH)
			prune_flush(c);
	} else {
		c->sync_va[c->sync_n] = va;
		c->sync_pa[c->sync_n] = pa;
		c->sync_level[c->sync_n] = (uint8_t) level;
		if (++c->sync_n == PT_FREE_BATCH)
			prune_flush(c);
	}
}

static const paging_prune_ops_t prune_ops = {
	.used = prune_used,
	.unlinked = prune_unlinked,
};

/**
 * Frees the page tables (every level below the root) whose whole coverage
 * meets [@a lo, @a hi) and no area of @a as any more: after a destroy or a
 * shrink removed the areas there and unmapped the range. Each such table is
 * unlinked (its parent entry cleared), the walk caches that may still point
 * to it are invalidated on every CPU, and it is freed after a grace period
 * (a fault's lock-free walk may still be in it; see docs/LOCKING.md,
 * "Freeing page tables", for why no other walker can be). Caller holds
 * area_mtx (no area set change, no other prune or destroy's unmap), has
 * done the range's unmap, and is in thread context, interrupts enabled.
 */
void prune_tables(as_t *as, uintptr_t lo, uintptr_t hi)
{
	prune_ctx_t c = { .as = as };
	paging_prune(as->root_phys, lo, hi, &prune_ops, &c);
	prune_flush(&c);
}
