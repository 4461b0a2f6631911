/** @file mutex.h
 * Passive (sleeping) mutexes with an owner.
 *
 * A mutex is a binary semaphore plus the owning thread: a thread that finds the
 * mutex locked sleeps in the semaphore's wait queue (FIFO) until the owner unlocks
 * it, which hands the mutex to the first sleeper. Mutexes are for thread context
 * only (never interrupt handlers: debug builds assert CPU->irq_nesting == 0) and
 * must not be locked with a spinlock held or interrupts disabled (locking may
 * sleep). Unlocking never sleeps.
 *
 * Kinds (flags of mutex_initialize()):
 * - MUTEX_PASSIVE: a plain sleeping mutex. Locking it again from the owning
 *   thread is a certain deadlock; debug builds assert instead.
 * - MUTEX_RECURSIVE: the owner may lock it again; it is released when unlocked as
 *   many times as it was locked.
 *
 * Debug builds (CONFIG_DEBUG) assert that only the owner unlocks a mutex.
 * With the lock validator (CONFIG_LOCKDEP) a mutex initialized with
 * mutex_initialize_named() is a lock class of that name: its order against
 * other mutexes and spinlocks is learned and checked (synch/lockdep.h).
 *
 * Timeouts are in microseconds; as everywhere in the kernel a timeout of 0
 * (SYNCH_NO_TIMEOUT) means "wait forever": use mutex_trylock() to not wait.
 *
 * Memory ordering: everything a thread did while holding the mutex is visible
 * to the next thread that locks it (acquire/release through the wait queue lock).
 */
#ifndef KERN_MUTEX_H_
#define KERN_MUTEX_H_

#include <typedefs.h>
#include <synch/semaphore.h>
#include <synch/lockdep.h>

struct thread;

/** Flags (kinds) for mutex_initialize(). */
typedef enum {
	/** A sleeping mutex; the default (no bit set). */
	MUTEX_PASSIVE = 0,
	/** The owner may lock it again (nesting count). */
	MUTEX_RECURSIVE = 1 << 0,
} mutex_flags_t;

typedef struct mutex {
	/** MUTEX_* flags. Set once by mutex_initialize(). */
	unsigned flags;
	/** Count 1 when free, 0 when held; waiters sleep in it. Its own locking. */
	semaphore_t sem;
	/**
	 * Owning thread, NULL when free. Written only by the thread that holds the
	 * mutex (set after acquiring, cleared before releasing); read racily by
	 * anyone, so accessed with __atomic builtins (relaxed: a thread can only
	 * ever see itself here if it stored itself).
	 */
	struct thread *owner;
	/** Times the owner locked it (1 unless recursive). Protected by the mutex. */
	unsigned nesting;
#ifdef CONFIG_LOCKDEP
	/** The validator's class (name set once at initialization). */
	lockdep_map_t lockdep;
#endif
} mutex_t;

/**
 * Initializes @a mtx unlocked.
 * @param flags MUTEX_PASSIVE, optionally | MUTEX_RECURSIVE.
 * Context: any; the mutex must not be in use yet. Never sleeps.
 */
void mutex_initialize(mutex_t *mtx, unsigned flags);

/**
 * mutex_initialize() that also names the mutex's lock class for the lock
 * validator (@a name: a static string; mutexes sharing a name are one class,
 * as spinlocks are). Without CONFIG_LOCKDEP it is mutex_initialize() exactly.
 * Context: any; the mutex must not be in use yet. Never sleeps.
 */
static inline void mutex_initialize_named(mutex_t *mtx, unsigned flags,
    const char *name)
{
	mutex_initialize(mtx, flags);
#ifdef CONFIG_LOCKDEP
	mtx->lockdep.name = name;
#else
	(void) name;
#endif
}

/**
 * Locks @a mtx, sleeping while another thread holds it. A recursive mutex
 * held by the caller just has its nesting count incremented; a non-recursive one
 * held by the caller is a deadlock (assert in debug builds).
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
void mutex_lock(mutex_t *mtx);

/**
 * Like mutex_lock() but gives up after @a usec microseconds.
 * @param usec timeout in microseconds; 0 (SYNCH_NO_TIMEOUT) waits forever.
 * @return EOK when locked, ETIMEOUT when the time ran out (not locked then).
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
errno_t mutex_lock_timeout(mutex_t *mtx, uint64_t usec);

/**
 * Locks @a mtx if that is possible without sleeping.
 * @return true when locked (or, for a recursive mutex the caller holds, nested),
 *         false otherwise (also when the caller holds a non-recursive @a mtx).
 * Context: thread, not an interrupt handler. Never sleeps.
 */
bool mutex_trylock(mutex_t *mtx);

/**
 * Unlocks @a mtx (one nesting level of a recursive mutex); when released, hands
 * it to the first sleeping locker if any. The caller must own it (assert in
 * debug builds).
 * Context: thread, not an interrupt handler; spinlocks may be held. Never sleeps.
 */
void mutex_unlock(mutex_t *mtx);

/**
 * True when @a mtx is held by some thread (racy snapshot, for assertions).
 * Context: any. Never sleeps.
 */
bool mutex_locked(mutex_t *mtx);

/**
 * True when the current thread holds @a mtx (exact for the caller: only it can
 * make this true or false). For assertions such as "caller holds the lock".
 * Context: thread. Never sleeps.
 */
bool mutex_locked_by_me(mutex_t *mtx);

#endif
