/** @file delay.h
 * Busy-wait delays and the uptime clock (the architecture's cycle counter).
 */
#ifndef KERN_DELAY_H_
#define KERN_DELAY_H_

#include <typedefs.h>

/**
 * Sets the cycle counter's frequency (Hz) measured or read at boot and the
 * boot time stamp. BSP, once, before other CPUs start.
 */
void time_init(uint64_t hz);
/** Cycle counter frequency in Hz (0 before calibration). */
uint64_t cycle_hz(void);
/** Busy-waits @a us microseconds (uses cpu_relax()). Any context. */
void udelay(uint64_t us);
/** Microseconds since the cycle counter calibration at boot. Any context, any CPU. */
uint64_t uptime_us(void);
/**
 * Nanoseconds since the cycle counter calibration at boot, at the counter's resolution
 * (SYS_CLOCK_NS). Any context, any CPU (one counter rate for all CPUs, see delay.c).
 */
uint64_t uptime_ns(void);

#endif
