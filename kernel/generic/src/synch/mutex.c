/** @file mutex.c
 * Passive mutexes on top of a binary semaphore (see synch/mutex.h).
 */
#include <synch/mutex.h>
#include <synch/semaphore.h>
#include <synch/waitq.h>
#include <synch/lockdep.h>
#include <proc/thread.h>
#include <arch/asm.h>
#include <cpu.h>
#include <errno.h>
#include <debug.h>

/** True when running in an interrupt handler on this CPU. */
static inline bool mutex_in_irq(void)
{
	/* Interrupts off: the CPU cannot change under us between the two loads. */
	ipl_t ipl = interrupts_disable();
	bool irq = CPU->irq_nesting > 0;
	interrupts_restore(ipl);
	return irq;
}

static inline thread_t *mutex_owner(mutex_t *mtx)
{
	return __atomic_load_n(&mtx->owner, __ATOMIC_RELAXED);
}

static inline void mutex_set_owner(mutex_t *mtx, thread_t *t)
{
	__atomic_store_n(&mtx->owner, t, __ATOMIC_RELAXED);
}

void mutex_initialize(mutex_t *mtx, unsigned flags)
{
	assert((flags & ~(unsigned) MUTEX_RECURSIVE) == 0);
	mtx->flags = flags;
	semaphore_initialize(&mtx->sem, 1);
	mtx->owner = NULL;
	mtx->nesting = 0;
#ifdef CONFIG_LOCKDEP
	mtx->lockdep = (lockdep_map_t) { .name = NULL, .cls = 0 };
#endif
}

/*
 * With the lock validator the lock operations pass their caller's address
 * (the site reports name) down to mutex_lock_common(); without it the code is
 * exactly what it was (release builds: same instructions).
 */
#ifdef CONFIG_LOCKDEP
#define LD_IP_PARAM , uintptr_t ld_ip
#define LD_IP_ARG , ((uintptr_t) __builtin_return_address(0))
#else
#define LD_IP_PARAM
#define LD_IP_ARG
#endif

/**
 * Common part of the lock operations.
 * @param usec  timeout (SYNCH_NO_TIMEOUT: none)
 * @param block false for a trylock
 */
static errno_t mutex_lock_common(mutex_t *mtx, uint64_t usec, bool block
    LD_IP_PARAM)
{
	assert_verbose(!mutex_in_irq(), "mutex used in an interrupt handler");
	thread_t *self = THREAD;
	assert_verbose(self != NULL, "mutex used outside thread context");

	if (self != NULL && mutex_owner(mtx) == self) {
		if (mtx->flags & MUTEX_RECURSIVE) {
			mtx->nesting++;
			return EOK;
		}
		if (!block)
			return ETIMEOUT;
		/*
		 * Sleeping now would never end (or end by the timeout only):
		 * debug builds stop here; release builds do what was asked.
		 */
		assert_verbose(false, "recursive lock of a non-recursive mutex "
		    "(deadlock)");
	}

	if (block) {
		/* Whether or not it sleeps this time. */
		lockdep_might_sleep("mutex_lock", NULL);
#ifdef CONFIG_LOCKDEP
		/* Before sleeping: an inversion is reported even if it
		 * deadlocks now. A timed lock gives up, so it is validated
		 * as a trylock (no edge to it, no recursion check). */
		if (usec == SYNCH_NO_TIMEOUT)
			lockdep_sleep_acquire(mtx, &mtx->lockdep, ld_ip);
#endif
		errno_t rc = semaphore_down_timeout(&mtx->sem, usec);
		if (rc != EOK)
			return rc;
	} else if (!semaphore_trydown(&mtx->sem)) {
		return ETIMEOUT;
	}

	assert(mutex_owner(mtx) == NULL);
	mutex_set_owner(mtx, self);
	mtx->nesting = 1;
#ifdef CONFIG_LOCKDEP
	lockdep_sleep_acquired(mtx, &mtx->lockdep, ld_ip,
	    !block || usec != SYNCH_NO_TIMEOUT);
#endif
	return EOK;
}

void mutex_lock(mutex_t *mtx)
{
	errno_t rc = mutex_lock_common(mtx, SYNCH_NO_TIMEOUT, true LD_IP_ARG);
	assert(rc == EOK);
	(void) rc;
}

errno_t mutex_lock_timeout(mutex_t *mtx, uint64_t usec)
{
	return mutex_lock_common(mtx, usec, true LD_IP_ARG);
}

bool mutex_trylock(mutex_t *mtx)
{
	return mutex_lock_common(mtx, SYNCH_NO_TIMEOUT, false LD_IP_ARG) == EOK;
}

void mutex_unlock(mutex_t *mtx)
{
	assert_verbose(!mutex_in_irq(), "mutex used in an interrupt handler");
	assert_verbose(THREAD != NULL && mutex_owner(mtx) == THREAD,
	    "mutex unlocked by a thread that does not own it");
	assert(mtx->nesting > 0);

	if (--mtx->nesting > 0)
		return;
#ifdef CONFIG_LOCKDEP
	/* Before the hand-off (semaphore_up takes the wait queue lock). */
	lockdep_sleep_release(mtx, &mtx->lockdep);
#endif
	mutex_set_owner(mtx, NULL);
	semaphore_up(&mtx->sem);
}

bool mutex_locked(mutex_t *mtx)
{
	return semaphore_count_get(&mtx->sem) <= 0;
}

bool mutex_locked_by_me(mutex_t *mtx)
{
	thread_t *self = THREAD;
	return self != NULL && mutex_owner(mtx) == self;
}
