/** @file impl_chtmap.c
 * libcht's managed map (cht_map.h): the library allocates, copies and frees
 * the items, and registers threads itself; the adapter is the one call a
 * user writes per operation. `chtmap-u64`: the 8-byte path in its default,
 * inline layout (key and value in the bucket's line, cht_imap.c);
 * `chtmap-u64-presized`: the same, created for the key count (it still grows
 * past it); `chtmap-u64-chained[-presized]`: the chained layout (key and
 * value in the item's line, one 64-byte object on the CHT); `chtmap`: the
 * byte-string map with 8-byte keys and values (value blocks behind a
 * pointer).
 */
#include "bench.h"
#include <cht.h>
#include <stdlib.h>

static void *m_create(size_t expect, size_t initial)
{
	(void) expect;
	cht_map_u64_t *m;
	if (cht_map_u64_create(&m, initial) != CHT_OK)
		abort();
	return m;
}

static void *m_create_presized(size_t expect, size_t initial)
{
	(void) initial;
	cht_map_u64_t *m;
	if (cht_map_u64_create(&m, expect) != CHT_OK)
		abort();
	return m;
}

static void *c_create(size_t expect, size_t initial)
{
	(void) expect;
	cht_map_u64_t *m;
	if (cht_map_u64_create_opts(&m, initial, CHT_MAP_U64_CHAINED) != CHT_OK)
		abort();
	return m;
}

static void *c_create_presized(size_t expect, size_t initial)
{
	(void) initial;
	cht_map_u64_t *m;
	if (cht_map_u64_create_opts(&m, bench_pow2(expect),
	    CHT_MAP_U64_CHAINED) != CHT_OK)
		abort();
	return m;
}

static void m_destroy(void *t)
{
	if (cht_map_u64_destroy(t) != CHT_OK)
		abort();
}

static void m_nop(void)
{
}

static int m_lookup(void *t, uint64_t key, uint64_t *val)
{
	return cht_map_u64_get(t, key, val) == CHT_OK;
}

static int m_insert(void *t, uint64_t key, uint64_t val)
{
	return cht_map_u64_insert(t, key, val) == CHT_OK;
}

static int m_remove(void *t, uint64_t key)
{
	return cht_map_u64_delete(t, key) == CHT_OK;
}

static int m_update(void *t, uint64_t key, uint64_t val)
{
	uint64_t cur;
	if (cht_map_u64_get(t, key, &cur) != CHT_OK)
		return 0;
	/*
	 * A replace of a present key (the harness's update, unconditional as
	 * in the other adapters): compare-and-replace from what we saw, again
	 * from the value a concurrent writer left (CHT_ESTALE updates cur).
	 */
	int rc;
	while ((rc = cht_map_u64_cas(t, key, &cur, val)) == CHT_ESTALE)
		;
	return rc == CHT_OK;
}

static long m_buckets(void *t)
{
	cht_map_stats_t st;
	cht_map_u64_stats(t, &st);
	return (long) st.buckets;
}

static void m_settle(void *t)
{
	cht_map_stats_t st;
	for (;;) {
		cht_map_u64_stats(t, &st);
		if (!st.resizing)
			break;
		bench_sleep_us(100);
	}
	cht_rcu_barrier();
}

/* Buckets -> keys at the inline map's load limit (11/4 keys per bucket). */
static int m_grow(void *t, size_t buckets)
{
	return cht_map_u64_reserve(t, buckets * 11 / 4) == CHT_OK;
}

/* The chained layout's grow point (the inline layout has none: NULL). */
static long c_grow_at(void *t)
{
	return (long) cht_map_u64_grow_at(t);
}

