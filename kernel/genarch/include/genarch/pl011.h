/** @file pl011.h
 * The ARM PL011 UART: polled output, interrupt-driven (or polled) input.
 */
#ifndef KERN_GENARCH_PL011_H_
#define KERN_GENARCH_PL011_H_

#include <typedefs.h>

/** Takes the UART at @a phys, receive interrupts off (QEMU: no baud rate). */
void pl011_init(uintptr_t phys);
/** Writes one byte, waiting for transmit FIFO room. Callers serialize. */
void pl011_putc(char c);
/** Reads one byte if available; returns -1 otherwise. */
int pl011_getc_nowait(void);
/** Enables (@a on) or masks the receive and receive-timeout interrupts. */
void pl011_set_rx_irq(bool on);
/** Clears the receive interrupts (after the handler drained the FIFO). */
void pl011_irq_clear(void);

#endif
