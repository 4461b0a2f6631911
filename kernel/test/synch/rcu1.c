/** @file rcu1.c
 * (Files: this one, rcu1_parts1.c and rcu1_parts2.c with the parts, rcu1.h.)
 *
 * RCU functional test (the seed's `rcu1`), for both flavours (a-rcu and
 * podzimek-rcu).
 *
 * Parts, run in order; each prints how many grace periods (GPs) it used:
 * - one callback: rcu_call() runs its callback exactly once, in thread context
 *   with interrupts and preemption enabled, after the GP counter advanced;
 *   N rcu_synchronize() / rcu_synchronize_expedite() calls advance the counter
 *   by at least N.
 * - preempted readers: a reader thread and a helper ("hog") are wired to the
 *   same CPU; the reader forces a context switch inside its section by waking
 *   the hog and yielding until the hog ran (proof that the reader was switched
 *   out). Variants: preempted and unlocked before rcu_call (the callback is not
 *   lost);
 *   started after rcu_call and preempted (not lost); preempted before GP
 *   detection, during it (many times: at least PV_DURING_MIN context switches
 *   while a GP was in progress are required, the variant is repeated up to
 *   PV_DURING_TRIES times to get them), after the detector found the CPU in the
 *   section (spin, then preempt), and preempted twice (the "during" and
 *   "twice" variants post with rcu_call_batched()). In the last four the
 *   callback was posted inside the section, so it must not run before the
 *   reader left: the reader checks it has not run while it holds the section
 *   (about HOLD_US) and the callback checks the reader's "left" flag, which the
 *   reader sets just before its outermost unlock.
 * - rcu_synchronize: a reader inside its section lets the main thread call
 *   rcu_synchronize() and then (a) yields (is preempted) repeatedly or (b)
 *   spins with the hog ready, so the timer preempts it; rcu_synchronize() must
 *   not
 *   return before the reader set its "done" flag (just before unlocking).
 * - rcu_barrier: threads wired to every CPU post callbacks (some from inside
 *   reader sections, half with rcu_call_batched(), and one batched right
 *   before the barrier, likely still on the CPU's stack); after rcu_barrier()
 *   every one of them has run. Then a thread holds another CPU (preemption
 *   disabled) with BAR_HELD_CBS slow batched callbacks on its stack until
 *   the barrier's marker arrives there: they too have run when it returns.
 * - a thread exits inside a (nested) reader section, once plainly and once
 *   after being preempted inside it; the callback it posted inside runs only
 *   after the exit, GPs keep completing, and a new thread does not start inside
 *   a section.
 * - many empty (and nested) reader sections in 4 threads per CPU;
 *   rcu_read_locked() is true inside and false outside.
 * - many empty callbacks from 4 threads per CPU: after rcu_barrier() the count
 *   is exact and every item was freed.
 * - sequence check: threads alternate reading and posting callbacks stamped
 *   from one global clock; a callback records the largest stamp that
 *   completed. A reader takes a stamp after entering its section and, before
 *   leaving, must never find a completed callback stamped after its own start
 *   (that callback was posted while the reader was inside, so it had to wait).
 * - stress: one reader thread (empty sections) and one updater thread (posting
 *   STRESS_TOTAL / CPUs callbacks, at least STRESS_MIN, at most
 *   STRESS_OUTSTANDING in flight) per CPU; the counts are exact and memory
 *   returns.
 * - rcu_slab_free and slab_free_bulk: SFREE_OBJS objects of a cache of its
 *   own freed by rcu_call() callbacks with rcu_slab_free(), and a callback of
 *   another function posted after them on the same CPU: it finds none of
 *   them in use (the reclaimer's gathered frees are done before it), nor
 *   does the caller after rcu_barrier(); then two rounds of SFREE_BULK
 *   objects allocated and freed with one slab_free_bulk().
 * At the end (after rcu_barrier) no callback may be pending and the live heap
 * allocations, net of the threads that exist, must equal those at the start
 * (re-read a bounded number of times: exited threads are released
 * asynchronously).
 *
 * Every part runs even after an earlier one failed, and the one verdict names
 * all failing parts ("N parts failed: part: reason; ..."), so that a broken
 * implementation shows every kind of error the test can catch (the negative
 * controls require a callback run early AND rcu_synchronize returning early).
 * A part cleans up after its own failure (joins its threads, waits for its
 * callbacks); a failure that leaves threads or callbacks in flight (a thread
 * that did not finish, a callback that never ran) sets rcu1_stop and the test
 * stops after that part, since later parts (rcu_barrier) could hang or touch
 * its memory.
 *
 * Verdicts never depend on timing: the hold times only give a wrong
 * implementation the chance to show itself; waits for a callback or a thread
 * are bounded by WAIT_LIMIT_US (a liveness bound of a minute, reported as
 * "lost" or "locked up").
 */

