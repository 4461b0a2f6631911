/** @file workqueue.c
 * Work queues: the system work queue and custom ones, served by self-sizing pools
 * of worker threads.
 *
 * Worker states. Every worker of a queue is in exactly one of these states:
 *  - idle: waiting for work on q->idle_wq (counted in q->idle_cnt from just before
 *    the sleep until it has re-taken the queue lock);
 *  - blocked: sleeping inside a work function (counted in q->blocked_cnt by the
 *    scheduler hooks);
 *  - active: everything else (taking an item, running a work function, being
 *    created: a reserved worker counts as active, it will take items shortly).
 * q->worker_cnt counts all of them including reserved ones, so
 *     active = worker_cnt - idle_cnt - blocked_cnt.
 *
 * Sizing (signal_worker_locked(), on every enqueue and whenever a worker blocks):
 * when the queued items exceed active * items_per_worker, wake an idle worker that
 * nobody is waking yet; failing that, add a worker if fewer than max_concurrent are
 * active and fewer than max_workers exist. A blocking enqueue creates the worker
 * itself (after dropping the lock); a non-blocking one and the scheduler hook hand
 * the reservation to the "workq-adder" thread. A worker takes the next item only
 * while no more than max_concurrent workers are active (a worker that unblocked
 * may make more than that active; the surplus goes idle). An idle worker that
 * timed out without work retires while at least min_idle other workers are idle.
 *
 * Blocked accounting (scheduler hooks). thread_sleeps runs in scheduler() on the
 * CPU switching away from a worker that sleeps; before_thread_runs runs when a
 * CPU has switched to the worker again. The scheduler orders the two (the second
 * CPU waits for the first to release the thread's on_cpu), so a worker that
 * sleeps inside a work function is counted in blocked_cnt by the first and
 * uncounted by the second, with no lock and no race. (thread_wakes is not used:
 * it runs on the waker's CPU after the thread lock was dropped, possibly after
 * the woken thread already runs or even sleeps again.) A woken worker that still
 * waits in a run queue thus counts as blocked until it runs. When the scheduler
 * picks the sleeping thread itself again there is no switch and no
 * before_thread_runs; the worker then uncounts itself after its work function
 * returns (under the queue lock, interrupts disabled, so its own hooks cannot
 * interleave). When a worker blocks and items are queued, thread_sleeps wakes an
 * idle worker or asks the adder thread for a new one (it may not sleep or
 * allocate).
 *
 * Lock order: q->lock -> adder_lock -> wait queue locks -> thread -> run queue.
 *
 * Lifetime. A queue is freed only after workq_stop() saw worker_cnt == 0 with
 * every worker joined. Anyone who touches the queue after dropping its lock holds a
 * reservation (a unit of worker_cnt): a creator between the decision and the new
 * worker linking itself, the adder thread for its requests. The last access of a
 * leaving thread is the release store of the unlock.
 */
#include <synch/workqueue.h>
#include <synch/waitq.h>
#include <synch/spinlock.h>
#include <synch/lockdep.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <mm/malloc.h>
#include <lib/str.h>
#include <time/delay.h>
#include <atomic.h>
#include <cpu.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <errno.h>
#include <debug/fault_inject.h>

/** Cookie of a live queue. */
#define WORKQ_MAGIC       0x776f726bU
/** Cookie of a queued work item (debug builds). */
#define WORKQ_ITEM_MAGIC  0x6974656dU

/* Default sizing; workq_global_init() scales the CPU-dependent ones. */
#define WORKQ_MIN_IDLE             2
#define WORKQ_MAX_WORKERS_MIN      32
#define WORKQ_WORKERS_PER_CPU      8
#define WORKQ_MAX_CONCURRENT_MIN   2
#define WORKQ_ITEMS_PER_WORKER     8
#define WORKQ_IDLE_TIMEOUT_US      1000000

/* Load averages: fixed point with LOAD_SHIFT fraction bits. */
#define LOAD_SHIFT       WORKQ_LOAD_SHIFT
/** Time constant of the fast average (microseconds). */
#define LOAD_FAST_TAU_US 100000
/** Time constant of the slow average (microseconds). */
#define LOAD_SLOW_TAU_US 1000000

#define SYSTEM_QUEUE_NAME "kworkq"

