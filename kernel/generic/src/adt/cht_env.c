/** @file cht_env.c
 * Kernel side of the CHT environment (adt/cht_env_kernel.h): the table registry, the
 * sleep used while waiting for a resize (the `chtstat` command is in
 * console/cmd_cht.c).
 */
#include <time/delay.h>
#include <adt/cht.h>
#include <adt/cht_env_kernel.h>
#include <proc/thread.h>
#include <console/console.h>

/** Live tables; protected by registry_lock. */
static list_t registry = LIST_INITIALIZER(registry);
static irq_spinlock_t registry_lock = IRQ_SPINLOCK_INITIALIZER("cht.registry");

bool (*cht_env_enqueue_hook)(cht_env_work_t *w);
#ifdef CONFIG_DEBUG
void (*cht_env_linked_hook)(void *table, void *item);
#endif
/*
 * The sharedcount point's counter (cht_env_fault_lookup()). Defined only in
 * builds with fault-injection points, so that a production kernel's data
 * layout is that of a tree without it; the test is on CONFIG_FAULT_INJECT
 * (0 without points, debug/fault_inject.h) because the preprocessor cannot
 * evaluate fault_inject_enabled(), an expression over the enum of points.
 */
#if CONFIG_FAULT_INJECT
uint64_t cht_broken_lookups;
#endif

void cht_env_sleep_ms(unsigned ms)
{
	thread_usleep((uint64_t) ms * 1000);
}

uint64_t cht_env_now_ms(void)
{
	return uptime_us() / 1000;
}

void cht_env_registry_add(cht_env_link_t *link)
{
	irq_spinlock_lock(&registry_lock, true);
	list_append(link, &registry);
	irq_spinlock_unlock(&registry_lock, true);
}

void cht_env_registry_remove(cht_env_link_t *link)
{
	irq_spinlock_lock(&registry_lock, true);
	list_remove(link);
	irq_spinlock_unlock(&registry_lock, true);
}

void cht_env_registry_foreach(void (*fn)(cht_env_link_t *link))
{
	/* The console lock keeps the table in one piece; fn only prints. */
	console_lock();
	irq_spinlock_lock(&registry_lock, true);
	list_foreach(&registry, l)
		fn(l);
	irq_spinlock_unlock(&registry_lock, true);
	console_unlock();
}
