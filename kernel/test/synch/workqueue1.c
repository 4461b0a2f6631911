/** @file workqueue1.c
 * Work queues (test `workqueue`).
 *
 * - A single item on the system queue, enqueued normally and once more without
 *   blocking with interrupts disabled and a spinlock held.
 * - Stress on a custom queue: waves of self-reproducing items. The item of wave 0
 *   produces COPY_CNT items of wave 1 (it re-enqueues itself as one of them and
 *   allocates the others), each of those COPY_CNT items of wave 2, and so on up to
 *   wave WAVES-1, whose items free themselves. Wave w must see exactly COPY_CNT^w
 *   calls. Every SLEEP_EVERY-th item sleeps inside its work function (blocked
 *   worker accounting), every third one is enqueued without blocking (the
 *   workq-adder thread). The run ends when no item is left (live == 0), with a
 *   generous bound that fails the test instead of hanging. Items accepted and
 *   never run fail it fast: while the run lasts, every test item that exists is
 *   queued or inside a work function (only work functions create items after
 *   the first), so a queue snapshot (taken under its lock) with no queued item
 *   and every worker idle, followed by live > 0, proves that live items were
 *   lost; the run fails when that holds at every poll for LOST_SETTLE_US with
 *   live unchanged ("N items accepted and never run (queue idle)"). Then the
 *   queue must
 *   show no active or blocked worker and no item, is stopped and destroyed, and
 *   the live heap allocations (net of threads) must be back at their count
 *   before the run exactly.
 * - The same stress on the system queue (no destruction, no heap check: the
 *   queue keeps its extra workers until they retire; the test waits, without a
 *   verdict, for them to retire before it measures the heap again).
 * - A custom queue stopped while its items still reproduce: enqueues start to
 *   fail (counted, the items freed), the waves come out short (reported, expected).
 *   At least one enqueue must have been refused (the race the part exists for;
 *   a run whose stop came too late is repeated, at most STOP_TRIES runs), and
 *   every item is accounted for: wave w + 1 was called or refused exactly
 *   COPY_CNT times per call of wave w. It must not hang, crash or leak: after
 *   workq_stop() no item may be left, an enqueue must be refused and the heap
 *   must return to its baseline.
 * Finally the system queue must become quiescent (no active worker, no item).
 *
 * Verdicts depend only on counts; time bounds only turn a hang into a failure.
 */
#include <test.h>
#include <synch/workqueue.h>
#include <synch/spinlock.h>
#include <proc/thread.h>
#include <mm/malloc.h>
#include <time/delay.h>
#include <lib/str.h>
#include <synch/rcu.h>
#include "../mm/mmtest.h"
#include <atomic.h>
#include <print.h>

#define COPY_CNT     4
#define WAVES        8
#define SLEEP_EVERY  16
#define SLEEP_US     2000
/** The premature stop happens once this wave has started. */
#define STOP_WAVE    3
/** Polling period of the main thread. */
#define POLL_US      10000
/** Bound for a whole stress run (a hang becomes a failure). */
#define RUN_MAX_US   (120 * 1000000UL)
/**
 * The queue idle (no queued item, every worker idle) with items outstanding
 * this long fails a stress run (the items were lost). Not a timing verdict: one
 * such snapshot already proves the loss; the settle time is a margin.
 */
#define LOST_SETTLE_US (2 * 1000000UL)
/** Bound for the queue to settle / the heap to return to its baseline. */
#define SETTLE_MAX_US (10 * 1000000UL)
/**
 * The premature stop must really refuse enqueues (the race it exists for); a
 * run whose stop came too late for that is repeated, at most this often.
 */
#define STOP_TRIES   3

typedef struct {
	work_t work;
	unsigned wave;
	size_t id;
} test_item_t;

