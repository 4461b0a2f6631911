/** @file ht.c
 * `chtbench`: ids 10-15, lookups and updates in the previous-generation fixed
 * hash table (one spinlock or one per bucket) and in the CHT with the same keys
 * (see chtbench.h).
 */
#include "chtbench_parts.h"

/* ---------------------------------------------------------------------- */
/* The previous-generation fixed hash table: 127 chained buckets, hashing by
 * modulo a prime, one global spinlock or a spinlock per bucket. */

#define FIXED_BUCKETS 127
#define HT_ITEMS (FIXED_BUCKETS * 4)   /* load factor 4 */

typedef struct {
	list_t chain;
	spinlock_t lock;
} fbucket_t;

static fbucket_t fixed[FIXED_BUCKETS];
static spinlock_t fixed_global = SPINLOCK_INITIALIZER("chtbench.ht");
slab_cache_t *fitem_cache;

static size_t fixed_hash(uint64_t key)
{
	return (size_t) (key % FIXED_BUCKETS);
}

static void fixed_setup(void)
{
	for (size_t i = 0; i < FIXED_BUCKETS; i++) {
		list_initialize(&fixed[i].chain);
		spinlock_initialize(&fixed[i].lock, "chtbench.bkt");
	}
}

/** The lock that guards bucket @a b: its own, or the global one. */
static inline spinlock_t *fixed_lock(fbucket_t *b, bool bucket_locks)
{
	return bucket_locks ? &b->lock : &fixed_global;
}

/** Searches bucket @a b for @a key; the caller holds fixed_lock(b). */
static inline bool fixed_find_locked(fbucket_t *b, uint64_t key)
{
	list_foreach(&b->chain, l) {
		if (list_get_instance(l, fitem_t, link)->key == key)
			return true;
	}
	return false;
}

/** One lookup under the table's lock: the read of benches 10, 11, 13, 14. */
static inline bool fixed_lookup(uint64_t key, bool bucket_locks)
{
	fbucket_t *b = &fixed[fixed_hash(key)];
	spinlock_t *l = fixed_lock(b, bucket_locks);
	spinlock_lock(l);
	bool found = fixed_find_locked(b, key);
	spinlock_unlock(l);
	return found;
}

fitem_t *fitem_new(uint64_t key)
{
	fitem_t *it = slab_alloc(fitem_cache, SLAB_KM_NONE);
	if (it)
		it->key = key;
	return it;
}

static void fixed_insert(fitem_t *it, bool bucket_locks)
{
	fbucket_t *b = &fixed[fixed_hash(it->key)];
	spinlock_t *l = fixed_lock(b, bucket_locks);
	spinlock_lock(l);
	list_append(&it->link, &b->chain);
	spinlock_unlock(l);
}

static fitem_t *fixed_remove(uint64_t key, bool bucket_locks)
{
	fbucket_t *b = &fixed[fixed_hash(key)];
	spinlock_t *l = fixed_lock(b, bucket_locks);
	fitem_t *found = NULL;
	spinlock_lock(l);
	list_foreach(&b->chain, x) {
		fitem_t *it = list_get_instance(x, fitem_t, link);
		if (it->key == key) {
			list_remove(&it->link);
			found = it;
			break;
		}
	}
	spinlock_unlock(l);
	return found;
}

/** Frees every item on chain @a c (no other thread uses it any more). */
void chain_free(list_t *c)
{
	while (!list_empty(c)) {
		link_t *l = list_first(c);
		list_remove(l);
		slab_free(fitem_cache, list_get_instance(l, fitem_t, link));
	}
}

static void fixed_teardown(void)
{
	for (size_t i = 0; i < FIXED_BUCKETS; i++)
		chain_free(&fixed[i].chain);
}

/* The CHT with the same items. */

cht_t bench_cht;
static bool bench_cht_live;

/** The remove callback, called by RCU directly (cht_ops_t.rcu_free). */
static void fi_rcu_free(rcu_item_t *rcu)
{
	rcu_slab_free(fitem_cache, container_of(cht_link_of_rcu(rcu), fitem_t,
	    clink));
}

CHT_DEFINE_U64_KEY(fi, fitem_t, clink, key, cht_u64_identity)

static const cht_ops_t fi_ops = {
	CHT_U64_KEY_OPS(fi),
	.rcu_free = fi_rcu_free,
};

/** Removes every item of bench_cht and destroys it. */
void bench_cht_teardown(uint64_t key_lo, uint64_t key_hi)
{
	if (!bench_cht_live)
		return;
	rcu_read_lock();
	for (uint64_t k = key_lo; k < key_hi; k++)
		(void) cht_remove_key(&bench_cht, &k);
	rcu_read_unlock();
	(void) cht_destroy(&bench_cht);
	bench_cht_live = false;
}

/** Lookup key: half of the lookups miss (keys HT_ITEMS .. 2 * HT_ITEMS - 1). */
static inline uint64_t ht_key(bench_thread_t *t)
{
	return rnd_next(t) % (2 * HT_ITEMS);
}

