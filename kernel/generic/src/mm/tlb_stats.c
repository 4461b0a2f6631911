/** @file tlb_stats.c
 * Per-CPU counts of the kernel's TLB maintenance (mm/tlb_stats.h).
 */
#include <mm/tlb_stats.h>
#include <console/console.h>
#include <print.h>
#include <lib/str.h>

tlb_stats_t tlb_stats[CONFIG_MAX_CPUS];

const char *const tlb_counter_names[TLB_NCOUNTERS] = {
	[TLB_AS_LOADS] = "loads",
	[TLB_LOAD_FLUSHES] = "load-flush",
	[TLB_PAGE_OPS] = "page",
	[TLB_ASID_OPS] = "asid",
	[TLB_ALL_OPS] = "all",
	[TLB_GLOBAL_DROPS] = "global-drop",
	[TLB_ROLLOVERS] = "rollover",
	[TLB_ASID_ALLOCS] = "asid-alloc",
};

void tlb_stats_get(unsigned cpu, tlb_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < cpu_count; i++) {
		if (cpu != TLB_STATS_ALL && cpu != i)
			continue;
		for (unsigned k = 0; k < TLB_NCOUNTERS; k++)
			out->c[k] += __atomic_load_n(&tlb_stats[i].c[k],
			    __ATOMIC_RELAXED);
	}
}

static void print_row(const char *name, const tlb_stats_t *s)
{
	printf("%-5s", name);
	for (unsigned k = 0; k < TLB_NCOUNTERS; k++)
		printf(" %s=%lu", tlb_counter_names[k], s->c[k]);
	printf("\n");
}

void tlb_stats_print(void)
{
	tlb_stats_t s;
	char name[16];
	console_lock();
	for (unsigned i = 0; i < cpu_count; i++) {
		tlb_stats_get(i, &s);
		snprintf(name, sizeof(name), "cpu%u", i);
		print_row(name, &s);
	}
	tlb_stats_get(TLB_STATS_ALL, &s);
	print_row("all", &s);
	console_unlock();
}
