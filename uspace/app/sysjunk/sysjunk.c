/** @file sysjunk.c
 * Calls every system call with junk arguments: each must return an error
 * code (and the kernel must not panic). Prints every call that did not
 * fail and exits with the number of them (0: all returned errors).
 */
#include <stdio.h>
#include <stdint.h>
#include <sys.h>

static int calls, wrong;

static void expect_error(const char *what, long rc)
{
	calls++;
	if (rc >= 0) {
		wrong++;
		printf("sysjunk: %s returned %ld, not an error\n", what, rc);
	}
}

#define KADDR 0xffffffff80100000UL
#define NONCANON 0x0000800000000000UL
#define UNMAPPED 0x0000200000000000UL

int main(int argc, char **argv)
{
	/* Addresses no call may accept (UNMAPPED is valid but unmapped). */
	static const uint64_t junk[] = { 0, 1, 7, 4095, KADDR, NONCANON,
	    (uint64_t) -1, (uint64_t) -4096, 0x7ffffffff000UL };
	const size_t nj = sizeof(junk) / sizeof(junk[0]);

	/* Unknown numbers. */
	expect_error("syscall 17", __syscall0(SYS_COUNT));
	expect_error("syscall 1000", __syscall0(1000));
	expect_error("syscall -1", __syscall0(-1));
	expect_error("syscall 2^63", __syscall0(1L << 62));

	/* console write: bad buffers, huge lengths. */
	expect_error("console_write(NULL, 5)", sys_console_write(0, 5));
	expect_error("console_write(kernel, 5)", sys_console_write((void *) KADDR, 5));
	expect_error("console_write(noncanonical, 5)",
	    sys_console_write((void *) NONCANON, 5));
	expect_error("console_write(unmapped, 5)",
	    sys_console_write((void *) UNMAPPED, 5));
	expect_error("console_write(ok, 2^40)", sys_console_write("x", 1UL << 40));
	expect_error("console_write(ok, -1)", sys_console_write("x", (size_t) -1));

	/* areas */
	for (size_t i = 0; i < nj; i++)
		expect_error("area_create(junk, 4096, 0)",
		    sys_area_create(junk[i], 4096, 0));
	expect_error("area_create(0, 0, R)", sys_area_create(0, 0, AREA_READ));
	expect_error("area_create(0, 100, R)", sys_area_create(0, 100, AREA_READ));
	expect_error("area_create(0, 4096, 0x80)", sys_area_create(0, 4096, 0x80));
	expect_error("area_create(0, 2^40, RW)",
	    sys_area_create(0, 1UL << 40, AREA_READ | AREA_WRITE));
	expect_error("area_create(0, -4096, RW)",
	    sys_area_create(0, (size_t) -4096, AREA_READ | AREA_WRITE));
	expect_error("area_create(kernel, 4096, RW)",
	    sys_area_create(KADDR, 4096, AREA_READ | AREA_WRITE));
	expect_error("area_create(top page, 4096, RW)",
	    sys_area_create(0x7ffffffff000UL, 4096, AREA_READ | AREA_WRITE));
	expect_error("area_create(text, 4096, RW)",
	    sys_area_create(0x400000, 4096, AREA_READ | AREA_WRITE));
	for (size_t i = 0; i < nj; i++) {
		expect_error("area_destroy(junk)", sys_area_destroy(junk[i]));
		expect_error("area_resize(junk, 4096)", sys_area_resize(junk[i], 4096));
	}
	long a = sys_area_create(0, 8192, AREA_READ | AREA_WRITE);
	if (a < 0) {
		printf("sysjunk: area_create(0, 8192, RW) failed: %ld\n", a);
		return 100;
	}
	expect_error("area_resize(a, 0)", sys_area_resize(a, 0));
	expect_error("area_resize(a, 100)", sys_area_resize(a, 100));
	expect_error("area_resize(a, 2^40)", sys_area_resize(a, 1UL << 40));
	expect_error("area_resize(a + 4096, 4096)", sys_area_resize(a + 4096, 4096));
	expect_error("area_destroy(a + 4096)", sys_area_destroy(a + 4096));
	if (sys_area_destroy(a) != 0) {
		printf("sysjunk: area_destroy(a) failed\n");
		return 100;
	}
	expect_error("area_destroy(a) twice", sys_area_destroy(a));

	/* threads */
	for (size_t i = 0; i < nj; i++) {
		expect_error("thread_create(junk, stack, 0)",
		    sys_thread_create((void *) junk[i], (void *) 0x500000, 0));
		expect_error("thread_create(main, junk, 0)",
		    sys_thread_create((void *) main, (void *) junk[i], 0));
	}
	expect_error("thread_create(main, unaligned stack)",
	    sys_thread_create((void *) main, (void *) 0x500001, 0));
	for (size_t i = 0; i < nj; i++)
		expect_error("thread_join(junk)", sys_thread_join((long) junk[i], 0));
	expect_error("thread_join(-5)", sys_thread_join(-5, 0));

	/* futexes */
	for (size_t i = 0; i < nj; i++) {
		expect_error("futex_wait(junk, 0, 1ms)",
		    sys_futex_wait((const uint32_t *) junk[i], 0, 1000000));
		expect_error("futex_wake(junk, 1)",
		    sys_futex_wake((const uint32_t *) junk[i], 1));
	}
	expect_error("futex_wait(unmapped, 0, 0)",
	    sys_futex_wait((const uint32_t *) UNMAPPED, 0, 0));
	static uint32_t word = 5;
	expect_error("futex_wait(&word, 6, 0): value differs",
	    sys_futex_wait(&word, 6, 0));
	expect_error("futex_wait(&word, 2^32 + 5, 0)",
	    __syscall3(SYS_FUTEX_WAIT, &word, (1UL << 32) + 5, 0));
	expect_error("futex_wait(&word, 5, 1 ms): times out",
	    sys_futex_wait(&word, 5, 1000000));
	expect_error("futex_wake(&word, 0)", sys_futex_wake(&word, 0));
	expect_error("futex_wait((char *) &word + 1)",
	    sys_futex_wait((const uint32_t *) ((char *) &word + 1), 0, 0));

	/* CPUs, membarrier */
	long n = sys_cpu_count();
	expect_error("thread_wire(cpu_count)", sys_thread_wire((unsigned) n));
	expect_error("thread_wire(-1)", sys_thread_wire((unsigned) -1));
	expect_error("thread_wire(2^40)", __syscall1(SYS_THREAD_WIRE, 1UL << 40));
	expect_error("membarrier(1)", sys_membarrier(1));
	expect_error("membarrier(-1)", sys_membarrier((unsigned) -1));

	/* The calls still work with good arguments. */
	long ok = 0;
	ok |= sys_membarrier(0);
	ok |= sys_yield();
	ok |= sys_thread_wire(0);
	ok |= sys_cpu_current();
	if (ok != 0 || sys_clock_ns() <= 0 || n < 1) {
		printf("sysjunk: a valid call failed\n");
		return 100;
	}
	/* The clock never goes back and counts nanoseconds, not microseconds. */
	long prev = sys_clock_ns();
	int sub_us = 0;
	for (int i = 0; i < 64; i++) {
		long now = sys_clock_ns();
		if (now < prev) {
			printf("sysjunk: SYS_CLOCK_NS went back\n");
			return 101;
		}
		sub_us += now % 1000 != 0;
		prev = now;
	}
	if (sub_us == 0) {
		printf("sysjunk: SYS_CLOCK_NS has microsecond resolution\n");
		return 102;
	}
	printf("sysjunk: %d calls with junk, %d did not return an error\n",
	    calls, wrong);
	return wrong;
}
