/** @file cmds.c
 * Generic kconsole commands: help, version, cpus, zones, uptime, test, halt.
 */
#include <console/kconsole.h>
#include <console/console.h>
#include <arch/asm.h>
#include <arch/apic.h>
#include <arch/cpu_arch.h>
#include <genarch/acpi.h>
#include <main/main.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <time/delay.h>
#include <debug/symtab.h>
#include <lib/str.h>
#include <test.h>
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

static int cmd_help(cmd_arg_t *argv, size_t argc)
{
	printf("Commands:\n");
	cmd_foreach(help_one, NULL);
	return 0;
}

static int cmd_version(cmd_arg_t *argv, size_t argc)
{
	printf("HelenOS-style SMP kernel %s, rev %s\n", KERNEL_VERSION,
	    KERNEL_GIT_REV);
	printf("Build: %s (asserts %s), amd64, gcc %d.%d, CONFIG_MAX_CPUS=%d, "
	    "HZ=%d\n", CONFIG_BUILD,
#ifdef CONFIG_DEBUG
	    "on",
#else
	    "off",
#endif
	    __GNUC__, __GNUC_MINOR__, CONFIG_MAX_CPUS, HZ);
	printf("Boot loader: %s; command line: '%s'; CPU enumeration: %s; "
	    "%zu symbols\n", boot_info.loader[0] ? boot_info.loader : "unknown",
	    boot_info.cmdline, boot_info.cpu_source, symtab_count());
	printf("CPU model: ");
	cpu_arch_print_model();
	printf("\n");
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

static int cmd_cpus(cmd_arg_t *argv, size_t argc)
{
	unsigned online = 0;
	console_lock();
	printf("cpu  apic  state     timer-Hz  lapic-Hz     ticks\n");
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		cpu_state_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		if (st == CPU_ONLINE)
			online++;
		printf("%3u  %4u  %-8s  %8d  %9lu  %8lu\n", c->id, c->apic_id,
		    cpu_state_name(st), HZ, c->lapic_hz,
		    __atomic_load_n(&c->ticks, __ATOMIC_RELAXED));
	}
	printf("%u CPUs online\n", online);
	console_unlock();
	return 0;
}

static int cmd_zones(cmd_arg_t *argv, size_t argc)
{
	zones_print();
	heap_print();
	return 0;
}

static int cmd_uptime(cmd_arg_t *argv, size_t argc)
{
	uint64_t us = uptime_us();
	printf("Up %lu.%03lu s (%lu us); CPU 0 ticks: %lu\n", us / 1000000,
	    (us / 1000) % 1000, us,
	    __atomic_load_n(&cpus[0].ticks, __ATOMIC_RELAXED));
	return 0;
}

static void test_list(void)
{
	printf("Tests (run with 'test NAME', 'test *' runs every safe one):\n");
	for (test_t *t = tests; t->name; t++)
		printf("  %-12s %-6s %s\n", t->name, t->safe ? "safe" : "unsafe",
		    t->desc);
}

static cmd_arg_t test_args[] = {
	{ .type = ARG_TYPE_STRING, .name = "name|*", .optional = true },
};

static int cmd_test(cmd_arg_t *argv, size_t argc)
{
	if (!argv[0].present) {
		test_list();
		return 0;
	}
	const char *name = argv[0].strval;
	if (strcmp(name, "*") == 0) {
		unsigned passed = 0, failed = 0;
		for (test_t *t = tests; t->name; t++) {
			if (!t->safe)
				continue;
			if (test_run(t))
				passed++;
			else
				failed++;
		}
		printf("%u passed, %u failed\n", passed, failed);
		return 0;
	}
	const test_t *t = test_find(name);
	if (!t) {
		printf("Unknown test '%s'\n", name);
		test_list();
		return 0;
	}
	test_run(t);
	return 0;
}

static int cmd_threads(cmd_arg_t *argv, size_t argc)
{
	threads_print();
	return 0;
}

static int cmd_sched(cmd_arg_t *argv, size_t argc)
{
	sched_print();
	return 0;
}

static int cmd_halt(cmd_arg_t *argv, size_t argc)
{
	printf("Halting the system.\n");
	/* Stop the other CPUs first so nothing else prints or runs. */
	smp_halt_others();
	interrupts_disable();
	/* QEMU's isa-debug-exit (iobase 0xf4): exit status (0x10 << 1) | 1 = 33. */
	outb(0xf4, 0x10);
	acpi_poweroff();
	printf("Power off failed; CPUs halted.\n");
	cpu_arch_stop_self();
}

static cmd_info_t cmds[] = {
	{ .name = "help", .description = "List the commands", .func = cmd_help },
	{ .name = "version", .description = "Kernel version and build configuration",
	    .func = cmd_version },
	{ .name = "cpus", .description = "List CPUs (id, APIC id, state, timer)",
	    .func = cmd_cpus },
	{ .name = "zones", .description = "Physical memory zones and heap",
	    .func = cmd_zones },
	{ .name = "uptime", .description = "Time since boot", .func = cmd_uptime },
	{ .name = "test", .description = "List tests, run one (test NAME) or all safe "
	    "ones (test *)", .func = cmd_test, .argv = test_args, .argc = 1 },
	{ .name = "threads", .description = "List threads (id, name, state, priority, "
	    "CPU, wired, ticks)", .func = cmd_threads },
	{ .name = "sched", .description = "Per-CPU run queues, context switches, "
	    "migrations", .func = cmd_sched },
	{ .name = "halt", .description = "Power the machine off",
	    .func = cmd_halt },
};

void cmds_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		(void) cmd_register(&cmds[i]);
}
