/** @file thread.c
 * Threads (SYS_THREAD_*), per-thread data keys, the futex mutex and
 * condition variable.
 *
 * A thread's stack is an area of USER_STACK_SIZE bytes aligned to that size
 * (thread.h, "Thread pointer"): its base holds the control block
 * (thread_tcb_t) and right above it the thread's record (struct uthread), so
 * creating a thread allocates nothing but the area.
 */
#include <sys.h>
#include <stdlib.h>
#include <thread.h>
#include "crt.h"

struct uthread {
	int (*fn)(void *);
	void *arg;
	long tid;
	uintptr_t stack;
};

_Static_assert(sizeof(thread_tcb_t) + sizeof(struct uthread) <= 4096,
    "control block and record fit the lowest stack page");

/** Destructors of the keys; a slot is claimed once by thread_key_create(). */
static void (*key_dtor[THREAD_KEYS])(void *);
/** Keys handed out. Atomics (relaxed: claims are unique by the RMW). */
static unsigned key_count;

void __thread_main(uthread_t *t)
{
	int status = t->fn(t->arg);
	/* As POSIX: repeat while destructors set new values (bounded). */
	thread_tcb_t *tcb = thread_tcb();
	for (int round = 0; round < 4; round++) {
		bool any = false;
		unsigned n = __atomic_load_n(&key_count, __ATOMIC_ACQUIRE);
		for (unsigned k = 0; k < n && k < THREAD_KEYS; k++) {
			void *v = tcb->key_value[k];
			void (*d)(void *) = __atomic_load_n(&key_dtor[k],
			    __ATOMIC_ACQUIRE);
			if (v && d) {
				tcb->key_value[k] = NULL;
				d(v);
				any = true;
			}
		}
		if (!any)
			break;
	}
	sys_thread_exit(status);
}

/**
 * Makes a stack area aligned to its size: reserves twice the size anywhere
 * (the kernel's bump allocation never hands that range out again), then
 * replaces it by the aligned half-size area inside it.
 * @return the base or a negative error code.
 */
static long stack_area_create(void)
{
	long r = sys_area_create(0, 2 * USER_STACK_SIZE, AREA_READ);
	if (r < 0)
		return r;
	long rc = sys_area_destroy((uintptr_t) r);
	if (rc < 0)
		return rc;
	uintptr_t base = ((uintptr_t) r + USER_STACK_SIZE - 1) &
	    ~(uintptr_t) (USER_STACK_SIZE - 1);
	return sys_area_create(base, USER_STACK_SIZE, AREA_READ | AREA_WRITE);
}

uthread_t *thread_create(int (*fn)(void *), void *arg)
{
	long stack = stack_area_create();
	if (stack < 0)
		return NULL;
	thread_tcb_t *tcb = (thread_tcb_t *) stack;
	uthread_t *t = (uthread_t *) (tcb + 1);
	t->fn = fn;
	t->arg = arg;
	t->stack = (uintptr_t) stack;
	tcb->self = t;
	/* The kernel's thread start orders these stores before the thread. */
	t->tid = sys_thread_create((void *) __thread_start,
	    (void *) (stack + USER_STACK_SIZE), t);
	if (t->tid < 0) {
		sys_area_destroy((uintptr_t) stack);
		return NULL;
	}
	return t;
}

int thread_join(uthread_t *t)
{
	int status = -1;
	uintptr_t stack = t->stack;
	(void) sys_thread_join(t->tid, &status);
	sys_area_destroy(stack);
	return status;
}

int thread_key_create(void (*destructor)(void *value))
{
	unsigned k = __atomic_fetch_add(&key_count, 1, __ATOMIC_RELAXED);
	if (k >= THREAD_KEYS) {
		__atomic_fetch_sub(&key_count, 1, __ATOMIC_RELAXED);
		return -1;
	}
	__atomic_store_n(&key_dtor[k], destructor, __ATOMIC_RELEASE);
	return (int) k;
}

void thread_sleep_ns(uint64_t ns)
{
	uint32_t word = 0;
	long t0 = sys_clock_ns();
	if (ns == 0) {
		(void) sys_yield();
		return;
	}
	/* Nobody wakes the word: each wait ends by its timeout. */
	for (;;) {
		long now = sys_clock_ns();
		if (now < 0 || (uint64_t) (now - t0) >= ns)
			return;
		(void) sys_futex_wait(&word, 0, ns - (uint64_t) (now - t0));
	}
}

static uint32_t cas32(uint32_t *p, uint32_t expected, uint32_t desired)
{
	__atomic_compare_exchange_n(p, &expected, desired, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	return expected;
}

void mutex_lock(mutex_t *m)
{
	uint32_t c = cas32(&m->state, 0, 1);
	if (c == 0)
		return;
	if (c != 2)
		c = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		(void) sys_futex_wait(&m->state, 2, 0);
		c = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
	}
}

void mutex_unlock(mutex_t *m)
{
	if (__atomic_fetch_sub(&m->state, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&m->state, 0, __ATOMIC_RELEASE);
		(void) sys_futex_wake(&m->state, 1);
	}
}

void condvar_wait(condvar_t *cv, mutex_t *m)
{
	uint32_t seq = __atomic_load_n(&cv->seq, __ATOMIC_RELAXED);
	mutex_unlock(m);
	(void) sys_futex_wait(&cv->seq, seq, 0);
	mutex_lock(m);
}

void condvar_signal(condvar_t *cv)
{
	__atomic_fetch_add(&cv->seq, 1, __ATOMIC_RELEASE);
	(void) sys_futex_wake(&cv->seq, 1);
}

void condvar_broadcast(condvar_t *cv)
{
	__atomic_fetch_add(&cv->seq, 1, __ATOMIC_RELEASE);
	(void) sys_futex_wake(&cv->seq, TASK_THREADS_MAX);
}