/** Per-worker state; the worker thread's subsys[THREAD_SUBSYS_WORKQ] points here. */
typedef struct worker {
	/** The queue; set before the thread starts, constant. */
	struct work_queue *q;
	/** The worker thread; set before it starts, constant. */
	thread_t *thread;
	/** Link in q->worker_list; protected by q->lock. */
	link_t link;
	/**
	 * Inside a work function; counted in q->blocked_cnt. Both are accessed
	 * only in the worker's own context: by the worker (blocked only with
	 * interrupts disabled) and by the hooks called for its context switches,
	 * which the scheduler serializes (on_cpu hand-off). Plain fields.
	 */
	bool in_func;
	bool blocked;
} worker_t;

struct work_queue {
	/** WORKQ_MAGIC while the queue exists. Constant. */
	uint32_t cookie;
	/** Name (also of the worker threads). Constant. */
	char name[THREAD_NAME_MAX];
	/** The system queue (never stopped). Constant. */
	bool system;

	/** Protects every field below up to blocked_cnt. IRQ spinlock. */
	irq_spinlock_t lock;
	/** Queued items (work_t.queue_link), FIFO. */
	list_t items;
	size_t item_cnt;
	/** Workers that have started and are not retired (joined by workq_stop). */
	list_t worker_list;
	/** All workers: started, being created (reserved), not yet exited. */
	size_t worker_cnt;
	/** Workers waiting for work (registered before their sleep on idle_wq). */
	size_t idle_cnt;
	/** Wake-ups of idle_wq not yet consumed by a successful (EOK) idle sleep. */
	size_t activate_pending;
	/** Reservations handed to the adder thread, not yet taken by it. */
	size_t nb_add_pending;
	/** Enqueues are refused; workers drain the items and exit. */
	bool stopping;
	/**
	 * Time-weighted moving averages of item_cnt (fixed point), updated before
	 * every change of item_cnt and when statistics are read; load_time is the
	 * uptime of the last update.
	 */
	int64_t load_fast;
	int64_t load_slow;
	uint64_t load_time;
	/** Statistics; under the queue's lock. */
	workq_totals_t totals;

	/** Workers blocked inside work functions. Atomics (seq_cst), no lock. */
	size_t blocked_cnt;

	/** Idle workers sleep here (own lock; woken with q->lock held). */
	waitq_t idle_wq;
	/** workq_stop() sleeps here (own lock; woken with q->lock held). */
	waitq_t stop_wq;
	/** Link in adder_list; protected by adder_lock. Linked iff nb_add_pending. */
	link_t adder_link;
};

/**
 * Sizing parameters. Written by workq_global_init() on the BSP before any worker
 * or custom queue exists; read-only afterwards.
 */
static workq_config_t cfg = {
	.min_idle = WORKQ_MIN_IDLE,
	.max_workers = WORKQ_MAX_WORKERS_MIN,
	.max_concurrent = WORKQ_MAX_CONCURRENT_MIN,
	.items_per_worker = WORKQ_ITEMS_PER_WORKER,
	.idle_timeout_us = WORKQ_IDLE_TIMEOUT_US,
};

/** The system queue. Usable once sys_ready is set (release/acquire). */
static struct work_queue sys_wq;
static bool sys_ready;

/** Queues with requests for the adder thread; protected by adder_lock. */
static list_t adder_list = LIST_INITIALIZER(adder_list);
static irq_spinlock_t adder_lock = IRQ_SPINLOCK_INITIALIZER("workq-adder");
/** The adder thread sleeps here; wake-ups are remembered. */
static waitq_t adder_wq;

static bool create_worker(struct work_queue *q);

/** Workers that are neither idle nor blocked. Caller holds q->lock. */
static size_t active_cnt(struct work_queue *q)
{
	assert(irq_spinlock_locked_by_me(&q->lock));
	size_t blocked = __atomic_load_n(&q->blocked_cnt, __ATOMIC_SEQ_CST);
	size_t busy = q->worker_cnt - q->idle_cnt;
	return busy > blocked ? busy - blocked : 0;
}

/** Moves @a avg towards @a x by the weight of @a dt (linearized exponential). */
static int64_t load_decay(int64_t avg, int64_t x, uint64_t dt, uint64_t tau)
{
	if (dt >= tau)
		return x;
	return avg + (x - avg) * (int64_t) dt / (int64_t) tau;
}

/**
 * Accounts the time item_cnt has had its current value since the last update;
 * call it before changing item_cnt. Caller holds q->lock.
 */
