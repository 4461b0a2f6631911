/** @file pl011.c
 * The PL011 UART driver (pl011.h) through MMIO.
 */
#include <genarch/pl011.h>
#include <genarch/mmio.h>
#include <arch/asm.h>

#define UART_DR   0x00
#define UART_FR   0x18
#define UART_IMSC 0x38
#define UART_ICR  0x44
#define FR_TXFF   (1 << 5)
#define FR_RXFE   (1 << 4)
#define INT_RX    ((1 << 4) | (1 << 6))  /* receive, receive timeout */

/** Physical base of the UART; set once at boot. */
static uintptr_t uart;

void pl011_init(uintptr_t phys)
{
	uart = phys;
	mmio_write32(uart + UART_IMSC, 0);
}

void pl011_putc(char c)
{
	while (mmio_read32(uart + UART_FR) & FR_TXFF)
		cpu_relax();
	mmio_write32(uart + UART_DR, (uint8_t) c);
}

int pl011_getc_nowait(void)
{
	if (mmio_read32(uart + UART_FR) & FR_RXFE)
		return -1;
	return mmio_read32(uart + UART_DR) & 0xff;
}

void pl011_set_rx_irq(bool on)
{
	mmio_write32(uart + UART_IMSC, on ? INT_RX : 0);
}

void pl011_irq_clear(void)
{
	mmio_write32(uart + UART_ICR, INT_RX);
}
