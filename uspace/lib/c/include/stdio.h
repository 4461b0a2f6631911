/** @file stdio.h
 * Formatted output to the console (the kernel's printf core, see
 * common/print/printf_core.c for the conversions).
 */
#ifndef LIBC_STDIO_H_
#define LIBC_STDIO_H_

#include <stddef.h>
#include <stdarg.h>

int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
/** Writes @a s and a newline. */
int puts(const char *s);

#endif
