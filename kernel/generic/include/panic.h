/** @file panic.h
 * Kernel panic: print a report with a symbolized backtrace on the panicking CPU,
 * stop every other CPU and halt (or power off when configured).
 */
#ifndef KERN_PANIC_H_
#define KERN_PANIC_H_

#include <typedefs.h>

struct istate;

/**
 * Stops the system with a message. May be called from any context, with or without
 * interrupts enabled, on any CPU; never returns. Prints "PANIC on CPU n: <msg>" and a
 * backtrace, then halts all CPUs.
 */
NO_RETURN void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Panic variant for exceptions: also dumps the saved registers @a istate. */
NO_RETURN void panic_istate(struct istate *istate, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Called by a failed assert(). */
NO_RETURN void panic_assert(const char *file, int line, const char *func,
    const char *expr);

/** True once some CPU has started to panic (other CPUs stop printing). */
bool panic_in_progress(void);

#endif
