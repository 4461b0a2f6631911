/** @file lockdep1.c
 * (unsafe) Lock-dependency validator tests. Each runs only by name: on a
 * kernel with the validator (debug builds) it ends in a "LOCKDEP REPORT" and
 * a panic (tests/test_lockdep.py matches both); if it returns, nothing caught
 * the violation and the test fails (release or LOCKDEP=0 builds say so).
 *
 * - lockdep1: one thread takes A then B, later B then A (no deadlock needed:
 *   the second order closes a cycle in the learned graph).
 * - lockdep2: a plain spinlock taken with interrupts enabled, then taken by a
 *   timeout handler (timer interrupt context).
 * - lockdep3: mutex_lock while holding a spinlock (sleeping under a spinlock).
 * - lockdep4: B taken with interrupts enabled; B taken under the IRQ lock A
 *   (interrupts off); then A taken in a timer interrupt: the chain from an
 *   interrupt-taken class to a class taken with interrupts enabled.
 * - lockdep5: one thread takes mutex A then mutex B, later B then A (sleeping
 *   locks are classes too: the cycle is reported with both chains).
 * - lockdep6: an RCU callback takes a mutex; later a thread calls
 *   rcu_synchronize() holding that mutex (the grace period would wait for a
 *   callback that waits for the caller).
 * - lockdep7: a rwlock write-locked then a mutex taken under it; later the
 *   mutex held while read-locking the rwlock (read acquisitions are
 *   validated as exclusive: with writer preference they deadlock too).
 * - lockdep8: a work item of a queue takes a mutex; later a thread stops
 *   the queue holding that mutex (the stop waits for the queue's items).
 * - lockdep9: lockdep6 the other way round: rcu_synchronize() holding a
 *   mutex first, then an RCU callback takes that mutex (reported in the
 *   callback, by the reclaimer).
 */
#include <test.h>
#include <print.h>
#include <synch/spinlock.h>
#include <synch/mutex.h>
#include <synch/lockdep.h>
#include <synch/rwlock.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <proc/thread.h>
#include <time/timeout.h>
#include <arch/asm.h>

/* Test-local locks; protect nothing (the subjects of the tests). */
static spinlock_t ld1_a = SPINLOCK_INITIALIZER("lockdep1.a");
static spinlock_t ld1_b = SPINLOCK_INITIALIZER("lockdep1.b");
static spinlock_t ld2_lock = SPINLOCK_INITIALIZER("lockdep2.irq-unsafe");
static spinlock_t ld3_lock = SPINLOCK_INITIALIZER("lockdep3.spin");

static const char *not_caught(void)
{
	if (!lockdep_enabled())
		return "this kernel has no lock validator (release or LOCKDEP=0)";
	return "the violation was not reported";
}

const char *test_lockdep1(void)
{
	printf("lockdep1: lockdep1.a then lockdep1.b\n");
	spinlock_lock(&ld1_a);
	spinlock_lock(&ld1_b);
	spinlock_unlock(&ld1_b);
	spinlock_unlock(&ld1_a);
	printf("lockdep1: lockdep1.b then lockdep1.a (a debug build reports "
	    "the cycle and panics now)\n");
	spinlock_lock(&ld1_b);
	spinlock_lock(&ld1_a);
	spinlock_unlock(&ld1_a);
	spinlock_unlock(&ld1_b);
	return not_caught();
}

/** Set by the timeout handler; atomics. */
static bool ld2_ran;

static void ld2_handler(void *arg)
{
	(void) arg;
	spinlock_lock(&ld2_lock);
	spinlock_unlock(&ld2_lock);
	__atomic_store_n(&ld2_ran, true, __ATOMIC_RELEASE);
}

const char *test_lockdep2(void)
{
	if (interrupts_disabled())
		return "called with interrupts disabled";
	printf("lockdep2: lockdep2.irq-unsafe with interrupts enabled\n");
	spinlock_lock(&ld2_lock);
	spinlock_unlock(&ld2_lock);
	printf("lockdep2: the same class in a timer interrupt (a debug build "
	    "reports it and panics now)\n");
	timeout_t to;
	timeout_initialize(&to);
	__atomic_store_n(&ld2_ran, false, __ATOMIC_RELAXED);
	timeout_register(&to, 1000, ld2_handler, NULL);
	for (int i = 0; i < 1000 && !__atomic_load_n(&ld2_ran, __ATOMIC_ACQUIRE);
	    i++)
		thread_usleep(1000);
	(void) timeout_unregister(&to);
	if (!__atomic_load_n(&ld2_ran, __ATOMIC_ACQUIRE))
		return "the timeout handler never ran";
	return not_caught();
}

