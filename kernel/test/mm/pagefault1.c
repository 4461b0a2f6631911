/** @file pagefault1.c
 * Concurrent page faults, unmaps and re-faults on every CPU, in one shared and in
 * private address spaces, checked against a shadow record; no stale translation
 * survives an unmap.
 *
 * Threads: T, one wired to each online CPU (two on a single CPU, so that there is
 * always another thread of the address space).
 *
 * Phase 1 (shadow). The shared address space has an area of about PF_SHARED_ALL
 * pages; thread t owns the pages i with i % T == t (interleaved, so that the
 * threads share page tables and every unmap shoots down CPUs that use the same
 * tables). Each thread also has a private address space whose area lies at the
 * same address. For PF_ROUNDS rounds a thread enters the shared address space,
 * takes one random step on each of its pages, leaves, enters its private one and
 * does the same there. A step reads the page and compares it with the shadow
 * (never touched or unmapped: zero, and the read faults a fresh zero page in;
 * written: the pattern of its generation, which includes the address space),
 * writes a new generation (on an unmapped page without reading first: a write
 * fault), or unmaps it (EOK if it was mapped, ENOENT if not: exact, the page is
 * owned).
 *
 * Phase 2 (stale translations). The pair protocol between a writer A and a reader
 * B of A's pages, steps separated by barriers (atomics only, no timing):
 *   1. A writes a pattern;  2. B reads it (its CPU caches the translations);
 *   3. A unmaps the pages (as_unmap_page shoots down the CPUs running the
 *      address space; in odd generations one as_unmap_range for all of them,
 *      one shootdown for the range);
 *   4. B reads again -- half of the pages; the other half it writes at once --
 *      and must read zero (a fresh page); the faults of the address space during
 *      this step must be exactly one per page (fewer means that a stale
 *      translation was used); B writes a second pattern;
 *   5. A must read B's second pattern (a write through a stale entry would have
 *      gone to the old frame).
 * 2a: all T threads in the shared address space; thread A's reader is A + 1
 *     (mod T): the unmaps shoot down all T CPUs (slow under TCG, so once).
 * 2b: every pair of threads {i, j} has an address space of its own; in the
 *     rounds of a round-robin tournament every thread meets every other one (each
 *     is A and B at once), PF_PAIR_REPS times. The shootdowns go to two CPUs
 *     only, so many more pages and pairs fit in the time.
 * With one CPU both threads share it and the barriers yield: switching between
 * two threads of one address space keeps CR3, so the shootdown of the local TLB
 * (invlpg) is what is tested.
 *
 * Phase 3 (the same pages). All T threads enter one more address space with
 * PF_HOT pages. Before each round (at a barrier) every page but the first is
 * unmapped at once (the area shrunk to one page and grown back); then all
 * threads access every page in the same order, so that they fault the same
 * pages at the same time: read the thread's own word of the page (0 after an
 * unmap, otherwise what it wrote last; the threads meet at each page first,
 * waiting at most PF_HOT_MEET_US for each other), write a new value, check the other
 * threads' words (0 or a value of theirs for this page). One page in
 * PF_HOT_UNMAP_EVERY is also fought over: after the meeting the round's
 * unmapper unmaps it again and again for PF_HOT_FIGHT_US while the others
 * keep reading it (faulting it in after each unmap); then it is accessed as
 * the others and unmapped singly by the unmapper right after its access,
 * while the others may still fault it (EOK exactly). Two faults
 * of one page meet (one loses the insert, EEXIST, or finds the record the
 * other inserted: a minor fault) and faults race unmaps. The address space
 * counts both races exactly: faults_raced (lost the insert: EEXIST) and
 * faults_unmapped (the locked re-check found the record gone or mapping
 * another frame: an unmap came between lookup and install). Accounting:
 * faults = minor + inserting + EEXIST, inserting = pages_mapped + unmaps, so
 * EEXIST computed from the other counters must equal faults_raced exactly (no
 * other fault path is taken: the area only changes at the barrier). There
 * are at least PF_HOT_ROUNDS rounds, and with two CPUs or more the rounds go
 * on (at most PF_HOT_MAX_ROUNDS) until faults_raced >= PF_HOT_MIN_RACED and
 * faults_unmapped >= PF_HOT_MIN_UNMAPPED; a run that did not get there fails
 * (with one CPU they are printed only). The single unmaps that overlapped
 * another thread's access (one in progress or started during the unmap) are
 * printed. Also checked: pages_mapped equals the hot pages in the table,
 * PF_HOT / PF_HOT_UNMAP_EVERY single unmaps per round, every mapped hot page
 * holds 0 or each thread's last value.
 *
 * Checks at the end, by this thread: exactly the pages the shadows say are
 * mapped are in the page hash table; pages_mapped of every address space and the
 * table's entries agree; every mapped shared page reads its shadow's contents.
 *
 * The table grows while thousands of pages are mapped and shrinks back when the
 * address spaces are destroyed: with the CHT back end the test requires at least
 * one grow and one shrink and the bucket count back at its start (`pageht`
 * before/after is printed). Afterwards (rcu_barrier, slab_reclaim): table entries
 * and address spaces at the baseline, threads not above it, live heap
 * allocations at the baseline plus the CHT's bucket dummies, frames outside the
 * slab allocator (data frames, page tables) exactly at the baseline -- heap
 * allocations and frames net of the threads that exist (a stack and a
 * descriptor each); the free frame delta (slabs kept partially used) is
 * printed.
 */
#include <test.h>
#include <tests.h>
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <adt/cht.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <time/delay.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <stdarg.h>
#include <errno.h>
#include <lib/str.h>
#include "mmtest.h"

