/** @file smp_arch.h
 * Starting the application processors.
 */
#ifndef KERN_ARCH_SMP_ARCH_H_
#define KERN_ARCH_SMP_ARCH_H_

#include <typedefs.h>

struct cpu;

/** Physical address of the AP trampoline (below 1 MiB, page aligned). */
#define AP_TRAMPOLINE 0x8000

/**
 * Starts every enumerated AP, one at a time: INIT, SIPI, a second SIPI if needed,
 * then waits (with a timeout) for the AP to acknowledge by going online. BSP only,
 * interrupts enabled. Returns the number of CPUs online.
 */
unsigned smp_start_aps(void);

/** Removes the identity map of low memory on every CPU once all APs are up. */
void smp_boot_finish(void);

/** Called on each AP from the trampoline; never returns (enters the idle loop). */
NO_RETURN void ap_entry64(struct cpu *cpu);

#endif
