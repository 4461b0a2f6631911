/** @file delay.c
 * Busy-wait delays and uptime from the architecture's cycle counter
 * (cycle_count(), arch/asm.h).
 *
 * The counter runs at one constant rate shared by all CPUs (the
 * architecture guarantees it: arch/asm.h), so one frequency and one boot
 * time stamp serve every CPU.
 */
#include <time/delay.h>
#include <arch/asm.h>

/** Set once by the BSP before other CPUs start; read-only afterwards. */
static uint64_t cycle_freq;
static uint64_t cycle_boot;

void time_init(uint64_t hz)
{
	cycle_freq = hz;
	cycle_boot = cycle_count();
}

uint64_t cycle_hz(void)
{
	return cycle_freq;
}

void udelay(uint64_t us)
{
	uint64_t hz = cycle_freq ? cycle_freq : 1000000000UL;
	uint64_t start = cycle_count();
	uint64_t cycles = us * (hz / 1000000);
	while (cycle_count() - start < cycles)
		cpu_relax();
}

uint64_t uptime_us(void)
{
	if (!cycle_freq)
		return 0;
	uint64_t d = cycle_count() - cycle_boot;
	/* Split to avoid overflow of d * 1000000. */
	return (d / cycle_freq) * 1000000 + (d % cycle_freq) * 1000000 / cycle_freq;
}

uint64_t uptime_ns(void)
{
	if (!cycle_freq)
		return 0;
	uint64_t d = cycle_count() - cycle_boot;
	/* (d % f) * 10^9 < 2^64 while f < 18 GHz. */
	return (d / cycle_freq) * 1000000000UL +
	    (d % cycle_freq) * 1000000000UL / cycle_freq;
}
