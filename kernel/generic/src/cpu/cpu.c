/** @file cpu.c
 * The CPU array and the CPU counters (see cpu.h). The boot CPU fills
 * cpus[] and cpu_count while it enumerates the processors
 * (arch_cpus_init(): ACPI on amd64, the device tree on arm64); each CPU
 * that comes online counts itself in cpu_active_count and publishes
 * CPU_ONLINE (the architecture's smp_start_aps() side, main.c).
 */
#include <cpu.h>

cpu_t cpus[CONFIG_MAX_CPUS];
unsigned cpu_count;
atomic_t cpu_active_count;

bool cpu_is_online(unsigned id)
{
	return id < cpu_count &&
	    __atomic_load_n(&cpus[id].state, __ATOMIC_ACQUIRE) == CPU_ONLINE;
}
