/** @file semaphore.c
 * Counting semaphores on top of wait queues (see synch/semaphore.h).
 */
#include <synch/semaphore.h>
#include <synch/waitq.h>
#include <synch/spinlock.h>
#include <adt/list.h>
#include <errno.h>
#include <debug.h>

void semaphore_initialize(semaphore_t *sem, int value)
{
	assert(value >= 0);
	waitq_initialize(&sem->wq);
	/*
	 * Nobody can use the semaphore yet, so the count is set directly rather
	 * than by @a value calls to waitq_wake_one().
	 */
	sem->wq.missed_wakeups = (size_t) value;
}

void semaphore_down(semaphore_t *sem)
{
	errno_t rc = waitq_sleep_timeout(&sem->wq, SYNCH_NO_TIMEOUT,
	    SYNCH_FLAGS_NONE);
	assert(rc == EOK);
	(void) rc;
}

errno_t semaphore_down_timeout(semaphore_t *sem, uint64_t usec)
{
	errno_t rc = waitq_sleep_timeout(&sem->wq, usec, SYNCH_FLAGS_NONE);
	assert(rc == EOK || rc == ETIMEOUT);
	return rc;
}

bool semaphore_trydown(semaphore_t *sem)
{
	return waitq_sleep_timeout(&sem->wq, SYNCH_NO_TIMEOUT,
	    SYNCH_FLAGS_NON_BLOCKING) == EOK;
}

void semaphore_up(semaphore_t *sem)
{
	waitq_wake_one(&sem->wq);
}

int semaphore_count_get(semaphore_t *sem)
{
	int cnt;

	irq_spinlock_lock(&sem->wq.lock, true);
	if (sem->wq.missed_wakeups > 0)
		cnt = (int) sem->wq.missed_wakeups;
	else
		cnt = -(int) list_count(&sem->wq.sleepers);
	irq_spinlock_unlock(&sem->wq.lock, true);
	return cnt;
}
