/** @file mutex1.c
 * A counter incremented under a mutex from all CPUs is exact; mutex semantics.
 *
 * Part 1 (stress): one thread per online CPU, wired to it, increments a plain
 * (non-atomic) counter TOTAL_COUNT / CPUs times under the mutex, with a
 * read/pause/write window that loses updates at once if two threads are ever
 * inside together; an atomic in-section counter checks exclusion directly. The
 * counter must end at exactly the number of increments.
 * Part 2 (semantics): trylock of a free mutex succeeds and makes it locked and
 * locked-by-me; another thread sees it locked but not locked-by-it, fails
 * trylock and times out in mutex_lock_timeout (ETIMEOUT); a thread sleeping in
 * mutex_lock_timeout with a long timeout gets the mutex (EOK) when it is
 * unlocked; after unlock nobody holds it. A recursive mutex locked three times
 * stays held (another thread's trylock fails) until the third unlock.
 * No verdict depends on timing.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <synch/mutex.h>

/**
 * Increments over all threads (split evenly; keeps -smp 4 and 8 under TCG
 * quick: with more vCPUs than host CPUs every hand-off of the mutex waits for
 * the host to run the woken vCPU). `mutex1long` (make soak) does LONG_FACTOR
 * times as many.
 */
#define TOTAL_COUNT 16000
#define LONG_FACTOR 8


static struct {
	mutex_t mtx;
	/** The plain counter; protected by mtx. */
	uint64_t counter;
	/** Threads inside the critical section (atomic). */
	atomic_t inside;
	/** Times a thread found another inside (atomic). */
	atomic_t violations;
	bool abort;           /**< Set before start: threads do nothing. */
	unsigned total;       /**< Increments over all threads; set by the entry. */
	unsigned count;       /**< Increments per thread; set before start. */

	/* Part 2: results reported by the helper thread (atomics). */
	atomic_t h_trylock;       /**< 1 + result of mutex_trylock(). */
	atomic_t h_locked;        /**< 1 + mutex_locked(). */
	atomic_t h_by_me;         /**< 1 + mutex_locked_by_me(). */
	atomic_t h_timeout_rc;    /**< 100 + mutex_lock_timeout() result. */
	atomic_t h_done;
} m1;

static void incrementer(void *arg)
{
	(void) arg;
	if (m1.abort)
		return;
	for (unsigned i = 0; i < m1.count; i++) {
		mutex_lock(&m1.mtx);
		if (atomic_preinc(&m1.inside) != 1)
			atomic_inc(&m1.violations);
		/* Read, pause, write: a second thread inside loses updates. */
		uint64_t v = m1.counter;
		compiler_barrier();
		if (i % 16 == 0)
			cpu_relax();
		m1.counter = v + 1;
		atomic_dec(&m1.inside);
		mutex_unlock(&m1.mtx);
	}
}

/** Helper for part 2: probes a mutex the test thread holds. */
static void prober(void *arg)
{
	mutex_t *m = arg;
	atomic_set(&m1.h_locked, 1 + mutex_locked(m));
	atomic_set(&m1.h_by_me, 1 + mutex_locked_by_me(m));
	bool got = mutex_trylock(m);
	atomic_set(&m1.h_trylock, 1 + got);
	if (got) {
		mutex_unlock(m);
	} else {
		errno_t rc = mutex_lock_timeout(m, 20000);
		atomic_set(&m1.h_timeout_rc, (size_t) (100 + rc));
		if (rc == EOK)
			mutex_unlock(m);
	}
	atomic_set(&m1.h_done, 1);
}

/** Helper for part 2: waits for the mutex with a long timeout. */
static void long_waiter(void *arg)
{
	mutex_t *m = arg;
	errno_t rc = mutex_lock_timeout(m, WAIT_LIMIT_US);
	if (rc == EOK) {
		atomic_set(&m1.h_by_me, 1 + mutex_locked_by_me(m));
		mutex_unlock(m);
	}
	atomic_set(&m1.h_timeout_rc, (size_t) (100 + rc));
	atomic_set(&m1.h_done, 1);
}

/** Runs @a fn(@a m) in a helper thread and joins it. */
static bool run_helper(thread_func_t fn, mutex_t *m)
{
	atomic_set(&m1.h_trylock, 0);
	atomic_set(&m1.h_locked, 0);
	atomic_set(&m1.h_by_me, 0);
	atomic_set(&m1.h_timeout_rc, 0);
	atomic_set(&m1.h_done, 0);
	thread_t *t = testlib_spawn(fn, m, "mutex1-probe", NULL);
	if (!t)
		return false;
	thread_join(t);
	return true;
}

static const char *part_stress(void)
{
	static thread_t *threads[CONFIG_MAX_CPUS];
	unsigned ids[CONFIG_MAX_CPUS], online = test_online_cpus(ids);
	testlib_group_t g = { .threads = threads };

	mutex_initialize_named(&m1.mtx, MUTEX_PASSIVE, "mutex1.mtx");
	m1.counter = 0;
	m1.count = m1.total / online;
	atomic_set(&m1.inside, 0);
	atomic_set(&m1.violations, 0);

	for (unsigned i = 0; i < online; i++) {
		if (!testlib_group_add(&g, incrementer, NULL, "mutex1-inc",
		    &cpus[ids[i]]))
			break;
	}
	testlib_group_run(&g, &m1.abort);
	CHECK(!g.failed, "cannot create threads");
	unsigned n = g.n;

	TPRINTF("mutex1: %u threads x %u increments: counter %lu (expected %lu), "
	    "exclusion violations %zu\n", n, m1.count, m1.counter,
	    (uint64_t) n * m1.count, atomic_get(&m1.violations));
	CHECK(atomic_get(&m1.violations) == 0, "two threads inside the mutex");
	CHECK(m1.counter == (uint64_t) n * m1.count, "counter is not exact");
	CHECK(!mutex_locked(&m1.mtx), "mutex still locked after the threads");
	return NULL;
}

