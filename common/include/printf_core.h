/** @file printf_core.h
 * The formatter shared by the kernel (print.h: printf() on top of it) and
 * lib/c (stdio.h): common/print/printf_core.c, whose file comment lists the
 * conversions. Freestanding: needs nothing but the C headers.
 */
#ifndef COMMON_PRINTF_CORE_H_
#define COMMON_PRINTF_CORE_H_

#include <stdarg.h>
#include <stddef.h>

/**
 * Core formatter: calls @a out(ch, data) for each output character (@a out
 * NULL: only counts them).
 * @return number of characters produced.
 */
int printf_core(void (*out)(char, void *), void *data, const char *fmt,
    va_list ap);
/** Formats into @a buf (always NUL-terminated if size > 0); returns the full length. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
/** As vsnprintf(), with the arguments. */
int snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