#include "rcu1.h"

static unsigned online_ids[CONFIG_MAX_CPUS];
unsigned rcu1_online_n;
char rcu1_reason_buf[192];
/**
 * A part failed leaving threads or callbacks in flight: no later part may run.
 * Only the main test thread touches it.
 */
static bool rcu1_stop;

/** Marks failure @a why as leaving work in flight; @return @a why. */
const char *rcu1_in_flight(const char *why)
{
	rcu1_stop = true;
	return why;
}

cpu_t *rcu1_nth_cpu(unsigned k)
{
	return &cpus[online_ids[k % rcu1_online_n]];
}

unsigned rcu1_thread_cnt(void)
{
	return MIN(MAX_THREADS, 4 * rcu1_online_n);
}

/**
 * Joins (bounded) the @a made threads in @a t of the @a n a part wanted.
 * @return NULL, or why the part cannot go on.
 */
/**
 * Starts up to @a n threads named @a name running @a f, thread k on
 * rcu1_nth_cpu(k) with the argument (char *) @a args + k * @a stride (all
 * the same @a args when @a stride is 0); stops at the first that cannot be
 * created. @return how many were started (their handles in @a t).
 */
unsigned rcu1_spawn_n(thread_t **t, unsigned n, thread_func_t f, void *args,
    size_t stride, const char *name)
{
	unsigned made = 0;
	for (unsigned k = 0; k < n; k++) {
		void *arg = stride ? (char *) args + k * stride : args;
		t[k] = testlib_spawn(f, arg, name, rcu1_nth_cpu(k));
		if (!t[k])
			break;
		made++;
	}
	return made;
}

const char *rcu1_join_all(thread_t **t, unsigned made, unsigned n)
{
	for (unsigned k = 0; k < made; k++) {
		if (!testlib_join(t[k], WAIT_LIMIT_US))
			return rcu1_in_flight("a thread did not finish");
	}
	return made == n ? NULL : "cannot create a thread";
}

/**
 * rcu1_join_all(), then rcu_barrier() so that every callback the threads
 * posted has run. @a oom: set by a thread that ran out of memory.
 * @return NULL, or why the part cannot go on.
 */
const char *rcu1_join_barrier(thread_t **t, unsigned made, unsigned n,
    atomic_t *oom)
{
	const char *err = rcu1_join_all(t, made, n);
	if (err)
		return err;
	rcu_barrier();
	return atomic_get(oom) ? "out of memory" : NULL;
}

/** Waits (polling, bounded) until *a >= v. */
bool rcu1_wait_atleast(atomic_t *a, size_t v)
{
	uint64_t start = uptime_us();
	while (atomic_get(a) < v) {
		if (uptime_us() - start > WAIT_LIMIT_US)
			return false;
		thread_usleep(1000);
	}
	return true;
}

uint64_t rcu1_gps_now(void)
{
	return rcu_completed_gps();
}

/* ---- a GP elapses (bounded wait) -------------------------------------- */

typedef struct {
	rcu_item_t item;
	atomic_t runs;
} flag_item_t;

