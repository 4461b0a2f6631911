/** @file page_ht_locked.c
 * The page hash table as the previous design (CONFIG_PAGE_HT_LOCKED, `make
 * PAGE_HT=locked`), kept for comparison (chtbench 21, 22): a fixed chained
 * hash table under one global IRQ spinlock; every lookup takes the lock. A
 * removed record leaves its chain under the lock and is freed after a grace
 * period (a CPU may still run on a TLB entry for its frame until the
 * unmapper's shootdown ends).
 */
#include <synch/spinlock.h>
#include <synch/rcu.h>
#include <adt/list.h>

/** The record's link: a chain of the table, and its deferred free. */
typedef struct {
	link_t chain;      /**< in buckets[], under table_lock */
	rcu_item_t rcu;    /**< rcu_call() of its free after a removal */
} pte_link_t;

#include "page_ht_impl.h"

const char *const page_ht_backend = "locked";

/** Buckets of the fixed table (a prime, as the old kernel hash table used). */
#define LOCKED_BUCKETS 1021

/** The table; every field and every chain is protected by table_lock. */
static list_t buckets[LOCKED_BUCKETS];
static size_t entries;
static irq_spinlock_t table_lock = IRQ_SPINLOCK_INITIALIZER("page_ht");

static inline size_t bucket_index(uint64_t as_id, uintptr_t page)
{
	return key_hash_of(as_id, page) % LOCKED_BUCKETS;
}

static pte_rec_t *find_locked(uint64_t as_id, uintptr_t page)
{
	assert(irq_spinlock_locked_by_me(&table_lock));
	list_t *b = &buckets[bucket_index(as_id, page)];
	list_foreach(b, l) {
		pte_rec_t *r = list_get_instance(l, pte_rec_t, link.chain);
		if (r->as_id == as_id && r->page == page)
			return r;
	}
	return NULL;
}

static void rec_rcu_free(rcu_item_t *item)
{
	rec_free(container_of(item, pte_rec_t, link.rcu));
}

void page_ht_init(void)
{
	caches_init();
	for (size_t i = 0; i < LOCKED_BUCKETS; i++)
		list_initialize(&buckets[i]);
}

int page_mapping_insert(uint64_t as_id, uintptr_t page, const pte_t *pte,
    pte_t *existing)
{
	pte_rec_t *r = rec_alloc(as_id, page, pte);
	if (!r)
		return ENOMEM;
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o) {
		if (existing)
			*existing = rec_pte(o);
		irq_spinlock_unlock(&table_lock, true);
		slab_free(rec_cache, r);
		return EEXIST;
	}
	list_append(&r->link.chain, &buckets[bucket_index(as_id, page)]);
	entries++;
	irq_spinlock_unlock(&table_lock, true);
	STAT_INC(inserts);
	return EOK;
}

int page_mapping_remove(uint64_t as_id, uintptr_t page)
{
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o) {
		list_remove(&o->link.chain);
		entries--;
	}
	irq_spinlock_unlock(&table_lock, true);
	if (!o)
		return ENOENT;
	rcu_call(&o->link.rcu, rec_rcu_free);
	STAT_INC(removes);
	return EOK;
}

bool page_mapping_find(uint64_t as_id, uintptr_t page, pte_t *out)
{
	STAT_INC(lookups);
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o)
		*out = rec_pte(o);
	irq_spinlock_unlock(&table_lock, true);
	return o != NULL;
}

size_t page_mapping_count(uint64_t as_id, uintptr_t page)
{
	size_t n = 0;
	irq_spinlock_lock(&table_lock, true);
	list_t *b = &buckets[bucket_index(as_id, page)];
	list_foreach(b, l) {
		pte_rec_t *r = list_get_instance(l, pte_rec_t, link.chain);
		if (r->as_id == as_id && r->page == page)
			n++;
	}
	irq_spinlock_unlock(&table_lock, true);
	return n;
}

int page_mapping_update(uint64_t as_id, uintptr_t page, const pte_t *pte)
{
	frame_rcu_t *spare = slab_alloc(frame_rcu_cache, SLAB_ATOMIC);
	if (!spare)
		return ENOMEM;
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o)
		rec_replace(o, pte, spare);
	irq_spinlock_unlock(&table_lock, true);
	if (!o) {
		slab_free(frame_rcu_cache, spare);
		return ENOENT;
	}
	return EOK;
}

void page_ht_get_stats(page_ht_stats_t *st)
{
	irq_spinlock_lock(&table_lock, true);
	st->entries = entries;
	irq_spinlock_unlock(&table_lock, true);
	st->backend = page_ht_backend;
	st->buckets = LOCKED_BUCKETS;
	st->grows = 0;
	st->shrinks = 0;
	st->resizing = false;
	stats_sum(st);
}
