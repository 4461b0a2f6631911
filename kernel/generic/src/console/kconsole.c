/** @file kconsole.c
 * Kernel console: line editing with history, tokenizing, typed argument parsing
 * and the command registry.
 *
 * Input handling: printable ASCII is inserted, Backspace/DEL erase, Ctrl-U clears
 * the line, Ctrl-C abandons it, Up/Down (ESC [ A / ESC [ B) walk the history, other
 * escape sequences and control characters are swallowed, tabs become spaces, bytes
 * above 0x7e are ignored. Overlong lines are refused with a message. Whatever
 * arrives, the prompt comes back.
 */
#include <debug/sanitize.h>
#include <console/kconsole.h>
#include <console/console.h>
#include <console/cmds.h>
#include <synch/spinlock.h>
#include <lib/str.h>
#include <print.h>
#include <errno.h>

/**
 * Sorted list of commands; the list head and every record's next link are
 * protected by cmd_lock (records are never unregistered).
 */
static cmd_info_t *cmd_list;
static spinlock_t cmd_lock = SPINLOCK_INITIALIZER("kconsole.cmds");

#define HISTORY 16
/** Input history; only the kconsole loop touches it (single reader). */
static char history[HISTORY][KCONSOLE_LINE_MAX + 1];
static unsigned history_count;

int cmd_register(cmd_info_t *cmd)
{
	if (!cmd || !cmd->name || !cmd->func || cmd->argc > KCONSOLE_ARGS_MAX ||
	    cmd->optc > KCONSOLE_OPTS_MAX || (cmd->argc && !cmd->argv) ||
	    (cmd->optc && !cmd->opts))
		return EINVAL;
	bool seen_optional = false;
	for (size_t i = 0; i < cmd->argc; i++) {
		if (cmd->argv[i].optional)
			seen_optional = true;
		else if (seen_optional)
			return EINVAL;
	}
	for (size_t i = 0; i < cmd->optc; i++) {
		char f = cmd->opts[i].flag;
		if (!((f >= 'a' && f <= 'z') || (f >= 'A' && f <= 'Z')))
			return EINVAL;
		if (cmd->opts[i].value_name && cmd->opts[i].min > cmd->opts[i].max)
			return EINVAL;
	}

	spinlock_lock(&cmd_lock);
	cmd_info_t **pp = &cmd_list;
	while (*pp && strcmp((*pp)->name, cmd->name) < 0)
		pp = &(*pp)->next;
	if (*pp && strcmp((*pp)->name, cmd->name) == 0) {
		spinlock_unlock(&cmd_lock);
		return EEXIST;
	}
	cmd->next = *pp;
	*pp = cmd;
	spinlock_unlock(&cmd_lock);
	return EOK;
}

void cmd_foreach(void (*fn)(const cmd_info_t *cmd, void *arg), void *arg)
{
	/*
	 * The whole walk under the lock that protects cmd_list and the next
	 * links (a command registered meanwhile is linked in place). Lock
	 * order: kconsole.cmds before the console lock that printf takes.
	 */
	spinlock_lock(&cmd_lock);
	for (cmd_info_t *c = cmd_list; c; c = c->next)
		fn(c, arg);
	spinlock_unlock(&cmd_lock);
}

static cmd_info_t *cmd_find(const char *name)
{
	spinlock_lock(&cmd_lock);
	cmd_info_t *c = cmd_list;
	while (c && strcmp(c->name, name) != 0)
		c = c->next;
	spinlock_unlock(&cmd_lock);
	return c;
}

void cmd_print_usage(const cmd_info_t *cmd)
{
	printf("Usage: %s", cmd->name);
	for (size_t i = 0; i < cmd->argc; i++) {
		const cmd_arg_t *a = &cmd->argv[i];
		const char *t = a->type == ARG_TYPE_INT ? "number" : "word";
		if (a->optional)
			printf(" [%s:%s]", a->name, t);
		else
			printf(" <%s:%s>", a->name, t);
	}
	for (size_t i = 0; i < cmd->optc; i++) {
		const cmd_opt_t *o = &cmd->opts[i];
		if (o->value_name)
			printf(" [-%c %s]", o->flag, o->value_name);
		else
			printf(" [-%c]", o->flag);
	}
	printf("\n  %s\n", cmd->description);
}

