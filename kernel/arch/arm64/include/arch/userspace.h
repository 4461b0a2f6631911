/** @file userspace.h
 * arm64 user mode (EL0): userspace_enter (vectors.S) erets to EL0; `svc #0`
 * (number in x8, arguments x0-x4, result x0) and EL0 faults return through
 * arm64_exception() (exception.c). The programs are linked into the kernel image
 * (Makefile: progimage.S).
 */
#ifndef KERN_ARCH_USERSPACE_H_
#define KERN_ARCH_USERSPACE_H_

#include <typedefs.h>
#include <arch/interrupt.h>

/** Sets the kernel stack of an entry from EL0 (SP_EL1 is per thread already). */
void userspace_set_kstack(uintptr_t top);

/** Leaves for EL0 at @a pc with stack @a sp, x0 = @a arg0, x1 = @a arg1. */
NO_RETURN void userspace_enter(uintptr_t pc, uintptr_t sp, uint64_t arg0,
    uint64_t arg1);

/** True when @a istate was saved on an entry from EL0 (SPSR.M[3:0] == 0). */
static inline bool istate_from_user(const istate_t *istate)
{
	return (istate->spsr & 0xf) == 0;
}

/** SPSR_EL1.PAN: the interrupted context ran with PSTATE.PAN set. */
#define SPSR_PAN (1UL << 22)

/**
 * Sets (@a on) or clears PSTATE.PAN: `msr pan, #imm`, encoded by hand
 * (ARMv8.1; the kernel is built for armv8-a). UNDEFINED on a CPU without
 * PAN: callers check userspace_pan_enabled(). Takes effect for the next
 * instruction (a PSTATE write by MSR immediate needs no ISB).
 */
static inline void pan_set(bool on)
{
	if (on)
		asm volatile (".inst 0xd500419f" ::: "memory");  /* msr pan, #1 */
	else
		asm volatile (".inst 0xd500409f" ::: "memory");  /* msr pan, #0 */
}

/**
 * Enables PAN on the calling CPU if it has it (ID_AA64MMFR1_EL1.PAN): clears
 * SCTLR_EL1.SPAN (PAN set on every exception to EL1) and sets PSTATE.PAN.
 * Each CPU at boot, from arch_percpu_init().
 */
void userspace_pan_init_cpu(void);

/** True when the CPU supports and the kernel enabled PAN. */
bool userspace_pan_enabled(void);

/**
 * With PAN: lets the calling context access user pages directly (clears
 * PSTATE.PAN) or forbids it (sets it). Without PAN nothing happens. Kernel
 * threads that entered a user address space (as_enter(): tests, benchmarks)
 * touch its pages directly; user threads never do (copy_from_user()).
 * Interrupts disabled (scheduler hook) or the calling thread's own state.
 */
void userspace_set_direct_access(bool allow);

#endif
