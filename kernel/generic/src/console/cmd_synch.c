/** @file cmd_synch.c
 * `lockstat`: lock statistics per lock class, from lockstat_snapshot()
 * (kernels built with LOCK_STAT=1; see synch/lockstat.h).
 * `lockdep`: the lock-dependency validator's classes and learned graph
 * (debug builds; see synch/lockdep.h).
 */
#include <console/kconsole.h>
#include <console/console.h>
#include <console/cmds.h>
#include <synch/lockstat.h>
#include <synch/lockdep.h>
#include <debug/symtab.h>
#include <print.h>
#include <arch/asm.h>

enum { OPT_RESET };

static const cmd_opt_t lockstat_opts[] = {
	[OPT_RESET] = { .flag = 'r' },
};

/** The snapshot; used by the kconsole thread only (commands run there). */
static lockstat_class_t snap[LOCKSTAT_CLASSES];

static int cmd_lockstat(const cmd_call_t *call)
{
	if (!lockstat_enabled()) {
		printf("lockstat: this kernel keeps no lock statistics (build it "
		    "with make LOCK_STAT=1)\n");
		return 0;
	}
	size_t n = lockstat_snapshot(snap, LOCKSTAT_CLASSES);
	if (call->opt[OPT_RESET].present)
		lockstat_reset();
	/* Longest total hold first (insertion sort, at most 64 classes). */
	for (size_t i = 1; i < n; i++) {
		lockstat_class_t c = snap[i];
		size_t j = i;
		for (; j > 0 && snap[j - 1].hold_cycles < c.hold_cycles; j--)
			snap[j] = snap[j - 1];
		snap[j] = c;
	}
	console_lock();
	printf("lock statistics per class, in %s%s:\n", CYCLE_COUNT_UNIT,
	    call->opt[OPT_RESET].present ?
	    "; now reset" : "");
	printf("%-20s %12s %10s %14s %14s %10s %10s\n", "class", "acquisitions",
	    "contended", "wait", "hold", "avg-hold", "max-hold");
	for (size_t i = 0; i < n; i++) {
		lockstat_class_t *c = &snap[i];
		printf("%-20s %12lu %10lu %14lu %14lu %10lu %10lu\n", c->name,
		    c->acquisitions, c->contended, c->wait_cycles, c->hold_cycles,
		    c->hold_cycles / c->acquisitions, c->max_hold_cycles);
	}
	console_unlock();
	return 0;
}

static cmd_info_t lockstat_cmd = {
	.name = "lockstat",
	.description = "Lock statistics per lock class (LOCK_STAT=1 builds); "
	    "-r resets them after printing",
	.func = cmd_lockstat,
	.opts = lockstat_opts,
	.optc = ARRAY_SIZE(lockstat_opts),
};

/**
 * Prints the classes and the edges learned so far. One line per class:
 * `class NAME acq=N irq=SITE irq-on=SITE rcu-cb=SITE rcu-read=SITE`, then
 * ` sleeping` for a sleeping lock (mutex, rwlock) class; one per edge: `edge
 * FROM -> TO count=N at FROM_SITE TO_SITE` (tests/lockdep_order.py parses
 * them).
 */
static int cmd_lockdep(const cmd_call_t *call)
{
	(void) call;
	if (!lockdep_enabled()) {
		printf("lockdep: this kernel has no lock validator (debug builds "
		    "have it unless built with make LOCKDEP=0)\n");
		return 0;
	}
	size_t nc = lockdep_class_count();
	size_t ne = lockdep_edge_count();
	console_lock();
	printf("lockdep: %s, %zu classes, %zu edges, %zu reports\n",
	    lockdep_active() ? "active" : "off", nc, ne,
	    lockdep_report_count());
	for (size_t i = 0; i < nc; i++) {
		lockdep_class_info_t k;
		if (!lockdep_snapshot_class(i, &k))
			break;
		printf("class %s acq=%lu irq=", k.name, k.acquisitions);
		symtab_print_sym(k.irq_ip, "-");
		printf(" irq-on=");
		symtab_print_sym(k.irq_on_ip, "-");
		printf(" rcu-cb=");
		symtab_print_sym(k.rcu_cb_ip, "-");
		printf(" rcu-read=");
		symtab_print_sym(k.rcu_read_ip, "-");
		printf("%s\n", k.sleeping ? " sleeping" : "");
	}
	for (size_t i = 0; i < ne; i++) {
		lockdep_edge_info_t e;
		lockdep_class_info_t a, b;
		if (!lockdep_snapshot_edge(i, &e) ||
		    !lockdep_snapshot_class(e.from, &a) ||
		    !lockdep_snapshot_class(e.to, &b))
			break;
		printf("edge %s -> %s count=%lu at ", a.name, b.name, e.count);
		symtab_print_sym(e.from_ip, "-");
		printf(" ");
		symtab_print_sym(e.to_ip, "-");
		printf("\n");
	}
	printf("lockdep: end\n");
	console_unlock();
	return 0;
}

static cmd_info_t lockdep_cmd = {
	.name = "lockdep",
	.description = "Lock validator: the learned lock classes (interrupt "
	    "sites) and dependency graph (edges with counts)",
	.func = cmd_lockdep,
};

void cmd_synch_init(void)
{
	(void) cmd_register(&lockstat_cmd);
	(void) cmd_register(&lockdep_cmd);
}