/** Splits @a line in place into at most @a max words. @return count, or -1 if too many. */
static int tokenize(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (n == max)
			return -1;
		words[n++] = p;
		while (*p && *p != ' ')
			p++;
		if (*p)
			*p++ = 0;
	}
	return n;
}

/** True when @a w is an option word (-LETTER...) of a command with options. */
static bool is_option(const cmd_info_t *cmd, const char *w)
{
	return cmd->optc > 0 && w[0] == '-' &&
	    ((w[1] >= 'a' && w[1] <= 'z') || (w[1] >= 'A' && w[1] <= 'Z'));
}

/**
 * Parses the words after the command name into @a call. @return true when
 * they fit the command's record; else prints why and false.
 */
static bool parse_args(const cmd_info_t *cmd, char **words, size_t n,
    cmd_call_t *call)
{
	memset(call, 0, sizeof(*call));
	for (size_t i = 0; i < n; i++) {
		const char *w = words[i];
		if (is_option(cmd, w)) {
			size_t k = 0;
			while (k < cmd->optc && !(cmd->opts[k].flag == w[1] && !w[2]))
				k++;
			if (k == cmd->optc) {
				printf("Unknown option '%s' for '%s'\n", w, cmd->name);
				return false;
			}
			const cmd_opt_t *o = &cmd->opts[k];
			if (call->opt[k].present) {
				printf("Option -%c given twice\n", o->flag);
				return false;
			}
			call->opt[k].present = true;
			if (!o->value_name)
				continue;
			if (i + 1 >= n) {
				printf("Option -%c takes %s\n", o->flag, o->value_name);
				return false;
			}
			const char *v = words[++i];
			int64_t val;
			int rc = str_to_int64(v, &val);
			if (rc != EOK || val < o->min || val > o->max) {
				printf("Option -%c: '%s' is not a number from %ld to %ld\n",
				    o->flag, v, o->min, o->max);
				return false;
			}
			call->opt[k].value = val;
			continue;
		}
		if (call->nargs == cmd->argc) {
			printf("Wrong number of arguments for '%s' (too many)\n",
			    cmd->name);
			return false;
		}
		const cmd_arg_t *a = &cmd->argv[call->nargs];
		cmd_argval_t *v = &call->arg[call->nargs++];
		v->present = true;
		v->strval = w;
		if (a->type == ARG_TYPE_INT) {
			int rc = str_to_int64(w, &v->intval);
			if (rc != EOK) {
				printf("Argument '%s': '%s' is %s\n", a->name, w,
				    rc == EOVERFLOW ? "out of range" : "not a number");
				return false;
			}
		}
	}
	for (size_t i = call->nargs; i < cmd->argc; i++) {
		if (!cmd->argv[i].optional) {
			printf("Wrong number of arguments for '%s' (%zu given)\n",
			    cmd->name, call->nargs);
			return false;
		}
	}
	return true;
}

void kconsole_exec(char *line)
{
	char *words[1 + 2 * KCONSOLE_ARGS_MAX];
	int n = tokenize(line, words, ARRAY_SIZE(words));
	if (n == 0)
		return;
	if (n < 0) {
		printf("Too many arguments (at most %d)\n", 2 * KCONSOLE_ARGS_MAX);
		return;
	}

	cmd_info_t *cmd = cmd_find(words[0]);
	if (!cmd) {
#ifndef CONFIG_TEST
		if (!strcmp(words[0], "test") || !strcmp(words[0], "rcutorture") ||
		    !strcmp(words[0], "chtbench")) {
			printf("%s: not built in (a kernel built with TESTS=0)\n",
			    words[0]);
			return;
		}
#endif
		printf("Unknown command: %s (type 'help' for the list)\n", words[0]);
		return;
	}

	cmd_call_t call;
	if (!parse_args(cmd, words + 1, (size_t) n - 1, &call)) {
		cmd_print_usage(cmd);
		return;
	}
	int rc = cmd->func(&call);
	if (rc != 0)
		printf("%s: failed (%d)\n", cmd->name, rc);
}

static void erase_chars(size_t n)
{
	console_lock();
	for (size_t i = 0; i < n; i++)
		console_write_locked("\b \b", 3);
	console_unlock();
}

static void echo(const char *s, size_t n)
{
	console_lock();
	console_write_locked(s, n);
	console_unlock();
}

/** One byte of pushback, for bytes that end an escape sequence prematurely. */
static int pushback = -1;

