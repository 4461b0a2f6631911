/** @file asm.h
 * arm64 low-level helpers: the interrupt mask (PSTATE.I through DAIF),
 * idling, the cycle counter (the generic timer's virtual count), system
 * register access. All are safe in any context unless noted.
 */
#ifndef KERN_ARCH_ASM_H_
#define KERN_ARCH_ASM_H_

#include <typedefs.h>

/** DAIF.I: IRQs masked. */
#define DAIF_I (1UL << 7)

#define READ_SYSREG(name) ({ \
	uint64_t _v; \
	asm volatile ("mrs %0, " #name : "=r" (_v)); \
	_v; })
#define WRITE_SYSREG(name, v) \
	asm volatile ("msr " #name ", %0" :: "r" ((uint64_t) (v)) : "memory")

/** Instruction synchronization barrier (system register writes take effect). */
static inline void isb(void)
{
	asm volatile ("isb" ::: "memory");
}

/** What cycle_count() counts, as generic reports name it ("lockstat"). */
#define CYCLE_COUNT_UNIT "generic-timer ticks (CNTVCT_EL0 at CNTFRQ_EL0 Hz)"

/** Spin-loop hint; every busy-wait loop in the kernel calls it. */
static inline void cpu_relax(void)
{
	asm volatile ("yield" ::: "memory");
}

/** Waits for the next interrupt (or event). */
static inline void cpu_halt(void)
{
	asm volatile ("wfi" ::: "memory");
}

/**
 * Enables interrupts and waits for one, without losing a wake-up in between:
 * WFI wakes on a pending interrupt even while it is masked, so masking stays
 * on across the wait and the interrupt is taken right after unmasking.
 */
static inline void cpu_sleep_enable_irq(void)
{
	asm volatile ("wfi\n\tmsr daifclr, #2" ::: "memory");
}

/** Disables interrupts, returns the previous state for interrupts_restore(). */
static inline ipl_t interrupts_disable(void)
{
	ipl_t f = READ_SYSREG(daif);
	asm volatile ("msr daifset, #2" ::: "memory");
	return f;
}

/** Enables interrupts, returns the previous state. */
static inline ipl_t interrupts_enable(void)
{
	ipl_t f = READ_SYSREG(daif);
	asm volatile ("msr daifclr, #2" ::: "memory");
	return f;
}

/** Restores the state saved by interrupts_disable()/interrupts_enable(). */
static inline void interrupts_restore(ipl_t ipl)
{
	WRITE_SYSREG(daif, ipl);
}

/** True when interrupts are disabled on this CPU. */
static inline bool interrupts_disabled(void)
{
	return (READ_SYSREG(daif) & DAIF_I) != 0;
}

/** True when the saved interrupt state @a ipl has interrupts enabled. */
static inline bool ipl_enabled(ipl_t ipl)
{
	return !(ipl & DAIF_I);
}

/**
 * The cycle counter generic code times with: CNTVCT_EL0 (constant rate,
 * CNTFRQ_EL0 Hz, the same on every CPU). The ISB keeps the read from being
 * executed early, ahead of the code it times. Any context.
 */
static inline uint64_t cycle_count(void)
{
	isb();
	return READ_SYSREG(cntvct_el0);
}

/** The caller's frame pointer (x29), for backtrace_print_from(). */
static inline uintptr_t frame_pointer(void)
{
	return (uintptr_t) __builtin_frame_address(0);
}

#endif
