/** @file rcu_podzimek.c
 * RCU: preemptible Podzimek RCU grace-period detection (the detector thread),
 * reader slow paths and scheduler hooks.
 *
 * Podzimek detection (Podzimek 2010, preemptible variant): a detector thread
 * serves GP requests. After the first sleep it smp_calls the CPUs that did not
 * acknowledge; a CPU found inside a reader sets is_delaying_gp and the detector
 * sleeps until all such CPUs announced their next QS (from the outermost unlock
 * or a context switch), instead of polling.
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

/** GP requests to the detector thread; protected by req_lock. */
static irq_spinlock_t req_lock = IRQ_SPINLOCK_INITIALIZER("rcu.req");
static uint64_t req_gp;
static waitq_t detector_wq;
/** Waiters for GP completion sleep here (checked under its lock). */
static waitq_t gp_done_wq;
/** CPUs that must still announce a QS to the detector; atomics. */
static size_t delaying_cpus;
static waitq_t delaying_done_wq;


/** Records a QS of this CPU; announces it if the detector waits. Preemption off. */
/* Model: verify/podzimek.pml */
void rcu_record_qs(void)
{
	cpu_t *c = CPU;
	/*
	 * Full barrier: forbids the finished reader sections' loads from being
	 * reordered after the announcement below.
	 */
	memory_barrier();
	__atomic_store_n(&c->rcu.last_seen_gp, rcu_started_gp(), __ATOMIC_SEQ_CST);
	bool delaying = __atomic_exchange_n(&c->rcu.is_delaying_gp, false,
	    __ATOMIC_SEQ_CST);
	/*
	 * Full barrier: forbids the loads of the reader section this
	 * rcu_read_lock() opens (or of the next one) from being satisfied
	 * before the store of last_seen_gp: the detector, seeing it, no longer
	 * waits for this CPU, so those loads must see what was unlinked before
	 * the GP started. On arm64 the STLR and the exchange (LDAXR/STLXR)
	 * order later loads only after the exchange's load half, not after the
	 * stores; on amd64 both are xchg, full barriers, and this emits nothing.
	 */
	memory_barrier_after_atomic();
	if (delaying) {
		if (__atomic_sub_fetch(&delaying_cpus, 1, __ATOMIC_SEQ_CST) == 0)
			waitq_wake_one(&delaying_done_wq);
	}
}

/* Model: verify/podzimek.pml */
static void remove_preempted(thread_t *t)
{
	ipl_t ipl = interrupts_disable();
	irq_spinlock_lock(&rcu_preempt_lock, false);
	if (t->rcu_preempted) {
		list_remove(&t->rcu_preempt_link);
		t->rcu_preempted = false;
		rcu_preempted_reader_left_locked();
	}
	irq_spinlock_unlock(&rcu_preempt_lock, false);
	interrupts_restore(ipl);
}

/* Model: verify/podzimek.pml */
void rcu_read_lock_slow(void)
{
	preemption_disable();
	cpu_t *c = CPU;
	/* Outside any section here (the count is this CPU's), a QS. */
	if (arcu_nesting() == 0 &&
	    __atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&rcu_cur_gp, __ATOMIC_RELAXED))
		rcu_record_qs();
	preemption_enable();
}

/* Model: verify/podzimek.pml */
void rcu_read_unlock_slow(void)
{
	thread_t *t = THREAD;
	/* A racy hint; remove_preempted() re-checks under the lock. */
	if (t && t->rcu_preempted)
		remove_preempted(t);
	preemption_disable();
	cpu_t *c = CPU;
	if (arcu_nesting() == 0 &&
	    (__atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&rcu_cur_gp, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&c->rcu.is_delaying_gp, __ATOMIC_RELAXED)))
		rcu_record_qs();
	preemption_enable();
}

/* Model: verify/podzimek.pml */
static void podzimek_after_thread_ran(thread_t *t)
{
	t->rcu_nesting = arcu_nesting();
	if (t->rcu_nesting > 0 && !t->rcu_preempted) {
		irq_spinlock_lock(&rcu_preempt_lock, false);
		t->rcu_preempted = true;
		rcu_add_preempted_locked(t);
		irq_spinlock_unlock(&rcu_preempt_lock, false);
	}
	arcu_nesting_set(0);
	/* The switch is a QS for the CPU; this also announces it if asked. */
	rcu_record_qs();
}

/* Model: verify/podzimek.pml */
static void podzimek_before_thread_runs(thread_t *t)
{
	arcu_nesting_set(t->rcu_nesting);
}

