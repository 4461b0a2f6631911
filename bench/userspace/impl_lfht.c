/** @file impl_lfht.c
 * liburcu's cds_lfht (Debian liburcu-dev 0.13.2), _LGPL_SOURCE (inlined
 * read-side), in the memb flavour (compiled with -DLFHT_MEMB) or the qsbr
 * flavour (-DLFHT_QSBR). Auto-resized: CDS_LFHT_AUTO_RESIZE |
 * CDS_LFHT_ACCOUNTING from 1 bucket; presized: 2^k >= keys buckets, no flags.
 * Removed nodes are freed with call_rcu (the flavour's call_rcu thread).
 *
 * QSBR: the read-side lock/unlock are empty; the harness calls
 * urcu_qsbr_quiescent_state() every 64 operations (bench_impl.quiescent), and
 * threads go offline before anything that waits (destroy, joins).
 */
#define _LGPL_SOURCE
#include "bench.h"
#include <stdlib.h>

#if defined(LFHT_QSBR)
#include <urcu/urcu-qsbr.h>
#define FL(x) urcu_qsbr_##x
#define FLNAME "qsbr"
#define IMPL_AUTO impl_lfht_qsbr
#define IMPL_PRE impl_lfht_qsbr_presized
#elif defined(LFHT_MEMB)
#include <urcu/urcu-memb.h>
#define FL(x) urcu_memb_##x
#define FLNAME "memb"
#define IMPL_AUTO impl_lfht_memb
#define IMPL_PRE impl_lfht_memb_presized
#else
#error "define LFHT_MEMB or LFHT_QSBR"
#endif
#include <urcu/rculfhash.h>

typedef struct {
	struct cds_lfht_node node;
	uint64_t key;
	uint64_t value;
	struct rcu_head rcu;
} lnode_t;

static int l_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, lnode_t, node)->key == *(const uint64_t *) key;
}

/* 64: nodes from bench_line_alloc() (`lfht-memb-presized-a64`). */
static size_t l_align;

static void l_free_node(lnode_t *n)
{
	if (l_align)
		bench_line_free(n);
	else
		free(n);
}

static void l_free_rcu(struct rcu_head *head)
{
	l_free_node(caa_container_of(head, lnode_t, rcu));
}

static void *l_create(size_t expect, size_t initial)
{
	(void) expect;
	struct cds_lfht *ht = cds_lfht_new_flavor(initial ? bench_pow2(initial) : 1,
	    1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, &FL(flavor), NULL);
	if (!ht)
		abort();
	return ht;
}

static void *l_create_presized(size_t expect, size_t initial)
{
	(void) initial;
	size_t b = bench_pow2(expect);
	struct cds_lfht *ht = cds_lfht_new_flavor(b, b, 0, 0, &FL(flavor), NULL);
	if (!ht)
		abort();
	return ht;
}

static int l_lookup(void *t, uint64_t key, uint64_t *val)
{
	struct cds_lfht_iter iter;
	FL(read_lock)();
	cds_lfht_lookup(t, bench_mix(key), l_match, &key, &iter);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&iter);
	if (n)
		*val = __atomic_load_n(&caa_container_of(n, lnode_t, node)->value,
		    __ATOMIC_RELAXED);
	FL(read_unlock)();
	return n != NULL;
}

static int l_insert(void *t, uint64_t key, uint64_t val)
{
	_Static_assert(sizeof(lnode_t) <= 64, "a node is one line");
	lnode_t *n = l_align ? bench_line_alloc() : malloc(sizeof(*n));
	cds_lfht_node_init(&n->node);
	n->key = key;
	n->value = val;
	FL(read_lock)();
	struct cds_lfht_node *r = cds_lfht_add_unique(t, bench_mix(key), l_match,
	    &key, &n->node);
	FL(read_unlock)();
	if (r != &n->node) {
		l_free_node(n);
		return 0;
	}
	return 1;
}

static int l_remove(void *t, uint64_t key)
{
	struct cds_lfht_iter iter;
	int ok = 0;
	FL(read_lock)();
	cds_lfht_lookup(t, bench_mix(key), l_match, &key, &iter);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&iter);
	if (n && cds_lfht_del(t, n) == 0) {
		FL(call_rcu)(&caa_container_of(n, lnode_t, node)->rcu, l_free_rcu);
		ok = 1;
	}
	FL(read_unlock)();
	return ok;
}

