/** @file smpcall1.c
 * SMP cross-call test (the seed's `smpcall1`).
 *
 * One thread wired to each online CPU makes many synchronous calls to every CPU
 * (itself included) and many asynchronous ones; each call increments a counter
 * owned by the calling thread (on the target CPU, with interrupts disabled), so the
 * totals must be exact. Each call also checks that it runs on the CPU it was sent
 * to with interrupts disabled. Then pairs of CPUs call each other at the same
 * moment (released together through a barrier) and both calls must complete.
 * Finally calls to an offline or non-existent CPU must return ENOENT at once.
 */
#include <test.h>
#include <testlib.h>
#include <smp/smp_call.h>
#include <proc/thread.h>
#include <arch/asm.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>

#define SYNC_ROUNDS  60
#define ASYNC_ROUNDS 60
#define PAIR_ROUNDS  200

typedef struct {
	unsigned cpu;
	/** Incremented by the calls (on any CPU): atomics. */
	size_t count;
	size_t expected;
	bool wrong_cpu;
	bool irq_on;
	bool enoent;
} sc_arg_t;

typedef struct {
	sc_arg_t *owner;
	unsigned target;
} sc_call_arg_t;

static sc_arg_t args[CONFIG_MAX_CPUS];
static atomic_t barrier;

static void inc_func(void *p)
{
	sc_call_arg_t *ca = p;
	if (CPU->id != ca->target)
		ca->owner->wrong_cpu = true;
	if (!interrupts_disabled())
		ca->owner->irq_on = true;
	__atomic_fetch_add(&ca->owner->count, 1, __ATOMIC_RELAXED);
}

static void caller(void *p)
{
	sc_arg_t *a = p;
	sc_call_arg_t ca[CONFIG_MAX_CPUS];
	smp_call_t calls[CONFIG_MAX_CPUS];

	for (unsigned i = 0; i < cpu_count; i++)
		ca[i] = (sc_call_arg_t) { .owner = a, .target = i };

	for (int r = 0; r < SYNC_ROUNDS; r++) {
		for (unsigned i = 0; i < cpu_count; i++) {
			if (!cpu_is_online(i))
				continue;
			if (smp_call(i, inc_func, &ca[i]) != EOK)
				a->enoent = true;
			a->expected++;
		}
	}
	for (int r = 0; r < ASYNC_ROUNDS; r++) {
		for (unsigned i = 0; i < cpu_count; i++) {
			if (!cpu_is_online(i))
				continue;
			if (smp_call_async(i, inc_func, &ca[i], &calls[i]) != EOK)
				a->enoent = true;
			a->expected++;
		}
		for (unsigned i = 0; i < cpu_count; i++) {
			if (cpu_is_online(i))
				smp_call_wait(&calls[i]);
		}
	}
}

/* Pairs: CPU 2k and 2k+1 call each other at the same moment. */
static void pair_caller(void *p)
{
	sc_arg_t *a = p;
	unsigned peer = a->cpu ^ 1;
	sc_call_arg_t ca = { .owner = a, .target = peer };
	size_t online = atomic_get(&cpu_active_count);
	for (int r = 0; r < PAIR_ROUNDS; r++) {
		/* Everyone arrives, then all call at once. */
		atomic_inc(&barrier);
		while (atomic_get(&barrier) < (size_t) (r + 1) * online)
			cpu_relax();
		if (peer < cpu_count && cpu_is_online(peer)) {
			if (smp_call(peer, inc_func, &ca) != EOK)
				a->enoent = true;
			a->expected++;
		}
	}
}

static const char *run_phase(thread_func_t fn, const char *name)
{
	static char reason[96];
	thread_t *t[CONFIG_MAX_CPUS];
	unsigned n = 0;

	for (unsigned i = 0; i < cpu_count; i++) {
		args[i] = (sc_arg_t) { .cpu = i };
		if (!cpu_is_online(i))
			continue;
		t[i] = testlib_create(fn, &args[i], name, &cpus[i]);
		if (!t[i])
			return "thread_create failed";
		n++;
	}
	for (unsigned i = 0; i < cpu_count; i++) {
		if (cpu_is_online(i))
			thread_start(t[i]);
	}
	for (unsigned i = 0; i < cpu_count; i++) {
		if (cpu_is_online(i))
			thread_join(t[i]);
	}
	for (unsigned i = 0; i < cpu_count; i++) {
		sc_arg_t *a = &args[i];
		if (!cpu_is_online(i))
			continue;
		size_t got = __atomic_load_n(&a->count, __ATOMIC_RELAXED);
		if (a->enoent)
			snprintf(reason, sizeof(reason), "%s: call to an online CPU "
			    "failed", name);
		else if (a->wrong_cpu)
			snprintf(reason, sizeof(reason), "%s: a call ran on the wrong "
			    "CPU", name);
		else if (a->irq_on)
			snprintf(reason, sizeof(reason), "%s: a call ran with interrupts "
			    "enabled", name);
		else if (got != a->expected)
			snprintf(reason, sizeof(reason), "%s: CPU %u counted %zu calls, "
			    "expected %zu", name, i, got, a->expected);
		else
			continue;
		return reason;
	}
	size_t total = 0;
	for (unsigned i = 0; i < cpu_count; i++)
		total += args[i].expected;
	printf("smpcall1: %s: %zu calls from %u CPUs, all counted\n", name, total, n);
	return NULL;
}

const char *test_smpcall1(void)
{
	const char *r = run_phase(caller, "sync+async");
	if (r)
		return r;
	atomic_set(&barrier, 0);
	r = run_phase(pair_caller, "pairs");
	if (r)
		return r;

	smp_call_t call;
	if (smp_call(CONFIG_MAX_CPUS + 5, inc_func, NULL) != ENOENT)
		return "a call to a non-existent CPU did not return ENOENT";
	if (smp_call_async(cpu_count, inc_func, NULL, &call) != ENOENT)
		return "an async call to a non-existent CPU did not return ENOENT";
	smp_call_wait(&call);  /* must not hang */
	return NULL;
}
