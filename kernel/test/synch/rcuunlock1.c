/** @file rcuunlock1.c
 * A-RCU: a reader switched out between the two steps of rcu_read_unlock()
 * (the subtraction and the check of the "preempted" bit) must not hold up
 * grace periods while it stays switched out.
 *
 * The window is forced deterministically: a reader thread enters a section and
 * spins until its counter carries the "was preempted" bit (a grace period
 * started by the main thread's rcu_call() marks it: by the detector's
 * cross-call or by a context switch). It then performs only the first step of
 * the unlock (arcu_read_unlock_sub(): the counter is now "zero, preempted") and
 * blocks on a semaphore, which is what a preemption at that instruction
 * boundary looks like to RCU. While it is blocked, the main thread posts a
 * second callback, whose grace period started after the reader's section ended
 * and so must complete. The main thread waits for that callback for at most
 * GP_LIMIT_US (a liveness bound 100 times longer than a grace period on a
 * loaded emulator; before the fix the callback never runs while the reader is
 * blocked), then releases the reader, which performs the second step
 * (arcu_read_unlock_check()).
 *
 * Second part: an interrupt in the same window. A reader section in a timer
 * interrupt handler (a timeout handler, run with the CPU's `timeouts` lock held,
 * as rcutorture's interrupt readers are) that nests inside the window sees
 * the count "zero, preempted" at its own unlock and takes the slow path for
 * the interrupted thread: it takes `rcu.preempt` under `timeouts`
 * (docs/LOCKING.md lists that order; the lock validator learns it here on
 * every run instead of by chance). The thread stays on its CPU (preemption
 * disabled) with interrupts on until the handler ran; the handler must have
 * taken the thread off the list (the count reads 0 afterwards), and the
 * thread's own check then does nothing.
 *
 * Podzimek RCU has no such window (its unlock runs with preemption disabled):
 * the test says so and passes.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <atomic.h>
#include <errno.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/semaphore.h>
#include <time/delay.h>
#include <time/timeout.h>

/** Liveness bound for the reader to be marked preempted and to start. */
#define MARK_LIMIT_US 30000000ULL
/** Liveness bound for the grace period while the reader is switched out. */
#define GP_LIMIT_US 5000000ULL

#if defined(CONFIG_RCU_A_RCU)

typedef struct {
	rcu_item_t item;
	atomic_t done;
} uw_cb_t;

typedef struct {
	atomic_t entered;      /**< the reader is inside its section */
	atomic_t in_window;    /**< the reader did the subtraction only */
	atomic_t not_marked;   /**< the reader was never marked preempted */
	size_t nesting_after;  /**< the reader's counter after it was released */
	semaphore_t release;
} uw_t;

static void uw_cb(rcu_item_t *item)
{
	uw_cb_t *c = container_of(item, uw_cb_t, item);
	atomic_set(&c->done, 1);
}

/**
 * Inside a reader section: spins (without leaving it) until the running
 * thread's count carries the "was preempted" bit, which a grace period the
 * main thread started sets. @return false if it did not within
 * MARK_LIMIT_US.
 */
static bool uw_spin_until_marked(void)
{
	uint64_t start = uptime_us();
	while (!(arcu_nesting() & RCU_WAS_PREEMPTED)) {
		if (uptime_us() - start > MARK_LIMIT_US)
			return false;
		udelay(100);
	}
	return true;
}

static void uw_reader(void *arg)
{
	uw_t *w = arg;
	rcu_read_lock();
	atomic_set(&w->entered, 1);
	if (!uw_spin_until_marked())
		atomic_set(&w->not_marked, 1);
	/* The first step of rcu_read_unlock() only ... */
	arcu_read_unlock_sub();
	atomic_set(&w->in_window, 1);
	/* ... then switched out (the counter holds no section: may block). */
	semaphore_down(&w->release);
	w->nesting_after = arcu_nesting();
	/* The second step. */
	arcu_read_unlock_check();
}

typedef struct {
	timeout_t to;
	atomic_t ran;          /**< the handler's reader section ran */
	atomic_t not_marked;
	atomic_t no_irq;       /**< the handler did not run within the bound */
	size_t nesting_in;     /**< the count the handler's lock saw */
	size_t nesting_after;  /**< the count after the handler's unlock */
	size_t nesting_end;    /**< the thread's count after its own check */
} ui_t;

static void ui_handler(void *arg)
{
	ui_t *u = arg;
	rcu_read_lock();
	u->nesting_in = arcu_nesting();
	rcu_read_unlock();
	u->nesting_after = arcu_nesting();
	atomic_set(&u->ran, 1);
}

static void ui_reader(void *arg)
{
	ui_t *u = arg;
	rcu_read_lock();
	if (!uw_spin_until_marked())
		atomic_set(&u->not_marked, 1);
	/* Stay on this CPU, whose timer interrupt will run the handler. */
	preemption_disable();
	arcu_read_unlock_sub();
	timeout_register(&u->to, 0, ui_handler, u);
	uint64_t start = uptime_us();
	while (atomic_get(&u->ran) == 0) {
		if (uptime_us() - start > MARK_LIMIT_US) {
			atomic_set(&u->no_irq, 1);
			break;
		}
		cpu_relax();
	}
	/* Returns once the handler (if it ran) has returned. */
	(void) timeout_unregister(&u->to);
	arcu_read_unlock_check();
	u->nesting_end = arcu_nesting();
	preemption_enable();
}

