/** @file uaccess.h
 * Accesses to user memory (below USER_SPACE_END) from the kernel that return
 * an error instead of panicking when the access cannot be satisfied: no area
 * at the address (it may be destroyed concurrently), an access the area does
 * not permit, or no memory for the page. A fault that can be resolved (the
 * page is mapped by the fault handler) is transparent.
 *
 * Context: thread context with the address space to access entered
 * (as_enter()); interrupts enabled; may fault (and the fault handler may
 * allocate a frame). Not inside a spinlock.
 *
 * The user addresses are `__user` pointers (compiler.h): sparse (`make
 * check`) reports any other dereference of one. A system call argument that
 * is a user address becomes one with uptr(); these functions convert it back
 * with `__force`.
 *
 * Every architecture implements these (amd64: uaccess.S; arm64: uaccess.c,
 * uaccess_asm.S); its arch/uaccess.h includes this header and adds the
 * fault handler's side (the fix-up).
 */
#ifndef KERN_UACCESS_H_
#define KERN_UACCESS_H_

#include <typedefs.h>

/**
 * The user pointer that a system call passes as the integer @a addr (an
 * argument register). Never dereferenceable; for the functions below.
 */
#define uptr(addr) ((void __user *) (uintptr_t) (addr))

/**
 * Stores @a val to the 8-byte aligned user address @a uaddr.
 * @return EOK, or EFAULT if the access faulted and could not be resolved.
 */
int uaccess_store64(uint64_t __user *uaddr, uint64_t val);

/**
 * Loads the 8-byte aligned user word at @a uaddr into *@a out (a kernel
 * address). @return EOK, or EFAULT (then *out is unchanged).
 */
int uaccess_load64(const uint64_t __user *uaddr, uint64_t *out);

/**
 * Copies @a n bytes from kernel @a ksrc to user @a udst. The whole range must
 * lie below USER_SPACE_END (checked). @return EOK or EFAULT (a prefix may have
 * been written).
 */
int copy_to_user(void __user *udst, const void *ksrc, size_t n);

/**
 * Copies @a n bytes from user @a usrc to kernel @a kdst (range checked like
 * copy_to_user()). @return EOK or EFAULT (@a kdst partly written).
 */
int copy_from_user(void *kdst, const void __user *usrc, size_t n);

#endif
