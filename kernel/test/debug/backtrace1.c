/** @file backtrace1.c
 * The symbol table and the frame-pointer walk (debug/symtab.c) that panics,
 * lockdep reports and the `backtrace` command print:
 * - the table is not empty and the walk from this test's own frame names
 *   test_backtrace1 as the caller of backtrace1_walk_own() (an empty table,
 *   as arm64 had when tools/gensyms.py kept only amd64's text range, fails);
 * - hand-made frame records on this thread's stack whose chain leaves the
 *   stack (past the direct map's RAM, across the stack's top), loops, or
 *   starts misaligned or in user space: the walk stops at the last record
 *   inside the stack and never reads the bad one (a walk that follows any
 *   kernel-looking pointer faults on the first: the data abort at
 *   0xffff800ffffff008 on arm64 before the walk kept to the stack).
 */
#include <test.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <debug/symtab.h>
#include <lib/str.h>
#include <proc/thread.h>

/* Not static and not inlined: its caller is the frame the walk must name. */
__attribute__((noinline)) const char *backtrace1_walk_own(void);
__attribute__((noinline)) const char *backtrace1_walk_own(void)
{
	uintptr_t ret[4];
	size_t n = backtrace_collect(frame_pointer(), ret, 4);
	if (n < 2)
		return "the walk from a live frame found fewer than 2 frames";
	uintptr_t off;
	const char *name = symtab_lookup(ret[0] - 1, &off);
	if (!name)
		return "the return address into test_backtrace1 has no symbol";
	/* An -O2 build may name a part GCC split off: test_backtrace1.part.0. */
	static const char caller[] = "test_backtrace1";
	if (strncmp(name, caller, sizeof(caller) - 1) != 0 ||
	    (name[sizeof(caller) - 1] != '\0' && name[sizeof(caller) - 1] != '.'))
		return "the first frame does not name test_backtrace1";
	return NULL;
}

/*
 * Walks two hand-made records on this stack, fake[0..1] -> fake[2..3],
 * whose second saved frame pointer is @a bad: exactly the two return
 * addresses must come back.
 */
static bool walk_stops_at(uintptr_t bad, uintptr_t text)
{
	uintptr_t fake[4] ALIGNED(16);
	fake[0] = (uintptr_t) &fake[2];
	fake[1] = text + 4;
	fake[2] = bad;
	fake[3] = text + 8;
	uintptr_t ret[4] = { 0 };
	size_t n = backtrace_collect((uintptr_t) fake, ret, 4);
	/* Keep fake[] live until the walk is done. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return n == 2 && ret[0] == text + 4 && ret[1] == text + 8;
}

const char *test_backtrace1(void)
{
	if (symtab_count() == 0)
		return "the symbol table is empty (tools/gensyms.py kept no symbol)";
	const char *err = backtrace1_walk_own();
	if (err)
		return err;

	uintptr_t text = (uintptr_t) test_backtrace1;
	if (!walk_stops_at(PHYS_MAP_BASE + PHYS_MAP_MAX - PAGE_SIZE, text))
		return "the walk followed a pointer past the direct map's RAM";
	thread_t *t = THREAD;
	if (!walk_stops_at((uintptr_t) t->kstack + THREAD_STACK_SIZE - 8, text))
		return "the walk read a record across the top of the stack";

	/* A loop: the second record points back at the first. */
	uintptr_t loop[4] ALIGNED(16);
	loop[0] = (uintptr_t) &loop[2];
	loop[1] = text + 4;
	loop[2] = (uintptr_t) &loop[0];
	loop[3] = text + 8;
	uintptr_t ret[4];
	size_t n = backtrace_collect((uintptr_t) loop, ret, 4);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (n != 2)
		return "the walk did not stop at a loop after its two records";

	if (backtrace_collect(0x1000, ret, 4) != 0)
		return "the walk started from a user-space frame pointer";
	if (backtrace_collect((uintptr_t) loop + 4, ret, 4) != 0)
		return "the walk started from a misaligned frame pointer";
	if (backtrace_collect(frame_pointer(), ret, 0) != 0)
		return "the walk stored more than max frames";
	return NULL;
}