/** The second part (see the file comment); NULL or the reason it failed. */
static const char *uw_irq_part(void)
{
	static ui_t u;
	timeout_initialize(&u.to);
	atomic_set(&u.ran, 0);
	atomic_set(&u.not_marked, 0);
	atomic_set(&u.no_irq, 0);
	u.nesting_in = u.nesting_after = u.nesting_end = ~(size_t) 0;
	static uw_cb_t cb;
	atomic_set(&cb.done, 0);
	thread_t *r = testlib_spawn(ui_reader, &u, "rcuunlock1-i", NULL);
	if (!r)
		return "cannot create the interrupted reader thread";
	/* A grace period that must wait for the reader marks it preempted. */
	rcu_call(&cb.item, uw_cb);
	(void) thread_join(r);
	rcu_barrier();
	printf("rcuunlock1: interrupt reader in the unlock window: count %#zx "
	    "inside, %#zx after its unlock, %#zx after the thread's check\n",
	    u.nesting_in, u.nesting_after, u.nesting_end);
	if (atomic_get(&u.not_marked))
		return "the interrupted reader was never marked preempted";
	if (atomic_get(&u.no_irq))
		return "the timeout handler did not run within the bound";
	if (u.nesting_in != (RCU_CNT_INC | RCU_WAS_PREEMPTED))
		return "the handler's reader did not nest in the window (its "
		    "count was not one level plus the preempted bit)";
	if (u.nesting_after != 0)
		return "the handler's unlock in the window did not take the "
		    "interrupted thread off the preempted-readers list";
	if (u.nesting_end != 0)
		return "the thread's count was not 0 after its check";
	if (!atomic_get(&cb.done))
		return "the callback did not run before rcu_barrier() returned";
	return NULL;
}

/** Waits (sleeping) until @a flag is set or @a limit_us passed. */
static bool uw_wait(atomic_t *flag, uint64_t limit_us)
{
	uint64_t start = uptime_us();
	while (atomic_get(flag) == 0) {
		if (uptime_us() - start > limit_us)
			return false;
		thread_usleep(1000);
	}
	return true;
}

const char *test_rcuunlock1(void)
{
	static uw_t w;
	static uw_cb_t mark_cb, gp_cb;
	atomic_set(&w.entered, 0);
	atomic_set(&w.in_window, 0);
	atomic_set(&w.not_marked, 0);
	w.nesting_after = 0;
	semaphore_initialize(&w.release, 0);
	atomic_set(&mark_cb.done, 0);
	atomic_set(&gp_cb.done, 0);

	thread_t *r = testlib_spawn(uw_reader, &w, "rcuunlock1-r", NULL);
	if (!r)
		return "cannot create the reader thread";

	const char *err = NULL;
	if (!uw_wait(&w.entered, MARK_LIMIT_US))
		err = "the reader thread never started";
	/* A grace period that must wait for the reader marks it preempted. */
	rcu_call(&mark_cb.item, uw_cb);
	if (!err && !uw_wait(&w.in_window, MARK_LIMIT_US))
		err = "the reader never reached the unlock window";
	if (!err && atomic_get(&w.not_marked))
		err = "the reader was never marked preempted (no grace period "
		    "detection reached it)";
	bool gp_done = false;
	uint64_t waited = 0;
	if (!err) {
		/* The reader sits between the two steps, switched out. */
		uint64_t start = uptime_us();
		rcu_call(&gp_cb.item, uw_cb);
		gp_done = uw_wait(&gp_cb.done, GP_LIMIT_US);
		waited = uptime_us() - start;
		printf("rcuunlock1: grace period with the reader switched out in "
		    "the unlock window: %s after %lu ms\n",
		    gp_done ? "completed" : "NOT completed", waited / 1000);
		if (!gp_done)
			err = "a grace period did not complete while a reader was "
			    "switched out between the subtraction and the check of "
			    "rcu_read_unlock (it stayed on the preempted-readers list)";
	}
	semaphore_up(&w.release);
	(void) thread_join(r);
	/* Both callbacks have run after this (they live in static storage). */
	rcu_barrier();
	if (!err && w.nesting_after != 0)
		err = "the reader's counter was not cleared while it was switched "
		    "out in the unlock window";
	if (!err && (!atomic_get(&mark_cb.done) || !atomic_get(&gp_cb.done)))
		err = "a callback did not run before rcu_barrier() returned";
	if (!err)
		err = uw_irq_part();
	return err;
}

#else

const char *test_rcuunlock1(void)
{
	printf("rcuunlock1: %s unlocks with preemption disabled: no window "
	    "between the subtraction and the check (nothing to test)\n",
	    rcu_flavour_name);
	return NULL;
}

#endif
