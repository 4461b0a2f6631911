/** @file waitq1.c
 * Wait queues: timeouts expire, wake-ups are not lost.
 *
 * - A sleep with a timeout on an empty queue returns ETIMEOUT, not before its
 *   deadline (uptime is monotonic; this is a lower bound, not a speed check).
 * - A wake-up before the sleep is remembered: the sleep returns EOK at once;
 *   SYNCH_FLAGS_NON_BLOCKING consumes it, and returns ETIMEOUT when none is left.
 * - waitq_signal with no sleeper is not remembered.
 * - Stress: producers on every CPU do exactly N wake_one each while consumers on
 *   every CPU do exactly N sleeps each, racing; every sleep must return EOK and
 *   no wake-up may remain (none lost, none invented).
 *   A consumer sleeps in slices of WAIT_SLICE_US and retries a sleep that timed
 *   out, so a lost wake-up fails the test instead of hanging it. The verdict does
 *   not depend on timing: a timed-out sleep is a lost wake-up only if it began
 *   after every producer had finished. By then all wake-ups were issued, and
 *   while this consumer still owes a sleep, fewer sleeps than wake-ups have
 *   succeeded, so one must be pending (remembered) and the sleep return EOK at
 *   once; a sleep that times out instead proves that one was lost.
 * - wake_all wakes every sleeper (each sleep is bounded by ALL_SLEEP_MAX_US,
 *   which turns a lost wake_all into a failure instead of a hang).
 */
#include <test.h>
#include <proc/thread.h>
#include <synch/waitq.h>
#include <time/delay.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>

#define STRESS_N 300
#define SLEEPERS 8
/** A consumer's sleep is cut into slices of this many microseconds. */
#define WAIT_SLICE_US 1000000
/** Bound of a wake_all sleeper's sleep and of a remembered wake-up (us). */
#define ALL_SLEEP_MAX_US (60 * 1000000UL)

static waitq_t wq;
static atomic_t bad_results;
static atomic_t woken;
/** Consumer sleeps that proved a wake-up lost. Atomic. */
static atomic_t lost;
/** wake_all sleepers whose bounded sleep timed out. Atomic. */
static atomic_t all_timeouts;
/**
 * Producers still running: set by the main thread before they start,
 * decremented (release) by each after its last wake-up, read (acquire) by the
 * consumers before a sleep.
 */
static size_t producers_left;

static void consumer(void *arg)
{
	for (int i = 0; i < STRESS_N; i++) {
		for (;;) {
			bool all_issued = __atomic_load_n(&producers_left,
			    __ATOMIC_ACQUIRE) == 0;
			errno_t rc = waitq_sleep_timeout(&wq, WAIT_SLICE_US,
			    SYNCH_FLAGS_NONE);
			if (rc == EOK)
				break;
			if (rc != ETIMEOUT) {
				atomic_inc(&bad_results);
				break;
			}
			if (all_issued) {
				/* See the file comment: a wake-up was lost. */
				atomic_inc(&lost);
				return;
			}
		}
	}
}

static void producer(void *arg)
{
	for (int i = 0; i < STRESS_N; i++) {
		waitq_wake_one(&wq);
		if (i % 16 == 0)
			thread_yield();
	}
	__atomic_sub_fetch(&producers_left, 1, __ATOMIC_RELEASE);
}

static void all_sleeper(void *arg)
{
	if (waitq_sleep_timeout(&wq, ALL_SLEEP_MAX_US, SYNCH_FLAGS_NONE) == EOK)
		atomic_inc(&woken);
	else
		atomic_inc(&all_timeouts);
}

