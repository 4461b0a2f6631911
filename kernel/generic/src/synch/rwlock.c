/** @file rwlock.c
 * Reader-writer locks with writer preference (see synch/rwlock.h).
 *
 * State (readers, writers_waiting, writer) under the internal mutex; readers
 * sleep on readers_cv while a writer holds or waits for the lock, writers sleep
 * on writers_cv while anyone holds it. Hand-offs:
 * - last reader out, writers waiting: signal one writer;
 * - writer out: signal one writer if any waits, else broadcast to readers;
 * - a writer giving up on a timeout, no other writer waiting and no writer
 *   inside: broadcast to readers (they were waiting for it only).
 * Every waiter re-checks its condition in a loop, so a wake-up that finds the
 * lock taken again just sends it back to sleep.
 */
#include <synch/rwlock.h>
#include <synch/mutex.h>
#include <synch/condvar.h>
#include <synch/lockdep.h>
#include <proc/thread.h>
#include <errno.h>
#include <debug.h>

void rwlock_initialize(rwlock_t *rwl)
{
	mutex_initialize_named(&rwl->lock, MUTEX_PASSIVE, "rwlock.internal");
#ifdef CONFIG_LOCKDEP
	rwl->lockdep = (lockdep_map_t) { .name = NULL, .cls = 0 };
#endif
	condvar_initialize(&rwl->readers_cv);
	condvar_initialize(&rwl->writers_cv);
	rwl->readers = 0;
	rwl->writers_waiting = 0;
	rwl->writer = NULL;
}

/*
 * The lock validator's hooks (CONFIG_LOCKDEP; nothing without it): the rwlock
 * is validated as one exclusive class, before waiting (edges), once held
 * (pushed on the thread's stack) and at the release. A timed acquisition
 * gives up, so it is validated as a trylock (no edge to it, no recursion
 * check: rwlock1 read-locks twice with a timeout on purpose). The public
 * functions pass their caller's address down as the site.
 */
#ifdef CONFIG_LOCKDEP
#define LD_IP_PARAM , uintptr_t ld_ip
#define LD_IP_ARG , ((uintptr_t) __builtin_return_address(0))
#define LD_ACQUIRE(rwl, usec) do { \
	if ((usec) == SYNCH_NO_TIMEOUT) \
		lockdep_sleep_acquire((rwl), &(rwl)->lockdep, ld_ip); \
} while (0)
#define LD_ACQUIRED(rwl, try) \
	lockdep_sleep_acquired((rwl), &(rwl)->lockdep, ld_ip, (try))
#define LD_RELEASE(rwl) lockdep_sleep_release((rwl), &(rwl)->lockdep)
#else
#define LD_IP_PARAM
#define LD_IP_ARG
/* Without the validator the timed functions are the common ones (release
 * builds: the same code as before the validator's hooks). */
#define read_lock_common rwlock_read_lock_timeout
#define write_lock_common rwlock_write_lock_timeout
#define LD_ACQUIRE(rwl, usec) ((void) 0)
#define LD_ACQUIRED(rwl, try) ((void) 0)
#define LD_RELEASE(rwl) ((void) 0)
#endif

/** Sets the writer; a relaxed atomic store for rwlock_write_locked_by_me(). */
static inline void set_writer(rwlock_t *rwl, thread_t *t)
{
	__atomic_store_n(&rwl->writer, t, __ATOMIC_RELAXED);
}

/** Readers may enter: no writer inside and none waiting. Caller holds rwl->lock. */
static inline bool read_may_enter(rwlock_t *rwl)
{
	assert(mutex_locked_by_me(&rwl->lock));
	return rwl->writer == NULL && rwl->writers_waiting == 0;
}

/** A writer may enter: nobody inside. Caller holds rwl->lock. */
static inline bool write_may_enter(rwlock_t *rwl)
{
	assert(mutex_locked_by_me(&rwl->lock));
	return rwl->writer == NULL && rwl->readers == 0;
}

#ifdef CONFIG_LOCKDEP
static
#endif
errno_t read_lock_common(rwlock_t *rwl, uint64_t usec LD_IP_PARAM)
{
	errno_t rc = EOK;

	LD_ACQUIRE(rwl, usec);
	mutex_lock(&rwl->lock);
	assert_verbose(rwl->writer != THREAD,
	    "read lock of a rwlock write-locked by the caller (deadlock)");
	while (!read_may_enter(rwl)) {
		rc = condvar_wait_timeout(&rwl->readers_cv, &rwl->lock, usec);
		if (rc == ETIMEOUT)
			break;
	}
	/* Admission may have become possible just as the timeout expired. */
	if (read_may_enter(rwl)) {
		rwl->readers++;
		rc = EOK;
	}
	mutex_unlock(&rwl->lock);
	if (rc == EOK)
		LD_ACQUIRED(rwl, usec != SYNCH_NO_TIMEOUT);
	return rc;
}