static void ht_lookup_fixed(bench_thread_t *t, bool bucket_locks)
{
	uint64_t ops = 0, hits = 0;
	while (!stopped()) {
		hits += fixed_lookup(ht_key(t), bucket_locks);
		ops++;
	}
	SINK(hits);
	t->ops = ops;
}

void b_ht_spin(bench_thread_t *t)
{
	ht_lookup_fixed(t, false);
}

void b_ht_bkt(bench_thread_t *t)
{
	ht_lookup_fixed(t, true);
}

void b_ht_cht(bench_thread_t *t)
{
	uint64_t ops = 0, hits = 0;
	while (!stopped()) {
		uint64_t key = ht_key(t);
		rcu_read_lock();
		hits += cht_find_fast(&bench_cht, &key, &fi_ops) != NULL;
		rcu_read_unlock();
		ops++;
	}
	SINK(hits);
	t->ops = ops;
}

/** Update keys of thread i: disjoint ranges above the lookup keys. */
static inline uint64_t upd_key(bench_thread_t *t)
{
	return (uint64_t) 1000000 * (t->index + 1) + rnd_next(t) % 1024;
}

static void ht_upd_fixed(bench_thread_t *t, bool bucket_locks)
{
	uint64_t ops = 0, hits = 0;
	while (!stopped()) {
		if (want_update(t)) {
			uint64_t key = upd_key(t);
			fitem_t *it = fitem_new(key);
			if (it) {
				fixed_insert(it, bucket_locks);
				fitem_t *r = fixed_remove(key, bucket_locks);
				if (r)
					slab_free(fitem_cache, r);
			}
		} else {
			hits += fixed_lookup(ht_key(t), bucket_locks);
		}
		ops++;
	}
	SINK(hits);
	t->ops = ops;
}

void b_htu_spin(bench_thread_t *t)
{
	ht_upd_fixed(t, false);
}

void b_htu_bkt(bench_thread_t *t)
{
	ht_upd_fixed(t, true);
}

void b_htu_cht(bench_thread_t *t)
{
	uint64_t ops = 0, hits = 0;
	while (!stopped()) {
		rcu_read_lock();
		if (want_update(t)) {
			uint64_t key = upd_key(t);
			fitem_t *it = fitem_new(key);
			if (it) {
				cht_insert_fast(&bench_cht, &it->clink, &fi_ops);
				(void) cht_remove_key_fast(&bench_cht, &key, &fi_ops);
			}
		} else {
			uint64_t key = ht_key(t);
			hits += cht_find_fast(&bench_cht, &key, &fi_ops) != NULL;
		}
		rcu_read_unlock();
		ops++;
	}
	SINK(hits);
	t->ops = ops;
}

int ensure_fitem_cache(void)
{
	if (!fitem_cache) {
		fitem_cache = slab_cache_create("chtbench.item", sizeof(fitem_t), 0,
		    NULL, NULL, 0);
		if (!fitem_cache)
			return ENOMEM;
	}
	return EOK;
}

int s_fixed(void)
{
	if (ensure_fitem_cache() != EOK)
		return ENOMEM;
	fixed_setup();
	for (uint64_t k = 0; k < HT_ITEMS; k++) {
		fitem_t *it = fitem_new(k);
		if (!it)
			return ENOMEM;
		fixed_insert(it, false);
	}
	return EOK;
}

/**
 * Creates bench_cht (@a buckets initial and @a min_buckets minimum buckets,
 * grow limit @a max_load items per bucket) and inserts keys 0..items-1.
 */
int bench_cht_fill(const char *name, size_t buckets, size_t min_buckets,
    size_t max_load, uint64_t items)
{
	if (ensure_fitem_cache() != EOK)
		return ENOMEM;
	if (cht_create_named(&bench_cht, name, buckets, min_buckets, max_load,
	    &fi_ops) != CHT_OK)
		return ENOMEM;
	bench_cht_live = true;
	rcu_read_lock();
	for (uint64_t k = 0; k < items; k++) {
		fitem_t *it = fitem_new(k);
		if (!it) {
			rcu_read_unlock();
			return ENOMEM;
		}
		cht_insert(&bench_cht, &it->clink);
	}
	rcu_read_unlock();
	return EOK;
}

int s_cht(void)
{
	/* 128 buckets, a load limit out of reach: the table never resizes. */
	return bench_cht_fill("chtbench", 128, 128, 1u << 20, HT_ITEMS);
}

void t_cht(void)
{
	bench_cht_teardown(0, HT_ITEMS);
}

void t_fixed(void)
{
	fixed_teardown();
}

/**
 * Body of the resize experiments 16-18: lookups of the 2^16 present keys
 * (RS_ITEMS), each must hit. Here rather than in resize.c because the lookup is
 * specialized for fi_ops (cht_find_fast), which only this file can fold.
 */
void b_rs_cht(bench_thread_t *t)
{
	uint64_t ops = 0;
	while (!stopped()) {
		uint64_t key = rnd_next(t) % CHTBENCH_RS_ITEMS;
		rcu_read_lock();
		if (!cht_find_fast(&bench_cht, &key, &fi_ops))
			t->errors++;
		rcu_read_unlock();
		ops++;
	}
	t->ops = ops;
}
