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
#include <proc/thread.h>
#include <errno.h>
#include <debug.h>

void rwlock_initialize(rwlock_t *rwl)
{
	mutex_initialize(&rwl->lock, MUTEX_PASSIVE);
	condvar_initialize(&rwl->readers_cv);
	condvar_initialize(&rwl->writers_cv);
	rwl->readers = 0;
	rwl->writers_waiting = 0;
	rwl->writer = NULL;
}

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

errno_t rwlock_read_lock_timeout(rwlock_t *rwl, uint64_t usec)
{
	errno_t rc = EOK;

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
	return rc;
}

void rwlock_read_lock(rwlock_t *rwl)
{
	errno_t rc = rwlock_read_lock_timeout(rwl, SYNCH_NO_TIMEOUT);
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
	return ok;
}

void rwlock_read_unlock(rwlock_t *rwl)
{
	mutex_lock(&rwl->lock);
	assert_verbose(rwl->readers > 0, "read unlock of a rwlock not read-locked");
	assert(rwl->writer == NULL);
	if (--rwl->readers == 0 && rwl->writers_waiting > 0)
		condvar_signal(&rwl->writers_cv);
	mutex_unlock(&rwl->lock);
}

errno_t rwlock_write_lock_timeout(rwlock_t *rwl, uint64_t usec)
{
	errno_t rc = EOK;

	mutex_lock(&rwl->lock);
	assert_verbose(rwl->writer != THREAD,
	    "recursive write lock of a rwlock (deadlock)");
	if (write_may_enter(rwl)) {
		set_writer(rwl, THREAD);
		mutex_unlock(&rwl->lock);
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
	return rc;
}

void rwlock_write_lock(rwlock_t *rwl)
{
	errno_t rc = rwlock_write_lock_timeout(rwl, SYNCH_NO_TIMEOUT);
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
	return ok;
}

void rwlock_write_unlock(rwlock_t *rwl)
{
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