static char input_getchar(void)
{
	if (pushback >= 0) {
		char c = (char) pushback;
		pushback = -1;
		return c;
	}
	return console_getchar();
}

/**
 * Swallows the rest of an escape sequence; returns 'A'/'B' for up/down, 0
 * otherwise. A control character inside the sequence (e.g. Enter after a lone
 * ESC) ends it and is handled as ordinary input.
 */
static char read_escape(void)
{
	char c = input_getchar();
	if (c != '[' && c != 'O') {
		if ((unsigned char) c < 0x20)
			pushback = (unsigned char) c;
		return 0;
	}
	/* Parameters (0x30-0x3f) and intermediates (0x20-0x2f), then a final byte. */
	for (int i = 0; i < 16; i++) {
		c = input_getchar();
		if (c >= 0x40 && c <= 0x7e)
			return (c == 'A' || c == 'B') ? c : 0;
		if ((unsigned char) c < 0x20) {
			pushback = (unsigned char) c;
			return 0;
		}
		if (c > 0x3f)
			return 0;
	}
	return 0;
}

/**
 * Reads one line into @a buf. @return true when a complete line was read, false
 * when it was abandoned (Ctrl-C) or too long.
 */
static bool read_line(char *buf)
{
	size_t len = 0;
	bool overflow = false;
	unsigned hist_pos = 0;  /* 0: the line being edited */
	static char last;

	for (;;) {
		char c = input_getchar();
		char prev = last;
		last = c;

		if (c == '\n' && prev == '\r')
			continue;  /* CR LF: one line end */
		if (c == '\r' || c == '\n') {
			echo("\n", 1);
			buf[len] = 0;
			if (overflow) {
				printf("Line too long (at most %d characters), ignored\n",
				    KCONSOLE_LINE_MAX);
				return false;
			}
			return true;
		}
		if (c == 0x08 || c == 0x7f) {
			if (len > 0) {
				len--;
				erase_chars(1);
			}
			continue;
		}
		if (c == 0x15) {  /* Ctrl-U: the whole line, overflow included */
			erase_chars(len);
			len = 0;
			overflow = false;
			continue;
		}
		if (c == 0x03) {  /* Ctrl-C */
			echo("^C\n", 3);
			return false;
		}
		if (c == 0x1b) {
			char dir = read_escape();
			if (dir && history_count > 0) {
				if (dir == 'A' && hist_pos < MIN(history_count, HISTORY))
					hist_pos++;
				else if (dir == 'B' && hist_pos > 0)
					hist_pos--;
				erase_chars(len);
				if (hist_pos == 0) {
					len = 0;
				} else {
					unsigned idx = (history_count - hist_pos) % HISTORY;
					len = str_cpy(buf, KCONSOLE_LINE_MAX + 1,
					    history[idx]);
					echo(buf, len);
				}
				overflow = false;
			}
			continue;
		}
		if (c == '\t')
			c = ' ';
		if ((unsigned char) c < 0x20 || (unsigned char) c > 0x7e)
			continue;
		if (len >= KCONSOLE_LINE_MAX) {
			overflow = true;
			continue;
		}
		buf[len++] = c;
		echo(&c, 1);
	}
}

static void history_add(const char *line)
{
	if (!line[0])
		return;
	if (history_count > 0 &&
	    strcmp(history[(history_count - 1) % HISTORY], line) == 0)
		return;
	str_cpy(history[history_count % HISTORY], KCONSOLE_LINE_MAX + 1, line);
	history_count++;
}

void kconsole_init(void)
{
	cmd_system_init();
#ifdef CONFIG_SANITIZE
	cmd_sanitize_init();
#endif
	cmd_mm_init();
	cmd_rcu_init();
	cmd_synch_init();
	cmd_workq_init();
	cmd_cht_init();
#ifdef CONFIG_TEST
	cmd_test_init();
	cmd_bench_init();
#endif
	cmd_task_init();
#ifdef CONFIG_KCSAN
	cmd_kcsan_init();
#endif
}

void kconsole_run(void)
{
	static char line[KCONSOLE_LINE_MAX + 1];
	static char work[KCONSOLE_LINE_MAX + 1];

	printf("Type 'help' for the list of commands.\n");
	for (;;) {
		puts(KCONSOLE_PROMPT);
		if (!read_line(line))
			continue;
		history_add(line);
		str_cpy(work, sizeof(work), line);
		kconsole_exec(work);
	}
}
