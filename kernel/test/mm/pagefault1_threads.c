/** @file pagefault1_threads.c
 * The kernel test `pagefault1` (see pagefault1.c): the test threads, phase
 * by phase (concurrent faults and unmaps, the paired protocol, the hot pages
 * that every thread faults and unmaps).
 */
#include "pagefault1.h"

/* Phase 3 */

uintptr_t pf1_hot_page(unsigned j)
{
	return PF_HOT_BASE + (uintptr_t) j * PAGE_SIZE;
}

/*
 * Phase 3, held faults (hold_phase()). Written by the barrier functions
 * only (the barrier orders them for the threads): whether the step ran, the
 * hot address space's faults_unmapped before and after it.
 */
bool pf1_hold_ran;
static uint64_t hold_unmapped0, hold_unmapped1;
/** Pages as_page_fill() filled: written by thread 0 only, read after the
 * barrier that ends the step. */
static size_t hold_fills;
/**
 * The page whose next minor fault the hook holds (0: none; the hook takes
 * it, so that it holds one fault), the round thread 0 started, the round
 * whose fault the hook holds, the round thread 1 finished; the faults held
 * until their page was unmapped. Atomics (seq_cst).
 */
static uintptr_t hold_page;
static unsigned hold_go, hold_in, hold_out, hold_held;

/*
 * Held lost inserts (after the held minor faults; the same two threads): the
 * page whose next fault with a missed lookup the insert hook holds (0: none;
 * the hook takes it), the round thread 0 started, the round whose fault the
 * hook holds, the round thread 1 finished, and the faults held until another
 * fault had inserted their page. Atomics (seq_cst). The hot address space's
 * faults_raced before and after the held faults: written by the barrier
 * functions only.
 */
static uintptr_t hold_ipage;
static unsigned hold_igo, hold_iin, hold_iout, hold_iheld;
static uint64_t hold_raced0, hold_raced1;

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
	*t = (j / PF_HOT_UNMAP_EVERY + r) % pf1_nthreads;
	return j % PF_HOT_UNMAP_EVERY == PF_HOT_UNMAP_EVERY / 2;
}

/**
 * The hot address space's fault accounting (all threads at a barrier or
 * joined): every fault found the record (minor: another CPU's fault had
 * inserted it and not yet installed the entry, since unmaps remove both),
 * inserted it (pages_mapped + 1; every unmap takes 1 off) or lost the insert
 * to another CPU's fault of the same page (EEXIST): the last is computed
 * (lost) and must equal the address space's faults_raced.
 */
void pf1_hot_counts(hot_counts_t *c)
{
	c->unmaps = pf1_hot_bulk_unmapped;
	c->overlaps = 0;
	for (unsigned t = 0; t < pf1_nthreads; t++) {
		c->unmaps += pf1_args[t].hot_unmaps + pf1_args[t].hot_extra_unmaps +
		    pf1_args[t].hot_held_unmaps;
		c->overlaps += pf1_args[t].hot_overlaps;
	}
	/* The held faults' state is this run's only if they ran. */
	c->fills = pf1_hold_ran ? hold_fills : 0;
	c->held = pf1_hold_ran ? __atomic_load_n(&hold_held, __ATOMIC_SEQ_CST) :
	    0;
	c->held_unmapped = pf1_hold_ran ? hold_unmapped1 - hold_unmapped0 : 0;
	c->held_lost = pf1_hold_ran ? __atomic_load_n(&hold_iheld,
	    __ATOMIC_SEQ_CST) : 0;
	c->held_raced = pf1_hold_ran ? hold_raced1 - hold_raced0 : 0;
	c->faults = as_stats(pf1_hot_as).faults;
	c->minor = as_stats(pf1_hot_as).faults_minor;
	c->raced = as_stats(pf1_hot_as).faults_raced;
	c->unmapped = as_stats(pf1_hot_as).faults_unmapped;
	/* The fills inserted pages no fault inserted. */
	c->inserted = as_stats(pf1_hot_as).pages_mapped +
	    c->unmaps - c->fills;
	c->lost = c->faults - c->minor - c->inserted;
}

