/** @file userspace.h
 * arm64 user mode (EL0): userspace_enter (vectors.S) erets to EL0; `svc #0`
 * (number in x8, arguments x0-x4, result x0) and EL0 faults return through
 * arm64_exception() (arch.c). The programs are linked into the kernel image
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

/**
 * Lets the calling context access user pages directly or not (PAN would be
 * the counterpart of SMAP; not used: the Cortex-A72 has no PAN). No-op.
 */
void userspace_set_direct_access(bool allow);

#endif