static const char *part_semantics(void)
{
	mutex_t *m = &m1.mtx;

	mutex_initialize_named(m, MUTEX_PASSIVE, "mutex1.mtx");
	CHECK(!mutex_locked(m), "a new mutex is locked");
	CHECK(!mutex_locked_by_me(m), "a new mutex is locked by me");
	CHECK(mutex_trylock(m), "trylock of a free mutex failed");
	CHECK(mutex_locked(m), "not locked after trylock");
	CHECK(mutex_locked_by_me(m), "not locked by me after trylock");
	CHECK(!mutex_trylock(m), "trylock by the owner of a non-recursive mutex "
	    "succeeded");

	CHECK(run_helper(prober, m), "cannot create a thread");
	CHECK(atomic_get(&m1.h_locked) == 2, "other thread: mutex not locked");
	CHECK(atomic_get(&m1.h_by_me) == 1,
	    "other thread: mutex_locked_by_me true");
	CHECK(atomic_get(&m1.h_trylock) == 1,
	    "other thread: trylock of a held mutex succeeded");
	CHECK(atomic_get(&m1.h_timeout_rc) == (size_t) (100 + ETIMEOUT),
	    "other thread: mutex_lock_timeout on a held mutex did not time out");
	CHECK(mutex_locked_by_me(m), "a failed lock by another thread changed "
	    "the owner");
	mutex_unlock(m);
	CHECK(!mutex_locked(m), "locked after unlock");
	CHECK(!mutex_locked_by_me(m), "locked by me after unlock");

	/* Free mutex: the helper's trylock succeeds. */
	CHECK(run_helper(prober, m), "cannot create a thread");
	CHECK(atomic_get(&m1.h_trylock) == 2,
	    "other thread: trylock of a free mutex failed");

	/* A sleeping mutex_lock_timeout gets the mutex when it is unlocked. */
	mutex_lock(m);
	atomic_set(&m1.h_done, 0);
	atomic_set(&m1.h_timeout_rc, 0);
	atomic_set(&m1.h_by_me, 0);
	thread_t *t = testlib_spawn(long_waiter, m, "mutex1-wait", NULL);
	if (!t) {
		mutex_unlock(m);
		return "cannot create a thread";
	}
	bool asleep = false;
	for (uint64_t w = 0; w < WAIT_LIMIT_US && !asleep; w += 1000) {
		asleep = semaphore_count_get(&m->sem) == -1;
		if (!asleep)
			thread_usleep(1000);
	}
	mutex_unlock(m);
	thread_join(t);
	CHECK(asleep, "a thread in mutex_lock_timeout never slept");
	CHECK(atomic_get(&m1.h_timeout_rc) == (size_t) (100 + EOK),
	    "mutex_lock_timeout did not get the unlocked mutex");
	CHECK(atomic_get(&m1.h_by_me) == 2,
	    "the thread that got the mutex is not its owner");
	CHECK(!mutex_locked(m), "locked after the waiter unlocked");

	/* Recursive mutex. */
	mutex_initialize_named(m, MUTEX_PASSIVE | MUTEX_RECURSIVE, "mutex1.mtx");
	mutex_lock(m);
	CHECK(mutex_trylock(m), "trylock of an owned recursive mutex failed");
	CHECK(mutex_lock_timeout(m, 10000) == EOK,
	    "lock_timeout of an owned recursive mutex failed");
	for (int level = 3; level > 0; level--) {
		CHECK(mutex_locked_by_me(m), "recursive mutex: not locked by me");
		CHECK(run_helper(prober, m), "cannot create a thread");
		CHECK(atomic_get(&m1.h_trylock) == 1,
		    "recursive mutex: another thread got it while nested");
		mutex_unlock(m);
	}
	CHECK(!mutex_locked(m), "recursive mutex: locked after the last unlock");
	CHECK(!mutex_locked_by_me(m), "recursive mutex: mine after the last unlock");
	CHECK(run_helper(prober, m), "cannot create a thread");
	CHECK(atomic_get(&m1.h_trylock) == 2,
	    "recursive mutex: another thread cannot get it after the last unlock");
	return NULL;
}

static const char *run_mutex1(const char *name, unsigned total)
{
	static const testlib_part_t parts[] = {
		{ "trylock, timeout, owner checks", part_semantics },
		{ "counter under the mutex from every CPU", part_stress },
	};
	m1.total = total;
	return testlib_run_parts(name, parts, ARRAY_SIZE(parts));
}

const char *test_mutex1(void)
{
	return run_mutex1("mutex1", TOTAL_COUNT);
}

const char *test_mutex1long(void)
{
	return run_mutex1("mutex1long", TOTAL_COUNT * LONG_FACTOR);
}
