/** @file rwlock.h
 * Reader-writer locks (sleeping).
 *
 * Any number of readers or one writer hold the lock at a time. Writer
 * preference: once a writer waits, new readers wait too (readers already inside
 * finish), so a stream of overlapping readers cannot starve a writer; when a
 * writer leaves, the next waiting writer goes first and the waiting readers are
 * let in together once no writer waits. The flip side: a continuous stream of
 * writers starves readers. Waiting writers are served in wait-queue (FIFO) order.
 *
 * Read locks are not recursive: a thread that read-locks a lock it already
 * read-holds deadlocks if a writer started waiting in between. Write locks are
 * not recursive either (asserted in debug builds), and only the writer may
 * write-unlock (asserted in debug builds).
 *
 * The lock is a mutex protecting the state plus two condition variables, so
 * every operation (also the trylocks) may briefly sleep on that internal mutex;
 * the trylocks never wait for the reader-writer lock itself.
 *
 * Lock validator (CONFIG_LOCKDEP): a rwlock initialized with
 * rwlock_initialize_named() is a lock class of that name; read and write
 * acquisitions are both validated as exclusive (with writer preference a
 * reader waits for a waiting writer, so a cycle through read locks can
 * deadlock too). The internal mutex is the class "rwlock.internal".
 *
 * Timeouts are in microseconds; 0 (SYNCH_NO_TIMEOUT) means "wait forever".
 * Context of every function: thread, interrupts enabled, no spinlock held; may
 * sleep (unlocking too, briefly, on the internal mutex).
 */
#ifndef KERN_RWLOCK_H_
#define KERN_RWLOCK_H_

#include <typedefs.h>
#include <synch/mutex.h>
#include <synch/condvar.h>
#include <synch/lockdep.h>

struct thread;

typedef struct rwlock {
	/** Protects every field below. */
	mutex_t lock;
	/** Readers wait here for writers (active or waiting) to go away. */
	condvar_t readers_cv;
	/** Writers wait here for the lock to become free. */
	condvar_t writers_cv;
	/** Readers holding the lock. */
	size_t readers;
	/** Writers waiting for the lock (they block new readers). */
	size_t writers_waiting;
	/**
	 * Writer holding the lock, NULL when none. Written under @c lock (relaxed
	 * atomic stores), read racily by rwlock_write_locked_by_me().
	 */
	struct thread *writer;
#ifdef CONFIG_LOCKDEP
	/** The validator's class of the rwlock itself (name set once). */
	lockdep_map_t lockdep;
#endif
} rwlock_t;

/** Initializes @a rwl unlocked. Context: any; not in use yet. Never sleeps. */
void rwlock_initialize(rwlock_t *rwl);
/**
 * rwlock_initialize() naming the lock's class for the lock validator (@a name:
 * a static string). Without CONFIG_LOCKDEP it is rwlock_initialize() exactly.
 * Context: any; not in use yet. Never sleeps.
 */
static inline void rwlock_initialize_named(rwlock_t *rwl, const char *name)
{
	rwlock_initialize(rwl);
#ifdef CONFIG_LOCKDEP
	rwl->lockdep.name = name;
#else
	(void) name;
#endif
}

/** Locks @a rwl for reading: waits while a writer holds or waits for it. */
void rwlock_read_lock(rwlock_t *rwl);
/**
 * rwlock_read_lock() with a timeout (0: wait forever).
 * @return EOK when read-locked, ETIMEOUT when the time ran out.
 */
errno_t rwlock_read_lock_timeout(rwlock_t *rwl, uint64_t usec);
/** Read-locks @a rwl if no writer holds or waits for it. @return true if locked. */
bool rwlock_read_trylock(rwlock_t *rwl);
/** Releases a read lock; the last reader out lets a waiting writer in. */
void rwlock_read_unlock(rwlock_t *rwl);

/** Locks @a rwl for writing: waits until no reader and no writer holds it. */
void rwlock_write_lock(rwlock_t *rwl);
/**
 * rwlock_write_lock() with a timeout (0: wait forever). A writer that gives up
 * lets in the readers it was holding back (if no other writer waits).
 * @return EOK when write-locked, ETIMEOUT when the time ran out.
 */
errno_t rwlock_write_lock_timeout(rwlock_t *rwl, uint64_t usec);
/** Write-locks @a rwl if nobody holds it. @return true if locked. */
bool rwlock_write_trylock(rwlock_t *rwl);
/** Releases the write lock: to the next waiting writer, else to all readers. */
void rwlock_write_unlock(rwlock_t *rwl);

/** True when the current thread holds @a rwl for writing (for assertions). */
bool rwlock_write_locked_by_me(rwlock_t *rwl);

#endif
