/** @file rcu_arch.h
 * arm64 A-RCU reader nesting count accessors (included by
 * synch/rcu_inline.h with CONFIG_RCU_A_RCU).
 *
 * The count lives in the CPU (cpu_t.rcu.nesting) as on amd64, but AArch64
 * (ARMv8.0, the Cortex-A72: no LSE) has no add-to-memory instruction, and
 * finding the CPU (mrs TPIDR_EL1) is a separate instruction from the access.
 * An interrupt between them could preempt and migrate the thread (it would
 * then update its old CPU's count, now another thread's), or set the
 * preempted bit between the load and the store (which the store would then
 * overwrite). So each accessor masks IRQs (PSTATE.I, `msr daifset, #2`, which
 * takes effect for the following instructions without an ISB) for its three
 * or four instructions: to an interrupt, and so to the scheduler, the update
 * is one indivisible step, the property amd64 gets from one `addq %gs:`.
 * FIQs are not used by this kernel.
 *
 * No memory barrier here either: as on amd64 the grace-period detector makes
 * the reader's CPU run a cross-call, whose handler executes
 * __atomic_thread_fence(__ATOMIC_SEQ_CST) (`dmb ish`) there before the
 * detector trusts the count; taking an exception is not a barrier on arm64,
 * that fence is (smp/smp_call.c).
 */
#ifndef KERN_ARCH_RCU_ARCH_H_
#define KERN_ARCH_RCU_ARCH_H_

#define ARCU_NESTING_OFF offsetof(cpu_t, rcu.nesting)
_Static_assert(sizeof(((cpu_t *) 0)->rcu.nesting) == 8,
    "the A-RCU reader section uses 64-bit accesses to the nesting count");

/** The running thread's nesting count (IRQs masked around the two loads). */
static inline size_t arcu_nesting(void)
{
	size_t n;
	uint64_t daif, base;
	asm volatile (
	    "mrs %[daif], daif\n\t"
	    "msr daifset, #2\n\t"
	    "mrs %[base], tpidr_el1\n\t"
	    "ldr %[n], [%[base], %[off]]\n\t"
	    "msr daif, %[daif]"
	    : [n] "=r" (n), [daif] "=&r" (daif), [base] "=&r" (base)
	    : [off] "i" (ARCU_NESTING_OFF) : "memory");
	return n;
}

/** Adds @a delta to the running thread's count, indivisibly. */
static inline void arcu_nesting_add(int64_t delta)
{
	uint64_t daif, base, n;
	asm volatile (
	    "mrs %[daif], daif\n\t"
	    "msr daifset, #2\n\t"
	    "mrs %[base], tpidr_el1\n\t"
	    "ldr %[n], [%[base], %[off]]\n\t"
	    "add %[n], %[n], %[d]\n\t"
	    "str %[n], [%[base], %[off]]\n\t"
	    "msr daif, %[daif]"
	    : [n] "=&r" (n), [daif] "=&r" (daif), [base] "=&r" (base)
	    : [off] "i" (ARCU_NESTING_OFF), [d] "r" (delta) : "memory");
}

static inline void arcu_nesting_inc(void)
{
	arcu_nesting_add((int64_t) RCU_CNT_INC);
}

static inline void arcu_nesting_dec(void)
{
	arcu_nesting_add(-(int64_t) RCU_CNT_INC);
}

/** True when the count is exactly RCU_WAS_PREEMPTED (read indivisibly). */
static inline bool arcu_nesting_is_preempted(void)
{
	return arcu_nesting() == RCU_WAS_PREEMPTED;
}

#endif
