/** @file kconsole.h
 * Kernel console: command registry, line editing, argument parsing.
 *
 * Commands register a name, a description and typed arguments. The parser checks
 * the argument count and types before the command runs and prints the usage on a
 * mismatch, so command functions see only well-formed arguments.
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

/** Argument specification and, after parsing, its value. */
typedef struct {
	cmd_arg_type_t type;
	const char *name;
	/** Optional arguments must follow every required one. */
	bool optional;
	/** Filled by the parser. */
	bool present;
	int64_t intval;
	const char *strval;
} cmd_arg_t;

typedef struct cmd_info {
	const char *name;
	const char *description;
	/** Runs the command; returns 0 on success (non-zero is reported). */
	int (*func)(cmd_arg_t *argv, size_t argc);
	/** Argument specifications (may be NULL with argc 0). */
	cmd_arg_t *argv;
	size_t argc;
	/**
	 * Extra argument words (flags such as "-w -t 5") accepted after the typed
	 * ones, handed to the command raw; 0 for none.
	 */
	size_t extra_max;
	/** Filled by the parser: extra words (valid during func only). */
	const char *extra[KCONSOLE_ARGS_MAX];
	size_t extra_count;
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

/** Registers the built-in commands. BSP, before kconsole_run() and other users. */
void kconsole_init(void);

/** Runs the read-eval loop forever (in the kconsole thread). */
NO_RETURN void kconsole_run(void);

/** Registers the generic commands (help, version, cpus, ...). */
void cmds_init(void);

/** Visits every registered command in name order. */
void cmd_foreach(void (*fn)(const cmd_info_t *cmd, void *arg), void *arg);

#endif
