/** @file stdlib.h
 * Memory allocation over anonymous areas and the end of the program.
 */
#ifndef LIBC_STDLIB_H_
#define LIBC_STDLIB_H_

#include <stddef.h>

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

#endif
