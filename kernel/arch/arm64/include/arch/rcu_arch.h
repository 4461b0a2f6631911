/** @file rcu_arch.h
 * arm64 RCU reader nesting count accessors (included by
 * synch/rcu_inline.h; A-RCU and Podzimek RCU both keep their count here,
 * Podzimek never sets the preempted mark).
 *
 * The running thread's count lives in register x18, which the kernel
 * reserves for it (`-ffixed-x18`, Makefile: the compiler never allocates
 * it; AAPCS64 calls x18 the platform register, and the kernel links no
 * code compiled without the flag, not even libgcc). So the count is
 * per CPU while a thread runs, as amd64's %gs word (cpu_t.rcu.nesting), and
 * the same scheduler hooks save it to thread_t.rcu_nesting at switch-out and
 * load it back at switch-in (synch/rcu_arcu.c). Each update is one
 * instruction on a register (`add x18, x18, #2`, `sub x18, x18, #2`): an
 * interrupt, and so a preemption, a migration or the detector's cross-call,
 * falls between two of them, never inside one, which is the property
 * amd64 gets from one `addq %gs:`. ARMv8.0 has no add to memory; a count
 * in memory (per CPU through TPIDR_EL1, or per thread through SP_EL0)
 * costs a load, an add and a store per update, and the per-CPU one also
 * masked interrupts around them (23 instructions per empty section).
 *
 * What keeps x18 the running thread's count:
 * - An exception taken from EL1 neither changes x18 nor restores it on
 *   return (vectors.S): the handler's own reader sections are balanced, and
 *   what the detector's cross-call or the scheduler hooks wrote into it
 *   (the preempted mark, another thread's count after a switch) stays.
 * - An exception from EL0 saves the user's x18 in the istate, sets x18 to 0
 *   (no reader section is open while a thread is in user mode), and the
 *   return to EL0 restores the user's value.
 * - Every CPU sets x18 to 0 before its first C code (start.S).
 *
 * Encoding (signed, so that the unlock's check is one instruction): levels
 * times RCU_CNT_INC, minus 1 when the thread was preempted (or caught by the
 * detector) inside its section. The outermost unlock of a preempted section
 * leaves -1, negative; every other unlock leaves a value >= 0. So
 * rcu_read_unlock() is `sub x18, x18, #2` and `tbnz x18, #63, <slow path>`,
 * and the empty section three instructions (amd64: four). The accessors
 * arcu_nesting() and arcu_nesting_set() convert to and from the encoding
 * the generic code uses (RCU_CNT_INC per level, bit RCU_WAS_PREEMPTED).
 *
 * No memory barrier and no compiler barrier beyond the "memory" clobber of
 * the add and the sub: on arm64 as on amd64 the grace-period detector makes
 * the reader's CPU run a cross-call, whose handler executes
 * __atomic_thread_fence(__ATOMIC_SEQ_CST) (`dmb ish`) there before the
 * detector trusts the count; taking an exception is not a barrier on
 * arm64, that fence is (smp/smp_call.c). The clobber is the compiler
 * barrier the reader needs: it forbids GCC to move the section's loads and
 * stores above the add or below the sub, where an interrupt on this CPU (the
 * cross-call, the switch-out hook) would find the count already 0.
 */
#ifndef KERN_ARCH_RCU_ARCH_H_
#define KERN_ARCH_RCU_ARCH_H_

/** Adds RCU_CNT_INC to the running thread's count: one instruction. */
static inline void arcu_nesting_inc(void)
{
	/* "memory": a compiler barrier, the section's accesses stay after it. */
	asm volatile ("add x18, x18, %0" : : "i" (RCU_CNT_INC) : "memory");
}

/** Subtracts RCU_CNT_INC from the running thread's count: one instruction. */
static inline void arcu_nesting_dec(void)
{
	/* "memory": a compiler barrier, the section's accesses stay before it. */
	asm volatile ("sub x18, x18, %0" : : "i" (RCU_CNT_INC) : "memory");
}

/**
 * True when the count is negative: zero levels left and the preempted mark
 * set (the generic RCU_WAS_PREEMPTED). One `tbnz`, which GCC places as the
 * branch to the caller's slow path. Right after arcu_nesting_dec().
 */
static inline bool arcu_nesting_is_preempted(void)
{
	asm goto ("tbnz x18, #63, %l[preempted]" : : : : preempted);
	return false;
preempted:
	return true;
}

/** The raw register (the encoding above). */
static inline int64_t arcu_nesting_raw(void)
{
	int64_t w;
	asm volatile ("mov %0, x18" : "=r" (w));
	return w;
}

/**
 * The running thread's count in the generic encoding (RCU_CNT_INC per
 * level, bit RCU_WAS_PREEMPTED): the register's odd values (marked) are
 * one below the level count. Any context; stable when interrupts are
 * disabled or the caller is the thread itself.
 */
static inline size_t arcu_nesting(void)
{
	int64_t w = arcu_nesting_raw();
	return (size_t) (w & 1 ? w + 2 : w);
}

/**
 * Sets the running thread's count to @a n (generic encoding). Interrupts
 * disabled (the scheduler hooks, the cross-call, the slow paths): the
 * thread's own add or sub cannot be in progress, an instruction is not
 * interruptible.
 */
static inline void arcu_nesting_set(size_t n)
{
	int64_t w = (int64_t) n;
	if (n & RCU_WAS_PREEMPTED)
		w -= 2;
	asm volatile ("mov x18, %0" : : "r" (w) : "memory");
}

/**
 * Subtracts RCU_CNT_INC from the running thread's count and tells whether
 * it is now 0 (`cbnz x18` after the sub; Podzimek's outermost test).
 */
static inline bool arcu_nesting_dec_is_zero(void)
{
	arcu_nesting_dec();
	asm goto ("cbnz x18, %l[nonzero]" : : : : nonzero);
	return true;
nonzero:
	return false;
}

/**
 * rcu_for_each_pair()'s loads (synch/rcu.h): the 8-byte link at @a at and
 * the 8-byte word after it (stored through @a w), in one LDP. Each register of an LDP of
 * two 8-byte-aligned doublewords is a single-copy atomic access (ARMv8 ARM,
 * B2.2.1), and both are ordered after the load that produced @a at by the
 * address dependency. The asm is volatile so that GCC neither merges it
 * with another read of the same node nor hoists it out of a loop (the
 * properties an atomic load has); the "m" input tells it which memory is
 * read. No ordering beyond that: the relaxed loads it stands for.
 */
#define ARCH_RCU_LOAD_PAIR 1
static inline void *arch_rcu_load_pair(const void *at, uint64_t *w)
{
	void *p;
	uint64_t x;
	asm volatile ("ldp %0, %1, [%2]" : "=r" (p), "=r" (x)
	    : "r" (at), "m" (*(const uint64_t (*)[2]) at));
	*w = x;
	return p;
}

#endif
