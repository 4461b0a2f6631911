/** @file ptprune1.c
 * Test `ptprune1`: page tables freed when their areas go
 * (mm/as.c, prune_tables(); docs/LOCKING.md, "Freeing page tables"), raced
 * by faults in the same and in neighbouring areas.
 *
 * One address space with a stable area A and four neighbours B0..B3 placed
 * so that their tables are shared with A at every level: B0 in A's 2 MiB
 * region (A's last-level table must stay), B1 in another 2 MiB region of
 * A's 1 GiB (its last-level table goes, the directory stays), B2 in another
 * 1 GiB of A's 512 GiB, B3 in another 512 GiB (its whole branch below the
 * root goes). Writer threads (one per CPU but the cycler's) enter it and store
 * to random pages of A and of the Bs through uaccess_store64(): a store to
 * A must succeed and read back what it wrote (a freed table still used, or a
 * frame reused while a walk or a TLB still reached it, would show as a
 * fault or a wrong value); a store to a B may fail with EFAULT only (the
 * area destroyed meanwhile). A cycler destroys and re-creates a random B
 * (or shrinks it to one page and grows it back) ASP_CYCLES times while the
 * writers run.
 *
 * Afterwards (writers gone): every word each writer last wrote to A still
 * holds its value; every B is destroyed once more (no fault in flight: the
 * prune also takes the tables a stale walk may have installed in a freed
 * range, see LOCKING.md), and after rcu_barrier() the address space's
 * count of page-table pages (as_t.pt_pages) equals the tables its tree has
 * and is 3 (A's directory levels and last-level table); prunes freed tables
 * during the race (pt_freed); after as_release() the frames outside the
 * slabs, heap allocations, page hash entries and address spaces are back at
 * their baseline.
 */
#include <test.h>
#include <testlib.h>
#include "mmtest.h"
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <uaccess.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <arch/paging.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <print.h>
#include <time/delay.h>

#define ASP_PAGES       16
#define ASP_A           0x0000000040100000UL
#define ASP_NB          4
#define ASP_MAX_WRITERS 16
#define ASP_CYCLES      200
/*
 * The cycler goes on past ASP_CYCLES until the writers stored ASP_CYCLES / 4
 * times to the stable area and as often to the neighbours and, at two or
 * more CPUs, saw ASP_MIN_REFUSED stores refused by a destroyed or shrunk
 * neighbour (the race this test exists for), up to ASP_CYCLES_MAX: on a
 * loaded host TCG may run the two vCPUs in long turns, and 200 short cycles
 * can then pass without a writer ever landing between a destroy and its
 * create; at one CPU a cycle's yield does not always run the writer (make
 * test's -smp 1 boot, beside another boot: 59 and 49 stores in 200 cycles).
 */
#define ASP_MIN_REFUSED (ASP_CYCLES / 100)
#define ASP_CYCLES_MAX  (10 * ASP_CYCLES)
#define ASP_MAGIC       0x5EED000000000000UL

static const uintptr_t asp_b[ASP_NB] = {
	0x0000000040180000UL,   /* A's 2 MiB region */
	0x0000000040400000UL,   /* another 2 MiB of A's 1 GiB */
	0x0000000080000000UL,   /* another 1 GiB of A's 512 GiB */
	0x0000008040000000UL,   /* another 512 GiB */
};

typedef struct {
	uint64_t seed;
	uint64_t a_stores, b_stores, b_refused;
	/** Last value stored to this writer's word of each page of A. */
	uint64_t last[ASP_PAGES];
} asp_writer_t;

static as_t *asp_as;
static asp_writer_t asp_writers[ASP_MAX_WRITERS];
static unsigned asp_nwriters;
static bool asp_finish;
static mmtest_failure_t asp_failure;
static uint64_t asp_cycles_done;

static uint64_t __user *asp_word(uintptr_t base, size_t page, unsigned w)
{
	return uptr(base + page * PAGE_SIZE + 8 * (w % 64));
}

static void asp_writer(void *arg)
{
	asp_writer_t *wr = arg;
	unsigned w = (unsigned) (wr - asp_writers);
	as_enter(asp_as);
	uint64_t n = 0;
	while (!__atomic_load_n(&asp_finish, __ATOMIC_ACQUIRE) &&
	    !mmtest_failed(&asp_failure)) {
		uint64_t r = mmtest_rand(&wr->seed);
		size_t page = (r >> 8) % ASP_PAGES;
		if (r & 1) {
			uint64_t v = ASP_MAGIC | ((uint64_t) w << 40) | ++n;
			uint64_t back = 0;
			int rc = uaccess_store64(asp_word(ASP_A, page, w), v);
			if (rc == EOK)
				rc = uaccess_load64(asp_word(ASP_A, page, w), &back);
			if (rc != EOK || back != v) {
				mmtest_fail(&asp_failure, "writer %u: page %zu of the "
				    "stable area: %s, read %#lx after storing %#lx", w,
				    page, rc == EOK ? "wrong value" : "fault refused",
				    back, v);
				break;
			}
			wr->last[page] = v;
			/* Read by the cycler: one writer, relaxed. */
			__atomic_store_n(&wr->a_stores, wr->a_stores + 1,
			    __ATOMIC_RELAXED);
		} else {
			uintptr_t b = asp_b[(r >> 4) % ASP_NB];
			int rc = uaccess_store64(asp_word(b, page, w), r);
			/* Read by the cycler: one writer, relaxed. */
			if (rc == EOK) {
				__atomic_store_n(&wr->b_stores, wr->b_stores + 1,
				    __ATOMIC_RELAXED);
			} else if (rc == EFAULT) {
				__atomic_store_n(&wr->b_refused, wr->b_refused + 1,
				    __ATOMIC_RELAXED);
			} else {
				mmtest_fail(&asp_failure, "writer %u: store to a "
				    "neighbour: error %d", w, rc);
				break;
			}
		}
		/* The cycler may share a CPU with us (-smp 1). */
		thread_yield();
	}
	as_leave();
}

