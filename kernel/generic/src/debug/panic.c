/** @file panic.c
 * Kernel panic: report, stop the other CPUs, halt.
 */
#include <panic.h>
#include <print.h>
#include <cpu.h>
#include <arch/asm.h>
#include <arch/cpu_arch.h>
#include <arch/interrupt.h>
#include <console/console.h>
#include <debug/symtab.h>
#include <smp/smp_call.h>

/** CPU id + 1 of the first CPU that panicked; 0 while none. Atomics. */
static int panic_cpu;

bool panic_in_progress(void)
{
	return __atomic_load_n(&panic_cpu, __ATOMIC_SEQ_CST) != 0;
}

/*
 * Only the first CPU to panic reports; a CPU that panics while another one is
 * reporting (or that panics again while reporting) stops quietly.
 */
static void panic_enter(void)
{
	(void) interrupts_disable();
	cpu_t *c = CPU;
	int me = c ? (int) c->id + 1 : 1;
	int expected = 0;
	if (!__atomic_compare_exchange_n(&panic_cpu, &expected, me, false,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		cpu_arch_stop_self();
	smp_halt_others();
}

static NO_RETURN void panic_finish(uintptr_t fp)
{
	backtrace_print_from(fp);
	printf("System halted.\n");
	cpu_arch_stop_self();
}

/** The report's first line: "PANIC on CPU N: " and the message. */
static void panic_message(const char *fmt, va_list ap)
{
	printf("\nPANIC on CPU %u: ", CPU->id);
	vprintf(fmt, ap);
	printf("\n");
}

void panic(const char *fmt, ...)
{
	panic_enter();
	va_list ap;
	va_start(ap, fmt);
	console_lock();
	panic_message(fmt, ap);
	console_unlock();
	va_end(ap);
	panic_finish(frame_pointer());
}

void panic_istate(istate_t *istate, const char *fmt, ...)
{
	panic_enter();
	va_list ap;
	va_start(ap, fmt);
	console_lock();
	panic_message(fmt, ap);
	va_end(ap);
	istate_print(istate);
	console_unlock();
	panic_finish(istate_get_fp(istate));
}

void panic_assert(const char *file, int line, const char *func, const char *expr)
{
	panic("Assertion failed: %s, in %s() at %s:%d", expr, func, file, line);
}
