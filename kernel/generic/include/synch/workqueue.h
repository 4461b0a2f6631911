/** @file workqueue.h
 * Work queues: deferred execution of work items by a self-sizing pool of kernel
 * threads (workers).
 *
 * A work item (work_t) is embedded in the caller's object. Enqueuing it makes a
 * worker of the queue call func(item) later, in thread context with interrupts
 * enabled and no spinlock held: the function may sleep (block on wait queues,
 * mutexes, thread_usleep(), ...). The worker copies func before the call, so the
 * function may free or re-enqueue its own item. Items of one queue are started in
 * FIFO order but run concurrently on several workers.
 *
 * There is one system work queue (workq_global_*) and any number of custom ones
 * (workq_create). The pool of every queue sizes itself:
 *  - it keeps at least WORKQ_MIN_IDLE idle workers (surplus idle workers retire
 *    after an idle timeout);
 *  - it adds a worker when the queued items exceed what the active workers can
 *    take (WORKQ_ITEMS_PER_WORKER each), up to a total of max workers;
 *  - no more than max concurrent (about the number of CPUs) workers take items at
 *    the same time;
 *  - a worker blocked inside a work function does not count as active (scheduler
 *    hooks), so when all active workers block another one takes over.
 *
 * Non-blocking enqueues (workq_*enqueue_noblock) never allocate and never sleep;
 * when they need a new worker they ask the "workq-adder" thread to create it.
 *
 * Lock order: a queue's lock is taken before wait queue, thread and run queue
 * locks. The non-blocking enqueues may therefore be called under any spinlock
 * except wait queue, thread and run queue locks (the scheduler's own locks).
 */
#ifndef KERN_WORKQUEUE_H_
#define KERN_WORKQUEUE_H_

#include <typedefs.h>
#include <adt/list.h>

typedef struct work_item work_t;

/**
 * A work function. Called by a worker thread with interrupts enabled and no
 * spinlock held; may sleep. It may free or re-enqueue @a item.
 */
typedef void (*work_func_t)(work_t *item);

/**
 * A work item; embed it in your object. It needs no initialization: the enqueue
 * functions set every field. It must not be enqueued again while it is queued
 * (debug builds catch that); it may be re-enqueued from its own work function.
 */
struct work_item {
	/** Link in the queue's item list; protected by the queue's lock. */
	link_t queue_link;
	/** Function to call; set by the enqueue, read by the worker under the lock. */
	work_func_t func;
#ifdef CONFIG_DEBUG
	/** WORKQ_ITEM_MAGIC while queued (catches a double enqueue). */
	uint32_t cookie;
#endif
};

/** A work queue (opaque). */
struct work_queue;

/** Sizing parameters (the same for every queue); see workq_get_config(). */
typedef struct {
	/** Idle workers kept; more retire after idle_timeout_us without work. */
	size_t min_idle;
	/** Most workers of one queue (active + blocked + idle). */
	size_t max_workers;
	/** Most workers taking items at the same time (blocked ones not counted). */
	size_t max_concurrent;
	/** Queued items per active worker before another worker is activated. */
	size_t items_per_worker;
	/** Microseconds an idle worker waits for work before it may retire. */
	uint64_t idle_timeout_us;
} workq_config_t;

/** The queue statistics' load averages are fixed point with this many fraction bits. */
#define WORKQ_LOAD_SHIFT 10

/** A work queue's totals since it was created (workq_stats_t.totals). */
typedef struct {
	uint64_t enqueued;
	uint64_t completed;
	uint64_t refused;
	uint64_t workers_created;
	uint64_t workers_retired;
	uint64_t worker_create_failures;
	uint64_t nonblock_add_requests;
	uint64_t activations;
	size_t peak_workers;
} workq_totals_t;

