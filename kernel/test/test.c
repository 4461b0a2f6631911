/** @file test.c
 * The kernel test table and runner.
 */
#include <test.h>
#include <print.h>
#include <lib/str.h>

#include <tests.h>

test_t tests[] = {
	{ "atomic1", "Atomic operations on integers and pointers", test_atomic1, true },
	{ "print1", "printf formats against expected strings", test_print1, true },
	{ "falloc1", "Allocate and free all frames in several orders", test_falloc1,
	    true },
	{ "heap1", "malloc/free patterns from 1 B to 1 MiB", test_heap1, true },
	{ "ipi1", "Every CPU receives and counts IPIs exactly", test_ipi1, true },
	{ "fault1", "Deliberate page fault: exception report and halt (unsafe)",
	    test_fault1, false },
	{ NULL, NULL, NULL, false }
};

const test_t *test_find(const char *name)
{
	for (test_t *t = tests; t->name; t++) {
		if (strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

bool test_run(const test_t *t)
{
	printf("== test %s: %s ==\n", t->name, t->desc);
	const char *reason = t->entry();
	if (reason) {
		printf("Test failed: %s\n", reason);
		return false;
	}
	printf("Test passed\n");
	return true;
}
