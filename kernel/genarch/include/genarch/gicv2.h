/** @file gicv2.h
 * The ARM Generic Interrupt Controller v2 (distributor and CPU interface):
 * SGIs for IPIs, a PPI per CPU, SPIs routed to one CPU.
 */
#ifndef KERN_GENARCH_GICV2_H_
#define KERN_GENARCH_GICV2_H_

#include <typedefs.h>

/** Interrupt ids of 1020 and above: nothing to handle (spurious). */
#define GICV2_INTID_SPURIOUS 1020

/**
 * Takes the distributor at @a dist_phys and the CPU interfaces at
 * @a cpu_phys and enables the distributor. Boot, BSP, before
 * gicv2_init_cpu().
 */
void gicv2_init(uintptr_t dist_phys, uintptr_t cpu_phys);
/**
 * This CPU's interface, its SGIs (0-15) and PPI @a ppi (banked per CPU):
 * priority 0x80, enabled, every priority unmasked. Each CPU at its start.
 */
void gicv2_init_cpu(unsigned ppi);
/** Acknowledges the highest pending interrupt: returns GICC_IAR. */
uint32_t gicv2_ack(void);
/** Ends interrupt @a iar (the value gicv2_ack() returned). */
void gicv2_eoi(uint32_t iar);
/**
 * Writes @a sgir to GICD_SGIR (target list or filter, SGI id). After a DSB
 * ISH: the SGI does not overtake the caller's earlier stores to Normal
 * memory. Any context.
 */
void gicv2_send_sgi(uint32_t sgir);
/** Routes SPI @a intid to CPU interface 0, priority 0x80, enabled. Boot. */
void gicv2_spi_enable(unsigned intid);

#endif
