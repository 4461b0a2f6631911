/** @file tlb_stats.h
 * Per-CPU counts of the TLB maintenance the kernel itself does: switches
 * into user address spaces and what each invalidated, the invalidations of
 * unmaps, ASID allocations and rollovers (arm64). icount prices no TLB miss
 * (QEMU's TCG has no cost model for one), so these counts are how a change
 * of the TLB policy is measured (docs/ARM64.md, "TLB and ASIDs"; the `tlb`
 * command prints them).
 *
 * Each CPU writes only its own row (tlb_stats[cpu]), with interrupts
 * disabled (so it cannot migrate between reading its id and the add), by a
 * relaxed load and store: no RMW is needed with one writer. Readers on any
 * CPU load the counters with relaxed loads: a sum is a snapshot of counters
 * that only grow, exact once the counting CPUs are quiet.
 */
#ifndef KERN_MM_TLB_STATS_H_
#define KERN_MM_TLB_STATS_H_

#include <typedefs.h>
#include <cpu.h>

/** What a counter counts (tlb_counter_names[] prints them). */
typedef enum {
	/** Switches of this CPU into a user address space (arch_as_load()). */
	TLB_AS_LOADS,
	/**
	 * Switches that invalidated every user translation of this CPU: each
	 * one without ASIDs; with ASIDs only the first one after a rollover.
	 */
	TLB_LOAD_FLUSHES,
	/**
	 * Single-page (or single-table) invalidations: arm64 tlbi vae1is,
	 * amd64's one-page invalidation.
	 */
	TLB_PAGE_OPS,
	/**
	 * Invalidations of one address space's ASID (tlbi aside1is): an unmap
	 * of more than 32 pages or tables, and the release of an address
	 * space that had an ASID.
	 */
	TLB_ASID_OPS,
	/**
	 * Invalidations of every user translation for an unmap of more than
	 * 32 pages without a tag to name the address space (amd64: the root
	 * reloaded; arm64 without ASIDs: tlbi vmalle1is).
	 */
	TLB_ALL_OPS,
	/**
	 * Invalidations that also dropped the kernel's global translations
	 * (arm64: tlbi vmalle1 and vmalle1is; amd64's root reload keeps
	 * them).
	 */
	TLB_GLOBAL_DROPS,
	/** ASID generations this CPU started (arm64: all numbers used up). */
	TLB_ROLLOVERS,
	/** ASIDs this CPU handed to address spaces (arm64). */
	TLB_ASID_ALLOCS,
	TLB_NCOUNTERS
} tlb_counter_t;

/** One CPU's counters, a cache line of its own (or the sum of all rows). */
typedef struct {
	uint64_t c[TLB_NCOUNTERS];
} __attribute__((aligned(CACHE_LINE_SIZE))) tlb_stats_t;

/** Row of each CPU; written by that CPU only (see the file comment). */
extern tlb_stats_t tlb_stats[CONFIG_MAX_CPUS];

/** Short names of the counters, in tlb_counter_t order (the `tlb` columns). */
extern const char *const tlb_counter_names[TLB_NCOUNTERS];

/**
 * Adds @a n to counter @a what of the calling CPU's row. Interrupts
 * disabled (the caller's CPU stays the row's only writer).
 */
static inline void tlb_count(tlb_counter_t what, uint64_t n)
{
	uint64_t *p = &tlb_stats[CPU->id].c[what];
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n,
	    __ATOMIC_RELAXED);
}

/**
 * Copies CPU @a cpu's row (@a cpu < CONFIG_MAX_CPUS), or with @a cpu ==
 * TLB_STATS_ALL the sum of every CPU's, into @a out. Any context.
 */
void tlb_stats_get(unsigned cpu, tlb_stats_t *out);
#define TLB_STATS_ALL ((unsigned) -1)

/** Prints each CPU's row and the sum (the `tlb` command). Thread context. */
void tlb_stats_print(void);

#endif
