/** @file cmd_sanitize.c
 * The `sanitize` console command (sanitizer builds only; docs/SANITIZERS.md):
 * the report mode (report and continue, or panic), the report counts,
 * KASAN's quarantine and stack depot, a quarantine flush.
 */
#include <debug/sanitize.h>
#include <debug/kasan.h>
#include <console/kconsole.h>
#include <lib/str.h>
#include <print.h>

static cmd_arg_t sanitize_args[] = {
	{ .name = "action", .type = ARG_TYPE_STRING, .optional = true },
};

static int cmd_sanitize(const cmd_call_t *call)
{
	const char *a = call->nargs > 0 ? call->arg[0].strval : "stats";
	if (strcmp(a, "report") == 0) {
		san_set_continue_mode(true);
		printf("sanitize: report and continue\n");
	} else if (strcmp(a, "panic") == 0) {
		san_set_continue_mode(false);
		printf("sanitize: panic after a report\n");
	} else if (strcmp(a, "stats") == 0) {
		printf("sanitize: mode %s; reports: KASAN %zu, UBSAN %zu, KCSAN %zu\n",
		    san_continue_mode() ? "report" : "panic", san_report_count(SAN_KASAN),
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
