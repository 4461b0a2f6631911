/** @file thread.c
 * Threads (SYS_THREAD_*), the futex mutex and condition variable.
 */
#include <sys.h>
#include <stdlib.h>
#include <thread.h>

#define STACK_SIZE (64 * 1024)

struct uthread {
	int (*fn)(void *);
	void *arg;
	long tid;
	uintptr_t stack;
};

void __thread_start(void);
void __thread_main(uthread_t *t);
void __thread_main(uthread_t *t)
{
	sys_thread_exit(t->fn(t->arg));
}

uthread_t *thread_create(int (*fn)(void *), void *arg)
{
	uthread_t *t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	long stack = sys_area_create(0, STACK_SIZE, AREA_READ | AREA_WRITE);
	if (stack < 0) {
		free(t);
		return NULL;
	}
	t->fn = fn;
	t->arg = arg;
	t->stack = (uintptr_t) stack;
	t->tid = sys_thread_create((void *) __thread_start,
	    (void *) (stack + STACK_SIZE), t);
	if (t->tid < 0) {
		sys_area_destroy(t->stack);
		free(t);
		return NULL;
	}
	return t;
}

int thread_join(uthread_t *t)
{
	int status = -1;
	(void) sys_thread_join(t->tid, &status);
	sys_area_destroy(t->stack);
	free(t);
	return status;
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
