/** @file thread.h
 * Threads, a futex-based mutex and condition variable.
 */
#ifndef LIBC_THREAD_H_
#define LIBC_THREAD_H_

#include <stdint.h>
#include <stdbool.h>

typedef struct uthread uthread_t;

/**
 * Starts fn(arg) in a new thread with a 64 KiB stack.
 * @return the thread or NULL (out of memory, too many threads).
 */
uthread_t *thread_create(int (*fn)(void *), void *arg);
/** Waits for @a t, frees it. @return its result (fn's return value). */
int thread_join(uthread_t *t);

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
