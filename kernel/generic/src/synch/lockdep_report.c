/** @file lockdep_report.c
 * The lock-dependency validator's reports (see synch/lockdep.h,
 * docs/LOCKING.md and lockdep_impl.h): claiming a report (which turns the
 * validator off, so the tables stay as they are while they are printed),
 * each report's evidence (the sites of the classes and edges involved, the
 * held locks) and its end (counted; a panic unless lockdep_panic is false).
 * The checks that find the violations are in lockdep.c.
 */
#include <synch/lockdep.h>

#ifdef CONFIG_LOCKDEP

#include "lockdep_impl.h"
#include <debug/symtab.h>
#include <print.h>
#include <panic.h>

/* The path being printed; under ld_graph_flag, then the report's claim. */
static unsigned path_scratch[LOCKDEP_MAX_CLASSES];

static void print_stack(ld_held_t *held, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++) {
		ld_held_t *h = &held[i];
		printf("    #%u \"%s\"%s%s acquired at ", i, ld_classes[h->cls].name,
		    h->ctx ? " (interrupt)" : "", h->trylock ? " (trylock)" : "");
		symtab_print_sym(h->ip, NULL);
		printf("\n");
	}
}

void ld_print_held(ld_cpu_t *c, unsigned cpu)
{
	lockdep_thread_t *t = ld_thread();
	if (t && t->depth > 0) {
		printf("  sleeping locks held by thread \"%s\" (oldest "
		    "first):\n", THREAD->name);
		print_stack(t->held, t->depth);
	}
	printf("  locks held on CPU %u (oldest first):%s\n", cpu,
	    c->depth ? "" : " none");
	print_stack(c->held, c->depth);
}

void ld_print_edge(unsigned e)
{
	ld_edge_t *d = &ld_edges[e];
	printf("    \"%s\" -> \"%s\": \"%s\" acquired at ", ld_classes[d->from].name,
	    ld_classes[d->to].name, ld_classes[d->from].name);
	symtab_print_sym(d->from_ip, NULL);
	printf(", then \"%s\" at ", ld_classes[d->to].name);
	symtab_print_sym(d->to_ip, NULL);
	printf(" (CPU %u)\n", d->cpu);
}

/**
 * Starts a report: claims it by turning the validator off (no other CPU then
 * learns edges, marks classes or runs a search, so the tables and the search
 * scratch stay as they are while they are printed) and drops graph_flag, so
 * that printing (the console lock) never waits with graph_flag held. Called
 * with graph_flag held.
 */
void ld_report_start(void)
{
	__atomic_store_n(&ld_active, false, __ATOMIC_RELAXED);
	graph_unlock();
}

/** Ends a report: counts it, panics unless lockdep_panic is false. */
void ld_report_end(const char *kind)
{
	printf("LOCKDEP REPORT end\n");
	__atomic_fetch_add(&ld_reports, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lockdep_panic, __ATOMIC_RELAXED))
		panic("lockdep: %s", kind);
	printf("lockdep: validator turned off after the report\n");
}

/**
 * Claims a report for a check made without graph_flag: false if the
 * validator is already off (another report).
 */
bool ld_report_claim(void)
{
	graph_lock();
	if (!is_active()) {
		graph_unlock();
		return false;
	}
	ld_report_start();
	return true;
}

/** Prints the BFS path ending at @a c (forward search: edges in order). */
void ld_print_path_forward(unsigned c)
{
	unsigned *path = path_scratch;
	unsigned n = 0;
	while (ld_bfs_via[c] && n < LOCKDEP_MAX_CLASSES) {
		path[n++] = ld_bfs_via[c] - 1;
		c = ld_edges[ld_bfs_via[c] - 1].from;
	}
	while (n > 0)
		ld_print_edge(path[--n]);
}

/** The sites and held locks of an interrupt inversion report. */
static void irq_inversion_report(unsigned safe, unsigned from, unsigned to,
    unsigned unsafe, ld_cpu_t *c, unsigned cpu)
{
	(void) from;
	(void) to;
	printf("  \"%s\" taken in an interrupt handler at ", ld_classes[safe].name);
	symtab_print_sym(ld_classes[safe].irq_ip, NULL);
	printf("\n  \"%s\" taken with interrupts enabled at ",
	    ld_classes[unsafe].name);
	symtab_print_sym(ld_classes[unsafe].irq_on_ip, NULL);
	printf("\n  an interrupt taking \"%s\" on a CPU holding \"%s\" waits "
	    "for a CPU that holds \"%s\" and waits for \"%s\"\n",
	    ld_classes[safe].name, ld_classes[unsafe].name, ld_classes[safe].name,
	    ld_classes[unsafe].name);
	ld_print_held(c, cpu);
}

/** What takes the lock of a wait report (its words). */
static const char *const taker_what[] = {
	[RCU_MARK_CB] = "an RCU callback",
	[RCU_MARK_READ] = "an RCU reader section",
	[RCU_MARK_WORK] = "a work queue item",
};
static const char *const taker_where[] = {
	[RCU_MARK_CB] = "in an RCU callback",
	[RCU_MARK_READ] = "inside an RCU reader section",
	[RCU_MARK_WORK] = "in a work queue item",
};

/** The report of a lock held across a wait (@a what) for what takes it
 *  (@a taker: a callback, a reader, a work item). Called after
 *  ld_report_start() or ld_report_claim(). */
