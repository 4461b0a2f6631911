/** @file rcu_podzimek_inline.h
 * Podzimek RCU's reader section: rcu_read_lock(), rcu_read_unlock() and
 * the tests of a reader, inline (CONFIG_RCU_PODZIMEK).
 * Included by synch/rcu_inline.h only (after the headers it needs), which
 * picks this file or the other flavour's by the configuration (make RCU=).
 */
#ifndef KERN_RCU_PODZIMEK_INLINE_H_
#define KERN_RCU_PODZIMEK_INLINE_H_

/** Global GP counter (defined in rcu.c); read by readers with relaxed loads. */
extern uint64_t rcu_cur_gp;
/** Records a QS on this CPU (barrier, last_seen_gp, announce). Preemption off. */
void rcu_record_qs(void);
/** Slow path of rcu_read_lock(): records a QS if still due. Outside a section. */
void rcu_read_lock_slow(void);
/**
 * Slow path of the outermost rcu_read_unlock(): leaves the preempted list,
 * records (and announces) a QS if still due. Thread context.
 */
void rcu_read_unlock_slow(void);

/*
 * The reader count is the same per-CPU count as A-RCU's (arch/rcu_arch.h:
 * RCU_CNT_INC per level, never marked; the preempted state is
 * thread_t.rcu_preempted), updated with one instruction each way, so a
 * preemption or a migration falls before or after an update and the
 * scheduler hooks carry the count with the thread: no preemption_disable()
 * in the fast path (it was two disable/enable pairs, 49 instructions per
 * empty section on amd64). What needs the CPU to stay put, recording a QS,
 * is in the slow paths, with preemption disabled. The fast paths' loads of
 * this CPU's last_seen_gp and is_delaying_gp may read the CPU the thread
 * just left (arm64: TPIDR_EL1 then the load): they are hints; the slow path
 * reads them again on its own CPU, and the CPU left recorded a QS when the
 * thread was switched out there.
 */

/* Model: verify/podzimek.pml */
static inline void rcu_read_lock(void)
{
	/*
	 * This CPU has not seen the current GP: the outermost lock is a QS
	 * (the slow path tests the count). Once per GP per CPU.
	 */
	if (unlikely(__atomic_load_n(&CPU->rcu.last_seen_gp, __ATOMIC_RELAXED) !=
	    __atomic_load_n(&rcu_cur_gp, __ATOMIC_RELAXED)))
		rcu_read_lock_slow();
	/* One instruction; its "memory" clobber keeps the section after it. */
	arcu_nesting_inc();
}

/* Model: verify/podzimek.pml */
static inline void rcu_read_unlock(void)
{
	/*
	 * One instruction (and the test of its result); its "memory" clobber
	 * keeps the section before it.
	 */
	if (arcu_nesting_dec_is_zero()) {
		/*
		 * Outermost: a QS to record or announce (the detector asked:
		 * is_delaying_gp), or the section was preempted and is on a
		 * list. The loads come after the subtraction in program order:
		 * the cross-call that raises is_delaying_gp found the count
		 * non-zero, so it ran before the subtraction, and its store is
		 * seen here (same CPU). Migrated in between, the CPU left
		 * recorded the QS at the switch.
		 */
		thread_t *t = THREAD;
		cpu_t *c = CPU;
		if (unlikely((t && t->rcu_preempted) ||
		    __atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&rcu_cur_gp, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&c->rcu.is_delaying_gp, __ATOMIC_RELAXED)))
			rcu_read_unlock_slow();
	}
}

static inline bool rcu_read_locked(void)
{
	return arcu_nesting() >= RCU_CNT_INC;
}

/**
 * rcu_read_locked() for @a t, which must be the thread running on this CPU
 * (the nesting count lives in the CPU until the switch-out hook saves it);
 * preemption or interrupts disabled.
 */
static inline bool rcu_thread_in_reader(thread_t *t)
{
	(void) t;
	return arcu_nesting() >= RCU_CNT_INC;
}

#endif