static void load_sample(struct work_queue *q)
{
	assert(irq_spinlock_locked_by_me(&q->lock));
	uint64_t now = uptime_us();
	uint64_t dt = now > q->load_time ? now - q->load_time : 0;
	q->load_time = now;
	int64_t x = (int64_t) q->item_cnt << LOAD_SHIFT;
	q->load_fast = load_decay(q->load_fast, x, dt, LOAD_FAST_TAU_US);
	q->load_slow = load_decay(q->load_slow, x, dt, LOAD_SLOW_TAU_US);
}

/** 1 rising, -1 falling, 0 steady. Caller holds q->lock. */
static int load_trend(struct work_queue *q)
{
	assert(irq_spinlock_locked_by_me(&q->lock));
	/* A quarter of an item plus 1/8 of the slow average is noise. */
	int64_t margin = (1 << (LOAD_SHIFT - 2)) + q->load_slow / 8;
	if (q->load_fast > q->load_slow + margin)
		return 1;
	if (q->load_fast < q->load_slow - margin)
		return -1;
	return 0;
}

/** Hands one more reservation of @a q to the adder thread. Caller holds q->lock. */
static void request_adder_locked(struct work_queue *q)
{
	assert(irq_spinlock_locked_by_me(&q->lock));
	q->nb_add_pending++;
	q->totals.nonblock_add_requests++;
	irq_spinlock_lock(&adder_lock, false);
	if (!link_in_use(&q->adder_link))
		list_append(&q->adder_link, &adder_list);
	irq_spinlock_unlock(&adder_lock, false);
	waitq_wake_one(&adder_wq);
}

/**
 * Makes sure the queued items will be taken: wakes an idle worker or reserves a
 * new one. Caller holds q->lock (interrupts disabled).
 * @param can_block the caller may create a worker itself after unlocking.
 * @return true when the caller must call create_worker(q) after unlocking (a
 *         reservation was made for it).
 */
static bool signal_worker_locked(struct work_queue *q, bool can_block)
{
	assert(irq_spinlock_locked_by_me(&q->lock));
	size_t active = active_cnt(q);
	/* The active workers can take the queued items. */
	if (q->item_cnt <= active * cfg.items_per_worker)
		return false;

	size_t free_idle = q->idle_cnt > q->activate_pending ?
	    q->idle_cnt - q->activate_pending : 0;
	if (free_idle > 0) {
		q->activate_pending++;
		q->totals.activations++;
		waitq_wake_one(&q->idle_wq);
		return false;
	}

	/*
	 * Also while stopping: the queued items must still run, and the stopper
	 * waits for the new worker like for any other.
	 */
	if (active >= cfg.max_concurrent || q->worker_cnt >= cfg.max_workers)
		return false;
	q->worker_cnt++;
	if (q->worker_cnt > q->totals.peak_workers)
		q->totals.peak_workers = q->worker_cnt;
	if (can_block)
		return true;
	request_adder_locked(q);
	return false;
}

/** Takes the first queued item. Caller holds q->lock; the queue is not empty. */
static work_t *dequeue_locked(struct work_queue *q)
{
	assert(irq_spinlock_locked_by_me(&q->lock));
	link_t *l = list_first(&q->items);
	assert(l);
	list_remove(l);
	load_sample(q);
	q->item_cnt--;
	work_t *work = list_get_instance(l, work_t, queue_link);
#ifdef CONFIG_DEBUG
	assert_verbose(work->cookie == WORKQ_ITEM_MAGIC,
	    "work queue item list corrupted");
	work->cookie = 0;
#endif
	return work;
}

