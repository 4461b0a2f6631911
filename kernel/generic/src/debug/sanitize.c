/** @file sanitize.c
 * What the sanitizers share (see debug/sanitize.h): the report lock, the
 * mode (panic or continue) and the counters (the `sanitize` console
 * command is console/cmd_sanitize.c).
 * Compiled without instrumentation.
 */
#include <debug/sanitize.h>
#include <debug/kasan.h>
#include <arch.h>
#include <arch/asm.h>
#include <cpu.h>
#include <print.h>
#include <panic.h>

/** Report mode: false panic after a report (default), true continue. */
static bool continue_mode;
/** Reports per sanitizer; atomics. */
static size_t report_counts[SAN_COUNT];
/** The report lock: CPU id + 1 of the holder, 0 free. */
static unsigned report_owner;
static ipl_t report_ipl;

static const char *const san_names[SAN_COUNT] = { "KASAN", "UBSAN", "KCSAN" };

bool san_report_begin(san_kind_t kind)
{
	if (panic_in_progress())
		return false;
	unsigned me = CPU ? CPU->id + 1 : 1;
	if (__atomic_load_n(&report_owner, __ATOMIC_RELAXED) == me)
		return false;  /* a fault inside this CPU's report */
	ipl_t ipl = interrupts_disable();
	unsigned expect = 0;
	while (!__atomic_compare_exchange_n(&report_owner, &expect, me, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		expect = 0;
		cpu_relax();
	}
	report_ipl = ipl;
	printf("==================================================================\n");
	(void) kind;
	return true;
}

void san_report_end(san_kind_t kind, const char *what)
{
	printf("==================================================================\n");
	__atomic_fetch_add(&report_counts[kind], 1, __ATOMIC_RELAXED);
	ipl_t ipl = report_ipl;
	/* Release: the report's state before the next reporter's. */
	__atomic_store_n(&report_owner, 0, __ATOMIC_RELEASE);
	interrupts_restore(ipl);
	if (!__atomic_load_n(&continue_mode, __ATOMIC_RELAXED))
		panic("%s: %s", san_names[kind], what);
}

size_t san_report_count(san_kind_t kind)
{
	return __atomic_load_n(&report_counts[kind], __ATOMIC_RELAXED);
}

bool san_continue_mode(void)
{
	return __atomic_load_n(&continue_mode, __ATOMIC_RELAXED);
}

void san_set_continue_mode(bool on)
{
	__atomic_store_n(&continue_mode, on, __ATOMIC_RELAXED);
}