/** State of the current stress run (one at a time). Atomics. */
static struct {
	/** Queue under test; NULL: the system queue. Set before the run. */
	struct work_queue *q;
	atomic_t calls[WAVES];
	/** Items allocated and not yet freed. */
	atomic_t live;
	atomic_t next_id;
	atomic_t enqueue_failures;
	/** Refused enqueues of items of each wave. */
	atomic_t refused[WAVES];
	atomic_t alloc_failures;
	atomic_t sleeps;
	/**
	 * The run failed with items lost while the queue was idle (stopping the
	 * queue is then safe). Only the main test thread uses it.
	 */
	bool lost;
} run;

static size_t expected[WAVES];

static void reproduce(work_t *work);

static test_item_t *item_alloc(unsigned wave)
{
	test_item_t *it = malloc(sizeof(*it));
	if (!it) {
		atomic_inc(&run.alloc_failures);
		return NULL;
	}
	atomic_inc(&run.live);
	it->wave = wave;
	it->id = atomic_postinc(&run.next_id);
	return it;
}

static void item_free(test_item_t *it)
{
	free(it);
	/* After the free: live == 0 means every item is gone. */
	atomic_dec(&run.live);
}

static bool item_enqueue(test_item_t *it)
{
	bool noblock = it->id % 3 == 1;
	if (run.q) {
		return noblock ? workq_enqueue_noblock(run.q, &it->work, reproduce) :
		    workq_enqueue(run.q, &it->work, reproduce);
	}
	return noblock ? workq_global_enqueue_noblock(&it->work, reproduce) :
	    workq_global_enqueue(&it->work, reproduce);
}

/** Enqueues @a it or, when the queue refuses it, counts that and frees it. */
static void item_enqueue_or_free(test_item_t *it)
{
	if (!item_enqueue(it)) {
		atomic_inc(&run.enqueue_failures);
		atomic_inc(&run.refused[it->wave]);
		item_free(it);
	}
}

static void reproduce(work_t *work)
{
	test_item_t *it = container_of(work, test_item_t, work);
	/* The item is ours now: the queue must not read it any more. */
	memset(&it->work, 0xec, sizeof(it->work));

	unsigned wave = it->wave;
	atomic_inc(&run.calls[wave]);
	if (it->id % SLEEP_EVERY == 0) {
		atomic_inc(&run.sleeps);
		thread_usleep(SLEEP_US);
	}
	if (wave + 1 >= WAVES) {
		item_free(it);
		return;
	}
	for (unsigned i = 0; i < COPY_CNT - 1; i++) {
		test_item_t *child = item_alloc(wave + 1);
		if (child)
			item_enqueue_or_free(child);
	}
	/* Re-use this item as the last child. */
	it->wave = wave + 1;
	it->id = atomic_postinc(&run.next_id);
	item_enqueue_or_free(it);
}

static void run_reset(struct work_queue *q)
{
	run.q = q;
	for (unsigned w = 0; w < WAVES; w++) {
		atomic_set(&run.calls[w], 0);
		atomic_set(&run.refused[w], 0);
	}
	atomic_set(&run.live, 0);
	atomic_set(&run.next_id, 0);
	atomic_set(&run.enqueue_failures, 0);
	atomic_set(&run.alloc_failures, 0);
	atomic_set(&run.sleeps, 0);
	run.lost = false;
}

static size_t total_expected(void)
{
	size_t total = 0;
	for (unsigned w = 0; w < WAVES; w++)
		total += expected[w];
	return total;
}

/** Prints one line per wave; @return true when every wave is exact. */
static bool report_waves(void)
{
	bool ok = true;
	for (unsigned w = 0; w < WAVES; w++) {
		size_t got = atomic_get(&run.calls[w]);
		if (got == expected[w]) {
			TPRINTF("Ok: %zu calls in wave %u, as expected.\n", got, w);
		} else {
			ok = false;
			TPRINTF("Error: %zu calls in wave %u, but %zu expected.\n", got, w,
			    expected[w]);
		}
	}
	return ok;
}

