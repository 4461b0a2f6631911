/** @file uart16550.c
 * 16550 UART driver for COM1.
 */
#include <genarch/uart16550.h>
#include <arch/asm.h>

#define COM1 0x3f8
#define REG_DATA 0
#define REG_IER  1
#define REG_FCR  2
#define REG_LCR  3
#define REG_MCR  4
#define REG_LSR  5

#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY  0x20

void uart_init(void)
{
	outb(COM1 + REG_IER, 0x00);
	outb(COM1 + REG_LCR, 0x80);      /* DLAB */
	outb(COM1 + REG_DATA, 0x01);     /* divisor 1: 115200 baud */
	outb(COM1 + REG_IER, 0x00);
	outb(COM1 + REG_LCR, 0x03);      /* 8N1 */
	outb(COM1 + REG_FCR, 0xc7);      /* FIFO on, clear, 14-byte threshold */
	outb(COM1 + REG_MCR, 0x0b);      /* DTR, RTS, OUT2 (IRQ line enable) */
}

#define IER_RX_DATA 0x01

void uart_set_rx_irq(bool on)
{
	outb(COM1 + REG_IER, on ? IER_RX_DATA : 0x00);
}

void uart_putc(char c)
{
	for (unsigned i = 0; i < 100000; i++) {
		if (inb(COM1 + REG_LSR) & LSR_THR_EMPTY)
			break;
		cpu_relax();
	}
	outb(COM1 + REG_DATA, (uint8_t) c);
}

int uart_getc_nowait(void)
{
	if (inb(COM1 + REG_LSR) & LSR_DATA_READY)
		return inb(COM1 + REG_DATA);
	return -1;
}
