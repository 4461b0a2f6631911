/** @file mapfill.c
 * Bytes per key of the 8-byte managed map, memory only (the goal "at
 * most 32 bytes per key at 1e8 through the managed map, every overhead
 * counted, bucket arrays included"):
 *
 *   mapfill [KEYS] [chained]     (default 1e8 keys, the inline layout)
 *
 * Inserts KEYS distinct pseudo-random 8-byte keys (SplitMix64 of 0..KEYS-1,
 * a bijection: no duplicates) with 8-byte values into one cht_map_u64_t
 * created empty (it grows by itself), 1 thread, then checks every key's
 * value and prints the map's own figure (cht_map_u64_stats(): bucket array
 * plus overflow lines or items, per key), the allocator's reserved bytes, and
 * the process's VmRSS and VmHWM before and after (RSS includes the harness:
 * a few MB). Deterministic apart from RSS; needs about 3.5 GB at 1e8 for the
 * inline layout, 10 GB for the chained one (check free memory first).
 */
#define _GNU_SOURCE
#include <cht.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/** VmRSS and VmHWM of this process, in bytes. */
static void rss(size_t *now, size_t *hwm)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	*now = *hwm = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			*now = strtoull(line + 6, NULL, 10) << 10;
		if (!strncmp(line, "VmHWM:", 6))
			*hwm = strtoull(line + 6, NULL, 10) << 10;
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t) strtod(argv[1], NULL) : 100000000;
	unsigned fl = argc > 2 && !strcmp(argv[2], "chained") ?
	    CHT_MAP_U64_CHAINED : CHT_MAP_U64_INLINE;
	size_t r0, h0, r1, h1;
	cht_map_u64_t *m;
	if (cht_map_u64_create_opts(&m, 0, fl) != CHT_OK)
		return 1;
	cht_map_stats_t st;
	cht_map_u64_stats(m, &st);  /* registers the thread, starts helpers */
	rss(&r0, &h0);
	for (size_t i = 0; i < n; i++) {
		if (cht_map_u64_insert(m, splitmix(i), i) != CHT_OK) {
			fprintf(stderr, "mapfill: insert %zu failed\n", i);
			return 1;
		}
		if ((i & ((1u << 24) - 1)) == 0 && i)
			fprintf(stderr, "mapfill: %zu keys\n", i);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		if (cht_map_u64_get(m, splitmix(i), &v) != CHT_OK || v != i) {
			fprintf(stderr, "mapfill: key %zu lost\n", i);
			return 1;
		}
	}
	cht_map_u64_stats(m, &st);
	rss(&r1, &h1);
	printf("layout %s keys %zu buckets %zu bucket_bytes %zu item_bytes %zu "
	    "bytes_per_key %.2f reserved %zu rss_before %zu rss_after %zu "
	    "hwm_after %zu rss_per_key %.2f\n",
	    fl ? "chained" : "inline", st.items, st.buckets, st.bucket_bytes,
	    st.item_bytes, st.bytes_per_key, st.reserved_bytes, r0, r1, h1,
	    (double) (r1 - r0) / (double) n);
	return cht_map_u64_destroy(m) == CHT_OK ? 0 : 1;
}
