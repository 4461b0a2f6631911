/** @file thread.h
 * Kernel threads.
 *
 * A thread is created stopped (thread_create), may be wired to a CPU (a wired
 * thread never migrates), then started (thread_start). Whoever created it holds a
 * reference and must either thread_join() it (waits for its exit, then releases the
 * thread) or thread_detach() it (released automatically when it exits).
 */
#ifndef KERN_THREAD_H_
#define KERN_THREAD_H_

#include <typedefs.h>
#include <atomic.h>
#include <cpu.h>
#include <adt/list.h>
#include <synch/waitq.h>
#include <synch/lockdep.h>

#define THREAD_NAME_MAX 32
/** Priorities 0 (highest) .. RQ_COUNT-1 (lowest). */
#define RQ_COUNT 16
#ifdef CONFIG_KASAN
/* KASAN's redzones around locals make frames larger: twice the stack (as Linux). */
#define THREAD_STACK_SIZE 32768
#else
#define THREAD_STACK_SIZE 16384
#endif

typedef enum {
	THREAD_ENTERING,   /**< Created, not started. */
	THREAD_READY,      /**< In a run queue. */
	THREAD_RUNNING,    /**< On a CPU. */
	THREAD_SLEEPING,   /**< In a wait queue. */
	THREAD_EXITING,    /**< Called thread_exit(), not switched out yet. */
	THREAD_LINGERING,  /**< Exited; waiting to be joined/released. */
} thread_state_t;

/* context_t: the architecture's switched context (see context_switch). */
#include <arch/context.h>

typedef void (*thread_func_t)(void *arg);

typedef struct thread {
	/** Saved context; touched only by the scheduler of the CPU running it. */
	context_t ctx;
	/** Unique id; set at creation. */
	uint64_t tid;
	char name[THREAD_NAME_MAX];
	thread_func_t func;
	void *arg;

	/**
	 * State, priority, CPU, run-queue link and quantum are protected by
	 * @c lock (an IRQ spinlock); the run-queue link is also covered by the
	 * run queue's lock while queued.
	 */
	irq_spinlock_t lock;
	thread_state_t state;
	int priority;
	/** CPU the thread runs on or last ran on (its run queue when ready). */
	cpu_t *cpu;
	bool wired;
	link_t rq_link;
	unsigned quantum;   /**< Ticks left in this time slice. */
	/**
	 * True from when a CPU switches to the thread until its context is saved
	 * after it switched away. Another CPU must not run the thread while set.
	 * Atomics (release by the CPU that saved the context, acquire by others).
	 */
	bool on_cpu;

	/** Wait queue the thread sleeps in; protected by that wait queue's lock. */
	struct waitq *sleep_queue;
	link_t wq_link;
	/** Result of the sleep (EOK, ETIMEOUT); written by the waker under the waitq lock. */
	errno_t sleep_result;
	/** Interruptible sleep was interrupted (not used yet). */
	bool interrupted;

	/** Ticks spent running (statistics). Written by the running CPU. */
	uint64_t ticks;
	/** Times the thread migrated between CPUs. */
	uint64_t migrations;

	/**
	 * User register state (FP/SIMD and the architecture's other
	 * user-writable registers, proc/uctx.h) of a thread created with
	 * THREAD_FLAG_USER, NULL for kernel threads: saved and loaded by the
	 * scheduler of the CPU running the thread (interrupts disabled), freed
	 * with the thread. Set once at creation.
	 */
	struct uctx *uctx;

	/** Kernel stack (direct map), THREAD_STACK_SIZE bytes. Set once. */
	void *kstack;

	/** Joiners sleep here until the thread exits. */
	waitq_t join_wq;
	/** References: the creator's handle and the running thread itself. Atomics. */
	atomic_t refcount;
	/** thread_detach() was called. Atomics. */
	bool detached;

	/** Link in the global thread list; protected by threads_lock. */
	link_t threads_link;

	/**
	 * RCU reader nesting saved here while the thread is switched out; while
	 * it runs the count lives in its CPU (cpu_t.rcu.nesting; A-RCU on arm64:
	 * register x18, arch/rcu_arch.h). Written by
	 * the switch-out hook of the CPU that ran it (A-RCU: RCU_CNT_INC per
	 * level, the bit RCU_WAS_PREEMPTED set there), read by the switch-in
	 * hook (ordered by on_cpu). Atomics (relaxed).
	 */
	size_t rcu_nesting;
	/** Podzimek: the thread was preempted inside its reader section. */
	bool rcu_preempted;
	/** Link in an RCU preempted-readers list; protected by the RCU preempt lock. */
	link_t rcu_preempt_link;
	/**
	 * The free batch of the callbacks this thread (a reclaimer) is running
	 * (rcu_slab_free()); NULL outside them. The thread itself only.
	 */
	struct rcu_free_batch *rcu_free_batch;

	/** Address space the thread runs in (NULL: kernel); holds a reference.
	 * Written by the thread itself with interrupts disabled. */
	struct as *as;

#ifdef CONFIG_LOCKDEP
	/** The lock validator's: held sleeping locks; thread-local. */
	lockdep_thread_t lockdep;
#endif

	/** Per-thread state of other subsystems (work queue) lives here. */
	uintptr_t subsys[4];
/** subsys[] slot of the work queue: its worker_t for worker threads, else 0. */
#define THREAD_SUBSYS_WORKQ 0
/** subsys[] slot of tasks: the uthread_t of a user thread, else 0 (proc/task.h). */
#define THREAD_SUBSYS_TASK 1
} thread_t;

