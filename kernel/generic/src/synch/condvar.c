/** @file condvar.c
 * Condition variables on top of wait queues (see synch/condvar.h).
 *
 * No lost wake-up: the waiter locks the wait queue (waitq_sleep_prepare), only
 * then releases the lock protecting the condition, and enqueues itself and
 * sleeps in waitq_sleep_finish, which drops the wait-queue lock only once the
 * waiter is on the queue. A signaller changes the condition under the caller's
 * lock, so its waitq_signal() (which takes the wait-queue lock) comes after the
 * waiter is queued and finds it there.
 *
 * Lock order: condvar wait queue, then the mutex's wait queue (mutex_unlock()
 * runs with the condvar wait queue locked; nothing takes them the other way).
 */
#include <synch/condvar.h>
#include <synch/mutex.h>
#include <synch/waitq.h>
#include <synch/spinlock.h>
#include <proc/thread.h>
#include <errno.h>
#include <debug.h>

void condvar_initialize(condvar_t *cv)
{
	waitq_initialize(&cv->wq);
}

void condvar_signal(condvar_t *cv)
{
	waitq_signal(&cv->wq);
}

void condvar_broadcast(condvar_t *cv)
{
	waitq_wake_all(&cv->wq);
}

errno_t condvar_wait_timeout(condvar_t *cv, mutex_t *mtx, uint64_t usec)
{
	assert_verbose(mutex_locked_by_me(mtx),
	    "condvar_wait without holding the mutex");
	/* A nested recursive mutex would stay locked while we sleep. */
	assert_verbose(mtx->nesting == 1,
	    "condvar_wait with a nested recursive mutex");

	ipl_t ipl = waitq_sleep_prepare(&cv->wq);
	/* The queue is locked: a signal cannot slip in before we sleep. */
	mutex_unlock(mtx);
	errno_t rc = waitq_sleep_finish(&cv->wq, ipl, usec, SYNCH_FLAGS_NONE);
	assert(rc == EOK || rc == ETIMEOUT);

	mutex_lock(mtx);
	return rc;
}

void condvar_wait(condvar_t *cv, mutex_t *mtx)
{
	(void) condvar_wait_timeout(cv, mtx, SYNCH_NO_TIMEOUT);
}

errno_t condvar_wait_spin_timeout(condvar_t *cv, spinlock_t *lock,
    uint64_t usec)
{
	assert(spinlock_locked(lock));

	ipl_t ipl = waitq_sleep_prepare(&cv->wq);
	spinlock_unlock(lock);
	errno_t rc = waitq_sleep_finish(&cv->wq, ipl, usec, SYNCH_FLAGS_NONE);
	assert(rc == EOK || rc == ETIMEOUT);

	spinlock_lock(lock);
	return rc;
}
