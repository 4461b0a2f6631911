/** @file sanitize.h
 * What the kernel sanitizers share (SANITIZE=kasan, ubsan; docs/SANITIZERS.md):
 * the report mode (panic after a report, the default, or report and
 * continue, for the soak and the negative controls' shared boot), the report
 * frame (the ==== lines) and the report counters. Compiled only into
 * sanitizer builds (CONFIG_SANITIZE).
 */
#ifndef KERN_DEBUG_SANITIZE_H_
#define KERN_DEBUG_SANITIZE_H_

#include <typedefs.h>

/** Instrumentation off for one function (it runs before the shadow exists). */
#define NO_SANITIZE_ADDRESS __attribute__((no_sanitize_address))

#ifdef CONFIG_SANITIZE
/** Which sanitizer reported (index of the counters). */
typedef enum {
	SAN_KASAN,
	SAN_UBSAN,
	SAN_KCSAN,
	SAN_COUNT
} san_kind_t;

/**
 * Starts a report: takes the report lock (one report prints at a time, the
 * others spin; interrupts off) and prints the opening line. @return false
 * (and takes nothing) when this CPU is already inside a report (a sanitizer
 * fault inside the report code) or the kernel is panicking.
 */
bool san_report_begin(san_kind_t kind);

/**
 * Ends a report: the closing line, counts it, releases the lock; then panics
 * with @a what unless the mode is "report" (sanitize report).
 */
void san_report_end(san_kind_t kind, const char *what);

/** Reports printed so far by @a kind. */
size_t san_report_count(san_kind_t kind);

/** True in "report and continue" mode. */
bool san_continue_mode(void);

/** Sets the mode: @a on report and continue, else panic after a report. */
void san_set_continue_mode(bool on);

/** Registers the `sanitize` console command (console/cmd_sanitize.c). */
void cmd_sanitize_init(void);
#endif

#endif