#define PF_BASE         0x10000000UL
/** Pages of the shared area (all threads together, at least 64 each). */
#define PF_SHARED_ALL   640
#define PF_SHARED_MIN   64
#define PF_SHARED_MAX   (PF_SHARED_ALL / 2)
#define PF_PRIV         96
#define PF_ROUNDS       3
/** Phase 2a: pages per thread, reader distances. */
#define PF_SPAIR_BASE   0x40000000UL
#define PF_SPAIR_K      4
#define PF_SPAIR_DISTS  1
/** Phase 2b: pages per thread and pair, tournaments. */
#define PF_PAIR_BASE    0x50000000UL
#define PF_PAIR_K       4
#define PF_PAIR_REPS    2
/**
 * Phase 3: pages every thread faults and unmaps; rounds (at least
 * PF_HOT_ROUNDS, at most PF_HOT_MAX_ROUNDS: until the races were seen); one
 * page in PF_HOT_UNMAP_EVERY is also unmapped singly in each round.
 */
#define PF_HOT_BASE     0x60000000UL
#define PF_HOT          64
#define PF_HOT_ROUNDS   4
#define PF_HOT_MAX_ROUNDS 128
/** Longest wait of a thread at a hot page for the others (microseconds). */
#define PF_HOT_MEET_US  200
#define PF_HOT_UNMAP_EVERY 4
/** How long the unmapper fights the others' faults on such a page (us). */
#define PF_HOT_FIGHT_US 2000
/**
 * Phase 3 with two CPUs or more must show the races it exists for at least
 * this often (the address space's exact counters): two faults on one page at
 * once, one losing the insert to the other (faults_raced), and a fault whose
 * page was unmapped between its lookup and its install (faults_unmapped).
 */
#define PF_HOT_MIN_RACED    4
#define PF_HOT_MIN_UNMAPPED 1
#define MAX_THREADS     CONFIG_MAX_CPUS

/** Words of a page that carry the pattern. */
static const unsigned pat_words[] = { 0, 1, 256, 511 };

enum { PG_ABSENT = 0, PG_ZERO, PG_PAT };

typedef struct {
	uint32_t gen;
	uint8_t state;
} pf_page_t;

/* Errors (any thread); the first message is kept. */
static mmtest_failure_t failure;

/*
 * Barrier; the last thread to arrive runs a function before the others go on.
 * It also carries the fault check of the pair protocol.
 */
typedef struct {
	mmtest_barrier_t b;
	/** Pair protocol: the address space, its faults before step 4, the
	 * faults step 4 must take, steps 4 checked. Written by the last thread
	 * to arrive, read after the barrier. */
	as_t *as;
	uint64_t faults_before;
	uint64_t want;
	unsigned checks;
} pf_bar_t;

static inline pf_bar_t *pf_bar(mmtest_barrier_t *b)
{
	return container_of(b, pf_bar_t, b);
}

static void pf_bar_wait(pf_bar_t *b, void (*fn)(mmtest_barrier_t *))
{
	mmtest_barrier_wait(&b->b, fn);
}

/* Page contents */

static uint64_t pat(uintptr_t va, uint64_t gen, uint64_t salt, unsigned word)
{
	return mmtest_mix(va ^ (gen << 32) ^ salt ^ ((uint64_t) word << 52)) | 1;
}

static void page_write(uintptr_t va, uint64_t gen, uint64_t salt)
{
	uint64_t *w = (uint64_t *) va;
	for (unsigned i = 0; i < ARRAY_SIZE(pat_words); i++)
		__atomic_store_n(&w[pat_words[i]], pat(va, gen, salt, pat_words[i]),
		    __ATOMIC_RELAXED);
}

/**
 * Compares the pattern words with generation @a gen (@a zero: with 0).
 * Sets *ok; @return the first wrong word read (0 if all match).
 */
static uint64_t page_cmp(uintptr_t va, uint64_t gen, uint64_t salt, bool zero,
    bool *ok)
{
	uint64_t *w = (uint64_t *) va;
	*ok = true;
	for (unsigned i = 0; i < ARRAY_SIZE(pat_words); i++) {
		uint64_t v = __atomic_load_n(&w[pat_words[i]], __ATOMIC_RELAXED);
		if (v != (zero ? 0 : pat(va, gen, salt, pat_words[i]))) {
			*ok = false;
			return v;
		}
	}
	return 0;
}

/* Test state */

typedef struct {
	unsigned index;
	unsigned cpu;
	uint64_t seed;
	as_t *priv;
	pf_page_t shared[PF_SHARED_MAX];
	pf_page_t own[PF_PRIV];
	size_t steps;
	size_t unmaps;
	size_t pair_rounds;
	/** Phase 3: the value it wrote last into each hot page (its word). */
	uint64_t hot_last[PF_HOT];
	size_t hot_unmaps;
	/** Phase 3: its unmaps (EOK) while the others fault the page. */
	size_t hot_extra_unmaps;
	/** Phase 3: its unmaps during which another thread accessed the page. */
	size_t hot_overlaps;
} pf_arg_t;

/** Phase 2b: the address space and barrier of threads i < j, at [i * T + j]. */
typedef struct {
	as_t *as;
	pf_bar_t bar;
} pf_pair_t;

static pf_arg_t args[MAX_THREADS];
static thread_t *handles[MAX_THREADS];
static unsigned nthreads;
static unsigned shared_per;     /**< shared pages per thread */
static pf_bar_t bar;
static as_t *shared_as;
static pf_pair_t *pairs;
static size_t peak_buckets;
static size_t peak_entries;
static uint64_t phase1_end_us, phase2a_end_us, phase3_end_us;
/** Phase 3: the address space of the hot pages. */
static as_t *hot_as;
/** Phase 3: threads inside an access of each hot page. Atomics (seq_cst). */
static unsigned hot_busy[PF_HOT];
/** Phase 3: accesses of each hot page started so far. Atomics (seq_cst). */
static unsigned hot_seq[PF_HOT];
/** Phase 3: threads that reached each hot page in this round. Atomics;
 * reset by the barrier function between rounds. */
static unsigned hot_arrived[PF_HOT];
/** Phase 3: the last round (+ 1) whose unmap fight on each hot page is over
 * (hot_step). Atomics (seq_cst). */
