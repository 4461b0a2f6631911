/** @file getmany_time.c
 * Batched against single lookups of the 8-byte managed map, timed (the
 * goal "the batched lookup at least 1.5x libcht's own single lookups"):
 *
 *   getmany_time [KEYS] [LOOKUPS] [REPS]     (default 2^22, 2^22, 3)
 *
 * Fills a cht_map_u64_t with KEYS random keys, then per repetition looks up
 * LOOKUPS random present keys once with cht_map_u64_get() one at a time and
 * once with cht_map_u64_get_many() in batches of 64, interleaved, 1 thread;
 * prints Mops/s of each and their ratio (median of the repetitions). A
 * timing on a shared host: read it as a ratio from one run, never as a test.
 */
#define _GNU_SOURCE
#include <cht.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "prng.h"

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

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t) 1 << 22;
	size_t q = argc > 2 ? strtoull(argv[2], NULL, 0) : (size_t) 1 << 22;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	if (reps < 1 || reps > 15 || n < 1 || q < 64)
		return 2;
	cht_map_u64_t *m;
	if (cht_map_u64_create(&m, n) != CHT_OK)
		return 1;
	for (size_t i = 0; i < n; i++)
		cht_map_u64_insert(m, prng_fmix64(2 * i + 2), i);
	uint64_t *keys = malloc(q * sizeof(uint64_t));
	uint64_t *vals = malloc(q * sizeof(uint64_t));
	uint64_t s = 88172645463325252ull;
	for (size_t i = 0; i < q; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		keys[i] = prng_fmix64(2 * (s % n) + 2);
	}
	double one[15], many[15];
	uint64_t sum = 0;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		for (size_t i = 0; i < q; i++) {
			uint64_t v;
			if (cht_map_u64_get(m, keys[i], &v) != CHT_OK)
				return 1;
			sum += v;
		}
		one[r] = (double) q / (now() - t0) / 1e6;
		t0 = now();
		for (size_t i = 0; i + 64 <= q; i += 64)
			if (cht_map_u64_get_many(m, keys + i, 64, vals + i, NULL) != 64)
				return 1;
		many[r] = (double) (q / 64 * 64) / (now() - t0) / 1e6;
		for (size_t i = 0; i < q / 64 * 64; i++)
			sum -= vals[i];
	}
	qsort(one, (size_t) reps, sizeof(double), cmp);
	qsort(many, (size_t) reps, sizeof(double), cmp);
	printf("keys %zu lookups %zu reps %d: get %.2f Mops/s (%.2f-%.2f), "
	    "get_many %.2f Mops/s (%.2f-%.2f), ratio %.2f%s\n", n, q, reps,
	    one[reps / 2], one[0], one[reps - 1], many[reps / 2], many[0],
	    many[reps - 1], many[reps / 2] / one[reps / 2],
	    sum == 0 ? "" : " (values differ!)");
	cht_map_stats_t st;
	cht_map_u64_stats(m, &st);
	printf("map: %zu keys, %zu buckets, %.1f bytes per key (items %zu B, "
	    "buckets %zu B)\n", st.items, st.buckets, st.bytes_per_key,
	    st.item_bytes, st.bucket_bytes);
	return sum == 0 ? 0 : 1;
}
