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

/*
 * Entry points of the kernel tests (one file per test under kernel/test/).
 * Each returns NULL on success or a static string with the failure reason.
 */
const char *test_atomic1(void);
const char *test_avl1(void);
const char *test_print1(void);
const char *test_falloc1(void);
const char *test_heap1(void);
const char *test_slab1(void);
const char *test_slab2(void);
const char *test_falloc2(void);
const char *test_ipi1(void);
const char *test_backtrace1(void);
const char *test_fault1(void);
const char *test_dfstack1(void);
/* The sanitizers' negative controls (debug/sanitize1.c; sanitizer builds). */
const char *test_kasan_rcu1(void);
const char *test_kasan_rcu2(void);
const char *test_kasan_quar1(void);
const char *test_kasan_oob1(void);
const char *test_kasan_df1(void);
const char *test_kasan_stack1(void);
const char *test_kasan_global1(void);
const char *test_ubsan_shift1(void);
const char *test_ubsan_ovf1(void);
const char *test_kcsan1(void);
const char *test_kcsan2(void);
const char *test_useraccess1(void);
const char *test_smpcall1(void);
const char *test_thread1(void);
const char *test_sched1(void);
const char *test_waitq1(void);
const char *test_semaphore1(void);
const char *test_semaphore2(void);
const char *test_mutex1(void);
const char *test_semaphore1long(void);
const char *test_semaphore2long(void);
const char *test_mutex1long(void);
const char *test_condvar1(void);
const char *test_rwlock1(void);
const char *test_workqueue(void);
const char *test_rcu1(void);
const char *test_rcutorture(void);
const char *test_rcuunlock1(void);
const char *test_spindead1(void);
const char *test_spindead2(void);
const char *test_spinslow1(void);
const char *test_lockdep1(void);
const char *test_lockdep2(void);
const char *test_lockdep3(void);
const char *test_lockdep4(void);
const char *test_lockdep5(void);
const char *test_lockdep6(void);
const char *test_lockdep7(void);
const char *test_lockdep8(void);
const char *test_lockdep9(void);
const char *test_rcusleep1(void);
const char *test_framedf1(void);
const char *test_framewc1(void);
const char *test_ptwalk1(void);
const char *test_rcustall1(void);
const char *test_cht(void);
const char *test_chtresize(void);
const char *test_chtcount(void);
const char *test_mapping1(void);
const char *test_as1(void);
const char *test_asid1(void);
const char *test_pagefault1(void);
const char *test_asrace1(void);
const char *test_ptprune1(void);
const char *test_mapping2(void);
const char *test_asrace1long(void);
const char *test_ptwalk1long(void);
/** Default duration of an rcutorture run (`test *`), in seconds. */
#define RCUTORTURE_DEFAULT_SECONDS 3
/** Longest run `rcutorture -t` accepts, in seconds. */
#define RCUTORTURE_MAX_SECONDS 86400
/**
 * Duration of the next rcutorture run in seconds (default
 * RCUTORTURE_DEFAULT_SECONDS); the `rcutorture` command
 * (console/cmd_test.c) sets it around one run. Written and read by the
 * kconsole thread only (tests run there).
 */
extern unsigned rcutorture_seconds;

#endif