/** Writer and cycler share one CPU (set before the threads start). */
static bool asp_one_cpu;

/** Stores the writers saw refused so far (any thread; a snapshot). */
static uint64_t asp_refused(void)
{
	uint64_t n = 0;
	for (unsigned w = 0; w < asp_nwriters; w++)
		n += __atomic_load_n(&asp_writers[w].b_refused, __ATOMIC_RELAXED);
	return n;
}

/** Whether the writers' stores so far exercised the race (a snapshot). */
static bool asp_exercised(void)
{
	uint64_t a = 0, bs = 0;
	for (unsigned w = 0; w < asp_nwriters; w++) {
		a += __atomic_load_n(&asp_writers[w].a_stores, __ATOMIC_RELAXED);
		bs += __atomic_load_n(&asp_writers[w].b_stores, __ATOMIC_RELAXED);
	}
	return a >= ASP_CYCLES / 4 && bs >= ASP_CYCLES / 4 &&
	    (asp_one_cpu || asp_refused() >= ASP_MIN_REFUSED);
}

/** Whether the cycler goes on: ASP_CYCLES, then until the race was seen. */
static bool asp_cycle_more(unsigned c)
{
	if (c < ASP_CYCLES)
		return true;
	return c < ASP_CYCLES_MAX && !asp_exercised();
}

static void asp_cycler(void *arg)
{
	(void) arg;
	uint64_t seed = 0x243F6A8885A308D3UL ^ uptime_us();
	as_enter(asp_as);
	for (unsigned c = 0; asp_cycle_more(c) && !mmtest_failed(&asp_failure);
	    c++) {
		uint64_t r = mmtest_rand(&seed);
		uintptr_t b = asp_b[r % ASP_NB];
		bool shrink = (r >> 8) % 4 == 0;
		int rc = shrink ? as_area_resize(asp_as, b, PAGE_SIZE) :
		    as_area_destroy(asp_as, b);
		/*
		 * Not yet seen refused: hold the neighbour gone a little longer,
		 * so that a writer on another CPU can land in the gap.
		 */
		if (rc == EOK && !asp_one_cpu && c >= ASP_CYCLES / 2 &&
		    asp_refused() < ASP_MIN_REFUSED)
			udelay(50);
		if (rc == EOK)
			rc = shrink ? as_area_resize(asp_as, b, ASP_PAGES * PAGE_SIZE) :
			    as_area_create(asp_as, b, ASP_PAGES * PAGE_SIZE,
			    AS_AREA_READ | AS_AREA_WRITE);
		if (rc != EOK) {
			mmtest_fail(&asp_failure, "cycle %u: %s of %#lx: %d", c,
			    shrink ? "shrink/grow" : "destroy/create", b, rc);
			break;
		}
		/* Its last page mapped: the next destroy or shrink has tables. */
		if (uaccess_store64(asp_word(b, ASP_PAGES - 1, 0), c) != EOK) {
			mmtest_fail(&asp_failure, "cycle %u: store to the neighbour "
			    "%#lx just created failed", c, b);
			break;
		}
		asp_cycles_done++;
		for (unsigned i = (unsigned) ((r >> 16) % 64); i; i--)
			cpu_relax();
		/*
		 * One CPU: the writer shares it, and 200 cycles fit in one
		 * quantum (at -smp 1 it stored once in all of them): yield, so
		 * that its faults fall between the destroys and creates.
		 */
		if (asp_one_cpu)
			thread_yield();
	}
	__atomic_store_n(&asp_finish, true, __ATOMIC_RELEASE);
	as_leave();
}

/** Tables below the root of @a t (of level @a level + 1), counted. */
static size_t asp_count_tables(const uint64_t *t, int level)
{
	size_t n = 0;
	unsigned top = level == 3 ? PT4_USER_SLOTS : PT4_ENTRIES;
	for (unsigned i = 0; i < top; i++) {
		uint64_t e = __atomic_load_n(&t[i], __ATOMIC_RELAXED);
		if (!(e & PT4_PRESENT))
			continue;
		n++;
		if (level > 1)
			n += asp_count_tables(PA2KA(e & PT4_ADDR_MASK), level - 1);
	}
	return n;
}

