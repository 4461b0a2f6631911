/** @file test.h
 * Kernel test framework.
 *
 * Tests are listed in one table (kernel/test/test.c). A test function returns NULL on
 * success or a static string with the reason of its failure. `test NAME` runs one;
 * `test *` runs every safe one and ends with "N passed, N failed".
 */
#ifndef KERN_TEST_H_
#define KERN_TEST_H_

#include <typedefs.h>

typedef const char *(*test_entry_t)(void);

typedef struct {
	const char *name;
	const char *desc;
	test_entry_t entry;
	/** Safe tests run in `test *`; unsafe ones only by name. */
	bool safe;
} test_t;

extern test_t tests[];

/** Runs a test by name; prints the verdict line. @return true on pass. */
bool test_run(const test_t *t);
const test_t *test_find(const char *name);

/**
 * Fills @a ids (room for CONFIG_MAX_CPUS entries) with the ids of the online
 * CPUs in ascending order. @return their number. Thread context.
 */
unsigned test_online_cpus(unsigned *ids);

/** Reports progress of a long test (prints when not in quiet mode). */
#define TPRINTF(fmt, ...) printf(fmt, ##__VA_ARGS__)

#endif
