/** @file virt.h
 * What the arm64 files on QEMU's virt board share: the device tree's
 * findings, PSCI, the timer's and the exception paths' entry points.
 */
#ifndef KERN_ARCH_VIRT_H_
#define KERN_ARCH_VIRT_H_

#include <typedefs.h>
#include <arch/interrupt.h>
#include <genarch/fdt.h>

/** What the device tree told (arch.c); written by the BSP at boot only. */
extern fdt_info_t virt_dt;

#define PSCI_CPU_ON     0xc4000003UL
#define PSCI_SYSTEM_OFF 0x84000008UL

/** PSCI call @a fn through the device tree's conduit (cpu.c). @return x0. */
int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
/** The EL1 virtual timer's interrupt handler (cpu.c). */
void timer_irq_handler(unsigned vector, istate_t *istate);
/** An IRQ from the GIC (interrupt.c); called by arm64_exception(). */
void irq_dispatch(istate_t *istate);

#endif
