/** @file semaphore2.c
 * A semaphore of value K admits at most K threads; timeouts and trydown.
 *
 * Part 1 (one thread): down_timeout on a zero semaphore returns ETIMEOUT and
 * leaves the count alone; trydown fails on zero and succeeds exactly count
 * times; up/down change semaphore_count_get() by one.
 * Part 2 (two threads): a thread sleeping in semaphore_down() shows up as count
 * -1 and is woken by one up; a down_timeout with a long timeout is satisfied by
 * an up (EOK, not ETIMEOUT).
 * Part 3 (stress): 2 threads per online CPU (wired) + 2 unwired ones repeatedly
 * down, stay a little inside, up. An atomic in-section counter must never exceed
 * K; at the end the count is K again. The maximum seen is printed (reaching K
 * is likely with several CPUs but not required).
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <synch/semaphore.h>

#define K          3
/**
 * Rounds over all stress threads (split evenly; keeps -smp 4 and 8 under TCG
 * quick: with more vCPUs than host CPUs every wake-up waits for the host to
 * run the woken vCPU). `semaphore2long` (make soak) does LONG_FACTOR times as
 * many.
 */
#define TOTAL_ROUNDS 3000
#define LONG_FACTOR 8


/** Shared by the threads of one part; all fields atomics or set before start. */
static struct {
	semaphore_t sem;
	atomic_t inside;     /**< Threads in the section. */
	atomic_t max_inside; /**< Largest value of inside seen. */
	atomic_t violations; /**< Times inside exceeded K. */
	atomic_t done;       /**< Helper finished its step. */
	atomic_t result;     /**< Helper's result (errno_t + 100). */
	bool abort;          /**< Set before start: threads do nothing. */
	unsigned rounds;     /**< Rounds per stress thread; set before start. */
	unsigned total;      /**< Rounds over all threads; set by the entry. */
} s2;

/** Polls until semaphore_count_get() == @a value; false after WAIT_LIMIT_US. */
static bool wait_count(semaphore_t *sem, int value)
{
	for (uint64_t waited = 0; waited < WAIT_LIMIT_US; waited += 1000) {
		if (semaphore_count_get(sem) == value)
			return true;
		thread_usleep(1000);
	}
	return false;
}

static void sleeper_down(void *arg)
{
	(void) arg;
	semaphore_down(&s2.sem);
	atomic_set(&s2.done, 1);
}

static void sleeper_down_timeout(void *arg)
{
	(void) arg;
	errno_t rc = semaphore_down_timeout(&s2.sem, WAIT_LIMIT_US);
	atomic_set(&s2.result, (size_t) (rc + 100));
	atomic_set(&s2.done, 1);
}

static void stress(void *arg)
{
	unsigned seed = (unsigned) (uintptr_t) arg * 2654435761u + 1;

	if (s2.abort)
		return;
	for (unsigned i = 0; i < s2.rounds; i++) {
		semaphore_down(&s2.sem);
		size_t in = atomic_preinc(&s2.inside);
		if (in > K)
			atomic_inc(&s2.violations);
		size_t max = atomic_get(&s2.max_inside);
		while (in > max) {
			size_t prev = atomic_cas(&s2.max_inside, max, in);
			if (prev == max)
				break;
			max = prev;
		}
		/* Stay inside a varying little while; sometimes give the CPU away. */
		seed = seed * 1103515245u + 12345u;
		for (unsigned d = (seed >> 16) % 200; d > 0; d--)
			cpu_relax();
		if ((seed >> 8) % 8 == 0)
			thread_yield();
		atomic_dec(&s2.inside);
		semaphore_up(&s2.sem);
	}
}