static void flag_cb(rcu_item_t *it)
{
	flag_item_t *f = container_of(it, flag_item_t, item);
	/* Last access: the waiter may free the item as soon as it sees this. */
	atomic_inc(&f->runs);
}

/** Posts a callback and waits for it (bounded). Leaks the item on timeout. */
bool rcu1_gp_elapses(void)
{
	flag_item_t *f = malloc(sizeof(*f));
	if (!f)
		return false;
	atomic_set(&f->runs, 0);
	rcu_call(&f->item, flag_cb);
	if (!rcu1_wait_atleast(&f->runs, 1))
		return false;
	free(f);
	return true;
}

/* ---- the hog: forces a context switch on its CPU ----------------------- */

static void hog_main(void *arg)
{
	hog_t *h = arg;
	for (;;) {
		semaphore_down(&h->go);
		if (__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE))
			break;
		atomic_inc(&h->runs);
	}
}

bool rcu1_hog_start(hog_t *h, cpu_t *cpu)
{
	semaphore_initialize(&h->go, 0);
	atomic_set(&h->runs, 0);
	h->stop = false;
	h->thread = testlib_spawn(hog_main, h, "rcu1-hog", cpu);
	return h->thread != NULL;
}

bool rcu1_hog_stop(hog_t *h)
{
	__atomic_store_n(&h->stop, true, __ATOMIC_RELEASE);
	semaphore_up(&h->go);
	return testlib_join(h->thread, WAIT_LIMIT_US);
}

/**
 * Called by a thread wired to the hog's CPU (inside a reader section): wakes
 * the hog and yields until it ran, so this thread was switched out meanwhile.
 */
bool rcu1_preempt_me(hog_t *h)
{
	size_t r = atomic_get(&h->runs);
	uint64_t start = uptime_us();
	semaphore_up(&h->go);
	while (atomic_get(&h->runs) == r) {
		if (uptime_us() - start > WAIT_LIMIT_US)
			return false;
		thread_yield();
	}
	return true;
}

/* ---- driver ------------------------------------------------------------ */

/**
 * Live heap allocations net of the threads that exist (each thread holds one
 * heap allocation, released asynchronously after its exit; modular: threads
 * not from the heap make it "negative") and of the page hash table's bucket
 * dummies (a resize left by an earlier test may still change them), read
 * until two
 * readings 1 ms apart agree (at most @a tries readings).
 */
static size_t settled_live_allocs(unsigned tries)
{
	size_t prev = (size_t) -1, cur = 0;
	for (unsigned k = 0; k < tries + 1; k++) {
		heap_stats_t hs;
		cht_stats_t cs = { 0 };
		size_t t = thread_count();
		heap_get_stats(&hs);
		(void) mmtest_page_ht_cht_stats(&cs);
		cur = hs.allocs - t - cs.dummies;
		if (cur == prev)
			break;
		prev = cur;
		thread_usleep(1000);
	}
	return cur;
}

typedef struct {
	const char *name;
	const char *(*func)(void);
} rcu1_part_t;

static const rcu1_part_t parts[] = {
	{ "one callback, synchronize", rcu1_part_one_cb },
	{ "preempted readers", rcu1_part_preempt },
	{ "rcu_synchronize waits for a reader", rcu1_part_synch },
	{ "rcu_barrier", rcu1_part_barrier },
	{ "thread exits inside a reader", rcu1_part_exit },
	{ "many empty readers", rcu1_part_nop_readers },
	{ "many empty callbacks", rcu1_part_nop_cbs },
	{ "sequence check", rcu1_part_seq },
	{ "stress: a reader and an updater per CPU", rcu1_part_stress },
	{ "rcu_slab_free and slab_free_bulk", rcu1_part_slab_free },
};

/** The failure reasons of the parts, "part: reason; ..." (bounded). */
static char fail_list[768];
static size_t fail_len;
static unsigned fail_cnt;