/**
 * Were the races of phase 3 seen often enough (or are they not required)?
 * Where the held faults run, their held inserts make the lost insert certain
 * and the free-running rounds need not go on for it; elsewhere (release
 * builds, threads sharing a CPU) the rounds go on for the printed count.
 */
static bool hot_races_enough(void)
{
	hot_counts_t c;
	if (pf1_hot_online < 2 || pf1_hold_runs())
		return true;
	pf1_hot_counts(&c);
	return c.raced >= PF_HOT_MIN_RACED;
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
	unsigned done = pf1_hot_rounds;
	pf1_hot_more = done < PF_HOT_ROUNDS ||
	    (done < PF_HOT_MAX_ROUNDS && !hot_races_enough());
	if (!pf1_hot_more)
		return;
	pf1_hot_rounds = done + 1;
	for (unsigned j = 0; j < PF_HOT; j++)
		__atomic_store_n(&pf1_hot_arrived[j], 0, __ATOMIC_RELAXED);
	uint64_t before = as_stats(pf1_hot_as).pages_mapped;
	if (as_area_resize(pf1_hot_as, PF_HOT_BASE, PAGE_SIZE) != EOK ||
	    as_area_resize(pf1_hot_as, PF_HOT_BASE, PF_HOT * PAGE_SIZE) != EOK)
		mmtest_fail(&pf1_failure, "phase 3: as_area_resize failed");
	pf1_hot_bulk_unmapped += before -
	    as_stats(pf1_hot_as).pages_mapped;
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
	uint64_t *w = (uint64_t *) pf1_hot_page(j);

	/*
	 * Meet the other threads at the page (a bounded wait, only when every
	 * thread has a CPU of its own), so that they fault it at the same time.
	 */
	if (__atomic_add_fetch(&pf1_hot_arrived[j], 1, __ATOMIC_SEQ_CST) < pf1_nthreads &&
	    !pf1_bar.b.yield) {
		uint64_t t0 = uptime_us();
		while (__atomic_load_n(&pf1_hot_arrived[j], __ATOMIC_SEQ_CST) < pf1_nthreads &&
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
	if (hot_unmapper(j, r, &u) && !pf1_bar.b.yield) {
		uint64_t t0 = uptime_us();
		if (u == t) {
			while (uptime_us() - t0 < PF_HOT_FIGHT_US) {
				int rc = as_unmap_page(pf1_hot_as, pf1_hot_page(j));
				if (rc == EOK)
					a->hot_extra_unmaps++;
				else if (rc != ENOENT)
					mmtest_fail(&pf1_failure, "thread %u: unmap of hot page %#lx "
					    "returned %d", t, pf1_hot_page(j), rc);
			}
			__atomic_store_n(&pf1_hot_fought[j], r + 1, __ATOMIC_SEQ_CST);
		} else {
			while (__atomic_load_n(&pf1_hot_fought[j], __ATOMIC_SEQ_CST) <= r &&
			    uptime_us() - t0 < 2 * PF_HOT_FIGHT_US) {
				uint64_t got = __atomic_load_n(&w[t], __ATOMIC_RELAXED);
				if (got != 0 && got != a->hot_last[j])
					mmtest_fail(&pf1_failure, "thread %u: hot page %#lx: its word reads "
					    "%#lx during the unmaps, it wrote %#lx last (or 0 after an "
					    "unmap)", t, pf1_hot_page(j), got, a->hot_last[j]);
				cpu_relax();
			}
		}
	}

	__atomic_fetch_add(&pf1_hot_busy[j], 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&pf1_hot_seq[j], 1, __ATOMIC_SEQ_CST);
	uint64_t got = __atomic_load_n(&w[t], __ATOMIC_RELAXED);
	if (got != 0 && got != a->hot_last[j])
		mmtest_fail(&pf1_failure, "thread %u: hot page %#lx: its word reads %#lx, it wrote "
		    "%#lx last (or 0 after an unmap)", t, pf1_hot_page(j), got,
		    a->hot_last[j]);
	uint64_t v = hot_val(t, r, j);
	__atomic_store_n(&w[t], v, __ATOMIC_RELAXED);
	a->hot_last[j] = v;
	for (unsigned q = 0; q < pf1_nthreads; q++) {
		uint64_t x = __atomic_load_n(&w[q], __ATOMIC_RELAXED);
		if (q != t && x != 0 && !hot_valid(x, q, j))
			mmtest_fail(&pf1_failure, "thread %u: hot page %#lx: word of thread %u reads "
			    "%#lx", t, pf1_hot_page(j), q, x);
	}
	__atomic_fetch_sub(&pf1_hot_busy[j], 1, __ATOMIC_SEQ_CST);

	if (!hot_unmapper(j, r, &u) || u != t)
		return;
	/* Only this thread unmaps page j in this round, just after writing it. */
	/* Another access was in progress or started while it unmapped. */
	unsigned seq = __atomic_load_n(&pf1_hot_seq[j], __ATOMIC_SEQ_CST);
	unsigned others = __atomic_load_n(&pf1_hot_busy[j], __ATOMIC_SEQ_CST);
	int rc = as_unmap_page(pf1_hot_as, pf1_hot_page(j));
	others += __atomic_load_n(&pf1_hot_busy[j], __ATOMIC_SEQ_CST);
	others += __atomic_load_n(&pf1_hot_seq[j], __ATOMIC_SEQ_CST) != seq;
	if (rc != EOK)
		mmtest_fail(&pf1_failure, "thread %u: unmap of hot page %#lx it had just written "
		    "returned %d", t, pf1_hot_page(j), rc);
	a->hot_unmaps++;
	if (others)
		a->hot_overlaps++;
}

/**
 * Whether phase 3 holds faults (hold_phase()): a debug build (the hook),
 * threads 0 and 1 on CPUs of their own (a held fault spins until the other
 * CPU unmaps its page). The same answer for every thread.
 */
bool pf1_hold_runs(void)
{
#ifdef CONFIG_DEBUG
	return pf1_hot_online >= 2 && !pf1_bar.b.yield && pf1_nthreads >= 2 &&
	    pf1_args[0].cpu != pf1_args[1].cpu;
#else
	return false;
#endif
}

/** Waits (at most PF_HOLD_US) until *@a v >= @a k. @return whether it is. */
/**
 * Set (seq_cst) by thread 0 after a round of the held faults failed: the
 * test has failed, and the remaining rounds would each wait PF_HOLD_US for
 * a fault that a kernel without the TLB invalidation never takes (the
 * broken-shootdown controls). Reset by hold_begin().
 */
static bool hold_abort;

static bool hold_wait(const unsigned *v, unsigned k)
{
	uint64_t t0 = uptime_us();
	while (__atomic_load_n(v, __ATOMIC_SEQ_CST) < k) {
		if (uptime_us() - t0 > PF_HOLD_US ||
		    __atomic_load_n(&hold_abort, __ATOMIC_SEQ_CST))
			return false;
		cpu_relax();
	}
	return true;
}

#ifdef CONFIG_DEBUG
/**
 * as_fault_minor_hook while the held faults run: holds the first minor
 * fault of hold_page in the hot address space, between the fault's lookup
 * and its page-table lock, until the page's record is gone (thread 0
 * unmaps it; at most PF_HOLD_US, then the test fails). Other faults return
 * at once.
 */
static void hold_minor(as_t *as, uintptr_t page)
{
	uintptr_t want = page;
	if (as != pf1_hot_as || !__atomic_compare_exchange_n(&hold_page, &want,
	    0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&hold_in, __atomic_load_n(&hold_go, __ATOMIC_SEQ_CST),
	    __ATOMIC_SEQ_CST);
	pte_t pte;
	uint64_t t0 = uptime_us();
	while (page_mapping_find(as->id, page, &pte)) {
		if (uptime_us() - t0 > PF_HOLD_US) {
			mmtest_fail(&pf1_failure, "phase 3, held faults: hot page "
			    "%#lx still mapped %lu ms into the hold of its fault "
			    "(thread 0 never unmapped it)", page, PF_HOLD_US / 1000);
			return;
		}
		cpu_relax();
	}
	__atomic_fetch_add(&hold_held, 1, __ATOMIC_SEQ_CST);
}

/**
 * as_fault_insert_hook while the held faults run: holds the first fault of
 * hold_ipage in the hot address space whose lookup missed, after its frame
 * was allocated and before its insert, until another fault (thread 0's) has
 * inserted the page's record (at most PF_HOLD_US, then the test fails): the
 * held fault's insert must then lose (EEXIST, faults_raced). Other faults
 * return at once.
 */
static void hold_insert(as_t *as, uintptr_t page)
{
	uintptr_t want = page;
	if (as != pf1_hot_as || !__atomic_compare_exchange_n(&hold_ipage, &want,
	    0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&hold_iin, __atomic_load_n(&hold_igo, __ATOMIC_SEQ_CST),
	    __ATOMIC_SEQ_CST);
	pte_t pte;
	uint64_t t0 = uptime_us();
	while (!page_mapping_find(as->id, page, &pte)) {
		if (uptime_us() - t0 > PF_HOLD_US) {
			mmtest_fail(&pf1_failure, "phase 3, held inserts: hot page "
			    "%#lx still not in the table %lu ms into the hold of a "
			    "fault before its insert (thread 0 never faulted it in)",
			    page, PF_HOLD_US / 1000);
			return;
		}
		cpu_relax();
	}
	__atomic_fetch_add(&hold_iheld, 1, __ATOMIC_SEQ_CST);
}
#endif

/** Barrier function before the held faults: the hook on, the count. */
static void hold_begin(mmtest_barrier_t *b)
{
	hold_page = 0;
	hold_go = hold_in = hold_out = hold_held = 0;
	hold_fills = 0;
	hold_abort = false;
	pf1_hold_ran = true;
	hold_unmapped0 = as_stats(pf1_hot_as).faults_unmapped;
	hold_ipage = 0;
	hold_igo = hold_iin = hold_iout = hold_iheld = 0;
	hold_raced0 = as_stats(pf1_hot_as).faults_raced;
#ifdef CONFIG_DEBUG
	__atomic_store_n(&as_fault_minor_hook, hold_minor, __ATOMIC_RELEASE);
	__atomic_store_n(&as_fault_insert_hook, hold_insert, __ATOMIC_RELEASE);
#endif
}

/**
 * Barrier function after the held faults: the hook off (no fault of the
 * two threads is in it: both are at the barrier), the count.
 */
static void hold_end(mmtest_barrier_t *b)
{
#ifdef CONFIG_DEBUG
	__atomic_store_n(&as_fault_minor_hook, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&as_fault_insert_hook, NULL, __ATOMIC_RELEASE);
#endif
	hold_unmapped1 = as_stats(pf1_hot_as).faults_unmapped;
	hold_raced1 = as_stats(pf1_hot_as).faults_raced;
}

/**
 * Thread 0's round @a k of the held faults on hot page @a va: unmaps the
 * page, puts a record without a hardware entry back (as_page_fill(), which
 * writes PF_HOLD_MARK | k into thread 1's word), arms the hook and lets
 * thread 1 go; once the hook holds thread 1's (minor) fault, unmaps the
 * page (EOK exactly); waits for thread 1 to finish.
 */
static void hold_unmapper(pf_arg_t *a, unsigned k, uintptr_t va)
{
	int rc = as_unmap_page(pf1_hot_as, va);
	if (rc == EOK)
		a->hot_held_unmaps++;
	uint64_t mark = PF_HOLD_MARK | k;
	if ((rc != EOK && rc != ENOENT) || as_page_fill(pf1_hot_as, va, &mark,
	    sizeof(uint64_t), sizeof(mark)) != EOK) {
		mmtest_fail(&pf1_failure, "phase 3, held faults: unmap (%d) or "
		    "fill of hot page %#lx failed", rc, va);
		__atomic_store_n(&hold_go, k, __ATOMIC_SEQ_CST);
		return;
	}
	hold_fills++;
	__atomic_store_n(&hold_page, va, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hold_go, k, __ATOMIC_SEQ_CST);
	bool failed = false;
	if (!hold_wait(&hold_in, k)) {
		failed = true;
		uintptr_t want = va;
		__atomic_compare_exchange_n(&hold_page, &want, 0, false,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		mmtest_fail(&pf1_failure, "phase 3, held faults: thread 1's "
		    "access of hot page %#lx (a record without an entry) did not "
		    "reach the hook within %lu ms", va, PF_HOLD_US / 1000);
	}
	rc = as_unmap_page(pf1_hot_as, va);
	if (rc == EOK)
		a->hot_held_unmaps++;
	else
		mmtest_fail(&pf1_failure, "phase 3, held faults: unmap of hot page "
		    "%#lx under a held fault returned %d", va, rc);
	if (!hold_wait(&hold_out, k)) {
		failed = true;
		mmtest_fail(&pf1_failure, "phase 3, held faults: thread 1 did not "
		    "finish its access of hot page %#lx within %lu ms", va,
		    PF_HOLD_US / 1000);
	}
	/* Failed already: the next rounds would only wait out their bounds. */
	if (failed)
		__atomic_store_n(&hold_abort, true, __ATOMIC_SEQ_CST);
}

/**
 * Thread 1's round @a k of a held step (@a step names it in messages) on hot
 * page @a va: waits until thread 0 started the round (*@a go), reads its
 * word, which faults and is held by the step's hook, and tells thread 0 it
 * finished (*@a out). The word must read 0 either way: held faults (minor,
 * held until thread 0 unmapped the page) must install nothing and the retry
 * faults in a fresh page (not the fill's mark: the unmapped record's
 * frame); held inserts (held before their insert until thread 0 faulted the
 * page in) lose the insert and install thread 0's fresh page, in which
 * thread 0 wrote only its own word.
 */
static void hold_faulter(pf_arg_t *a, unsigned k, uintptr_t va,
    const char *step, const unsigned *go, unsigned *out)
{
	if (!hold_wait(go, k)) {
		if (__atomic_load_n(&hold_abort, __ATOMIC_SEQ_CST))
			return;
		mmtest_fail(&pf1_failure, "phase 3, %s: thread 0 did not start "
		    "round %u within %lu ms", step, k, PF_HOLD_US / 1000);
		return;
	}
	uint64_t got = __atomic_load_n(&((uint64_t *) va)[a->index],
	    __ATOMIC_RELAXED);
	if (got != 0)
		mmtest_fail(&pf1_failure, "phase 3, %s: thread %u read %#lx from "
		    "hot page %#lx, where its held fault had to install a fresh "
		    "page (a fill's mark: the unmapped record's frame)", step,
		    a->index, got, va);
	__atomic_store_n(out, k, __ATOMIC_SEQ_CST);
}

/**
 * Thread 0's round @a k of the held inserts on hot page @a va: unmaps the
 * page, arms the insert hook and lets thread 1 go; once the hook holds
 * thread 1's fault (its lookup missed), faults the page in itself (a store
 * to its own word: its insert wins); waits for thread 1 to finish.
 */
static void hold_inserter(pf_arg_t *a, unsigned k, uintptr_t va)
{
	int rc = as_unmap_page(pf1_hot_as, va);
	if (rc == EOK)
		a->hot_held_unmaps++;
	else if (rc != ENOENT)
		mmtest_fail(&pf1_failure, "phase 3, held inserts: unmap of hot "
		    "page %#lx returned %d", va, rc);
	__atomic_store_n(&hold_ipage, va, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hold_igo, k, __ATOMIC_SEQ_CST);
	bool failed = false;
	if (!hold_wait(&hold_iin, k)) {
		failed = true;
		uintptr_t want = va;
		__atomic_compare_exchange_n(&hold_ipage, &want, 0, false,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		mmtest_fail(&pf1_failure, "phase 3, held inserts: thread 1's "
		    "access of unmapped hot page %#lx did not reach the insert "
		    "hook within %lu ms", va, PF_HOLD_US / 1000);
	}
	/* Faults the page in while thread 1's fault waits before its insert. */
	unsigned j = (unsigned) ((va - PF_HOT_BASE) / PAGE_SIZE);
	uint64_t v = hot_val(a->index, pf1_hot_rounds - 1, j);
	__atomic_store_n(&((uint64_t *) va)[a->index], v, __ATOMIC_RELAXED);
	a->hot_last[j] = v;
	if (!hold_wait(&hold_iout, k)) {
		failed = true;
		mmtest_fail(&pf1_failure, "phase 3, held inserts: thread 1 did "
		    "not finish its access of hot page %#lx within %lu ms", va,
		    PF_HOLD_US / 1000);
	}
	if (failed)
		__atomic_store_n(&hold_abort, true, __ATOMIC_SEQ_CST);
}

/**
 * The held faults (after the free-running rounds of phase 3, when
 * pf1_hold_runs()): PF_HOLD_PAGES rounds in which thread 0 unmaps a hot
 * page while the hook holds thread 1's minor fault of it between lookup
 * and lock, so that the fault's locked re-check certainly finds the page
 * unmapped (faults_unmapped), on any host load. The others wait at the
 * barrier.
 */
static void hold_phase(pf_arg_t *a)
{
	if (!pf1_hold_runs())
		return;
	pf_bar_wait(&pf1_bar, hold_begin);
	for (unsigned k = 1; k <= PF_HOLD_PAGES &&
	    !__atomic_load_n(&hold_abort, __ATOMIC_SEQ_CST); k++) {
		if (a->index == 0)
			hold_unmapper(a, k, pf1_hot_page(k));
		else if (a->index == 1)
			hold_faulter(a, k, pf1_hot_page(k), "held faults",
			    &hold_go, &hold_out);
	}
	/* Then the held inserts, on the next PF_HOLD_PAGES hot pages. */
	for (unsigned k = 1; k <= PF_HOLD_PAGES &&
	    !__atomic_load_n(&hold_abort, __ATOMIC_SEQ_CST); k++) {
		uintptr_t va = pf1_hot_page(PF_HOLD_PAGES + k);
		if (a->index == 0)
			hold_inserter(a, k, va);
		else if (a->index == 1)
			hold_faulter(a, k, va, "held inserts", &hold_igo,
			    &hold_iout);
	}
	pf_bar_wait(&pf1_bar, hold_end);
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
			mmtest_fail(&pf1_failure, "thread %u: unmap of %s page %#lx returned %d, expected %d",
			    a->index, salt ? "private" : "shared", va, rc, want);
		pg->state = PG_ABSENT;
		a->unmaps++;
		return;
	}
	if (act >= 6 && pg->state == PG_ABSENT) {
		/* Write fault on an unmapped page. */
		pf1_page_write(va, ++pg->gen, salt);
		pg->state = PG_PAT;
		return;
	}
	got = pf1_page_cmp(va, pg->gen, salt, pg->state != PG_PAT, &ok);
	if (!ok)
		mmtest_fail(&pf1_failure, "thread %u: %s page %#lx (%s, generation %u) read %#lx",
		    a->index, salt ? "private" : "shared", va,
		    pg->state == PG_PAT ? "written" : "unmapped or zero", pg->gen, got);
	if (pg->state == PG_ABSENT)
		pg->state = PG_ZERO;
	if (act >= 6) {
		pf1_page_write(va, ++pg->gen, salt);
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
	b->faults_before = as_stats(b->as).faults;
}

static void pair_after_reads(mmtest_barrier_t *mb)
{
	pf_bar_t *b = pf_bar(mb);
	uint64_t f = as_stats(b->as).faults;
	if (f - b->faults_before != b->want)
		mmtest_fail(&pf1_failure, "stale translation? address space %lu: %lu faults after "
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
		pf1_page_write(mine + j * PAGE_SIZE, g1, 0);
	pf_bar_wait(b, NULL);
	/* B reads them: its CPU caches the translations. */
	for (unsigned j = 0; j < k; j++) {
		got = pf1_page_cmp(theirs + j * PAGE_SIZE, g1, 0, false, &ok);
		if (!ok)
			mmtest_fail(&pf1_failure, "thread %u: page %#lx of thread %u read %#lx before the "
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
			mmtest_fail(&pf1_failure, "thread %u: unmap of its %u pages at %#lx: rc %d, "
			    "%zu removed", a->index, k, mine, rc, removed);
	} else {
		for (unsigned j = 0; j < k; j++) {
			if (as_unmap_page(as, mine + j * PAGE_SIZE) != EOK)
				mmtest_fail(&pf1_failure, "thread %u: unmap of its page %#lx failed",
				    a->index, mine + j * PAGE_SIZE);
		}
	}
	pf_bar_wait(b, pair_before_reads);
	/* B must fault and see fresh pages; then it writes. */
	for (unsigned j = 0; j < k; j++) {
		uintptr_t va = theirs + j * PAGE_SIZE;
		if (j % 2 == 0) {
			got = pf1_page_cmp(va, 0, 0, true, &ok);
			if (!ok)
				mmtest_fail(&pf1_failure, "stale translation: thread %u on CPU %u read %#lx "
				    "from page %#lx after thread %u unmapped it", a->index,
				    CPU->id, got, va, partner);
		}
		pf1_page_write(va, g2, 0);
	}
	pf_bar_wait(b, pair_after_reads);
	/* A reads what B wrote. */
	for (unsigned j = 0; j < k; j++) {
		got = pf1_page_cmp(mine + j * PAGE_SIZE, g2, 0, false, &ok);
		if (!ok)
			mmtest_fail(&pf1_failure, "thread %u: page %#lx reads %#lx, not what thread %u "
			    "wrote after the unmap (a write through a stale entry?)",
			    a->index, mine + j * PAGE_SIZE, got, partner);
	}
	pf_bar_wait(b, NULL);
	a->pair_rounds++;
}

/** Tournament slots: T rounded up to even (one thread sits out if T is odd). */
static unsigned slots(void)
{
	return pf1_nthreads + (pf1_nthreads & 1);
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

void pf1_pf_thread(void *p)
{
	pf_arg_t *a = p;
	unsigned t = a->index;
	uint64_t salt = priv_salt(t);

	pf_bar_wait(&pf1_bar, NULL);
	for (unsigned round = 0; round < PF_ROUNDS; round++) {
		as_enter(pf1_shared_as);
		for (unsigned j = 0; j < pf1_shared_per; j++)
			step(a, pf1_shared_as, pf1_shared_page(t, j), &a->shared[j], 0);
		as_leave();
		as_enter(a->priv);
		for (unsigned j = 0; j < PF_PRIV; j++)
			step(a, a->priv, PF_BASE + (uintptr_t) j * PAGE_SIZE, &a->own[j],
			    salt);
		as_leave();
		if (t == 0)
			pf1_sample_table();
	}
	pf_bar_wait(&pf1_bar, pf1_phase1_end);

	/* 2a: everybody in the shared address space. */
	as_enter(pf1_shared_as);
	for (unsigned d = 1; d <= PF_SPAIR_DISTS && d < pf1_nthreads; d++) {
		unsigned owner = (t + pf1_nthreads - d) % pf1_nthreads;
		pair_protocol(a, pf1_shared_as, &pf1_bar,
		    PF_SPAIR_BASE + (uintptr_t) t * PF_SPAIR_K * PAGE_SIZE,
		    PF_SPAIR_BASE + (uintptr_t) owner * PF_SPAIR_K * PAGE_SIZE,
		    PF_SPAIR_K, owner, d);
	}
	as_leave();
	pf_bar_wait(&pf1_bar, pf1_phase2a_end);

	/* 3: everybody faults and unmaps the same pages, in the same order. */
	as_enter(pf1_hot_as);
	pf_bar_wait(&pf1_bar, hot_round_fn);
	for (unsigned r = 0; pf1_hot_more; r++) {
		for (unsigned j = 0; j < PF_HOT; j++)
			hot_step(a, j, r);
		pf_bar_wait(&pf1_bar, hot_round_fn);
	}
	hold_phase(a);
	as_leave();
	pf_bar_wait(&pf1_bar, pf1_phase3_end);

	/* 2b: a tournament of pairs, each pair in its own address space. */
	for (unsigned rep = 0; rep < PF_PAIR_REPS; rep++) {
		for (unsigned r = 0; r + 1 < slots(); r++) {
			unsigned q = partner_of(t, r);
			if (q >= pf1_nthreads)
				continue;
			unsigned lo = t < q ? t : q, hi = t < q ? q : t;
			pf_pair_t *pp = &pf1_pairs[lo * pf1_nthreads + hi];
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
		mmtest_fail(&pf1_failure, "wired thread runs on another CPU");
}
