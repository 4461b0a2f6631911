/** @file cmd_kcsan.c
 * The `kcsan` command (KCSAN kernels only, make SANITIZE=kcsan): the
 * runtime's statistics, what a report does, the sampling parameters
 * (debug/kcsan.h, docs/SANITIZERS_KCSAN.md).
 */
#include <console/cmds.h>

#ifdef CONFIG_KCSAN

#include <console/kconsole.h>
#include <debug/kcsan.h>
#include <lib/str.h>
#include <print.h>

static const cmd_arg_t kcsan_args[] = {
	{ .type = ARG_TYPE_STRING, .name = "panic|continue|skip|delay",
	    .optional = true },
	{ .type = ARG_TYPE_INT, .name = "N", .optional = true },
};

static int cmd_kcsan(const cmd_call_t *call)
{
	if (call->nargs >= 1) {
		const char *w = call->arg[0].strval;
		bool has_n = call->nargs == 2 && call->arg[1].intval >= 1 &&
		    call->arg[1].intval <= 1000000;
		if (strcmp(w, "panic") == 0 && call->nargs == 1) {
			kcsan_set_panic(true);
		} else if (strcmp(w, "continue") == 0 && call->nargs == 1) {
			kcsan_set_panic(false);
		} else if (strcmp(w, "skip") == 0 && has_n) {
			kcsan_set_skip((uint32_t) call->arg[1].intval);
		} else if (strcmp(w, "delay") == 0 && has_n) {
			kcsan_set_delay((uint32_t) call->arg[1].intval);
		} else {
			printf("usage: kcsan [panic | continue | skip N | delay N] "
			    "(N in 1..1000000)\n");
			return 1;
		}
	}
	kcsan_stats_print();
	return 0;
}

static cmd_info_t cmds[] = {
	{ .name = "kcsan", .description = "KCSAN statistics; panic|continue: what "
	    "a report does; skip N: mean accesses between watchpoints; delay N: "
	    "polls per watchpoint", .func = cmd_kcsan, .argv = kcsan_args,
	    .argc = 2 },
};

void cmd_kcsan_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		(void) cmd_register(&cmds[i]);
}

#endif
