/** @file cmd_synch.c
 * `lockstat`: lock statistics per lock class, from lockstat_snapshot()
 * (kernels built with LOCK_STAT=1; see synch/lockstat.h).
 */
#include <console/kconsole.h>
#include <console/console.h>
#include <console/cmds.h>
#include <synch/lockstat.h>
#include <print.h>

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
	printf("lock statistics per class, in TSC cycles (instructions under "
	    "-icount shift=0)%s:\n", call->opt[OPT_RESET].present ?
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

void cmd_synch_init(void)
{
	(void) cmd_register(&lockstat_cmd);
}
