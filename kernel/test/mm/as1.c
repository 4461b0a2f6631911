/** @file as1.c
 * An address space with anonymous areas, entered by kernel threads: thousands of
 * pages faulted in, written, verified, unmapped, resized and destroyed; every
 * frame, PTE record and table entry goes back.
 *
 * One run:
 *   1. as_create(); three areas (A: AS1_A_PAGES rw, B: AS1_B_PAGES rw, C:
 *      AS1_C_PAGES read-only) and the argument checks of the area functions
 *      (overlap EEXIST, alignment/range EINVAL, unknown base ENOENT, find).
 *   2. One thread wired to each CPU (at least two) enters the address space and
 *      faults in every W-th page of A and B by writing a pattern (several words
 *      per page, derived from the address and the run), reads it back and reads
 *      its pages of C (zero). After a barrier each thread verifies the pages of
 *      another thread. Half of the threads leave with as_leave(), the other half
 *      exit inside the address space (the exit leaves it).
 *   3. The counters must match exactly: page hash table entries and the address
 *      space's pages_mapped grew by the number of pages touched; as_count().
 *   4. This thread enters a second address space with an area at the same
 *      address: it reads zeros there (another key, another frame), writes, and
 *      leaves; it enters the first one and verifies every page without a single
 *      page fault (the threads filled the shared hardware page tables).
 *   5. as_unmap_page() on every 7th page of A: EOK, then ENOENT; the next read
 *      of such a page faults exactly once and reads zero; the others keep their
 *      pattern. Unmap outside an area: ENOENT.
 *   5b. AS1_RANGE_PAGES pages of A unmapped one by one, then again as one
 *      range (as_unmap_range): at least one shootdown cross-call per page the
 *      first time, at most one per CPU the second (both counts printed);
 *      where the TLB invalidation is broadcast (ARCH_TLB_BROADCAST, arm64):
 *      no cross-call at all, one broadcast invalidation per page the first
 *      time and exactly one the second;
 *      each page then reads zero with one fault. Bad ranges: EINVAL.
 *   6. A is shrunk to half (the upper half's mappings are gone from the table)
 *      and grown back (the upper half reads zero); B is destroyed and created
 *      again (zero again).
 *   7. Both address spaces are released (the last reference destroys them).
 * The run is done twice. After each (rcu_barrier: the frames and records of the
 * unmapped pages are freed; slab_reclaim: the magazines give them back):
 *   - page hash table entries, address spaces: at the baseline; threads: not
 *     above it;
 *   - live heap allocations: at the baseline plus the bucket dummies the CHT
 *     created and keeps (read exactly from the table's statistics);
 *   - frames in use outside the slab allocator (data frames, page tables):
 *     exactly at the baseline;
 *   (heap allocations and frames net of the threads that exist, a stack and a
 *   descriptor each: a thread of an earlier test released meanwhile must not
 *   move them);
 *   - free frames and slab frames after the second run equal those after the
 *     first (the first may leave partially used slabs, e.g. of the dummies: the
 *     delta to the baseline is printed, not required to be zero).
 */
#include <test.h>
#include <testlib.h>
#include <mm/as.h>
#include <abi/syscall.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <adt/cht.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <time/delay.h>
#include <arch/mm.h>
#include <arch/paging.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <stdarg.h>
#include <errno.h>
#include <lib/str.h>
#include "mmtest.h"

#define AS1_A_BASE   0x10000000UL
#define AS1_A_PAGES  2048
#define AS1_B_BASE   0x20000000UL
#define AS1_B_PAGES  1024
#define AS1_C_BASE   0x30000000UL
#define AS1_C_PAGES  64
#define AS1_D_PAGES  64            /**< area of the second address space */
#define AS1_TOTAL    (AS1_A_PAGES + AS1_B_PAGES + AS1_C_PAGES)
#define AS1_UNMAP_EVERY 7
/** Pages of A unmapped as one range (step 5b), from page AS1_RANGE_FIRST. */
#define AS1_RANGE_FIRST 64
#define AS1_RANGE_PAGES 100
#define MAX_THREADS  CONFIG_MAX_CPUS
/** Words of each page that carry the pattern. */
static const unsigned pat_words[] = { 0, 1, 255, 256, 511 };

