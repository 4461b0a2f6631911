/** @file delay.h
 * Busy-wait delays and the uptime clock (TSC calibrated against the PIT).
 */
#ifndef KERN_DELAY_H_
#define KERN_DELAY_H_

#include <typedefs.h>

/** Sets the TSC frequency (Hz) measured at boot and the boot time stamp. */
void time_init(uint64_t tsc_hz);
/** TSC frequency in Hz (0 before calibration). */
uint64_t tsc_hz(void);
/** Busy-waits @a us microseconds (uses `pause`). Any context. */
void udelay(uint64_t us);
/** Microseconds since the TSC calibration at boot. Any context, any CPU. */
uint64_t uptime_us(void);
/**
 * Nanoseconds since the TSC calibration at boot, at the TSC's resolution
 * (SYS_CLOCK_NS). Any context, any CPU (invariant TSC, see delay.c).
 */
uint64_t uptime_ns(void);

#endif
