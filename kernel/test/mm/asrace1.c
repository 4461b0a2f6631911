/** @file asrace1.c
 * Tests `asrace1` and `asrace1long`: destroying and
 * shrinking an area while other threads fault pages in it.
 *
 * The defect: the fault path looked the area up, dropped the area lock and
 * then inserted the page's record; a concurrent as_area_destroy() (or shrink)
 * unlinked the area and unmapped its range in between, found no record for
 * the page yet, and the fault inserted it afterwards. The record and its frame
 * outlived the area; an area created again at that address showed the old
 * page's contents instead of zeroes; after as_release() the record and frame
 * were never freed.
 *
 * One run: an address space with one area of ASR_PAGES writable pages at
 * ASR_BASE. Writer threads (one per CPU, at least two) enter it and store a
 * magic value to random pages through uaccess_store64(), which returns
 * EFAULT instead of panicking when the area is gone (a writer that was
 * refused parks until the cycler resumes it). Every cycle starts with an
 * empty area, so most stores fault and a destroy meets faults in flight. A
 * cycler thread, also in the address space, repeats: let the writers make
 * ASR_STORES_PER stores per writer; destroy the area
 * (even cycles) or shrink it to one page (odd cycles); stop the writers (each
 * acknowledges at a point between two stores, so every fault it started has
 * ended); then require that no page of the removed range has a record in the
 * page hash table, create the area again (or grow it back), require that the
 * first read of every page of that range is 0, remove and re-create the range
 * once more (so that the writers find it empty again: unmapping page by page
 * would cost a TLB shootdown each), and let the writers go on.
 * After the cycles the writers and the cycler leave, the address space is
 * released, and the page hash table entries, address spaces, frames outside
 * the slabs and heap allocations must be back at their baseline.
 *
 * The race must have been run: writers must have stored to the area and have
 * been refused (EFAULT: a fault that found the area gone) many times.
 */
#include <test.h>
#include <testlib.h>
#include "mmtest.h"
#include <mm/as.h>
#include <mm/frame.h>
#include <genarch/mm/page_ht.h>
#include <uaccess.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/semaphore.h>
#include <time/delay.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <print.h>

#define ASR_BASE        0x70000000UL
#define ASR_PAGES       64
/** Stores per writer between two destroys (or shrinks). */
#define ASR_STORES_PER  16
/** Stores per writer per cycle at most (then it parks until the next one). */
#define ASR_BUDGET      (4 * ASR_STORES_PER)
#define ASR_MAX_WRITERS 16
#define ASR_MAGIC       0xA5A5DEADBEEF5A5AUL
/** Cycles of the quick test (`test *`) and of the long one (`make soak`). */
#define ASR_CYCLES      2000
#define ASR_CYCLES_LONG 40000
/** Bound for the writers to acknowledge a stop. */
#define ASR_ACK_US      (30 * 1000 * 1000UL)

typedef struct {
	uint64_t seed;
	/** Generation of the last stop acknowledged (release/acquire). */
	uint64_t ack;
	/** Stores made in the current cycle (relaxed atomics: the cycler reads). */
	uint64_t cycle_stores;
	/**
	 * Stores that succeeded, were refused, other errors; written by the
	 * writer only (refused is also read by the cycler: relaxed atomics).
	 */
	uint64_t stored;
	uint64_t refused;
	uint64_t other_errors;
	/**
	 * The writer parks here; the cycler ups it once per resume. One per
	 * writer: with a shared semaphore a writer that parked twice before a
	 * slow one woke could take that one's wake-up and leave it parked.
	 */
	semaphore_t go;
} asr_writer_t;

static as_t *asr_as;
static asr_writer_t writers[ASR_MAX_WRITERS];
static unsigned nwriters;
/** Stop generation requested by the cycler (release/acquire). */
static uint64_t stop_gen;
/** Generation the writers may run in (release/acquire). */
static uint64_t run_gen;
/** The writers should exit (release/acquire). */
static bool finish;
static mmtest_failure_t failure;

static uint64_t __user *word_of(size_t page, unsigned w)
{
	return uptr(ASR_BASE + page * PAGE_SIZE + 8 * (w % 64));
}