static unsigned hot_fought[PF_HOT];
/**
 * Phase 3, written by the barrier function only (the barrier orders them
 * for the threads): rounds started, whether another round runs, pages the
 * bulk unmaps removed; CPUs online (set before the threads start).
 */
static unsigned hot_rounds;
static bool hot_more;
static size_t hot_bulk_unmapped;
static unsigned hot_online;

static uintptr_t shared_page(unsigned t, unsigned j)
{
	return PF_BASE + ((uintptr_t) j * nthreads + t) * PAGE_SIZE;
}

static void sample_table(void)
{
	page_ht_stats_t ps;
	page_ht_get_stats(&ps);
	if (ps.buckets > peak_buckets)
		peak_buckets = ps.buckets;
	if (ps.entries > peak_entries)
		peak_entries = ps.entries;
}

static void phase1_end(mmtest_barrier_t *b)
{
	phase1_end_us = uptime_us();
	/*
	 * A grow that phase 1 requested runs as system work; on one CPU it may
	 * not have had a turn yet (phase 1 can take under 10 ms). Let a resize
	 * in flight finish (bounded: 5 s) before the peak is sampled; whether
	 * the table grew is still required below.
	 */
	cht_stats_t st;
	for (unsigned i = 0; i < 5000 && mmtest_pageht_cht_stats(&st) &&
	    st.resizing; i++)
		thread_usleep(1000);
	sample_table();
}

static void phase2a_end(mmtest_barrier_t *b)
{
	phase2a_end_us = uptime_us();
}

static void phase3_end(mmtest_barrier_t *b)
{
	phase3_end_us = uptime_us();
}

/* Phase 3 */

static uintptr_t hot_page(unsigned j)
{
	return PF_HOT_BASE + (uintptr_t) j * PAGE_SIZE;
}

/** The value thread @a t writes into its word of hot page @a j in round @a r. */
static uint64_t hot_val(unsigned t, unsigned r, unsigned j)
{
	return ((uint64_t) (r + 1) << 32) | ((uint64_t) j << 16) | (t << 4) | 1;
}

/** Could thread @a q have written @a x into hot page @a j? */
static bool hot_valid(uint64_t x, unsigned q, unsigned j)
{
	return (x & 0xffff) == ((q << 4) | 1) && ((x >> 16) & 0xffff) == j &&
	    (x >> 32) >= 1 && (x >> 32) <= PF_HOT_MAX_ROUNDS;
}

/** Is hot page @a j unmapped singly in round @a r, and by which thread? */
static bool hot_unmapper(unsigned j, unsigned r, unsigned *t)
{
	*t = (j / PF_HOT_UNMAP_EVERY + r) % nthreads;
	return j % PF_HOT_UNMAP_EVERY == PF_HOT_UNMAP_EVERY / 2;
}

/** Phase 3 counts (hot_counts). */
typedef struct {
	uint64_t faults, minor, inserted, lost;
	/** The address space's own race counters. */
	uint64_t raced, unmapped;
	size_t unmaps, overlaps;
} hot_counts_t;

/**
 * The hot address space's fault accounting (all threads at a barrier or
 * joined): every fault found the record (minor: another CPU's fault had
 * inserted it and not yet installed the entry, since unmaps remove both),
 * inserted it (pages_mapped + 1; every unmap takes 1 off) or lost the insert
 * to another CPU's fault of the same page (EEXIST): the last is computed
 * (lost) and must equal the address space's faults_raced.
 */
static void hot_counts(hot_counts_t *c)
{
	c->unmaps = hot_bulk_unmapped;
	c->overlaps = 0;
	for (unsigned t = 0; t < nthreads; t++) {
		c->unmaps += args[t].hot_unmaps + args[t].hot_extra_unmaps;
		c->overlaps += args[t].hot_overlaps;
	}
	c->faults = __atomic_load_n(&hot_as->faults, __ATOMIC_RELAXED);
	c->minor = __atomic_load_n(&hot_as->faults_minor, __ATOMIC_RELAXED);
	c->raced = __atomic_load_n(&hot_as->faults_raced, __ATOMIC_RELAXED);
	c->unmapped = __atomic_load_n(&hot_as->faults_unmapped, __ATOMIC_RELAXED);
	c->inserted = __atomic_load_n(&hot_as->pages_mapped, __ATOMIC_RELAXED) +
	    c->unmaps;
	c->lost = c->faults - c->minor - c->inserted;
}

/** Were the races of phase 3 seen often enough (or are they not required)? */
static bool hot_races_enough(void)
{
	hot_counts_t c;
	if (hot_online < 2)
		return true;
	hot_counts(&c);
	return c.raced >= PF_HOT_MIN_RACED && c.unmapped >= PF_HOT_MIN_UNMAPPED;
}

/**
 * Barrier function before each round of phase 3 (the last thread to arrive):
 * decides whether another round runs (at least PF_HOT_ROUNDS; more, up to
 * PF_HOT_MAX_ROUNDS, until the races were seen often enough) and, if so,
 * unmaps every hot page but the first at once (the area shrunk to one page
 * and grown back: one TLB flush), so that all threads fault them again.
 */
static void hot_round_fn(mmtest_barrier_t *b)
{
	unsigned done = hot_rounds;
	hot_more = done < PF_HOT_ROUNDS ||
	    (done < PF_HOT_MAX_ROUNDS && !hot_races_enough());
	if (!hot_more)
		return;
	hot_rounds = done + 1;
	for (unsigned j = 0; j < PF_HOT; j++)
		__atomic_store_n(&hot_arrived[j], 0, __ATOMIC_RELAXED);
	uint64_t before = __atomic_load_n(&hot_as->pages_mapped, __ATOMIC_RELAXED);
	if (as_area_resize(hot_as, PF_HOT_BASE, PAGE_SIZE) != EOK ||
	    as_area_resize(hot_as, PF_HOT_BASE, PF_HOT * PAGE_SIZE) != EOK)
		mmtest_fail(&failure, "phase 3: as_area_resize failed");
	hot_bulk_unmapped += before -
	    __atomic_load_n(&hot_as->pages_mapped, __ATOMIC_RELAXED);
}

