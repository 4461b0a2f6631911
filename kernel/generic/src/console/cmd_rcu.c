/** @file cmd_rcu.c
 * `rcu`: the algorithm, its tunables, grace periods, stall warnings and the
 * callbacks of every online CPU, from rcu_get_stats() and rcu_cpu_get_stats().
 */
#include <console/kconsole.h>
#include <console/console.h>
#include <console/cmds.h>
#include <synch/rcu.h>
#include <print.h>
#include <cpu.h>

static int cmd_rcu(const cmd_call_t *call)
{
	rcu_stats_t st;
	rcu_get_stats(&st);
	console_lock();
	printf("rcu: algorithm %s%s\n", st.algorithm, st.broken ?
	    " (BROKEN build: grace periods do not wait)" : "");
	printf("tunables: detect sleep %u us, poll %u us, expedite threshold %u, "
	    "critical threshold %u callbacks\n", st.detect_sleep_us,
	    st.poll_sleep_us, st.expedite_threshold, st.critical_threshold);
	printf("GPs completed: %lu\n", st.gps_completed);
	printf("GPs started: %lu\n", st.gps_started);
	printf("GPs expedited: %lu\n", st.gps_expedited);
	printf("GPs delayed by CPUs in readers: %lu\n", st.gps_delayed);
	printf("GPs blocked by preempted readers: %lu\n",
	    st.gps_blocked_preempted);
	printf("cross-calls sent: %lu\n", st.cross_calls);
	printf("stall warning limit: %lu ms\n", st.stall_limit_ms);
	printf("stall warnings: %lu\n", st.stall_warnings);
	printf("pending callbacks: %zu\n", st.pending_callbacks);
	printf("cpu  last-seen-gp  posted      run         pending  max-batch  "
	    "avg-batch  expedite-reqs\n");
	for (unsigned i = 0; i < cpu_count; i++) {
		if (!cpu_is_online(i))
			continue;
		rcu_cpu_stats_t cs;
		rcu_cpu_get_stats(i, &cs);
		printf("%3u  %12lu  %-10lu  %-10lu  %7zu  %9zu  %9lu  %13lu\n", i,
		    cs.last_seen_gp, cs.posted, cs.run, cs.pending, cs.max_batch,
		    cs.batches ? cs.run / cs.batches : 0, cs.expedite_reqs);
	}
	console_unlock();
	return 0;
}

static cmd_info_t rcu_cmd = {
	.name = "rcu",
	.description = "RCU statistics: algorithm, tunables, grace periods, callbacks",
	.func = cmd_rcu,
};

void cmd_rcu_init(void)
{
	(void) cmd_register(&rcu_cmd);
}