/** The body of every worker thread. */
static void worker_main(void *arg)
{
	worker_t *w = arg;
	struct work_queue *q = w->q;
	thread_t *self = THREAD;

	irq_spinlock_lock(&q->lock, true);
	/* The creator's reservation becomes this (joinable) worker. */
	list_append(&w->link, &q->worker_list);
	q->totals.workers_created++;
	if (q->stopping)
		waitq_wake_one(&q->stop_wq);

	for (;;) {
		if (q->item_cnt > 0 &&
		    (q->stopping || active_cnt(q) <= cfg.max_concurrent)) {
			work_t *work = dequeue_locked(q);
			/* Copied: the function may free or re-enqueue the item. */
			work_func_t func = work->func;
			irq_spinlock_unlock(&q->lock, true);

			w->in_func = true;
			lockdep_work_enter();
			func(work);
			lockdep_work_exit();

			irq_spinlock_lock(&q->lock, true);
			w->in_func = false;
			if (w->blocked) {
				/* Slept and was picked again without a switch. */
				w->blocked = false;
				__atomic_sub_fetch(&q->blocked_cnt, 1, __ATOMIC_SEQ_CST);
			}
			q->totals.completed++;
			continue;
		}
		if (q->stopping)
			break;  /* no items left */

		q->idle_cnt++;
		irq_spinlock_unlock(&q->lock, true);
		errno_t rc = waitq_sleep_timeout(&q->idle_wq, cfg.idle_timeout_us,
		    SYNCH_FLAGS_NONE);
		irq_spinlock_lock(&q->lock, true);
		q->idle_cnt--;
		if (rc == EOK) {
			/* Consumed a wake-up of signal_worker_locked()/workq_stop(). */
			assert(q->activate_pending > 0);
			q->activate_pending--;
			continue;
		}
		if (!q->stopping && q->item_cnt == 0 && q->idle_cnt >= cfg.min_idle) {
			/* Surplus idle worker: retire. Nobody will join us. */
			list_remove(&w->link);
			q->worker_cnt--;
			q->totals.workers_retired++;
			self->subsys[THREAD_SUBSYS_WORKQ] = 0;
			irq_spinlock_unlock(&q->lock, true);
			thread_detach(self);
			free(w);
			return;
		}
	}

	/* Stopping and drained: workq_stop() joins us and frees w. */
	q->worker_cnt--;
	self->subsys[THREAD_SUBSYS_WORKQ] = 0;
	waitq_wake_one(&q->stop_wq);
	irq_spinlock_unlock(&q->lock, true);
}

/**
 * Creates and starts a worker for a reservation the caller holds (a unit of
 * q->worker_cnt). On failure gives the reservation back.
 * Context: thread (allocates). Caller does not hold q->lock.
 */
static bool create_worker(struct work_queue *q)
{
	worker_t *w = malloc(sizeof(*w));
	thread_t *t = NULL;
	if (w) {
		w->q = q;
		w->thread = NULL;
		link_initialize(&w->link);
		w->in_func = false;
		w->blocked = false;
		t = thread_create(worker_main, w, q->name, THREAD_FLAG_NONE);
	}
	if (!t) {
		free(w);
		irq_spinlock_lock(&q->lock, true);
		q->worker_cnt--;
		q->totals.worker_create_failures++;
		if (q->stopping)
			waitq_wake_one(&q->stop_wq);
		irq_spinlock_unlock(&q->lock, true);
		return false;
	}
	w->thread = t;
	/* Published to the thread and the hooks by thread_start()'s locks. */
	t->subsys[THREAD_SUBSYS_WORKQ] = (uintptr_t) w;
	/* From here on, q may be touched only by the worker. */
	thread_start(t);
	return true;
}

/** Body of the "workq-adder" thread: creates workers requested without blocking. */
static void adder_main(void *arg)
{
	for (;;) {
		waitq_sleep(&adder_wq);
		for (;;) {
			irq_spinlock_lock(&adder_lock, true);
			link_t *l = list_first(&adder_list);
			irq_spinlock_unlock(&adder_lock, true);
			if (!l)
				break;
			/*
			 * Only we unlink queues, and a linked queue holds
			 * nb_add_pending > 0 reservations, so it stays alive.
			 */
			struct work_queue *q = list_get_instance(l, struct work_queue,
			    adder_link);
			irq_spinlock_lock(&q->lock, true);
			size_t n = q->nb_add_pending;
			q->nb_add_pending = 0;
			irq_spinlock_lock(&adder_lock, false);
			list_remove(&q->adder_link);
			irq_spinlock_unlock(&adder_lock, false);
			if (q->stopping && q->item_cnt == 0 && n > 0) {
				/* Nothing left to run: give the reservations back. */
				q->worker_cnt -= n;
				n = 0;
				waitq_wake_one(&q->stop_wq);
			}
			irq_spinlock_unlock(&q->lock, true);
			/* Each creation uses up one of our reservations. */
			while (n-- > 0)
				(void) create_worker(q);
		}
	}
}

/* Scheduler hooks: interrupts disabled, may not sleep, must be cheap. */