/*
 * A writer parks once per cycle, between two stores (so every fault it began
 * is over): when the cycler asks it to stop, when a store was refused (the
 * area is gone: the stop follows), or when it made its budget of stores for
 * the cycle. Parked, it is blocked (its CPU leaves the address space, so TLB
 * shootdowns skip it) until the cycler resumes everyone.
 */
static void writer_thread(void *arg)
{
	asr_writer_t *wr = arg;
	unsigned w = (unsigned) (wr - writers);
	as_enter(asr_as);
	while (!__atomic_load_n(&finish, __ATOMIC_ACQUIRE)) {
		uint64_t rg = __atomic_load_n(&run_gen, __ATOMIC_ACQUIRE);
		uint64_t sg = __atomic_load_n(&stop_gen, __ATOMIC_ACQUIRE);
		if (sg != rg || wr->cycle_stores >= ASR_BUDGET) {
			__atomic_store_n(&wr->ack, rg + 1, __ATOMIC_RELEASE);
			semaphore_down(&wr->go);
			__atomic_store_n(&wr->cycle_stores, 0, __ATOMIC_RELAXED);
			continue;
		}
		size_t page = mmtest_rand(&wr->seed) % ASR_PAGES;
		int rc = uaccess_store64(word_of(page, w), ASR_MAGIC);
		__atomic_store_n(&wr->cycle_stores, wr->cycle_stores + 1,
		    __ATOMIC_RELAXED);
		if (rc == EOK) {
			wr->stored++;
		} else if (rc == EFAULT) {
			/* The area is gone: park until it is back. */
			/* Read by the cycler: one writer, relaxed. */
			__atomic_store_n(&wr->refused, wr->refused + 1,
			    __ATOMIC_RELAXED);
			wr->cycle_stores = ASR_BUDGET;
		} else {
			wr->other_errors++;
		}
		if (wr->cycle_stores % 8 == 0)
			thread_yield();  /* the cycler may share this CPU */
	}
	as_leave();
}

/** Stops the writers: returns when each has acknowledged generation @a g. */
static bool stop_writers(uint64_t g)
{
	__atomic_store_n(&stop_gen, g, __ATOMIC_RELEASE);
	uint64_t t0 = uptime_us();
	for (unsigned w = 0; w < nwriters; w++) {
		while (__atomic_load_n(&writers[w].ack, __ATOMIC_ACQUIRE) != g) {
			if (uptime_us() - t0 > ASR_ACK_US)
				return false;
			thread_yield();
		}
	}
	return true;
}

/** Lets the parked writers run in generation @a g. */
static void resume_writers(uint64_t g)
{
	__atomic_store_n(&run_gen, g, __ATOMIC_RELEASE);
	for (unsigned w = 0; w < nwriters; w++)
		semaphore_up(&writers[w].go);
}

/** Checks [first, ASR_PAGES) after its removal and re-creation. */
static bool check_range(unsigned cycle, size_t first, bool recreated)
{
	for (size_t p = first; p < ASR_PAGES; p++) {
		pte_t pte;
		uintptr_t va = ASR_BASE + p * PAGE_SIZE;
		if (!recreated && page_mapping_find(asr_as->id, va, &pte)) {
			mmtest_fail(&failure, "cycle %u: page %#lx has a record after "
			    "its area was %s (frame %#lx outlives it)", cycle, va,
			    first ? "shrunk" : "destroyed", pte.frame);
			return false;
		}
		if (recreated) {
			for (unsigned w = 0; w < nwriters; w++) {
				uint64_t v = 1;
				int rc = uaccess_load64(word_of(p, w), &v);
				if (rc != EOK || v != 0) {
					mmtest_fail(&failure, "cycle %u: first read of page "
					    "%#lx after the area was %s: %s, value %#lx (data "
					    "of the old area leaked into the new one)", cycle,
					    va, first ? "grown back" : "created again",
					    rc == EOK ? "ok" : "EFAULT", v);
					return false;
				}
			}
		}
	}
	return true;
}

static unsigned cycles_to_run;
static uint64_t cycles_done;
/** Two or more CPUs: the writers run beside the cycler (set before it runs). */
static bool asr_multi;

