/** @file uaccess.h
 * arm64 fault-tolerant user accesses (declared by the generic uaccess.h):
 * the address is checked against USER_SPACE_END, then accessed; a fault
 * inside one of these accesses is resolved by the generic fault path or
 * returns EFAULT (uaccess.c, uaccess_asm.S).
 */
#ifndef KERN_ARM64_UACCESS_H_
#define KERN_ARM64_UACCESS_H_

#include <typedefs.h>
#include <uaccess.h>
#include <arch/interrupt.h>

/**
 * If @a istate faulted in one of the user accesses, makes it resume at the
 * EFAULT return and @return true. Abort handler, kernel mode.
 */
bool uaccess_fixup(istate_t *istate);

#endif
