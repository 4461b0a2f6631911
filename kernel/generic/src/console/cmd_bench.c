/** @file cmd_bench.c
 * `chtbench <bench-id> <cpus> <update-percent> [-w] [-t SECONDS] [-m]`: runs one
 * benchmark of kernel/test/bench/chtbench/ (docs/CHTBENCH.md);
 * `chtbench`, `chtbench 0` and `chtbench 0 0 0` list them.
 */
#include <console/kconsole.h>
#include <console/cmds.h>
#include <bench/chtbench.h>
#include <lib/str.h>

static const cmd_arg_t chtbench_args[] = {
	{ .type = ARG_TYPE_INT, .name = "bench-id", .optional = true },
	{ .type = ARG_TYPE_INT, .name = "cpus", .optional = true },
	{ .type = ARG_TYPE_INT, .name = "update-percent", .optional = true },
};

enum { OPT_WIRED, OPT_SECONDS, OPT_SLABMAP };

static const cmd_opt_t chtbench_opts[] = {
	[OPT_WIRED] = { .flag = 'w' },
	[OPT_SECONDS] = { .flag = 't', .value_name = "SECONDS", .min = 1,
	    .max = CHTBENCH_MAX_SECONDS },
	[OPT_SLABMAP] = { .flag = 'm' },
};

static int cmd_chtbench(const cmd_call_t *call)
{
	const cmd_argval_t *a = call->arg;
	if (!a[0].present || (a[0].intval == 0 &&
	    (!a[1].present || a[1].intval == 0))) {
		chtbench_list();
		return 0;
	}
	if (!a[1].present || !a[2].present) {
		chtbench_usage("missing arguments");
		return 0;
	}
	const cmd_optval_t *t = &call->opt[OPT_SECONDS];
	chtbench_run(a[0].intval, a[1].intval, a[2].intval,
	    call->opt[OPT_WIRED].present,
	    t->present ? (unsigned) t->value : CHTBENCH_DEFAULT_SECONDS,
	    call->opt[OPT_SLABMAP].present);
	return 0;
}

static cmd_info_t chtbench_cmd = {
	.name = "chtbench",
	.description = "Benchmarks: chtbench <id> <cpus> <update%> [-w] [-t s]; "
	    "'chtbench 0 0 0' lists them",
	.func = cmd_chtbench,
	.argv = chtbench_args,
	.argc = ARRAY_SIZE(chtbench_args),
	.opts = chtbench_opts,
	.optc = ARRAY_SIZE(chtbench_opts),
};

void cmd_bench_init(void)
{
	(void) cmd_register(&chtbench_cmd);
}
