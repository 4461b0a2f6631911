/** @file waitq.h
 * Wait queues: the primitive every blocking synchronization is built on.
 *
 * A wake-up that finds no sleeper is remembered (missed_wakeups) and consumed by
 * the next sleep, so a waker that runs just before the sleeper blocks is not lost.
 * waitq_wake_all() wakes every current sleeper and records nothing.
 */
#ifndef KERN_WAITQ_H_
#define KERN_WAITQ_H_

#include <typedefs.h>
#include <synch/spinlock.h>
#include <adt/list.h>

/** Sleep flags. */
#define SYNCH_FLAGS_NONE          0
/** Do not block: return ETIMEOUT at once if no wake-up is pending. */
#define SYNCH_FLAGS_NON_BLOCKING  (1 << 0)

/** Wait without timeout. */
#define SYNCH_NO_TIMEOUT 0

typedef struct waitq {
	/** Protects every field and the wq_link of the threads sleeping here. */
	irq_spinlock_t lock;
	/** Wake-ups that found no sleeper. */
	size_t missed_wakeups;
	/** Sleeping threads, FIFO. */
	list_t sleepers;
} waitq_t;

void waitq_initialize(waitq_t *wq);

/**
 * Sleeps until woken up or @a usec microseconds passed (SYNCH_NO_TIMEOUT: no
 * limit). Consumes a missed wake-up instead of sleeping if one is pending.
 * @return EOK when woken, ETIMEOUT on timeout (or with SYNCH_FLAGS_NON_BLOCKING
 *         when nothing is pending).
 * Context: thread, interrupts enabled, no spinlock held; may sleep.
 */
errno_t waitq_sleep_timeout(waitq_t *wq, uint64_t usec, unsigned flags);
/** waitq_sleep_timeout(wq, SYNCH_NO_TIMEOUT, SYNCH_FLAGS_NONE). */
void waitq_sleep(waitq_t *wq);

/**
 * Two-phase sleep for callers that must check a condition under the wait
 * queue lock: waitq_sleep_prepare() locks the queue (interrupts disabled), the
 * caller checks its condition, then either waitq_sleep_finish() (which sleeps and
 * unlocks) or waitq_sleep_cancel() (which just unlocks).
 */
ipl_t waitq_sleep_prepare(waitq_t *wq);
errno_t waitq_sleep_finish(waitq_t *wq, ipl_t ipl, uint64_t usec, unsigned flags);
void waitq_sleep_cancel(waitq_t *wq, ipl_t ipl);

/** Wakes the first sleeper, or records a missed wake-up. Any context (incl. IRQ). */
void waitq_wake_one(waitq_t *wq);
/**
 * Wakes the first sleeper if there is one; records nothing otherwise (condition
 * variable semantics). Any context (incl. IRQ).
 */
void waitq_signal(waitq_t *wq);
/** Wakes every sleeper; records nothing. Any context (incl. IRQ). */
void waitq_wake_all(waitq_t *wq);
/** Number of sleepers (racy snapshot, for statistics and tests). */
size_t waitq_count(waitq_t *wq);

#endif