/** A snapshot of a queue's state (taken under its lock; see workq_get_stats()). */
typedef struct {
	/** The queue's name (NULL before the system queue exists). */
	const char *name;
	/** The system work queue. */
	bool system;
	/** Workers that exist or are being created (active + blocked + idle). */
	size_t workers;
	/** Workers running work functions (or starting), not blocked in them. */
	size_t active;
	/** Workers sleeping inside a work function. */
	size_t blocked;
	/** Workers waiting for work. */
	size_t idle;
	/** Items queued, not yet taken by a worker. */
	size_t items;
	/**
	 * Time-weighted moving averages of the queued items over about 0.1 s
	 * (fast) and 1 s (slow), in 1/1024 items (WORKQ_LOAD_SHIFT bits).
	 */
	size_t load_fast;
	size_t load_slow;
	/** Load direction (fast vs slow average): 1 rising, -1 falling, 0 steady. */
	int load_trend;
	/** The queue is stopping or stopped (enqueues are refused). */
	bool stopping;
	/** Totals since the queue was created. */
	workq_totals_t totals;
} workq_stats_t;

/**
 * Creates the system work queue with its first workers, the "workq-adder" thread,
 * registers the scheduler hooks and the `workq` kconsole command.
 * Context: BSP, once, after the scheduler and threads work (thread_create,
 * thread_start) and before any thread uses a work queue. Never sleeps.
 * Panics when the system queue or the adder thread cannot be created.
 */
void workq_global_init(void);

/**
 * Enqueues @a work on the system queue; a worker will call func(work).
 * May create a worker thread synchronously (allocates).
 * Context: thread, interrupts enabled, no spinlock held. Does not block on other
 * threads, but allocates.
 * @return true when the item was queued; false when the system queue does not
 *         exist yet (before workq_global_init()).
 */
bool workq_global_enqueue(work_t *work, work_func_t func);

/**
 * Like workq_global_enqueue() but never allocates and never sleeps: a needed
 * worker is created later by the workq-adder thread.
 * Context: any, including interrupt handlers and code holding spinlocks (except
 * wait queue, thread and run queue locks).
 * @return true when queued; false before workq_global_init().
 */
bool workq_global_enqueue_noblock(work_t *work, work_func_t func);

/**
 * Fills @a stats with a snapshot of the system queue (zeros before
 * workq_global_init()). Any context except scheduler locks held. Never sleeps.
 */
void workq_global_get_stats(workq_stats_t *stats);

/**
 * Creates a custom work queue named @a name (copied, truncated) with its first
 * idle workers.
 * Context: thread. Allocates; never sleeps.
 * @return the queue, or NULL when out of memory.
 */
struct work_queue *workq_create(const char *name);

/**
 * Stops @a q if it was not stopped yet (see workq_stop()) and frees it. Nobody may
 * use @a q afterwards (no enqueue may be in progress or follow).
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
void workq_destroy(struct work_queue *q);

/**
 * Enqueues @a work on @a q; a worker will call func(work).
 * May create a worker thread synchronously (allocates).
 * Context: thread, interrupts enabled, no spinlock held (typically also from a
 * work function). Does not wait for other threads.
 * @return true when queued; false when @a q is stopping or stopped (the item is
 *         then untouched by the queue and still owned by the caller).
 */
bool workq_enqueue(struct work_queue *q, work_t *work, work_func_t func);

/**
 * Like workq_enqueue() but never allocates and never sleeps (a needed worker is
 * created by the workq-adder thread).
 * Context: any, including interrupt handlers and code holding spinlocks (except
 * wait queue, thread and run queue locks).
 * @return true when queued; false when @a q is stopping or stopped.
 */
bool workq_enqueue_noblock(struct work_queue *q, work_t *work, work_func_t func);

/**
 * Stops @a q: from now on enqueues return false; the items already queued still
 * run (their functions' enqueues on @a q fail). Returns after every worker of
 * @a q has exited and been joined and no worker creation for @a q is pending.
 * Calling it again (or concurrently) is allowed and waits the same way.
 * Must not be called from a work function of @a q (it would wait for itself).
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
void workq_stop(struct work_queue *q);

/**
 * Fills @a stats with a snapshot of @a q.
 * Context: any except scheduler locks held. Never sleeps.
 */
void workq_get_stats(struct work_queue *q, workq_stats_t *stats);

/** Returns the sizing parameters (set by workq_global_init()). Any context. */
void workq_get_config(workq_config_t *cfg);

#endif
