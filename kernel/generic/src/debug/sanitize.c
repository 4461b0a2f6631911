/** @file sanitize.c
 * What the sanitizers share (see debug/sanitize.h): the report lock, the
 * mode (panic or continue), the counters and the `sanitize` console command.
 * Compiled without instrumentation.
 */
#include <debug/sanitize.h>
#include <debug/kasan.h>
#include <console/kconsole.h>
#include <lib/str.h>
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

static cmd_arg_t sanitize_args[] = {
	{ .name = "action", .type = ARG_TYPE_STRING, .optional = true },
};

static int cmd_sanitize(const cmd_call_t *call)
{
	const char *a = call->nargs > 0 ? call->arg[0].strval : "stats";
	if (strcmp(a, "report") == 0) {
		__atomic_store_n(&continue_mode, true, __ATOMIC_RELAXED);
		printf("sanitize: report and continue\n");
	} else if (strcmp(a, "panic") == 0) {
		__atomic_store_n(&continue_mode, false, __ATOMIC_RELAXED);
		printf("sanitize: panic after a report\n");
	} else if (strcmp(a, "stats") == 0) {
		printf("sanitize: mode %s; reports: KASAN %zu, UBSAN %zu, KCSAN %zu\n",
		    continue_mode ? "report" : "panic", san_report_count(SAN_KASAN),
		    san_report_count(SAN_UBSAN), san_report_count(SAN_KCSAN));
#ifdef CONFIG_KASAN
		kasan_print_stats();
#endif
#ifdef CONFIG_KASAN
	} else if (strcmp(a, "flush") == 0) {
		printf("sanitize: %zu quarantined objects freed\n",
		    kasan_quarantine_flush());
#endif
	} else {
		printf("sanitize: unknown action '%s' (report, panic, stats, flush)\n", a);
		return 1;
	}
	return 0;
}

static cmd_info_t sanitize_cmd = {
	.name = "sanitize",
	.description = "Sanitizers: report (continue after reports), panic "
	    "(the default), stats, flush (KASAN's quarantine)",
	.func = cmd_sanitize,
	.argv = sanitize_args,
	.argc = 1,
};

void cmd_sanitize_init(void)
{
	(void) cmd_register(&sanitize_cmd);
}
