/** @file smp_call.c
 * SMP cross-calls over a dedicated IPI vector and per-CPU pending queues.
 *
 * Memory ordering, matching the guarantee in smp_call.h:
 * - caller -> target: the call is linked into the target's queue under the
 *   target's queue lock (release on unlock); the IPI handler takes the same lock
 *   (acquire) before it reads the call, so func sees the caller's earlier writes.
 * - target -> caller: after func returns, the handler clears call->pending with
 *   a release store; smp_call_wait() reads it with acquire.
 * - full barrier on the target: seq_cst fences before and after the calls.
 * The architecture acknowledges the IPI before it runs the calls, so a call may itself send
 * IPIs or cross-calls (asynchronously) without blocking the interrupt controller.
 */
#include <smp/smp_call.h>
#include <arch.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <arch/cpu_arch.h>
#include <time/delay.h>
#include <debug.h>
#include <errno.h>
#include <debug/fault_inject.h>

/** Static call slots for smp_call_stop_others(): one per target CPU. */
static smp_call_t stop_calls[CONFIG_MAX_CPUS];

void smp_call_init(void)
{
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++) {
		irq_spinlock_initialize(&cpus[i].smp_calls_lock, "smp_calls");
		list_initialize(&cpus[i].smp_calls);
	}
}

static void halt_func(void *arg)
{
	cpu_arch_stop_self();
}

void smp_halt_others(void)
{
	/* The caller must not migrate: CPU below must stay this CPU. */
	assert(interrupts_disabled());
	smp_call_stop_others(halt_func);
	uint64_t start = uptime_us();
	cpu_t *me = CPU;
	while (uptime_us() - start < 100000) {
		bool all = true;
		for (unsigned i = 0; i < cpu_count; i++) {
			if (&cpus[i] != me && cpu_is_online(i))
				all = false;
		}
		if (all)
			return;
		cpu_relax();
	}
	/* CPUs spinning with interrupts disabled only answer an NMI. */
	cpu_arch_stop_others();
}

static void call_run_local(smp_call_t *call)
{
	ipl_t ipl = interrupts_disable();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	call->func(call->arg);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&call->pending, false, __ATOMIC_RELEASE);
	interrupts_restore(ipl);
}

/** Runs the calls queued for this CPU. Interrupts disabled. */
static void smp_call_process(void)
{
	cpu_t *c = CPU;
	list_t local;
	list_initialize(&local);

	irq_spinlock_lock(&c->smp_calls_lock, false);
	while (!list_empty(&c->smp_calls)) {
		link_t *l = list_first(&c->smp_calls);
		list_remove(l);
		list_append(l, &local);
	}
	irq_spinlock_unlock(&c->smp_calls_lock, false);

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (!list_empty(&local)) {
		link_t *l = list_first(&local);
		list_remove(l);
		smp_call_t *call = list_get_instance(l, smp_call_t, link);
		call->func(call->arg);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		/* After this store the caller may free or reuse the call. */
		__atomic_store_n(&call->pending, false, __ATOMIC_RELEASE);
	}
}

void smp_call_ipi_receive(void)
{
	smp_call_process();
}

/** Queues @a call on @a c and sends the IPI. */
static void call_enqueue(cpu_t *c, smp_call_t *call)
{
	irq_spinlock_lock(&c->smp_calls_lock, true);
	list_append(&call->link, &c->smp_calls);
	irq_spinlock_unlock(&c->smp_calls_lock, true);
	arch_ipi_send(c, INTR_SMP_CALL);
}

int smp_call_async(unsigned cpu_id, smp_call_func_t func, void *arg,
    smp_call_t *call)
{
	assert_verbose(!interrupts_disabled(),
	    "smp_call with interrupts disabled could deadlock");
	call->func = func;
	call->arg = arg;
	link_initialize(&call->link);
	__atomic_store_n(&call->pending, true, __ATOMIC_RELAXED);

	if (!cpu_is_online(cpu_id)) {
		__atomic_store_n(&call->pending, false, __ATOMIC_RELEASE);
		return ENOENT;
	}
	if (fault_inject(FI_SMPCALL_DROP)) {
		/* Marked done without running: smpcall1 must count it short. */
		__atomic_store_n(&call->pending, false, __ATOMIC_RELEASE);
		return EOK;
	}

	/* Stay on this CPU while deciding between a local and a remote call. */
	preemption_disable();
	cpu_t *target = &cpus[cpu_id];
	if (target == CPU) {
		call_run_local(call);
		preemption_enable();
		return EOK;
	}
	call_enqueue(target, call);
	preemption_enable();
	return EOK;
}

void smp_call_wait(smp_call_t *call)
{
	assert(!interrupts_disabled());
	/*
	 * Interrupts stay enabled, so calls other CPUs send to this CPU are
	 * served while we wait (no deadlock when two CPUs call each other).
	 */
	while (__atomic_load_n(&call->pending, __ATOMIC_ACQUIRE))
		cpu_relax();
}

int smp_call(unsigned cpu_id, smp_call_func_t func, void *arg)
{
	smp_call_t call;
	int rc = smp_call_async(cpu_id, func, arg, &call);
	if (rc == EOK)
		smp_call_wait(&call);
	return rc;
}

void smp_call_stop_others(smp_call_func_t func)
{
	cpu_t *me = CPU;
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		if (c == me || !cpu_is_online(i))
			continue;
		smp_call_t *call = &stop_calls[i];
		if (__atomic_load_n(&call->pending, __ATOMIC_ACQUIRE))
			continue;
		call->func = func;
		call->arg = NULL;
		__atomic_store_n(&call->pending, true, __ATOMIC_RELAXED);
		if (!irq_spinlock_trylock(&c->smp_calls_lock))
			continue;
		list_append(&call->link, &c->smp_calls);
		irq_spinlock_unlock(&c->smp_calls_lock, true);
		arch_ipi_send(c, INTR_SMP_CALL);
	}
}
