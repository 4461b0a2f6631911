/** @file semaphore.h
 * Counting semaphores (sleeping).
 *
 * A semaphore is a wait queue whose missed wake-ups are the semaphore's count:
 * semaphore_up() is waitq_wake_one() (wakes the first sleeper or, with nobody
 * asleep, records a missed wake-up = increments the count) and semaphore_down()
 * is waitq_sleep() (consumes a recorded wake-up = decrements the count, or sleeps
 * until an up hands one over). Sleepers are woken in FIFO order.
 *
 * Timeouts are in microseconds; as everywhere in the kernel (waitq, thread_join)
 * a timeout of 0 (SYNCH_NO_TIMEOUT) means "wait forever": use semaphore_trydown()
 * for a non-blocking attempt.
 *
 * Memory ordering: everything the upping thread did before semaphore_up() is
 * visible to the thread whose semaphore_down() consumed that up (both run under
 * the wait queue's lock).
 */
#ifndef KERN_SEMAPHORE_H_
#define KERN_SEMAPHORE_H_

#include <typedefs.h>
#include <synch/waitq.h>

typedef struct semaphore {
	/**
	 * The count lives in wq.missed_wakeups; the waiters are wq's sleepers.
	 * Protected by wq.lock (through the waitq functions).
	 */
	waitq_t wq;
} semaphore_t;

/**
 * Initializes @a sem with the count @a value (>= 0).
 * Context: any; the semaphore must not be in use yet. Never sleeps.
 */
void semaphore_initialize(semaphore_t *sem, int value);

/**
 * Decrements the count, sleeping until it is positive.
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
void semaphore_down(semaphore_t *sem);

/**
 * Like semaphore_down() but gives up after @a usec microseconds.
 * @param usec timeout in microseconds; 0 (SYNCH_NO_TIMEOUT) waits forever.
 * @return EOK when the count was decremented, ETIMEOUT when the time ran out
 *         (the count is then unchanged).
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
errno_t semaphore_down_timeout(semaphore_t *sem, uint64_t usec);

/**
 * Decrements the count if it is positive, without sleeping.
 * @return true when the count was decremented, false when it was zero.
 * Context: thread (interrupts enabled or not). Never sleeps.
 */
bool semaphore_trydown(semaphore_t *sem);

/**
 * Increments the count: wakes the first sleeper (handing the unit over to it) or,
 * when nobody sleeps, remembers the unit for the next down.
 * Context: any, including interrupt handlers. Never sleeps.
 */
void semaphore_up(semaphore_t *sem);

/**
 * Snapshot of the semaphore state: the count when positive or zero, otherwise
 * minus the number of sleepers (HelenOS semantics). Racy by nature; for
 * statistics, assertions and tests.
 * Context: any. Never sleeps.
 */
int semaphore_count_get(semaphore_t *sem);

#endif