/** Flags for thread_create(). */
typedef enum {
	THREAD_FLAG_NONE = 0,
	/** It will run a user thread: it gets a uctx (proc/uctx.h). */
	THREAD_FLAG_USER = 1,
} thread_flags_t;

/** Returns the current thread (NULL before the scheduler starts). */
static inline thread_t *thread_current(void)
{
	return arch_thread_current();
}

#define THREAD (thread_current())

/** Sets up the thread subsystem (BSP, once). */
void thread_init(void);

/**
 * Creates a thread that will run func(arg); it does not run until thread_start().
 * @param name copied (truncated to THREAD_NAME_MAX - 1 characters).
 * @return the thread, or NULL when out of memory.
 * Context: thread context (may allocate); never sleeps.
 */
thread_t *thread_create(thread_func_t func, void *arg, const char *name,
    thread_flags_t flags);
/** Wires a created (not started) thread to @a cpu; it will never migrate. */
void thread_wire(thread_t *t, cpu_t *cpu);
/** Makes a created thread ready to run. */
void thread_start(thread_t *t);
/** thread_create() + thread_start(). */
thread_t *thread_run(thread_func_t func, void *arg, const char *name);
/**
 * Waits until @a t exits and releases the caller's reference (the handle is
 * invalid afterwards). May sleep. Must not be called on the current thread.
 */
errno_t thread_join(thread_t *t);
/**
 * Like thread_join() with a timeout in microseconds (0: wait forever). On ETIMEOUT
 * the caller still holds its reference.
 */
errno_t thread_join_timeout(thread_t *t, uint64_t usec);
/** Releases the caller's reference; the thread is freed when it exits. */
void thread_detach(thread_t *t);
/**
 * Ends the current thread. Asserts that no spinlock is held (preemption enabled)
 * and interrupts are enabled. Never returns.
 */
NO_RETURN void thread_exit(void);
/** Gives the CPU to another ready thread of equal or higher priority. */
void thread_yield(void);
/** Sleeps @a sec seconds. May sleep (obviously); thread context only. */
void thread_sleep(unsigned sec);
/** Sleeps @a usec microseconds (rounded up to timer ticks). */
void thread_usleep(uint64_t usec);

/**
 * First C code of every new thread: called by the architecture's
 * thread_entry_asm (context.S), never from C. Finishes the switch, enables
 * interrupts, runs the thread's function and exits the thread.
 */
NO_RETURN void thread_main_entry(void);

/**
 * Finishes the exit of @a t: called by the scheduler on the CPU that switched
 * away from the exiting thread (interrupts disabled). Wakes joiners, drops the
 * running reference.
 */
void thread_finish_exit(thread_t *t);

/** Adds an idle thread to the thread list (scheduler start-up). */
void thread_register_idle(thread_t *t);

/** Number of threads that exist (including lingering ones not yet released). */
size_t thread_count(void);
/** Prints the thread table (id, name, state, priority, CPU, wired, ticks). */
void threads_print(void);
/** Human-readable state name. */
const char *thread_state_name(thread_state_t s);

#endif
