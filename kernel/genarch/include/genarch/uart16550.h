/** @file uart16550.h
 * 16550 UART on COM1: polled output, interrupt-driven (or polled) input.
 */
#ifndef KERN_GENARCH_UART16550_H_
#define KERN_GENARCH_UART16550_H_

#include <typedefs.h>

/** Programs COM1 for 115200 8N1 with FIFOs; receive interrupts stay off. */
void uart_init(void);
/**
 * Enables (@a on) or masks the receive-data interrupt (IER bit 0; the IOAPIC
 * must route IRQ 4 first). While it is masked, received bytes stay in the
 * UART's FIFO, and an emulated UART (QEMU) stops taking bytes from its host
 * side once the FIFO is full, so nothing is lost. Enabling it with data
 * pending raises the interrupt at once. Any context; the caller serializes
 * it with the reads of the receive side (the console's input lock).
 */
void uart_set_rx_irq(bool on);
/** Writes one byte, waiting for the transmitter. Callers serialize. */
void uart_putc(char c);
/** Reads one byte if available; returns -1 otherwise. */
int uart_getc_nowait(void);

#endif
