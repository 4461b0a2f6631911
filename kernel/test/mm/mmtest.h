/** @file mmtest.h
 * Helpers shared by the memory-management tests (mapping1, as1, pagefault1):
 * the first-failure record of a multi-threaded test, a mixing function, a
 * spinning thread barrier, and a settled snapshot of the memory counters that
 * lets a test require "everything back at its baseline".
 *
 * Tests run one at a time (kconsole runs them in its own thread), so the
 * helpers' own static state needs no lock; what the test threads share is
 * atomic and says so.
 */
#ifndef KERN_TEST_MM_MMTEST_H_
#define KERN_TEST_MM_MMTEST_H_

#include <typedefs.h>
#include <atomic.h>
#include <print.h>
#include <adt/cht.h>
#include <genarch/mm/page_ht.h>

/**
 * First failure of a test whose threads may all fail at once. The error count
 * is atomic; the first failing thread claims the message by CAS on @c claimed
 * and is the only writer of @c msg. Read @c msg after joining the threads.
 */
typedef struct {
	atomic_t errors;   /**< failures so far (atomic) */
	bool claimed;      /**< the message is taken (CAS, seq_cst) */
	char msg[192];     /**< the first failure, written by its claimer only */
} mmtest_failure_t;

/** Resets @a f to "no failure". Call before starting the test's threads. */
void mmtest_failure_reset(mmtest_failure_t *f);

/**
 * Records a failure: counts it and keeps the message if it is the first.
 * Any thread context, may not sleep (it does not).
 */
void mmtest_fail(mmtest_failure_t *f, const char *fmt, ...) PRINTF_ATTR(2, 3);

/** True when a failure was recorded. */
static inline bool mmtest_failed(mmtest_failure_t *f)
{
	return atomic_get(&f->errors) != 0;
}

/**
 * 64-bit finalizer (MurmurHash3 fmix64, full avalanche): patterns
 * and pseudo-random keys.
 */
uint64_t mmtest_mix(uint64_t x);

/** Xorshift64 step: @a s is the state (never 0); returns the next value. */
uint64_t mmtest_rand(uint64_t *s);

/**
 * A reusable barrier for @c n threads. Arrival count and generation are
 * atomics (acq_rel arrival, release/acquire generation): everything a thread
 * did before arriving is visible to every thread after it leaves.
 */
typedef struct mmtest_barrier {
	unsigned n;       /**< threads that must arrive; set before use */
	unsigned count;   /**< arrived in this generation (atomic) */
	unsigned gen;     /**< generation (atomic) */
	bool yield;       /**< threads share CPUs: yield instead of pause */
} mmtest_barrier_t;

/**
 * How many workers a multi-threaded mm test runs: one per online CPU, at
 * least 2 (a race needs two) and at most @a max. Stores the number of online
 * CPUs in @a *online. Thread context.
 */
unsigned mmtest_nthreads(unsigned max, unsigned *online);

/**
 * Waits until all @c b->n threads have arrived; the last to arrive runs @a fn
 * (may be NULL) before any thread goes on. Thread context; spins or yields.
 */
void mmtest_barrier_wait(mmtest_barrier_t *b, void (*fn)(mmtest_barrier_t *));

/**
 * CHT statistics of the page hash table (found by name in the registry of
 * live tables). Returns false with the locked back end. Thread context.
 */
bool mmtest_page_ht_cht_stats(cht_stats_t *st);

/** Memory counters of a settled system (mmtest_snap()). */
typedef struct {
	size_t free;            /**< free frames */
	size_t outside_slabs;   /**< busy frames neither in slabs nor stacks */
	size_t slab_frames;     /**< frames held by slabs */
	size_t heap_allocs;     /**< live heap allocations net of threads */
	size_t threads;         /**< threads that exist */
	size_t entries;         /**< page hash table entries */
	size_t dummies;         /**< heap allocations of the CHT per bucket dummy: 0 (they live in the bucket array) */
	size_t ases;            /**< live address spaces */
	page_ht_stats_t ps;     /**< the page hash table's statistics */
} mmtest_snap_t;

/**
 * Reads the frame and heap counters net of the threads that exist (each has a
 * stack outside the slabs and a heap allocation), until two readings 1 ms
 * apart agree (bounded: 200 tries). Fills free, outside_slabs, slab_frames,
 * heap_allocs and threads. Thread context; sleeps.
 */
void mmtest_counters(mmtest_snap_t *s);

/**
 * Waits for a resize of the page hash table in flight to end and for the
 * deferred frees (rcu_barrier). Thread context; sleeps.
 */
void mmtest_quiesce(void);

/**
 * Settles the system and reads every counter: mmtest_quiesce(), waits for
 * surplus work queue workers to retire and for exited threads to be released
 * (bounded), rcu_barrier(), gives the slab magazines back, then reads.
 * Thread context; sleeps (up to a few seconds).
 */
void mmtest_snap(mmtest_snap_t *s);

/**
 * The check after two identical runs of a test: the second must leave as
 * many free frames and as many slab frames as the first (the first may fill
 * slabs the second then reuses; a growing count is a leak).
 *
 * @param s    The snapshots after the first and after the second run.
 * @param buf  Where a failure's reason is written.
 * @param size Size of @a buf in bytes.
 * @return NULL if they agree, else @a buf.
 */
const char *mmtest_check_repeat(const mmtest_snap_t s[2], char *buf,
    size_t size);

#endif
