/** @file rcu_inline.h
 * Inline reader sections of the RCU flavour built in (included by synch/rcu.h).
 */
#ifndef KERN_RCU_INLINE_H_
#define KERN_RCU_INLINE_H_

#include <proc/thread.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <atomic.h>

#if defined(CONFIG_RCU_A_RCU)

/** Slow path of rcu_read_unlock: the section was preempted. */
void rcu_read_unlock_preempted(void);

static inline void rcu_read_lock(void)
{
	thread_t *t = THREAD;
	/*
	 * One add instruction on memory: an interrupt (and so the scheduler, which
	 * may set the preempted bit) cannot split it. No fence: the detector makes
	 * the target CPU run an smp_call (a barrier there) before it trusts it.
	 */
	asm volatile ("addq %1, %0" : "+m" (t->rcu_nesting) : "i" (RCU_CNT_INC)
	    : "memory");
}

/**
 * First step of rcu_read_unlock(): the subtraction alone (one instruction).
 * Exposed so that a test can stop a thread between the two steps; everything
 * else calls rcu_read_unlock(). Thread context, inside a reader section.
 */
static inline void arcu_read_unlock_sub(thread_t *t)
{
	asm volatile ("subq %1, %0" : "+m" (t->rcu_nesting) : "i" (RCU_CNT_INC)
	    : "memory");
}

/**
 * Second step of rcu_read_unlock(): a count of zero with the preempted bit set
 * means the section was preempted and the thread is still on a preempted-readers
 * list: leave it. A thread switched out between the two steps has already been
 * taken off the list by the scheduler hook (its counter is then 0).
 */
static inline void arcu_read_unlock_check(thread_t *t)
{
	if (unlikely(__atomic_load_n(&t->rcu_nesting, __ATOMIC_RELAXED) ==
	    RCU_WAS_PREEMPTED))
		rcu_read_unlock_preempted();
}

static inline void rcu_read_unlock(void)
{
	thread_t *t = THREAD;
	arcu_read_unlock_sub(t);
	arcu_read_unlock_check(t);
}

static inline bool rcu_read_locked(void)
{
	thread_t *t = THREAD;
	return t && t->rcu_nesting >= RCU_CNT_INC;
}

/** rcu_read_locked() for @a t, which is running here or is switched out. */
static inline bool rcu_thread_in_reader(thread_t *t)
{
	return t && __atomic_load_n(&t->rcu_nesting, __ATOMIC_RELAXED) >=
	    RCU_CNT_INC;
}

#elif defined(CONFIG_RCU_PODZIMEK)

/** Global GP counter (defined in rcu.c); read by readers with relaxed loads. */
extern uint64_t rcu_cur_gp;
/** Records a QS on this CPU (barrier, last_seen_gp, announce). Preemption off. */
void rcu_record_qs(void);
/** Outermost unlock of a section that was preempted. Preemption off. */
void rcu_read_unlock_preempted(void);

static inline void rcu_read_lock(void)
{
	preemption_disable();
	cpu_t *c = CPU;
	/*
	 * Outermost lock: the CPU is not in a reader right now, a QS. Record it
	 * once per GP (the barrier inside rcu_record_qs is paid once per GP).
	 */
	if (c->rcu.nesting == 0 &&
	    __atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&rcu_cur_gp, __ATOMIC_RELAXED))
		rcu_record_qs();
	c->rcu.nesting++;
	compiler_barrier();
	preemption_enable();
}

static inline void rcu_read_unlock(void)
{
	preemption_disable();
	compiler_barrier();
	cpu_t *c = CPU;
	if (--c->rcu.nesting == 0) {
		thread_t *t = THREAD;
		if (unlikely(t && t->rcu_preempted))
			rcu_read_unlock_preempted();
		if (__atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&rcu_cur_gp, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&c->rcu.is_delaying_gp, __ATOMIC_RELAXED))
			rcu_record_qs();
	}
	preemption_enable();
}

static inline bool rcu_read_locked(void)
{
	preemption_disable();
	bool locked = CPU->rcu.nesting > 0;
	preemption_enable();
	return locked;
}

/**
 * rcu_read_locked() for @a t, which must be the thread running on this CPU
 * (the nesting count lives in the CPU until the switch-out hook saves it);
 * preemption or interrupts disabled.
 */
static inline bool rcu_thread_in_reader(thread_t *t)
{
	(void) t;
	return CPU->rcu.nesting > 0;
}

#else
#error "Define CONFIG_RCU_A_RCU or CONFIG_RCU_PODZIMEK (make RCU=...)"
#endif

#endif