static mutex_t ld3_mtx;

const char *test_lockdep3(void)
{
	mutex_initialize_named(&ld3_mtx, MUTEX_PASSIVE, "lockdep3.mtx");
	printf("lockdep3: mutex_lock while holding lockdep3.spin (a debug "
	    "build reports it and panics now)\n");
	spinlock_lock(&ld3_lock);
	mutex_lock(&ld3_mtx);
	mutex_unlock(&ld3_mtx);
	spinlock_unlock(&ld3_lock);
	return not_caught();
}

/* lockdep4's locks; protect nothing. */
static irq_spinlock_t ld4_a = IRQ_SPINLOCK_INITIALIZER("lockdep4.irq-safe");
static spinlock_t ld4_b = SPINLOCK_INITIALIZER("lockdep4.irq-unsafe");
/** Set by the timeout handler; atomics. */
static bool ld4_ran;

static void ld4_handler(void *arg)
{
	(void) arg;
	irq_spinlock_lock(&ld4_a, false);
	irq_spinlock_unlock(&ld4_a, false);
	__atomic_store_n(&ld4_ran, true, __ATOMIC_RELEASE);
}

const char *test_lockdep4(void)
{
	if (interrupts_disabled())
		return "called with interrupts disabled";
	printf("lockdep4: lockdep4.irq-unsafe with interrupts enabled, then "
	    "under lockdep4.irq-safe\n");
	spinlock_lock(&ld4_b);
	spinlock_unlock(&ld4_b);
	irq_spinlock_lock(&ld4_a, true);
	spinlock_lock(&ld4_b);
	spinlock_unlock(&ld4_b);
	irq_spinlock_unlock(&ld4_a, true);
	printf("lockdep4: lockdep4.irq-safe in a timer interrupt (a debug "
	    "build reports the chain and panics now)\n");
	timeout_t to;
	timeout_initialize(&to);
	__atomic_store_n(&ld4_ran, false, __ATOMIC_RELAXED);
	timeout_register(&to, 1000, ld4_handler, NULL);
	for (int i = 0; i < 1000 && !__atomic_load_n(&ld4_ran, __ATOMIC_ACQUIRE);
	    i++)
		thread_usleep(1000);
	(void) timeout_unregister(&to);
	if (!__atomic_load_n(&ld4_ran, __ATOMIC_ACQUIRE))
		return "the timeout handler never ran";
	return not_caught();
}

/* lockdep5's mutexes; protect nothing. */
static mutex_t ld5_a;
static mutex_t ld5_b;

const char *test_lockdep5(void)
{
	mutex_initialize_named(&ld5_a, MUTEX_PASSIVE, "lockdep5.a");
	mutex_initialize_named(&ld5_b, MUTEX_PASSIVE, "lockdep5.b");
	printf("lockdep5: mutex lockdep5.a then mutex lockdep5.b\n");
	mutex_lock(&ld5_a);
	mutex_lock(&ld5_b);
	mutex_unlock(&ld5_b);
	mutex_unlock(&ld5_a);
	printf("lockdep5: lockdep5.b then lockdep5.a (a debug build reports "
	    "the cycle and panics now)\n");
	mutex_lock(&ld5_b);
	mutex_lock(&ld5_a);
	mutex_unlock(&ld5_a);
	mutex_unlock(&ld5_b);
	return not_caught();
}

/* lockdep6's mutex (protects nothing) and callback item. */
static mutex_t ld6_mtx;
static rcu_item_t ld6_item;
/** Set by the callback; atomics. */
static bool ld6_ran;

static void ld6_cb(rcu_item_t *item)
{
	(void) item;
	mutex_lock(&ld6_mtx);
	mutex_unlock(&ld6_mtx);
	__atomic_store_n(&ld6_ran, true, __ATOMIC_RELEASE);
}

