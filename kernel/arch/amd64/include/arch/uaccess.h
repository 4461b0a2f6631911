/** @file uaccess.h
 * amd64 user accesses (uaccess.S; the functions are declared by the generic
 * uaccess.h) and their fault handler side (uaccess_fixup.c).
 */
#ifndef KERN_AMD64_UACCESS_H_
#define KERN_AMD64_UACCESS_H_

#include <typedefs.h>
#include <uaccess.h>
#include <arch/interrupt.h>

/**
 * Called by the page fault handler for a fault it could not resolve: if the
 * faulting instruction is a user access of this file, redirects @a istate to
 * its fixup (which returns EFAULT) and returns true. Interrupts disabled.
 */
bool uaccess_fixup(istate_t *istate);

/** True when @a istate's rip is one of the user accesses of uaccess.S. */
bool uaccess_fixup_is_access(const istate_t *istate);

#endif
