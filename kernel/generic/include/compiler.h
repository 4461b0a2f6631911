/** @file compiler.h
 * Pointer annotations for the static checker (sparse, `make check`).
 *
 * A pointer into user space and an RCU-protected pointer each live in an
 * address space of their own, so that sparse reports any use that bypasses
 * the accessors (docs/ARCHITECTURE.md, "Checked pointers"):
 *
 * - `T __user *p`: a user address. Dereferencing it, or passing it where a
 *   kernel pointer is expected, is reported; only copy_from_user(),
 *   copy_to_user() and uaccess_load64()/uaccess_store64() (uaccess.h)
 *   take it, and they convert it with `__force` internally.
 * - `T __rcu *p`: a pointer published under RCU. Read it only with
 *   rcu_access() (inside a reader section) or rcu_access_owned() (by the one
 *   updater), write it with rcu_assign() or rcu_init_ptr() (synch/rcu.h).
 * - `__force` marks a deliberate conversion between address spaces (inside
 *   those accessors, nowhere else); `__kernel` names the ordinary one.
 *
 * The names are defined only when the checker runs (sparse defines
 * __CHECKER__); for GCC they are empty, so they change no generated code.
 * Self-contained (no other include), so that code shared with user space
 * (the CHT) can use it or define the same empty names in its environment.
 */
#ifndef KERN_COMPILER_H_
#define KERN_COMPILER_H_

#ifdef __CHECKER__
/** A user-space address: not dereferenceable, its own address space. */
#define __user    __attribute__((noderef, address_space(__user)))
/** The kernel's own address space (the default; for explicit casts). */
#define __kernel  __attribute__((address_space(0)))
/** An RCU-protected pointer: read and written only through the accessors. */
#define __rcu     __attribute__((noderef, address_space(__rcu)))
/** A deliberate conversion between address spaces (accessors only). */
#define __force   __attribute__((force))
#else
#define __user
#define __kernel
#define __rcu
#define __force
#endif

#endif
