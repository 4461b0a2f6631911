/** @file getmany_time.c
 * Batched against single lookups of libcht, timed (the goal "the batched
 * lookup at least 1.5x libcht's own single lookups"):
 *
 *   getmany_time [-i [-H]] [KEYS] [LOOKUPS] [REPS]   (default 2^22, 2^22, 3)
 *
 * Fills a table with KEYS random keys, then per repetition looks up LOOKUPS
 * random present keys (rounded down to blocks of 16384) once one at a time
 * and once in batches of 64 for each batched call, 1 thread. The measures
 * are interleaved block by block, each on a different block at any moment
 * (rep() says how), so that a slow spell of the host falls on all of them.
 * Prints, per measure, the median Mops/s of the repetitions [lowest-highest]
 * and the median of the per-repetition ratios to the single lookups
 * [lowest-highest]. The table: the 8-byte managed map (cht_map_u64_get()
 * against cht_map_u64_get_many()), or with -i the intrusive API as <cht.h>
 * documents it for 8-byte keys (cht_find_fast() against cht_find_many() and
 * against cht_find_many_fast(), the batch specialized for the constant ops as
 * cht_find_fast() is; each inside a reader section; one bucket per key, items
 * of one cache line each from a pool of 2 MiB chunks, CHT_ITEM_ALIGN, on
 * 4 KiB pages, or with -H advised for transparent huge pages). A timing on a
 * shared host: read it as a ratio from one run, never as a test.
 */
#define _GNU_SOURCE
#include <cht.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
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

/* -H: the item chunks advised for transparent huge pages. */
static int huge_items;

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
		if (huge_items && madvise(bump, (size_t) 2 << 20,
		    MADV_HUGEPAGE) != 0) {
			perror("madvise(MADV_HUGEPAGE)");
			huge_items = 0;  /* say it once; 4 KiB pages then */
		}
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

/* A batch of BATCH keys through cht_find_many(), or with @a fast through
 * cht_find_many_fast() with the constant ops. */
static inline __attribute__((always_inline)) size_t it_batch(
    const uint64_t *keys, uint64_t *vals, int fast)
{
	void *kp[BATCH];
	cht_link_t *out[BATCH];
	for (size_t i = 0; i < BATCH; i++)
		kp[i] = (void *) &keys[i];
	cht_rcu_read_lock();
	size_t found = fast ? cht_find_many_fast(&table, kp, BATCH, out, &it_ops) :
	    cht_find_many(&table, kp, BATCH, out);
	for (size_t i = 0; i < BATCH; i++)
		vals[i] = out[i] ? cht_item_of(out[i], item_t, link)->value : 0;
	cht_rcu_read_unlock();
	return found;
}

static size_t it_many(const uint64_t *keys, uint64_t *vals)
{
	return it_batch(keys, vals, 0);
}

static size_t it_many_fast(const uint64_t *keys, uint64_t *vals)
{
	return it_batch(keys, vals, 1);
}

static void it_report(void)
{
	printf("intrusive: %zu keys, one bucket per key, items of %d bytes%s\n",
	    cht_count(&table), CHT_ITEM_ALIGN,
	    huge_items ? ", advised for huge pages (-H)" : "");
}

/* --- the timing ----------------------------------------------------------- */

typedef struct {
	int (*fill)(size_t n);
	int (*one)(uint64_t key, uint64_t *val);
	/* Batches of BATCH keys; many[1] NULL where there is no second one. */
	size_t (*many[2])(const uint64_t *keys, uint64_t *vals);
	void (*report)(void);
	const char *one_name, *many_name[2];
} api_t;

static const api_t apis[2] = {
	{ map_fill, map_one, { map_many, NULL }, map_report, "get",
	  { "get_many", NULL } },
	{ it_fill, it_one, { it_many, it_many_fast }, it_report, "find",
	  { "find_many", "find_many_fast" } },
};

/* Keys per block of the interleaving (a multiple of BATCH). */
#define BLOCK 16384

/*
 * Measure @a m (0 single lookups, 1 and 2 the batches) over the @a bs keys
 * at @a keys: the seconds it took, the values read into @a vals; -1 when a
 * key was not found.
 */
