/** @file limits.c
 * Probes the per-task limits (README, "Limits per task"): each mode asks the
 * kernel for one resource until it refuses, prints what it got and why it
 * was refused, and exits 0 only if the refusal was the limit's error code
 * (ELIMIT), never a crash, a hang or a success past the limit.
 *
 *   limits threads [MAX]  threads that exit at once and are never joined, until
 *                         SYS_THREAD_CREATE fails (at most MAX tries, default
 *                         5000); then every record is joined and one more
 *                         thread must be creatable again
 *   limits areas [MAX]    one-page areas until SYS_AREA_CREATE fails (at most
 *                         MAX, default 20000)
 *   limits bigareas [MAX] 1 GiB areas until refused (at most MAX, default
 *                         2048), one page written in every 64th; the task
 *                         then exits with terabytes of areas and few pages
 *   limits faultcost N P R  N one-page areas, then R rounds of: an area of P
 *                         pages created last, every page written (a fault
 *                         each), the area destroyed; prints the mean
 *                         SYS_CLOCK_NS per fault (instructions under QEMU
 *                         -icount shift=0)
 *   limits hold N         N one-page areas, then prints
 *                         `limits hold: N areas` and sleeps until killed
 *                         (for `as` and `kill` with many areas)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys.h>
#include <thread.h>

static const char *err_name(long rc)
{
	switch (rc) {
	case ELIMIT:
		return "ELIMIT";
	case ENOMEM:
		return "ENOMEM";
	case EINVAL:
		return "EINVAL";
	case EEXIST:
		return "EEXIST";
	case EINTR:
		return "EINTR";
	default:
		return "other";
	}
}

/*
 * The threads of this mode run lib/c's sys_thread_flag_exit_stub: it stores
 * 1 to the word its argument points to and exits, touching no stack (every
 * thread of this mode shares one stack area).
 */

static int mode_threads(long max)
{
	long stack = sys_area_create(0, 16 * 4096, AREA_READ | AREA_WRITE);
	long *tids = malloc((size_t) max * sizeof(long));
	uint32_t *flags = calloc((size_t) max, sizeof(uint32_t));
	if (stack < 0 || !tids || !flags) {
		printf("limits threads: setup failed (%ld)\n", stack);
		return 2;
	}
	void *top = (void *) (stack + 16 * 4096);
	long n = 0, rc = 0;
	for (; n < max; n++) {
		rc = sys_thread_create((void *) sys_thread_flag_exit_stub, top, &flags[n]);
		if (rc < 0)
			break;
		tids[n] = rc;
		/* Wait until it ran: what piles up are exited, unjoined threads. */
		while (!__atomic_load_n(&flags[n], __ATOMIC_ACQUIRE))
			sys_yield();
	}
	if (n == max) {
		printf("limits threads: %ld threads created and exited unjoined, "
		    "never refused\n", n);
		return 1;
	}
	printf("limits threads: refused after %ld unjoined threads: %ld (%s)\n",
	    n, rc, err_name(rc));
	/* Joining frees the records: a thread can be created again. */
	long bad = 0;
	for (long i = 0; i < n; i++) {
		if (sys_thread_join(tids[i], NULL) != 0)
			bad++;
	}
	uint32_t again = 0;
	long rc2 = sys_thread_create((void *) sys_thread_flag_exit_stub, top, &again);
	if (rc2 >= 0) {
		while (!__atomic_load_n(&again, __ATOMIC_ACQUIRE))
			sys_yield();
		if (sys_thread_join(rc2, NULL) != 0)
			bad++;
	}
	printf("limits threads: joined %ld (%ld failed), then create: %ld\n", n,
	    bad, rc2);
	return rc == ELIMIT && bad == 0 && rc2 >= 0 ? 0 : 1;
}

static int mode_areas(long max, long size, long touch_every)
{
	long n = 0, rc = 0, touched = 0;
	for (; n < max; n++) {
		rc = sys_area_create(0, (size_t) size, AREA_READ | AREA_WRITE);
		if (rc < 0)
			break;
		if (touch_every && n % touch_every == 0) {
			*(volatile char *) rc = 1;
			touched++;
		}
	}
	if (n == max) {
		printf("limits: %ld areas of %ld KiB created, never refused\n", n,
		    size / 1024);
		return 1;
	}
	printf("limits: refused after %ld areas of %ld KiB (%ld GiB), %ld pages "
	    "written: %ld (%s)\n", n, size / 1024, (n * (size / 1024)) >> 20,
	    touched, rc, err_name(rc));
	return rc == ELIMIT ? 0 : 1;
}

static int mode_faultcost(long n, long pages, long rounds)
{
	for (long i = 0; i < n; i++) {
		long rc = sys_area_create(0, 4096, AREA_READ | AREA_WRITE);
		if (rc < 0) {
			printf("limits faultcost: area %ld refused: %ld (%s)\n", i, rc,
			    err_name(rc));
			return 1;
		}
	}
	long total = 0, faults = 0;
	for (long r = 0; r < rounds; r++) {
		long base = sys_area_create(0, (size_t) pages * 4096,
		    AREA_READ | AREA_WRITE);
		if (base < 0) {
			printf("limits faultcost: area refused: %ld\n", base);
			return 1;
		}
		long t0 = sys_clock_ns();
		for (long p = 0; p < pages; p++)
			*(volatile char *) (base + p * 4096) = 1;
		total += sys_clock_ns() - t0;
		faults += pages;
		sys_area_destroy(base);
	}
	printf("limits faultcost: areas=%ld faults=%ld ns_per_fault=%ld\n", n + 1,
	    faults, faults ? total / faults : 0);
	return 0;
}

static int mode_hold(long n)
{
	for (long i = 0; i < n; i++) {
		long rc = sys_area_create(0, 4096, AREA_READ | AREA_WRITE);
		if (rc < 0) {
			printf("limits hold: area %ld refused: %ld (%s)\n", i, rc,
			    err_name(rc));
			return 1;
		}
	}
	printf("limits hold: %ld areas\n", n);
	for (;;)
		thread_sleep_ns(1000000000UL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
	if (strcmp(mode, "threads") == 0)
		return mode_threads(a > 0 ? a : 5000);
	if (strcmp(mode, "areas") == 0)
		return mode_areas(a > 0 ? a : 20000, 4096, 0);
	if (strcmp(mode, "bigareas") == 0)
		return mode_areas(a > 0 ? a : 2048, 1L << 30, 64);
	if (strcmp(mode, "faultcost") == 0 && argc == 5)
		return mode_faultcost(a, strtol(argv[3], NULL, 0),
		    strtol(argv[4], NULL, 0));
	if (strcmp(mode, "hold") == 0 && a > 0)
		return mode_hold(a);
	printf("usage: limits threads|areas|bigareas [MAX] | "
	    "limits faultcost AREAS PAGES ROUNDS | limits hold N\n");
	return 2;
}