static void get_stats(struct work_queue *q, workq_stats_t *s)
{
	if (q)
		workq_get_stats(q, s);
	else
		workq_global_get_stats(s);
}

/** Waits (bounded) until @a q has no active or blocked worker and no item. */
static bool wait_quiescent(struct work_queue *q)
{
	workq_stats_t s;
	uint64_t start = uptime_us();
	for (;;) {
		get_stats(q, &s);
		if (s.active == 0 && s.blocked == 0 && s.items == 0)
			return true;
		if (uptime_us() - start > SETTLE_MAX_US) {
			TPRINTF("Queue not quiescent: %zu workers, %zu active, %zu "
			    "blocked, %zu idle, %zu queued items\n", s.workers, s.active,
			    s.blocked, s.idle, s.items);
			return false;
		}
		thread_usleep(POLL_US);
	}
}

/**
 * Live heap allocations net of the threads that exist (workers come and go;
 * each thread holds one heap allocation, released asynchronously after its
 * exit by the CPU that switched away from it) and of the page hash table's
 * bucket dummies (a resize left by an earlier test may still change them).
 */
static size_t live_allocs(void)
{
	heap_stats_t hs;
	cht_stats_t cs = { 0 };
	size_t t = thread_count();
	heap_get_stats(&hs);
	(void) mmtest_page_ht_cht_stats(&cs);
	return hs.allocs - t - cs.dummies;
}

/**
 * Waits (bounded) until the live allocations net of threads equal @a base
 * exactly (after the queue was quiesced, stopped and destroyed).
 */
static bool wait_heap_baseline(size_t base)
{
	uint64_t start = uptime_us();
	for (;;) {
		rcu_barrier();
		size_t live = live_allocs();
		if (live == base)
			return true;
		if (uptime_us() - start > SETTLE_MAX_US) {
			TPRINTF("Heap: %ld live allocations (net of threads), %ld before "
			    "the run\n", (long) live, (long) base);
			return false;
		}
		thread_usleep(POLL_US);
	}
}

/**
 * Gives the system queue time (bounded, no verdict) to retire its surplus idle
 * workers, so that their release does not mask or fake heap counts later.
 */
static void wait_system_shrink(void)
{
	workq_config_t cfg;
	workq_get_config(&cfg);
	workq_stats_t s;
	uint64_t start = uptime_us();
	for (;;) {
		workq_global_get_stats(&s);
		if (s.workers <= cfg.min_idle ||
		    uptime_us() - start > SETTLE_MAX_US)
			break;
		thread_usleep(POLL_US);
	}
}

/**
 * One stress run on @a q (NULL: the system queue) until no item is left.
 * @return NULL or the failure reason.
 */