/**
 * Thread @a a accesses hot page @a j in round @a r: reads its word (0 after an
 * unmap, else what it wrote last), writes a new value, checks the other
 * threads' words (0 or a value of theirs for this page). Some pages are then
 * unmapped singly by the round's unmapper while the others still fault them.
 */
static void hot_step(pf_arg_t *a, unsigned j, unsigned r)
{
	unsigned t = a->index, u;
	uint64_t *w = (uint64_t *) hot_page(j);

	/*
	 * Meet the other threads at the page (a bounded wait, only when every
	 * thread has a CPU of its own), so that they fault it at the same time.
	 */
	if (__atomic_add_fetch(&hot_arrived[j], 1, __ATOMIC_SEQ_CST) < nthreads &&
	    !bar.b.yield) {
		uint64_t t0 = uptime_us();
		while (__atomic_load_n(&hot_arrived[j], __ATOMIC_SEQ_CST) < nthreads &&
		    uptime_us() - t0 < PF_HOT_MEET_US)
			cpu_relax();
	}

	/*
	 * On a page that is unmapped singly in this round, first a fight for
	 * PF_HOT_FIGHT_US (only when every thread has a CPU of its own): the
	 * round's unmapper keeps unmapping the page while the others keep
	 * reading their words of it (0, or what they wrote last), faulting it
	 * in again after each unmap, so that unmaps land between another CPU's
	 * fault's lookup or insert and its install (faults_unmapped). Unmaps
	 * return EOK or ENOENT; the others stop when the unmapper says so (at
	 * the latest after twice that time).
	 */
	if (hot_unmapper(j, r, &u) && !bar.b.yield) {
		uint64_t t0 = uptime_us();
		if (u == t) {
			while (uptime_us() - t0 < PF_HOT_FIGHT_US) {
				int rc = as_unmap_page(hot_as, hot_page(j));
				if (rc == EOK)
					a->hot_extra_unmaps++;
				else if (rc != ENOENT)
					mmtest_fail(&failure, "thread %u: unmap of hot page %#lx "
					    "returned %d", t, hot_page(j), rc);
			}
			__atomic_store_n(&hot_fought[j], r + 1, __ATOMIC_SEQ_CST);
		} else {
			while (__atomic_load_n(&hot_fought[j], __ATOMIC_SEQ_CST) <= r &&
			    uptime_us() - t0 < 2 * PF_HOT_FIGHT_US) {
				uint64_t got = __atomic_load_n(&w[t], __ATOMIC_RELAXED);
				if (got != 0 && got != a->hot_last[j])
					mmtest_fail(&failure, "thread %u: hot page %#lx: its word reads "
					    "%#lx during the unmaps, it wrote %#lx last (or 0 after an "
					    "unmap)", t, hot_page(j), got, a->hot_last[j]);
				cpu_relax();
			}
		}
	}

	__atomic_fetch_add(&hot_busy[j], 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&hot_seq[j], 1, __ATOMIC_SEQ_CST);
	uint64_t got = __atomic_load_n(&w[t], __ATOMIC_RELAXED);
	if (got != 0 && got != a->hot_last[j])
		mmtest_fail(&failure, "thread %u: hot page %#lx: its word reads %#lx, it wrote "
		    "%#lx last (or 0 after an unmap)", t, hot_page(j), got,
		    a->hot_last[j]);
	uint64_t v = hot_val(t, r, j);
	__atomic_store_n(&w[t], v, __ATOMIC_RELAXED);
	a->hot_last[j] = v;
	for (unsigned q = 0; q < nthreads; q++) {
		uint64_t x = __atomic_load_n(&w[q], __ATOMIC_RELAXED);
		if (q != t && x != 0 && !hot_valid(x, q, j))
			mmtest_fail(&failure, "thread %u: hot page %#lx: word of thread %u reads "
			    "%#lx", t, hot_page(j), q, x);
	}
	__atomic_fetch_sub(&hot_busy[j], 1, __ATOMIC_SEQ_CST);

	if (!hot_unmapper(j, r, &u) || u != t)
		return;
	/* Only this thread unmaps page j in this round, just after writing it. */
	/* Another access was in progress or started while it unmapped. */
	unsigned seq = __atomic_load_n(&hot_seq[j], __ATOMIC_SEQ_CST);
	unsigned others = __atomic_load_n(&hot_busy[j], __ATOMIC_SEQ_CST);
	int rc = as_unmap_page(hot_as, hot_page(j));
	others += __atomic_load_n(&hot_busy[j], __ATOMIC_SEQ_CST);
	others += __atomic_load_n(&hot_seq[j], __ATOMIC_SEQ_CST) != seq;
	if (rc != EOK)
		mmtest_fail(&failure, "thread %u: unmap of hot page %#lx it had just written "
		    "returned %d", t, hot_page(j), rc);
	a->hot_unmaps++;
	if (others)
		a->hot_overlaps++;
}

/* Phase 1 */

/** One random step on page @a va of address space @a as; see the file comment. */
static void step(pf_arg_t *a, as_t *as, uintptr_t va, pf_page_t *pg,
    uint64_t salt)
{
	uint64_t r = mmtest_rand(&a->seed);
	unsigned act = r % 16;
	bool ok;
	uint64_t got;

	a->steps++;
	if (act >= 13) {
		int rc = as_unmap_page(as, va);
		int want = pg->state == PG_ABSENT ? ENOENT : EOK;
		if (rc != want)
			mmtest_fail(&failure, "thread %u: unmap of %s page %#lx returned %d, expected %d",
			    a->index, salt ? "private" : "shared", va, rc, want);
		pg->state = PG_ABSENT;
		a->unmaps++;
		return;
	}
	if (act >= 6 && pg->state == PG_ABSENT) {
		/* Write fault on an unmapped page. */
		page_write(va, ++pg->gen, salt);
		pg->state = PG_PAT;
		return;
	}
	got = page_cmp(va, pg->gen, salt, pg->state != PG_PAT, &ok);
	if (!ok)
		mmtest_fail(&failure, "thread %u: %s page %#lx (%s, generation %u) read %#lx",
		    a->index, salt ? "private" : "shared", va,
		    pg->state == PG_PAT ? "written" : "unmapped or zero", pg->gen, got);
	if (pg->state == PG_ABSENT)
		pg->state = PG_ZERO;
	if (act >= 6) {
		page_write(va, ++pg->gen, salt);
		pg->state = PG_PAT;
	}
}

