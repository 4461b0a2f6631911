/** @file scheduler.h
 * The SMP scheduler: per-CPU run queues with RQ_LEVELS priorities, preemption by
 * the timer tick, work stealing by idle CPUs, and hooks for other subsystems.
 *
 * Priorities: 0 is the highest. A thread that used its whole quantum drops one
 * level, a woken thread rises one level; every RELINK_TICKS ticks each CPU moves
 * every ready thread one level up, so no ready thread starves. The quantum of a
 * thread at level p is p + 1 ticks.
 */
#ifndef KERN_SCHEDULER_H_
#define KERN_SCHEDULER_H_

#include <typedefs.h>
#include <proc/thread.h>

/** Ticks between two starvation-avoidance relinks of a CPU's run queue. */
#define RELINK_TICKS 20

/**
 * Scheduler hooks. Each is called on the CPU concerned with interrupts disabled
 * and without the thread's lock; none may sleep. thread_wakes may be called with
 * the lock of the wait queue the thread slept in held, so a hook must not touch
 * that wait queue. Registered at boot, before threads run.
 */
typedef struct {
	/** Before @a t starts running on this CPU (after the switch). */
	void (*before_thread_runs)(thread_t *t);
	/** After @a t stopped running on this CPU (before the switch). */
	void (*after_thread_ran)(thread_t *t);
	/** @a t is about to sleep (state already SLEEPING). */
	void (*thread_sleeps)(thread_t *t);
	/** @a t is being woken up: called before it enters a run queue (it
	 * cannot run yet), possibly with the wait queue's lock held. */
	void (*thread_wakes)(thread_t *t);
	/**
	 * @a t, the current thread, is exiting (thread_exit()): unlike the
	 * others this one runs in the thread's own context with interrupts
	 * enabled and may sleep; the thread still runs on this CPU afterwards
	 * until it switches away for the last time. Hooks run in registration
	 * order (RCU closes a reader section left open, then the address space
	 * is left).
	 */
	void (*thread_exits)(thread_t *t);
} sched_hooks_t;

/** Adds a set of hooks (at most 8 sets). Boot only. */
void sched_hooks_register(const sched_hooks_t *hooks);

/**
 * Runs every registered thread_exits hook for @a t, the current thread.
 * Called by thread_exit(): thread context, interrupts enabled; may sleep.
 */
void sched_hooks_thread_exits(thread_t *t);

/** Initializes run queues and timeout lists of every CPU. BSP, before APs start. */
void scheduler_init(void);
/**
 * Turns the calling CPU's current execution context into its idle thread and
 * makes it the running thread. Each CPU, once, interrupts disabled.
 */
void scheduler_init_cpu(void);
/** The idle loop of the calling CPU (never returns). */
NO_RETURN void scheduler_idle_loop(void);

/**
 * Switches to the best ready thread (or idle). The current thread must have
 * set its state: RUNNING (preempted/yielding: it is put back in the run queue),
 * SLEEPING or EXITING. Interrupts disabled, no spinlock held.
 */
void scheduler(void);

/** Puts @a t (ENTERING or SLEEPING) into a run queue. Any context. */
void thread_ready(thread_t *t);

/** Timer tick work of the scheduler (quantum, relink). Timer interrupt. */
void scheduler_tick(void);

/**
 * Called on the way out of an interrupt and from preemption_enable(): preempts
 * the current thread if its quantum expired or a higher-priority thread is ready.
 */
void scheduler_preempt_check(void);

/** Finishes the first switch to a new thread (called from its entry code). */
void scheduler_finish_switch_new(void);

/** Prints per-CPU run-queue lengths, context switches, migrations. */
void sched_print(void);

#endif
