/** @file stdlib.h
 * Memory allocation over anonymous areas and the end of the program.
 */
#ifndef LIBC_STDLIB_H_
#define LIBC_STDLIB_H_

#include <stddef.h>
#include <stdbool.h>

void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void free(void *p);
/**
 * Bytes in blocks that malloc() handed out and free() has not taken back
 * (each counted at its class or area size): a program checks with it that
 * it freed everything. Any thread; a relaxed snapshot.
 */
size_t malloc_in_use(void);
/** Ends the task with @a status (every thread). */
__attribute__((noreturn)) void exit(int status);
long strtol(const char *s, char **end, int base);

/** One option of opts_parse(): "-x VALUE" into *value, or the flag "-x". */
typedef struct {
	const char *name;  /**< "-x" */
	long *value;       /**< set to strtol(VALUE, NULL, 0); NULL for a flag */
	bool *flag;        /**< a flag (value NULL): set to true */
} opt_t;

/**
 * Parses argv[1..argc-1] as options of @a opts (@a n of them): "-x VALUE"
 * (strtol base 0) or a flag "-x". Options may repeat; the last one counts.
 * @return 0, or -1 at an unknown option or a missing value (the caller
 *         prints its usage).
 */
int opts_parse(int argc, char **argv, const opt_t *opts, size_t n);

#endif
