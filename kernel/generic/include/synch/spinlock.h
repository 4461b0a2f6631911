/** @file spinlock.h
 * Spinlocks.
 *
 * spinlock_lock() disables preemption for as long as the lock is held;
 * irq_spinlock_lock() can also disable interrupts, which is required for locks that
 * interrupt handlers take. Debug builds (CONFIG_DEBUG) have a spin watchdog
 * (synch/spinlock.c): a cycle of CPUs each spinning on a lock the next one holds
 * is reported as "Deadlock: ..." with every lock and holder of the cycle; a long
 * wait without a cycle (a slow or descheduled holder) as one "spinlock: long
 * wait" line.
 *
 * Memory ordering: acquiring is an acquire operation, releasing a release operation.
 */
#ifndef KERN_SPINLOCK_H_
#define KERN_SPINLOCK_H_

#include <typedefs.h>

typedef struct spinlock {
	/** 0 free, 1 held. Accessed with __atomic builtins only. */
	int locked;
	/** Logical id of the owning CPU + 1 (0: none); for debugging. */
	int owner;
	/** Name for reports; also the lock's class in lock statistics. */
	const char *name;
#ifdef CONFIG_LOCK_STAT
	/** Cycle count at acquisition; protected by the lock (written by the holder). */
	uint64_t acquired_at;
	/** Lock statistics class index + 1 (0: not looked up yet); written by
	 *  the holder, see synch/lockstat.h. */
	unsigned lockstat_class;
#endif
#ifdef CONFIG_LOCKDEP
	/** Lock-dependency class index + 1 (0: not looked up yet); a cache
	 *  written with relaxed atomics, see synch/lockdep.h. */
	unsigned lockdep_class;
#endif
} spinlock_t;

#define SPINLOCK_INITIALIZER(lname) { .locked = 0, .owner = 0, .name = (lname) }

/** Initializes a spinlock; @a name is kept for debug reports (static string). */
void spinlock_initialize(spinlock_t *lock, const char *name);
/** Acquires @a lock, spinning with `pause`; disables preemption. Any context. */
void spinlock_lock(spinlock_t *lock);
/** Tries once; returns true and holds the lock (preemption disabled) on success. */
bool spinlock_trylock(spinlock_t *lock);
/** Releases @a lock and re-enables preemption. */
void spinlock_unlock(spinlock_t *lock);
/** True if the lock is held (by anyone). */
bool spinlock_locked(spinlock_t *lock);
/**
 * True if the calling CPU holds @a lock (the holder runs with preemption
 * disabled, so its CPU is stable). For assertions at functions that must be
 * called with the lock held, in the manner of Linux's lockdep_assert_held():
 * assert(irq_spinlock_locked_by_me(&q->lock)). Any context.
 */
bool spinlock_locked_by_me(spinlock_t *lock);
/**
 * The spin watchdog's counts since boot (debug builds; 0 and 0 otherwise):
 * @a deadlocks, wait-for cycles reported (once by each CPU of the cycle that
 * saw it), and @a long_waits, waits of more than 5 s that were no cycle.
 * Relaxed reads; any context. For the watchdog's tests (synch/spindead1.c).
 */
void spinlock_watchdog_counts(unsigned *deadlocks, unsigned *long_waits);

/** A spinlock that also saves and restores the interrupt state. */
typedef struct {
	spinlock_t lock;
	/** Interrupt state saved by the holder; protected by @c lock. */
	ipl_t ipl;
	/** Whether the holder disabled interrupts on lock; protected by @c lock. */
	bool guard;
} irq_spinlock_t;

#define IRQ_SPINLOCK_INITIALIZER(lname) \
	{ .lock = SPINLOCK_INITIALIZER(lname), .ipl = 0, .guard = false }

void irq_spinlock_initialize(irq_spinlock_t *lock, const char *name);
/**
 * Acquires @a lock. With @a irq_dis true, interrupts are disabled first and the
 * previous state is restored by irq_spinlock_unlock(lock, true). Any context.
 */
void irq_spinlock_lock(irq_spinlock_t *lock, bool irq_dis);
/** Releases @a lock; with @a irq_res true restores the saved interrupt state. */
void irq_spinlock_unlock(irq_spinlock_t *lock, bool irq_res);
bool irq_spinlock_trylock(irq_spinlock_t *lock);
#ifdef CONFIG_LOCKDEP
/**
 * irq_spinlock_lock() that the lock validator checks as class @a lockdep_class
 * (a static string) instead of the lock's name: one documented access pattern
 * of a lock whose per-instance order the class-level graph cannot see (the
 * calling CPU's own timeout lock taken with interrupts disabled, see
 * docs/LOCKING.md). Any context; never sleeps.
 */
void irq_spinlock_lock_as(irq_spinlock_t *lock, bool irq_dis,
    const char *lockdep_class);
#else
static inline void irq_spinlock_lock_as(irq_spinlock_t *lock, bool irq_dis,
    const char *lockdep_class)
{
	(void) lockdep_class;
	irq_spinlock_lock(lock, irq_dis);
}
#endif
/** True if the calling CPU holds @a lock; see spinlock_locked_by_me(). */
static inline bool irq_spinlock_locked_by_me(irq_spinlock_t *lock)
{
	return spinlock_locked_by_me(&lock->lock);
}

/** Nestable preemption disabling (per-CPU count until threads exist). */
void preemption_disable(void);
void preemption_enable(void);

#endif
