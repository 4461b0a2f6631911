/** @file tests.h
 * Entry points of the kernel tests (one file per test under kernel/test/).
 * Each returns NULL on success or a static string with the failure reason.
 */
#ifndef KERN_TESTS_H_
#define KERN_TESTS_H_

const char *test_atomic1(void);
const char *test_print1(void);
const char *test_falloc1(void);
const char *test_heap1(void);
const char *test_ipi1(void);
const char *test_fault1(void);

#endif