static void workq_thread_sleeps(thread_t *t)
{
	worker_t *w = (worker_t *) t->subsys[THREAD_SUBSYS_WORKQ];
	if (!w || !w->in_func)
		return;
	struct work_queue *q = w->q;
	if (!w->blocked) {
		w->blocked = true;
		__atomic_add_fetch(&q->blocked_cnt, 1, __ATOMIC_SEQ_CST);
	}
	/* One worker fewer is active: let another take the queued items. */
	irq_spinlock_lock(&q->lock, false);
	if (q->item_cnt > 0)
		(void) signal_worker_locked(q, false);
	irq_spinlock_unlock(&q->lock, false);
}

static void workq_before_thread_runs(thread_t *t)
{
	worker_t *w = (worker_t *) t->subsys[THREAD_SUBSYS_WORKQ];
	if (!w || !w->blocked)
		return;
	w->blocked = false;
	__atomic_sub_fetch(&w->q->blocked_cnt, 1, __ATOMIC_SEQ_CST);
}

static const sched_hooks_t workq_hooks = {
	.thread_sleeps = workq_thread_sleeps,
	.before_thread_runs = workq_before_thread_runs,
};

/* Queue life cycle. */

/** Initializes @a q without workers. */
static void queue_init(struct work_queue *q, const char *name, bool system)
{
	memset(q, 0, sizeof(*q));
	q->cookie = WORKQ_MAGIC;
	str_cpy(q->name, sizeof(q->name), name ? name : "workq");
	q->system = system;
	irq_spinlock_initialize(&q->lock, "workq");
	list_initialize(&q->items);
	list_initialize(&q->worker_list);
	waitq_initialize(&q->idle_wq);
	waitq_initialize(&q->stop_wq);
	link_initialize(&q->adder_link);
	q->load_time = uptime_us();
}

/** Starts min_idle workers; returns how many could be created. */
static size_t queue_start_workers(struct work_queue *q)
{
	size_t started = 0;
	for (size_t i = 0; i < cfg.min_idle; i++) {
		irq_spinlock_lock(&q->lock, true);
		q->worker_cnt++;
		if (q->worker_cnt > q->totals.peak_workers)
			q->totals.peak_workers = q->worker_cnt;
		irq_spinlock_unlock(&q->lock, true);
		if (create_worker(q))
			started++;
	}
	return started;
}

static bool enqueue_impl(struct work_queue *q, work_t *work, work_func_t func,
    bool can_block)
{
	assert(q && q->cookie == WORKQ_MAGIC);
	assert(work && func);

	irq_spinlock_lock(&q->lock, true);
	if (q->stopping) {
		q->totals.refused++;
		irq_spinlock_unlock(&q->lock, true);
		return false;
	}
	if (fault_inject(FI_WORKQ_DROP)) {
		/* Accepted, never run: the workqueue test must see it lost. */
		irq_spinlock_unlock(&q->lock, true);
		return true;
	}
#ifdef CONFIG_DEBUG
	assert_verbose(work->cookie != WORKQ_ITEM_MAGIC,
	    "work item enqueued while it is queued");
	work->cookie = WORKQ_ITEM_MAGIC;
#endif
	work->func = func;
	link_initialize(&work->queue_link);
	list_append(&work->queue_link, &q->items);
	load_sample(q);
	q->item_cnt++;
	q->totals.enqueued++;
	bool add = signal_worker_locked(q, can_block);
	irq_spinlock_unlock(&q->lock, true);

	/* Our reservation keeps q alive until the new worker has started. */
	if (add)
		(void) create_worker(q);
	return true;
}

struct work_queue *workq_create(const char *name)
{
	struct work_queue *q = malloc(sizeof(*q));
	if (!q)
		return NULL;
	queue_init(q, name, false);
	(void) queue_start_workers(q);
	return q;
}

