/** @file uaccess.h
 * arm64 fault-tolerant user accesses: the address is checked against
 * USER_SPACE_END, then accessed; a fault inside one of these accesses is
 * resolved by the generic fault path or returns EFAULT (uaccess.c,
 * uaccess_asm.S).
 */
#ifndef KERN_ARM64_UACCESS_H_
#define KERN_ARM64_UACCESS_H_

#include <typedefs.h>
#include <arch/interrupt.h>

/**
 * A user address held in an integer (a system-call argument) as a `__user`
 * pointer (compiler.h): never dereferenceable, for the functions below,
 * which convert it back with `__force` (sparse checks it: `make check`).
 */
#define uptr(addr) ((void __user *) (uintptr_t) (addr))

/** Stores @a val at user address @a uaddr. @return EOK or EFAULT. */
int uaccess_store64(uint64_t __user *uaddr, uint64_t val);
/** Loads *@a uaddr into *@a out. @return EOK or EFAULT. */
int uaccess_load64(const uint64_t __user *uaddr, uint64_t *out);
/** Copies @a n bytes to user space. @return EOK or EFAULT. */
int copy_to_user(void __user *udst, const void *ksrc, size_t n);
/** Copies @a n bytes from user space. @return EOK or EFAULT. */
int copy_from_user(void *kdst, const void __user *usrc, size_t n);

/**
 * If @a istate faulted in one of the user accesses, makes it resume at the
 * EFAULT return and @return true. Abort handler, kernel mode.
 */
bool uaccess_fixup(istate_t *istate);

#endif
