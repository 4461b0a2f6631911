/** @file getmany_time.c
 * Batched against single lookups of libcht, timed (the goal "the batched
 * lookup at least 1.5x libcht's own single lookups"):
 *
 *   getmany_time [-i] [KEYS] [LOOKUPS] [REPS]     (default 2^22, 2^22, 3)
 *
 * Fills a table with KEYS random keys, then per repetition looks up LOOKUPS
 * random present keys once one at a time and once in batches of 64,
 * interleaved, 1 thread; prints Mops/s of each and their ratio (median of the
 * repetitions). The table: the 8-byte managed map (cht_map_u64_get() against
 * cht_map_u64_get_many()), or with -i the intrusive API as <cht.h> documents
 * it for 8-byte keys (cht_find_fast() against cht_find_many(), each inside a
 * reader section; one bucket per key, items of one cache line each from a
 * pool of 2 MiB chunks, CHT_ITEM_ALIGN). A timing on a shared host: read it as
 * a ratio from one run, never as a test.
 */
#define _GNU_SOURCE
#include <cht.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "prng.h"

#define BATCH 64

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

/* --- the managed map ---------------------------------------------------- */

static cht_map_u64_t *map;

static int map_fill(size_t n)
{
	if (cht_map_u64_create(&map, n) != CHT_OK)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (cht_map_u64_insert(map, prng_fmix64(2 * i + 2), i) != CHT_OK)
			return -1;
	return 0;
}

static int map_one(uint64_t key, uint64_t *val)
{
	return cht_map_u64_get(map, key, val) == CHT_OK ? 0 : -1;
}

static size_t map_many(const uint64_t *keys, uint64_t *vals)
{
	return (size_t) cht_map_u64_get_many(map, keys, BATCH, vals, NULL);
}

static void map_report(void)
{
	cht_map_stats_t st;
	cht_map_u64_stats(map, &st);
	printf("map: %zu keys, %zu buckets, %.1f bytes per key (items %zu B, "
	    "buckets %zu B)\n", st.items, st.buckets, st.bytes_per_key,
	    st.item_bytes, st.bucket_bytes);
}

/* --- the intrusive API ---------------------------------------------------- */

typedef struct {
	cht_link_t link;
	uint64_t key;
	uint64_t value;
} item_t;

CHT_DEFINE_U64_KEY(it, item_t, link, key, cht_u64_identity)

static const cht_ops_t it_ops = { CHT_U64_KEY_OPS(it) };
static cht_t table;

/* Items of one line each, carved from 2 MiB chunks (never freed: the
 * program exits). */
static item_t *item_alloc(void)
{
	static char *bump, *end;
	_Static_assert(sizeof(item_t) <= CHT_ITEM_ALIGN, "an item is one line");
	if (bump == end) {
		bump = aligned_alloc((size_t) 2 << 20, (size_t) 2 << 20);
		if (!bump)
			return NULL;
		end = bump + ((size_t) 2 << 20);
	}
	item_t *p = (item_t *) (void *) bump;
	bump += CHT_ITEM_ALIGN;
	return p;
}

static int it_fill(size_t n)
{
	size_t b = 1;
	while (b < n)
		b <<= 1;
	cht_rcu_register_thread();
	if (cht_create(&table, b, b, (size_t) 1 << 20, &it_ops) != CHT_OK)
		return -1;
	for (size_t i = 0; i < n; i++) {
		item_t *p = item_alloc();
		if (!p)
			return -1;
		p->key = prng_fmix64(2 * i + 2);
		p->value = i;
		cht_rcu_read_lock();
		bool ok = cht_insert_unique(&table, &p->link, NULL);
		cht_rcu_read_unlock();
		if (!ok)
			return -1;
	}
	return 0;
}

static int it_one(uint64_t key, uint64_t *val)
{
	cht_rcu_read_lock();
	cht_link_t *l = cht_find_fast(&table, &key, &it_ops);
	if (l)
		*val = cht_item_of(l, item_t, link)->value;
	cht_rcu_read_unlock();
	return l ? 0 : -1;
}