static int l_update(void *t, uint64_t key, uint64_t val)
{
	struct cds_lfht_iter iter;
	FL(read_lock)();
	cds_lfht_lookup(t, bench_mix(key), l_match, &key, &iter);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&iter);
	if (n)
		__atomic_store_n(&caa_container_of(n, lnode_t, node)->value, val,
		    __ATOMIC_RELAXED);
	FL(read_unlock)();
	return n != NULL;
}

/* cds_lfht does not publish its bucket count. */
static long l_buckets(void *t)
{
	(void) t;
	return -1;
}

static int l_resize(void *t, size_t buckets)
{
	/* Synchronous; a qsbr caller is online and goes offline inside. */
	cds_lfht_resize(t, buckets);
	return 0;
}

static void l_settle(void *t)
{
	(void) t;
#if defined(LFHT_QSBR)
	FL(thread_offline)();
#endif
	FL(barrier)();
#if defined(LFHT_QSBR)
	FL(thread_online)();
#endif
}

static void l_destroy(void *t)
{
#if defined(LFHT_QSBR)
	/* The Debian 0.13 cds_lfht_destroy deadlocks with online qsbr threads. */
	FL(thread_offline)();
#endif
	/* Free what is left (the harness normally removed everything). */
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;
#if defined(LFHT_QSBR)
	FL(thread_online)();
#endif
	FL(read_lock)();
	cds_lfht_first(t, &iter);
	while ((n = cds_lfht_iter_get_node(&iter)) != NULL) {
		if (cds_lfht_del(t, n) == 0)
			FL(call_rcu)(&caa_container_of(n, lnode_t, node)->rcu,
			    l_free_rcu);
		cds_lfht_next(t, &iter);
	}
	FL(read_unlock)();
#if defined(LFHT_QSBR)
	FL(thread_offline)();
#endif
	FL(barrier)();
	if (cds_lfht_destroy(t, NULL) != 0)
		abort();
#if defined(LFHT_QSBR)
	FL(thread_online)();
#endif
}

static void l_thread_init(void)
{
	FL(register_thread)();
}

static void l_thread_fini(void)
{
	FL(unregister_thread)();
}

#if defined(LFHT_QSBR)
static void l_offline(void)
{
	FL(thread_offline)();
}

static void l_online(void)
{
	FL(thread_online)();
}
#define OFFLINE l_offline
#define ONLINE l_online
#else
#define OFFLINE NULL
#define ONLINE NULL
#endif

#if defined(LFHT_QSBR)
static void l_quiescent(void)
{
	FL(quiescent_state)();
}
#define QUIESCENT l_quiescent
#else
#define QUIESCENT NULL
#endif

#define LFHT_IMPL(var, nm, create_fn, pre) \
	const bench_impl_t var = { \
		.name = nm, .library = "liburcu cds_lfht (" FLNAME ")", \
		.layout = "node", .presized = pre, .create = create_fn, \
		.destroy = l_destroy, .thread_init = l_thread_init, \
		.thread_fini = l_thread_fini, .quiescent = QUIESCENT, \
		.offline = OFFLINE, .online = ONLINE, \
		.lookup = l_lookup, .insert = l_insert, .remove = l_remove, \
		.update = l_update, .buckets = l_buckets, .resize = l_resize, \
		.settle = l_settle, .est_bytes_per_key = 90, \
	}

LFHT_IMPL(IMPL_AUTO, "lfht-" FLNAME, l_create, false);
LFHT_IMPL(IMPL_PRE, "lfht-" FLNAME "-presized", l_create_presized, true);

#if defined(LFHT_MEMB)
/*
 * The same node 64-byte aligned, as libcht's `cht-presized-a64` (a fair
 * comparison of the documented layouts; from malloc the 48-byte node's hot
 * 32 bytes already share a line: bench_us misses).
 */
static void *l_create_presized_a64(size_t expect, size_t initial)
{
	l_align = 64;
	return l_create_presized(expect, initial);
}

LFHT_IMPL(impl_lfht_memb_presized_a64, "lfht-memb-presized-a64",
    l_create_presized_a64, true);
BENCH_REGISTER(impl_lfht_memb_presized_a64);
#endif