static uint64_t priv_salt(unsigned t)
{
	return ((uint64_t) t + 1) << 56;
}

/* Phase 2 */

static void pair_before_reads(mmtest_barrier_t *mb)
{
	pf_bar_t *b = pf_bar(mb);
	b->faults_before = __atomic_load_n(&b->as->faults, __ATOMIC_RELAXED);
}

static void pair_after_reads(mmtest_barrier_t *mb)
{
	pf_bar_t *b = pf_bar(mb);
	uint64_t f = __atomic_load_n(&b->as->faults, __ATOMIC_RELAXED);
	if (f - b->faults_before != b->want)
		mmtest_fail(&failure, "stale translation? address space %lu: %lu faults after "
		    "the unmaps of %lu pages, expected one per page", b->as->id,
		    f - b->faults_before, b->want);
	b->checks++;
}

/**
 * The pair protocol (file comment) for thread @a a in @a as: it writes and
 * unmaps its @a k pages at @a mine and reads and writes those of thread
 * @a partner at @a theirs. All threads of barrier @a b run it together.
 */
static void pair_protocol(pf_arg_t *a, as_t *as, pf_bar_t *b, uintptr_t mine,
    uintptr_t theirs, unsigned k, unsigned partner, uint64_t gen)
{
	uint64_t g1 = 2 * gen + 1, g2 = 2 * gen + 2;
	bool ok;
	uint64_t got;

	for (unsigned j = 0; j < k; j++)
		page_write(mine + j * PAGE_SIZE, g1, 0);
	pf_bar_wait(b, NULL);
	/* B reads them: its CPU caches the translations. */
	for (unsigned j = 0; j < k; j++) {
		got = page_cmp(theirs + j * PAGE_SIZE, g1, 0, false, &ok);
		if (!ok)
			mmtest_fail(&failure, "thread %u: page %#lx of thread %u read %#lx before the "
			    "unmap", a->index, theirs + j * PAGE_SIZE, partner, got);
	}
	pf_bar_wait(b, NULL);
	/*
	 * A unmaps its pages: one by one (a shootdown each) in even generations,
	 * as one range (one shootdown for all) in odd ones.
	 */
	if (gen % 2) {
		size_t removed;
		int rc = as_unmap_range(as, mine, k, &removed);
		if (rc != EOK || removed != k)
			mmtest_fail(&failure, "thread %u: unmap of its %u pages at %#lx: rc %d, "
			    "%zu removed", a->index, k, mine, rc, removed);
	} else {
		for (unsigned j = 0; j < k; j++) {
			if (as_unmap_page(as, mine + j * PAGE_SIZE) != EOK)
				mmtest_fail(&failure, "thread %u: unmap of its page %#lx failed",
				    a->index, mine + j * PAGE_SIZE);
		}
	}
	pf_bar_wait(b, pair_before_reads);
	/* B must fault and see fresh pages; then it writes. */
	for (unsigned j = 0; j < k; j++) {
		uintptr_t va = theirs + j * PAGE_SIZE;
		if (j % 2 == 0) {
			got = page_cmp(va, 0, 0, true, &ok);
			if (!ok)
				mmtest_fail(&failure, "stale translation: thread %u on CPU %u read %#lx "
				    "from page %#lx after thread %u unmapped it", a->index,
				    CPU->id, got, va, partner);
		}
		page_write(va, g2, 0);
	}
	pf_bar_wait(b, pair_after_reads);
	/* A reads what B wrote. */
	for (unsigned j = 0; j < k; j++) {
		got = page_cmp(mine + j * PAGE_SIZE, g2, 0, false, &ok);
		if (!ok)
			mmtest_fail(&failure, "thread %u: page %#lx reads %#lx, not what thread %u "
			    "wrote after the unmap (a write through a stale entry?)",
			    a->index, mine + j * PAGE_SIZE, got, partner);
	}
	pf_bar_wait(b, NULL);
	a->pair_rounds++;
}

/** Tournament slots: T rounded up to even (one thread sits out if T is odd). */
static unsigned slots(void)
{
	return nthreads + (nthreads & 1);
}

/** Partner of thread @a i in round @a r (circle method); >= T: none. */
static unsigned partner_of(unsigned i, unsigned r)
{
	unsigned m = slots() - 1;
	if (i == m)
		return r;
	if (i == r)
		return m;
	return (2 * r + m - i) % m;
}