static const char *stress_full(struct work_queue *q)
{
	run_reset(q);
	TPRINTF("%d waves, %d copies per item, %zu calls expected; every %d-th item "
	    "sleeps.\n", WAVES, COPY_CNT, total_expected(), SLEEP_EVERY);

	test_item_t *root = item_alloc(0);
	if (!root)
		return "out of memory";
	if (!item_enqueue(root)) {
		item_free(root);
		return "the first item was refused";
	}

	static char reason[96];
	size_t peak_blocked = 0, peak_workers = 0;
	/* The queue has looked idle with idle_live items left since idle_since. */
	bool idle_seen = false;
	uint64_t idle_since = 0;
	size_t idle_live = 0;
	uint64_t start = uptime_us();
	while (atomic_get(&run.live) > 0) {
		uint64_t now = uptime_us();
		if (now - start > RUN_MAX_US) {
			report_waves();
			return "stress run did not finish in time (items stuck)";
		}
		workq_stats_t s;
		get_stats(q, &s);
		/*
		 * Read after the snapshot: a worker's last decrement of live precedes
		 * its taking the queue lock to go idle, so it is visible here.
		 */
		size_t live = atomic_get(&run.live);
		peak_blocked = MAX(peak_blocked, s.blocked);
		peak_workers = MAX(peak_workers, s.workers);
		if (s.items == 0 && s.active == 0 && s.blocked == 0 && live > 0) {
			if (!idle_seen || live != idle_live) {
				idle_seen = true;
				idle_since = now;
				idle_live = live;
			} else if (now - idle_since >= LOST_SETTLE_US) {
				report_waves();
				TPRINTF("Queue idle for %lu ms (%zu workers, all idle, no "
				    "queued item) with %zu items left.\n",
				    (now - idle_since) / 1000, s.workers, live);
				run.lost = true;
				snprintf(reason, sizeof(reason), "%zu items accepted and "
				    "never run (queue idle)", live);
				return reason;
			}
		} else {
			idle_seen = false;
		}
		thread_usleep(POLL_US);
	}
	uint64_t took = uptime_us() - start;

	bool ok = report_waves();
	TPRINTF("Done in %lu ms: %zu sleeping items; seen up to %zu workers, %zu "
	    "blocked.\n", took / 1000, atomic_get(&run.sleeps), peak_workers,
	    peak_blocked);
	if (atomic_get(&run.alloc_failures))
		return "out of memory during the stress run";
	if (atomic_get(&run.enqueue_failures))
		return "an enqueue on a running queue failed";
	if (!ok)
		return "Failed to invoke the expected number of calls";
	if (!wait_quiescent(q))
		return "workers still active or blocked, or items queued, after the run";
	return NULL;
}

static const char *test_custom_full(void)
{
	TPRINTF("Stress testing a custom queue.\n");
	mmtest_quiesce();
	size_t base = live_allocs();

	struct work_queue *q = workq_create("test-workq");
	if (!q)
		return "cannot create a work queue";
	const char *err = stress_full(q);
	if (err && atomic_get(&run.live) > 0 && !run.lost)
		return err;  /* items stuck: stopping could hang; leave the queue */
	workq_stop(q);
	workq_destroy(q);
	if (err)
		return err;
	if (!wait_heap_baseline(base))
		return "live heap allocations not back at their baseline after the "
		    "custom queue run";
	return NULL;
}

/**
 * One run on a custom queue stopped while its items reproduce. @a refused gets
 * the enqueues the stopped queue refused. @return NULL or the failure reason.
 */
static const char *custom_stop_once(size_t *refused)
{
	mmtest_quiesce();
	size_t base = live_allocs();
	*refused = 0;

	struct work_queue *q = workq_create("test-workq-stop");
	if (!q)
		return "cannot create a work queue";
	run_reset(q);
	test_item_t *root = item_alloc(0);
	if (!root) {
		workq_destroy(q);
		return "out of memory";
	}
	if (!item_enqueue(root)) {
		item_free(root);
		workq_destroy(q);
		return "the first item was refused";
	}

	/* Let it get busy, then stop it under way (the bound only avoids a hang). */
	uint64_t start = uptime_us();
	while (atomic_get(&run.calls[STOP_WAVE]) == 0 && atomic_get(&run.live) > 0 &&
	    uptime_us() - start < RUN_MAX_US)
		thread_usleep(1000);
	workq_stop(q);

	size_t live = atomic_get(&run.live);
	(void) report_waves();
	size_t done = 0;
	for (unsigned w = 0; w < WAVES; w++)
		done += atomic_get(&run.calls[w]);
	TPRINTF("Stopped: %zu of %zu calls done, %zu enqueues refused, %zu items "
	    "left.\n", done, total_expected(), atomic_get(&run.enqueue_failures),
	    live);

	static char reason[160];
	const char *err = NULL;
	for (unsigned w = 0; w < WAVES; w++) {
		if (atomic_get(&run.calls[w]) > expected[w])
			err = "more calls than items in a wave";
	}
	/*
	 * Exact conservation: each call of wave w (but the last) enqueued
	 * COPY_CNT items of wave w + 1; each was called or refused (and freed).
	 */
	for (unsigned w = 0; w + 1 < WAVES && !err; w++) {
		size_t made = atomic_get(&run.calls[w]) * COPY_CNT;
		size_t fate = atomic_get(&run.calls[w + 1]) +
		    atomic_get(&run.refused[w + 1]);
		if (made != fate && atomic_get(&run.alloc_failures) == 0) {
			snprintf(reason, sizeof(reason), "wave %u: %zu items enqueued, "
			    "but %zu called and %zu refused", w + 1, made,
			    atomic_get(&run.calls[w + 1]),
			    atomic_get(&run.refused[w + 1]));
			err = reason;
		}
	}
	if (atomic_get(&run.alloc_failures))
		err = "out of memory during the stopped run";
	*refused = atomic_get(&run.enqueue_failures);
	if (live != 0)
		err = "items left after workq_stop()";
	work_t probe;
	memset(&probe, 0, sizeof(probe));
	if (workq_enqueue(q, &probe, reproduce) ||
	    workq_enqueue_noblock(q, &probe, reproduce))
		err = "a stopped queue accepted an item";
	workq_destroy(q);
	if (err)
		return err;
	if (!wait_heap_baseline(base))
		return "live heap allocations not back at their baseline after the "
		    "stopped queue run";
	return NULL;
}