static double block(const api_t *a, int m, const uint64_t *keys,
    uint64_t *vals, size_t bs)
{
	double t0 = now();
	if (m == 0) {
		for (size_t i = 0; i < bs; i++)
			if (a->one(keys[i], &vals[i]) != 0)
				return -1;
	} else {
		for (size_t i = 0; i < bs; i += BATCH)
			if (a->many[m - 1](keys + i, vals + i) != BATCH)
				return -1;
	}
	return now() - t0;
}

/*
 * One repetition of the @a nm measures over the @a q keys (q / BLOCK blocks):
 * each measure looks up every block once, the measures interleaved block by
 * block (the first rotating) and each on its own third of the blocks at any
 * moment, so that a block's lines are cold for every measure and a slow
 * spell of the host falls on all of them alike. Mops/s of measure m into
 * mops[m], the sum of the values it read into sums[m]; -1 on a lost key.
 */
static int rep(const api_t *a, int nm, const uint64_t *keys, uint64_t *vals,
    size_t q, double *mops, uint64_t *sums)
{
	size_t nb = q / BLOCK;
	double secs[3] = { 0, 0, 0 };
	for (int m = 0; m < nm; m++)
		sums[m] = 0;
	for (size_t b = 0; b < nb; b++)
		for (int j = 0; j < nm; j++) {
			int m = (int) ((b + (size_t) j) % (size_t) nm);
			size_t at = (b + (size_t) m * nb / (size_t) nm) % nb * BLOCK;
			double t = block(a, m, keys + at, vals + at, BLOCK);
			if (t < 0)
				return -1;
			secs[m] += t;
			for (size_t i = at; i < at + BLOCK; i++)
				sums[m] += vals[i];
		}
	for (int m = 0; m < nm; m++)
		mops[m] = (double) (nb * BLOCK) / secs[m] / 1e6;
	return 0;
}

int main(int argc, char **argv)
{
	int intrusive = argc > 1 && strcmp(argv[1], "-i") == 0;
	argc -= intrusive, argv += intrusive;
	if (intrusive && argc > 1 && strcmp(argv[1], "-H") == 0)
		huge_items = 1, argc--, argv++;
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t) 1 << 22;
	size_t q = argc > 2 ? strtoull(argv[2], NULL, 0) : (size_t) 1 << 22;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	if (reps < 1 || reps > 15 || n < 1 || q < BLOCK)
		return 2;
	q = q / BLOCK * BLOCK;
	const api_t *a = &apis[intrusive];
	int nm = a->many[1] ? 3 : 2;
	uint64_t *keys = malloc(q * sizeof(uint64_t));
	uint64_t *vals = malloc(q * sizeof(uint64_t));
	if (!keys || !vals || a->fill(n) != 0)
		return 1;
	uint64_t s = 88172645463325252ull;
	for (size_t i = 0; i < q; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		keys[i] = prng_fmix64(2 * (s % n) + 2);
	}
	double r[3][15], ratio[3][15];
	/* Every measure must read the same values: their sums agree. */
	int ok = 1;
	for (int k = 0; k < reps; k++) {
		uint64_t sums[3];
		double mops[3];
		if (rep(a, nm, keys, vals, q, mops, sums) != 0)
			return 1;
		for (int m = 0; m < nm; m++) {
			r[m][k] = mops[m];
			ratio[m][k] = mops[m] / mops[0];
			ok &= sums[m] == sums[0];
		}
	}
	for (int m = 0; m < nm; m++) {
		qsort(r[m], (size_t) reps, sizeof(double), cmp);
		qsort(ratio[m], (size_t) reps, sizeof(double), cmp);
	}
	printf("keys %zu lookups %zu reps %d: %s %.2f Mops/s (%.2f-%.2f)", n, q,
	    reps, a->one_name, r[0][reps / 2], r[0][0], r[0][reps - 1]);
	for (int m = 1; m < nm; m++)
		printf(", %s %.2f Mops/s (%.2f-%.2f), ratio %.2f (%.2f-%.2f)",
		    a->many_name[m - 1], r[m][reps / 2], r[m][0], r[m][reps - 1],
		    ratio[m][reps / 2], ratio[m][0], ratio[m][reps - 1]);
	printf("%s\n", ok ? "" : " (values differ!)");
	a->report();
	return ok ? 0 : 1;
}