static const char *part_single(void)
{
	semaphore_t *s = &s2.sem;

	semaphore_initialize(s, 0);
	CHECK(semaphore_count_get(s) == 0, "initial count is not 0");
	CHECK(semaphore_down_timeout(s, 10000) == ETIMEOUT,
	    "down_timeout on a zero semaphore did not time out");
	CHECK(semaphore_count_get(s) == 0, "a timed-out down changed the count");
	CHECK(!semaphore_trydown(s), "trydown succeeded on a zero semaphore");

	semaphore_up(s);
	CHECK(semaphore_count_get(s) == 1, "up did not make the count 1");
	CHECK(semaphore_trydown(s), "trydown failed on count 1");
	CHECK(semaphore_count_get(s) == 0, "trydown did not decrement");
	CHECK(!semaphore_trydown(s), "second trydown succeeded");

	for (int i = 0; i < K; i++)
		semaphore_up(s);
	CHECK(semaphore_count_get(s) == K, "K ups did not give count K");
	CHECK(semaphore_down_timeout(s, 10000) == EOK,
	    "down_timeout failed on a positive count");
	semaphore_down(s);
	CHECK(semaphore_count_get(s) == K - 2, "downs did not decrement");
	for (int i = 0; i < K - 2; i++)
		CHECK(semaphore_trydown(s), "trydown failed on a positive count");
	CHECK(!semaphore_trydown(s), "trydown succeeded past zero");

	semaphore_initialize(s, K);
	CHECK(semaphore_count_get(s) == K, "initialize(K) does not give count K");
	return NULL;
}

/** Runs @a fn in a new thread that must end up asleep on s2.sem, then ups. */
static const char *part_wake(thread_func_t fn, bool check_result)
{
	semaphore_initialize(&s2.sem, 0);
	atomic_set(&s2.done, 0);
	atomic_set(&s2.result, 0);
	thread_t *t = thread_create(fn, NULL, "sem2-sleeper", THREAD_FLAG_NONE);
	CHECK(t, "cannot create a thread");
	thread_start(t);

	bool asleep = wait_count(&s2.sem, -1);
	/* Up in any case so that the helper can finish and be joined. */
	semaphore_up(&s2.sem);
	thread_join(t);
	CHECK(asleep, "a thread in semaphore_down() never showed as count -1");
	CHECK(atomic_get(&s2.done) == 1, "the sleeper did not get the semaphore");
	if (check_result) {
		CHECK(atomic_get(&s2.result) == (size_t) (EOK + 100),
		    "down_timeout satisfied by an up did not return EOK");
	}
	CHECK(semaphore_count_get(&s2.sem) == 0, "the up was not consumed");
	return NULL;
}

static const char *part_stress(void)
{
	static thread_t *threads[2 * CONFIG_MAX_CPUS + 2];
	unsigned ids[CONFIG_MAX_CPUS];
	unsigned n = test_online_cpus(ids);
	testlib_group_t g = { .threads = threads };

	semaphore_initialize(&s2.sem, K);
	atomic_set(&s2.inside, 0);
	atomic_set(&s2.max_inside, 0);
	atomic_set(&s2.violations, 0);

	unsigned total = 2 * n + 2;
	s2.rounds = s2.total / total;
	for (unsigned k = 0; k < total; k++) {
		if (!testlib_group_add(&g, stress, (void *) (uintptr_t) k,
		    "sem2-stress", k < 2 * n ? &cpus[ids[k % n]] : NULL))
			break;
	}
	testlib_group_run(&g, &s2.abort);
	CHECK(!g.failed, "cannot create threads");

	TPRINTF("semaphore2: %u threads x %u rounds, K=%d: max inside %zu, "
	    "violations %zu, final count %d\n", total, s2.rounds, K,
	    atomic_get(&s2.max_inside), atomic_get(&s2.violations),
	    semaphore_count_get(&s2.sem));
	CHECK(atomic_get(&s2.violations) == 0,
	    "more than K threads inside the section");
	CHECK(atomic_get(&s2.inside) == 0, "in-section counter not back to 0");
	CHECK(semaphore_count_get(&s2.sem) == K, "final count is not K");
	return NULL;
}

static const char *part_wake_down(void)
{
	return part_wake(sleeper_down, false);
}

static const char *part_wake_down_timeout(void)
{
	return part_wake(sleeper_down_timeout, true);
}

static const char *run_semaphore2(const char *name, unsigned total)
{
	static const testlib_part_t parts[] = {
		{ "single-thread semantics", part_single },
		{ "wake-ups of sleeping downs", part_wake_down },
		{ NULL, part_wake_down_timeout },
		{ NULL, part_stress },
	};
	s2.total = total;
	return testlib_run_parts(name, parts, ARRAY_SIZE(parts));
}

const char *test_semaphore2(void)
{
	return run_semaphore2("semaphore2", TOTAL_ROUNDS);
}

const char *test_semaphore2long(void)
{
	return run_semaphore2("semaphore2long", TOTAL_ROUNDS * LONG_FACTOR);
}
