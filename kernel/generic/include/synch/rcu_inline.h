/** @file rcu_inline.h
 * Inline reader sections of the RCU flavour built in (included by synch/rcu.h).
 */
#ifndef KERN_RCU_INLINE_H_
#define KERN_RCU_INLINE_H_

#include <proc/thread.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <atomic.h>
#include <arch/asm.h>

/*
 * The running thread's reader count, one instruction per update (both
 * flavours; A-RCU also marks it preempted): arch/rcu_arch.h.
 */
#include <arch/rcu_arch.h>

#if defined(CONFIG_RCU_A_RCU)

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

#elif defined(CONFIG_RCU_PODZIMEK)

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

#else
#error "Define CONFIG_RCU_A_RCU or CONFIG_RCU_PODZIMEK (make RCU=...)"
#endif

/* Callbacks (both flavours) */

/** Arriving callbacks on one CPU past which a grace period is expedited. */
#define RCU_EXPEDITE_THRESHOLD 1000
/** ...past which the reclaimer is also woken at once (once per batch). */
#define RCU_CRITICAL_THRESHOLD 10000

/**
 * The request for an expedited grace period: set by rcu_synchronize_expedite()
 * and by callback floods (rcu_call()), taken (exchanged with false) by each
 * grace-period detection. Atomics. Alone on its cache line, and rcu_call()
 * loads it before it stores: a CPU posting thousands of callbacks per grace
 * period then writes the line once per grace period, not on every call (each
 * store takes the line away from every other CPU's cache).
 */
typedef struct {
	bool req;
} __attribute__((aligned(64))) rcu_expedite_flag_t;

extern rcu_expedite_flag_t rcu_expedite;

/**
 * Out-of-line part of rcu_call(): wakes CPU @a c's reclaimer. Called with
 * interrupts disabled on CPU @a c.
 */
void rcu_call_wake(cpu_t *c);

static inline void rcu_call(rcu_item_t *item, rcu_func_t func)
{
	item->func = func;
	item->next = NULL;
	/* The arriving list is CPU-local, and interrupt handlers post too. */
	ipl_t ipl = interrupts_disable();
	cpu_t *c = CPU;
	*c->rcu.arriving_tail = item;
	c->rcu.arriving_tail = &item->next;
	size_t n = ++c->rcu.arriving_cnt;
	c->rcu.stat_posted++;
	if (unlikely(n > RCU_EXPEDITE_THRESHOLD) &&
	    !__atomic_load_n(&rcu_expedite.req, __ATOMIC_RELAXED)) {
		__atomic_store_n(&rcu_expedite.req, true, __ATOMIC_RELAXED);
		c->rcu.stat_expedite_reqs++;
	}
	/*
	 * An idle reclaimer is woken by the first callback. A busy one is woken
	 * once more per batch, when the critical threshold is crossed (it is then
	 * awake already or about to run, and every further wake-up would only be
	 * recorded as a missed one on its wait queue, each making a later idle
	 * sleep return at once: with 24000 callbacks per grace period, chtbench 7
	 * at 100 % updates spent 200 instructions per callback on those wake-ups
	 * and the reclaimer's empty rounds).
	 */
	if (unlikely(c->rcu.reclaimer_idle || n == RCU_CRITICAL_THRESHOLD + 1))
		rcu_call_wake(c);
	interrupts_restore(ipl);
}

#endif
