/** @file entry.h
 * amd64's assembly/C boundary: the C functions the assembly entry code calls
 * and the assembly routines that C calls or whose addresses C installs. Only
 * the files on the two sides include it.
 */
#ifndef KERN_ARCH_ENTRY_H_
#define KERN_ARCH_ENTRY_H_

#include <typedefs.h>
#include <arch/interrupt.h>

/**
 * Dispatches an interrupt or exception: called by isr_common (isr.S) with
 * the registers it saved in @a istate, interrupts disabled, on the kernel
 * stack of the interrupted thread (interrupt.c).
 */
void interrupt_dispatch(istate_t *istate);

/**
 * The 64-bit `syscall` entry (syscall.S). Never called from C: userspace.c
 * writes its address to IA32_LSTAR.
 */
void syscall_entry(void);

/**
 * The `syscall` entry of a 32-bit compatibility-mode task (syscall.S),
 * which refuses the call. Never called from C: userspace.c writes its
 * address to IA32_CSTAR.
 */
void syscall_compat_entry(void);

/**
 * Copies @a n bytes from @a src to @a dst with `rep movsb` (uaccess.S);
 * either side may be user memory, whose range the caller has checked
 * (uaccess_fixup.c). Returns EOK, or EFAULT if the access faulted beyond
 * what the fault path resolves. Thread context, may fault.
 */
int uaccess_copy_bytes(void *dst, const void *src, size_t n);

#endif