static void pf_thread(void *p)
{
	pf_arg_t *a = p;
	unsigned t = a->index;
	uint64_t salt = priv_salt(t);

	pf_bar_wait(&bar, NULL);
	for (unsigned round = 0; round < PF_ROUNDS; round++) {
		as_enter(shared_as);
		for (unsigned j = 0; j < shared_per; j++)
			step(a, shared_as, shared_page(t, j), &a->shared[j], 0);
		as_leave();
		as_enter(a->priv);
		for (unsigned j = 0; j < PF_PRIV; j++)
			step(a, a->priv, PF_BASE + (uintptr_t) j * PAGE_SIZE, &a->own[j],
			    salt);
		as_leave();
		if (t == 0)
			sample_table();
	}
	pf_bar_wait(&bar, phase1_end);

	/* 2a: everybody in the shared address space. */
	as_enter(shared_as);
	for (unsigned d = 1; d <= PF_SPAIR_DISTS && d < nthreads; d++) {
		unsigned owner = (t + nthreads - d) % nthreads;
		pair_protocol(a, shared_as, &bar,
		    PF_SPAIR_BASE + (uintptr_t) t * PF_SPAIR_K * PAGE_SIZE,
		    PF_SPAIR_BASE + (uintptr_t) owner * PF_SPAIR_K * PAGE_SIZE,
		    PF_SPAIR_K, owner, d);
	}
	as_leave();
	pf_bar_wait(&bar, phase2a_end);

	/* 3: everybody faults and unmaps the same pages, in the same order. */
	as_enter(hot_as);
	pf_bar_wait(&bar, hot_round_fn);
	for (unsigned r = 0; hot_more; r++) {
		for (unsigned j = 0; j < PF_HOT; j++)
			hot_step(a, j, r);
		pf_bar_wait(&bar, hot_round_fn);
	}
	as_leave();
	pf_bar_wait(&bar, phase3_end);

	/* 2b: a tournament of pairs, each pair in its own address space. */
	for (unsigned rep = 0; rep < PF_PAIR_REPS; rep++) {
		for (unsigned r = 0; r + 1 < slots(); r++) {
			unsigned q = partner_of(t, r);
			if (q >= nthreads)
				continue;
			unsigned lo = t < q ? t : q, hi = t < q ? q : t;
			pf_pair_t *pp = &pairs[lo * nthreads + hi];
			uintptr_t first = PF_PAIR_BASE;
			uintptr_t second = PF_PAIR_BASE + PF_PAIR_K * PAGE_SIZE;
			as_enter(pp->as);
			pair_protocol(a, pp->as, &pp->bar, t == lo ? first : second,
			    t == lo ? second : first, PF_PAIR_K, q, 0x100 + rep);
			/* Odd threads exit inside the last one (the exit leaves it). */
			if (rep + 1 < PF_PAIR_REPS || r + 2 < slots() || t % 2 == 0)
				as_leave();
		}
	}
	if (CPU->id != a->cpu)
		mmtest_fail(&failure, "wired thread runs on another CPU");
}

/**
 * Phase 3 at the end (this thread): the fault accounting of the hot address
 * space and the races it shows; every mapped hot page holds, in each thread's
 * word, 0 or the value that thread wrote last. @return the hot pages mapped.
 */
static size_t check_hot(void)
{
	hot_counts_t c;
	size_t single = 0, extra = 0, mapped = 0;
	pte_t pte;
	/* Read before this thread touches the pages. */
	hot_counts(&c);
	for (unsigned t = 0; t < nthreads; t++) {
		single += args[t].hot_unmaps;
		extra += args[t].hot_extra_unmaps;
	}
	for (unsigned j = 0; j < PF_HOT; j++)
		mapped += page_mapping_find(hot_as, hot_page(j), &pte);
	uint64_t pages = __atomic_load_n(&hot_as->pages_mapped, __ATOMIC_RELAXED);
	TPRINTF("pagefault1: phase 3: %u threads x %u rounds on the same %u pages "
	    "in %lu ms: %lu faults: %lu inserted the page, %lu lost the insert to "
	    "another CPU (faults_raced; %lu by the accounting), %lu found another "
	    "fault's record, %lu found their page unmapped before the install "
	    "(faults_unmapped); %zu unmaps (%zu single, %zu of them while another "
	    "thread accessed the page; %zu more fighting the others' faults); %zu "
	    "mapped at the end\n", nthreads, hot_rounds, PF_HOT,
	    (phase3_end_us - phase2a_end_us) / 1000, c.faults, c.inserted,
	    c.raced, c.lost, c.minor, c.unmapped, c.unmaps, single, c.overlaps,
	    extra, mapped);
	if (pages != mapped)
		mmtest_fail(&failure, "hot address space: pages_mapped %lu, %zu pages in the "
		    "table", pages, mapped);
	if (hot_rounds < PF_HOT_ROUNDS || single != (size_t) hot_rounds *
	    (PF_HOT / PF_HOT_UNMAP_EVERY))
		mmtest_fail(&failure, "phase 3 ran %u rounds with %zu single unmaps, %u "
		    "per round expected", hot_rounds, single,
		    PF_HOT / PF_HOT_UNMAP_EVERY);
	if (c.faults < c.minor + c.inserted || c.lost != c.raced)
		mmtest_fail(&failure, "hot address space: %lu faults - %lu minor - %lu "
		    "inserting = %ld lost inserts, but faults_raced is %lu", c.faults,
		    c.minor, c.inserted, (long) (c.faults - c.minor - c.inserted),
		    c.raced);
	else if (hot_online >= 2 && c.raced < PF_HOT_MIN_RACED)
		mmtest_fail(&failure, "phase 3: in %u rounds only %lu faults lost the insert "
		    "to another CPU's fault of the same page (faults_raced; at least %d "
		    "required)", hot_rounds, c.raced, PF_HOT_MIN_RACED);
	else if (hot_online >= 2 && c.unmapped < PF_HOT_MIN_UNMAPPED)
		mmtest_fail(&failure, "phase 3: in %u rounds only %lu faults found their page "
		    "unmapped before the install (faults_unmapped; at least %d "
		    "required)", hot_rounds, c.unmapped, PF_HOT_MIN_UNMAPPED);

	as_enter(hot_as);
	for (unsigned j = 0; j < PF_HOT; j++) {
		if (!page_mapping_find(hot_as, hot_page(j), &pte))
			continue;
		uint64_t *w = (uint64_t *) hot_page(j);
		for (unsigned t = 0; t < nthreads; t++) {
			uint64_t x = __atomic_load_n(&w[t], __ATOMIC_RELAXED);
			if (x != 0 && x != args[t].hot_last[j])
				mmtest_fail(&failure, "hot page %#lx: word of thread %u reads %#lx at the "
				    "end, it wrote %#lx last", hot_page(j), t, x,
				    args[t].hot_last[j]);
		}
	}
	as_leave();
	return mapped;
}

