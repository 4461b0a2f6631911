/** @file impl_cht.c
 * libcht (this project): the kernel's CHT over its own userspace RCU.
 * Raw kernel API inside cht_rcu_read_lock()/unlock(), as a performance-minded
 * user writes it; nodes are malloc'ed, freed by the remove callback after a
 * grace period (reclaimer thread).
 */
#include "bench.h"
#include <cht.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	cht_link_t link;
	uint64_t key;
	uint64_t value;
} cnode_t;

typedef struct {
	cht_t h;
} ctable_t;

/* 64: the items come from bench_line_alloc() (the `-a64` tables). */
static size_t c_align;
/* Buckets per key of a presized table (1; 2 and 4 for `-l2-a64`, `-l4-a64`). */
static size_t c_spread = 1;
/* The grow limit of an auto-resized table, num / den items per bucket (0:
 * the library's default). */
static size_t c_load_num, c_load_den;

static void c_free(cht_link_t *l)
{
	if (c_align)
		bench_line_free(cht_item_of(l, cnode_t, link));
	else
		free(cht_item_of(l, cnode_t, link));
}

CHT_DEFINE_U64_KEY(c, cnode_t, link, key, cht_u64_identity)

static const cht_ops_t c_ops = {
	CHT_U64_KEY_OPS(c), .remove_callback = c_free,
};

static void *c_create_common(size_t init, size_t min, size_t max_load)
{
	ctable_t *t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	int rc = c_load_num ? cht_create_load(&t->h, NULL, init, min, c_load_num,
	    c_load_den, &c_ops) : cht_create(&t->h, init, min, max_load, &c_ops);
	if (rc != CHT_OK)
		abort();
	return t;
}

static void *c_create(size_t expect, size_t initial)
{
	(void) expect;
	return c_create_common(initial ? initial : 1, 1, 0);
}

/* Presized: load <= 1 like the other chained tables; growth out of reach. */
static void *c_create_presized(size_t expect, size_t initial)
{
	(void) initial;
	size_t b = bench_pow2(expect * c_spread);
	return c_create_common(b, b, (size_t) 1 << 20);
}

static int c_lookup(void *t, uint64_t key, uint64_t *val)
{
	cht_rcu_read_lock();
	cht_link_t *l = cht_find_fast(&((ctable_t *) t)->h, &key, &c_ops);
	if (l)
		*val = __atomic_load_n(&cht_item_of(l, cnode_t, link)->value,
		    __ATOMIC_RELAXED);
	cht_rcu_read_unlock();
	return l != NULL;
}

/*
 * The nodes: malloc() (what most users write), or 64-byte aligned
 * (`-a64`, the layout uspace/lib/cht/README.md documents: the 56-byte node is
 * one cache line; from malloc its 64-byte chunk starts 16 bytes into a line
 * and the value lies in the next one, a second miss for a hit that reads it:
 * bench_us misses).
 */
static cnode_t *c_alloc(size_t align)
{
	_Static_assert(sizeof(cnode_t) <= CHT_ITEM_ALIGN, "a node is one line");
	if (align)
		return bench_line_alloc();
	return malloc(sizeof(cnode_t));
}

static int c_insert(void *t, uint64_t key, uint64_t val)
{
	cnode_t *n = c_alloc(c_align);
	n->key = key;
	n->value = val;
	cht_rcu_read_lock();
	bool ok = cht_insert_unique(&((ctable_t *) t)->h, &n->link, NULL);
	cht_rcu_read_unlock();
	if (!ok)
		c_free(&n->link);  /* never published */
	return ok;
}

static int c_remove(void *t, uint64_t key)
{
	cht_rcu_read_lock();
	size_t n = cht_remove_key(&((ctable_t *) t)->h, &key);
	cht_rcu_read_unlock();
	return n != 0;
}

static int c_update(void *t, uint64_t key, uint64_t val)
{
	cht_rcu_read_lock();
	cht_link_t *l = cht_find_fast(&((ctable_t *) t)->h, &key, &c_ops);
	if (l)
		__atomic_store_n(&cht_item_of(l, cnode_t, link)->value, val,
		    __ATOMIC_RELAXED);
	cht_rcu_read_unlock();
	return l != NULL;
}

static long c_buckets(void *t)
{
	cht_stats_t st;
	cht_rcu_read_lock();
	cht_get_stats(&((ctable_t *) t)->h, &st);
	cht_rcu_read_unlock();
	return (long) st.buckets;
}

/* The library's grow point (cht_grow_point(): its load limit times its
 * buckets now). */
static long c_grow_at(void *t)
{
	return (long) cht_grow_point(&((ctable_t *) t)->h,
	    (size_t) c_buckets(t));
}

static void c_settle(void *t)
{
	cht_t *h = &((ctable_t *) t)->h;
	while (__atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0)
		bench_sleep_us(100);
	cht_rcu_barrier();
}

