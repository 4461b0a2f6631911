/** @file condvar.h
 * Condition variables (sleeping), used with a mutex or a spinlock.
 *
 * The usual pattern, with the condition protected by mutex @c m:
 *
 *     mutex_lock(&m);
 *     while (!condition)
 *             condvar_wait(&cv, &m);
 *     ...
 *     mutex_unlock(&m);
 *
 * and on the other side: change the condition with @c m held, then
 * condvar_signal() or condvar_broadcast() (with or without @c m held).
 *
 * A signal or broadcast wakes only the threads asleep at that moment; with
 * nobody asleep it is not remembered (unlike semaphore_up()). No wake-up is lost
 * between the unlock of the mutex and the sleep: the waiter locks the condition
 * variable's wait queue before it releases the mutex, and a signaller that then
 * changes the condition under the mutex cannot signal before the waiter is on
 * the queue. Callers must still re-check the condition in a loop: another
 * thread may get the mutex first, and a waiter whose timeout expired at the same
 * time as a signal does not pass that signal on.
 *
 * Timeouts are in microseconds; 0 (SYNCH_NO_TIMEOUT) means "wait forever".
 */
#ifndef KERN_CONDVAR_H_
#define KERN_CONDVAR_H_

#include <typedefs.h>
#include <synch/waitq.h>
#include <synch/mutex.h>
#include <synch/spinlock.h>

typedef struct condvar {
	/**
	 * The waiters. Protected by wq.lock (through the waitq functions); its
	 * missed_wakeups stays 0 (only waitq_signal/waitq_wake_all wake it).
	 */
	waitq_t wq;
} condvar_t;

/**
 * Initializes @a cv with no waiters.
 * Context: any; the condition variable must not be in use yet. Never sleeps.
 */
void condvar_initialize(condvar_t *cv);

/**
 * Wakes one thread waiting on @a cv (the longest waiting one), if any; nothing
 * is remembered when nobody waits.
 * Context: any, including interrupt handlers. Never sleeps.
 */
void condvar_signal(condvar_t *cv);

/**
 * Wakes every thread waiting on @a cv; nothing is remembered.
 * Context: any, including interrupt handlers. Never sleeps.
 */
void condvar_broadcast(condvar_t *cv);

/**
 * Atomically releases @a mtx and sleeps on @a cv until signalled, then locks
 * @a mtx again before returning. The caller must hold @a mtx exactly once (a
 * recursive mutex must not be nested; asserted in debug builds).
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
void condvar_wait(condvar_t *cv, mutex_t *mtx);

/**
 * Like condvar_wait() but gives up after @a usec microseconds.
 * @param usec timeout in microseconds; 0 (SYNCH_NO_TIMEOUT) waits forever.
 * @return EOK when woken by a signal or broadcast, ETIMEOUT when the time ran
 *         out. In both cases @a mtx is held again on return.
 * Context: thread, interrupts enabled, no spinlock held. May sleep.
 */
errno_t condvar_wait_timeout(condvar_t *cv, mutex_t *mtx, uint64_t usec);

/**
 * condvar_wait_timeout() for a condition protected by spinlock @a lock (held
 * once by the caller, who has no other spinlock): atomically releases @a lock
 * and sleeps, then locks @a lock again before returning. The spinlock was
 * taken with interrupts enabled (spinlock_lock(), not an IRQ spinlock).
 * @param usec timeout in microseconds; 0 (SYNCH_NO_TIMEOUT) waits forever.
 * @return EOK when woken, ETIMEOUT when the time ran out (@a lock held again).
 * Context: thread, interrupts enabled. May sleep.
 */
errno_t condvar_wait_spin_timeout(condvar_t *cv, spinlock_t *lock,
    uint64_t usec);

#endif