/** Appends "@a part: @a why" to fail_list (truncated with "..." when full). */
static void note_failure(const char *part, const char *why)
{
	fail_cnt++;
	size_t room = sizeof(fail_list) - fail_len;
	if (room <= 4)
		return;  /* already truncated */
	int n = snprintf(fail_list + fail_len, room, "%s%s: %s",
	    fail_cnt > 1 ? "; " : "", part, why);
	if (n < 0)
		return;
	if ((size_t) n >= room) {
		/* Truncated: end with "..." (the buffer is full from here on). */
		memcpy(fail_list + sizeof(fail_list) - 4, "...", 4);
		fail_len = sizeof(fail_list);
		return;
	}
	fail_len += (size_t) n;
}

const char *test_rcu1(void)
{
	static char reason[sizeof(fail_list) + 64];

	rcu1_online_n = test_online_cpus(online_ids);
	if (rcu1_online_n == 0)
		return "no CPU online";
	rcu1_stop = false;
	fail_list[0] = '\0';
	fail_len = 0;
	fail_cnt = 0;
	mmtest_quiesce();
	size_t live0 = settled_live_allocs(SETTLE_TRIES);
	uint64_t g_start = rcu1_gps_now(), t_start = uptime_us();
	TPRINTF("rcu1: flavour %s, %u CPUs\n", rcu_flavour_name, rcu1_online_n);
	size_t i;
	for (i = 0; i < ARRAY_SIZE(parts) && !rcu1_stop; i++) {
		uint64_t g0 = rcu1_gps_now(), t0 = uptime_us();
		TPRINTF("rcu1: %s\n", parts[i].name);
		const char *r = parts[i].func();
		if (r) {
			TPRINTF("rcu1: %s: FAILED: %s%s\n", parts[i].name, r, rcu1_stop ?
			    " (threads or callbacks left in flight: stopping)" : "");
			note_failure(parts[i].name, r);
			continue;
		}
		TPRINTF("rcu1: %s: ok (GPs: %lu, %lu ms)\n", parts[i].name,
		    rcu1_gps_now() - g0, (uptime_us() - t0) / 1000);
	}
	if (rcu1_stop) {
		snprintf(reason, sizeof(reason), "%u part%s failed (stopped after "
		    "part %zu of %zu): %s", fail_cnt, fail_cnt == 1 ? "" : "s", i,
		    ARRAY_SIZE(parts), fail_list);
		return reason;
	}
	/*
	 * Memory back at its baseline: every callback ran (rcu_barrier) and the
	 * test's threads were released (asynchronously, by the CPU that switched
	 * away from them: bounded re-reads).
	 */
	size_t live1 = 0, pending = 0;
	unsigned tries;
	for (tries = 1; tries <= SETTLE_TRIES; tries++) {
		rcu_barrier();
		pending = rcu_pending_callbacks();
		live1 = settled_live_allocs(1);
		if (pending == 0 && live1 == live0)
			break;
		thread_usleep(SETTLE_SLEEP_US);
	}
	/* The harness parses "all parts ok: N GPs" (and only on success). */
	TPRINTF("rcu1: %s: %lu GPs in %lu ms; pending callbacks %zu; "
	    "live heap allocations (net of threads) %ld before, %ld after (%u "
	    "reads)\n", fail_cnt ? "some parts failed" : "all parts ok",
	    rcu1_gps_now() - g_start, (uptime_us() - t_start) / 1000,
	    pending, (long) live0, (long) live1, tries);
	if (pending != 0) {
		char why[96];
		snprintf(why, sizeof(why), "%zu callbacks still pending after "
		    "rcu_barrier", pending);
		note_failure("at the end", why);
	} else if (live1 != live0) {
		char why[128];
		snprintf(why, sizeof(why), "memory not back at its baseline: %ld "
		    "live heap allocations (net of threads) before, %ld after",
		    (long) live0, (long) live1);
		note_failure("at the end", why);
	}
	if (fail_cnt == 0)
		return NULL;
	snprintf(reason, sizeof(reason), "%u part%s failed: %s", fail_cnt,
	    fail_cnt == 1 ? "" : "s", fail_list);
	return reason;
}