void ld_rcu_wait_report(unsigned k, rcu_mark_t taker, uintptr_t held_ip,
    const char *what, uintptr_t call_ip, ld_cpu_t *c, unsigned cpu)
{
	printf("LOCKDEP REPORT: %s while holding lock \"%s\", which %s takes "
	    "(%s waits for it: deadlock)\n", what, ld_classes[k].name,
	    taker_what[taker], taker == RCU_MARK_WORK ? "the stop" :
	    "the grace period");
	printf("  \"%s\" taken %s at ", ld_classes[k].name, taker_where[taker]);
	symtab_print_sym(taker == RCU_MARK_CB ? ld_classes[k].rcu_cb_ip :
	    taker == RCU_MARK_READ ? ld_classes[k].rcu_read_ip :
	    ld_classes[k].work_ip, NULL);
	printf("\n  \"%s\" held, acquired at ", ld_classes[k].name);
	symtab_print_sym(held_ip, NULL);
	printf("\n  %s called from ", what);
	symtab_print_sym(call_ip, NULL);
	printf("\n");
	ld_print_held(c, cpu);
}


/** Reports taking @a lock (class @a k) again while holding it, at @a ip. */
void ld_recursion_report(const void *lock, unsigned k, ld_held_t *h,
    uintptr_t ip, ld_cpu_t *c, unsigned cpu)
{
	printf("LOCKDEP REPORT: recursive locking: lock \"%s\" (%p) "
	    "acquired on CPU %u while %s holds it (certain deadlock)\n",
	    ld_classes[k].name, lock, cpu,
	    ld_classes[k].sleeping ? "this thread" : "this CPU");
	printf("  held, acquired at ");
	symtab_print_sym(h->ip, NULL);
	printf("\n  acquired again at ");
	symtab_print_sym(ip, NULL);
	printf("\n");
	ld_print_held(c, cpu);
	ld_report_end("recursive locking");
}

/** The evidence of a new edge from -> to closing a cycle (@a h: the newest
 *  held lock, of class from; the new lock at @a ip, of class @a to). */
void ld_cycle_report(ld_cpu_t *c, unsigned cpu, ld_held_t *h, unsigned to,
    uintptr_t ip)
{
	unsigned from = h->cls;
	printf("LOCKDEP REPORT: possible circular locking dependency\n");
	printf("  new dependency on CPU %u: \"%s\" -> \"%s\"\n", cpu,
	    ld_classes[from].name, ld_classes[to].name);
	printf("    \"%s\" held, acquired at ", ld_classes[from].name);
	symtab_print_sym(h->ip, NULL);
	printf("\n    \"%s\" acquired at ", ld_classes[to].name);
	symtab_print_sym(ip, NULL);
	printf("\n  existing chain \"%s\" -> ... -> \"%s\" (each edge "
	    "where it was first seen):\n", ld_classes[to].name,
	    ld_classes[from].name);
	ld_print_path_forward(from);
	ld_print_held(c, cpu);
	ld_report_end("circular locking dependency");
}

/** Class @a k taken both in an interrupt handler and with interrupts on. */
void ld_irq_state_report(ld_cpu_t *c, unsigned cpu, unsigned k)
{
	printf("LOCKDEP REPORT: inconsistent interrupt state: class \"%s\" "
	    "taken in an interrupt handler and with interrupts enabled "
	    "(possible self-deadlock)\n", ld_classes[k].name);
	printf("  taken in an interrupt handler at ");
	symtab_print_sym(ld_classes[k].irq_ip, NULL);
	printf("\n  taken with interrupts enabled at ");
	symtab_print_sym(ld_classes[k].irq_on_ip, NULL);
	printf("\n  an interrupt on a CPU holding it with interrupts "
	    "enabled spins on it forever\n");
	ld_print_held(c, cpu);
	ld_report_end("lock taken in an interrupt and with interrupts enabled");
}

/** An interrupt-safe class @a safe reaching class @a unsafe, taken with
 *  interrupts enabled, through from -> to (@a safe_path: the @a ns edges
 *  from @a safe to from; ld_bfs_via: the path from to to @a unsafe). */
void ld_irq_chain_report(unsigned safe, const unsigned *safe_path,
    unsigned ns, unsigned from, unsigned to, unsigned unsafe, ld_cpu_t *c,
    unsigned cpu)
{
	printf("LOCKDEP REPORT: interrupt-safe class \"%s\" -> class \"%s\" "
	    "taken with interrupts enabled (possible deadlock with an "
	    "interrupt)\n", ld_classes[safe].name, ld_classes[unsafe].name);
	printf("  chain (each edge where it was first seen):\n");
	for (unsigned i = 0; i < ns; i++)
		ld_print_edge(safe_path[i]);
	if (from != to)
		ld_print_edge(ld_edge_of[from][to] - 1u);
	ld_print_path_forward(unsafe);
	irq_inversion_report(safe, from, to, unsafe, c, cpu);
	ld_report_end("interrupt-safe to interrupt-unsafe dependency");
}

/** A sleeping call (@a what, called at @a ip) with spinlocks held; the
 *  caller ends the report. */
void ld_might_sleep_report(const char *what, uintptr_t ip, ld_cpu_t *c,
    unsigned cpu)
{
	printf("LOCKDEP REPORT: %s may sleep, called on CPU %u while holding "
	    "spinlocks\n", what, cpu);
	printf("  called from ");
	symtab_print_sym(ip, NULL);
	printf("\n");
	ld_print_held(c, cpu);
}

#endif /* CONFIG_LOCKDEP */