/*
 * Resize experiment: cht_set_max_load_frac() moves the load limit and requests
 * a resize on the table's worker thread; the adapter waits until the worker
 * got there. The table grows above L items per bucket and shrinks below L / 4,
 * so for n items, to grow to b buckets (from b / 2) any L in [n / b, 2n / b)
 * does (n > L b / 2, n <= L b): 1.5 n / b; to shrink to b (from 2b) any L in
 * (2n / b, 8n / b] (n < L 2b / 4, and no further): 3n / b. For 2^16 keys and
 * 2^13 <-> 2^14 buckets: 6 and 24; for 1e8 keys and 2^27 <-> 2^26 (bench-big
 * at scale): 1.12 and 4.47.
 */
static int c_resize(void *tp, size_t buckets)
{
	ctable_t *t = tp;
	long cur = c_buckets(t);
	if ((size_t) cur == buckets)
		return 0;
	size_t n = cht_count(&t->h);
	if ((size_t) cur < buckets)
		cht_set_max_load_frac(&t->h, 3 * n, 2 * buckets);
	else
		cht_set_max_load_frac(&t->h, 3 * n, buckets);
	/* A resize of 1e8 items takes seconds: give up only after 10 min. */
	for (long waited = 0; (size_t) c_buckets(t) != buckets ||
	    __atomic_load_n(&t->h.resize_reqs, __ATOMIC_ACQUIRE) != 0;
	    waited += 20) {
		if (waited > 600000000) {
			fprintf(stderr, "cht: resize to %zu did not happen\n", buckets);
			abort();
		}
		bench_sleep_us(20);
	}
	return 0;
}

static void c_destroy(void *tp)
{
	ctable_t *t = tp;
	c_settle(t);
	if (cht_destroy(&t->h) != CHT_OK)
		abort();
	free(t);
}

static void c_thread_init(void)
{
	cht_rcu_register_thread();
}

static void c_thread_fini(void)
{
	cht_rcu_unregister_thread();
}

#define CHT_IMPL(var, nm, create_fn, pre) \
	const bench_impl_t var = { \
		.name = nm, .library = "libcht", .layout = "node", \
		.presized = pre, .create = create_fn, .destroy = c_destroy, \
		.thread_init = c_thread_init, .thread_fini = c_thread_fini, \
		.lookup = c_lookup, .insert = c_insert, .remove = c_remove, \
		.update = c_update, .buckets = c_buckets, .resize = c_resize, \
		.grow_at = c_grow_at, \
		.settle = c_settle, .est_bytes_per_key = 100, \
	}

#ifdef CHT_BENCH_WALK
/* impl_chtwalk.c: this adapter compiled with the lookup of the kernel. */
CHT_IMPL(impl_cht_walk_presized, "cht-walk-presized", c_create_presized,
    true);
BENCH_REGISTER(impl_cht_walk_presized);
#else
CHT_IMPL(impl_cht, "cht", c_create, false);
CHT_IMPL(impl_cht_presized, "cht-presized", c_create_presized, true);

static void *c_create_presized_a64(size_t expect, size_t initial)
{
	c_align = 64;
	return c_create_presized(expect, initial);
}

CHT_IMPL(impl_cht_presized_a64, "cht-presized-a64", c_create_presized_a64,
    true);

/* The documented layout at 2 and 4 buckets per key (load 1/2 and 1/4). */
static void *c_create_presized_a64_l2(size_t expect, size_t initial)
{
	c_spread = 2;
	return c_create_presized_a64(expect, initial);
}

static void *c_create_presized_a64_l4(size_t expect, size_t initial)
{
	c_spread = 4;
	return c_create_presized_a64(expect, initial);
}

CHT_IMPL(impl_cht_presized_a64_l2, "cht-presized-l2-a64",
    c_create_presized_a64_l2, true);
BENCH_REGISTER(impl_cht_presized_a64_l2);
CHT_IMPL(impl_cht_presized_a64_l4, "cht-presized-l4-a64",
    c_create_presized_a64_l4, true);
BENCH_REGISTER(impl_cht_presized_a64_l4);

/* Auto-resized, the documented layout: the default grow limit, and 1/2. */
static void *c_create_a64(size_t expect, size_t initial)
{
	c_align = 64;
	return c_create(expect, initial);
}

static void *c_create_a64_half(size_t expect, size_t initial)
{
	c_load_num = 1;
	c_load_den = 2;
	return c_create_a64(expect, initial);
}

CHT_IMPL(impl_cht_a64, "cht-a64", c_create_a64, false);
BENCH_REGISTER(impl_cht_a64);
CHT_IMPL(impl_cht_a64_half, "cht-half-a64", c_create_a64_half, false);
BENCH_REGISTER(impl_cht_a64_half);
#endif
