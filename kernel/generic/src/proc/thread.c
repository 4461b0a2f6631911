/** @file thread.c
 * Kernel threads: creation, start, wiring, join/detach, exit, sleep.
 *
 * Life cycle: thread_create (ENTERING) -> thread_start (READY) -> RUNNING <->
 * READY/SLEEPING -> thread_exit (EXITING) -> the next thread on that CPU marks it
 * LINGERING, wakes joiners and drops the running reference. The thread structure
 * and stack are freed when the last of the two references (creator, running) is
 * dropped: by thread_join()/thread_detach() or by the exit.
 */
#include <debug/kasan.h>
#include <proc/thread.h>
#include <proc/uctx.h>
#include <proc/scheduler.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <time/delay.h>
#include <lib/str.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <errno.h>


/** Every thread (idle ones too); protected by threads_lock. */
static list_t threads_list = LIST_INITIALIZER(threads_list);
static irq_spinlock_t threads_lock = IRQ_SPINLOCK_INITIALIZER("threads");
static size_t threads_n;
/** Next thread id; atomics. */
static uint64_t next_tid = 1;

#define STACK_CANARY 0x57ac6ca7a11c0deUL

const char *thread_state_name(thread_state_t s)
{
	switch (s) {
	case THREAD_ENTERING:
		return "entering";
	case THREAD_READY:
		return "ready";
	case THREAD_RUNNING:
		return "running";
	case THREAD_SLEEPING:
		return "sleeping";
	case THREAD_EXITING:
		return "exiting";
	case THREAD_LINGERING:
		return "lingering";
	}
	return "?";
}

void thread_init(void)
{
}

void thread_register_idle(thread_t *t)
{
	irq_spinlock_lock(&threads_lock, true);
	list_append(&t->threads_link, &threads_list);
	threads_n++;
	irq_spinlock_unlock(&threads_lock, true);
}

void thread_main_entry(void)
{
	scheduler_finish_switch_new();
	thread_t *t = THREAD;
	interrupts_enable();
	t->func(t->arg);
	thread_exit();
}

thread_t *thread_create(thread_func_t func, void *arg, const char *name,
    thread_flags_t flags)
{
	thread_t *t = malloc(sizeof(thread_t));
	if (!t)
		return NULL;
	uintptr_t stack = frame_alloc(THREAD_STACK_SIZE / PAGE_SIZE, FRAME_NONE);
	if (!stack) {
		free(t);
		return NULL;
	}
	memset(t, 0, sizeof(*t));
	if (flags & THREAD_FLAG_USER) {
		t->uctx = uctx_create();
		if (!t->uctx) {
			frame_free(stack, THREAD_STACK_SIZE / PAGE_SIZE);
			free(t);
			return NULL;
		}
	}
	t->kstack = PA2KA(stack);
	*(uint64_t *) t->kstack = STACK_CANARY;

	t->tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
	str_cpy(t->name, sizeof(t->name), name ? name : "?");
	t->func = func;
	t->arg = arg;
	irq_spinlock_initialize(&t->lock, "thread");
	t->state = THREAD_ENTERING;
	t->priority = 0;
	t->cpu = NULL;
	t->wired = false;
	link_initialize(&t->rq_link);
	link_initialize(&t->wq_link);
	waitq_initialize(&t->join_wq);
	atomic_set(&t->refcount, 2);

	/* The first context_switch to it starts thread_entry_asm. */
	context_init(&t->ctx, (uintptr_t) t->kstack + THREAD_STACK_SIZE);

	irq_spinlock_lock(&threads_lock, true);
	list_append(&t->threads_link, &threads_list);
	threads_n++;
	irq_spinlock_unlock(&threads_lock, true);
	return t;
}

void thread_wire(thread_t *t, cpu_t *cpu)
{
	irq_spinlock_lock(&t->lock, true);
	assert(t->state == THREAD_ENTERING);
	t->cpu = cpu;
	t->wired = true;
	irq_spinlock_unlock(&t->lock, true);
}

void thread_start(thread_t *t)
{
	assert(t->state == THREAD_ENTERING);
	thread_ready(t);
}

thread_t *thread_run(thread_func_t func, void *arg, const char *name)
{
	thread_t *t = thread_create(func, arg, name, THREAD_FLAG_NONE);
	if (t)
		thread_start(t);
	return t;
}

