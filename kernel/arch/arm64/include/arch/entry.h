/** @file entry.h
 * arm64's assembly/C boundary: the C functions the assembly entry code calls
 * and the assembly routines that C calls or whose addresses C installs. Only
 * the files on the two sides include it.
 */
#ifndef KERN_ARCH_ENTRY_H_
#define KERN_ARCH_ENTRY_H_

#include <typedefs.h>
#include <arch/interrupt.h>

/**
 * Handles an exception: called by the vectors (vectors.S) with the
 * registers saved in @a istate and the vector's @a kind (0-3 from EL1 on
 * SP_EL1, 4-7 from EL0 in AArch64, in the order synchronous, IRQ, FIQ,
 * SError; 0x10-0x13 and 0x18-0x1b the vectors never used), on SP_EL1 with
 * interrupts masked (exception.c).
 */
void arm64_exception(istate_t *istate, unsigned kind);

/**
 * C entry of a secondary CPU (start.S): MMU on, on its ap_boot_sp stack,
 * @a idx its index in cpus[] (smp.c). Does not return.
 */
void ap_entry_index(unsigned idx);

/**
 * Stores @a val at the user address @a uaddr (uaccess_asm.S; uaccess.c has
 * checked alignment and range). Returns EOK, or EFAULT through ua_fault.
 */
int ua_store64(uint64_t *uaddr, uint64_t val);

/**
 * Loads the 8 bytes at the user address @a uaddr into @a out
 * (uaccess_asm.S; uaccess.c has checked alignment and range). Returns EOK,
 * or EFAULT through ua_fault (@a out then unchanged).
 */
int ua_load64(const uint64_t *uaddr, uint64_t *out);

/**
 * Copies @a n bytes, one at a time, from @a src to @a dst, either of them
 * user memory whose range uaccess.c has checked (uaccess_asm.S). Returns
 * EOK, or EFAULT through ua_fault.
 */
int ua_copy(void *dst, const void *src, size_t n);

/**
 * Where a faulting user access of uaccess_asm.S resumes (uaccess_fixup()
 * sets ELR to it): sets PSTATE.PAN again and returns EFAULT from the
 * interrupted access. Never called from C.
 */
void ua_fault(void);

#endif
