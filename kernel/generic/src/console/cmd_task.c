/** @file cmd_task.c
 * Console commands of user tasks: programs, run, tasks, kill.
 */
#include <console/kconsole.h>
#include <proc/task.h>
#include <proc/program.h>
#include <lib/str.h>
#include <errno.h>
#include <print.h>

static int cmd_programs(cmd_arg_t *argv, size_t argc)
{
	size_t n = program_count();
	printf("  name                       bytes\n");
	for (size_t i = 0; i < n; i++) {
		const program_t *p = program_get(i);
		printf("  %-20s  %10zu\n", p->name, p->size);
	}
	printf("%zu programs\n", n);
	return 0;
}

static cmd_arg_t run_args[] = {
	{ .type = ARG_TYPE_STRING, .name = "[-b] NAME" },
};

static cmd_info_t run_cmd;

static int cmd_run(cmd_arg_t *argv, size_t argc)
{
	const char *words[PROGRAM_ARGS_MAX];
	size_t n = 0;
	bool background = false;
	const char *first = argv[0].strval;
	size_t next = 0;
	if (strcmp(first, "-b") == 0) {
		background = true;
		if (run_cmd.extra_count == 0) {
			cmd_print_usage(&run_cmd);
			return 1;
		}
		first = run_cmd.extra[0];
		next = 1;
	}
	words[n++] = first;
	for (; next < run_cmd.extra_count && n < PROGRAM_ARGS_MAX; next++)
		words[n++] = run_cmd.extra[next];

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

static int cmd_tasks(cmd_arg_t *argv, size_t argc)
{
	tasks_print();
	return 0;
}

static cmd_arg_t kill_args[] = {
	{ .type = ARG_TYPE_INT, .name = "ID" },
};

static int cmd_kill(cmd_arg_t *argv, size_t argc)
{
	if (argv[0].intval <= 0) {
		printf("kill: no task %ld\n", argv[0].intval);
		return 1;
	}
	task_t *task = task_find((uint64_t) argv[0].intval);
	if (!task) {
		printf("kill: no task %ld\n", argv[0].intval);
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

/** Registers the task commands. Boot. */
void cmd_task_init(void);
void cmd_task_init(void)
{
	run_cmd = (cmd_info_t) {
		.name = "run", .description = "Run a program and wait for it "
		    "(run -b: in the background): run [-b] NAME [ARGS...]",
		.func = cmd_run, .argv = run_args, .argc = 1,
		.extra_max = KCONSOLE_ARGS_MAX - 1,
	};
	(void) cmd_register(&run_cmd);
	for (size_t i = 0; i < ARRAY_SIZE(task_cmds); i++)
		(void) cmd_register(&task_cmds[i]);
}
