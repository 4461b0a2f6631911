/** @file mapgrow_share.c
 * Cache lines the managed 8-byte map's lookups share with a thread that
 * grows it (Triplett's experiment), counted exactly under
 * qemu-x86_64 with the sharing plugin (docs/SHARING.md, "User space"):
 *
 *   qemu-x86_64 -plugin build/plugins/sharing.so,out=F mapgrow_share KEYS LOOKUPS GROW
 *
 * Fills a cht_map_u64_t (created for KEYS keys) with key_present(0 ..
 * KEYS - 1) (bench_keys.h), then, inside one window, a reader thread looks
 * up LOOKUPS present keys (a fixed pseudo-random sequence) while a grower
 * thread grows the map with cht_map_u64_reserve() to the buckets of GROW
 * keys (GROW 0: no growth, the fixed-size control). The growth must stay
 * inside the map's level (fewer than twice the buckets of level L), and the
 * reader looks up only keys whose buckets it does not split (the hash's low
 * L bits at or above the final split point, cht_imap_int.h's im_hash()):
 * the lines the two threads share are then the map's own, not the buckets
 * (every split bucket would count: the bound is per access, not per
 * transfer, and a lookup of a bucket the grower wrote long before pays a
 * miss at 1e8 keys either way). The reader opens the
 * window when both threads are ready, waits for the grower at the end
 * (spinning on one flag), closes the window and reports LOOKUPS operations:
 * the plugin's bound per operation is then the lines per lookup that the
 * reader and the grower may have moved between them, whatever the
 * interleaving (the grower's splits are a fixed count). Prints the lookups'
 * hits (every key present: LOOKUPS) and the splits.
 */
#define _GNU_SOURCE
#include <cht.h>
#include <cht_map.h>
#include "bench_keys.h"
#include "sharing.h"
#include "cht_imap_int.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static cht_map_u64_t *m;
static size_t nkeys, nlook, grow_keys;
static int ready __attribute__((aligned(64)));
static int go __attribute__((aligned(64)));
static int grown __attribute__((aligned(64)));
static uint64_t hits;
static uint64_t *pick;  /* the keys the reader looks up */
static size_t npick;

static void *grower(void *p)
{
	(void) p;
	cht_rcu_register_thread();
	__atomic_add_fetch(&ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	if (grow_keys && cht_map_u64_reserve(m, grow_keys) != CHT_OK)
		abort();
	__atomic_store_n(&grown, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader(void *p)
{
	(void) p;
	cht_rcu_register_thread();
	uint64_t s = 12345, v, h = 0;
	/* Warm-up outside the window. */
	for (size_t i = 0; i < 1024; i++)
		h += cht_map_u64_get(m, pick[rnd(&s) % npick], &v) == CHT_OK;
	__atomic_add_fetch(&ready, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 2)
		__builtin_ia32_pause();
	h = 0;
	sharing_window_open();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (size_t i = 0; i < nlook; i++)
		h += cht_map_u64_get(m, pick[rnd(&s) % npick], &v) == CHT_OK;
	while (!__atomic_load_n(&grown, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	sharing_window_close();
	sharing_window_report(nlook);
	hits = h;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: mapgrow_share KEYS LOOKUPS GROW\n");
		return 2;
	}
	nkeys = strtoull(argv[1], NULL, 0);
	nlook = strtoull(argv[2], NULL, 0);
	grow_keys = strtoull(argv[3], NULL, 0);
	cht_rcu_register_thread();
	if (cht_map_u64_create(&m, nkeys) != CHT_OK)
		abort();
	for (size_t i = 0; i < nkeys; i++)
		if (cht_map_u64_put(m, key_present(i), i) != CHT_OK)
			abort();
	cht_map_stats_t st0, st1;
	cht_map_u64_stats(m, &st0);
	unsigned L = 63 - (unsigned) __builtin_clzll(st0.buckets);
	uint64_t n1 = grow_keys ? ((uint64_t) grow_keys * IM_LOAD_DEN +
	    IM_LOAD_NUM - 1) / IM_LOAD_NUM : st0.buckets;
	if (n1 < st0.buckets || n1 >= (uint64_t) 2 << L) {
		fprintf(stderr, "mapgrow_share: %zu -> %llu buckets leaves level "
		    "%u\n", st0.buckets, (unsigned long long) n1, L);
		return 2;
	}
	uint64_t s1 = n1 - ((uint64_t) 1 << L);
	pick = malloc(nkeys * sizeof(*pick));
	for (size_t i = 0; i < nkeys; i++)
		if ((im_hash(key_present(i)) & (((uint64_t) 1 << L) - 1)) >= s1)
			pick[npick++] = key_present(i);
	if (!npick)
		return 2;
	pthread_t r, g;
	pthread_create(&g, NULL, grower, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(r, NULL);
	pthread_join(g, NULL);
	cht_map_u64_stats(m, &st1);
	printf("mapgrow_share,keys,%zu,lookups,%zu,hits,%llu,buckets,%zu,%zu,"
	    "picked,%zu\n", nkeys, nlook, (unsigned long long) hits,
	    st0.buckets, st1.buckets, npick);
	return hits == nlook ? 0 : 1;
}
