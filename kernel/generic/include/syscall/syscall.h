/** @file syscall.h
 * The system-call entry of the generic kernel (syscall/syscall.c), called by
 * each architecture's system-call trap path.
 */
#ifndef KERN_SYSCALL_SYSCALL_H_
#define KERN_SYSCALL_SYSCALL_H_

#include <arch/interrupt.h>

/**
 * Runs the system call of @a istate: the number and arguments come from the
 * architecture's registers (istate_syscall_nr(), istate_syscall_arg()), the
 * result goes back through istate_set_retval() (an unknown number: ENOTSUP).
 * Called by the architecture's system-call entry with interrupts enabled on
 * the thread's kernel stack; returns with interrupts disabled and
 * task_user_return() done.
 */
void syscall_dispatch(istate_t *istate);

#endif
