/** @file spinlock.c
 * Spinlocks with deadlock reports in debug builds.
 */
#include <synch/spinlock.h>
#include <synch/lockstat.h>
#include <synch/lockdep.h>
#include <arch/asm.h>
#include <time/delay.h>
#include <cpu.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <proc/scheduler.h>

/** Seconds a lock may be spun on before debug builds report a probable deadlock. */
#define DEADLOCK_REPORT_SECONDS 5

void preemption_disable(void)
{
	/*
	 * Finding the CPU and the increment are one step that a migration
	 * cannot split (arch/percpu.h). Found by the KASAN build, whose shadow
	 * check between the two steps of the old `CPU->preemption_disabled++`
	 * widened the window: Podzimek RCU's `test cht` at -smp 4 panicked in
	 * preemption_enable()'s assertion.
	 */
	cpu_preemption_inc();
	compiler_barrier();
}

void preemption_enable(void)
{
	cpu_t *c = CPU;
	compiler_barrier();
	assert(c->preemption_disabled > 0);
	c->preemption_disabled--;
	/* A preemption that was held off while disabled happens now. */
	if (c->preemption_disabled == 0 && c->need_resched && !interrupts_disabled())
		scheduler_preempt_check();
}

void spinlock_initialize(spinlock_t *lock, const char *name)
{
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELAXED);
	lock->owner = 0;
	lock->name = name;
#ifdef CONFIG_LOCK_STAT
	lock->acquired_at = 0;
	lock->lockstat_class = 0;
#endif
#ifdef CONFIG_LOCKDEP
	__atomic_store_n(&lock->lockdep_class, 0, __ATOMIC_RELAXED);
#endif
}

static inline bool spinlock_try_acquire(spinlock_t *lock)
{
	/* Acquire: the critical section cannot move above the lock. */
	return !__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE);
}

#ifdef CONFIG_LOCKDEP
/*
 * With the validator, the lock operations take the caller's return address
 * (the call site named in reports; irq_spinlock_lock() passes its own
 * caller's). Without it the functions below are exactly the previous ones.
 */
#define LOCKDEP_RET_IP ((uintptr_t) __builtin_return_address(0))
static void spinlock_lock_ip(spinlock_t *lock, uintptr_t ld_ip,
    const char *ld_as);
static bool spinlock_trylock_ip(spinlock_t *lock, uintptr_t ld_ip);

void spinlock_lock(spinlock_t *lock)
{
	spinlock_lock_ip(lock, LOCKDEP_RET_IP, NULL);
}

bool spinlock_trylock(spinlock_t *lock)
{
	return spinlock_trylock_ip(lock, LOCKDEP_RET_IP);
}

static void spinlock_lock_ip(spinlock_t *lock, uintptr_t ld_ip,
    const char *ld_as)
#else
void spinlock_lock(spinlock_t *lock)
#endif
{
	preemption_disable();
#ifdef CONFIG_LOCKDEP
	/* Before spinning: an inversion is reported even if it deadlocks now. */
	lockdep_acquire_as(lock, ld_ip, false, ld_as);
#endif
#ifdef CONFIG_DEBUG
	uint64_t start = 0;
	bool reported = false;
#endif
#ifdef CONFIG_LOCK_STAT
	uint64_t t0 = cycle_count();
	bool contended = false;
#endif
	while (!spinlock_try_acquire(lock)) {
#ifdef CONFIG_LOCK_STAT
		contended = true;
#endif
		/* Spin on a plain load to keep the cache line shared. */
		while (__atomic_load_n(&lock->locked, __ATOMIC_RELAXED)) {
			cpu_relax();
#ifdef CONFIG_DEBUG
			if (panic_in_progress())
				continue;
			uint64_t now = uptime_us();
			if (start == 0) {
				start = now ? now : 1;
			} else if (!reported &&
			    now - start > DEADLOCK_REPORT_SECONDS * 1000000UL) {
				reported = true;
				printf("Deadlock probable: CPU %u spinning on lock "
				    "'%s' (%p) for %d s, owner CPU %d\n", CPU->id,
				    lock->name ? lock->name : "?", lock,
				    DEADLOCK_REPORT_SECONDS, lock->owner - 1);
			}
#endif
		}
	}
	lock->owner = (int) CPU->id + 1;
#ifdef CONFIG_LOCK_STAT
	lockstat_acquired(lock, t0, cycle_count(), contended);
#endif
#ifdef CONFIG_DEBUG
	if (reported)
		printf("Deadlock probable: false alarm, CPU %u got lock '%s'\n",
		    CPU->id, lock->name ? lock->name : "?");
#endif
}