/** Checks by this thread at the end: table contents against the shadows. */
static void check_shadows(size_t entries0)
{
	/* The pair pages are mapped: B wrote them after the last unmap. */
	size_t mapped_shared = nthreads * PF_SPAIR_K;
	size_t mapped_other = 0;
	pte_t pte;

	for (unsigned t = 0; t < nthreads; t++) {
		pf_arg_t *a = &args[t];
		size_t mapped_priv = 0;
		for (unsigned j = 0; j < shared_per; j++) {
			bool want = a->shared[j].state != PG_ABSENT;
			if (page_mapping_find(shared_as, shared_page(t, j), &pte) != want)
				mmtest_fail(&failure, "shared page %#lx: in the table %s, shadow says %s",
				    shared_page(t, j), want ? "no" : "yes",
				    want ? "mapped" : "unmapped");
			mapped_shared += want;
		}
		for (unsigned j = 0; j < PF_PRIV; j++) {
			bool want = a->own[j].state != PG_ABSENT;
			uintptr_t va = PF_BASE + (uintptr_t) j * PAGE_SIZE;
			if (page_mapping_find(a->priv, va, &pte) != want)
				mmtest_fail(&failure, "private page %#lx of thread %u: in the table %s",
				    va, t, want ? "no" : "yes");
			mapped_priv += want;
		}
		if (__atomic_load_n(&a->priv->pages_mapped, __ATOMIC_RELAXED) !=
		    mapped_priv)
			mmtest_fail(&failure, "thread %u: private pages_mapped %lu, shadow %zu", t,
			    a->priv->pages_mapped, mapped_priv);
		mapped_other += mapped_priv;
		for (unsigned q = t + 1; q < nthreads; q++) {
			pf_pair_t *pp = &pairs[t * nthreads + q];
			if (pp->as->pages_mapped != 2 * PF_PAIR_K ||
			    pp->bar.checks != PF_PAIR_REPS)
				mmtest_fail(&failure, "pair %u-%u: %lu pages mapped, %u rounds checked",
				    t, q, pp->as->pages_mapped, pp->bar.checks);
			mapped_other += 2 * PF_PAIR_K;
		}
		unsigned want_rounds = PF_PAIR_REPS * (nthreads - 1) +
		    (nthreads - 1 < PF_SPAIR_DISTS ? nthreads - 1 : PF_SPAIR_DISTS);
		if (a->pair_rounds != want_rounds)
			mmtest_fail(&failure, "thread %u ran %zu pair rounds, expected %u", t,
			    a->pair_rounds, want_rounds);
	}
	if (__atomic_load_n(&shared_as->pages_mapped, __ATOMIC_RELAXED) !=
	    mapped_shared)
		mmtest_fail(&failure, "shared pages_mapped %lu, shadow %zu", shared_as->pages_mapped,
		    mapped_shared);
	mapped_other += check_hot();
	page_ht_stats_t ps;
	page_ht_get_stats(&ps);
	if (ps.entries != entries0 + mapped_shared + mapped_other)
		mmtest_fail(&failure, "%zu table entries, expected %zu + %zu mapped pages",
		    ps.entries, entries0, mapped_shared + mapped_other);

	/* Read every mapped shared page again, on this CPU. */
	as_enter(shared_as);
	for (unsigned t = 0; t < nthreads; t++) {
		for (unsigned j = 0; j < shared_per; j++) {
			pf_page_t *pg = &args[t].shared[j];
			bool ok;
			if (pg->state == PG_ABSENT)
				continue;
			uint64_t got = page_cmp(shared_page(t, j), pg->gen, 0,
			    pg->state != PG_PAT, &ok);
			if (!ok)
				mmtest_fail(&failure, "shared page %#lx reads %#lx at the end",
				    shared_page(t, j), got);
		}
	}
	as_leave();
}

