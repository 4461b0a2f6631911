/** @file lockdep_info.c
 * The lock-dependency validator's read-only view for the `lockdep` console
 * command (synch/lockdep.h): whether it is built in and active, and
 * snapshots of its classes and edges; without CONFIG_LOCKDEP, stubs that
 * report an empty validator. Lock-free: an entry below the acquire-loaded
 * count is complete (lockdep_impl.h).
 */
#include <synch/lockdep.h>

#ifdef CONFIG_LOCKDEP

#include "lockdep_impl.h"

bool lockdep_enabled(void)
{
	return true;
}

bool lockdep_active(void)
{
	return is_active();
}

size_t lockdep_class_count(void)
{
	return __atomic_load_n(&ld_n_classes, __ATOMIC_ACQUIRE);
}

size_t lockdep_edge_count(void)
{
	return __atomic_load_n(&ld_n_edges, __ATOMIC_ACQUIRE);
}

bool lockdep_snapshot_class(size_t i, lockdep_class_info_t *out)
{
	if (i >= lockdep_class_count())
		return false;
	ld_class_t *k = &ld_classes[i];
	out->name = k->name;
	out->acquisitions = __atomic_load_n(&k->acquisitions, __ATOMIC_RELAXED);
	out->irq_ip = __atomic_load_n(&k->irq_ip, __ATOMIC_RELAXED);
	out->irq_on_ip = __atomic_load_n(&k->irq_on_ip, __ATOMIC_RELAXED);
	out->sleeping = k->sleeping;
	out->rcu_cb_ip = __atomic_load_n(&k->rcu_cb_ip, __ATOMIC_RELAXED);
	out->rcu_read_ip = __atomic_load_n(&k->rcu_read_ip, __ATOMIC_RELAXED);
	return true;
}

bool lockdep_snapshot_edge(size_t i, lockdep_edge_info_t *out)
{
	if (i >= lockdep_edge_count())
		return false;
	ld_edge_t *d = &ld_edges[i];
	out->from = d->from;
	out->to = d->to;
	out->count = __atomic_load_n(&d->count, __ATOMIC_RELAXED);
	out->from_ip = d->from_ip;
	out->to_ip = d->to_ip;
	return true;
}

size_t lockdep_report_count(void)
{
	return __atomic_load_n(&ld_reports, __ATOMIC_RELAXED);
}

#else /* !CONFIG_LOCKDEP */

bool lockdep_enabled(void)
{
	return false;
}

bool lockdep_active(void)
{
	return false;
}

size_t lockdep_class_count(void)
{
	return 0;
}

size_t lockdep_edge_count(void)
{
	return 0;
}

bool lockdep_snapshot_class(size_t i, lockdep_class_info_t *out)
{
	(void) i;
	(void) out;
	return false;
}

bool lockdep_snapshot_edge(size_t i, lockdep_edge_info_t *out)
{
	(void) i;
	(void) out;
	return false;
}

size_t lockdep_report_count(void)
{
	return 0;
}

#endif
