/** @file sched1.c
 * Scheduler fairness and wiring.
 *
 * On every CPU, a CPU-bound thread (never sleeps, never yields) is wired next to
 * a worker wired to the same CPU that needs the CPU many times (it sleeps a tick
 * between steps). Preemption must let the worker finish while the hog spins; the
 * hog only stops after every worker has finished, so a starved worker would keep
 * the test from ending (a generous join timeout turns that into a failure instead
 * of a hang). Every wired thread checks it only ever runs on its CPU.
 * Then unwired CPU hogs (twice as many as CPUs) run together with a
 * yielding worker to check that ready threads migrate to idle CPUs and that
 * priorities do not starve anyone.
 */
#include <test.h>
#include <proc/thread.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>
#include <arch/asm.h>

#define WORKER_STEPS 40
#define JOIN_TIMEOUT_US (120UL * 1000000)

typedef struct {
	int cpu;
	bool wrong_cpu;
	uint64_t spins;
} s1_arg_t;

static bool stop_hogs;
static atomic_t workers_done;
static s1_arg_t hog_args[CONFIG_MAX_CPUS];
static s1_arg_t worker_args[CONFIG_MAX_CPUS];

static void hog(void *p)
{
	s1_arg_t *a = p;
	while (!__atomic_load_n(&stop_hogs, __ATOMIC_ACQUIRE)) {
		if (a->cpu >= 0 && (int) CPU->id != a->cpu)
			a->wrong_cpu = true;
		a->spins++;
		cpu_relax();
	}
}

static void worker(void *p)
{
	s1_arg_t *a = p;
	for (int i = 0; i < WORKER_STEPS; i++) {
		if (a->cpu >= 0 && (int) CPU->id != a->cpu)
			a->wrong_cpu = true;
		if (i % 2)
			thread_usleep(1000);
		else
			thread_yield();
	}
	atomic_inc(&workers_done);
}

const char *test_sched1(void)
{
	static char reason[96];
	thread_t *hogs[CONFIG_MAX_CPUS * 2];
	thread_t *workers[CONFIG_MAX_CPUS];
	unsigned n = 0;

	__atomic_store_n(&stop_hogs, false, __ATOMIC_RELEASE);
	atomic_set(&workers_done, 0);

	for (unsigned c = 0; c < cpu_count; c++) {
		if (!cpu_is_online(c))
			continue;
		hog_args[n] = (s1_arg_t) { .cpu = (int) c };
		worker_args[n] = (s1_arg_t) { .cpu = (int) c };
		hogs[n] = thread_create(hog, &hog_args[n], "sched1-hog", THREAD_FLAG_NONE);
		workers[n] = thread_create(worker, &worker_args[n], "sched1-worker",
		    THREAD_FLAG_NONE);
		if (!hogs[n] || !workers[n])
			return "thread_create failed";
		thread_wire(hogs[n], &cpus[c]);
		thread_wire(workers[n], &cpus[c]);
		thread_start(hogs[n]);
		thread_start(workers[n]);
		n++;
	}

	const char *fail = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (thread_join_timeout(workers[i], JOIN_TIMEOUT_US) != EOK) {
			snprintf(reason, sizeof(reason), "worker on CPU %d starved by a "
			    "CPU-bound thread", worker_args[i].cpu);
			fail = reason;
			thread_detach(workers[i]);
		}
	}
	__atomic_store_n(&stop_hogs, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < n; i++)
		thread_join(hogs[i]);
	if (fail)
		return fail;
	for (unsigned i = 0; i < n; i++) {
		if (hog_args[i].wrong_cpu || worker_args[i].wrong_cpu) {
			snprintf(reason, sizeof(reason), "a thread wired to CPU %d ran "
			    "elsewhere", hog_args[i].cpu);
			return reason;
		}
	}
	printf("sched1: %u CPUs, wired workers finished beside CPU-bound threads\n", n);

	/* Unwired: 2 hogs per CPU plus one worker; everybody must progress. */
	__atomic_store_n(&stop_hogs, false, __ATOMIC_RELEASE);
	atomic_set(&workers_done, 0);
	unsigned nh = 2 * n;
	for (unsigned i = 0; i < nh; i++) {
		hog_args[i % CONFIG_MAX_CPUS] = (s1_arg_t) { .cpu = -1 };
		hogs[i] = thread_run(hog, &hog_args[i % CONFIG_MAX_CPUS], "sched1-hog");
		if (!hogs[i])
			return "thread_create failed";
	}
	worker_args[0] = (s1_arg_t) { .cpu = -1 };
	workers[0] = thread_run(worker, &worker_args[0], "sched1-worker");
	if (!workers[0])
		return "thread_create failed";
	if (thread_join_timeout(workers[0], JOIN_TIMEOUT_US) != EOK) {
		fail = "unwired worker starved by CPU-bound threads";
		thread_detach(workers[0]);
	}
	__atomic_store_n(&stop_hogs, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < nh; i++)
		thread_join(hogs[i]);
	if (fail)
		return fail;
	uint64_t migrations = 0;
	for (unsigned c = 0; c < cpu_count; c++)
		migrations += cpus[c].migrations_in;
	printf("sched1: unwired worker finished beside %u CPU-bound threads; "
	    "%lu migrations so far\n", nh, migrations);
	return NULL;
}
