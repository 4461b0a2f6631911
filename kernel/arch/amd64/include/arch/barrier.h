/** @file barrier.h
 * amd64 memory-barrier hooks of generic atomic.h.
 *
 * x86-64 is TSO: the only reordering the hardware does is a store followed by
 * a later load (store buffering). A lock-prefixed read-modify-write (what GCC
 * emits for every __atomic RMW: lock xadd, lock cmpxchg, lock or ...) and an
 * xchg (GCC's __ATOMIC_SEQ_CST store) drain the store buffer: they are full
 * barriers for the surrounding plain accesses already. So the full barrier
 * generic code asks for right after such an operation is only a compiler
 * barrier here (no instruction: amd64's code is unchanged by it).
 */
#ifndef KERN_ARCH_BARRIER_H_
#define KERN_ARCH_BARRIER_H_

/**
 * Full barrier after a seq_cst RMW or a seq_cst store (atomic.h,
 * memory_barrier_after_atomic()). Forbids the compiler only from moving
 * accesses across it; the hardware ordering comes from the locked
 * instruction or xchg just before.
 */
static inline void arch_barrier_after_atomic(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

#endif
