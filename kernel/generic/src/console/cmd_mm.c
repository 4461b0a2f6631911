/** @file cmd_mm.c
 * Memory commands: `zones` (physical memory zones and the heap), `slabs`
 * (slab caches, from slab_get_all_stats()), `as` (address spaces and their
 * areas), `page_ht` (the global page hash table, from page_ht_get_stats())
 * and `tlb` (the TLB maintenance counts of mm/tlb_stats.h).
 */
#include <mm/tlb_stats.h>
#include <console/kconsole.h>
#include <console/console.h>
#include <console/cmds.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <mm/slab.h>
#include <mm/as.h>
#include <genarch/mm/page_ht.h>
#include <print.h>

static int cmd_zones(const cmd_call_t *call)
{
	zones_print();
	heap_print();
	return 0;
}

static int cmd_slabs(const cmd_call_t *call)
{
	/* Snapshot first: printing under the list lock would keep IRQs off long. */
	size_t n = slab_cache_count();
	slab_cache_stats_t *snap = malloc(n * sizeof(slab_cache_stats_t));
	if (snap == NULL) {
		printf("slabs: out of memory\n");
		return 0;
	}
	size_t got = slab_get_all_stats(snap, n);

	printf("%-18s %6s %5s %5s %6s %7s %8s %8s %8s %3s %11s %9s\n", "name",
	    "size", "align", "slab", "slabs", "frames", "in use", "used", "total",
	    "mag", "mag hits", "misses");
	size_t frames = 0;
	for (size_t i = 0; i < got; i++) {
		slab_cache_stats_t *s = &snap[i];
		printf("%-18s %6zu %5zu %5zu %6zu %7zu %8zu %8zu %8zu %3zu %11lu %9lu\n",
		    s->name, s->size, s->align, s->slab_frames, s->slabs, s->frames,
		    s->objs_in_use, s->objs_slab_used, s->objs_total, s->mag_size,
		    s->mag_hits, s->mag_misses);
		frames += s->frames;
	}
	printf("%zu caches, %zu frames (%zu KiB) in slabs\n", got, frames,
	    frames * (FRAME_SIZE / 1024));
	free(snap);
	return 0;
}

static int cmd_as(const cmd_call_t *call)
{
	as_print();
	return 0;
}

static int cmd_page_ht(const cmd_call_t *call)
{
	page_ht_stats_t st;
	page_ht_get_stats(&st);
	size_t load10 = st.buckets ? st.entries * 10 / st.buckets : 0;
	console_lock();
	printf("page hash table: backend %s\n", st.backend);
	printf("entries: %zu\n", st.entries);
	printf("buckets: %zu\n", st.buckets);
	printf("load: %zu.%zu entries per bucket\n", load10 / 10, load10 % 10);
	printf("resizes: %lu grows, %lu shrinks\n", st.grows, st.shrinks);
	printf("operations: %lu lookups, %lu inserts, %lu removes\n", st.lookups,
	    st.inserts, st.removes);
	console_unlock();
	return 0;
}

static int cmd_tlb(const cmd_call_t *call)
{
	tlb_stats_print();
	return 0;
}

static cmd_info_t cmds[] = {
	{ .name = "zones", .description = "Physical memory zones and heap",
	    .func = cmd_zones },
	{ .name = "slabs", .description = "Slab caches: object size, slabs, objects "
	    "in use, magazine hits", .func = cmd_slabs },
	{ .name = "as", .description = "Address spaces and their areas",
	    .func = cmd_as },
	{ .name = "page_ht", .description = "Global page hash table: back end, "
	    "entries, buckets, load, resizes", .func = cmd_page_ht },
	{ .name = "tlb", .description = "TLB maintenance per CPU: address space "
	    "loads, flushes, invalidations, ASIDs", .func = cmd_tlb },
};

void cmd_mm_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		(void) cmd_register(&cmds[i]);
}
