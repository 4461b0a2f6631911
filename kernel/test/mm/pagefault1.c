/** @file pagefault1.c
 * (Files: this one, pagefault1_threads.c with the test threads, pagefault1.h.)
 *
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
 * faults = minor + inserting + EEXIST, inserting = pages_mapped + unmaps -
 * fills (below), so
 * EEXIST computed from the other counters must equal faults_raced exactly (no
 * other fault path is taken: the area only changes at the barrier). There
 * are at least PF_HOT_ROUNDS rounds; where the held faults do not run
 * (release builds, one CPU) the rounds go on (at most PF_HOT_MAX_ROUNDS)
 * until faults_raced >= PF_HOT_MIN_RACED, and how far they got is printed
 * (the held inserts below make the race certain and checked exactly). How
 * many faults found their page unmapped by themselves is printed: the window
 * is a few dozen instructions and needs two vCPUs running at the same
 * instant, which a loaded host may not give in 128 rounds.
 * Held faults (debug builds, threads 0 and 1 on CPUs of their own): after
 * the free-running rounds, PF_HOLD_PAGES times thread 0 unmaps a hot page
 * and puts a record without a hardware entry back (as_page_fill(), with a
 * mark in thread 1's word: a "fill"); thread 1 reads its word, and its
 * minor fault is held by as_fault_minor_hook between its lookup and its
 * page-table lock until thread 0 has unmapped the page. Required: every
 * fault was held (bounded waits: a missing step fails with its name), each
 * found its page unmapped before the install (faults_unmapped grew by
 * exactly PF_HOLD_PAGES) and the retried access read 0 from a fresh page
 * (the mark: the fault installed the unmapped record's frame). Then
 * PF_HOLD_PAGES held inserts: thread 0 unmaps another hot page, thread 1
 * reads it and its fault is held by as_fault_insert_hook after the missed
 * lookup, before the insert, until thread 0 has faulted the page in; every
 * held insert must lose (faults_raced grows by exactly PF_HOLD_PAGES) and
 * thread 1 read 0 (thread 0's fresh page). Release
 * builds have no hook: there the unmapped-before-install path is only
 * printed. The single unmaps that overlapped
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
 * one grow and one shrink and the bucket count back at its start (`page_ht`
 * before/after is printed). Afterwards (rcu_barrier, slab_reclaim): table entries
 * and address spaces at the baseline, threads not above it, live heap
 * allocations at the baseline plus the CHT's bucket dummies, frames outside the
 * slab allocator (data frames, page tables) exactly at the baseline -- heap
 * allocations and frames net of the threads that exist (a stack and a
 * descriptor each); the free frame delta (slabs kept partially used) is
 * printed.
 */

#include "pagefault1.h"
#include <arch/paging.h>

/** Words of a page that carry the pattern. */
static const unsigned pat_words[] = { 0, 1, 256, 511 };

/* Errors (any thread); the first message is kept. */
mmtest_failure_t pf1_failure;

/* Page contents */

static uint64_t pat(uintptr_t va, uint64_t gen, uint64_t salt, unsigned word)
{
	return mmtest_mix(va ^ (gen << 32) ^ salt ^ ((uint64_t) word << 52)) | 1;
}

