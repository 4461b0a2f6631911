/** @file kcsan.h
 * KCSAN, the kernel concurrency sanitizer (`make SANITIZE=kcsan`,
 * docs/SANITIZERS_KCSAN.md): GCC's -fsanitize=thread calls a __tsan_* hook
 * before every plain load and store of an instrumented file; the runtime
 * (debug/kcsan.c) samples those accesses, sets a soft watchpoint on a sampled
 * one, waits, and reports any access from another CPU that hits the
 * watchpoint (a data race, both stacks), or a value that changed while it was
 * watched with no access seen (a writer it cannot see).
 *
 * The annotation for an access that is racy on purpose (a statistic read
 * without its lock, a hint re-checked under a lock) is data_race(expr): the
 * accesses made while evaluating @a expr are neither checked nor watched.
 * Every use carries a comment saying why the race is benign. A whole function
 * can be exempted with __no_kcsan (for code that only reads racy statistics);
 * prefer data_race() on the one expression. Accesses through __atomic
 * builtins are marked (they never race with each other) and need no
 * annotation; a plain access that races with an atomic one is reported.
 *
 * Without CONFIG_KCSAN every name here is empty or the expression itself:
 * no code changes in other builds.
 */
#ifndef KERN_DEBUG_KCSAN_H_
#define KERN_DEBUG_KCSAN_H_

#include <typedefs.h>

#ifdef CONFIG_KCSAN

/**
 * Starts one exempt region on this CPU (data_race()): saves and disables the
 * interrupts (so that the region cannot migrate) and raises this CPU's
 * KCSAN nesting count. Any context.
 * @return the interrupt state for kcsan_nest_end().
 */
ipl_t kcsan_nest_begin(void);

/** Ends the region kcsan_nest_begin() started (restores @a ipl). */
void kcsan_nest_end(ipl_t ipl);

/**
 * Evaluates @a expr (an expression with a value) with KCSAN off on this CPU:
 * an intentional data race. Say why it is benign in a comment at the use.
 */
#define data_race(expr) ({ \
		ipl_t kcsan_ipl_ = kcsan_nest_begin(); \
		__auto_type kcsan_v_ = (expr); \
		kcsan_nest_end(kcsan_ipl_); \
		kcsan_v_; \
	})

/** A function none of whose accesses is instrumented (racy on purpose). */
#define __no_kcsan __attribute__((no_sanitize_thread, noinline))

/**
 * Checks an access of @a n bytes at @a p made by code KCSAN does not
 * instrument (lib/str.c's memset/memcpy/memmove check their ranges once
 * instead of every word): as an instrumented access of that range.
 */
void kcsan_check_range(const void *p, size_t n, bool write);
#define kcsan_check_read(p, n) kcsan_check_range((p), (n), false)
#define kcsan_check_write(p, n) kcsan_check_range((p), (n), true)

/**
 * Turns the runtime on (main_bsp(), after every CPU's per-CPU base register
 * is set: the hooks find their CPU through it). Before this call every hook
 * returns at once.
 */
void kcsan_init(void);

/** @a on: a report ends in a panic; else it is printed and the kernel goes on. */
void kcsan_set_panic(bool on);
/** Mean number of accesses between two watchpoints on a CPU (>= 1). */
void kcsan_set_skip(uint32_t n);
/** Polls of its slot while a watchpoint is armed (>= 1). */
void kcsan_set_delay(uint32_t n);
/** Prints the `kcsan` statistics line (console command). */
void kcsan_stats_print(void);

/**
 * Tests: counts from now on the races reported (or suppressed as repeats)
 * whose either access overlaps [@a addr, @a addr + @a size); resets the count.
 */
void kcsan_test_track(const void *addr, size_t size);

/** Tests: races counted for the tracked range since kcsan_test_track(). */
size_t kcsan_test_hits(void);

/**
 * Tests: reports printed since kcsan_test_track() with both accesses (a
 * watchpoint that caught the other CPU's access, not a value change at
 * unknown origin) where either access overlaps the tracked range. Any context.
 */
size_t kcsan_test_printed_both(void);

#else

#define data_race(expr) (expr)
#define __no_kcsan
#define kcsan_check_read(p, n) do { (void) (p); (void) (n); } while (0)
#define kcsan_check_write(p, n) do { (void) (p); (void) (n); } while (0)

static inline void kcsan_init(void)
{
}

#endif

#endif
