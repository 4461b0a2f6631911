/** @file print.h
 * Kernel formatted output.
 *
 * Conversions: %d %i %u %x %X %p %s %c %% with flags '-' (left), '0' (zero pad),
 * '+', ' ', '#', width and precision (also '*'), length modifiers hh h l ll z t j.
 * printf() writes one whole call atomically with respect to other CPUs: characters of
 * two printf() calls never interleave. Safe from any CPU and any context (it takes an
 * IRQ-saving spinlock); during a panic only the panicking CPU prints.
 */
#ifndef KERN_PRINT_H_
#define KERN_PRINT_H_

#include <typedefs.h>
#include <stdarg.h>
/* printf_core(), snprintf(), vsnprintf(): common/print/printf_core.c. */
#include <printf_core.h>

#define PRINTF_ATTR(f, a) __attribute__((format(printf, f, a)))

int printf(const char *fmt, ...) PRINTF_ATTR(1, 2);
int vprintf(const char *fmt, va_list ap);
/** Writes a string (no newline added), atomically like printf(). */
void puts(const char *s);

#endif
