/** @file atomic.h
 * Atomic operations used by the kernel.
 *
 * Thin wrappers over the GCC `__atomic` builtins. Every wrapper names its memory
 * order: the plain forms are sequentially consistent (they are what most callers
 * want), the `_explicit` ones take a `__ATOMIC_*` order. No `volatile` is used
 * for synchronization anywhere in the kernel: shared variables are accessed
 * through these functions.
 *
 * A seq_cst RMW or store is NOT a full barrier for the plain (and relaxed)
 * accesses around it in C11, and not on arm64 either: there it is an
 * LDAXR/STLXR loop or an STLR, and a later load may be satisfied before its
 * store is visible (store-load reordering; docs/RCU.md, "arm64"). On amd64
 * the same operations are full barriers (arch/barrier.h). Code that
 * needs a full barrier says so: memory_barrier() anywhere, or
 * memory_barrier_after_atomic() right after a seq_cst RMW or store (free on
 * amd64, `dmb ish` on arm64; arch/barrier.h).
 *
 * All functions may be called from any context (interrupts disabled or not, any
 * CPU) and never block.
 */
#ifndef KERN_ATOMIC_H_
#define KERN_ATOMIC_H_

#include <typedefs.h>
#include <arch/barrier.h>

/** An atomic counter (a machine word). Protected by: its atomic operations. */
typedef struct {
	size_t count;
} atomic_t;

/** Signed variant of atomic_t, used where counters may go negative. */
typedef struct {
	ssize_t count;
} atomic_signed_t;

#define ATOMIC_INIT(v) { .count = (v) }

/** Atomically stores @a v (sequentially consistent). */
static inline void atomic_set(atomic_t *a, size_t v)
{
	__atomic_store_n(&a->count, v, __ATOMIC_SEQ_CST);
}

/** Atomically loads the value (sequentially consistent). */
static inline size_t atomic_get(atomic_t *a)
{
	return __atomic_load_n(&a->count, __ATOMIC_SEQ_CST);
}

/** Adds @a v and returns the value before the addition. */
static inline size_t atomic_fetch_add(atomic_t *a, size_t v)
{
	return __atomic_fetch_add(&a->count, v, __ATOMIC_SEQ_CST);
}

/** Subtracts @a v and returns the value before the subtraction. */
static inline size_t atomic_fetch_sub(atomic_t *a, size_t v)
{
	return __atomic_fetch_sub(&a->count, v, __ATOMIC_SEQ_CST);
}

/** Adds @a v and returns the new value. */
static inline size_t atomic_add(atomic_t *a, size_t v)
{
	return __atomic_add_fetch(&a->count, v, __ATOMIC_SEQ_CST);
}

/** Subtracts @a v and returns the new value. */
static inline size_t atomic_sub(atomic_t *a, size_t v)
{
	return __atomic_sub_fetch(&a->count, v, __ATOMIC_SEQ_CST);
}

/** Increments and returns the new value. */
static inline size_t atomic_preinc(atomic_t *a)
{
	return atomic_add(a, 1);
}

/** Increments and returns the old value. */
static inline size_t atomic_postinc(atomic_t *a)
{
	return atomic_fetch_add(a, 1);
}

/** Decrements and returns the new value. */
static inline size_t atomic_predec(atomic_t *a)
{
	return atomic_sub(a, 1);
}

/** Decrements and returns the old value. */
static inline size_t atomic_postdec(atomic_t *a)
{
	return atomic_fetch_sub(a, 1);
}

/** Increments (no value returned). */
static inline void atomic_inc(atomic_t *a)
{
	(void) atomic_add(a, 1);
}

/** Decrements (no value returned). */
static inline void atomic_dec(atomic_t *a)
{
	(void) atomic_sub(a, 1);
}

/** Exchanges the value for @a v and returns the old one. */
static inline size_t atomic_swap(atomic_t *a, size_t v)
{
	return __atomic_exchange_n(&a->count, v, __ATOMIC_SEQ_CST);
}

/**
 * Compare-and-swap. If the value equals @a expected, stores @a desired.
 * @return the value found before the operation (== @a expected on success).
 */
static inline size_t atomic_cas(atomic_t *a, size_t expected, size_t desired)
{
	__atomic_compare_exchange_n(&a->count, &expected, desired, false,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expected;
}

/** Signed load (sequentially consistent). */
static inline ssize_t atomic_signed_get(atomic_signed_t *a)
{
	return __atomic_load_n(&a->count, __ATOMIC_SEQ_CST);
}

/** Signed add; returns the new value. */
static inline ssize_t atomic_signed_add(atomic_signed_t *a, ssize_t v)
{
	return __atomic_add_fetch(&a->count, v, __ATOMIC_SEQ_CST);
}

/**
 * Compare-and-swap on a pointer. If `*ptr == expected`, stores @a desired.
 * @return the pointer found before the operation (== @a expected on success).
 */
static inline void *atomic_cas_ptr(void **ptr, void *expected, void *desired)
{
	__atomic_compare_exchange_n(ptr, &expected, desired, false,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expected;
}

/** Exchanges the pointer for @a v and returns the old one. */
static inline void *atomic_swap_ptr(void **ptr, void *v)
{
	return __atomic_exchange_n(ptr, v, __ATOMIC_SEQ_CST);
}

/** Atomically loads a pointer (sequentially consistent). */
static inline void *atomic_load_ptr(void **ptr)
{
	return __atomic_load_n(ptr, __ATOMIC_SEQ_CST);
}

/** Atomically stores a pointer (sequentially consistent). */
static inline void atomic_store_ptr(void **ptr, void *v)
{
	__atomic_store_n(ptr, v, __ATOMIC_SEQ_CST);
}

/**
 * Full memory barrier: no load or store of this CPU is reordered across it
 * (amd64: a locked instruction; arm64: `dmb ish`).
 */
static inline void memory_barrier(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/**
 * Full memory barrier right after a seq_cst RMW or a seq_cst store (Linux's
 * smp_mb__after_atomic()): together with that operation, no earlier access is
 * reordered after it and no later access before it. On amd64 the locked
 * instruction or xchg already is one, and this emits nothing (a compiler
 * barrier); on arm64 it is `dmb ish`, which forbids the store-load
 * reordering that STLR and the LDAXR/STLXR loop allow.
 */
static inline void memory_barrier_after_atomic(void)
{
	arch_barrier_after_atomic();
}

/** Compiler barrier: no instruction reordering by the compiler across it. */
static inline void compiler_barrier(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

#endif
