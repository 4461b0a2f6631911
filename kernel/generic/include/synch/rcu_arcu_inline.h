/** @file rcu_arcu_inline.h
 * A-RCU's reader section: rcu_read_lock(), rcu_read_unlock() and the tests
 * of a reader, inline (CONFIG_RCU_A_RCU).
 * Included by synch/rcu_inline.h only (after the headers it needs), which
 * picks this file or the other flavour's by the configuration (make RCU=).
 */
#ifndef KERN_RCU_ARCU_INLINE_H_
#define KERN_RCU_ARCU_INLINE_H_

/*
 * The reader nesting count of the running thread lives in its CPU (RCU_CNT_INC
 * per level, bit RCU_WAS_PREEMPTED): amd64 keeps it in cpu_t.rcu.nesting
 * (%gs-relative), arm64 in register x18, reserved for it. The switch-out hook
 * saves it to thread_t.rcu_nesting (and marks a reader preempted there), the
 * switch-in hook loads it back. The architecture's accessors (arch/rcu_arch.h:
 * arcu_nesting_inc/dec/is_preempted for the reader, arcu_nesting/_set for the
 * hooks and slow paths) make each update of the count one instruction, so
 * indivisible by an interrupt, a preemption or a migration.
 */

/** Slow path of rcu_read_unlock: the section was preempted. */
void rcu_read_unlock_preempted(void);

/* Model: verify/arcu.pml */
static inline void rcu_read_lock(void)
{
	/*
	 * One indivisible update: an interrupt (and so the scheduler, which
	 * may set the preempted bit) cannot split it. No fence: the detector makes
	 * the target CPU run an smp_call (a full fence there) before it trusts it.
	 */
	arcu_nesting_inc();
}

/**
 * First step of rcu_read_unlock(): the subtraction alone (one instruction).
 * Exposed so that a test can stop a thread between the two steps; everything
 * else calls rcu_read_unlock(). Thread context, inside a reader section.
 */
/* Model: verify/arcu.pml */
static inline void arcu_read_unlock_sub(void)
{
	arcu_nesting_dec();
}

/**
 * Second step of rcu_read_unlock(): a count of zero with the preempted bit set
 * means the section was preempted and the thread is still on a preempted-readers
 * list: leave it (one compare with memory, then the branch). A thread switched
 * out between the two steps has already been taken off the list by the
 * scheduler hook (its count is then 0 when it runs again).
 */
/* Model: verify/arcu.pml */
static inline void arcu_read_unlock_check(void)
{
	if (unlikely(arcu_nesting_is_preempted()))
		rcu_read_unlock_preempted();
}

static inline void rcu_read_unlock(void)
{
	arcu_read_unlock_sub();
	arcu_read_unlock_check();
}

static inline bool rcu_read_locked(void)
{
	return arcu_nesting() >= RCU_CNT_INC;
}

/**
 * rcu_read_locked() for @a t, which is running here or is switched out
 * (interrupts or preemption disabled when @a t is running here).
 */
static inline bool rcu_thread_in_reader(thread_t *t)
{
	if (!t)
		return false;
	if (t == CPU->thread)
		return arcu_nesting() >= RCU_CNT_INC;
	return __atomic_load_n(&t->rcu_nesting, __ATOMIC_RELAXED) >=
	    RCU_CNT_INC;
}

#endif
