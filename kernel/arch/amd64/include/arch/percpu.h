/** @file percpu.h
 * amd64 per-CPU base register: the GS base of every CPU points at its own
 * cpu_t (arch_percpu_init()), so CPU, its id and THREAD are each one
 * %gs-relative load. Included by cpu.h after cpu_t is defined.
 */
#ifndef KERN_ARCH_PERCPU_H_
#define KERN_ARCH_PERCPU_H_

/** Returns the current CPU. Meaningful when the caller cannot migrate. */
static inline cpu_t *cpu_current(void)
{
	cpu_t *c;
	asm volatile ("movq %%gs:0, %0" : "=r" (c));
	return c;
}

/**
 * Id of the current CPU: one %gs-relative load. Any context; the thread may
 * be on another CPU by the time it uses the value unless preemption is
 * disabled.
 */
static inline size_t cpu_current_id(void)
{
	/* movl zero-extends into the 64-bit register: no extra instruction. */
	size_t id;
	asm volatile ("movl %%gs:%c1, %k0" : "=r" (id) :
	    "i" (__builtin_offsetof(cpu_t, id)));
	return id;
}

/**
 * The thread running on this CPU (NULL before the scheduler starts): one
 * %gs-relative load, so a migration cannot fall between finding the CPU and
 * reading its thread. Any context.
 */
static inline struct thread *arch_thread_current(void)
{
	struct thread *t;
	asm volatile ("movq %%gs:%c1, %0" : "=r" (t) :
	    "i" (__builtin_offsetof(cpu_t, thread)));
	return t;
}

/**
 * Called by the scheduler after it set cpu_t.thread to @a t (interrupts
 * disabled). amd64 reads THREAD through the GS base: nothing to do.
 */
static inline void arch_thread_current_set(struct thread *t)
{
	(void) t;
}

/**
 * Raises the running CPU's preemption-disable count by one, in one
 * %gs-relative instruction: finding the CPU and the increment cannot be split
 * by a migration (with the count at 0, a timer interrupt between the two may
 * preempt and move the thread, and the increment would land on the old CPU).
 * An interrupt cannot split one instruction. Any context.
 */
static inline void cpu_preemption_inc(void)
{
	asm volatile ("addl $1, %%gs:%c0"
	    :: "i" (__builtin_offsetof(cpu_t, preemption_disabled))
	    : "memory", "cc");
}

#endif
