/** @file barrier.h
 * arm64 memory-barrier hooks of generic atomic.h.
 *
 * AArch64 is weakly ordered (other-multi-copy atomic): every pair of accesses
 * to different locations may be reordered unless a dependency, an
 * acquire/release or a barrier orders them. GCC compiles a __ATOMIC_SEQ_CST
 * RMW to an LDAXR/STLXR loop (ARMv8.0, no LSE; LDADDAL and friends with LSE)
 * and a seq_cst store to STLR: acquire on the load half, release on the
 * store half, and nothing more. A plain store before the RMW may become
 * visible after it, and a plain load after the RMW (or after the STLR) may be
 * satisfied before the store half is visible. So where generic code needs
 * the RMW or store to be a full barrier, as x86's locked instructions are, it
 * must say so: this hook is a `dmb ish`.
 */
#ifndef KERN_ARCH_BARRIER_H_
#define KERN_ARCH_BARRIER_H_

/**
 * Full barrier after a seq_cst RMW or a seq_cst store (atomic.h,
 * memory_barrier_after_atomic()): `dmb ish` (__atomic_thread_fence
 * (__ATOMIC_SEQ_CST)). Forbids any later load or store of this CPU from
 * being performed before the atomic operation's store (and everything
 * before it) is visible to every CPU of the inner shareable domain: the
 * store-load reordering STLR/STLXR allow.
 */
static inline void arch_barrier_after_atomic(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif
