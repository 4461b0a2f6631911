/** @file cmd_system.c
 * System kconsole commands: help, version, cpus, uptime, threads, sched,
 * backtrace, halt.
 */
#include <console/kconsole.h>
#include <console/console.h>
#include <console/cmds.h>
#include <arch/asm.h>
#include <arch.h>
#include <arch/cpu_arch.h>
#include <arch/interrupt.h>
#include <main/main.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <time/delay.h>
#include <debug/symtab.h>
#include <lib/str.h>
#include <print.h>
#include <cpu.h>
#include <smp/smp_call.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <errno.h>

static void help_one(const cmd_info_t *cmd, void *arg)
{
	printf("  %-12s %s\n", cmd->name, cmd->description);
}

static int cmd_help(const cmd_call_t *call)
{
	printf("Commands:\n");
	cmd_foreach(help_one, NULL);
	return 0;
}

static int cmd_version(const cmd_call_t *call)
{
	printf("HelenOS-style SMP kernel %s, rev %s\n", KERNEL_VERSION,
	    KERNEL_GIT_REV);
	printf("Build: %s (asserts %s), %s, gcc %d.%d, CONFIG_MAX_CPUS=%d, "
	    "HZ=%d\n", CONFIG_BUILD,
#ifdef CONFIG_DEBUG
	    "on",
#else
	    "off",
#endif
	    arch_name, __GNUC__, __GNUC_MINOR__, CONFIG_MAX_CPUS, HZ);
	printf("Boot loader: %s; command line: '%s'; CPU enumeration: %s; "
	    "%zu symbols\n", boot_info.loader[0] ? boot_info.loader : "unknown",
	    boot_info.cmdline, boot_info.cpu_source, symtab_count());
	printf("CPU model: ");
	cpu_arch_print_model();
	printf("\n");
	return 0;
}

/*
 * The console thread's own backtrace, printed as a panic prints one (the
 * frame-pointer walk and the symbol table: tests/test_arm64.py checks both
 * on arm64). The walk starts in this function's frame (it is called through
 * the command table, never inlined), so the first line names its caller.
 */
static int cmd_backtrace(const cmd_call_t *call)
{
	backtrace_print_from(frame_pointer());
	return 0;
}

static const char *cpu_state_name(cpu_state_t s)
{
	switch (s) {
	case CPU_ABSENT:
		return "absent";
	case CPU_STARTING:
		return "starting";
	case CPU_ONLINE:
		return "online";
	case CPU_FAILED:
		return "failed";
	case CPU_HALTED:
		return "halted";
	}
	return "?";
}

static int cmd_cpus(const cmd_call_t *call)
{
	unsigned online = 0;
	console_lock();
	printf("%s\n", CPU_ARCH_TABLE_HEADER);
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		cpu_state_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		if (st == CPU_ONLINE)
			online++;
		printf("%3u  %4u  %-8s  %8d  %9lu  %8lu\n", c->id, c->arch_id,
		    cpu_state_name(st), HZ, c->timer_hz,
		    __atomic_load_n(&c->ticks, __ATOMIC_RELAXED));
	}
	printf("%u CPUs online\n", online);
	console_unlock();
	return 0;
}

static int cmd_uptime(const cmd_call_t *call)
{
	uint64_t us = uptime_us();
	printf("Up %lu.%03lu s (%lu us); CPU 0 ticks: %lu\n", us / 1000000,
	    (us / 1000) % 1000, us,
	    __atomic_load_n(&cpus[0].ticks, __ATOMIC_RELAXED));
	/* Sums of the per-CPU counts (arch_intr_count()). */
	printf("Interrupts (all CPUs): timer %lu, cross-call %lu, wakeup %lu\n",
	    arch_intr_count(INTR_TIMER), arch_intr_count(INTR_SMP_CALL),
	    arch_intr_count(INTR_WAKEUP));
	return 0;
}

static int cmd_threads(const cmd_call_t *call)
{
	threads_print();
	return 0;
}

static int cmd_sched(const cmd_call_t *call)
{
	sched_print();
	return 0;
}

static int cmd_halt(const cmd_call_t *call)
{
	printf("Halting the system.\n");
	/*
	 * Interrupts off before the others stop: with them on, the scheduler
	 * could migrate this thread between smp_halt_others() reading CPU and
	 * its cross-calls, and the stop call would then halt the CPU this
	 * thread runs on, before the power-off (a hang seen in CI).
	 */
	(void) interrupts_disable();
	/* Stop the other CPUs first so nothing else prints or runs. */
	smp_halt_others();
	arch_poweroff();
	printf("Power off failed; CPUs halted.\n");
	cpu_arch_stop_self();
}

static cmd_info_t cmds[] = {
	{ .name = "help", .description = "List the commands", .func = cmd_help },
	{ .name = "version", .description = "Kernel version and build configuration",
	    .func = cmd_version },
	{ .name = "cpus", .description = "List CPUs (id, interrupt controller id, state, timer)",
	    .func = cmd_cpus },
	{ .name = "uptime", .description = "Time since boot", .func = cmd_uptime },
	{ .name = "threads", .description = "List threads (id, name, state, priority, "
	    "CPU, wired, ticks)", .func = cmd_threads },
	{ .name = "sched", .description = "Per-CPU run queues, context switches, "
	    "migrations", .func = cmd_sched },
	{ .name = "backtrace", .description = "Print the console thread's "
	    "backtrace (as a panic does)", .func = cmd_backtrace },
	{ .name = "halt", .description = "Power the machine off",
	    .func = cmd_halt },
};

void cmd_system_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		(void) cmd_register(&cmds[i]);
}