void pf1_page_write(uintptr_t va, uint64_t gen, uint64_t salt)
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
uint64_t pf1_page_cmp(uintptr_t va, uint64_t gen, uint64_t salt, bool zero,
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

pf_arg_t pf1_args[MAX_THREADS];
static thread_t *handles[MAX_THREADS];
unsigned pf1_nthreads;
unsigned pf1_shared_per;     /**< shared pages per thread */
pf_bar_t pf1_bar;
as_t *pf1_shared_as;
pf_pair_t *pf1_pairs;
static size_t peak_buckets;
static size_t peak_entries;
static uint64_t phase1_end_us, phase2a_end_us, phase3_end_us;
/** Phase 3: the address space of the hot pages. */
as_t *pf1_hot_as;
/** Phase 3: threads inside an access of each hot page. Atomics (seq_cst). */
unsigned pf1_hot_busy[PF_HOT];
/** Phase 3: accesses of each hot page started so far. Atomics (seq_cst). */
unsigned pf1_hot_seq[PF_HOT];
/** Phase 3: threads that reached each hot page in this round. Atomics;
 * reset by the barrier function between rounds. */
unsigned pf1_hot_arrived[PF_HOT];
/** Phase 3: the last round (+ 1) whose unmap fight on each hot page is over
 * (hot_step). Atomics (seq_cst). */
unsigned pf1_hot_fought[PF_HOT];
/**
 * Phase 3, written by the barrier function only (the barrier orders them
 * for the threads): rounds started, whether another round runs, pages the
 * bulk unmaps removed; CPUs online (set before the threads start).
 */
unsigned pf1_hot_rounds;
bool pf1_hot_more;
size_t pf1_hot_bulk_unmapped;
unsigned pf1_hot_online;

uintptr_t pf1_shared_page(unsigned t, unsigned j)
{
	return PF_BASE + ((uintptr_t) j * pf1_nthreads + t) * PAGE_SIZE;
}

void pf1_sample_table(void)
{
	page_ht_stats_t ps;
	page_ht_get_stats(&ps);
	if (ps.buckets > peak_buckets)
		peak_buckets = ps.buckets;
	if (ps.entries > peak_entries)
		peak_entries = ps.entries;
}

void pf1_phase1_end(mmtest_barrier_t *b)
{
	phase1_end_us = uptime_us();
	/*
	 * A grow that phase 1 requested runs as system work; on one CPU it may
	 * not have had a turn yet (phase 1 can take under 10 ms). Let a resize
	 * in flight finish (bounded: 5 s) before the peak is sampled; whether
	 * the table grew is still required below.
	 */
	cht_stats_t st;
	for (unsigned i = 0; i < 5000 && mmtest_page_ht_cht_stats(&st) &&
	    st.resizing; i++)
		thread_usleep(1000);
	pf1_sample_table();
}

void pf1_phase2a_end(mmtest_barrier_t *b)
{
	phase2a_end_us = uptime_us();
}

void pf1_phase3_end(mmtest_barrier_t *b)
{
	phase3_end_us = uptime_us();
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
	pf1_hot_counts(&c);
	for (unsigned t = 0; t < pf1_nthreads; t++) {
		single += pf1_args[t].hot_unmaps;
		extra += pf1_args[t].hot_extra_unmaps;
	}
	for (unsigned j = 0; j < PF_HOT; j++)
		mapped += page_mapping_find(pf1_hot_as->id, pf1_hot_page(j), &pte);
	uint64_t pages = as_stats(pf1_hot_as).pages_mapped;
	TPRINTF("pagefault1: phase 3: %u threads x %u rounds on the same %u pages "
	    "in %lu ms: %lu faults: %lu inserted the page, %lu lost the insert to "
	    "another CPU (faults_raced; %lu by the accounting), %lu found another "
	    "fault's record, %lu found their page unmapped before the install "
	    "by themselves (faults_unmapped less the held faults'); %zu unmaps (%zu single, %zu of them while another "
	    "thread accessed the page; %zu more fighting the others' faults); %zu "
	    "mapped at the end\n", pf1_nthreads, pf1_hot_rounds, PF_HOT,
	    (phase3_end_us - phase2a_end_us) / 1000, c.faults, c.inserted,
	    c.raced, c.lost, c.minor, c.unmapped - c.held_unmapped, c.unmaps,
	    single, c.overlaps,
	    extra, mapped);
	if (pages != mapped)
		mmtest_fail(&pf1_failure, "hot address space: pages_mapped %lu, %zu pages in the "
		    "table", pages, mapped);
	if (pf1_hot_rounds < PF_HOT_ROUNDS || single != (size_t) pf1_hot_rounds *
	    (PF_HOT / PF_HOT_UNMAP_EVERY))
		mmtest_fail(&pf1_failure, "phase 3 ran %u rounds with %zu single unmaps, %u "
		    "per round expected", pf1_hot_rounds, single,
		    PF_HOT / PF_HOT_UNMAP_EVERY);
	if (c.faults < c.minor + c.inserted || c.lost != c.raced)
		mmtest_fail(&pf1_failure, "hot address space: %lu faults - %lu minor - %lu "
		    "inserting = %ld lost inserts, but faults_raced is %lu", c.faults,
		    c.minor, c.inserted, (long) (c.faults - c.minor - c.inserted),
		    c.raced);
	else if (pf1_hot_online >= 2 && !pf1_hold_ran && c.raced < PF_HOT_MIN_RACED)
		TPRINTF("pagefault1: phase 3: in %u rounds only %lu faults lost the "
		    "insert to another CPU's fault of the same page (faults_raced; "
		    "no hold point in this build to make it certain)\n",
		    pf1_hot_rounds, c.raced);
	if (pf1_hold_ran) {
		TPRINTF("pagefault1: phase 3, held inserts: %u of %u faults held "
		    "before their insert until another fault inserted the page, "
		    "faults_raced grew by %lu\n", c.held_lost, PF_HOLD_PAGES,
		    c.held_raced);
		if (c.held_lost != PF_HOLD_PAGES || c.held_raced != PF_HOLD_PAGES ||
		    c.raced < PF_HOT_MIN_RACED)
			mmtest_fail(&pf1_failure, "phase 3, held inserts: %u of %u "
			    "faults held before their insert until another fault had "
			    "inserted the page, faults_raced grew by %lu during the "
			    "held faults (each held insert must lose: EEXIST)",
			    c.held_lost, PF_HOLD_PAGES, c.held_raced);
	}
	if (pf1_hold_ran) {
		TPRINTF("pagefault1: phase 3, held faults: %u of %u minor faults "
		    "held until their page was unmapped, %lu found it unmapped "
		    "before the install (faults_unmapped)\n", c.held,
		    PF_HOLD_PAGES, c.held_unmapped);
		if (c.held != PF_HOLD_PAGES || c.held_unmapped != PF_HOLD_PAGES)
			mmtest_fail(&pf1_failure, "phase 3, held faults: %u of %u "
			    "faults held until their page was unmapped, %lu of them "
			    "found it unmapped before the install (faults_unmapped; "
			    "each must)", c.held, PF_HOLD_PAGES, c.held_unmapped);
	}

	as_enter(pf1_hot_as);
	for (unsigned j = 0; j < PF_HOT; j++) {
		if (!page_mapping_find(pf1_hot_as->id, pf1_hot_page(j), &pte))
			continue;
		uint64_t *w = (uint64_t *) pf1_hot_page(j);
		for (unsigned t = 0; t < pf1_nthreads; t++) {
			uint64_t x = __atomic_load_n(&w[t], __ATOMIC_RELAXED);
			if (x != 0 && x != pf1_args[t].hot_last[j])
				mmtest_fail(&pf1_failure, "hot page %#lx: word of thread %u reads %#lx at the "
				    "end, it wrote %#lx last", pf1_hot_page(j), t, x,
				    pf1_args[t].hot_last[j]);
		}
	}
	as_leave();
	return mapped;
}

/** Checks by this thread at the end: table contents against the shadows. */
static void check_shadows(size_t entries0)
{
	/* The pair pages are mapped: B wrote them after the last unmap. */
	size_t mapped_shared = pf1_nthreads * PF_SPAIR_K;
	size_t mapped_other = 0;
	pte_t pte;

	for (unsigned t = 0; t < pf1_nthreads; t++) {
		pf_arg_t *a = &pf1_args[t];
		size_t mapped_priv = 0;
		for (unsigned j = 0; j < pf1_shared_per; j++) {
			bool want = a->shared[j].state != PG_ABSENT;
			if (page_mapping_find(pf1_shared_as->id, pf1_shared_page(t, j), &pte) != want)
				mmtest_fail(&pf1_failure, "shared page %#lx: in the table %s, shadow says %s",
				    pf1_shared_page(t, j), want ? "no" : "yes",
				    want ? "mapped" : "unmapped");
			mapped_shared += want;
		}
		for (unsigned j = 0; j < PF_PRIV; j++) {
			bool want = a->own[j].state != PG_ABSENT;
			uintptr_t va = PF_BASE + (uintptr_t) j * PAGE_SIZE;
			if (page_mapping_find(a->priv->id, va, &pte) != want)
				mmtest_fail(&pf1_failure, "private page %#lx of thread %u: in the table %s",
				    va, t, want ? "no" : "yes");
			mapped_priv += want;
		}
		if (as_stats(a->priv).pages_mapped !=
		    mapped_priv)
			mmtest_fail(&pf1_failure, "thread %u: private pages_mapped %lu, shadow %zu", t,
			    as_stats(a->priv).pages_mapped, mapped_priv);
		mapped_other += mapped_priv;
		for (unsigned q = t + 1; q < pf1_nthreads; q++) {
			pf_pair_t *pp = &pf1_pairs[t * pf1_nthreads + q];
			if (as_stats(pp->as).pages_mapped != 2 * PF_PAIR_K ||
			    pp->bar.checks != PF_PAIR_REPS)
				mmtest_fail(&pf1_failure, "pair %u-%u: %lu pages mapped, %u rounds checked",
				    t, q, as_stats(pp->as).pages_mapped, pp->bar.checks);
			mapped_other += 2 * PF_PAIR_K;
		}
		unsigned want_rounds = PF_PAIR_REPS * (pf1_nthreads - 1) +
		    (pf1_nthreads - 1 < PF_SPAIR_DISTS ? pf1_nthreads - 1 : PF_SPAIR_DISTS);
		if (a->pair_rounds != want_rounds)
			mmtest_fail(&pf1_failure, "thread %u ran %zu pair rounds, expected %u", t,
			    a->pair_rounds, want_rounds);
	}
	if (as_stats(pf1_shared_as).pages_mapped !=
	    mapped_shared)
		mmtest_fail(&pf1_failure, "shared pages_mapped %lu, shadow %zu", as_stats(pf1_shared_as).pages_mapped,
		    mapped_shared);
	mapped_other += check_hot();
	page_ht_stats_t ps;
	page_ht_get_stats(&ps);
	if (ps.entries != entries0 + mapped_shared + mapped_other)
		mmtest_fail(&pf1_failure, "%zu table entries, expected %zu + %zu mapped pages",
		    ps.entries, entries0, mapped_shared + mapped_other);

	/* Read every mapped shared page again, on this CPU. */
	as_enter(pf1_shared_as);
	for (unsigned t = 0; t < pf1_nthreads; t++) {
		for (unsigned j = 0; j < pf1_shared_per; j++) {
			pf_page_t *pg = &pf1_args[t].shared[j];
			bool ok;
			if (pg->state == PG_ABSENT)
				continue;
			uint64_t got = pf1_page_cmp(pf1_shared_page(t, j), pg->gen, 0,
			    pg->state != PG_PAT, &ok);
			if (!ok)
				mmtest_fail(&pf1_failure, "shared page %#lx reads %#lx at the end",
				    pf1_shared_page(t, j), got);
		}
	}
	as_leave();
}

/** Creates the address spaces and threads. @return how many threads. */
static unsigned setup(unsigned online)
{
	pf1_shared_as = as_create();
	if (!pf1_shared_as || as_area_create(pf1_shared_as, PF_BASE,
	    pf1_nthreads * pf1_shared_per * PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) != EOK ||
	    as_area_create(pf1_shared_as, PF_SPAIR_BASE, pf1_nthreads * PF_SPAIR_K *
	    PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		mmtest_fail(&pf1_failure, "as_create/as_area_create failed");
		return 0;
	}
	pf1_hot_as = as_create();
	if (!pf1_hot_as || as_area_create(pf1_hot_as, PF_HOT_BASE, PF_HOT * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		mmtest_fail(&pf1_failure, "as_create/as_area_create failed");
		return 0;
	}
	for (unsigned j = 0; j < PF_HOT; j++)
		pf1_hot_busy[j] = pf1_hot_seq[j] = pf1_hot_arrived[j] = pf1_hot_fought[j] = 0;
	pf1_hot_rounds = 0;
	pf1_hot_more = false;
	pf1_hot_bulk_unmapped = 0;
	pf1_hold_ran = false;
	pf1_hot_online = online;
	pf1_bar = (pf_bar_t) { .b = { .n = pf1_nthreads, .yield = pf1_nthreads > online },
		.as = pf1_shared_as, .want = pf1_nthreads * PF_SPAIR_K };
	pf1_pairs = calloc(pf1_nthreads * pf1_nthreads, sizeof(pf_pair_t));
	if (!pf1_pairs) {
		mmtest_fail(&pf1_failure, "out of memory");
		return 0;
	}
	unsigned n = 0;
	for (unsigned c = 0; n < pf1_nthreads; c = (c + 1) % cpu_count) {
		if (!cpu_is_online(c))
			continue;
		pf_arg_t *a = &pf1_args[n];
		memset(a, 0, sizeof(*a));
		a->index = n;
		a->cpu = c;
		a->seed = mmtest_mix(0x7066310000ULL + n) | 1;
		a->priv = as_create();
		if (!a->priv || as_area_create(a->priv, PF_BASE, PF_PRIV * PAGE_SIZE,
		    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
			mmtest_fail(&pf1_failure, "as_create/as_area_create failed");
			return n;
		}
		n++;
	}
	for (unsigned i = 0; i < pf1_nthreads; i++) {
		for (unsigned j = i + 1; j < pf1_nthreads; j++) {
			pf_pair_t *pp = &pf1_pairs[i * pf1_nthreads + j];
			pp->as = as_create();
			if (!pp->as || as_area_create(pp->as, PF_PAIR_BASE,
			    2 * PF_PAIR_K * PAGE_SIZE, AS_AREA_READ | AS_AREA_WRITE) !=
			    EOK) {
				mmtest_fail(&pf1_failure, "as_create/as_area_create failed");
				return n;
			}
			pp->bar = (pf_bar_t) {
				.b = { .n = 2, .yield = pf1_args[i].cpu == pf1_args[j].cpu },
				.as = pp->as, .want = 2 * PF_PAIR_K };
		}
	}
	for (unsigned i = 0; i < pf1_nthreads; i++) {
		handles[i] = testlib_create(pf1_pf_thread, &pf1_args[i],
		    "pagefault1", &cpus[pf1_args[i].cpu]);
		if (!handles[i]) {
			mmtest_fail(&pf1_failure, "thread_create failed");
			for (unsigned k = 0; k < i; k++)
				thread_detach(handles[k]);  /* never started (out of memory only) */
			return n;
		}
	}
	return n;
}

static void teardown(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (pf1_args[i].priv)
			as_release(pf1_args[i].priv);
		pf1_args[i].priv = NULL;
	}
	if (pf1_pairs) {
		for (unsigned i = 0; i < pf1_nthreads * pf1_nthreads; i++) {
			if (pf1_pairs[i].as)
				as_release(pf1_pairs[i].as);
		}
		free(pf1_pairs);
		pf1_pairs = NULL;
	}
	if (pf1_shared_as)
		as_release(pf1_shared_as);
	pf1_shared_as = NULL;
	if (pf1_hot_as)
		as_release(pf1_hot_as);
	pf1_hot_as = NULL;
}

/**
 * Checks how the unmaps of the shared address space reached the other CPUs
 * (the phase after the threads joined): shootdown cross-calls where the TLB
 * invalidation is local, broadcast invalidations where it is broadcast.
 * Records a failure in pf1_failure.
 */
static void check_shootdowns(void)
{
	/*
	 * How the unmaps of the shared address space (phases 1 and 2a:
	 * all threads, one per CPU, run it) reached the other CPUs:
	 * cross-calls where the TLB invalidation is local (the unmapper
	 * runs the address space, so at least its own CPU is called);
	 * where it is broadcast (ARCH_TLB_BROADCAST, arm64) not a single
	 * smp_call, one broadcast invalidation per shootdown instead.
	 */
	as_stats_t st = as_stats(pf1_shared_as);
	TPRINTF("pagefault1: shared address space: %lu shootdown "
	    "cross-calls, %lu broadcast TLB invalidations\n",
	    st.shootdowns, st.tlb_broadcasts);
#if ARCH_TLB_BROADCAST
	if (st.shootdowns != 0 || st.tlb_broadcasts == 0)
		mmtest_fail(&pf1_failure, "%lu shootdown cross-calls and %lu "
		    "broadcast invalidations where the TLB invalidation is "
		    "broadcast: expected none and some", st.shootdowns,
		    st.tlb_broadcasts);
#else
	if (st.shootdowns == 0 || st.tlb_broadcasts != 0)
		mmtest_fail(&pf1_failure, "%lu shootdown cross-calls and %lu "
		    "broadcast invalidations where the TLB invalidation is "
		    "local: expected some and none", st.shootdowns,
		    st.tlb_broadcasts);
#endif
}

const char *test_pagefault1(void)
{
	static char reason[224];
	mmtest_snap_t s0, s1;

	mmtest_failure_reset(&pf1_failure);
	mmtest_snap(&s0);
	uint64_t t0 = uptime_us();
	TPRINTF("pagefault1: the table before: %s, %zu entries, %zu buckets, "
	    "%lu grows, %lu shrinks\n", s0.ps.backend, s0.ps.entries,
	    s0.ps.buckets, s0.ps.grows, s0.ps.shrinks);
	peak_buckets = s0.ps.buckets;
	peak_entries = s0.ps.entries;

	unsigned online;
	pf1_nthreads = mmtest_nthreads(MAX_THREADS, &online);
	pf1_shared_per = PF_SHARED_ALL / pf1_nthreads;
	if (pf1_shared_per < PF_SHARED_MIN)
		pf1_shared_per = PF_SHARED_MIN;

	unsigned n = setup(online);
	uint64_t t1 = t0;
	if (!mmtest_failed(&pf1_failure)) {
		TPRINTF("pagefault1: %u threads on %u CPUs; shared area of %u pages, "
		    "%u private pages per thread, %u pair address spaces\n", n, online,
		    n * pf1_shared_per, PF_PRIV, n * (n - 1) / 2);
		for (unsigned i = 0; i < n; i++)
			thread_start(handles[i]);
		for (unsigned i = 0; i < n; i++) {
			if (thread_join(handles[i]) != EOK)
				mmtest_fail(&pf1_failure, "thread_join failed");
		}
		t1 = uptime_us();
		pf1_sample_table();
		if (atomic_get(&pf1_shared_as->refcount) != 1 ||
		    __atomic_load_n(&pf1_shared_as->cpus_running, __ATOMIC_SEQ_CST) != 0)
			mmtest_fail(&pf1_failure, "the threads did not leave the shared address space");
		check_shadows(s0.ps.entries);
		size_t steps = 0, unmaps = 0;
		for (unsigned i = 0; i < n; i++) {
			steps += pf1_args[i].steps;
			unmaps += pf1_args[i].unmaps;
		}
		TPRINTF("pagefault1: phase 1: %zu steps (%zu unmaps) in %lu ms; "
		    "phase 2: %lu + %lu ms; shared address space: %lu faults (%lu "
		    "minor), %lu shootdowns; table peak %zu entries, %zu buckets\n",
		    steps, unmaps, (phase1_end_us - t0) / 1000,
		    (phase2a_end_us - phase1_end_us) / 1000,
		    (t1 - phase3_end_us) / 1000, as_stats(pf1_shared_as).faults,
		    as_stats(pf1_shared_as).faults_minor, as_stats(pf1_shared_as).shootdowns, peak_entries,
		    peak_buckets);
		check_shootdowns();
	}
	teardown(n);

	mmtest_snap(&s1);
	TPRINTF("pagefault1: the table after (%lu ms; %lu ms in all): %s, %zu "
	    "entries, %zu buckets, %lu grows, %lu shrinks\n",
	    (uptime_us() - t1) / 1000, (uptime_us() - t0) / 1000, s1.ps.backend,
	    s1.ps.entries, s1.ps.buckets, s1.ps.grows, s1.ps.shrinks);
	TPRINTF("pagefault1: entries %zu (baseline %zu), address spaces %zu (%zu); "
	    "against the baseline: heap allocations %ld, CHT dummies %ld, frames "
	    "outside slabs %ld, free frames %ld\n", s1.ps.entries, s0.ps.entries,
	    s1.ases, s0.ases, (long) (s1.heap_allocs - s0.heap_allocs),
	    (long) (s1.dummies - s0.dummies),
	    (long) (s1.outside_slabs - s0.outside_slabs),
	    (long) (s1.free - s0.free));

	if (mmtest_failed(&pf1_failure)) {
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    (size_t) atomic_get(&pf1_failure.errors), pf1_failure.msg);
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
