/** @file cmd_test.c
 * Test commands: `test` (list, run one, run every safe one) and
 * `rcutorture [-t SECONDS]` (the rcutorture test with a chosen duration).
 */
#include <console/kconsole.h>
#include <console/cmds.h>
#include <lib/str.h>
#include <test.h>
#include <print.h>

static void test_list(void)
{
	printf("Tests (run with 'test NAME', 'test *' runs every safe one):\n");
	for (test_t *t = tests; t->name; t++)
		printf("  %-12s %-6s %s\n", t->name, t->safe ? "safe" : "unsafe",
		    t->desc);
}

static const cmd_arg_t test_args[] = {
	{ .type = ARG_TYPE_STRING, .name = "name|*", .optional = true },
};

static int cmd_test(const cmd_call_t *call)
{
	if (!call->arg[0].present) {
		test_list();
		return 0;
	}
	const char *name = call->arg[0].strval;
	if (strcmp(name, "*") == 0) {
		unsigned passed = 0, failed = 0;
		for (test_t *t = tests; t->name; t++) {
			if (!t->safe)
				continue;
			if (test_run(t))
				passed++;
			else
				failed++;
		}
		printf("%u passed, %u failed\n", passed, failed);
		return 0;
	}
	const test_t *t = test_find(name);
	if (!t) {
		printf("Unknown test '%s'\n", name);
		test_list();
		return 0;
	}
	test_run(t);
	return 0;
}

static const cmd_opt_t rcutorture_opts[] = {
	{ .flag = 't', .value_name = "SECONDS", .min = 1,
	    .max = RCUTORTURE_MAX_SECONDS },
};

static int cmd_rcutorture(const cmd_call_t *call)
{
	unsigned seconds = call->opt[0].present ? (unsigned) call->opt[0].value :
	    RCUTORTURE_DEFAULT_SECONDS;
	const test_t *t = test_find("rcutorture");
	if (!t) {
		printf("rcutorture: not in the test table\n");
		return 0;
	}
	unsigned saved = rcutorture_seconds;
	rcutorture_seconds = seconds;
	test_run(t);
	rcutorture_seconds = saved;
	return 0;
}

static cmd_info_t cmds[] = {
	{ .name = "test", .description = "List tests, run one (test NAME) or all "
	    "safe ones (test *)", .func = cmd_test, .argv = test_args,
	    .argc = ARRAY_SIZE(test_args) },
	{ .name = "rcutorture", .description = "RCU torture test; -t SECONDS sets "
	    "the duration (default 3)", .func = cmd_rcutorture,
	    .opts = rcutorture_opts, .optc = ARRAY_SIZE(rcutorture_opts) },
};

void cmd_test_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		(void) cmd_register(&cmds[i]);
}
