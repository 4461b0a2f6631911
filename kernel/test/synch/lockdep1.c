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
 */
#include <test.h>
#include <print.h>
#include <synch/spinlock.h>
#include <synch/mutex.h>
#include <synch/lockdep.h>
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
	mutex_initialize(&ld3_mtx, 0);
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
