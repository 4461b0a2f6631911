/** @file kconsole.h
 * Kernel console: command registry, line editing, argument parsing.
 *
 * Commands register a name, a description, typed arguments and options. The
 * parser checks the argument count and types and the options before the command
 * runs and prints the usage on a mismatch, so command functions see only
 * well-formed arguments, handed to them in a cmd_call_t. The commands
 * themselves live in kernel/generic/src/console/cmd_<subsystem>.c (see
 * console/cmds.h); the subsystems do not know about the console.
 */
#ifndef KERN_KCONSOLE_H_
#define KERN_KCONSOLE_H_

#include <typedefs.h>

#define KCONSOLE_PROMPT "kconsole> "
/** Longest accepted input line (characters, without the terminator). */
#define KCONSOLE_LINE_MAX 255
/** Most arguments a command may take. */
#define KCONSOLE_ARGS_MAX 8

typedef enum {
	ARG_TYPE_INT,       /**< signed 64-bit integer (decimal or 0x hex) */
	ARG_TYPE_STRING,    /**< one word */
} cmd_arg_type_t;

/** Positional argument specification (part of the command record). */
typedef struct {
	cmd_arg_type_t type;
	const char *name;
	/** Optional arguments must follow every required one. */
	bool optional;
} cmd_arg_t;

/** Most options a command may declare. */
#define KCONSOLE_OPTS_MAX 4

/**
 * Option specification: `-F` (a switch) or `-F VALUE` (an integer in
 * [min, max]). A word `-` followed by a letter is an option for a command
 * that declares options (any other word, "-5" included, is positional); an
 * unknown option, a missing or out-of-range value, or an option given twice
 * prints the usage and runs nothing.
 */
typedef struct {
	char flag;
	/** NULL for a switch; else the value's name in the usage ("SECONDS"). */
	const char *value_name;
	int64_t min;
	int64_t max;
} cmd_opt_t;

/** One parsed positional argument. */
typedef struct {
	bool present;
	int64_t intval;        /**< ARG_TYPE_INT */
	const char *strval;    /**< the word (valid during the call only) */
} cmd_argval_t;

/** One parsed option. */
typedef struct {
	bool present;
	int64_t value;         /**< options with a value */
} cmd_optval_t;

/**
 * What a command receives: its arguments and options, parsed and checked
 * against its record by kconsole (in the same order as the specifications).
 * Built on kconsole's stack for one call.
 */
typedef struct {
	cmd_argval_t arg[KCONSOLE_ARGS_MAX];
	size_t nargs;          /**< positional arguments given */
	cmd_optval_t opt[KCONSOLE_OPTS_MAX];
} cmd_call_t;

typedef struct cmd_info {
	const char *name;
	const char *description;
	/**
	 * Runs the command (kconsole thread; may sleep); returns 0 on success
	 * (non-zero is reported).
	 */
	int (*func)(const cmd_call_t *call);
	/** Argument specifications (may be NULL with argc 0). */
	const cmd_arg_t *argv;
	size_t argc;
	/** Option specifications (may be NULL with optc 0). */
	const cmd_opt_t *opts;
	size_t optc;
	/** Registry link; protected by the registry lock. */
	struct cmd_info *next;
} cmd_info_t;

/**
 * Adds a command to the registry (kept sorted by name). Any thread context; the
 * structure must stay valid forever.
 * @return EOK, EEXIST when the name is taken, EINVAL on a malformed spec.
 */
int cmd_register(cmd_info_t *cmd);

/** Prints "Usage: name <arg> [opt]" for @a cmd. */
void cmd_print_usage(const cmd_info_t *cmd);

/** Parses and runs one input line (also used by tests). Never panics on input. */
void kconsole_exec(char *line);

/**
 * Registers every command (kernel/generic/src/console/cmd_*.c). BSP, before
 * kconsole_run(); the commands check themselves whether their subsystem is up.
 */
void kconsole_init(void);

/** Runs the read-eval loop forever (in the kconsole thread). */
NO_RETURN void kconsole_run(void);

/**
 * Visits every registered command in name order, under the registry lock:
 * @a fn must not register commands (it may print). Any thread context.
 */
void cmd_foreach(void (*fn)(const cmd_info_t *cmd, void *arg), void *arg);

#endif
