/** @file console.c
 * Console output with whole-call atomicity, and the input ring.
 *
 * Output: a console lock with an owner CPU, so that a CPU that already holds it (an
 * exception raised while printing, nested printf in an interrupt) does not deadlock,
 * and a panicking CPU can take it over after a bounded wait. Characters of two
 * printf() calls never interleave.
 *
 * Input: the UART interrupt (routed to the BSP) moves received bytes into a ring
 * buffer protected by an IRQ spinlock; the reader also polls the UART, so input
 * works even if the interrupt was never routed. No byte is ever dropped: when
 * the ring is full, the rest stays in the UART's FIFO and the receive interrupt
 * is masked until the reader has made room (an emulated UART then stops taking
 * bytes from the host, which holds them back: flow control by not reading).
 */
#include <console/console.h>
#include <arch/asm.h>
#include <arch.h>
#include <synch/spinlock.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <cpu.h>
#include <lib/str.h>
#include <synch/waitq.h>

/**
 * Owner of the console output lock: CPU id + 1, 0 when free. Atomics.
 * Nesting depth is CPU-local to the owner.
 */
static int console_owner;
static unsigned console_depth;
/** Saved interrupt state of the outermost console_lock(); owner-local. */
static ipl_t console_ipl;

#define INPUT_RING 1024
/** Input ring; protected by input_lock (interrupt handler and reader). */
static char input_ring[INPUT_RING];
static size_t input_head;
static size_t input_tail;
/**
 * The UART receive interrupt is routed and wanted (set once at boot, before
 * the handler can run), and whether it is masked now because the ring was
 * full. Both, and every access to the UART's receive side (data register,
 * IER), are protected by input_lock.
 */
static bool input_irq_routed;
static bool input_irq_masked;
static irq_spinlock_t input_lock = IRQ_SPINLOCK_INITIALIZER("console.input");
/** The reader sleeps here; the UART interrupt wakes it. */
static waitq_t input_wq;
static bool input_wq_ready;

/** Poll interval of the reader, in case the UART interrupt is not delivered. */
#define INPUT_POLL_US 20000

void console_init(void)
{
	console_hw_init();
}

static int self_token(void)
{
	cpu_t *c = CPU;
	return c ? (int) c->id + 1 : 1;
}

void console_lock(void)
{
	ipl_t ipl = interrupts_disable();
	int me = self_token();
	if (__atomic_load_n(&console_owner, __ATOMIC_RELAXED) == me) {
		console_depth++;
		return;
	}
	uint64_t spins = 0;
	for (;;) {
		int expected = 0;
		if (__atomic_compare_exchange_n(&console_owner, &expected, me, false,
		    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		cpu_relax();
		/*
		 * A panicking CPU takes the console over after a bounded wait (the
		 * owner may be stopped while holding it); other CPUs never print
		 * again once a panic started.
		 */
		if (panic_in_progress() && ++spins > 10000000UL) {
			__atomic_store_n(&console_owner, me, __ATOMIC_SEQ_CST);
			break;
		}
	}
	console_depth = 1;
	console_ipl = ipl;
}

void console_unlock(void)
{
	if (--console_depth > 0)
		return;
	ipl_t ipl = console_ipl;
	__atomic_store_n(&console_owner, 0, __ATOMIC_RELEASE);
	interrupts_restore(ipl);
}

void console_write_locked(const char *s, size_t n)
{
	assert(__atomic_load_n(&console_owner, __ATOMIC_RELAXED) == self_token());
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			console_hw_putc('\r');
		console_hw_putc(s[i]);
	}
}

static void console_out(char c, void *data)
{
	(void) data;
	if (c == '\n')
		console_hw_putc('\r');
	console_hw_putc(c);
}

int vprintf(const char *fmt, va_list ap)
{
	console_lock();
	int n = printf_core(console_out, NULL, fmt, ap);
	console_unlock();
	return n;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

void puts(const char *s)
{
	console_lock();
	console_write_locked(s, strlen(s));
	console_unlock();
}

/* Input */

static size_t input_count_locked(void)
{
	assert(irq_spinlock_locked_by_me(&input_lock));
	return (input_head + INPUT_RING - input_tail) % INPUT_RING;
}

/**
 * Moves bytes from the UART into the ring while the ring has room. When it is
 * full, the remaining bytes are left in the UART and its receive interrupt is
 * masked (otherwise it would fire again at once); console_getchar() unmasks it
 * once the reader has emptied half of the ring. Caller holds input_lock.
 */
static void input_drain_uart_locked(void)
{
	assert(irq_spinlock_locked_by_me(&input_lock));
	while (input_count_locked() < INPUT_RING - 1) {
		int c = console_hw_getc_nowait();
		if (c < 0)
			return;
		input_ring[input_head] = (char) c;
		input_head = (input_head + 1) % INPUT_RING;
	}
	if (input_irq_routed && !input_irq_masked) {
		console_hw_set_rx_irq(false);
		input_irq_masked = true;
	}
}

/** The receive interrupt (the architecture acknowledges it afterwards). */
static void uart_irq_handler(void)
{
	irq_spinlock_lock(&input_lock, false);
	input_drain_uart_locked();
	irq_spinlock_unlock(&input_lock, false);
	if (input_wq_ready)
		waitq_wake_one(&input_wq);
}

void console_enable_input_irq(void)
{
	waitq_initialize(&input_wq);
	input_wq_ready = true;
	if (console_hw_irq_enable(uart_irq_handler)) {
		irq_spinlock_lock(&input_lock, true);
		input_irq_routed = true;
		input_irq_masked = false;
		console_hw_set_rx_irq(true);
		irq_spinlock_unlock(&input_lock, true);
	}
}

char console_getchar(void)
{
	for (;;) {
		irq_spinlock_lock(&input_lock, true);
		input_drain_uart_locked();
		if (input_head != input_tail) {
			char c = input_ring[input_tail];
			input_tail = (input_tail + 1) % INPUT_RING;
			/*
			 * Unmask only with half of the ring free, so that a
			 * long paste does not toggle the interrupt per byte;
			 * meanwhile the drain above keeps reading the UART.
			 */
			if (input_irq_masked &&
			    input_count_locked() <= INPUT_RING / 2) {
				input_irq_masked = false;
				console_hw_set_rx_irq(true);
			}
			irq_spinlock_unlock(&input_lock, true);
			return c;
		}
		irq_spinlock_unlock(&input_lock, true);
		/*
		 * A byte that arrives after the check wakes us through the
		 * interrupt (a missed wake-up is remembered by the wait queue);
		 * the timeout polls the UART in case the interrupt never comes.
		 */
		(void) waitq_sleep_timeout(&input_wq, INPUT_POLL_US, SYNCH_FLAGS_NONE);
	}
}
