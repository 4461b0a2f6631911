/** @file resize.c
 * `chtbench`: ids 16-20, the relativistic hash table paper's resize experiment:
 * lookups in the CHT at fixed sizes and while a resizer flips 2^13 <-> 2^14
 * buckets, against a reader-writer-lock table (see chtbench.h).
 */
#include "chtbench_parts.h"

/* ---------------------------------------------------------------------- */
/* The resize experiment: 2^16 items, 2^13 <-> 2^14 buckets. */

#define RS_ITEMS CHTBENCH_RS_ITEMS
#define RS_SMALL_ORDER 13

/** Reader-writer-lock table for the baseline: chains rehashed under the write lock. */
typedef struct {
	list_t *chains;
	size_t order;
} rwtable_t;

static rwtable_t rwt;
static rwspin_t rwt_lock;
uint64_t resizes_done;

static size_t rwt_bucket(uint64_t key, size_t order)
{
	return (size_t) (cht_mix_hash(key) >> (64 - order));
}

static int rwt_alloc(size_t order, list_t **out)
{
	list_t *c = malloc(sizeof(list_t) << order);
	if (!c)
		return ENOMEM;
	for (size_t i = 0; i < ((size_t) 1 << order); i++)
		list_initialize(&c[i]);
	*out = c;
	return EOK;
}

/** Rehashes every item into a table of @a order buckets (write lock held). */
static int rwt_resize(size_t order)
{
	list_t *nc;
	if (rwt_alloc(order, &nc) != EOK)
		return ENOMEM;
	rw_write_lock(&rwt_lock);
	for (size_t i = 0; i < ((size_t) 1 << rwt.order); i++) {
		while (!list_empty(&rwt.chains[i])) {
			link_t *l = list_first(&rwt.chains[i]);
			list_remove(l);
			fitem_t *it = list_get_instance(l, fitem_t, link);
			list_append(l, &nc[rwt_bucket(it->key, order)]);
		}
	}
	list_t *old = rwt.chains;
	rwt.chains = nc;
	rwt.order = order;
	rw_write_unlock(&rwt_lock);
	free(old);
	return EOK;
}

static bool rwt_find(uint64_t key)
{
	bool found = false;
	rw_read_lock(&rwt_lock);
	list_t *c = &rwt.chains[rwt_bucket(key, rwt.order)];
	list_foreach(c, l) {
		if (list_get_instance(l, fitem_t, link)->key == key) {
			found = true;
			break;
		}
	}
	rw_read_unlock(&rwt_lock);
	return found;
}

void resizer_thread(void *arg)
{
	bool cht = (bool) (uintptr_t) arg;
	bool big = false;
	while (!stopped()) {
		big = !big;
		if (cht) {
			/*
			 * 2^16 items: max load 4 grows to 2^14, 32 shrinks to 2^13.
			 * The resize runs here, on the resizer's CPU (off the
			 * readers' when there is a spare one), and is complete
			 * (old array freed, dropped dummies deleted) before the
			 * pause and the next flip, as the rwlock table's rehash.
			 */
			(void) cht_resize(&bench_cht, big ? 4 : 32);
			thread_usleep(1000);
		} else {
			(void) rwt_resize(big ? 14 : 13);
			thread_usleep(1000);
		}
		__atomic_fetch_add(&resizes_done, 1, __ATOMIC_RELAXED);
	}
}


void b_rs_rw(bench_thread_t *t)
{
	uint64_t ops = 0;
	while (!stopped()) {
		if (!rwt_find(rnd_next(t) % RS_ITEMS))
			t->errors++;
		ops++;
	}
	t->ops = ops;
}

static int s_rs_cht_order(size_t order, size_t max_load)
{
	return bench_cht_fill("chtbench-resize", (size_t) 1 << order,
	    1u << RS_SMALL_ORDER, max_load, RS_ITEMS);
}

/* Fixed sizes: a load limit out of reach keeps the table at its size. */
int s_rs_cht13(void)
{
	return s_rs_cht_order(13, 1u << 20);
}

int s_rs_cht14(void)
{
	return s_rs_cht_order(14, 1u << 20);
}

int s_rs_cht_cont(void)
{
	/* Starts at 2^13 with 2^16 items: exactly at the grow limit of load 8. */
	return s_rs_cht_order(13, 8);
}

void t_rs_cht(void)
{
	bench_cht_teardown(0, RS_ITEMS);
}

int s_rs_rw(void)
{
	if (ensure_fitem_cache() != EOK)
		return ENOMEM;
	rwt.order = 13;
	if (rwt_alloc(13, &rwt.chains) != EOK)
		return ENOMEM;
	for (uint64_t k = 0; k < RS_ITEMS; k++) {
		fitem_t *it = fitem_new(k);
		if (!it)
			return ENOMEM;
		list_append(&it->link, &rwt.chains[rwt_bucket(k, 13)]);
	}
	return EOK;
}

void t_rs_rw(void)
{
	if (!rwt.chains)
		return;
	for (size_t i = 0; i < ((size_t) 1 << rwt.order); i++)
		chain_free(&rwt.chains[i]);
	free(rwt.chains);
	rwt.chains = NULL;
}
