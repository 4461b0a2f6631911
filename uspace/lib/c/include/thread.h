/** @file thread.h
 * Threads, per-thread data, a futex-based mutex and condition variable.
 *
 * Thread pointer. User threads have no TLS register on amd64 (the FS/GS
 * bases stay 0: FSGSBASE is off); arm64's TPIDR_EL0 is per thread but not
 * used here, to keep one scheme for both. So lib/c finds the running thread's
 * data from its stack pointer: every thread's stack is an area of
 * USER_STACK_SIZE bytes aligned to USER_STACK_SIZE (abi/syscall.h; the
 * loader's main stack too), and its lowest bytes hold the thread's control
 * block (thread_tcb_t). thread_tcb() is therefore two instructions and needs
 * no system call. The stack grows down towards the block: a thread that
 * overflows its 256 KiB stack corrupts its own control block (as it would
 * corrupt whatever lies below any other stack). Code running on another
 * stack (none in lib/c) must not call thread_tcb().
 */
#ifndef LIBC_THREAD_H_
#define LIBC_THREAD_H_

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <abi/syscall.h>

typedef struct uthread uthread_t;

/** Per-thread data keys (thread_key_create()). */
#define THREAD_KEYS 8

/**
 * A thread's control block, at the base of its stack area. Zero when the
 * thread starts (the area is fresh anonymous memory). Only the thread
 * itself reads and writes it, except `rcu`, whose owner is the RCU library
 * (see there).
 */
typedef struct thread_tcb {
	/** Reserved for the user RCU of libcht (uspace/lib/cht_rcu, OS build). */
	unsigned char rcu[64] __attribute__((aligned(64)));
	/** Values of the per-thread data keys. */
	void *key_value[THREAD_KEYS];
	/** The thread (NULL for the main thread). */
	uthread_t *self;
} thread_tcb_t;

/** The calling thread's control block (from its stack pointer). */
static inline __attribute__((always_inline)) thread_tcb_t *thread_tcb(void)
{
	uintptr_t sp;
#ifdef __aarch64__
	__asm__ ("mov %0, sp" : "=r" (sp));
#else
	__asm__ ("mov %%rsp, %0" : "=r" (sp));
#endif
	return (thread_tcb_t *) (sp & ~(uintptr_t) (USER_STACK_SIZE - 1));
}

/**
 * Starts fn(arg) in a new thread with a USER_STACK_SIZE stack (demand
 * paged). Allocates nothing with malloc (the thread's record lives in its
 * stack area).
 * @return the thread or NULL (out of memory, too many threads).
 */
uthread_t *thread_create(int (*fn)(void *), void *arg);
/** Waits for @a t, frees its stack. @return its result (fn's return value). */
int thread_join(uthread_t *t);

/**
 * Creates a per-thread data key; @a destructor (may be NULL) is called
 * with the thread's non-NULL value when a thread created by thread_create()
 * returns from its function (not for the main thread, whose end ends the
 * task). @return the key (0 .. THREAD_KEYS - 1) or -1 when all are taken.
 */
int thread_key_create(void (*destructor)(void *value));
/** Sets the calling thread's value of @a key (from thread_key_create()). */
static inline void thread_setspecific(int key, void *value)
{
	thread_tcb()->key_value[key] = value;
}

/** Sleeps at least @a ns nanoseconds (a futex wait that times out). */
void thread_sleep_ns(uint64_t ns);

/** Futex mutex (Drepper's three states: 0 free, 1 locked, 2 contended). */
typedef struct {
	uint32_t state;
} mutex_t;
#define MUTEX_INITIALIZER { 0 }
void mutex_lock(mutex_t *m);
void mutex_unlock(mutex_t *m);

/** Condition variable over a sequence futex. */
typedef struct {
	uint32_t seq;
} condvar_t;
#define CONDVAR_INITIALIZER { 0 }
void condvar_wait(condvar_t *cv, mutex_t *m);
void condvar_signal(condvar_t *cv);
void condvar_broadcast(condvar_t *cv);

#endif