/** Stores the writers saw refused so far (a snapshot). */
static uint64_t asr_refused(void)
{
	uint64_t n = 0;
	for (unsigned w = 0; w < nwriters; w++)
		n += __atomic_load_n(&writers[w].refused, __ATOMIC_RELAXED);
	return n;
}

/*
 * Whether the cycler goes on: cycles_to_run cycles, then, at two or more
 * CPUs, until the writers saw a tenth of them refused (the race this test
 * exists for), up to five times as many: on a loaded host TCG may run the
 * vCPUs in long turns, and the writers then rarely land in a destroyed or
 * shrunk area before the cycler stops them.
 */
static bool asr_cycle_more(unsigned c)
{
	if (c < cycles_to_run)
		return true;
	return asr_multi && c < 5 * cycles_to_run &&
	    asr_refused() < cycles_to_run / 10;
}

static void cycler_thread(void *arg)
{
	uint64_t seed = 0x9E3779B97F4A7C15UL ^ uptime_us();
	as_enter(asr_as);
	for (unsigned c = 0; asr_cycle_more(c) && !mmtest_failed(&failure); c++) {
		/* Let the writers fault for a while, then a varied phase. */
		uint64_t t0 = uptime_us();
		for (unsigned w = 0; w < nwriters; w++) {
			while (__atomic_load_n(&writers[w].cycle_stores,
			    __ATOMIC_RELAXED) < ASR_STORES_PER &&
			    __atomic_load_n(&writers[w].ack, __ATOMIC_ACQUIRE) <= c &&
			    uptime_us() - t0 < ASR_ACK_US)
				thread_yield();
		}
		unsigned spin = mmtest_rand(&seed) % 2000;
		for (unsigned i = 0; i < spin; i++)
			cpu_relax();
		bool destroy = c % 2 == 0;
		size_t first = destroy ? 0 : 1;
		int rc = destroy ? as_area_destroy(asr_as, ASR_BASE) :
		    as_area_resize(asr_as, ASR_BASE, PAGE_SIZE);
		if (rc != EOK) {
			mmtest_fail(&failure, "cycle %u: %s failed: %d", c,
			    destroy ? "as_area_destroy" : "as_area_resize", rc);
			break;
		}
		if (!stop_writers(c + 1)) {
			mmtest_fail(&failure, "cycle %u: writers did not stop", c);
			break;
		}
		if (!check_range(c, first, false))
			break;
		rc = destroy ? as_area_create(asr_as, ASR_BASE, ASR_PAGES * PAGE_SIZE,
		    AS_AREA_READ | AS_AREA_WRITE) :
		    as_area_resize(asr_as, ASR_BASE, ASR_PAGES * PAGE_SIZE);
		if (rc != EOK) {
			mmtest_fail(&failure, "cycle %u: re-creating the area failed: "
			    "%d", c, rc);
			break;
		}
		if (!check_range(c, first, true))
			break;
		/* Empty the range again for the next cycle's faults. */
		rc = destroy ? as_area_destroy(asr_as, ASR_BASE) :
		    as_area_resize(asr_as, ASR_BASE, PAGE_SIZE);
		if (rc == EOK)
			rc = destroy ? as_area_create(asr_as, ASR_BASE,
			    ASR_PAGES * PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) :
			    as_area_resize(asr_as, ASR_BASE, ASR_PAGES * PAGE_SIZE);
		if (rc != EOK) {
			mmtest_fail(&failure, "cycle %u: emptying the area failed: "
			    "%d", c, rc);
			break;
		}
		cycles_done++;
		resume_writers(c + 1);
	}
	__atomic_store_n(&finish, true, __ATOMIC_RELEASE);
	for (unsigned w = 0; w < nwriters; w++)
		semaphore_up(&writers[w].go);
	as_leave();
}

