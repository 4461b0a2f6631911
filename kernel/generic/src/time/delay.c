/** @file delay.c
 * Busy-wait delays and uptime from the TSC.
 *
 * QEMU and modern CPUs provide an invariant TSC shared by all CPUs, so one
 * frequency and one boot time stamp serve every CPU.
 */
#include <time/delay.h>
#include <arch/asm.h>

/** Set once by the BSP before other CPUs start; read-only afterwards. */
static uint64_t tsc_freq;
static uint64_t tsc_boot;

void time_init(uint64_t hz)
{
	tsc_freq = hz;
	tsc_boot = rdtsc();
}

uint64_t tsc_hz(void)
{
	return tsc_freq;
}

void udelay(uint64_t us)
{
	uint64_t hz = tsc_freq ? tsc_freq : 1000000000UL;
	uint64_t start = rdtsc();
	uint64_t cycles = us * (hz / 1000000);
	while (rdtsc() - start < cycles)
		cpu_relax();
}

uint64_t uptime_us(void)
{
	if (!tsc_freq)
		return 0;
	uint64_t d = rdtsc() - tsc_boot;
	/* Split to avoid overflow of d * 1000000. */
	return (d / tsc_freq) * 1000000 + (d % tsc_freq) * 1000000 / tsc_freq;
}

uint64_t uptime_ns(void)
{
	if (!tsc_freq)
		return 0;
	uint64_t d = rdtsc() - tsc_boot;
	/* (d % f) * 10^9 < 2^64 while f < 18 GHz. */
	return (d / tsc_freq) * 1000000000UL +
	    (d % tsc_freq) * 1000000000UL / tsc_freq;
}
