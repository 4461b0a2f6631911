/** @file cmd_task.c
 * Console commands of user tasks: programs, run, tasks, kill.
 */
#include <console/kconsole.h>
#include <console/cmds.h>
#include <proc/task.h>
#include <proc/program.h>
#include <lib/str.h>
#include <errno.h>
#include <print.h>

static int cmd_programs(const cmd_call_t *call)
{
	(void) call;
	size_t n = program_count();
	printf("  name                       bytes\n");
	for (size_t i = 0; i < n; i++) {
		const program_t *p = program_get(i);
		printf("  %-20s  %10zu\n", p->name, p->size);
	}
	printf("%zu programs\n", n);
	return 0;
}

/*
 * run [-b] NAME [ARGS...]: every word is a positional string (run declares no
 * options, so a program's own options such as `-t 1` reach it untouched); a
 * leading -b is taken here.
 */
static const cmd_arg_t run_args[] = {
	{ .type = ARG_TYPE_STRING, .name = "[-b] NAME" },
	{ .type = ARG_TYPE_STRING, .name = "ARG1", .optional = true },
	{ .type = ARG_TYPE_STRING, .name = "ARG2", .optional = true },
	{ .type = ARG_TYPE_STRING, .name = "ARG3", .optional = true },
	{ .type = ARG_TYPE_STRING, .name = "ARG4", .optional = true },
	{ .type = ARG_TYPE_STRING, .name = "ARG5", .optional = true },
	{ .type = ARG_TYPE_STRING, .name = "ARG6", .optional = true },
	{ .type = ARG_TYPE_STRING, .name = "ARG7", .optional = true },
};

static cmd_info_t run_cmd;

static int cmd_run(const cmd_call_t *call)
{
	const char *words[PROGRAM_ARGS_MAX];
	size_t n = 0;
	bool background = false;
	size_t next = 0;
	if (strcmp(call->arg[0].strval, "-b") == 0) {
		background = true;
		if (call->nargs < 2) {
			cmd_print_usage(&run_cmd);
			return 1;
		}
		next = 1;
	}
	const char *first = call->arg[next].strval;
	for (; next < call->nargs && n < PROGRAM_ARGS_MAX; next++)
		words[n++] = call->arg[next].strval;

	const program_t *prog = program_find(first);
	if (!prog) {
		printf("run: no program '%s' (see programs)\n", first);
		return 1;
	}
	task_t *task;
	int rc = program_spawn(prog, (int) n, words, background, &task);
	if (rc != EOK) {
		printf("run: cannot start %s: %s\n", prog->name, str_error(rc));
		return 1;
	}
	if (background) {
		printf("task %lu (%s) started in the background\n", task->id,
		    task->name);
		task_release(task);
		return 0;
	}
	int status = task_wait(task);
	const char *reason = __atomic_load_n(&task->kill_reason, __ATOMIC_RELAXED);
	if (reason)
		printf("task %lu (%s) killed (%s)\n", task->id, task->name, reason);
	else
		printf("task %lu (%s) exited with status %d\n", task->id,
		    task->name, status);
	task_release(task);
	return 0;
}

static int cmd_tasks(const cmd_call_t *call)
{
	(void) call;
	tasks_print();
	return 0;
}

static const cmd_arg_t kill_args[] = {
	{ .type = ARG_TYPE_INT, .name = "ID" },
};

static int cmd_kill(const cmd_call_t *call)
{
	int64_t id = call->arg[0].intval;
	if (id <= 0) {
		printf("kill: no task %ld\n", (long) id);
		return 1;
	}
	task_t *task = task_find((uint64_t) id);
	if (!task) {
		printf("kill: no task %ld\n", (long) id);
		return 1;
	}
	task_mark_killed(task, -1, "kill command");
	task_kill_wake(task);
	printf("task %lu (%s) killed by request\n", task->id, task->name);
	task_release(task);
	return 0;
}

static cmd_info_t task_cmds[] = {
	{ .name = "programs", .description = "Programs in the boot image",
	    .func = cmd_programs },
	{ .name = "tasks", .description = "User tasks: id, name, threads, state, "
	    "pages mapped, faults", .func = cmd_tasks },
	{ .name = "kill", .description = "End a user task", .func = cmd_kill,
	    .argv = kill_args, .argc = 1 },
};

void cmd_task_init(void)
{
	run_cmd = (cmd_info_t) {
		.name = "run", .description = "Run a program and wait for it "
		    "(run -b: in the background): run [-b] NAME [ARGS...]",
		.func = cmd_run, .argv = run_args, .argc = ARRAY_SIZE(run_args),
	};
	(void) cmd_register(&run_cmd);
	for (size_t i = 0; i < ARRAY_SIZE(task_cmds); i++)
		(void) cmd_register(&task_cmds[i]);
}
