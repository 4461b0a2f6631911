/** @file fault1.c
 * Deliberate page fault (unsafe: never run by `test *`). Shows the exception
 * report: vector, error code, registers, symbolized backtrace, CPU id; the
 * system halts. The host harness runs it to check that report.
 */
#include <test.h>
#include <arch/mm.h>

/* Not static and not inlined, so it shows up by name in the backtrace. */
__attribute__((noinline)) void fault1_touch(uint64_t *p);
__attribute__((noinline)) void fault1_touch(uint64_t *p)
{
	__atomic_store_n(p, 0xdead, __ATOMIC_RELAXED);
}

const char *test_fault1(void)
{
	/* Non-canonical-free, unmapped address in the lower half (no identity map). */
	fault1_touch((uint64_t *) 0x1000);
	return "the write to an unmapped address did not fault";
}
