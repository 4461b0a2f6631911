/** @file apic.h
 * Local APIC (xAPIC over MMIO) and IOAPIC.
 */
#ifndef KERN_ARCH_APIC_H_
#define KERN_ARCH_APIC_H_

#include <typedefs.h>

/* HZ, the timer frequency of every CPU: arch.h. */
#include <arch.h>

/** Maps and enables the local APIC of the BSP; reads its id. BSP, once. */
void lapic_init_bsp(void);
/** Enables the local APIC of the calling CPU (AP). */
void lapic_init_ap(void);
/** True once the local APIC can be used (after lapic_init_bsp). */
bool lapic_ready(void);
/** APIC id of the calling CPU. */
uint32_t lapic_id(void);
/** Signals end of interrupt. */
void lapic_eoi(void);

/**
 * Measures the LAPIC timer input frequency against the PIT (10 ms windows, best
 * of several) and the TSC frequency with it. BSP, interrupts disabled.
 */
void lapic_calibrate(void);
/** Calibrated LAPIC timer frequency in Hz. */
uint64_t lapic_timer_hz(void);
/** Starts the periodic timer (HZ per second) on the calling CPU. */
void lapic_timer_start(void);

/** Sends a fixed IPI with @a vector to the CPU with APIC id @a apic_id. */
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
/** Sends a fixed IPI with @a vector to every CPU except the caller. */
void lapic_send_ipi_all_but_self(uint8_t vector);
/** Sends an NMI to every CPU except the caller. */
void lapic_send_nmi_all_but_self(void);
/** INIT and STARTUP IPIs used to start an AP (@a page = trampoline address >> 12). */
void lapic_send_init(uint32_t apic_id);
void lapic_send_startup(uint32_t apic_id, uint8_t page);
/** Waits until the last IPI was accepted by the local APIC (delivery status idle). */
bool lapic_wait_icr_idle(void);

/** IOAPIC: registers the controller found in the MADT (address, first GSI). */
void ioapic_add(uintptr_t phys, uint32_t gsi_base);
/** Records an ISA interrupt source override from the MADT. */
void ioapic_add_override(uint8_t irq, uint32_t gsi, uint16_t flags);
/** Masks every IOAPIC input and the legacy PICs. BSP, once. */
void ioapic_init(void);
/** Routes ISA @a irq to vector IVT_IRQBASE + irq on the CPU with @a apic_id. */
bool ioapic_route_irq(uint8_t irq, uint32_t apic_id);
/** Number of IOAPICs found. */
unsigned ioapic_count(void);

#endif