/* Errors (any thread); the first message is kept. */
static mmtest_failure_t failure;

static size_t entries_now(void)
{
	page_ht_stats_t ps;
	page_ht_get_stats(&ps);
	return ps.entries;
}

/* Page contents */

static uint64_t run_seed;

static uint64_t pat(uintptr_t va, unsigned word, uint64_t salt)
{
	return mmtest_mix(va ^ ((uint64_t) word << 48) ^ run_seed ^ salt);
}

static void page_write(uintptr_t va, uint64_t salt)
{
	uint64_t *w = (uint64_t *) va;
	for (unsigned i = 0; i < ARRAY_SIZE(pat_words); i++)
		__atomic_store_n(&w[pat_words[i]], pat(va, pat_words[i], salt),
		    __ATOMIC_RELAXED);
}

/** Checks the pattern (@a zero: all pattern words zero). */
static bool page_check(uintptr_t va, uint64_t salt, bool zero)
{
	uint64_t *w = (uint64_t *) va;
	for (unsigned i = 0; i < ARRAY_SIZE(pat_words); i++) {
		uint64_t v = __atomic_load_n(&w[pat_words[i]], __ATOMIC_RELAXED);
		if (v != (zero ? 0 : pat(va, pat_words[i], salt)))
			return false;
	}
	return true;
}

/** Checks that the whole page is zero. */
static bool page_all_zero(uintptr_t va)
{
	uint64_t *w = (uint64_t *) va;
	for (unsigned i = 0; i < PAGE_SIZE / sizeof(uint64_t); i++) {
		if (__atomic_load_n(&w[i], __ATOMIC_RELAXED) != 0)
			return false;
	}
	return true;
}

/** Address of page @a i of A then B (i < AS1_A_PAGES + AS1_B_PAGES). */
static uintptr_t ab_page(unsigned i)
{
	return i < AS1_A_PAGES ? AS1_A_BASE + (uintptr_t) i * PAGE_SIZE :
	    AS1_B_BASE + (uintptr_t) (i - AS1_A_PAGES) * PAGE_SIZE;
}

/** Page @a i of the range of step 5b. */
static uintptr_t range_page(unsigned i)
{
	return AS1_A_BASE + (uintptr_t) (AS1_RANGE_FIRST + i) * PAGE_SIZE;
}

/* Workers */

typedef struct {
	unsigned index;
	unsigned cpu;
	bool exit_inside;
} as1_arg_t;

static as1_arg_t args[MAX_THREADS];
static thread_t *handles[MAX_THREADS];
static unsigned nthreads;
static mmtest_barrier_t bar;
static as_t *the_as;

static void as1_worker(void *p)
{
	as1_arg_t *a = p;
	unsigned n = AS1_A_PAGES + AS1_B_PAGES;

	as_enter(the_as);
	for (unsigned i = a->index; i < n; i += nthreads)
		page_write(ab_page(i), 0);
	for (unsigned i = a->index; i < n; i += nthreads) {
		if (!page_check(ab_page(i), 0, false))
			mmtest_fail(&failure, "thread %u: page %#lx lost its pattern", a->index,
			    ab_page(i));
	}
	for (unsigned i = a->index; i < AS1_C_PAGES; i += nthreads) {
		if (!page_all_zero(AS1_C_BASE + (uintptr_t) i * PAGE_SIZE))
			mmtest_fail(&failure, "read-only page %u is not zero", i);
	}
	mmtest_barrier_wait(&bar, NULL);
	/* The pages of the next thread, written on another CPU. */
	unsigned other = (a->index + 1) % nthreads;
	for (unsigned i = other; i < n; i += nthreads) {
		if (!page_check(ab_page(i), 0, false))
			mmtest_fail(&failure, "thread %u: page %#lx written by thread %u differs",
			    a->index, ab_page(i), other);
	}
	if (CPU->id != a->cpu)
		mmtest_fail(&failure, "wired thread runs on another CPU");
	if (!a->exit_inside)
		as_leave();
	/* Otherwise thread_exit() leaves the address space. */
}

