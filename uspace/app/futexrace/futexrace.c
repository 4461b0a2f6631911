/** @file futexrace.c
 * Reproducer of a futex defect sysfuzz found: a wake that counts
 * a waiter whose timeout has just fired leaves a remembered wake-up in the
 * futex's wait queue; the next waiter consumes it without being counted
 * and the futex's waiter count stays too high (a debug kernel asserts
 * `f->waiters == 0` when the last thread leaves the futex; a release kernel
 * keeps the count and hands out spurious wake-ups).
 *
 *   futexrace [-t SECONDS] [-n THREADS]
 *
 * THREADS threads (default 8; every fourth a waker, the rest waiters)
 * share one futex word for SECONDS (default 5): waiters wait with timeouts
 * of 1 to 50 us (each ends at a timer tick), wakers wake one waiter at a
 * time without pause. Prints `futexrace: waits W (woken K, timed out T)
 * wakes N woke M` and exits 0; the verdict is the kernel's (no assertion).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>
#include <sys.h>

#define MAX_THREADS 32

static uint32_t word;          /* the futex: never changes (always 0) */
static uint32_t stop;          /* atomic: release/acquire */
static uint64_t waits, woken, timed_out, wakes, woke;  /* atomics, relaxed */

static int waiter(void *arg)
{
	uint64_t n = (uint64_t) arg;
	(void) sys_thread_wire((unsigned) (n % (uint64_t) sys_cpu_count()));
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		long rc = sys_futex_wait(&word, 0, 1000 + (n++ % 50) * 1000);
		__atomic_fetch_add(&waits, 1, __ATOMIC_RELAXED);
		if (rc == 0)
			__atomic_fetch_add(&woken, 1, __ATOMIC_RELAXED);
		else if (rc == ETIMEOUT)
			__atomic_fetch_add(&timed_out, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static int waker(void *arg)
{
	uint64_t n = (uint64_t) arg;
	(void) sys_thread_wire((unsigned) (n % (uint64_t) sys_cpu_count()));
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		long rc = sys_futex_wake(&word, 1);
		__atomic_fetch_add(&wakes, 1, __ATOMIC_RELAXED);
		if (rc > 0)
			__atomic_fetch_add(&woke, (uint64_t) rc, __ATOMIC_RELAXED);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long seconds = 5, n = 8;
	const opt_t opts[] = { { "-t", &seconds, NULL }, { "-n", &n, NULL } };
	if (opts_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0])) != 0 ||
	    n < 4 || n > MAX_THREADS || seconds < 0) {
		printf("usage: futexrace [-t SECONDS] [-n THREADS (4..%d)]\n",
		    MAX_THREADS);
		return 2;
	}
	uthread_t *t[MAX_THREADS];
	long started = 0;
	for (long i = 0; i < n; i++) {
		t[i] = thread_create(i % 4 == 3 ? waker : waiter, (void *) i);
		if (!t[i])
			break;
		started++;
	}
	thread_sleep_ns((uint64_t) seconds * 1000000000UL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (long i = 0; i < started; i++)
		(void) thread_join(t[i]);
	printf("futexrace: waits %lu (woken %lu, timed out %lu) wakes %lu "
	    "woke %lu\n", waits, woken, timed_out, wakes, woke);
	return started == n ? 0 : 3;
}
