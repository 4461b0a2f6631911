/** @file thread1.c
 * Hundreds of threads are created, run and joined on all CPUs; none is lost.
 *
 * Three kinds of threads: unwired ones (joined), threads wired to each CPU (they
 * check they run on it after yields and sleeps), and detached ones (they report
 * completion through a counter). Each thread adds its own bit to a shared result
 * so a thread that ran twice or never shows up. Afterwards the number of threads
 * in the system returns to what it was before the test.
 */
#include <test.h>
#include <proc/thread.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>

#define UNWIRED    240
#define WIRED_PER_CPU 16
#define DETACHED   64
#define MAX_THREADS (UNWIRED + WIRED_PER_CPU * CONFIG_MAX_CPUS + DETACHED)

typedef struct {
	unsigned index;
	int wired_cpu;        /**< -1 if not wired */
	unsigned ran;         /**< times the body ran (must be 1); atomics */
	bool wrong_cpu;       /**< a wired thread found itself elsewhere */
} t1_arg_t;

static t1_arg_t args[MAX_THREADS];
static thread_t *handles[MAX_THREADS];
static atomic_t finished;
static atomic_t detached_done;

static void t1_body(void *p)
{
	t1_arg_t *a = p;
	__atomic_fetch_add(&a->ran, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++) {
		if (a->wired_cpu >= 0 && (int) CPU->id != a->wired_cpu)
			a->wrong_cpu = true;
		if (i == 1)
			thread_usleep(1000 * (a->index % 5));
		else
			thread_yield();
	}
	if (a->wired_cpu >= 0 && (int) CPU->id != a->wired_cpu)
		a->wrong_cpu = true;
	atomic_inc(&finished);
}

static void t1_detached(void *p)
{
	t1_body(p);
	atomic_inc(&detached_done);
}

const char *test_thread1(void)
{
	static char reason[96];
	size_t baseline = thread_count();
	unsigned n = 0;

	atomic_set(&finished, 0);
	atomic_set(&detached_done, 0);

	for (unsigned i = 0; i < UNWIRED; i++, n++) {
		args[n] = (t1_arg_t) { .index = n, .wired_cpu = -1 };
		handles[n] = thread_create(t1_body, &args[n], "thread1", THREAD_FLAG_NONE);
		if (!handles[n])
			return "thread_create failed (out of memory)";
		thread_start(handles[n]);
	}
	for (unsigned c = 0; c < cpu_count; c++) {
		if (!cpu_is_online(c))
			continue;
		for (unsigned i = 0; i < WIRED_PER_CPU; i++, n++) {
			args[n] = (t1_arg_t) { .index = n, .wired_cpu = (int) c };
			handles[n] = thread_create(t1_body, &args[n], "thread1-w",
			    THREAD_FLAG_NONE);
			if (!handles[n])
				return "thread_create failed (out of memory)";
			thread_wire(handles[n], &cpus[c]);
			thread_start(handles[n]);
		}
	}
	unsigned joinable = n;
	for (unsigned i = 0; i < DETACHED; i++, n++) {
		args[n] = (t1_arg_t) { .index = n, .wired_cpu = -1 };
		thread_t *t = thread_create(t1_detached, &args[n], "thread1-d",
		    THREAD_FLAG_NONE);
		if (!t)
			return "thread_create failed (out of memory)";
		thread_start(t);
		thread_detach(t);
	}
	printf("thread1: %u threads started (%u joinable, %u detached)\n", n,
	    joinable, DETACHED);

	for (unsigned i = 0; i < joinable; i++) {
		if (thread_join(handles[i]) != EOK)
			return "thread_join failed";
	}
	/* Detached threads finish on their own; wait for them (bounded by sleeps). */
	for (unsigned k = 0; k < 6000 && atomic_get(&detached_done) < DETACHED; k++)
		thread_usleep(10000);
	if (atomic_get(&detached_done) != DETACHED)
		return "detached threads did not finish";

	for (unsigned i = 0; i < n; i++) {
		unsigned ran = __atomic_load_n(&args[i].ran, __ATOMIC_RELAXED);
		if (ran != 1) {
			snprintf(reason, sizeof(reason), "thread %u ran %u times", i, ran);
			return reason;
		}
		if (args[i].wrong_cpu) {
			snprintf(reason, sizeof(reason), "wired thread %u left CPU %d", i,
			    args[i].wired_cpu);
			return reason;
		}
	}
	if (atomic_get(&finished) != n)
		return "not every thread finished";

	/* Exited detached threads are released by the CPU that switched from them. */
	for (unsigned k = 0; k < 6000 && thread_count() != baseline; k++)
		thread_usleep(10000);
	if (thread_count() != baseline) {
		snprintf(reason, sizeof(reason), "%zu threads left behind",
		    thread_count() - baseline);
		return reason;
	}
	printf("thread1: all %u threads ran exactly once; thread count back to %zu\n",
	    n, baseline);
	return NULL;
}
