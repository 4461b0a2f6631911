/** @file chtbench.c
 * `chtbench`: the seed's RCU and hash table benchmarks, the relativistic
 * paper's continuous-resize experiment and the page hash table paths, run
 * inside the kernel (see ../shared/design/CHTBENCH.md).
 *
 * One thread per CPU 0..cpus-1 (wired with -w) repeats its operation until the
 * time is up and counts completed operations in a local variable; nothing
 * shared is written for bookkeeping. Threads start together (a start flag) and
 * stop when the controlling thread raises the stop flag after -t seconds.
 */
#include <console/kconsole.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/spinlock.h>
#include <adt/cht.h>
#include <adt/list.h>
#include <mm/as.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <genarch/mm/page_ht.h>
#include <time/delay.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <lib/str.h>
#include <print.h>
#include <errno.h>
#include <cpu.h>

/* ---------------------------------------------------------------------- */
/* Shared state of one run. Written by the controller before the threads start
 * (ordered by thread_start) or with atomics. */

typedef struct {
	unsigned id;
	unsigned cpus;
	unsigned update_pct;
	bool wired;
	unsigned seconds;
} bench_cfg_t;

static bench_cfg_t cfg;
static bool start_flag;
static bool stop_flag;
static atomic_t threads_ready;

typedef struct {
	unsigned index;
	uint64_t ops;
	uint64_t rnd;
	uint64_t errors;
	unsigned cpu_seen;
} bench_thread_t;

static inline uint64_t rnd_next(bench_thread_t *t)
{
	/* xorshift64 (Marsaglia 2003). */
	uint64_t x = t->rnd;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return t->rnd = x;
}

