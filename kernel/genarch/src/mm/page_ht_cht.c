/** @file page_ht_cht.c
 * The page hash table as a concurrent hash table (CONFIG_PAGE_HT_CHT, `make
 * PAGE_HT=cht`, the default). The records are CHT items: lookups run inside an
 * RCU reader section and take no lock; a new mapping goes in with
 * cht_insert_unique, so two CPUs faulting the same page agree on one record;
 * an update exchanges the record's word in place (page_ht_impl.h); a removed
 * record is freed by the table's remove callback after a grace period.
 */
#include <adt/cht.h>

/** The record's link: an item of the CHT. */
typedef cht_link_t pte_link_t;

#include "page_ht_impl.h"

const char *const page_ht_backend = "cht";

static cht_t table;

static size_t op_hash(const cht_link_t *item)
{
	const pte_rec_t *r = (const pte_rec_t *) item;
	return key_hash_of(r->as_id, r->page);
}

static size_t op_key_hash(void *key)
{
	pt_key_t *k = key;
	return key_hash_of(k->as_id, k->page);
}

static bool op_equal(const cht_link_t *a, const cht_link_t *b)
{
	const pte_rec_t *ra = (const pte_rec_t *) a;
	const pte_rec_t *rb = (const pte_rec_t *) b;
	return ra->as_id == rb->as_id && ra->page == rb->page;
}

static bool op_key_equal(void *key, const cht_link_t *item)
{
	pt_key_t *k = key;
	const pte_rec_t *r = (const pte_rec_t *) item;
	return r->as_id == k->as_id && r->page == k->page;
}

/** The remove callback, called by RCU directly (cht_ops_t.rcu_free). */
static void op_rcu_free(rcu_item_t *rcu)
{
	rec_free((pte_rec_t *) cht_link_of_rcu(rcu));
}

static const cht_ops_t ops = {
	.hash = op_hash,
	.key_hash = op_key_hash,
	.equal = op_equal,
	.key_equal = op_key_equal,
	.rcu_free = op_rcu_free,
};

/**
 * Buckets the page hash table never shrinks below (8 KiB of bucket heads).
 * Mapped pages come and go by the thousand (a task's exit, a fault-and-
 * unmap loop: chtbench 22 swings between 0 and 1024 records every few
 * milliseconds); with a floor of 64 every such swing grew and shrank the
 * table, and each resize rewrote the bucket array and the count lines
 * under the faulting CPUs (3-9 of 62-78 transfers per fault at -smp 4,
 * docs/SHARING.md). Below the floor the table only grows.
 */
#define PAGE_HT_MIN_BUCKETS 1024

void page_ht_init(void)
{
	caches_init();
	if (cht_create_named(&table, "page_ht", PAGE_HT_MIN_BUCKETS,
	    PAGE_HT_MIN_BUCKETS, 1, &ops) != CHT_OK)
		panic("page_ht: cannot create the page hash table");
}

int page_mapping_insert(uint64_t as_id, uintptr_t page, const pte_t *pte,
    pte_t *existing)
{
	pte_rec_t *r = rec_alloc(as_id, page, pte);
	if (!r)
		return ENOMEM;
	cht_link_t *dup = NULL;
	rcu_read_lock();
	bool ok = cht_insert_unique_fast(&table, &r->link, &dup, &ops);
	if (!ok && existing)
		*existing = rec_pte((pte_rec_t *) dup);
	rcu_read_unlock();
	if (!ok) {
		slab_free(rec_cache, r);
		return EEXIST;
	}
	STAT_INC(inserts);
	return EOK;
}

int page_mapping_remove(uint64_t as_id, uintptr_t page)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	rcu_read_lock();
	size_t n = cht_remove_key_fast(&table, &key, &ops);
	rcu_read_unlock();
	if (!n)
		return ENOENT;
	STAT_INC(removes);
	return EOK;
}

bool page_mapping_find(uint64_t as_id, uintptr_t page, pte_t *out)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	STAT_INC(lookups);
	rcu_read_lock();
	cht_link_t *l = cht_find_fast(&table, &key, &ops);
	if (l)
		*out = rec_pte((pte_rec_t *) l);
	rcu_read_unlock();
	return l != NULL;
}

size_t page_mapping_count(uint64_t as_id, uintptr_t page)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	size_t n = 0;
	rcu_read_lock();
	for (cht_link_t *l = cht_find_fast(&table, &key, &ops); l;
	    l = cht_find_next(&table, &key, l))
		n++;
	rcu_read_unlock();
	return n;
}

int page_mapping_update(uint64_t as_id, uintptr_t page, const pte_t *pte)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	frame_rcu_t *spare = slab_alloc(frame_rcu_cache, SLAB_ATOMIC);
	if (!spare)
		return ENOMEM;
	rcu_read_lock();
	cht_link_t *l = cht_find_fast(&table, &key, &ops);
	if (l)
		rec_replace((pte_rec_t *) l, pte, spare);
	rcu_read_unlock();
	if (!l) {
		slab_free(frame_rcu_cache, spare);
		return ENOENT;
	}
	return EOK;
}

void page_ht_get_stats(page_ht_stats_t *st)
{
	cht_stats_t cs;
	cht_get_stats(&table, &cs);
	st->backend = page_ht_backend;
	st->entries = cs.items;
	st->buckets = cs.buckets;
	st->grows = cs.grows;
	st->shrinks = cs.shrinks;
	st->resizing = cs.resizing;
	stats_sum(st);
}