void workq_stop(struct work_queue *q)
{
	assert(q && q->cookie == WORKQ_MAGIC);
	thread_t *self = THREAD;
	worker_t *me = (worker_t *) self->subsys[THREAD_SUBSYS_WORKQ];
	assert_verbose(!me || me->q != q, "workq_stop() called by its own worker");
	(void) me;
	/* A held lock an item takes: the wait below would never end. */
	lockdep_workq_stop((uintptr_t) __builtin_return_address(0));

	irq_spinlock_lock(&q->lock, true);
	q->stopping = true;
	/* Wake every idle worker nobody is waking yet; they will see stopping. */
	while (q->idle_cnt > q->activate_pending) {
		q->activate_pending++;
		waitq_wake_one(&q->idle_wq);
	}

	for (;;) {
		link_t *l = list_first(&q->worker_list);
		if (l) {
			worker_t *w = list_get_instance(l, worker_t, link);
			list_remove(l);
			irq_spinlock_unlock(&q->lock, true);
			(void) thread_join(w->thread);
			free(w);
			irq_spinlock_lock(&q->lock, true);
			continue;
		}
		if (q->worker_cnt == 0)
			break;
		/* Reserved workers are still being created (or cancelled). */
		irq_spinlock_unlock(&q->lock, true);
		waitq_sleep(&q->stop_wq);
		irq_spinlock_lock(&q->lock, true);
	}
	assert(q->item_cnt == 0 && q->idle_cnt == 0 && q->nb_add_pending == 0);
	/* Pass the news on to a concurrent workq_stop(), if any. */
	waitq_wake_one(&q->stop_wq);
	irq_spinlock_unlock(&q->lock, true);
}

void workq_destroy(struct work_queue *q)
{
	assert(q && q->cookie == WORKQ_MAGIC);
	assert_verbose(!q->system, "the system work queue cannot be destroyed");
	workq_stop(q);
	q->cookie = 0;
	free(q);
}

bool workq_enqueue(struct work_queue *q, work_t *work, work_func_t func)
{
	return enqueue_impl(q, work, func, true);
}

bool workq_enqueue_noblock(struct work_queue *q, work_t *work, work_func_t func)
{
	return enqueue_impl(q, work, func, false);
}

bool workq_global_enqueue(work_t *work, work_func_t func)
{
	if (!__atomic_load_n(&sys_ready, __ATOMIC_ACQUIRE))
		return false;
	return enqueue_impl(&sys_wq, work, func, true);
}

bool workq_global_enqueue_noblock(work_t *work, work_func_t func)
{
	if (!__atomic_load_n(&sys_ready, __ATOMIC_ACQUIRE))
		return false;
	return enqueue_impl(&sys_wq, work, func, false);
}

void workq_get_config(workq_config_t *c)
{
	*c = cfg;
}

void workq_get_stats(struct work_queue *q, workq_stats_t *s)
{
	assert(q && q->cookie == WORKQ_MAGIC);
	irq_spinlock_lock(&q->lock, true);
	s->workers = q->worker_cnt;
	s->idle = q->idle_cnt;
	s->active = active_cnt(q);
	/* Consistent with active: workers == active + blocked + idle. */
	s->blocked = q->worker_cnt - q->idle_cnt - s->active;
	s->items = q->item_cnt;
	load_sample(q);
	s->load_fast = q->load_fast > 0 ? (size_t) q->load_fast : 0;
	s->load_slow = q->load_slow > 0 ? (size_t) q->load_slow : 0;
	s->load_trend = load_trend(q);
	s->stopping = q->stopping;
	s->totals = q->totals;
	irq_spinlock_unlock(&q->lock, true);
	s->name = q->name;
	s->system = q->system;
}

void workq_global_get_stats(workq_stats_t *s)
{
	if (!__atomic_load_n(&sys_ready, __ATOMIC_ACQUIRE)) {
		memset(s, 0, sizeof(*s));
		return;
	}
	workq_get_stats(&sys_wq, s);
}

void workq_global_init(void)
{
	size_t ncpu = atomic_get(&cpu_active_count);
	if (ncpu == 0)
		ncpu = 1;
	cfg.max_workers = MAX((size_t) WORKQ_MAX_WORKERS_MIN,
	    WORKQ_WORKERS_PER_CPU * ncpu);
	cfg.max_concurrent = MAX((size_t) WORKQ_MAX_CONCURRENT_MIN, ncpu);

	waitq_initialize(&adder_wq);
	sched_hooks_register(&workq_hooks);

	thread_t *adder = thread_create(adder_main, NULL, "workq-adder",
	    THREAD_FLAG_NONE);
	if (!adder)
		panic("Cannot create the workq-adder thread");
	thread_detach(adder);  /* runs forever; nobody joins it */
	thread_start(adder);

	queue_init(&sys_wq, SYSTEM_QUEUE_NAME, true);
	if (queue_start_workers(&sys_wq) == 0)
		panic("Cannot create the system work queue's workers");
	__atomic_store_n(&sys_ready, true, __ATOMIC_RELEASE);
}