#ifdef CONFIG_LOCKDEP
static bool spinlock_trylock_ip(spinlock_t *lock, uintptr_t ld_ip)
#else
bool spinlock_trylock(spinlock_t *lock)
#endif
{
	preemption_disable();
	if (spinlock_try_acquire(lock)) {
		lock->owner = (int) CPU->id + 1;
#ifdef CONFIG_LOCKDEP
		lockdep_acquire(lock, ld_ip, true);
#endif
#ifdef CONFIG_LOCK_STAT
		uint64_t now = cycle_count();
		lockstat_acquired(lock, now, now, false);
#endif
		return true;
	}
	preemption_enable();
	return false;
}

void spinlock_unlock(spinlock_t *lock)
{
	assert(__atomic_load_n(&lock->locked, __ATOMIC_RELAXED));
#ifdef CONFIG_LOCKDEP
	lockdep_release(lock);
#endif
#ifdef CONFIG_LOCK_STAT
	lockstat_released(lock, cycle_count());
#endif
	lock->owner = 0;
	/* Release: the critical section cannot move below the unlock. */
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
	preemption_enable();
}

bool spinlock_locked(spinlock_t *lock)
{
	return __atomic_load_n(&lock->locked, __ATOMIC_RELAXED) != 0;
}

bool spinlock_locked_by_me(spinlock_t *lock)
{
	/*
	 * Only this CPU writes its own id into owner, and only while it holds
	 * the lock: another CPU's value never matches.
	 */
	return __atomic_load_n(&lock->locked, __ATOMIC_RELAXED) != 0 &&
	    __atomic_load_n(&lock->owner, __ATOMIC_RELAXED) == (int) CPU->id + 1;
}

void irq_spinlock_initialize(irq_spinlock_t *lock, const char *name)
{
	spinlock_initialize(&lock->lock, name);
	lock->ipl = 0;
	lock->guard = false;
}

void irq_spinlock_lock(irq_spinlock_t *lock, bool irq_dis)
{
	if (irq_dis) {
		ipl_t ipl = interrupts_disable();
#ifdef CONFIG_LOCKDEP
		spinlock_lock_ip(&lock->lock, LOCKDEP_RET_IP, NULL);
#else
		spinlock_lock(&lock->lock);
#endif
		lock->guard = true;
		lock->ipl = ipl;
	} else {
		assert(interrupts_disabled());
#ifdef CONFIG_LOCKDEP
		spinlock_lock_ip(&lock->lock, LOCKDEP_RET_IP, NULL);
#else
		spinlock_lock(&lock->lock);
#endif
		lock->guard = false;
	}
}

void irq_spinlock_unlock(irq_spinlock_t *lock, bool irq_res)
{
	if (irq_res) {
		assert(lock->guard);
		ipl_t ipl = lock->ipl;
		lock->guard = false;
		spinlock_unlock(&lock->lock);
		interrupts_restore(ipl);
	} else {
		spinlock_unlock(&lock->lock);
	}
}

bool irq_spinlock_trylock(irq_spinlock_t *lock)
{
	ipl_t ipl = interrupts_disable();
#ifdef CONFIG_LOCKDEP
	if (spinlock_trylock_ip(&lock->lock, LOCKDEP_RET_IP)) {
#else
	if (spinlock_trylock(&lock->lock)) {
#endif
		lock->guard = true;
		lock->ipl = ipl;
		return true;
	}
	interrupts_restore(ipl);
	return false;
}

#ifdef CONFIG_LOCKDEP
void irq_spinlock_lock_as(irq_spinlock_t *lock, bool irq_dis,
    const char *lockdep_class)
{
	if (irq_dis) {
		ipl_t ipl = interrupts_disable();
		spinlock_lock_ip(&lock->lock, LOCKDEP_RET_IP, lockdep_class);
		lock->guard = true;
		lock->ipl = ipl;
	} else {
		assert(interrupts_disabled());
		spinlock_lock_ip(&lock->lock, LOCKDEP_RET_IP, lockdep_class);
		lock->guard = false;
	}
}
#endif