/** smp_call target: acknowledge, or promise to announce the next QS. */
/* Model: verify/podzimek.pml */
static UNUSED void podzimek_sample_cpu(void *arg)
{
	uint64_t gp = *(uint64_t *) arg;
	cpu_t *c = CPU;
	if (arcu_nesting() == 0) {
		__atomic_store_n(&c->rcu.last_seen_gp, gp, __ATOMIC_SEQ_CST);
	} else if (__atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_SEQ_CST) != gp &&
	    !__atomic_load_n(&c->rcu.is_delaying_gp, __ATOMIC_SEQ_CST)) {
		/* Count first, then raise the flag the announcer clears. */
		__atomic_add_fetch(&delaying_cpus, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&c->rcu.is_delaying_gp, true, __ATOMIC_SEQ_CST);
	}
}

/**
 * Podzimek's part of the detection of GP @a gp (rcu_run_gp(), the detector
 * thread): asks the CPUs that did not acknowledge and sleeps until each
 * announced its next quiescent state.
 */
/* Model: verify/podzimek.pml */
void rcu_alg_detect(uint64_t gp, bool expedite, gp_watch_t *w)
{
	bool any = false;
	for (unsigned i = 0; i < cpu_count; i++)
		any |= cpu_is_online(i) && !rcu_cpu_quiescent(i, gp);
	if (any)
		rcu_detect_sleep(expedite, DETECT_SLEEP_US);
	/* One reference for the detector itself while it sends the calls. */
	__atomic_store_n(&delaying_cpus, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < cpu_count; i++) {
		if (cpu_is_online(i) && !rcu_cpu_quiescent(i, gp)) {
			__atomic_fetch_add(&rcu_stat_cross_calls, 1, __ATOMIC_RELAXED);
			(void) smp_call(i, podzimek_sample_cpu, &gp);
		}
	}
	if (__atomic_sub_fetch(&delaying_cpus, 1, __ATOMIC_SEQ_CST) != 0) {
		__atomic_fetch_add(&rcu_stat_delayed, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&delaying_cpus, __ATOMIC_SEQ_CST) != 0) {
			rcu_stall_check(w);
			(void) waitq_sleep_timeout(&delaying_done_wq, DETECT_SLEEP_US,
			    SYNCH_FLAGS_NONE);
		}
	}
	/* Drop a wake-up that raced with the last check. */
	(void) waitq_sleep_timeout(&delaying_done_wq, 0, SYNCH_FLAGS_NON_BLOCKING);
}

/* Model: verify/podzimek.pml */
static void detector_thread(void *arg)
{
	for (;;) {
		ipl_t ipl = waitq_sleep_prepare(&detector_wq);
		irq_spinlock_lock(&req_lock, false);
		bool work = req_gp > rcu_completed_gps();
		irq_spinlock_unlock(&req_lock, false);
		if (!work) {
			(void) waitq_sleep_finish(&detector_wq, ipl, SYNCH_NO_TIMEOUT,
			    SYNCH_FLAGS_NONE);
			continue;
		}
		waitq_sleep_cancel(&detector_wq, ipl);
		rcu_run_gp();
		waitq_wake_all(&gp_done_wq);
	}
}

/* Model: verify/podzimek.pml */
void rcu_wait_for_gp(uint64_t gp)
{
	irq_spinlock_lock(&req_lock, true);
	if (req_gp < gp)
		req_gp = gp;
	irq_spinlock_unlock(&req_lock, true);
	waitq_wake_one(&detector_wq);
	for (;;) {
		ipl_t ipl = waitq_sleep_prepare(&gp_done_wq);
		if (rcu_completed_gps() >= gp) {
			waitq_sleep_cancel(&gp_done_wq, ipl);
			return;
		}
		(void) waitq_sleep_finish(&gp_done_wq, ipl, SYNCH_NO_TIMEOUT,
		    SYNCH_FLAGS_NONE);
	}
}

void rcu_thread_exiting(void)
{
	thread_t *t = THREAD;
	preemption_disable();
	size_t n = arcu_nesting();
	if (n == 0) {
		preemption_enable();
		return;
	}
	printf("rcu: thread %lu '%s' exited inside a reader section (nesting %zu); "
	    "closing it\n", t->tid, t->name, n / RCU_CNT_INC);
	arcu_nesting_set(0);
	if (t->rcu_preempted)
		remove_preempted(t);
	rcu_record_qs();
	preemption_enable();
}

const sched_hooks_t rcu_alg_hooks = {
	.after_thread_ran = podzimek_after_thread_ran,
	.before_thread_runs = podzimek_before_thread_runs,
	.thread_sleeps = RCU_SLEEP_HOOK,
	.thread_exits = rcu_thread_exits_hook,
};


void rcu_alg_init(void)
{
	waitq_initialize(&detector_wq);
	waitq_initialize(&gp_done_wq);
	waitq_initialize(&delaying_done_wq);
}

void rcu_alg_start_threads(void)
{
	thread_t *d = thread_run(detector_thread, NULL, "rcu-detector");
	if (!d)
		panic("rcu: cannot create the detector thread");
	thread_detach(d);
}
