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

#ifdef CONFIG_DEBUG
/*
 * The debug builds' spin watchdog.
 *
 * A deadlock among spinlocks is a cycle in the wait-for graph: CPU a spins on
 * a lock held by CPU b, which spins on a lock held by ... CPU a (a lock taken
 * twice is a cycle of one). Such a cycle never resolves: nobody in it runs
 * anything but its spin loop. So the watchdog reports a deadlock when it
 * finds one, and never because a wait was long: it used to report after 5 s
 * of guest time, which a sanitizer kernel under TCG on a loaded host reached
 * when the host descheduled the holder's vCPU thread ("Deadlock probable" on
 * 'runq', then "false alarm"), while a real deadlock does not need any time
 * bound to be recognised.
 *
 * Each CPU publishes the lock it spins on in spin_waiting[] (its own slot);
 * a spinner that has waited WATCHDOG_CHECK_US walks lock -> owner CPU ->
 * the lock that CPU spins on -> ... and, every WATCHDOG_CHECK_US, does it
 * again; the same cycle through itself on two walks in a row (the walk reads
 * other CPUs' fields one by one, not as a snapshot) is reported once per
 * wait: "Deadlock: ..." with every CPU of the cycle, its lock and the lock's
 * holder. A wait that finds no cycle for WATCHDOG_SLOW_US is a slow holder
 * (descheduled by the host, or a long critical section), not a deadlock: one
 * "spinlock: ... long wait" line, counted, and the time the lock finally
 * took. Not seen as a cycle: a holder waiting for something other than a
 * spinlock (a cross-call's answer from a CPU that spins with interrupts off
 * on the holder's lock, a flag); such a hang shows as the long-wait line
 * naming the holder's CPU and as the harness's timeout.
 */
/** Wait before the first walk of the wait-for graph, and between walks. */
#define WATCHDOG_CHECK_US 1000000UL
/** Wait without a cycle after which the slow holder is reported. */
#define WATCHDOG_SLOW_US 5000000UL

/*
 * The lock each CPU spins on (NULL: none), indexed by logical id. Written by
 * its own CPU only (saved and restored around a spin nested in an interrupt
 * handler); read by any spinner's walk. Relaxed atomics: the walk is
 * confirmed by a second one, it needs no ordering.
 */
static spinlock_t *spin_waiting[CONFIG_MAX_CPUS];
/** Cycles reported (a CPU of the cycle each), long waits; relaxed atomics. */
static unsigned watchdog_deadlocks, watchdog_long_waits;

/** The longest cycle recorded (one lock per CPU). */
#define WATCHDOG_CYCLE_MAX 8

/** One walk: the locks and their holders from the spinner's lock on. */
typedef struct {
	unsigned len;
	spinlock_t *lock[WATCHDOG_CYCLE_MAX];
	int owner[WATCHDOG_CYCLE_MAX];
} wait_cycle_t;

/**
 * Walks the wait-for graph from @a lock (spun on by CPU @a self). Returns
 * true, with the cycle in @a c, when it leads back to @a self; false when a
 * holder does not spin, a lock has no recorded owner (between its two stores)
 * or the chain is longer than WATCHDOG_CYCLE_MAX (a cycle not through @a
 * self is reported by its own members).
 */
static bool wait_cycle(spinlock_t *lock, unsigned self, wait_cycle_t *c)
{
	spinlock_t *l = lock;
	for (unsigned n = 0; n < WATCHDOG_CYCLE_MAX; n++) {
		int owner = __atomic_load_n(&l->owner, __ATOMIC_RELAXED) - 1;
		if (owner < 0 || owner >= CONFIG_MAX_CPUS)
			return false;
		c->lock[n] = l;
		c->owner[n] = owner;
		if ((unsigned) owner == self) {
			c->len = n + 1;
			return true;
		}
		l = __atomic_load_n(&spin_waiting[owner], __ATOMIC_RELAXED);
		if (l == NULL)
			return false;
	}
	return false;
}

static bool same_cycle(const wait_cycle_t *a, const wait_cycle_t *b)
{
	if (a->len != b->len)
		return false;
	for (unsigned i = 0; i < a->len; i++) {
		if (a->lock[i] != b->lock[i] || a->owner[i] != b->owner[i])
			return false;
	}
	return true;
}

static const char *lock_name(const spinlock_t *lock)
{
	return lock->name ? lock->name : "?";
}

static __attribute__((noinline)) void report_cycle(unsigned self, const wait_cycle_t *c)
{
	__atomic_fetch_add(&watchdog_deadlocks, 1, __ATOMIC_RELAXED);
	/* One printf: the other CPUs of the cycle report at the same time. */
	char buf[128 + WATCHDOG_CYCLE_MAX * 96];
	size_t n = (size_t) snprintf(buf, sizeof(buf), "Deadlock: CPU %u "
	    "spinning on lock '%s' (%p), a cycle of %u CPU(s):\n", self,
	    lock_name(c->lock[0]), c->lock[0], c->len);
	unsigned cpu = self;
	for (unsigned i = 0; i < c->len && n < sizeof(buf); i++) {
		n += (size_t) snprintf(buf + n, sizeof(buf) - n, "  CPU %u waits "
		    "for '%s' (%p), held by CPU %d\n", cpu,
		    lock_name(c->lock[i]), c->lock[i], c->owner[i]);
		cpu = (unsigned) c->owner[i];
	}
	printf("%s", buf);
}