/** Creates the address spaces and threads. @return how many threads. */
static unsigned setup(unsigned online)
{
	shared_as = as_create();
	if (!shared_as || as_area_create(shared_as, PF_BASE,
	    nthreads * shared_per * PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) != EOK ||
	    as_area_create(shared_as, PF_SPAIR_BASE, nthreads * PF_SPAIR_K *
	    PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		mmtest_fail(&failure, "as_create/as_area_create failed");
		return 0;
	}
	hot_as = as_create();
	if (!hot_as || as_area_create(hot_as, PF_HOT_BASE, PF_HOT * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		mmtest_fail(&failure, "as_create/as_area_create failed");
		return 0;
	}
	for (unsigned j = 0; j < PF_HOT; j++)
		hot_busy[j] = hot_seq[j] = hot_arrived[j] = hot_fought[j] = 0;
	hot_rounds = 0;
	hot_more = false;
	hot_bulk_unmapped = 0;
	hot_online = online;
	bar = (pf_bar_t) { .b = { .n = nthreads, .yield = nthreads > online },
		.as = shared_as, .want = nthreads * PF_SPAIR_K };
	pairs = calloc(nthreads * nthreads, sizeof(pf_pair_t));
	if (!pairs) {
		mmtest_fail(&failure, "out of memory");
		return 0;
	}
	unsigned n = 0;
	for (unsigned c = 0; n < nthreads; c = (c + 1) % cpu_count) {
		if (!cpu_is_online(c))
			continue;
		pf_arg_t *a = &args[n];
		memset(a, 0, sizeof(*a));
		a->index = n;
		a->cpu = c;
		a->seed = mmtest_mix(0x7066310000ULL + n) | 1;
		a->priv = as_create();
		if (!a->priv || as_area_create(a->priv, PF_BASE, PF_PRIV * PAGE_SIZE,
		    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
			mmtest_fail(&failure, "as_create/as_area_create failed");
			return n;
		}
		n++;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		for (unsigned j = i + 1; j < nthreads; j++) {
			pf_pair_t *pp = &pairs[i * nthreads + j];
			pp->as = as_create();
			if (!pp->as || as_area_create(pp->as, PF_PAIR_BASE,
			    2 * PF_PAIR_K * PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) !=
			    EOK) {
				mmtest_fail(&failure, "as_create/as_area_create failed");
				return n;
			}
			pp->bar = (pf_bar_t) {
				.b = { .n = 2, .yield = args[i].cpu == args[j].cpu },
				.as = pp->as, .want = 2 * PF_PAIR_K };
		}
	}
	for (unsigned i = 0; i < nthreads; i++) {
		handles[i] = thread_create(pf_thread, &args[i], "pagefault1",
		    THREAD_FLAG_NONE);
		if (!handles[i]) {
			mmtest_fail(&failure, "thread_create failed");
			for (unsigned k = 0; k < i; k++)
				thread_detach(handles[k]);  /* never started (out of memory only) */
			return n;
		}
		thread_wire(handles[i], &cpus[args[i].cpu]);
	}
	return n;
}

static void teardown(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (args[i].priv)
			as_release(args[i].priv);
		args[i].priv = NULL;
	}
	if (pairs) {
		for (unsigned i = 0; i < nthreads * nthreads; i++) {
			if (pairs[i].as)
				as_release(pairs[i].as);
		}
		free(pairs);
		pairs = NULL;
	}
	if (shared_as)
		as_release(shared_as);
	shared_as = NULL;
	if (hot_as)
		as_release(hot_as);
	hot_as = NULL;
}

const char *test_pagefault1(void)
{
	static char reason[224];
	mmtest_snap_t s0, s1;

	mmtest_failure_reset(&failure);
	mmtest_snap(&s0);
	uint64_t t0 = uptime_us();
	TPRINTF("pagefault1: the table before:\n");
	page_ht_print();
	peak_buckets = s0.ps.buckets;
	peak_entries = s0.ps.entries;

	unsigned online = 0;
	for (unsigned c = 0; c < cpu_count; c++)
		online += cpu_is_online(c);
	nthreads = online < 2 ? 2 : online;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	shared_per = PF_SHARED_ALL / nthreads;
	if (shared_per < PF_SHARED_MIN)
		shared_per = PF_SHARED_MIN;

	unsigned n = setup(online);
	uint64_t t1 = t0;
	if (!mmtest_failed(&failure)) {
		TPRINTF("pagefault1: %u threads on %u CPUs; shared area of %u pages, "
		    "%u private pages per thread, %u pair address spaces\n", n, online,
		    n * shared_per, PF_PRIV, n * (n - 1) / 2);
		for (unsigned i = 0; i < n; i++)
			thread_start(handles[i]);
		for (unsigned i = 0; i < n; i++) {
			if (thread_join(handles[i]) != EOK)
				mmtest_fail(&failure, "thread_join failed");
		}
		t1 = uptime_us();
		sample_table();
		if (atomic_get(&shared_as->refcount) != 1 ||
		    __atomic_load_n(&shared_as->cpus_running, __ATOMIC_SEQ_CST) != 0)
			mmtest_fail(&failure, "the threads did not leave the shared address space");
		check_shadows(s0.ps.entries);
		size_t steps = 0, unmaps = 0;
		for (unsigned i = 0; i < n; i++) {
			steps += args[i].steps;
			unmaps += args[i].unmaps;
		}
		TPRINTF("pagefault1: phase 1: %zu steps (%zu unmaps) in %lu ms; "
		    "phase 2: %lu + %lu ms; shared address space: %lu faults (%lu "
		    "minor), %lu shootdowns; table peak %zu entries, %zu buckets\n",
		    steps, unmaps, (phase1_end_us - t0) / 1000,
		    (phase2a_end_us - phase1_end_us) / 1000,
		    (t1 - phase3_end_us) / 1000, shared_as->faults,
		    shared_as->faults_minor, shared_as->shootdowns, peak_entries,
		    peak_buckets);
	}
	teardown(n);

	mmtest_snap(&s1);
	TPRINTF("pagefault1: the table after (%lu ms; %lu ms in all):\n",
	    (uptime_us() - t1) / 1000, (uptime_us() - t0) / 1000);
	page_ht_print();
	TPRINTF("pagefault1: entries %zu (baseline %zu), address spaces %zu (%zu); "
	    "against the baseline: heap allocations %ld, CHT dummies %ld, frames "
	    "outside slabs %ld, free frames %ld\n", s1.ps.entries, s0.ps.entries,
	    s1.ases, s0.ases, (long) (s1.heap_allocs - s0.heap_allocs),
	    (long) (s1.dummies - s0.dummies),
	    (long) (s1.outside_slabs - s0.outside_slabs),
	    (long) (s1.free - s0.free));

	if (mmtest_failed(&failure)) {
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    (size_t) atomic_get(&failure.errors), failure.msg);
		return reason;
	}
	if (s1.ps.entries != s0.ps.entries)
		return "page hash table entries not back at the baseline";
	if (s1.ases != s0.ases)
		return "address spaces left behind";
	if (s1.threads > s0.threads)
		return "threads left behind";
	if (s1.heap_allocs - s0.heap_allocs != s1.dummies - s0.dummies)
		return "live heap allocations not back at the baseline";
	if (s1.outside_slabs != s0.outside_slabs) {
		snprintf(reason, sizeof(reason), "%ld frames outside the slabs not "
		    "given back (data frames, page tables)",
		    (long) s1.outside_slabs - (long) s0.outside_slabs);
		return reason;
	}
	if (strcmp(page_ht_backend, "cht") == 0) {
		if (s1.ps.grows <= s0.ps.grows || peak_buckets <= s0.ps.buckets)
			return "the page hash table did not grow during the run";
		if (s1.ps.shrinks <= s0.ps.shrinks)
			return "the page hash table did not shrink after the run";
		if (s1.ps.buckets != s0.ps.buckets)
			return "the page hash table did not shrink back to its size";
	}
	return NULL;
}