#define CHTMAP_IMPL(var, nm, lib, lay, create_fn, pre, est, grow_fn, ga) \
	const bench_impl_t var = { \
		.name = nm, .library = lib, \
		.layout = lay, .presized = pre, .create = create_fn, \
		.destroy = m_destroy, .thread_init = m_nop, \
		.thread_fini = m_nop, .lookup = m_lookup, .insert = m_insert, \
		.remove = m_remove, .update = m_update, .buckets = m_buckets, \
		.settle = m_settle, .est_bytes_per_key = est, \
		.grow = grow_fn, .grow_at = ga, \
	}

/*
 * The inline layout (the default): 64-byte buckets of 3 pairs at 2.75 keys
 * per bucket plus overflow lines, about 32 bytes per key; no second array
 * while it grows (peak = final).
 */
CHTMAP_IMPL(impl_chtmap_u64, "chtmap-u64",
    "libcht cht_map_u64 (managed, inline)", "inline", m_create, false, 40, m_grow, NULL);
CHTMAP_IMPL(impl_chtmap_u64_presized, "chtmap-u64-presized",
    "libcht cht_map_u64 (managed, inline)", "inline", m_create_presized,
    true, 40, m_grow, NULL);
/* The chained layout: 64-byte item + 32 bytes of bucket array at load 1/2. */
CHTMAP_IMPL(impl_chtmap_u64_chained, "chtmap-u64-chained",
    "libcht cht_map_u64 (managed, chained)", "node", c_create, false, 120, NULL,
    c_grow_at);
CHTMAP_IMPL(impl_chtmap_u64_chained_presized, "chtmap-u64-chained-presized",
    "libcht cht_map_u64 (managed, chained)", "node", c_create_presized, true,
    120, NULL, c_grow_at);

/* --- the byte-string map with 8-byte keys and values ------------------------ */

static void *b_create(size_t expect, size_t initial)
{
	(void) expect;
	cht_map_t *m;
	if (cht_map_create(&m, initial) != CHT_OK)
		abort();
	return m;
}

static void b_destroy(void *t)
{
	if (cht_map_destroy(t) != CHT_OK)
		abort();
}

static int b_lookup(void *t, uint64_t key, uint64_t *val)
{
	size_t len;
	return cht_map_get(t, &key, 8, val, 8, &len) == CHT_OK;
}

static int b_insert(void *t, uint64_t key, uint64_t val)
{
	return cht_map_insert(t, &key, 8, &val, 8) == CHT_OK;
}

static int b_remove(void *t, uint64_t key)
{
	return cht_map_delete(t, &key, 8) == CHT_OK;
}

static int b_update(void *t, uint64_t key, uint64_t val)
{
	uint64_t cur;
	size_t len;
	/* As m_update(): again from a concurrent writer's value. */
	for (;;) {
		if (cht_map_get(t, &key, 8, &cur, 8, &len) != CHT_OK)
			return 0;
		int rc = cht_map_cas(t, &key, 8, &cur, 8, &val, 8);
		if (rc != CHT_ESTALE)
			return rc == CHT_OK;
	}
}

static long b_buckets(void *t)
{
	cht_map_stats_t st;
	cht_map_stats(t, &st);
	return (long) st.buckets;
}

static void b_settle(void *t)
{
	cht_map_stats_t st;
	for (;;) {
		cht_map_stats(t, &st);
		if (!st.resizing)
			break;
		bench_sleep_us(100);
	}
	cht_rcu_barrier();
}

static long b_grow_at(void *t)
{
	return (long) cht_map_grow_at(t);
}

const bench_impl_t impl_chtmap = {
	.name = "chtmap", .library = "libcht cht_map (managed; byte strings)",
	.layout = "node", .presized = false, .create = b_create,
	.destroy = b_destroy, .thread_init = m_nop, .thread_fini = m_nop,
	.lookup = b_lookup, .insert = b_insert, .remove = b_remove,
	.update = b_update, .buckets = b_buckets, .settle = b_settle,
	.grow_at = b_grow_at,
	/* item, value block and bucket array: about 140 bytes per 8-byte key */
	.est_bytes_per_key = 175,
};