static size_t it_many(const uint64_t *keys, uint64_t *vals)
{
	void *kp[BATCH];
	cht_link_t *out[BATCH];
	for (size_t i = 0; i < BATCH; i++)
		kp[i] = (void *) &keys[i];
	cht_rcu_read_lock();
	size_t found = cht_find_many(&table, kp, BATCH, out);
	for (size_t i = 0; i < BATCH; i++)
		vals[i] = out[i] ? cht_item_of(out[i], item_t, link)->value : 0;
	cht_rcu_read_unlock();
	return found;
}

static void it_report(void)
{
	printf("intrusive: %zu keys, one bucket per key, items of %d bytes\n",
	    cht_count(&table), CHT_ITEM_ALIGN);
}

/* --- the timing ----------------------------------------------------------- */

typedef struct {
	int (*fill)(size_t n);
	int (*one)(uint64_t key, uint64_t *val);
	size_t (*many)(const uint64_t *keys, uint64_t *vals);
	void (*report)(void);
	const char *one_name, *many_name;
} api_t;

static const api_t apis[2] = {
	{ map_fill, map_one, map_many, map_report, "get", "get_many" },
	{ it_fill, it_one, it_many, it_report, "find", "find_many" },
};

/* One repetition: @a q single lookups, then as many in batches; their
 * Mops/s in *one and *many; the values' sum into *sum (+ and -). */
static int rep(const api_t *a, const uint64_t *keys, uint64_t *vals, size_t q,
    double *one, double *many, uint64_t *sum)
{
	double t0 = now();
	for (size_t i = 0; i < q; i++) {
		uint64_t v;
		if (a->one(keys[i], &v) != 0)
			return -1;
		*sum += v;
	}
	*one = (double) q / (now() - t0) / 1e6;
	t0 = now();
	for (size_t i = 0; i + BATCH <= q; i += BATCH)
		if (a->many(keys + i, vals + i) != BATCH)
			return -1;
	*many = (double) (q / BATCH * BATCH) / (now() - t0) / 1e6;
	for (size_t i = 0; i < q / BATCH * BATCH; i++)
		*sum -= vals[i];
	return 0;
}

int main(int argc, char **argv)
{
	int intrusive = argc > 1 && strcmp(argv[1], "-i") == 0;
	argc -= intrusive, argv += intrusive;
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t) 1 << 22;
	size_t q = argc > 2 ? strtoull(argv[2], NULL, 0) : (size_t) 1 << 22;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	if (reps < 1 || reps > 15 || n < 1 || q < BATCH)
		return 2;
	const api_t *a = &apis[intrusive];
	uint64_t *keys = malloc(q * sizeof(uint64_t));
	uint64_t *vals = malloc(q * sizeof(uint64_t));
	if (!keys || !vals || a->fill(n) != 0)
		return 1;
	uint64_t s = 88172645463325252ull;
	for (size_t i = 0; i < q; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		keys[i] = prng_fmix64(2 * (s % n) + 2);
	}
	double one[15], many[15];
	uint64_t sum = 0;
	for (int r = 0; r < reps; r++)
		if (rep(a, keys, vals, q, &one[r], &many[r], &sum) != 0)
			return 1;
	qsort(one, (size_t) reps, sizeof(double), cmp);
	qsort(many, (size_t) reps, sizeof(double), cmp);
	printf("keys %zu lookups %zu reps %d: %s %.2f Mops/s (%.2f-%.2f), "
	    "%s %.2f Mops/s (%.2f-%.2f), ratio %.2f%s\n", n, q, reps,
	    a->one_name, one[reps / 2], one[0], one[reps - 1], a->many_name,
	    many[reps / 2], many[0], many[reps - 1],
	    many[reps / 2] / one[reps / 2], sum == 0 ? "" : " (values differ!)");
	a->report();
	return sum == 0 ? 0 : 1;
}