const char *test_ptprune1(void)
{
	static char reason[240];
	mmtest_snap_t s0, s1;
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = test_online_cpus(online);
	mmtest_failure_reset(&asp_failure);
	mmtest_snap(&s0);

	asp_as = as_create();
	if (!asp_as)
		return "as_create failed";
	int rc = as_area_create(asp_as, ASP_A, ASP_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE);
	for (unsigned i = 0; i < ASP_NB && rc == EOK; i++)
		rc = as_area_create(asp_as, asp_b[i], ASP_PAGES * PAGE_SIZE,
		    AS_AREA_READ | AS_AREA_WRITE);
	if (rc != EOK) {
		as_release(asp_as);
		return "as_area_create failed";
	}
	/* The cycler alone on the last CPU, a writer on each other one. */
	asp_one_cpu = ncpu < 2;
	asp_nwriters = ncpu < 2 ? 1 : (ncpu - 1 > ASP_MAX_WRITERS ?
	    ASP_MAX_WRITERS : ncpu - 1);
	asp_finish = false;
	asp_cycles_done = 0;

	thread_t *th[ASP_MAX_WRITERS + 1];
	unsigned n = 0;
	for (unsigned w = 0; w < asp_nwriters; w++) {
		asp_writers[w] = (asp_writer_t) { .seed = mmtest_mix(w + 7) | 1 };
		th[n] = testlib_create(asp_writer, &asp_writers[w],
		    "ptprune-writer", &cpus[online[w % ncpu]]);
		if (!th[n])
			break;
		n++;
	}
	thread_t *cy = thread_create(asp_cycler, NULL, "ptprune-cycler",
	    THREAD_FLAG_NONE);
	if (cy)
		thread_wire(cy, &cpus[online[ncpu - 1]]);
	else
		asp_finish = true;
	for (unsigned i = 0; i < n; i++)
		thread_start(th[i]);
	if (cy) {
		thread_start(cy);
		(void) thread_join(cy);
	}
	for (unsigned i = 0; i < n; i++)
		(void) thread_join(th[i]);
	if (!cy || n < asp_nwriters) {
		as_release(asp_as);
		return "thread_create failed";
	}

	/* What each writer last stored in A is still there. */
	as_enter(asp_as);
	for (unsigned w = 0; w < asp_nwriters && !mmtest_failed(&asp_failure);
	    w++) {
		for (size_t p = 0; p < ASP_PAGES; p++) {
			uint64_t v = 0, want = asp_writers[w].last[p];
			if (uaccess_load64(asp_word(ASP_A, p, w), &v) != EOK ||
			    v != want) {
				mmtest_fail(&asp_failure, "page %zu of the stable area, "
				    "writer %u's word: %#lx, last stored %#lx", p, w, v,
				    want);
				break;
			}
		}
	}
	as_leave();

	uint64_t a = 0, bs = 0, br = 0;
	for (unsigned w = 0; w < asp_nwriters; w++) {
		a += asp_writers[w].a_stores;
		bs += asp_writers[w].b_stores;
		br += asp_writers[w].b_refused;
	}
	for (unsigned i = 0; i < ASP_NB; i++)
		(void) as_area_destroy(asp_as, asp_b[i]);
	rcu_barrier();
	uint64_t counted = __atomic_load_n(&asp_as->pt_pages, __ATOMIC_RELAXED);
	size_t tree = asp_count_tables(asp_as->root, 3);
	as_stats_t st = as_stats(asp_as);
	as_release(asp_as);
	asp_as = NULL;
	mmtest_snap(&s1);
	TPRINTF("ptprune1: %u writers, %lu cycles (at least %u): %lu stores to the stable "
	    "area, %lu to neighbours (%lu refused); tables freed %lu, held at the "
	    "end %lu (tree %zu); frames outside slabs %ld, heap allocations %ld, "
	    "entries %ld, address spaces %ld\n", asp_nwriters, asp_cycles_done,
	    ASP_CYCLES, a, bs, br, st.pt_freed, counted, tree,
	    (long) (s1.outside_slabs - s0.outside_slabs),
	    (long) (s1.heap_allocs - s0.heap_allocs),
	    (long) (s1.entries - s0.entries), (long) (s1.ases - s0.ases));
	if (mmtest_failed(&asp_failure))
		return asp_failure.msg;
	if (counted != tree || tree != 3) {
		snprintf(reason, sizeof(reason), "page tables: %lu counted, %zu in "
		    "the tree, 3 expected (the stable area's)", counted, tree);
		return reason;
	}
	if (st.pt_freed < asp_cycles_done / 2)
		return "the prunes freed fewer tables than the cycles destroyed";
	if (s1.outside_slabs != s0.outside_slabs || s1.entries != s0.entries ||
	    s1.ases != s0.ases ||
	    s1.heap_allocs - s0.heap_allocs != s1.dummies - s0.dummies)
		return "counters not back at the baseline after as_release()";
	if (!asp_exercised()) {
		snprintf(reason, sizeof(reason), "the race was not exercised: %lu "
		    "stores to A, %lu to the neighbours, %lu refused", a, bs, br);
		return reason;
	}
	return NULL;
}