#ifdef CONFIG_LOCKDEP
errno_t rwlock_read_lock_timeout(rwlock_t *rwl, uint64_t usec)
{
	return read_lock_common(rwl, usec LD_IP_ARG);
}
#endif

void rwlock_read_lock(rwlock_t *rwl)
{
	errno_t rc = read_lock_common(rwl, SYNCH_NO_TIMEOUT LD_IP_ARG);
	assert(rc == EOK);
	(void) rc;
}

bool rwlock_read_trylock(rwlock_t *rwl)
{
	bool ok = false;

	mutex_lock(&rwl->lock);
	if (read_may_enter(rwl)) {
		rwl->readers++;
		ok = true;
	}
	mutex_unlock(&rwl->lock);
#ifdef CONFIG_LOCKDEP
	uintptr_t ld_ip = (uintptr_t) __builtin_return_address(0);
	if (ok)
		LD_ACQUIRED(rwl, true);
#endif
	return ok;
}

void rwlock_read_unlock(rwlock_t *rwl)
{
	LD_RELEASE(rwl);
	mutex_lock(&rwl->lock);
	assert_verbose(rwl->readers > 0, "read unlock of a rwlock not read-locked");
	assert(rwl->writer == NULL);
	if (--rwl->readers == 0 && rwl->writers_waiting > 0)
		condvar_signal(&rwl->writers_cv);
	mutex_unlock(&rwl->lock);
}

#ifdef CONFIG_LOCKDEP
static
#endif
errno_t write_lock_common(rwlock_t *rwl, uint64_t usec LD_IP_PARAM)
{
	errno_t rc = EOK;

	LD_ACQUIRE(rwl, usec);
	mutex_lock(&rwl->lock);
	assert_verbose(rwl->writer != THREAD,
	    "recursive write lock of a rwlock (deadlock)");
	if (write_may_enter(rwl)) {
		set_writer(rwl, THREAD);
		mutex_unlock(&rwl->lock);
		LD_ACQUIRED(rwl, usec != SYNCH_NO_TIMEOUT);
		return EOK;
	}

	rwl->writers_waiting++;
	while (!write_may_enter(rwl)) {
		rc = condvar_wait_timeout(&rwl->writers_cv, &rwl->lock, usec);
		if (rc == ETIMEOUT)
			break;
	}
	rwl->writers_waiting--;

	if (write_may_enter(rwl)) {
		set_writer(rwl, THREAD);
		rc = EOK;
	} else if (rwl->writers_waiting == 0 && rwl->writer == NULL) {
		/*
		 * Giving up: readers held back only by this waiting writer may
		 * enter now. (With another writer inside, its unlock wakes them.)
		 */
		condvar_broadcast(&rwl->readers_cv);
	}
	mutex_unlock(&rwl->lock);
	if (rc == EOK)
		LD_ACQUIRED(rwl, usec != SYNCH_NO_TIMEOUT);
	return rc;
}

#ifdef CONFIG_LOCKDEP
errno_t rwlock_write_lock_timeout(rwlock_t *rwl, uint64_t usec)
{
	return write_lock_common(rwl, usec LD_IP_ARG);
}
#endif

void rwlock_write_lock(rwlock_t *rwl)
{
	errno_t rc = write_lock_common(rwl, SYNCH_NO_TIMEOUT LD_IP_ARG);
	assert(rc == EOK);
	(void) rc;
}

bool rwlock_write_trylock(rwlock_t *rwl)
{
	bool ok = false;

	mutex_lock(&rwl->lock);
	if (write_may_enter(rwl)) {
		set_writer(rwl, THREAD);
		ok = true;
	}
	mutex_unlock(&rwl->lock);
#ifdef CONFIG_LOCKDEP
	uintptr_t ld_ip = (uintptr_t) __builtin_return_address(0);
	if (ok)
		LD_ACQUIRED(rwl, true);
#endif
	return ok;
}

void rwlock_write_unlock(rwlock_t *rwl)
{
	LD_RELEASE(rwl);
	mutex_lock(&rwl->lock);
	assert_verbose(rwl->writer != NULL && rwl->writer == THREAD,
	    "write unlock of a rwlock by a thread that does not hold it");
	assert(rwl->readers == 0);
	set_writer(rwl, NULL);
	if (rwl->writers_waiting > 0)
		condvar_signal(&rwl->writers_cv);
	else
		condvar_broadcast(&rwl->readers_cv);
	mutex_unlock(&rwl->lock);
}

bool rwlock_write_locked_by_me(rwlock_t *rwl)
{
	thread_t *self = THREAD;
	return self != NULL &&
	    __atomic_load_n(&rwl->writer, __ATOMIC_RELAXED) == self;
}
