/** @file atomic1.c
 * Test of the atomic operations the kernel uses, on integers and pointers:
 * load/store, add/sub, fetch-and-add, increment/decrement with their return
 * values, compare-and-swap success and failure paths, exchange; then the same
 * operations hammered concurrently is left to the SMP tests (single-CPU semantics
 * are what this test pins down).
 */
#include <atomic.h>
#include <test.h>
#include <testlib.h>
#include <print.h>

const char *test_atomic1(void)
{
	atomic_t a = { 0 };	/* GCC 12 -fsanitize=thread: atomic_set() through a call does not count as initialising */

	atomic_set(&a, 10);
	CHECK(atomic_get(&a) == 10, "atomic_set/get");

	CHECK(atomic_postinc(&a) == 10, "atomic_postinc return value");
	CHECK(atomic_get(&a) == 11, "atomic_postinc result");
	CHECK(atomic_preinc(&a) == 12, "atomic_preinc return value");
	CHECK(atomic_get(&a) == 12, "atomic_preinc result");
	CHECK(atomic_postdec(&a) == 12, "atomic_postdec return value");
	CHECK(atomic_get(&a) == 11, "atomic_postdec result");
	CHECK(atomic_predec(&a) == 10, "atomic_predec return value");
	CHECK(atomic_get(&a) == 10, "atomic_predec result");

	atomic_inc(&a);
	CHECK(atomic_get(&a) == 11, "atomic_inc");
	atomic_dec(&a);
	CHECK(atomic_get(&a) == 10, "atomic_dec");

	CHECK(atomic_fetch_add(&a, 5) == 10, "atomic_fetch_add return value");
	CHECK(atomic_get(&a) == 15, "atomic_fetch_add result");
	CHECK(atomic_add(&a, 5) == 20, "atomic_add return value");
	CHECK(atomic_fetch_sub(&a, 7) == 20, "atomic_fetch_sub return value");
	CHECK(atomic_get(&a) == 13, "atomic_fetch_sub result");
	CHECK(atomic_sub(&a, 3) == 10, "atomic_sub return value");

	/* Wrap-around of the unsigned counter. */
	atomic_set(&a, 0);
	CHECK(atomic_predec(&a) == SIZE_MAX, "atomic_predec wraps below 0");
	CHECK(atomic_preinc(&a) == 0, "atomic_preinc wraps to 0");

	/* Compare-and-swap: success and failure paths. */
	atomic_set(&a, 42);
	CHECK(atomic_cas(&a, 42, 43) == 42, "atomic_cas success returns old value");
	CHECK(atomic_get(&a) == 43, "atomic_cas success stores");
	CHECK(atomic_cas(&a, 42, 99) == 43, "atomic_cas failure returns current");
	CHECK(atomic_get(&a) == 43, "atomic_cas failure must not store");

	/* Exchange. */
	CHECK(atomic_swap(&a, 7) == 43, "atomic_swap return value");
	CHECK(atomic_get(&a) == 7, "atomic_swap result");

	/* Signed counters. */
	atomic_signed_t s = ATOMIC_INIT(0);
	CHECK(atomic_signed_add(&s, -5) == -5, "atomic_signed_add negative");
	CHECK(atomic_signed_get(&s) == -5, "atomic_signed_get");
	CHECK(atomic_signed_add(&s, 10) == 5, "atomic_signed_add positive");

	/* Pointers. */
	int x, y, z;
	void *p = &x;
	CHECK(atomic_load_ptr(&p) == &x, "atomic_load_ptr");
	atomic_store_ptr(&p, &y);
	CHECK(atomic_load_ptr(&p) == &y, "atomic_store_ptr");
	CHECK(atomic_cas_ptr(&p, &y, &z) == &y, "atomic_cas_ptr success return");
	CHECK(p == &z, "atomic_cas_ptr success stores");
	CHECK(atomic_cas_ptr(&p, &x, &y) == &z, "atomic_cas_ptr failure return");
	CHECK(p == &z, "atomic_cas_ptr failure must not store");
	CHECK(atomic_swap_ptr(&p, NULL) == &z, "atomic_swap_ptr return");
	CHECK(p == NULL, "atomic_swap_ptr result");
	CHECK(atomic_cas_ptr(&p, NULL, &x) == NULL, "atomic_cas_ptr from NULL");
	CHECK(p == &x, "atomic_cas_ptr from NULL stores");

	/* Explicitly ordered builtins used by lock-free code. */
	uint64_t v = 1;
	__atomic_store_n(&v, 2, __ATOMIC_RELEASE);
	CHECK(__atomic_load_n(&v, __ATOMIC_ACQUIRE) == 2, "release/acquire pair");
	uint64_t exp = 3;
	CHECK(!__atomic_compare_exchange_n(&v, &exp, 4, true, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE) && exp == 2, "weak CAS failure reports current value");

	memory_barrier();
	printf("atomic1: all %d checks done\n", 46);
	return NULL;
}
