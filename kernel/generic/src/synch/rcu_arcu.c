/** @file rcu_arcu.c
 * RCU: A-RCU grace-period detection, reader slow paths and scheduler hooks.
 *
 * A-RCU detection (Hraska 2013): no detector thread. A reclaimer that needs a GP
 * takes gp_mutex and, if the GP is still not complete, runs the detection itself
 * (other reclaimers block on the mutex and find their GP done). Detection: start
 * the GP, drop idle and already-acknowledged CPUs, sleep DETECT_SLEEP_US (yield
 * when expedited) to let context switches acknowledge, then smp_call each
 * remaining CPU: the call runs with interrupts off on the target, so the running
 * thread's nesting count (kept in the CPU while the thread runs, amd64 in
 * cpu_t.rcu.nesting and arm64 in register x18, read and written through
 * arcu_nesting() and arcu_nesting_set(); saved to the thread at switch-out:
 * rcu_inline.h, arch/rcu_arch.h) is stable there, and the IPI is the
 * memory barrier the reader never paid for. A CPU found inside a reader is
 * polled again later. Last, wait for rcu_cur_preempted to drain.
 *
 * The machinery both algorithms share (grace-period numbers, preempted
 * readers, callbacks, rcu_barrier, statistics) is in rcu.c.
 */
#include <synch/rcu.h>
#include <synch/mutex.h>
#include <synch/waitq.h>
#include <synch/spinlock.h>
#include <synch/lockdep.h>
#include <smp/smp_call.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <console/console.h>
#include <errno.h>
#include <arch/asm.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <cpu.h>
#include <lib/str.h>
#include <time/delay.h>
#include "rcu_impl.h"

/** The detector role (A-RCU): held by the reclaimer running the detection. */
static mutex_t gp_mutex;


/** Context switch: a quiescent state of the CPU. Interrupts disabled. */
/* Model: verify/arcu.pml */
static void record_cs_qs(void)
{
	cpu_t *c = CPU;
	/*
	 * Full barrier: forbids the switched-out thread's reader accesses
	 * (plain loads, no barrier in rcu_read_unlock) from being reordered
	 * after the store that announces the quiescent state.
	 */
	memory_barrier();
	__atomic_store_n(&c->rcu.last_seen_gp, rcu_started_gp(), __ATOMIC_SEQ_CST);
	/*
	 * Full barrier: forbids the next reader's loads on this CPU from being
	 * satisfied before the load of rcu_cur_gp above and the store of the
	 * quiescent state. Once the detector read last_seen_gp == gp it takes
	 * this CPU as quiescent without asking it; a later reader load hoisted
	 * above the announcement could still return a pointer the updater
	 * unlinked before the GP started (store-load reordering past STLR on
	 * arm64; on amd64 the seq_cst store is an xchg, a full barrier, and
	 * this emits nothing).
	 */
	memory_barrier_after_atomic();
}

/* Model: verify/arcu.pml */
void rcu_read_unlock_preempted(void)
{
	ipl_t ipl = interrupts_disable();
	/* Interrupts off: no migration, the count is this CPU's. */
	irq_spinlock_lock(&rcu_preempt_lock, false);
	if (arcu_nesting() == RCU_WAS_PREEMPTED) {
		list_remove(&THREAD->rcu_preempt_link);
		arcu_nesting_set(0);
		rcu_preempted_reader_left_locked();
	}
	irq_spinlock_unlock(&rcu_preempt_lock, false);
	interrupts_restore(ipl);
}

/**
 * Switch-out hook (interrupts disabled; t is not running). First saves the
 * CPU's nesting count to t (t's count is stable there until it runs again,
 * which is after on_cpu is released), then works on the saved count:
 * - Inside a reader and not yet on a list: mark it and put it on one.
 * - Count "zero, preempted": t was switched out between the subtraction of
 *   rcu_read_unlock() and its check (or inside the slow path, before it took
 *   rcu_preempt_lock). Its section is over; left on the list it would hold up every
 *   grace period until it runs again, which may be long if it blocks next.
 *   Do what the slow path would do. When t runs again its check reads 0 (or
 *   rcu_read_unlock_preempted() re-checks under rcu_preempt_lock) and does nothing.
 * The CPU's count is 0 until the switch-in hook loads the next thread's.
 */
/* Model: verify/arcu.pml */
static void arcu_after_thread_ran(thread_t *t)
{
	size_t n = arcu_nesting();
	arcu_nesting_set(0);
	if (n == RCU_WAS_PREEMPTED) {
		irq_spinlock_lock(&rcu_preempt_lock, false);
		list_remove(&t->rcu_preempt_link);
		n = 0;
		rcu_preempted_reader_left_locked();
		irq_spinlock_unlock(&rcu_preempt_lock, false);
	} else if (n >= RCU_CNT_INC && !(n & RCU_WAS_PREEMPTED)) {
		irq_spinlock_lock(&rcu_preempt_lock, false);
		n |= RCU_WAS_PREEMPTED;
		rcu_add_preempted_locked(t);
		irq_spinlock_unlock(&rcu_preempt_lock, false);
	}
	__atomic_store_n(&t->rcu_nesting, n, __ATOMIC_RELAXED);
	record_cs_qs();
}

