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
const char *test_smpcall1(void);
const char *test_thread1(void);
const char *test_sched1(void);
const char *test_waitq1(void);
const char *test_semaphore1(void);
const char *test_semaphore2(void);
const char *test_mutex1(void);
const char *test_condvar1(void);
const char *test_rwlock1(void);

#endif
