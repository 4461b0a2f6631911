/** @file pit.h
 * i8254 PIT, used only to calibrate the LAPIC timer and the TSC.
 */
#ifndef KERN_GENARCH_PIT_H_
#define KERN_GENARCH_PIT_H_

#include <typedefs.h>

#define PIT_HZ 1193182

/** Arms PIT channel 2 for a one-shot of @a us microseconds (max 54924). */
void pit_oneshot_start(uint32_t us);
/** True once the one-shot armed by pit_oneshot_start() has expired. */
bool pit_oneshot_expired(void);

#endif
