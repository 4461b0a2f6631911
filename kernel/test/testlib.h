/** @file testlib.h
 * The kernel tests' own library: the check macro, the liveness bound of every
 * bounded wait, thread spawn/join helpers, and a memory baseline that
 * tolerates the system work queue's surplus workers (a resize or other system
 * work may make the queue create workers that retire only after their idle
 * timeout) and exited threads that are released asynchronously.
 *
 * Tests run one at a time (kconsole runs them in its own thread); the helpers
 * keep no state of their own except the reason buffer of testlib_mem_back().
 * The memory-management tests add their settled counter snapshot on top of
 * this (kernel/test/mm/mmtest.h).
 */
#ifndef KERN_TEST_TESTLIB_H_
#define KERN_TEST_TESTLIB_H_

#include <typedefs.h>
#include <cpu.h>
#include <proc/thread.h>
#include <mm/malloc.h>
#include <mm/frame.h>

/**
 * In a test function (returning const char *): fails the test with @a msg
 * (a string literal or static buffer) unless @a cond holds.
 */
#define CHECK(cond, msg) \
	do { \
		if (!(cond)) \
			return (msg); \
	} while (0)

/**
 * Liveness bound for waiting on another thread, a callback or a count
 * (a minute; never a timing assertion: TCG on a loaded host is slow).
 */
#define WAIT_LIMIT_US 60000000ULL

/** One part of a test, for testlib_run_parts(). */
typedef struct {
	/** Printed as "TEST: TITLE" before the part runs; NULL: nothing. */
	const char *title;
	/** The part: NULL when it passed, else the failure reason. */
	const char *(*run)(void);
} testlib_part_t;

/**
 * Runs the @a n parts of the test @a test in order and stops at the first
 * that fails. Thread context (as the parts need).
 * @return NULL when every part passed, else the first failure's reason.
 */
const char *testlib_run_parts(const char *test, const testlib_part_t *parts,
    size_t n);

/**
 * Creates a thread running @a f(@a arg) named @a name and wires it to @a cpu
 * unless that is NULL; does not start it. Thread context; may sleep.
 * @return the thread, or NULL when it cannot be created (out of memory).
 */
thread_t *testlib_create(thread_func_t f, void *arg, const char *name,
    cpu_t *cpu);

/**
 * testlib_create(), then starts the thread.
 * @return the thread, or NULL when it cannot be created (out of memory).
 */
thread_t *testlib_spawn(thread_func_t f, void *arg, const char *name,
    cpu_t *cpu);

/**
 * Threads created first and started together, so that a failed creation
 * starts none of them doing real work. Owned by the test's thread.
 */
typedef struct {
	thread_t **threads;  /**< Room for every thread the test may add. */
	unsigned n;          /**< Threads created so far. */
	bool failed;         /**< A creation failed. */
} testlib_group_t;

/**
 * Creates a thread as testlib_create() does and adds it to @a g; on failure
 * sets @a g->failed. Thread context; may sleep.
 * @return false when the thread cannot be created.
 */
bool testlib_group_add(testlib_group_t *g, thread_func_t f, void *arg,
    const char *name, cpu_t *cpu);

/**
 * Runs the group: sets @a *abort to @a g->failed (the threads must then
 * return at once; they read the flag only after their start, which orders
 * the write before), starts every thread, joins them all and clears
 * @a *abort. Thread context; sleeps until every thread has finished.
 */
void testlib_group_run(testlib_group_t *g, bool *abort);

/**
 * Joins @a t, waiting at most @a max_us microseconds. A NULL @a t counts as
 * joined. Thread context; sleeps.
 * @return true when the thread finished and was joined; false on timeout (the
 * thread is left as it is).
 */
bool testlib_join(thread_t *t, uint64_t max_us);

/**
 * Gives the slab magazines and empty slabs back, then reads the heap and the
 * frame counters into @a hs and @a fs. Thread context; may sleep.
 */
void testlib_mem_snapshot(heap_stats_t *hs, frame_stats_t *fs);

/**
 * Waits until the system work queue has retired its surplus workers (no more
 * than its configured minimum of idle workers), at most @a max_us
 * microseconds. Gives no verdict: a busy queue only makes the wait end at the
 * bound. Thread context; sleeps in 20 ms steps.
 */
void testlib_wait_workers_idle(uint64_t max_us);

/**
 * Waits until the heap (allocation count and bytes) and the free frames are
 * back at the baseline @a hb / @a fb taken with testlib_mem_snapshot(): first
 * testlib_wait_workers_idle(@a max_us), then a snapshot every 20 ms for at
 * most @a max_us microseconds.
 *
 * @return NULL when the counters matched the baseline, else a failure reason
 * with the last readings and the baseline (a static buffer, valid until the
 * next call). Thread context; sleeps.
 */
const char *testlib_mem_back(const heap_stats_t *hb, const frame_stats_t *fb,
    uint64_t max_us);

#endif