static const char *check_counts(as_t *as, size_t entries0, size_t mapped,
    const char *when)
{
	static char reason[160];
	size_t e = entries_now();
	size_t pm = as_stats(as).pages_mapped;
	if (e != entries0 + mapped || pm != mapped) {
		snprintf(reason, sizeof(reason), "%s: %zu entries (baseline %zu), "
		    "pages_mapped %zu, expected %zu mapped pages", when, e, entries0,
		    pm, mapped);
		return reason;
	}
	return NULL;
}

static uint64_t faults_of(as_t *as)
{
	return as_stats(as).faults;
}

static uint64_t shootdowns_of(as_t *as)
{
	return as_stats(as).shootdowns;
}

static uint64_t broadcasts_of(as_t *as)
{
	return as_stats(as).tlb_broadcasts;
}

static const char *area_api_checks(as_t *as)
{
	as_area_t ar;
	if (as_area_create(as, AS1_A_BASE, AS1_A_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK ||
	    as_area_create(as, AS1_B_BASE, AS1_B_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK ||
	    as_area_create(as, AS1_C_BASE, AS1_C_PAGES * PAGE_SIZE,
	    AS_AREA_READ) != EOK)
		return "as_area_create failed";
	uintptr_t a_end = AS1_A_BASE + AS1_A_PAGES * PAGE_SIZE;
	if (as_area_create(as, AS1_A_BASE + 100 * PAGE_SIZE, PAGE_SIZE,
	    AS_AREA_READ) != EEXIST ||
	    as_area_create(as, AS1_A_BASE - PAGE_SIZE, 2 * PAGE_SIZE,
	    AS_AREA_READ) != EEXIST ||
	    as_area_create(as, a_end - PAGE_SIZE, 2 * PAGE_SIZE,
	    AS_AREA_READ) != EEXIST ||
	    as_area_create(as, AS1_A_BASE - PAGE_SIZE, AS1_B_BASE,
	    AS_AREA_READ) != EEXIST)
		return "an overlapping area was not refused with EEXIST";
	if (as_area_create(as, 0, PAGE_SIZE, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, 0x50000001UL, PAGE_SIZE, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, 0x50000000UL, 0, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, 0x50000000UL, 100, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, USER_SPACE_END, PAGE_SIZE, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, USER_SPACE_END - PAGE_SIZE, 2 * PAGE_SIZE,
	    AS_AREA_READ) != EINVAL ||
	    as_area_create(as, 0x50000000UL, -PAGE_SIZE, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, USER_AREA_END, PAGE_SIZE, AS_AREA_READ) != EINVAL ||
	    as_area_create(as, USER_AREA_START - PAGE_SIZE, PAGE_SIZE,
	    AS_AREA_READ) != EINVAL ||
	    as_area_create(as, 0x50000000UL, AREA_SIZE_MAX + PAGE_SIZE,
	    AS_AREA_READ) != EINVAL ||
	    as_area_resize(as, AS1_A_BASE, AREA_SIZE_MAX + PAGE_SIZE) != EINVAL)
		return "a bad area range was not refused with EINVAL";
	/* Right next to A (and at the very top of the user areas): allowed. */
	if (as_area_create(as, a_end, PAGE_SIZE, AS_AREA_READ) != EOK ||
	    as_area_create(as, USER_AREA_END - PAGE_SIZE, PAGE_SIZE,
	    AS_AREA_READ) != EOK)
		return "an adjacent area was refused";
	if (!as_area_find(as, a_end, &ar) || ar.base != a_end || ar.pages != 1)
		return "as_area_find of the adjacent area failed";
	if (as_area_resize(as, AS1_A_BASE, (AS1_A_PAGES + 1) * PAGE_SIZE) != EEXIST)
		return "growing an area into its neighbour was not refused";
	if (as_area_destroy(as, a_end) != EOK ||
	    as_area_destroy(as, USER_AREA_END - PAGE_SIZE) != EOK ||
	    as_area_destroy(as, a_end) != ENOENT)
		return "as_area_destroy of the adjacent areas failed";
	if (as_area_find(as, a_end, &ar))
		return "a destroyed area is still found";
	if (!as_area_find(as, AS1_A_BASE + 5 * PAGE_SIZE + 17, &ar) ||
	    ar.base != AS1_A_BASE || ar.pages != AS1_A_PAGES ||
	    ar.flags != (AS_AREA_READ | AS_AREA_WRITE))
		return "as_area_find inside A returned the wrong area";
	if (!as_area_find(as, AS1_C_BASE + AS1_C_PAGES * PAGE_SIZE - 1, &ar) ||
	    ar.base != AS1_C_BASE || ar.flags != AS_AREA_READ)
		return "as_area_find at the last byte of C failed";
	if (as_area_find(as, AS1_C_BASE + AS1_C_PAGES * PAGE_SIZE, &ar) ||
	    as_area_find(as, 0x50000000UL, &ar) || as_area_find(as, 0, &ar))
		return "as_area_find found an area where there is none";
	if (as_area_resize(as, AS1_A_BASE + PAGE_SIZE, PAGE_SIZE) != ENOENT ||
	    as_area_resize(as, 0x50000000UL, PAGE_SIZE) != ENOENT)
		return "resize of a non-area did not return ENOENT";
	if (as_area_resize(as, AS1_A_BASE, 0) != EINVAL ||
	    as_area_resize(as, AS1_A_BASE, PAGE_SIZE + 1) != EINVAL)
		return "resize to a bad size did not return EINVAL";
	if (as_area_destroy(as, AS1_A_BASE + PAGE_SIZE) != ENOENT ||
	    as_area_destroy(as, 0x50000000UL) != ENOENT)
		return "destroy of a non-area did not return ENOENT";
	return NULL;
}

/**
 * Step 2: one worker per online CPU (at least two) faults in and checks its
 * pages of A and B (as1_worker()); then one fault per page, one reference
 * and no CPU left running @a as. @a started: the workers started.
 * @return NULL or the failure (the caller releases @a as).
 */
static const char *as1_workers(as_t *as, size_t entries0, unsigned *started)
{
	static char reason[160];

	unsigned online;
	nthreads = mmtest_nthreads(MAX_THREADS, &online);
	bar = (mmtest_barrier_t) { .n = nthreads, .yield = nthreads > online };
	unsigned n = 0;
	*started = 0;
	for (unsigned c = 0; n < nthreads; c = (c + 1) % cpu_count) {
		if (!cpu_is_online(c))
			continue;
		args[n] = (as1_arg_t) { .index = n, .cpu = c, .exit_inside = n % 2 };
		handles[n] = testlib_create(as1_worker, &args[n], "as1",
		    &cpus[c]);
		if (!handles[n]) {
			mmtest_fail(&failure, "thread_create failed");
			break;
		}
		n++;
	}
	/* If thread_create failed, the barrier must not wait for the missing. */
	bar.n = n;
	*started = n;
	for (unsigned i = 0; i < n; i++)
		thread_start(handles[i]);
	for (unsigned i = 0; i < n; i++) {
		if (thread_join(handles[i]) != EOK)
			mmtest_fail(&failure, "thread_join failed");
	}
	if (mmtest_failed(&failure))
		return failure.msg;
	uint64_t f_workers = faults_of(as);
	if (atomic_get(&as->refcount) != 1) {
		snprintf(reason, sizeof(reason), "%zu references after the threads "
		    "left, expected 1", atomic_get(&as->refcount));
		return reason;
	}
	if (__atomic_load_n(&as->cpus_running, __ATOMIC_SEQ_CST) != 0)
		return "cpus_running not empty after every thread left";
	if (f_workers != AS1_TOTAL) {
		/* One fault per page: each page is touched by one thread only. */
		snprintf(reason, sizeof(reason), "%lu faults for %u pages touched, "
		    "expected one each", f_workers, AS1_TOTAL);
		return reason;
	}
	return check_counts(as, entries0, AS1_TOTAL, "after the threads");
}

/**
 * Step 4: a second address space with an area at A's address: its pages read
 * zero and fault once each. @return it, or NULL when as_create() failed.
 */
static as_t *as1_second_as(void)
{
	as_t *as2 = as_create();
	if (!as2)
		return NULL;
	if (as_area_create(as2, AS1_A_BASE, AS1_D_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK)
		mmtest_fail(&failure, "as_area_create in the second address space failed");
	as_enter(as2);
	for (unsigned i = 0; i < AS1_D_PAGES; i++) {
		uintptr_t va = AS1_A_BASE + (uintptr_t) i * PAGE_SIZE;
		if (!page_all_zero(va))
			mmtest_fail(&failure, "second address space: page %#lx not zero", va);
		page_write(va, 0x2);
	}
	as_leave();
	if (faults_of(as2) != AS1_D_PAGES)
		mmtest_fail(&failure, "second address space: %lu faults, expected %u",
		    faults_of(as2), AS1_D_PAGES);
	return as2;
}

/** Step 4 (cont.): the main thread reads A, B and C with no fault (the
 *  workers' mappings are in the hardware page tables). @a as entered. */
static void as1_reread(as_t *as)
{
	uint64_t f0 = faults_of(as);
	for (unsigned i = 0; i < AS1_A_PAGES + AS1_B_PAGES; i++) {
		if (!page_check(ab_page(i), 0, false)) {
			mmtest_fail(&failure, "page %#lx differs when read by the main thread",
			    ab_page(i));
			break;
		}
	}
	for (unsigned i = 0; i < AS1_C_PAGES; i++) {
		if (!page_check(AS1_C_BASE + (uintptr_t) i * PAGE_SIZE, 0, true))
			mmtest_fail(&failure, "read-only page %u is not zero", i);
	}
	uint64_t f1 = faults_of(as);
	if (f1 != f0)
		mmtest_fail(&failure, "%lu faults while reading mapped pages (hardware page "
		    "tables not filled?)", f1 - f0);
}

/** Step 5: unmap every AS1_UNMAP_EVERY-th page of A; the pages read zero
 *  (one fault each) and take their pattern back. @a as entered. */
static void as1_unmap_pages(as_t *as, size_t entries0)
{
	const char *r;
	size_t unmapped = 0;
	for (unsigned i = 0; i < AS1_A_PAGES; i += AS1_UNMAP_EVERY) {
		uintptr_t va = AS1_A_BASE + (uintptr_t) i * PAGE_SIZE;
		/* Any address inside the page names it. */
		if (as_unmap_page(as, va + (i % 2 ? 123 : 0)) != EOK)
			mmtest_fail(&failure, "as_unmap_page(%#lx) failed", va);
		if (as_unmap_page(as, va) != ENOENT)
			mmtest_fail(&failure, "second as_unmap_page(%#lx) did not fail", va);
		unmapped++;
	}
	if (as_unmap_page(as, 0x50000000UL) != ENOENT ||
	    as_unmap_page(as, AS1_B_BASE - PAGE_SIZE) != ENOENT)
		mmtest_fail(&failure, "as_unmap_page outside the areas did not return ENOENT");
	if ((r = check_counts(as, entries0 + AS1_D_PAGES, AS1_TOTAL - unmapped,
	    "after the unmaps")))
		mmtest_fail(&failure, "%s", r);
	uint64_t f0 = faults_of(as);
	for (unsigned i = 0; i < AS1_A_PAGES; i++) {
		uintptr_t va = AS1_A_BASE + (uintptr_t) i * PAGE_SIZE;
		bool gone = i % AS1_UNMAP_EVERY == 0;
		if (gone ? !page_all_zero(va) : !page_check(va, 0, false))
			mmtest_fail(&failure, "page %#lx after the unmaps: %s", va,
			    gone ? "not zero" : "pattern lost");
	}
	uint64_t f1 = faults_of(as);
	if (f1 - f0 != unmapped)
		mmtest_fail(&failure, "%lu faults reading %zu unmapped pages, expected one each",
		    f1 - f0, unmapped);
	/* The read faults installed writable entries: writing faults no more. */
	for (unsigned i = 0; i < AS1_A_PAGES; i += AS1_UNMAP_EVERY)
		page_write(AS1_A_BASE + (uintptr_t) i * PAGE_SIZE, 0);
	if (faults_of(as) != f1)
		mmtest_fail(&failure, "writing pages just read faulted again");
	if ((r = check_counts(as, entries0 + AS1_D_PAGES, AS1_TOTAL,
	    "after the re-faults")))
		mmtest_fail(&failure, "%s", r);
}

/*
 * Step 5b. The same AS1_RANGE_PAGES pages of A unmapped one by one, then as
 * one range: a page at a time costs at least one shootdown cross-call per page
 * (this CPU runs the address space), the range at most one per CPU. Each time
 * every page reads zero after (one fault each) and gets its pattern back.
 * @a sd, @a bc: the shootdown cross-calls and broadcast invalidations of
 * each pass ([0] page by page, [1] the range). @a as entered.
 */
static void as1_unmap_range_passes(as_t *as, size_t entries0, uint64_t sd[2],
    uint64_t bc[2])
{
	const char *r;
	for (unsigned pass = 0; pass < 2; pass++) {
		uint64_t s0 = shootdowns_of(as), b0 = broadcasts_of(as);
		if (pass == 0) {
			for (unsigned i = 0; i < AS1_RANGE_PAGES; i++) {
				if (as_unmap_page(as, range_page(i)) != EOK)
					mmtest_fail(&failure, "as_unmap_page(%#lx) failed",
					    range_page(i));
			}
		} else {
			size_t removed = 0;
			int rc = as_unmap_range(as, range_page(0), AS1_RANGE_PAGES,
			    &removed);
			if (rc != EOK || removed != AS1_RANGE_PAGES)
				mmtest_fail(&failure, "as_unmap_range of %u mapped pages: rc %d, "
				    "%zu removed", AS1_RANGE_PAGES, rc, removed);
		}
		sd[pass] = shootdowns_of(as) - s0;
		bc[pass] = broadcasts_of(as) - b0;
		if ((r = check_counts(as, entries0 + AS1_D_PAGES,
		    AS1_TOTAL - AS1_RANGE_PAGES, "after unmapping the range")))
			mmtest_fail(&failure, "%s", r);
		uint64_t f0 = faults_of(as);
		for (unsigned i = 0; i < AS1_RANGE_PAGES; i++) {
			if (!page_all_zero(range_page(i)))
				mmtest_fail(&failure, "page %#lx not zero after the range unmap",
				    range_page(i));
			page_write(range_page(i), 0);
		}
		if (faults_of(as) - f0 != AS1_RANGE_PAGES)
			mmtest_fail(&failure, "%lu faults reading %u unmapped pages, expected "
			    "one each", faults_of(as) - f0, AS1_RANGE_PAGES);
	}
}

/** Step 5b (cont.): the shootdown and broadcast counts of the two passes
 *  (@a sd, @a bc as as1_unmap_range_passes() filled them), then bad and empty
 *  ranges, which change nothing. @a as entered. */
static void as1_range_checks(as_t *as, size_t entries0, const uint64_t sd[2],
    const uint64_t bc[2])
{
	const char *r;
	uint64_t sd_pages = sd[0], sd_range = sd[1];
	uint64_t bc_pages = bc[0], bc_range = bc[1];

	printf("as1: shootdown cross-calls to unmap %u pages: %lu one page at a "
	    "time, %lu as one range\n", AS1_RANGE_PAGES, sd_pages, sd_range);
#if ARCH_TLB_BROADCAST
	/*
	 * The invalidation reaches every CPU by itself (arch.h, "TLB
	 * invalidation"): the shootdown sends no cross-call, and does one
	 * broadcast per unmap call (the range is one batch: UNMAP_BATCH).
	 */
	printf("as1: broadcast TLB invalidations to unmap %u pages: %lu one page "
	    "at a time, %lu as one range\n", AS1_RANGE_PAGES, bc_pages, bc_range);
	if (sd_pages || sd_range)
		mmtest_fail(&failure, "%lu + %lu shootdown cross-calls where the TLB "
		    "invalidation is broadcast, expected none", sd_pages, sd_range);
	if (bc_pages != AS1_RANGE_PAGES || bc_range != 1)
		mmtest_fail(&failure, "%lu broadcast invalidations for %u single-page "
		    "unmaps and %lu for one range unmap, expected %u and 1", bc_pages,
		    AS1_RANGE_PAGES, bc_range, AS1_RANGE_PAGES);
#else
	if (bc_pages || bc_range)
		mmtest_fail(&failure, "%lu + %lu broadcast invalidations where the TLB "
		    "invalidation is local, expected none", bc_pages, bc_range);
	if (sd_pages < AS1_RANGE_PAGES)
		mmtest_fail(&failure, "%lu shootdowns for %u single-page unmaps of an "
		    "address space this CPU runs, expected at least one each", sd_pages,
		    AS1_RANGE_PAGES);
	if (sd_range == 0 || sd_range > cpu_count)
		mmtest_fail(&failure, "%lu shootdown cross-calls for one range unmap, "
		    "expected 1 to %u (one per CPU running the address space)",
		    sd_range, cpu_count);
#endif
	/* Bad ranges change nothing; an empty or unmapped range removes nothing. */
	size_t none = 1;
	if (as_unmap_range(as, range_page(0) + 1, 1, &none) != EINVAL || none ||
	    as_unmap_range(as, USER_SPACE_END - PAGE_SIZE, 2, NULL) != EINVAL ||
	    as_unmap_range(as, USER_SPACE_END, 1, NULL) != EINVAL)
		mmtest_fail(&failure, "as_unmap_range accepted a bad range");
	if (as_unmap_range(as, range_page(0), 0, &none) != EOK || none ||
	    as_unmap_range(as, 0x50000000UL, 16, &none) != EOK || none)
		mmtest_fail(&failure, "as_unmap_range of nothing mapped removed pages");
	if ((r = check_counts(as, entries0 + AS1_D_PAGES, AS1_TOTAL,
	    "after the range unmaps")))
		mmtest_fail(&failure, "%s", r);
}

/** Step 6: resize A to half and back, destroy and recreate B; the pages
 *  past the cut and B's read zero. @a as entered. */
static void as1_resize_recreate(as_t *as, size_t entries0)
{
	const char *r;
	as_area_t ar;
	if (as_area_resize(as, AS1_A_BASE, AS1_A_PAGES / 2 * PAGE_SIZE) != EOK)
		mmtest_fail(&failure, "shrinking A failed");
	if (!as_area_find(as, AS1_A_BASE, &ar) || ar.pages != AS1_A_PAGES / 2 ||
	    as_area_find(as, AS1_A_BASE + AS1_A_PAGES / 2 * PAGE_SIZE, &ar))
		mmtest_fail(&failure, "as_area_find does not see the shrunk size");
	if ((r = check_counts(as, entries0 + AS1_D_PAGES,
	    AS1_TOTAL - AS1_A_PAGES / 2, "after shrinking A")))
		mmtest_fail(&failure, "%s", r);
	if (as_area_resize(as, AS1_A_BASE, AS1_A_PAGES * PAGE_SIZE) != EOK)
		mmtest_fail(&failure, "growing A back failed");
	uint64_t f0 = faults_of(as);
	for (unsigned i = 0; i < AS1_A_PAGES; i++) {
		uintptr_t va = AS1_A_BASE + (uintptr_t) i * PAGE_SIZE;
		bool gone = i >= AS1_A_PAGES / 2;
		if (gone ? !page_all_zero(va) : !page_check(va, 0, false)) {
			mmtest_fail(&failure, "page %#lx after the resizes: %s", va,
			    gone ? "not zero" : "pattern lost");
			break;
		}
	}
	if (faults_of(as) - f0 != AS1_A_PAGES / 2)
		mmtest_fail(&failure, "%lu faults after growing A back, expected %u",
		    faults_of(as) - f0, AS1_A_PAGES / 2);
	if (as_area_destroy(as, AS1_B_BASE) != EOK)
		mmtest_fail(&failure, "as_area_destroy(B) failed");
	if (as_area_find(as, AS1_B_BASE, &ar))
		mmtest_fail(&failure, "B is still found after its destruction");
	if ((r = check_counts(as, entries0 + AS1_D_PAGES, AS1_TOTAL - AS1_B_PAGES,
	    "after destroying B")))
		mmtest_fail(&failure, "%s", r);
	if (as_area_create(as, AS1_B_BASE, AS1_B_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK)
		mmtest_fail(&failure, "recreating B failed");
	for (unsigned i = 0; i < AS1_B_PAGES; i += 3) {
		uintptr_t va = AS1_B_BASE + (uintptr_t) i * PAGE_SIZE;
		if (!page_all_zero(va)) {
			mmtest_fail(&failure, "page %#lx of the recreated B is not zero", va);
			break;
		}
		page_write(va, 0x3);
	}
}

static const char *as1_run(unsigned run)
{
	const char *r;
	size_t ases0 = as_count();
	size_t entries0 = entries_now();
	run_seed = mmtest_mix(0x617331 + run);

	as_t *as = as_create();
	if (!as)
		return "as_create failed";
	the_as = as;
	if (as_count() != ases0 + 1)
		return "as_count did not grow by one";
	r = area_api_checks(as);
	if (r) {
		as_release(as);
		return r;
	}
	if ((r = check_counts(as, entries0, 0, "before any access"))) {
		as_release(as);
		return r;
	}

	/* 2. Workers. */
	unsigned n;
	if ((r = as1_workers(as, entries0, &n))) {
		as_release(as);
		return r;
	}

	/* 4. A second address space at the same addresses. */
	as_t *as2 = as1_second_as();
	if (!as2) {
		as_release(as);
		return "as_create failed";
	}
	as_enter(as);
	as1_reread(as);

	/* 5. Unmap every 7th page of A; 5b. a range, page by page and at once. */
	as1_unmap_pages(as, entries0);
	uint64_t sd[2] = { 0, 0 }, bc[2] = { 0, 0 };
	as1_unmap_range_passes(as, entries0, sd, bc);
	as1_range_checks(as, entries0, sd, bc);

	/* 6. Resize A to half and back; destroy and recreate B. */
	as1_resize_recreate(as, entries0);
	as_leave();
	if (__atomic_load_n(&as->cpus_running, __ATOMIC_SEQ_CST) != 0)
		mmtest_fail(&failure, "cpus_running not empty after as_leave");

	TPRINTF("as1: run %u: %u threads, %u pages touched; %lu faults (%lu "
	    "minor), %lu shootdowns\n", run + 1, n, AS1_TOTAL, faults_of(as),
	    as_stats(as).faults_minor,
	    as_stats(as).shootdowns);

	/* 7. Destroy both. */
	as_release(as2);
	as_release(as);
	/*
	 * The page tables step 6's destroys freed go after a grace period,
	 * each batch holding a reference (mm/as_prune.c, prune_tables()): the
	 * address space goes with the last.
	 */
	rcu_barrier();
	if (as_count() != ases0)
		mmtest_fail(&failure, "%zu address spaces after the release, expected %zu",
		    as_count(), ases0);
	if (entries_now() != entries0)
		mmtest_fail(&failure, "%zu table entries after the release, expected %zu",
		    entries_now(), entries0);
	return mmtest_failed(&failure) ? failure.msg : NULL;
}

const char *test_as1(void)
{
	static char reason[200];
	mmtest_snap_t s0, s[2];

	uint64_t t0 = uptime_us();
	mmtest_failure_reset(&failure);
	mmtest_snap(&s0);

	for (unsigned run = 0; run < 2; run++) {
		const char *r = as1_run(run);
		if (r)
			return r;
		mmtest_snap(&s[run]);
		mmtest_snap_t *e = &s[run];
		TPRINTF("as1: run %u: entries %zu (baseline %zu), address spaces %zu "
		    "(%zu); against the baseline: heap allocations %ld, CHT dummies "
		    "%ld, frames outside slabs %ld, slab frames %ld\n", run + 1,
		    e->entries, s0.entries, e->ases, s0.ases,
		    (long) (e->heap_allocs - s0.heap_allocs),
		    (long) (e->dummies - s0.dummies),
		    (long) (e->outside_slabs - s0.outside_slabs),
		    (long) (e->slab_frames - s0.slab_frames));
		if (e->entries != s0.entries)
			return "page hash table entries not back at the baseline";
		if (e->ases != s0.ases)
			return "address spaces left behind";
		if (e->threads > s0.threads)
			return "threads left behind";
		if (e->heap_allocs - s0.heap_allocs != e->dummies - s0.dummies)
			return "live heap allocations not back at the baseline";
		if (e->outside_slabs != s0.outside_slabs) {
			snprintf(reason, sizeof(reason), "%ld frames outside the slabs "
			    "not given back (data frames, page tables)",
			    (long) e->outside_slabs - (long) s0.outside_slabs);
			return reason;
		}
	}
	if (mmtest_check_repeat(s, reason, sizeof(reason)))
		return reason;
	TPRINTF("as1: free frames %zu after both runs (%ld against the baseline: "
	    "partially used slabs); %lu ms\n", s[1].free,
	    (long) s[1].free - (long) s0.free, (uptime_us() - t0) / 1000);
	return NULL;
}