static void thread_release(thread_t *t)
{
	if (atomic_predec(&t->refcount) > 0)
		return;
	irq_spinlock_lock(&threads_lock, true);
	list_remove(&t->threads_link);
	threads_n--;
	irq_spinlock_unlock(&threads_lock, true);
#ifdef CONFIG_KASAN
	/* Poisoned as an exited thread's stack and quarantined. */
	(void) kasan_stack_free(KA2PA(t->kstack), THREAD_STACK_SIZE / PAGE_SIZE);
#else
	frame_free(KA2PA(t->kstack), THREAD_STACK_SIZE / PAGE_SIZE);
#endif
	if (t->uctx)
		uctx_destroy(t->uctx);
	free(t);
}

/** Called by the scheduler on the CPU that switched away from an exiting @a t. */
void thread_finish_exit(thread_t *t)
{
	if (*(uint64_t *) t->kstack != STACK_CANARY)
		panic("Kernel stack overflow in thread %lu '%s'", t->tid, t->name);
	__atomic_store_n(&t->state, THREAD_LINGERING, __ATOMIC_SEQ_CST);
	waitq_wake_all(&t->join_wq);
	thread_release(t);
}

errno_t thread_join_timeout(thread_t *t, uint64_t usec)
{
	assert(t != THREAD);
	assert(!__atomic_load_n(&t->detached, __ATOMIC_RELAXED));
	uint64_t deadline = usec ? uptime_us() + usec : 0;
	for (;;) {
		ipl_t ipl = waitq_sleep_prepare(&t->join_wq);
		if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == THREAD_LINGERING) {
			waitq_sleep_cancel(&t->join_wq, ipl);
			break;
		}
		uint64_t left = 0;
		if (deadline) {
			uint64_t now = uptime_us();
			if (now >= deadline) {
				waitq_sleep_cancel(&t->join_wq, ipl);
				return ETIMEOUT;
			}
			left = deadline - now;
		}
		(void) waitq_sleep_finish(&t->join_wq, ipl, left, SYNCH_FLAGS_NONE);
	}
	thread_release(t);
	return EOK;
}

errno_t thread_join(thread_t *t)
{
	return thread_join_timeout(t, SYNCH_NO_TIMEOUT);
}

void thread_detach(thread_t *t)
{
	__atomic_store_n(&t->detached, true, __ATOMIC_RELAXED);
	thread_release(t);
}

void thread_exit(void)
{
	thread_t *t = THREAD;
	/* A thread may not exit holding a spinlock (or with preemption off). */
	assert_verbose(CPU->preemption_disabled == 0,
	    "thread exits holding a spinlock or with preemption disabled");
	assert(!interrupts_disabled());
	/* RCU closes a reader section left open, the address space is left. */
	sched_hooks_thread_exits(t);
	interrupts_disable();
	irq_spinlock_lock(&t->lock, false);
	t->state = THREAD_EXITING;
	irq_spinlock_unlock(&t->lock, false);
	scheduler();
	panic("exited thread %lu was scheduled again", t->tid);
}

void thread_yield(void)
{
	ipl_t ipl = interrupts_disable();
	scheduler();
	interrupts_restore(ipl);
}

void thread_usleep(uint64_t usec)
{
	waitq_t wq;
	waitq_initialize(&wq);
	(void) waitq_sleep_timeout(&wq, usec ? usec : 1, SYNCH_FLAGS_NONE);
}

void thread_sleep(unsigned sec)
{
	thread_usleep((uint64_t) sec * 1000000);
}

size_t thread_count(void)
{
	irq_spinlock_lock(&threads_lock, true);
	size_t n = threads_n;
	irq_spinlock_unlock(&threads_lock, true);
	return n;
}

void threads_print(void)
{
	irq_spinlock_lock(&threads_lock, true);
	printf("  tid  name                 state      prio  cpu  wired     ticks  migr\n");
	list_foreach(&threads_list, l) {
		thread_t *t = list_get_instance(l, thread_t, threads_link);
		printf("%5lu  %-20s %-9s  %4d  %3d  %-5s  %8lu  %4lu\n", t->tid,
		    t->name, thread_state_name(t->state), t->priority,
		    t->cpu ? (int) t->cpu->id : -1, t->wired ? "yes" : "no",
		    t->ticks, t->migrations);
	}
	printf("%zu threads\n", threads_n);
	irq_spinlock_unlock(&threads_lock, true);
}
