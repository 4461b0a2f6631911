/** @file uart16550.h
 * 16550 UART on COM1: polled output, interrupt-driven (or polled) input.
 */
#ifndef KERN_GENARCH_UART16550_H_
#define KERN_GENARCH_UART16550_H_

#include <typedefs.h>

/** Programs COM1 for 115200 8N1 with FIFOs; receive interrupts stay off. */
void uart_init(void);
/** Enables the receive-data interrupt (after the IOAPIC routes IRQ 4). */
void uart_enable_rx_irq(void);
/** Writes one byte, waiting for the transmitter. Callers serialize. */
void uart_putc(char c);
/** Reads one byte if available; returns -1 otherwise. */
int uart_getc_nowait(void);

#endif
