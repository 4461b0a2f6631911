/** @file percpu.h
 * arm64 per-CPU base register: TPIDR_EL1 of every CPU holds its cpu_t
 * (arch_percpu_init()), so CPU is one `mrs`. The running thread is kept in
 * SP_EL0, as Linux keeps `current`: the kernel runs on SP_EL1 (SPSel = 1),
 * so SP_EL0 is free there, and the scheduler sets it whenever cpu_t.thread
 * changes (arch_thread_current_set()). THREAD is then one `mrs` too, which a
 * migration cannot split; reading cpu_t.thread through TPIDR_EL1 would take
 * two instructions, and a thread preempted and moved between them would
 * read its old CPU's new thread. Included by cpu.h after cpu_t.
 */
#ifndef KERN_ARCH_PERCPU_H_
#define KERN_ARCH_PERCPU_H_

/** Returns the current CPU. Meaningful when the caller cannot migrate. */
static inline cpu_t *cpu_current(void)
{
	cpu_t *c;
	asm volatile ("mrs %0, tpidr_el1" : "=r" (c));
	return c;
}

/**
 * Id of the CPU the caller ran on when it read TPIDR_EL1 (the thread may be
 * on another CPU by the time it uses the value unless preemption is
 * disabled: the same contract as amd64's). Any context.
 */
static inline size_t cpu_current_id(void)
{
	return cpu_current()->id;
}

/** The thread running on this CPU (NULL before the scheduler starts). */
static inline struct thread *arch_thread_current(void)
{
	struct thread *t;
	asm volatile ("mrs %0, sp_el0" : "=r" (t));
	return t;
}

/**
 * Records @a t as this CPU's running thread in SP_EL0. Called by the
 * scheduler right after it set cpu_t.thread, interrupts disabled.
 */
static inline void arch_thread_current_set(struct thread *t)
{
	asm volatile ("msr sp_el0, %0" :: "r" (t) : "memory");
}

/**
 * Raises the running CPU's preemption-disable count by one. Finding the CPU
 * and the increment must not be split by a migration: with the count at 0 a
 * timer interrupt between them may preempt and move the thread, and the
 * increment would land on the old CPU (its count stays raised, the new CPU's
 * underflows at the matching preemption_enable()). ARMv8.0 has no add to
 * memory, so interrupts (DAIF.I) are masked across the load, add and store
 * and restored to what they were. Any context.
 */
static inline void cpu_preemption_inc(void)
{
	unsigned long daif;
	cpu_t *c;
	asm volatile ("mrs %0, daif\n\tmsr daifset, #2" : "=r" (daif) :: "memory");
	asm volatile ("mrs %0, tpidr_el1" : "=r" (c));
	c->preemption_disabled++;
	/* "memory": the increment stays inside the masked window. */
	asm volatile ("msr daif, %0" :: "r" (daif) : "memory");
}

#endif
