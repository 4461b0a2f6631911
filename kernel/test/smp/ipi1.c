/** @file ipi1.c
 * Every online CPU receives IPIs from the BSP and counts them exactly.
 *
 * Fixed IPIs of one vector coalesce while one is pending in the target's IRR, so
 * the sender waits until each IPI has been counted before sending the next one;
 * then every count is exact. The test covers directed IPIs to each CPU (including
 * the sender itself) and the all-but-self broadcast. A lost IPI shows up as a
 * timeout (10 s per IPI, far above any delivery time), reported as a failure.
 */
#include <test.h>
#include <cpu.h>
#include <print.h>
#include <arch.h>
#include <arch/asm.h>
#include <arch/interrupt.h>
#include <time/delay.h>

#define IPIS_PER_CPU 200
#define BROADCASTS   100
#define IPI_TIMEOUT_US 10000000UL

static bool wait_count(cpu_t *c, size_t expected)
{
	uint64_t start = uptime_us();
	while (atomic_get(&c->ipi_test_count) < expected) {
		if (uptime_us() - start > IPI_TIMEOUT_US)
			return false;
		cpu_relax();
	}
	return true;
}

const char *test_ipi1(void)
{
	static char reason[128];
	size_t base[CONFIG_MAX_CPUS];
	unsigned online = 0;

	if (interrupts_disabled())
		return "must run with interrupts enabled";

	for (unsigned i = 0; i < cpu_count; i++)
		base[i] = atomic_get(&cpus[i].ipi_test_count);

	/* Directed IPIs, one at a time, to every online CPU (also to ourselves). */
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		if (!cpu_is_online(i))
			continue;
		online++;
		for (unsigned k = 1; k <= IPIS_PER_CPU; k++) {
			arch_ipi_send(c, INTR_IPI_TEST);
			if (!wait_count(c, base[i] + k)) {
				snprintf(reason, sizeof(reason), "CPU %u counted %zu of %u "
				    "directed IPIs", i,
				    atomic_get(&c->ipi_test_count) - base[i], k);
				return reason;
			}
		}
	}

	/* Broadcasts to all but self. */
	unsigned self = CPU->id;
	for (unsigned k = 1; k <= BROADCASTS; k++) {
		arch_ipi_broadcast(INTR_IPI_TEST);
		for (unsigned i = 0; i < cpu_count; i++) {
			if (!cpu_is_online(i) || i == self)
				continue;
			if (!wait_count(&cpus[i], base[i] + IPIS_PER_CPU + k)) {
				snprintf(reason, sizeof(reason), "CPU %u missed broadcast "
				    "IPI %u", i, k);
				return reason;
			}
		}
	}

	/* Exact totals: no CPU got an extra IPI. */
	udelay(10000);
	for (unsigned i = 0; i < cpu_count; i++) {
		if (!cpu_is_online(i))
			continue;
		size_t expected = IPIS_PER_CPU + (i == self ? 0 : BROADCASTS);
		size_t got = atomic_get(&cpus[i].ipi_test_count) - base[i];
		printf("  CPU %u: %zu IPIs (expected %zu)\n", i, got, expected);
		if (got != expected) {
			snprintf(reason, sizeof(reason), "CPU %u counted %zu IPIs, "
			    "expected %zu", i, got, expected);
			return reason;
		}
	}
	printf("ipi1: %u CPUs online\n", online);
	return NULL;
}