static inline bool stopped(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* The 5-element list of the seed's list benchmarks. */

#define LIST_LEN 5

typedef struct lnode {
	struct lnode *next;
	uint64_t value;
	rcu_item_t rcu;
} lnode_t;

/** The list; readers follow it with rcu_access, updaters hold list_lock. */
static lnode_t *list_head;
static spinlock_t list_lock = SPINLOCK_INITIALIZER("chtbench.list");
static slab_cache_t *lnode_cache;

/**
 * A spinning reader-writer lock (Linux rwlock_t style), the reader-writer
 * baseline of the relativistic paper: bit 31 writer, low bits reader count.
 * Protected by: its atomic word.
 */
typedef struct {
	uint32_t word;
} rwspin_t;

#define RW_WRITER 0x80000000u

static inline void rw_read_lock(rwspin_t *l)
{
	preemption_disable();
	for (;;) {
		uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
		if (!(w & RW_WRITER) && __atomic_compare_exchange_n(&l->word, &w, w + 1,
		    true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		cpu_relax();
	}
}

static inline void rw_read_unlock(rwspin_t *l)
{
	__atomic_fetch_sub(&l->word, 1, __ATOMIC_RELEASE);
	preemption_enable();
}

static inline void rw_write_lock(rwspin_t *l)
{
	preemption_disable();
	for (;;) {
		uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
		if (!(w & RW_WRITER) && __atomic_compare_exchange_n(&l->word, &w,
		    w | RW_WRITER, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		cpu_relax();
	}
	/* Wait for the readers inside to leave; new ones see the writer bit. */
	while (__atomic_load_n(&l->word, __ATOMIC_ACQUIRE) != RW_WRITER)
		cpu_relax();
}

static inline void rw_write_unlock(rwspin_t *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
	preemption_enable();
}

static rwspin_t list_rw;

static int list_setup(void)
{
	if (!lnode_cache) {
		lnode_cache = slab_cache_create("chtbench.lnode", sizeof(lnode_t), 0,
		    NULL, NULL, 0);
		if (!lnode_cache)
			return ENOMEM;
	}
	lnode_t *head = NULL;
	for (int i = LIST_LEN - 1; i >= 0; i--) {
		lnode_t *n = slab_alloc(lnode_cache, SLAB_KM_NONE);
		if (!n)
			return ENOMEM;
		n->value = (uint64_t) i + 1;
		n->next = head;
		head = n;
	}
	list_head = head;
	return EOK;
}

static void list_teardown(void)
{
	lnode_t *n = list_head;
	list_head = NULL;
	while (n) {
		lnode_t *next = n->next;
		slab_free(lnode_cache, n);
		n = next;
	}
}

static inline uint64_t list_walk_plain(void)
{
	uint64_t sum = 0;
	for (lnode_t *n = list_head; n; n = n->next)
		sum += n->value;
	return sum;
}

static inline uint64_t list_walk_rcu(void)
{
	uint64_t sum = 0;
	for (lnode_t *n = rcu_access(list_head); n; n = rcu_access(n->next))
		sum += n->value;
	return sum;
}

static void lnode_free_cb(rcu_item_t *item)
{
	slab_free(lnode_cache, container_of(item, lnode_t, rcu));
}

/** Replaces the element at @a pos by a copy; returns the old one. Locked. */
static lnode_t *list_replace_locked(unsigned pos, lnode_t *fresh, bool rcu)
{
	lnode_t **link = &list_head;
	for (unsigned i = 0; i < pos && (*link)->next; i++)
		link = &(*link)->next;
	lnode_t *old = *link;
	fresh->value = old->value;
	fresh->next = old->next;
	if (rcu)
		rcu_assign(*link, fresh);
	else
		*link = fresh;
	return old;
}

/* ---------------------------------------------------------------------- */
/* The previous-generation fixed hash table: 127 chained buckets, hashing by
 * modulo a prime, one global spinlock or a spinlock per bucket. */

#define FIXED_BUCKETS 127
#define HT_ITEMS (FIXED_BUCKETS * 4)   /* load factor 4 */

typedef struct fitem {
	link_t link;
	uint64_t key;
	cht_link_t clink;   /* for the CHT variants */
} fitem_t;

typedef struct {
	list_t chain;
	spinlock_t lock;
} fbucket_t;

static fbucket_t fixed[FIXED_BUCKETS];
static spinlock_t fixed_global = SPINLOCK_INITIALIZER("chtbench.ht");
static slab_cache_t *fitem_cache;

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
	for (link_t *l = list_first(&b->chain); l; l = list_next(l, &b->chain)) {
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

static fitem_t *fitem_new(uint64_t key)
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
	for (link_t *x = list_first(&b->chain); x; x = list_next(x, &b->chain)) {
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
static void chain_free(list_t *c)
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

static cht_t bench_cht;
static bool bench_cht_live;

static size_t fi_hash(const cht_link_t *l)
{
	return container_of(l, fitem_t, clink)->key;
}

static size_t fi_key_hash(void *key)
{
	return *(uint64_t *) key;
}

static bool fi_equal(const cht_link_t *a, const cht_link_t *b)
{
	return container_of(a, fitem_t, clink)->key ==
	    container_of(b, fitem_t, clink)->key;
}

static bool fi_key_equal(void *key, const cht_link_t *l)
{
	return container_of(l, fitem_t, clink)->key == *(uint64_t *) key;
}

static void fi_remove_cb(cht_link_t *l)
{
	slab_free(fitem_cache, container_of(l, fitem_t, clink));
}

static const cht_ops_t fi_ops = {
	.hash = fi_hash,
	.key_hash = fi_key_hash,
	.equal = fi_equal,
	.key_equal = fi_key_equal,
	.remove_callback = fi_remove_cb,
};

/** Removes every item of bench_cht and destroys it. */
static void bench_cht_teardown(uint64_t key_lo, uint64_t key_hi)
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

/* ---------------------------------------------------------------------- */
/* The resize experiment: 2^16 items, 2^13 <-> 2^14 buckets. */

#define RS_ITEMS (1u << 16)
#define RS_SMALL_ORDER 13

/** Reader-writer-lock table for the baseline: chains rehashed under the write lock. */
typedef struct {
	list_t *chains;
	size_t order;
} rwtable_t;

static rwtable_t rwt;
static rwspin_t rwt_lock;
static uint64_t resizes_done;

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
	for (link_t *l = list_first(c); l; l = list_next(l, c)) {
		if (list_get_instance(l, fitem_t, link)->key == key) {
			found = true;
			break;
		}
	}
	rw_read_unlock(&rwt_lock);
	return found;
}

static void resizer_thread(void *arg)
{
	bool cht = (bool) (uintptr_t) arg;
	bool big = false;
	while (!stopped()) {
		big = !big;
		if (cht) {
			/* 2^16 items: max load 4 grows to 2^14, 32 shrinks to 2^13. */
			cht_set_max_load(&bench_cht, big ? 4 : 32);
			cht_stats_t st;
			size_t want = big ? 1u << 14 : 1u << 13;
			do {
				thread_usleep(1000);
				cht_get_stats(&bench_cht, &st);
			} while (st.buckets != want && !stopped());
		} else {
			(void) rwt_resize(big ? 14 : 13);
			thread_usleep(1000);
		}
		__atomic_fetch_add(&resizes_done, 1, __ATOMIC_RELAXED);
	}
}

/* ---------------------------------------------------------------------- */
/* Page hash table benchmarks. */

#define PH_PAGES 1024
#define PH_BASE  0x40000000UL
static as_t *ph_as;

/* ---------------------------------------------------------------------- */
/* The benchmark table. */

typedef int (*bench_setup_t)(void);
typedef void (*bench_body_t)(bench_thread_t *t);
typedef void (*bench_teardown_t)(void);

typedef struct {
	unsigned id;
	const char *name;
	const char *desc;
	bench_setup_t setup;
	bench_body_t body;
	bench_teardown_t teardown;
	/** The resize experiment runs an extra resizer thread. */
	int resizer;   /* 0 none, 1 cht, 2 rwlock table */
	/** Only meaningful with cpus == 1 (the seed's "ideal" update run). */
	bool single_cpu;
} bench_t;

/* Bodies */

static void b_rcu_empty(bench_thread_t *t)
{
	uint64_t ops = 0;
	while (!stopped()) {
		for (int i = 0; i < 64; i++) {
			rcu_read_lock();
			rcu_read_unlock();
		}
		ops += 64;
	}
	t->ops = ops;
}

/** Results of the traversals go here so that they are not optimized away. */
static uint64_t sink;
#define SINK(v) __atomic_store_n(&sink, (v), __ATOMIC_RELAXED)

static void b_list_ideal(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		s += list_walk_plain();
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

static void b_list_rcu(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		rcu_read_lock();
		s += list_walk_rcu();
		rcu_read_unlock();
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

static void b_list_spin(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		spinlock_lock(&list_lock);
		s += list_walk_plain();
		spinlock_unlock(&list_lock);
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

static void b_list_rw(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		rw_read_lock(&list_rw);
		s += list_walk_plain();
		rw_read_unlock(&list_rw);
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

static inline bool want_update(bench_thread_t *t)
{
	return cfg.update_pct && rnd_next(t) % 100 < cfg.update_pct;
}

/**
 * The update mix without RCU: walk, or replace an element and free the old one
 * at once. @a locked: walks and replacements under list_lock (bench 8);
 * otherwise no synchronization at all (bench 6, the seed's single-CPU "ideal").
 */
static inline void list_upd_plain(bench_thread_t *t, bool locked)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		if (want_update(t)) {
			/* Allocation and free stay outside the lock, as with RCU. */
			lnode_t *fresh = slab_alloc(lnode_cache, SLAB_KM_NONE);
			if (fresh) {
				if (locked)
					spinlock_lock(&list_lock);
				lnode_t *old = list_replace_locked(rnd_next(t) % LIST_LEN,
				    fresh, false);
				if (locked)
					spinlock_unlock(&list_lock);
				slab_free(lnode_cache, old);
			}
		} else {
			if (locked)
				spinlock_lock(&list_lock);
			s += list_walk_plain();
			if (locked)
				spinlock_unlock(&list_lock);
		}
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

static void b_list_upd_ideal(bench_thread_t *t)
{
	list_upd_plain(t, false);
}

static void b_list_upd_rcu(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		if (want_update(t)) {
			lnode_t *fresh = slab_alloc(lnode_cache, SLAB_KM_NONE);
			if (fresh) {
				spinlock_lock(&list_lock);
				lnode_t *old = list_replace_locked(rnd_next(t) % LIST_LEN,
				    fresh, true);
				spinlock_unlock(&list_lock);
				rcu_call(&old->rcu, lnode_free_cb);
			}
		} else {
			rcu_read_lock();
			s += list_walk_rcu();
			rcu_read_unlock();
		}
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

static void b_list_upd_spin(bench_thread_t *t)
{
	list_upd_plain(t, true);
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

static void b_ht_spin(bench_thread_t *t)
{
	ht_lookup_fixed(t, false);
}

static void b_ht_bkt(bench_thread_t *t)
{
	ht_lookup_fixed(t, true);
}

static void b_ht_cht(bench_thread_t *t)
{
	uint64_t ops = 0, hits = 0;
	while (!stopped()) {
		uint64_t key = ht_key(t);
		rcu_read_lock();
		hits += cht_find(&bench_cht, &key) != NULL;
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

static void b_htu_spin(bench_thread_t *t)
{
	ht_upd_fixed(t, false);
}

static void b_htu_bkt(bench_thread_t *t)
{
	ht_upd_fixed(t, true);
}

static void b_htu_cht(bench_thread_t *t)
{
	uint64_t ops = 0, hits = 0;
	while (!stopped()) {
		rcu_read_lock();
		if (want_update(t)) {
			uint64_t key = upd_key(t);
			fitem_t *it = fitem_new(key);
			if (it) {
				cht_insert(&bench_cht, &it->clink);
				(void) cht_remove_key(&bench_cht, &key);
			}
		} else {
			uint64_t key = ht_key(t);
			hits += cht_find(&bench_cht, &key) != NULL;
		}
		rcu_read_unlock();
		ops++;
	}
	SINK(hits);
	t->ops = ops;
}

static void b_rs_cht(bench_thread_t *t)
{
	uint64_t ops = 0;
	while (!stopped()) {
		uint64_t key = rnd_next(t) % RS_ITEMS;
		rcu_read_lock();
		if (!cht_find(&bench_cht, &key))
			t->errors++;
		rcu_read_unlock();
		ops++;
	}
	t->ops = ops;
}

static void b_rs_rw(bench_thread_t *t)
{
	uint64_t ops = 0;
	while (!stopped()) {
		if (!rwt_find(rnd_next(t) % RS_ITEMS))
			t->errors++;
		ops++;
	}
	t->ops = ops;
}

static void b_ph_lookup(bench_thread_t *t)
{
	uint64_t ops = 0, hits = 0;
	pte_t pte;
	while (!stopped()) {
		uintptr_t page = PH_BASE + (rnd_next(t) % PH_PAGES) * PAGE_SIZE;
		hits += page_mapping_find(ph_as, page, &pte);
		ops++;
	}
	if (hits != ops)
		t->errors += ops - hits;
	t->ops = ops;
}

static void b_ph_fault(bench_thread_t *t)
{
	/* Each thread faults, then unmaps, its own slice of pages. */
	uint64_t ops = 0;
	size_t slice = PH_PAGES / cfg.cpus;
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

/* Setups and teardowns */

static int s_list(void)
{
	return list_setup();
}

static int ensure_fitem_cache(void)
{
	if (!fitem_cache) {
		fitem_cache = slab_cache_create("chtbench.item", sizeof(fitem_t), 0,
		    NULL, NULL, 0);
		if (!fitem_cache)
			return ENOMEM;
	}
	return EOK;
}

static int s_fixed(void)
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
static int bench_cht_fill(const char *name, size_t buckets, size_t min_buckets,
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

static int s_cht(void)
{
	/* 128 buckets, a load limit out of reach: the table never resizes. */
	return bench_cht_fill("chtbench", 128, 128, 1u << 20, HT_ITEMS);
}

static void t_cht(void)
{
	bench_cht_teardown(0, HT_ITEMS);
}

static int s_rs_cht_order(size_t order, size_t max_load)
{
	return bench_cht_fill("chtbench-resize", (size_t) 1 << order,
	    1u << RS_SMALL_ORDER, max_load, RS_ITEMS);
}

/* Fixed sizes: a load limit out of reach keeps the table at its size. */
static int s_rs_cht13(void)
{
	return s_rs_cht_order(13, 1u << 20);
}

static int s_rs_cht14(void)
{
	return s_rs_cht_order(14, 1u << 20);
}

static int s_rs_cht_cont(void)
{
	/* Starts at 2^13 with 2^16 items: exactly at the grow limit of load 8. */
	return s_rs_cht_order(13, 8);
}

static void t_rs_cht(void)
{
	bench_cht_teardown(0, RS_ITEMS);
}

static int s_rs_rw(void)
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

static void t_rs_rw(void)
{
	if (!rwt.chains)
		return;
	for (size_t i = 0; i < ((size_t) 1 << rwt.order); i++)
		chain_free(&rwt.chains[i]);
	free(rwt.chains);
	rwt.chains = NULL;
}

static int s_ph(void)
{
	ph_as = as_create();
	if (!ph_as)
		return ENOMEM;
	if (as_area_create(ph_as, PH_BASE, PH_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK)
		return ENOMEM;
	return EOK;
}

static int s_ph_lookup(void)
{
	if (s_ph() != EOK)
		return ENOMEM;
	/* Map every page (a frame each) so every lookup hits. */
	for (size_t i = 0; i < PH_PAGES; i++) {
		uintptr_t frame = frame_alloc(1, FRAME_ZERO);
		if (!frame)
			return ENOMEM;
		pte_t pte = { .frame = frame, .flags = PTE_REC_PRESENT |
		    PTE_REC_USER | PTE_REC_WRITABLE | PTE_REC_FREE_FRAME };
		if (page_mapping_insert(ph_as, PH_BASE + i * PAGE_SIZE, &pte, NULL)
		    != EOK) {
			frame_free(frame, 1);
			return ENOMEM;
		}
	}
	return EOK;
}

static void t_ph(void)
{
	if (ph_as) {
		as_release(ph_as);
		ph_as = NULL;
	}
}

static void t_list(void)
{
	list_teardown();
}

static void t_fixed(void)
{
	fixed_teardown();
}

static const bench_t benches[] = {
	{ 1, "rcu-empty", "empty RCU reader sections (read-side overhead alone)",
	    NULL, b_rcu_empty, NULL, 0, false },
	{ 2, "list-read/ideal", "traversals of a 5-element immutable list, no "
	    "synchronization", s_list, b_list_ideal, t_list, 0, false },
	{ 3, "list-read/rcu", "the same traversals in an RCU reader section", s_list,
	    b_list_rcu, t_list, 0, false },
	{ 4, "list-read/spinlock", "the same under a preemption-disabling spinlock",
	    s_list, b_list_spin, t_list, 0, false },
	{ 5, "list-read/rwlock", "the same under a spinning reader-writer lock "
	    "(read side)", s_list, b_list_rw, t_list, 0, false },
	{ 6, "list-upd/ideal", "walk or replace (update %) an element, one CPU, no "
	    "synchronization", s_list, b_list_upd_ideal, t_list, 0, true },
	{ 7, "list-upd/rcu", "walk (RCU reader) or replace an element (spinlock, "
	    "old one freed by rcu_call)", s_list, b_list_upd_rcu, t_list, 0, false },
	{ 8, "list-upd/spinlock", "the same mix, everything under one spinlock",
	    s_list, b_list_upd_spin, t_list, 0, false },
	{ 10, "ht-lookup/spinlock", "lookups in a fixed 127-bucket chained table "
	    "under one spinlock (load 4, half miss)", s_fixed, b_ht_spin, t_fixed, 0,
	    false },
	{ 11, "ht-lookup/bktlock", "the same table with a spinlock per bucket",
	    s_fixed, b_ht_bkt, t_fixed, 0, false },
	{ 12, "ht-lookup/cht", "the CHT with 128 buckets, resizing out of reach, "
	    "same keys", s_cht, b_ht_cht, t_cht, 0, false },
	{ 13, "ht-upd/spinlock", "lookups mixed with (update %) insert/remove pairs, "
	    "global spinlock", s_fixed, b_htu_spin, t_fixed, 0, false },
	{ 14, "ht-upd/bktlock", "the same, per-bucket locks", s_fixed, b_htu_bkt,
	    t_fixed, 0, false },
	{ 15, "ht-upd/cht", "the same on the CHT", s_cht, b_htu_cht, t_cht, 0,
	    false },
	{ 16, "resize/cht-fixed-8k", "CHT lookups, 2^16 items, fixed 2^13 buckets "
	    "(every lookup must hit)", s_rs_cht13, b_rs_cht, t_rs_cht, 0, false },
	{ 17, "resize/cht-fixed-16k", "the same with fixed 2^14 buckets", s_rs_cht14,
	    b_rs_cht, t_rs_cht, 0, false },
	{ 18, "resize/cht-continuous", "the same while a resizer flips 2^13 <-> 2^14 "
	    "buckets", s_rs_cht_cont, b_rs_cht, t_rs_cht, 1, false },
	{ 19, "resize/rwlock-fixed-8k", "a reader-writer-lock chained table, 2^16 "
	    "items, fixed 2^13 buckets", s_rs_rw, b_rs_rw, t_rs_rw, 0, false },
	{ 20, "resize/rwlock-continuous", "the same while a resizer rehashes 2^13 <-> "
	    "2^14 under the write lock", s_rs_rw, b_rs_rw, t_rs_rw, 2, false },
	{ 21, "pageht-lookup", "page_mapping_find on 1024 mapped pages of one address "
	    "space (page hash table back end as built)", s_ph_lookup, b_ph_lookup,
	    t_ph, 0, false },
	{ 22, "pageht-fault", "page faults: touch 1024 pages (each thread its slice), "
	    "unmap, repeat; ops = faults", s_ph, b_ph_fault, t_ph, 0, false },
};

static const bench_t *bench_find(unsigned id)
{
	for (size_t i = 0; i < ARRAY_SIZE(benches); i++) {
		if (benches[i].id == id)
			return &benches[i];
	}
	return NULL;
}

static void bench_list(void)
{
	printf("chtbench <bench-id> <cpus> <update-percent> [-w] [-t SECONDS]\n");
	printf("  id  name                      measures\n");
	for (size_t i = 0; i < ARRAY_SIZE(benches); i++)
		printf("  %2u  %-24s  %s\n", benches[i].id, benches[i].name,
		    benches[i].desc);
}

static bench_thread_t bt[CONFIG_MAX_CPUS];

static void bench_thread(void *arg)
{
	bench_thread_t *t = arg;
	const bench_t *b = bench_find(cfg.id);
	atomic_inc(&threads_ready);
	while (!__atomic_load_n(&start_flag, __ATOMIC_ACQUIRE))
		cpu_relax();
	t->cpu_seen = CPU->id;
	b->body(t);
}

static void usage(const char *msg)
{
	if (msg)
		printf("chtbench: %s\n", msg);
	printf("Usage: chtbench <bench-id> <cpus> <update-percent> [-w] [-t SECONDS]"
	    "\n  'chtbench 0 0 0' or 'chtbench' lists the benchmarks.\n");
}

static cmd_arg_t chtbench_args[] = {
	{ .type = ARG_TYPE_INT, .name = "bench-id", .optional = true },
	{ .type = ARG_TYPE_INT, .name = "cpus", .optional = true },
	{ .type = ARG_TYPE_INT, .name = "update-percent", .optional = true },
};

static cmd_info_t chtbench_cmd;

static int cmd_chtbench(cmd_arg_t *argv, size_t argc)
{
	if (!argv[0].present || (argv[0].intval == 0 &&
	    (!argv[1].present || argv[1].intval == 0))) {
		bench_list();
		return 0;
	}
	if (!argv[1].present || !argv[2].present) {
		usage("missing arguments");
		return 0;
	}
	int64_t id = argv[0].intval, ncpus = argv[1].intval, pct = argv[2].intval;
	bench_cfg_t c = { .seconds = 10 };
	for (size_t i = 0; i < chtbench_cmd.extra_count; i++) {
		const char *w = chtbench_cmd.extra[i];
		if (strcmp(w, "-w") == 0) {
			c.wired = true;
		} else if (strcmp(w, "-t") == 0) {
			uint64_t s;
			if (i + 1 >= chtbench_cmd.extra_count ||
			    str_to_uint64(chtbench_cmd.extra[++i], &s) != EOK || s == 0 ||
			    s > 3600) {
				usage("-t takes 1 to 3600 seconds");
				return 0;
			}
			c.seconds = (unsigned) s;
		} else {
			usage("unknown option");
			return 0;
		}
	}
	const bench_t *b = id > 0 && id < 1000 ? bench_find((unsigned) id) : NULL;
	size_t online = atomic_get(&cpu_active_count);
	if (!b) {
		usage("unknown benchmark id");
		return 0;
	}
	if (ncpus < 1 || (size_t) ncpus > online || ncpus > CONFIG_MAX_CPUS) {
		usage("cpus must be between 1 and the number of online CPUs");
		return 0;
	}
	if (pct < 0 || pct > 100) {
		usage("update-percent must be between 0 and 100");
		return 0;
	}
	for (int64_t i = 0; i < ncpus; i++) {
		if (!cpu_is_online((unsigned) i)) {
			usage("CPUs 0..cpus-1 must be online");
			return 0;
		}
	}
	/*
	 * A single-CPU baseline's updates replace and free list elements with
	 * no synchronization at all: on two CPUs a walker reads a freed element
	 * (a general protection fault on the slab poison). Read-only runs are
	 * safe on any number of CPUs.
	 */
	if (b->single_cpu && ncpus != 1 && pct > 0) {
		usage("this benchmark has no synchronization: with updates it runs "
		    "on one CPU only (cpus=1)");
		return 0;
	}
	c.id = (unsigned) id;
	c.cpus = (unsigned) ncpus;
	c.update_pct = (unsigned) pct;
	cfg = c;

#ifdef CONFIG_DEBUG
	printf("chtbench: note: this is a debug build (asserts on, -O1); benchmarks "
	    "are meant for a release build (make DEBUG=0)\n");
#endif
	if (b->single_cpu && ncpus != 1)
		printf("chtbench: note: %s is the seed's single-CPU baseline; run it "
		    "with cpus=1\n", b->name);
	if (id >= 10 && id <= 15)
		printf("chtbench: note: as in the seed, the fixed tables divide keys by "
		    "the prime 127 and the keys give exactly 4 items per bucket (in "
		    "their favour); the CHT mixes hashes (buckets hold 0..9 items) and "
		    "still counts items and checks for a resize on updates\n");

	if (b->setup && b->setup() != EOK) {
		printf("chtbench: out of memory while setting up %s\n", b->name);
		if (b->teardown)
			b->teardown();
		return 0;
	}

	__atomic_store_n(&start_flag, false, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_flag, false, __ATOMIC_RELAXED);
	atomic_set(&threads_ready, 0);
	__atomic_store_n(&resizes_done, 0, __ATOMIC_RELAXED);
	thread_t *th[CONFIG_MAX_CPUS];
	unsigned created = 0;
	for (unsigned i = 0; i < c.cpus; i++) {
		bt[i] = (bench_thread_t) { .index = i,
		    .rnd = 0x9e3779b97f4a7c15ULL * (i + 1) + uptime_us() };
		th[i] = thread_create(bench_thread, &bt[i], "chtbench",
		    THREAD_FLAG_NONE);
		if (!th[i])
			break;
		if (c.wired)
			thread_wire(th[i], &cpus[i]);
		thread_start(th[i]);
		created++;
	}
	thread_t *resizer = NULL;
	if (created == c.cpus && b->resizer) {
		/*
		 * Keep the resizer off the reader CPUs when there is a spare CPU
		 * (as in the paper, readers and the resizer do not share a CPU);
		 * with every CPU reading it floats and steals reader time, which
		 * the result then includes.
		 */
		resizer = thread_create(resizer_thread,
		    (void *) (uintptr_t) (b->resizer == 1), "chtbench-resizer",
		    THREAD_FLAG_NONE);
		if (resizer) {
			if (c.cpus < CONFIG_MAX_CPUS && cpu_is_online(c.cpus)) {
				thread_wire(resizer, &cpus[c.cpus]);
				printf("resizer wired to cpu %u\n", c.cpus);
			} else {
				printf("resizer shares the reader CPUs\n");
			}
			thread_start(resizer);
		}
	}
	while (atomic_get(&threads_ready) < created)
		thread_usleep(1000);

	bool ok = created == c.cpus && (!b->resizer || resizer);
	uint64_t t0 = uptime_us();
	__atomic_store_n(&start_flag, true, __ATOMIC_RELEASE);
	thread_sleep(ok ? c.seconds : 0);
	__atomic_store_n(&stop_flag, true, __ATOMIC_RELEASE);
	uint64_t t1 = uptime_us();
	for (unsigned i = 0; i < created; i++)
		thread_join(th[i]);
	if (resizer)
		thread_join(resizer);

	uint64_t total = 0, errors = 0;
	for (unsigned i = 0; i < created; i++) {
		printf("thread %u (cpu %u): ops=%lu\n", i, bt[i].cpu_seen, bt[i].ops);
		total += bt[i].ops;
		errors += bt[i].errors;
	}
	if (b->resizer)
		printf("resizes=%lu\n", __atomic_load_n(&resizes_done, __ATOMIC_RELAXED));
	if (errors)
		printf("chtbench: %lu lookups missed an item that was present\n", errors);
	if (b->teardown)
		b->teardown();
	rcu_barrier();

	if (!ok) {
		printf("chtbench: could not create the benchmark threads\n");
		return 0;
	}
	uint64_t us = t1 - t0;
	uint64_t rate = us ? total * 1000000 / us : 0;
	printf("result: bench=%u name=%s rcu=%s cpus=%u update=%u seconds=%u ops=%lu "
	    "ops_per_s=%lu%s%s\n", c.id, b->name, rcu_flavour_name, c.cpus,
	    c.update_pct, c.seconds, total, rate,
	    id >= 21 ? " pageht=" : "", id >= 21 ? page_ht_backend : "");
	return 0;
}

static cmd_info_t chtbench_cmd = {
	.name = "chtbench",
	.description = "Benchmarks: chtbench <id> <cpus> <update%> [-w] [-t s]; "
	    "'chtbench 0 0 0' lists them",
	.func = cmd_chtbench,
	.argv = chtbench_args,
	.argc = 3,
	.extra_max = 3,
};

/** Registers `chtbench`. Boot. */
void chtbench_init(void);
void chtbench_init(void)
{
	(void) cmd_register(&chtbench_cmd);
}