static const char *test_custom_stop(void)
{
	static char reason[160];
	size_t refused = 0;
	for (unsigned k = 1; k <= STOP_TRIES; k++) {
		TPRINTF("Stress testing a custom queue. Stops prematurely. "
		    "Errors are expected.\n");
		const char *err = custom_stop_once(&refused);
		if (err)
			return err;
		if (refused > 0)
			return NULL;
		TPRINTF("The stop refused no enqueue (try %u of %d).\n", k,
		    STOP_TRIES);
	}
	snprintf(reason, sizeof(reason), "the premature stop never refused an "
	    "enqueue (%d runs): the stop-while-busy race did not happen",
	    STOP_TRIES);
	return reason;
}

static atomic_t single_calls;
static work_t single_work;
static work_t single_work_nb;

static void single_func(work_t *work)
{
	atomic_inc(&single_calls);
}

static const char *test_single(void)
{
	TPRINTF("A single item on the system queue.\n");
	atomic_set(&single_calls, 0);
	if (!workq_global_enqueue(&single_work, single_func))
		return "the system queue refused an item";

	/* Non-blocking enqueue with interrupts disabled under a spinlock. */
	static irq_spinlock_t lock = IRQ_SPINLOCK_INITIALIZER("workqueue1");
	irq_spinlock_lock(&lock, true);
	bool ok = workq_global_enqueue_noblock(&single_work_nb, single_func);
	irq_spinlock_unlock(&lock, true);
	if (!ok)
		return "the system queue refused a non-blocking item";

	uint64_t start = uptime_us();
	while (atomic_get(&single_calls) < 2) {
		if (uptime_us() - start > SETTLE_MAX_US)
			return "a single item on the system queue did not run";
		thread_usleep(1000);
	}
	/* Each item runs exactly once. */
	thread_usleep(POLL_US);
	if (atomic_get(&single_calls) != 2)
		return "a single item ran more than once";
	return NULL;
}

const char *test_workqueue(void)
{
	expected[0] = 1;
	for (unsigned w = 1; w < WAVES; w++)
		expected[w] = expected[w - 1] * COPY_CNT;

	const char *err = test_single();
	if (err)
		return err;

	err = test_custom_full();
	if (err)
		return err;

	TPRINTF("Stress testing the system queue.\n");
	err = stress_full(NULL);
	if (err)
		return err;

	wait_system_shrink();
	err = test_custom_stop();
	if (err)
		return err;

	TPRINTF("Waiting for the system queue to settle.\n");
	if (!wait_quiescent(NULL))
		return "the system queue has active workers or queued items";
	wait_system_shrink();
	return NULL;
}