/** Switch-in hook (interrupts disabled): t's count becomes the CPU's. */
/* Model: verify/arcu.pml */
static void arcu_before_thread_runs(thread_t *t)
{
	arcu_nesting_set(__atomic_load_n(&t->rcu_nesting, __ATOMIC_RELAXED));
}

/** smp_call target: acknowledge the GP if the CPU is outside any reader. */
/* Model: verify/arcu.pml */
static UNUSED void arcu_sample_cpu(void *arg)
{
	uint64_t gp = *(uint64_t *) arg;
	cpu_t *c = CPU;
	thread_t *t = c->thread;
	size_t n = arcu_nesting();
	if (t && n >= RCU_CNT_INC && !(n & RCU_WAS_PREEMPTED)) {
		/*
		 * Inside a reader: treat it as preempted (Hraska's A-RCU). Its
		 * outermost unlock takes the slow path and leaves the list, so the
		 * GP waits about one reader section instead of polling a CPU whose
		 * only thread never context switches. The thread is interrupted
		 * between two instructions, so its single add/sub on the count
		 * (a %gs word on amd64, register x18 on arm64, which the return
		 * from this interrupt does not restore) cannot lose this bit.
		 */
		irq_spinlock_lock(&rcu_preempt_lock, false);
		arcu_nesting_set(n | RCU_WAS_PREEMPTED);
		list_append(&t->rcu_preempt_link, &rcu_cur_preempted);
		irq_spinlock_unlock(&rcu_preempt_lock, false);
	}
	/* Either outside any reader or its reader is now on rcu_cur_preempted. */
	__atomic_store_n(&c->rcu.last_seen_gp, gp, __ATOMIC_SEQ_CST);
}

/**
 * A-RCU's part of the detection of GP @a gp (rcu_run_gp(), run by a reclaimer
 * holding gp_mutex): polls the CPUs until each is quiescent or its reader is
 * on rcu_cur_preempted.
 */
/* Model: verify/arcu.pml */
void rcu_alg_detect(uint64_t gp, bool expedite, gp_watch_t *w)
{
	bool pending[CONFIG_MAX_CPUS];
	unsigned npending = 0;
	for (unsigned i = 0; i < cpu_count; i++) {
		pending[i] = cpu_is_online(i) && !rcu_cpu_quiescent(i, gp);
		npending += pending[i];
	}
	if (npending)
		rcu_detect_sleep(expedite, DETECT_SLEEP_US);
	bool delayed = false;
	while (npending) {
		npending = 0;
		for (unsigned i = 0; i < cpu_count; i++) {
			if (!pending[i])
				continue;
			if (!rcu_cpu_quiescent(i, gp)) {
				__atomic_fetch_add(&rcu_stat_cross_calls, 1, __ATOMIC_RELAXED);
				(void) smp_call(i, arcu_sample_cpu, &gp);
			}
			pending[i] = cpu_is_online(i) && !rcu_cpu_quiescent(i, gp);
			npending += pending[i];
		}
		if (npending) {
			delayed = true;
			rcu_detect_sleep(expedite, POLL_SLEEP_US);
		}
	}
	if (delayed)
		__atomic_fetch_add(&rcu_stat_delayed, 1, __ATOMIC_RELAXED);
}

/** Blocks until GP @a gp completed, running the detection if nobody does. */
/* Model: verify/arcu.pml */
void rcu_wait_for_gp(uint64_t gp)
{
	while (rcu_completed_gps() < gp) {
		mutex_lock(&gp_mutex);
		if (rcu_completed_gps() < gp)
			rcu_run_gp();
		mutex_unlock(&gp_mutex);
	}
}

void rcu_thread_exiting(void)
{
	thread_t *t = THREAD;
	size_t n = arcu_nesting();
	if (n == 0)
		return;
	printf("rcu: thread %lu '%s' exited inside a reader section (nesting %zu); "
	    "closing it\n", t->tid, t->name, n / RCU_CNT_INC);
	ipl_t ipl = interrupts_disable();
	/* Interrupts off: no migration, the count is this CPU's. */
	irq_spinlock_lock(&rcu_preempt_lock, false);
	if (arcu_nesting() & RCU_WAS_PREEMPTED) {
		list_remove(&t->rcu_preempt_link);
		rcu_preempted_reader_left_locked();
	}
	arcu_nesting_set(0);
	irq_spinlock_unlock(&rcu_preempt_lock, false);
	interrupts_restore(ipl);
}

const sched_hooks_t rcu_alg_hooks = {
	.before_thread_runs = arcu_before_thread_runs,
	.after_thread_ran = arcu_after_thread_ran,
	.thread_sleeps = RCU_SLEEP_HOOK,
	.thread_exits = rcu_thread_exits_hook,
};


void rcu_alg_init(void)
{
	mutex_initialize_named(&gp_mutex, MUTEX_PASSIVE, "rcu.gp");
}

void rcu_alg_start_threads(void)
{
}