/** The state of one spinner's wait (spinlock_lock()'s locals). */
typedef struct {
	uint64_t start;
	uint64_t next_check;
	wait_cycle_t last;
	bool have_last;
	bool cycle_reported;
	bool slow_reported;
} watchdog_t;

/** One poll of a spinner on @a lock; cheap until a check is due. */
static void watchdog_poll(watchdog_t *w, spinlock_t *lock)
{
	if (panic_in_progress())
		return;
	uint64_t now = uptime_us();
	if (w->start == 0) {
		w->start = now ? now : 1;
		w->next_check = w->start + WATCHDOG_CHECK_US;
		return;
	}
	if (now < w->next_check || w->cycle_reported)
		return;
	w->next_check = now + WATCHDOG_CHECK_US;
	wait_cycle_t c;
	if (wait_cycle(lock, CPU->id, &c)) {
		if (w->have_last && same_cycle(&c, &w->last)) {
			w->cycle_reported = true;
			report_cycle(CPU->id, &c);
		}
		w->last = c;
		w->have_last = true;
		return;
	}
	w->have_last = false;
	if (!w->slow_reported && now - w->start > WATCHDOG_SLOW_US) {
		w->slow_reported = true;
		__atomic_fetch_add(&watchdog_long_waits, 1, __ATOMIC_RELAXED);
		int owner = __atomic_load_n(&lock->owner, __ATOMIC_RELAXED) - 1;
		printf("spinlock: long wait: CPU %u spinning on lock '%s' (%p) "
		    "for %lu s, owner CPU %d, no wait-for cycle (a slow or "
		    "descheduled holder, not a deadlock)\n", CPU->id,
		    lock_name(lock), lock,
		    (unsigned long) ((now - w->start) / 1000000), owner);
	}
}

/** After the spinner got @a lock: the long wait's length, if reported. */
static void watchdog_done(const watchdog_t *w, spinlock_t *lock)
{
	if (w->slow_reported && !w->cycle_reported)
		printf("spinlock: long wait: CPU %u got lock '%s' after %lu ms\n",
		    CPU->id, lock_name(lock),
		    (unsigned long) ((uptime_us() - w->start) / 1000));
}

void spinlock_watchdog_counts(unsigned *deadlocks, unsigned *long_waits)
{
	*deadlocks = __atomic_load_n(&watchdog_deadlocks, __ATOMIC_RELAXED);
	*long_waits = __atomic_load_n(&watchdog_long_waits, __ATOMIC_RELAXED);
}
#else
void spinlock_watchdog_counts(unsigned *deadlocks, unsigned *long_waits)
{
	*deadlocks = 0;
	*long_waits = 0;
}
#endif

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
	__atomic_store_n(&lock->owner, 0, __ATOMIC_RELAXED);
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

/**
 * The contended path of spinlock_lock(): spins until it has @a lock. Out of
 * line, so that an uncontended acquisition sets up nothing (under KASAN the
 * watchdog's state would be a poisoned stack object in every call).
 */
static __attribute__((noinline)) void spinlock_spin(spinlock_t *lock)
{
#ifdef CONFIG_DEBUG
	watchdog_t w = { .start = 0 };
	/* An interrupt handler's spin nests in its thread's: restored below. */
	spinlock_t *outer = __atomic_load_n(&spin_waiting[CPU->id],
	    __ATOMIC_RELAXED);
	__atomic_store_n(&spin_waiting[CPU->id], lock, __ATOMIC_RELAXED);
#endif
	do {
		/* Spin on a plain load to keep the cache line shared. */
		while (__atomic_load_n(&lock->locked, __ATOMIC_RELAXED)) {
			cpu_relax();
#ifdef CONFIG_DEBUG
			watchdog_poll(&w, lock);
#endif
		}
	} while (!spinlock_try_acquire(lock));
#ifdef CONFIG_DEBUG
	__atomic_store_n(&spin_waiting[CPU->id], outer, __ATOMIC_RELAXED);
	watchdog_done(&w, lock);
#endif
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
#ifdef CONFIG_LOCK_STAT
	uint64_t t0 = cycle_count();
	bool contended = false;
#endif
	if (!spinlock_try_acquire(lock)) {
#ifdef CONFIG_LOCK_STAT
		contended = true;
#endif
		spinlock_spin(lock);
	}
	__atomic_store_n(&lock->owner, (int) CPU->id + 1, __ATOMIC_RELAXED);
#ifdef CONFIG_LOCK_STAT
	lockstat_acquired(lock, t0, cycle_count(), contended);
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
		__atomic_store_n(&lock->owner, (int) CPU->id + 1,
		    __ATOMIC_RELAXED);
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
	/* Relaxed: the watchdog's walk reads it without the lock. */
	__atomic_store_n(&lock->owner, 0, __ATOMIC_RELAXED);
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