const char *test_lockdep6(void)
{
	mutex_initialize_named(&ld6_mtx, MUTEX_PASSIVE, "lockdep6.mtx");
	__atomic_store_n(&ld6_ran, false, __ATOMIC_RELAXED);
	printf("lockdep6: an RCU callback takes lockdep6.mtx\n");
	rcu_call(&ld6_item, ld6_cb);
	rcu_barrier();
	if (!__atomic_load_n(&ld6_ran, __ATOMIC_ACQUIRE))
		return "the RCU callback did not run before rcu_barrier returned";
	printf("lockdep6: rcu_synchronize holding lockdep6.mtx (a debug build "
	    "reports it and panics now)\n");
	mutex_lock(&ld6_mtx);
	rcu_synchronize();
	mutex_unlock(&ld6_mtx);
	return not_caught();
}

/* lockdep7's locks; protect nothing. */
static rwlock_t ld7_rw;
static mutex_t ld7_mtx;

const char *test_lockdep7(void)
{
	rwlock_initialize_named(&ld7_rw, "lockdep7.rw");
	mutex_initialize_named(&ld7_mtx, MUTEX_PASSIVE, "lockdep7.mtx");
	printf("lockdep7: rwlock lockdep7.rw (write) then mutex lockdep7.mtx\n");
	rwlock_write_lock(&ld7_rw);
	mutex_lock(&ld7_mtx);
	mutex_unlock(&ld7_mtx);
	rwlock_write_unlock(&ld7_rw);
	printf("lockdep7: lockdep7.mtx then lockdep7.rw (read) (a debug build "
	    "reports the cycle and panics now)\n");
	mutex_lock(&ld7_mtx);
	rwlock_read_lock(&ld7_rw);
	rwlock_read_unlock(&ld7_rw);
	mutex_unlock(&ld7_mtx);
	return not_caught();
}

/* lockdep8's mutex (protects nothing) and work item. */
static mutex_t ld8_mtx;
static work_t ld8_work;
/** Set by the work item; atomics. */
static bool ld8_ran;

static void ld8_func(work_t *work)
{
	(void) work;
	mutex_lock(&ld8_mtx);
	mutex_unlock(&ld8_mtx);
	__atomic_store_n(&ld8_ran, true, __ATOMIC_RELEASE);
}

const char *test_lockdep8(void)
{
	mutex_initialize_named(&ld8_mtx, MUTEX_PASSIVE, "lockdep8.mtx");
	__atomic_store_n(&ld8_ran, false, __ATOMIC_RELAXED);
	struct work_queue *q = workq_create("lockdep8");
	if (!q)
		return "cannot create a work queue";
	printf("lockdep8: a work item takes lockdep8.mtx\n");
	if (!workq_enqueue(q, &ld8_work, ld8_func)) {
		workq_stop(q);
		workq_destroy(q);
		return "cannot enqueue the work item";
	}
	for (int i = 0; i < 1000 && !__atomic_load_n(&ld8_ran,
	    __ATOMIC_ACQUIRE); i++)
		thread_usleep(1000);
	if (!__atomic_load_n(&ld8_ran, __ATOMIC_ACQUIRE)) {
		workq_stop(q);
		workq_destroy(q);
		return "the work item never ran";
	}
	printf("lockdep8: workq_stop holding lockdep8.mtx (a debug build "
	    "reports it and panics now)\n");
	mutex_lock(&ld8_mtx);
	workq_stop(q);
	mutex_unlock(&ld8_mtx);
	workq_destroy(q);
	return not_caught();
}

/* lockdep9's mutex (protects nothing) and callback item. */
static mutex_t ld9_mtx;
static rcu_item_t ld9_item;

static void ld9_cb(rcu_item_t *item)
{
	(void) item;
	mutex_lock(&ld9_mtx);
	mutex_unlock(&ld9_mtx);
}

const char *test_lockdep9(void)
{
	mutex_initialize_named(&ld9_mtx, MUTEX_PASSIVE, "lockdep9.mtx");
	printf("lockdep9: rcu_synchronize holding lockdep9.mtx\n");
	mutex_lock(&ld9_mtx);
	rcu_synchronize();
	mutex_unlock(&ld9_mtx);
	printf("lockdep9: an RCU callback takes lockdep9.mtx (a debug build "
	    "reports it and panics now)\n");
	rcu_call(&ld9_item, ld9_cb);
	rcu_barrier();
	return not_caught();
}
