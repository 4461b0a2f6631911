/** @file rcu_arch.h
 * amd64 RCU reader nesting count accessors (included by
 * synch/rcu_inline.h; A-RCU and Podzimek RCU both keep their count here,
 * Podzimek never sets the preempted bit).
 *
 * The running thread's count lives in its CPU (cpu_t.rcu.nesting),
 * addressed through the per-CPU segment as %gs:ARCU_NESTING_OFF, as Linux
 * keeps preempt_count. Each access below is one instruction with the %gs
 * base applied when it executes, so an interrupt, a preemption or a
 * migration falls between two accesses, never inside one; a thread that
 * migrates between two of them finds its count in the new CPU. The reader
 * section is four instructions: addq (lock), subq, cmpq, je (unlock).
 *
 * The interface (synch/rcu_inline.h, synch/rcu_arcu.c): arcu_nesting_inc(),
 * arcu_nesting_dec(), arcu_nesting_is_preempted() for the reader,
 * arcu_nesting() and arcu_nesting_set() (RCU_CNT_INC per level, bit
 * RCU_WAS_PREEMPTED) for the hooks and slow paths; arm64 keeps the count in
 * a register instead (arch/arm64/include/arch/rcu_arch.h).
 *
 * No fence in any of them: on x86-64 (TSO) and on every architecture the
 * grace-period detector makes the reader's CPU run a cross-call, whose
 * handler executes a full fence there, before it trusts the count.
 */
#ifndef KERN_ARCH_RCU_ARCH_H_
#define KERN_ARCH_RCU_ARCH_H_

#define ARCU_NESTING_OFF offsetof(cpu_t, rcu.nesting)
_Static_assert(sizeof(((cpu_t *) 0)->rcu.nesting) == 8,
    "the A-RCU reader section uses 64-bit add/sub/cmp on the nesting count");

/** The running thread's nesting count (one %gs-relative load). */
static inline size_t arcu_nesting(void)
{
	size_t n;
	asm volatile ("movq %%gs:%c1, %0" : "=r" (n) : "i" (ARCU_NESTING_OFF));
	return n;
}

/** Adds RCU_CNT_INC to the running thread's count: one add on memory. */
static inline void arcu_nesting_inc(void)
{
	asm volatile ("addq %0, %%gs:%c1" : : "i" (RCU_CNT_INC),
	    "i" (ARCU_NESTING_OFF) : "memory");
}

/** Subtracts RCU_CNT_INC from the running thread's count: one sub. */
static inline void arcu_nesting_dec(void)
{
	asm volatile ("subq %0, %%gs:%c1" : : "i" (RCU_CNT_INC),
	    "i" (ARCU_NESTING_OFF) : "memory");
}

/**
 * True when the count is exactly RCU_WAS_PREEMPTED (zero nesting, the
 * preempted bit set): one compare with memory.
 */
static inline bool arcu_nesting_is_preempted(void)
{
	bool preempted;
	asm volatile ("cmpq %1, %%gs:%c2" : "=@ccz" (preempted)
	    : "i" (RCU_WAS_PREEMPTED), "i" (ARCU_NESTING_OFF) : "memory");
	return preempted;
}

/**
 * Sets the running thread's count to @a n (one %gs-relative store).
 * Interrupts disabled (the scheduler hooks, the cross-call, the slow paths).
 */
static inline void arcu_nesting_set(size_t n)
{
	asm volatile ("movq %0, %%gs:%c1" : : "r" (n), "i" (ARCU_NESTING_OFF)
	    : "memory");
}

/**
 * Subtracts RCU_CNT_INC from the running thread's count and tells whether
 * it is now 0 (the flags of the same subq; Podzimek's outermost test).
 */
static inline bool arcu_nesting_dec_is_zero(void)
{
	bool zero;
	asm volatile ("subq %1, %%gs:%c2" : "=@ccz" (zero)
	    : "i" (RCU_CNT_INC), "i" (ARCU_NESTING_OFF) : "memory");
	return zero;
}

#endif
