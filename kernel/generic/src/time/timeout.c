/** @file timeout.c
 * Per-CPU timeout lists processed by the timer interrupt.
 *
 * A handler runs with its CPU's timeout_lock held and t->cpu still set; only
 * afterwards is t->cpu cleared. timeout_unregister() takes the same lock, so when
 * it returns the handler is not running any more and the timeout_t (often on the
 * sleeper's stack) may be reused.
 */
#include <time/timeout.h>
#include <time/delay.h>
#include <arch/asm.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <debug.h>

void timeout_init_cpu(cpu_t *c)
{
	irq_spinlock_initialize(&c->timeout_lock, "timeouts");
	list_initialize(&c->timeouts);
}

void timeout_initialize(timeout_t *t)
{
	link_initialize(&t->link);
	t->cpu = NULL;
	t->handler = NULL;
	t->arg = NULL;
	t->deadline = 0;
}

void timeout_register(timeout_t *t, uint64_t usec, timeout_handler_t handler,
    void *arg)
{
	ipl_t ipl = interrupts_disable();
	cpu_t *c = CPU;
	/*
	 * The lock validator sees this CPU's own lock taken with interrupts off
	 * as "timeouts.local": a wait queue sleep registers under its queue lock
	 * (waitq -> timeouts.local) while handlers take queue locks under the
	 * lock of the CPU they run on (timeouts -> waitq); the two never meet on
	 * one instance (docs/LOCKING.md).
	 */
	irq_spinlock_lock_as(&c->timeout_lock, false, "timeouts.local");
	assert(t->cpu == NULL);
	t->deadline = uptime_us() + usec;
	t->handler = handler;
	t->arg = arg;
	/* Keep the list sorted by deadline. */
	link_t *pos = &c->timeouts.head;
	list_foreach(&c->timeouts, l) {
		timeout_t *o = list_get_instance(l, timeout_t, link);
		if (o->deadline > t->deadline)
			break;
		pos = l;
	}
	list_insert_after(&t->link, pos);
	__atomic_store_n(&t->cpu, c, __ATOMIC_RELEASE);
	irq_spinlock_unlock(&c->timeout_lock, false);
	interrupts_restore(ipl);
}

bool timeout_unregister(timeout_t *t)
{
	cpu_t *c = __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE);
	if (!c)
		return false;
	irq_spinlock_lock(&c->timeout_lock, true);
	bool removed = false;
	if (t->cpu == c && link_in_use(&t->link)) {
		list_remove(&t->link);
		removed = true;
	}
	__atomic_store_n(&t->cpu, NULL, __ATOMIC_RELEASE);
	irq_spinlock_unlock(&c->timeout_lock, true);
	return removed;
}

void timeout_process(void)
{
	cpu_t *c = CPU;
	uint64_t now = uptime_us();
	irq_spinlock_lock(&c->timeout_lock, false);
	for (;;) {
		link_t *l = list_first(&c->timeouts);
		if (!l)
			break;
		timeout_t *t = list_get_instance(l, timeout_t, link);
		if (t->deadline > now)
			break;
		list_remove(&t->link);
		t->handler(t->arg);
		__atomic_store_n(&t->cpu, NULL, __ATOMIC_RELEASE);
	}
	irq_spinlock_unlock(&c->timeout_lock, false);
}