static const char *asrace_run(unsigned cycles)
{
	static char reason[240];
	mmtest_snap_t s0, s1;
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = test_online_cpus(online);
	mmtest_failure_reset(&failure);
	mmtest_snap(&s0);

	asr_as = as_create();
	if (!asr_as)
		return "as_create failed";
	if (as_area_create(asr_as, ASR_BASE, ASR_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		as_release(asr_as);
		return "as_area_create failed";
	}
	nwriters = ncpu < 2 ? 2 : ncpu;
	asr_multi = ncpu >= 2;
	if (nwriters > ASR_MAX_WRITERS)
		nwriters = ASR_MAX_WRITERS;
	stop_gen = run_gen = 0;
	finish = false;
	cycles_to_run = cycles;
	cycles_done = 0;

	thread_t *th[ASR_MAX_WRITERS + 1];
	unsigned n = 0;
	for (unsigned w = 0; w < nwriters; w++) {
		writers[w] = (asr_writer_t) { .seed = mmtest_mix(w + 1) | 1 };
		semaphore_initialize(&writers[w].go, 0);
		th[n] = testlib_create(writer_thread, &writers[w],
		    "asrace-writer", &cpus[online[w % ncpu]]);
		if (!th[n])
			break;
		n++;
	}
	thread_t *cy = n == nwriters ? thread_create(cycler_thread, NULL,
	    "asrace-cycler", THREAD_FLAG_NONE) : NULL;
	if (!cy) {
		/* Nothing started: tell the created writers to leave at once. */
		__atomic_store_n(&finish, true, __ATOMIC_RELEASE);
		for (unsigned i = 0; i < n; i++)
			semaphore_up(&writers[i].go);
		for (unsigned i = 0; i < n; i++) {
			thread_start(th[i]);
			(void) thread_join(th[i]);
		}
		as_release(asr_as);
		return "thread_create failed";
	}
	/* The cycler on the last CPU, writers round-robin from the first. */
	thread_wire(cy, &cpus[online[ncpu - 1]]);
	for (unsigned i = 0; i < n; i++)
		thread_start(th[i]);
	thread_start(cy);
	(void) thread_join(cy);
	for (unsigned i = 0; i < n; i++)
		(void) thread_join(th[i]);

	uint64_t stored = 0, refused = 0, other = 0;
	for (unsigned w = 0; w < nwriters; w++) {
		stored += writers[w].stored;
		refused += writers[w].refused;
		other += writers[w].other_errors;
	}
	as_release(asr_as);
	asr_as = NULL;
	mmtest_snap(&s1);
	TPRINTF("asrace1: %u writers, %lu destroy/shrink cycles (at least %u): %lu stores, "
	    "%lu refused (area gone); entries %zu (baseline %zu), address spaces "
	    "%zu (%zu), frames outside slabs %ld, heap allocations %ld (CHT "
	    "dummies %ld)\n", nwriters, cycles_done, cycles, stored, refused,
	    s1.entries, s0.entries, s1.ases, s0.ases,
	    (long) (s1.outside_slabs - s0.outside_slabs),
	    (long) (s1.heap_allocs - s0.heap_allocs),
	    (long) (s1.dummies - s0.dummies));
	if (mmtest_failed(&failure))
		return failure.msg;
	if (other)
		return "a store failed with an error other than EFAULT";
	if (s1.entries != s0.entries) {
		snprintf(reason, sizeof(reason), "%ld page hash table records left "
		    "after the address space was released",
		    (long) (s1.entries - s0.entries));
		return reason;
	}
	if (s1.ases != s0.ases)
		return "address spaces left behind";
	if (s1.outside_slabs != s0.outside_slabs) {
		snprintf(reason, sizeof(reason), "%ld frames outside the slabs not "
		    "given back (data frames, page tables)",
		    (long) (s1.outside_slabs - s0.outside_slabs));
		return reason;
	}
	if (s1.heap_allocs - s0.heap_allocs != s1.dummies - s0.dummies)
		return "live heap allocations not back at the baseline";
	/* The race must have run: faults into the area and faults refused. */
	if (stored < cycles || (ncpu >= 2 && refused < cycles / 10)) {
		snprintf(reason, sizeof(reason), "the race was not exercised: %lu "
		    "stores and %lu refused stores in %u cycles", stored, refused,
		    cycles);
		return reason;
	}
	return NULL;
}

const char *test_asrace1(void)
{
	return asrace_run(ASR_CYCLES);
}

const char *test_asrace1long(void)
{
	return asrace_run(ASR_CYCLES_LONG);
}
