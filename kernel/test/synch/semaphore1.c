/** @file semaphore1.c
 * Producer/consumer through a bounded buffer guarded by semaphores.
 *
 * One producer and one consumer thread per online CPU, each wired to its CPU.
 * The classic scheme: semaphore @c empty (BUF_SIZE slots free), @c full (items
 * ready) and a binary semaphore @c guard around the ring indices. Every
 * producer puts TOTAL_ITEMS / CPUs numbered items; every consumer takes as
 * many and marks each one as seen. Checked: every item was received exactly
 * once (none lost, none duplicated, none invented), the buffer never held more
 * than BUF_SIZE or fewer than 0 items, at most one thread was ever inside the
 * guard, and at the end the semaphore counts are back to BUF_SIZE / 0 / 1.
 * No verdict depends on timing.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <mm/malloc.h>
#include <proc/thread.h>
#include <synch/semaphore.h>

#define BUF_SIZE 8
/**
 * Items over all producers (split evenly; keeps -smp 4 and 8 under TCG quick:
 * with more vCPUs than host CPUs every wake-up waits for the host to run the
 * woken vCPU). `semaphore1long` (make soak) moves LONG_FACTOR times as many.
 */
#define TOTAL_ITEMS 2000
#define LONG_FACTOR 8

/** Shared state of one run (static: threads outlive nothing but the test). */
static struct {
	semaphore_t empty;   /**< Free slots. */
	semaphore_t full;    /**< Filled slots. */
	semaphore_t guard;   /**< Binary: protects buf, head, tail. */
	uint32_t buf[BUF_SIZE];   /**< Protected by guard. */
	unsigned head;            /**< Next slot to fill; protected by guard. */
	unsigned tail;            /**< Next slot to empty; protected by guard. */
	/** Items in the buffer (atomic; checked against [0, BUF_SIZE]). */
	atomic_signed_t level;
	/** Threads inside the guard (atomic; must never exceed 1). */
	atomic_t in_guard;
	/** Invariant violations seen by the threads (atomic). */
	atomic_t errors;
	/** seen[p * items + i]: times item i of producer p was consumed (atomics). */
	uint8_t *seen;
	unsigned producers;
	/** Items per producer (and per consumer); set before the threads start. */
	unsigned items;
	/** Set before starting when thread creation failed: threads do nothing. */
	bool abort;
} sp;

static void guard_enter(void)
{
	semaphore_down(&sp.guard);
	if (atomic_preinc(&sp.in_guard) != 1)
		atomic_inc(&sp.errors);
}

static void guard_leave(void)
{
	atomic_dec(&sp.in_guard);
	semaphore_up(&sp.guard);
}

static void producer(void *arg)
{
	unsigned p = (unsigned) (uintptr_t) arg;

	if (sp.abort)
		return;
	for (unsigned i = 0; i < sp.items; i++) {
		semaphore_down(&sp.empty);
		guard_enter();
		if (atomic_signed_add(&sp.level, 1) > BUF_SIZE)
			atomic_inc(&sp.errors);
		sp.buf[sp.head] = (p << 16) | i;
		sp.head = (sp.head + 1) % BUF_SIZE;
		guard_leave();
		semaphore_up(&sp.full);
	}
}

static void consumer(void *arg)
{
	(void) arg;
	if (sp.abort)
		return;
	for (unsigned i = 0; i < sp.items; i++) {
		semaphore_down(&sp.full);
		guard_enter();
		if (atomic_signed_add(&sp.level, -1) < 0)
			atomic_inc(&sp.errors);
		uint32_t item = sp.buf[sp.tail];
		sp.tail = (sp.tail + 1) % BUF_SIZE;
		guard_leave();
		semaphore_up(&sp.empty);

		unsigned p = item >> 16, n = item & 0xffff;
		if (p >= sp.producers || n >= sp.items)
			atomic_inc(&sp.errors);
		else
			__atomic_fetch_add(&sp.seen[p * sp.items + n], 1, __ATOMIC_RELAXED);
	}
}

static const char *run_semaphore1(unsigned total)
{
	static thread_t *threads[2 * CONFIG_MAX_CPUS];
	unsigned ids[CONFIG_MAX_CPUS];
	unsigned n = test_online_cpus(ids);
	testlib_group_t g = { .threads = threads };

	semaphore_initialize(&sp.empty, BUF_SIZE);
	semaphore_initialize(&sp.full, 0);
	semaphore_initialize(&sp.guard, 1);
	sp.head = sp.tail = 0;
	__atomic_store_n(&sp.level.count, 0, __ATOMIC_RELAXED);
	atomic_set(&sp.in_guard, 0);
	atomic_set(&sp.errors, 0);
	sp.producers = n;
	sp.items = total / n;
	sp.seen = calloc((size_t) n * sp.items, 1);
	if (!sp.seen)
		return "out of memory";

	TPRINTF("semaphore1: %u producers, %u consumers, %u items each, "
	    "buffer of %u\n", n, n, sp.items, BUF_SIZE);

	/* Create everything first so that an allocation failure starts nothing. */
	for (unsigned k = 0; k < 2 * n; k++) {
		bool prod = k < n;
		if (!testlib_group_add(&g, prod ? producer : consumer,
		    (void *) (uintptr_t) (k % n), prod ? "sem1-prod" : "sem1-cons",
		    &cpus[ids[k % n]]))
			break;
	}
	/* On failure the created threads run with nothing to do (sp.abort). */
	testlib_group_run(&g, &sp.abort);
	if (g.failed) {
		free(sp.seen);
		return "cannot create threads";
	}

	size_t missing = 0, dups = 0;
	for (size_t k = 0; k < (size_t) n * sp.items; k++) {
		if (sp.seen[k] == 0)
			missing++;
		else if (sp.seen[k] > 1)
			dups++;
	}
	free(sp.seen);
	sp.seen = NULL;

	TPRINTF("semaphore1: %zu items consumed; missing %zu, duplicated %zu, "
	    "errors %zu; counts empty=%d full=%d guard=%d\n",
	    (size_t) n * sp.items - missing, missing, dups, atomic_get(&sp.errors),
	    semaphore_count_get(&sp.empty), semaphore_count_get(&sp.full),
	    semaphore_count_get(&sp.guard));

	if (atomic_get(&sp.errors))
		return "invariant broken (buffer level, guard exclusion or bad item)";
	if (missing)
		return "items lost";
	if (dups)
		return "items consumed twice";
	if (semaphore_count_get(&sp.empty) != BUF_SIZE)
		return "semaphore 'empty' does not end at the buffer size";
	if (semaphore_count_get(&sp.full) != 0)
		return "semaphore 'full' does not end at 0";
	if (semaphore_count_get(&sp.guard) != 1)
		return "semaphore 'guard' does not end at 1";
	return NULL;
}

const char *test_semaphore1(void)
{
	return run_semaphore1(TOTAL_ITEMS);
}

const char *test_semaphore1long(void)
{
	return run_semaphore1(TOTAL_ITEMS * LONG_FACTOR);
}
