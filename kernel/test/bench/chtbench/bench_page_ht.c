/** @file bench_page_ht.c
 * `chtbench`: ids 21 and 22, the page hash table's lookup path and the page
 * fault path (see chtbench.h).
 */
#include "chtbench_parts.h"

/* ---------------------------------------------------------------------- */
/* Page hash table benchmarks. */

#define PH_PAGES 1024
#define PH_BASE  0x40000000UL
static as_t *ph_as;

void b_ph_lookup(bench_thread_t *t)
{
	uint64_t ops = 0, hits = 0;
	pte_t pte;
	while (!stopped()) {
		uintptr_t page = PH_BASE + (rnd_next(t) % PH_PAGES) * PAGE_SIZE;
		hits += page_mapping_find(ph_as->id, page, &pte);
		ops++;
	}
	if (hits != ops)
		t->errors += ops - hits;
	t->ops = ops;
}

void b_ph_fault(bench_thread_t *t)
{
	/* Each thread faults, then unmaps, its own slice of pages. */
	uint64_t ops = 0;
	size_t slice = PH_PAGES / bench_cfg.cpus;
	uintptr_t base = PH_BASE + t->index * slice * PAGE_SIZE;
	as_enter(ph_as);
	while (!stopped()) {
		size_t faulted = 0;
		for (; faulted < slice && !stopped(); faulted++) {
			/* A real store to user memory: faults the page in. */
			__atomic_store_n((uint64_t *) (base + faulted * PAGE_SIZE),
			    faulted, __ATOMIC_RELAXED);
			ops++;
		}
		/*
		 * Unmap only what this round faulted in: after the stop flag the
		 * tail is short and bounded (it is outside the timed window).
		 */
		(void) as_unmap_range(ph_as, base, faulted, NULL);
	}
	as_leave();
	t->ops = ops;
}

int s_ph(void)
{
	ph_as = as_create();
	if (!ph_as)
		return ENOMEM;
	if (as_area_create(ph_as, PH_BASE, PH_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK)
		return ENOMEM;
	return EOK;
}

int s_ph_lookup(void)
{
	if (s_ph() != EOK)
		return ENOMEM;
	/*
	 * Map every page (a zeroed frame each) so every lookup hits, as a
	 * fault would: as_page_fill() creates the page's table before its
	 * record, which the teardown's unmap relies on (it skips 2 MiB regions
	 * without a table). Records inserted directly were left behind by
	 * as_release(): 1024 page hash entries after every run.
	 */
	static const uint8_t none;
	for (size_t i = 0; i < PH_PAGES; i++) {
		if (as_page_fill(ph_as, PH_BASE + i * PAGE_SIZE, &none, 0, 0) !=
		    EOK)
			return ENOMEM;
	}
	/*
	 * The inserts grow the page hash table (CHT back end) on the work
	 * queue; let that resize finish before the measured lookups. Without
	 * this wait the resize ran inside the window at -smp 4: about 1370
	 * bucket-array lines written by buckets_replace() on one CPU and read by
	 * the others' lookups, 0.05-0.18 transfers per lookup (the page hash
	 * table's sharing that had looked unexplained). Lookups during a resize are
	 * measured by chtbench 18. At most 10 s (then the run goes on).
	 */
	for (unsigned ms = 0; ms < 10000; ms++) {
		page_ht_stats_t st;
		page_ht_get_stats(&st);
		if (!st.resizing)
			break;
		thread_usleep(1000);
	}
	return EOK;
}

void t_ph(void)
{
	if (ph_as) {
		as_release(ph_as);
		ph_as = NULL;
	}
}
