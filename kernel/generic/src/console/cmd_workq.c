/** @file cmd_workq.c
 * `workq`: the system work queue's configuration and live state, from
 * workq_get_config() and workq_global_get_stats().
 */
#include <console/kconsole.h>
#include <console/cmds.h>
#include <synch/workqueue.h>
#include <print.h>

#define LOAD_SHIFT WORKQ_LOAD_SHIFT

static int cmd_workq(const cmd_call_t *call)
{
	workq_config_t cfg;
	workq_stats_t s;
	workq_get_config(&cfg);
	workq_global_get_stats(&s);
	if (!s.name) {
		printf("The system work queue is not initialized.\n");
		return 0;
	}
	printf("Work queue '%s'%s:\n", s.name, s.system ? " (system)" : "");
	printf("  configuration: min idle workers %zu, max workers %zu, "
	    "max concurrent %zu, items per worker %zu, idle timeout %lu ms\n",
	    cfg.min_idle, cfg.max_workers, cfg.max_concurrent, cfg.items_per_worker,
	    cfg.idle_timeout_us / 1000);
	printf("  workers: %zu\n", s.workers);
	printf("  active: %zu\n", s.active);
	printf("  blocked: %zu\n", s.blocked);
	printf("  idle: %zu\n", s.idle);
	printf("  queued items: %zu\n", s.items);
	/* The averages are in 1/1024 items: print them with two decimals. */
	printf("  load trend: %s; queued items on average %zu.%02zu over 0.1 s, "
	    "%zu.%02zu over 1 s\n", s.load_trend > 0 ? "rising" :
	    (s.load_trend < 0 ? "falling" : "steady"),
	    s.load_fast >> LOAD_SHIFT,
	    ((s.load_fast & ((1 << LOAD_SHIFT) - 1)) * 100) >> LOAD_SHIFT,
	    s.load_slow >> LOAD_SHIFT,
	    ((s.load_slow & ((1 << LOAD_SHIFT) - 1)) * 100) >> LOAD_SHIFT);
	printf("  state: %s\n", s.stopping ? "stopped" : "running");
	const workq_totals_t *t = &s.totals;
	printf("  totals: %lu enqueued, %lu completed, %lu refused; workers: %lu "
	    "created, %lu retired, %lu creation failures, peak %zu; %lu wake-ups "
	    "of idle workers, %lu non-blocking add requests\n", t->enqueued,
	    t->completed, t->refused, t->workers_created, t->workers_retired,
	    t->worker_create_failures, t->peak_workers, t->activations,
	    t->nonblock_add_requests);
	return 0;
}

static cmd_info_t workq_cmd = {
	.name = "workq",
	.description = "System work queue: configuration and live state",
	.func = cmd_workq,
};

void cmd_workq_init(void)
{
	(void) cmd_register(&workq_cmd);
}