const char *test_waitq1(void)
{
	static char reason[96];
	waitq_initialize(&wq);

	/* Timeouts expire. */
	for (uint64_t us = 1000; us <= 30000; us *= 3) {
		uint64_t start = uptime_us();
		errno_t rc = waitq_sleep_timeout(&wq, us, SYNCH_FLAGS_NONE);
		uint64_t took = uptime_us() - start;
		if (rc != ETIMEOUT)
			return "sleep on an empty queue did not time out";
		if (took < us) {
			snprintf(reason, sizeof(reason), "timeout of %lu us expired after "
			    "%lu us", us, took);
			return reason;
		}
	}

	/* Missed wake-ups are remembered and consumed one by one. */
	waitq_wake_one(&wq);
	waitq_wake_one(&wq);
	if (waitq_sleep_timeout(&wq, ALL_SLEEP_MAX_US, SYNCH_FLAGS_NONE) != EOK)
		return "remembered wake-up not consumed";
	if (waitq_sleep_timeout(&wq, 0, SYNCH_FLAGS_NON_BLOCKING) != EOK)
		return "non-blocking sleep did not consume the second wake-up";
	if (waitq_sleep_timeout(&wq, 0, SYNCH_FLAGS_NON_BLOCKING) != ETIMEOUT)
		return "non-blocking sleep invented a wake-up";
	waitq_signal(&wq);
	if (waitq_sleep_timeout(&wq, 0, SYNCH_FLAGS_NON_BLOCKING) != ETIMEOUT)
		return "waitq_signal without sleepers was remembered";

	/* Stress: producers and consumers on every CPU. */
	atomic_set(&bad_results, 0);
	atomic_set(&lost, 0);
	thread_t *threads[2 * CONFIG_MAX_CPUS];
	unsigned n = 0;
	size_t nprod = 0;
	for (unsigned c = 0; c < cpu_count; c++)
		nprod += cpu_is_online(c);
	__atomic_store_n(&producers_left, nprod, __ATOMIC_RELEASE);
	for (unsigned c = 0; c < cpu_count; c++) {
		if (!cpu_is_online(c))
			continue;
		threads[n] = thread_create(consumer, NULL, "waitq1-cons", THREAD_FLAG_NONE);
		threads[n + 1] = thread_create(producer, NULL, "waitq1-prod",
		    THREAD_FLAG_NONE);
		if (!threads[n] || !threads[n + 1])
			return "thread_create failed";
		thread_wire(threads[n], &cpus[c]);
		thread_wire(threads[n + 1], &cpus[(c + 1) % cpu_count]);
		thread_start(threads[n]);
		thread_start(threads[n + 1]);
		n += 2;
	}
	for (unsigned i = 0; i < n; i++)
		thread_join(threads[i]);
	if (atomic_get(&bad_results))
		return "a consumer's sleep did not return EOK";
	if (atomic_get(&lost)) {
		snprintf(reason, sizeof(reason), "%zu consumers timed out in a sleep "
		    "begun after all %u producers had finished (lost wake-up)",
		    (size_t) atomic_get(&lost), n / 2);
		return reason;
	}
	if (waitq_sleep_timeout(&wq, 0, SYNCH_FLAGS_NON_BLOCKING) != ETIMEOUT)
		return "wake-ups left over after the stress (invented wake-ups)";
	printf("waitq1: %u producers x %d wake-ups matched %u consumers x %d sleeps\n",
	    n / 2, STRESS_N, n / 2, STRESS_N);

	/* wake_all wakes every sleeper. */
	atomic_set(&woken, 0);
	atomic_set(&all_timeouts, 0);
	thread_t *sl[SLEEPERS];
	for (int i = 0; i < SLEEPERS; i++) {
		sl[i] = thread_run(all_sleeper, NULL, "waitq1-all");
		if (!sl[i])
			return "thread_create failed";
	}
	/* Wait until all are asleep (bounded), then wake them at once. */
	for (int k = 0; k < 100000 && waitq_count(&wq) < SLEEPERS; k++)
		thread_usleep(1000);
	if (waitq_count(&wq) != SLEEPERS)
		return "sleepers did not go to sleep";
	waitq_wake_all(&wq);
	for (int i = 0; i < SLEEPERS; i++)
		thread_join(sl[i]);
	if (atomic_get(&woken) != SLEEPERS) {
		snprintf(reason, sizeof(reason), "wake_all did not wake every sleeper "
		    "(%zu of %d timed out after %lu s)", (size_t) atomic_get(&all_timeouts),
		    SLEEPERS, ALL_SLEEP_MAX_US / 1000000);
		return reason;
	}
	if (waitq_sleep_timeout(&wq, 0, SYNCH_FLAGS_NON_BLOCKING) != ETIMEOUT)
		return "wake_all was remembered";
	return NULL;
}
