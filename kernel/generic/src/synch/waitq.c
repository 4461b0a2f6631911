/** @file waitq.c
 * Wait queues with timeouts and remembered (missed) wake-ups.
 *
 * Sleep protocol: the sleeper, with interrupts disabled and the queue locked,
 * enqueues itself and sets its state to SLEEPING, registers its timeout on its own
 * CPU, unlocks the queue and calls the scheduler. A waker removes it from the queue
 * under the same lock and calls thread_ready(). The timeout handler does the same
 * with ETIMEOUT if the thread is still in the queue. Whoever removes the thread
 * first decides the result. Lock order: wait queue -> thread -> run queue;
 * a CPU's timeout lock -> wait queue (timeout handlers).
 */
#include <synch/waitq.h>
#include <synch/rcu.h>
#include <synch/lockdep.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <time/timeout.h>
#include <arch/asm.h>
#include <debug.h>
#include <errno.h>
#include <cpu.h>

void waitq_initialize(waitq_t *wq)
{
	irq_spinlock_initialize(&wq->lock, "waitq");
	wq->missed_wakeups = 0;
	list_initialize(&wq->sleepers);
}

ipl_t waitq_sleep_prepare(waitq_t *wq)
{
	ipl_t ipl = interrupts_disable();
	irq_spinlock_lock(&wq->lock, false);
	return ipl;
}

void waitq_sleep_cancel(waitq_t *wq, ipl_t ipl)
{
	irq_spinlock_unlock(&wq->lock, false);
	interrupts_restore(ipl);
}

/** Removes @a t from its wait queue (locked by the caller) and readies it. */
static void wake_thread_locked(waitq_t *wq, thread_t *t, errno_t result)
{
	assert(irq_spinlock_locked_by_me(&wq->lock));
	list_remove(&t->wq_link);
	t->sleep_queue = NULL;
	t->sleep_result = result;
	thread_ready(t);
}

static void waitq_timeout_handler(void *arg)
{
	thread_t *t = arg;
	/*
	 * The sleeper cannot have left (it unregisters this timeout, which waits
	 * for this handler, before returning), so t and its queue are valid.
	 */
	waitq_t *wq = __atomic_load_n(&t->sleep_queue, __ATOMIC_ACQUIRE);
	if (!wq)
		return;
	irq_spinlock_lock(&wq->lock, false);
	if (t->sleep_queue == wq)
		wake_thread_locked(wq, t, ETIMEOUT);
	irq_spinlock_unlock(&wq->lock, false);
}

errno_t waitq_sleep_finish(waitq_t *wq, ipl_t ipl, uint64_t usec, unsigned flags)
{
	/* May block: never inside an RCU reader (even if it would not block now). */
	if (!(flags & SYNCH_FLAGS_NON_BLOCKING))
		rcu_assert_may_block();
	if (wq->missed_wakeups > 0) {
		wq->missed_wakeups--;
		waitq_sleep_cancel(wq, ipl);
		return EOK;
	}
	if (flags & SYNCH_FLAGS_NON_BLOCKING) {
		waitq_sleep_cancel(wq, ipl);
		return ETIMEOUT;
	}

	thread_t *t = THREAD;
	assert(t && t != CPU->idle_thread);
	/* Names every spinlock held but the queue's own (released below). */
	lockdep_might_sleep("a wait queue sleep", &wq->lock.lock);
	assert_verbose(CPU->preemption_disabled == 1,
	    "sleeping while holding a spinlock or with preemption disabled");
	assert_verbose(ipl_enabled(ipl), "sleeping with interrupts disabled");

	t->sleep_result = EOK;
	list_append(&t->wq_link, &wq->sleepers);
	__atomic_store_n(&t->sleep_queue, wq, __ATOMIC_RELEASE);
	irq_spinlock_lock(&t->lock, false);
	t->state = THREAD_SLEEPING;
	irq_spinlock_unlock(&t->lock, false);

	timeout_t to;
	timeout_initialize(&to);
	if (usec != SYNCH_NO_TIMEOUT)
		timeout_register(&to, usec, waitq_timeout_handler, t);
	irq_spinlock_unlock(&wq->lock, false);

	scheduler();

	/*
	 * The waker may still be releasing the queue lock after it made us ready;
	 * pass through the lock once so that a wait queue on our stack (or in an
	 * object we free next) is not touched after we return.
	 */
	irq_spinlock_lock(&wq->lock, false);
	irq_spinlock_unlock(&wq->lock, false);

	if (usec != SYNCH_NO_TIMEOUT)
		(void) timeout_unregister(&to);
	errno_t rc = t->sleep_result;
	interrupts_restore(ipl);
	return rc;
}

errno_t waitq_sleep_timeout(waitq_t *wq, uint64_t usec, unsigned flags)
{
	ipl_t ipl = waitq_sleep_prepare(wq);
	return waitq_sleep_finish(wq, ipl, usec, flags);
}

void waitq_sleep(waitq_t *wq)
{
	(void) waitq_sleep_timeout(wq, SYNCH_NO_TIMEOUT, SYNCH_FLAGS_NONE);
}

void waitq_wake_one(waitq_t *wq)
{
	irq_spinlock_lock(&wq->lock, true);
	link_t *l = list_first(&wq->sleepers);
	if (l)
		wake_thread_locked(wq, list_get_instance(l, thread_t, wq_link), EOK);
	else
		wq->missed_wakeups++;
	irq_spinlock_unlock(&wq->lock, true);
}

void waitq_signal(waitq_t *wq)
{
	irq_spinlock_lock(&wq->lock, true);
	link_t *l = list_first(&wq->sleepers);
	if (l)
		wake_thread_locked(wq, list_get_instance(l, thread_t, wq_link), EOK);
	irq_spinlock_unlock(&wq->lock, true);
}

void waitq_wake_all(waitq_t *wq)
{
	irq_spinlock_lock(&wq->lock, true);
	link_t *l;
	while ((l = list_first(&wq->sleepers)))
		wake_thread_locked(wq, list_get_instance(l, thread_t, wq_link), EOK);
	irq_spinlock_unlock(&wq->lock, true);
}

size_t waitq_count(waitq_t *wq)
{
	irq_spinlock_lock(&wq->lock, true);
	size_t n = list_count(&wq->sleepers);
	irq_spinlock_unlock(&wq->lock, true);
	return n;
}
