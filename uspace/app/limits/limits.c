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
 *   limits pthog ROUNDS   ROUNDS times: a one-page area at the next 2 MiB
 *                         boundary (a new last-level page table each), one
 *                         byte written, the area destroyed; then prints
 *                         `limits pthog: ROUNDS rounds done` and sleeps
 *                         until killed, holding no area (the page tables
 *                         the kernel still holds for it show in `tasks`)
 *   limits memhog sys|touch [hold]
 *                         faults in memory without bound: `sys` through
 *                         system-call arguments (SYS_FUTEX_WAIT reads one
 *                         word of every page of 1 GiB areas: the kernel's
 *                         uaccess faults each page in), `touch` by writing
 *                         every page; prints how far it got and the error
 *                         that stopped it (`sys`: exits 0 only for ELIMIT;
 *                         `touch` is expected to be killed by its fault);
 *                         with `hold`, sleeps until killed instead of
 *                         exiting (a task sitting at its limit)
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
	case EFAULT:
		return "EFAULT";
	case EAGAIN:
		return "EAGAIN";
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

/**
 * Creates @a n one-page read-write areas; on a refusal prints
 * `limits MODE: area I refused: ERR (NAME)`. @return 0, or 1 on a refusal.
 */
static int create_areas(const char *mode, long n)
{
	for (long i = 0; i < n; i++) {
		long rc = sys_area_create(0, 4096, AREA_READ | AREA_WRITE);
		if (rc < 0) {
			printf("limits %s: area %ld refused: %ld (%s)\n", mode, i, rc,
			    err_name(rc));
			return 1;
		}
	}
	return 0;
}

static int mode_faultcost(long n, long pages, long rounds)
{
	if (create_areas("faultcost", n))
		return 1;
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

static void sleep_forever(void)
{
	for (;;)
		thread_sleep_ns(1000000000UL);
}

static int mode_pthog(long rounds)
{
	const uintptr_t first = 0x0000200000000000UL, stride = 2UL << 20;
	for (long r = 0; r < rounds; r++) {
		uintptr_t base = first + (uintptr_t) r * stride;
		long rc = sys_area_create(base, 4096, AREA_READ | AREA_WRITE);
		if (rc < 0) {
			printf("limits pthog: round %ld refused: %ld (%s)\n", r, rc,
			    err_name(rc));
			sleep_forever();
		}
		*(volatile char *) base = 1;
		rc = sys_area_destroy(base);
		if (rc != 0) {
			printf("limits pthog: round %ld: destroy failed: %ld\n", r, rc);
			return 1;
		}
		if (r % 20000 == 0 && r)
			printf("limits pthog: %ld rounds\n", r);
	}
	printf("limits pthog: %ld rounds done\n", rounds);
	sleep_forever();
	return 0;
}

static int mode_memhog(const char *how, bool hold)
{
	const size_t area = 1UL << 30;
	bool sys = strcmp(how, "sys") == 0;
	long pages = 0, rc = 0;
	for (int a = 0; a < 64 && rc >= 0; a++) {
		long base = sys_area_create(0, area, AREA_READ | AREA_WRITE);
		if (base < 0) {
			rc = base;
			break;
		}
		for (size_t off = 0; off < area; off += 4096, pages++) {
			if (!sys) {
				*(volatile char *) (base + off) = 1;
				continue;
			}
			/* The word is 0, never 1: EAGAIN after the read. */
			rc = sys_futex_wait((const uint32_t *) (base + off), 1, 0);
			if (rc != EAGAIN)
				break;
			rc = 0;
		}
	}
	printf("limits memhog %s: stopped after %ld pages (%ld KiB): %ld (%s)\n",
	    how, pages, pages * 4, rc, err_name(rc));
	if (hold)
		sleep_forever();
	return rc == ELIMIT ? 0 : 1;
}

static int mode_hold(long n)
{
	if (create_areas("hold", n))
		return 1;
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
	if (strcmp(mode, "pthog") == 0 && a > 0)
		return mode_pthog(a);
	if (strcmp(mode, "memhog") == 0 && argc >= 3 &&
	    (strcmp(argv[2], "sys") == 0 || strcmp(argv[2], "touch") == 0))
		return mode_memhog(argv[2], argc > 3 && strcmp(argv[3], "hold") == 0);
	printf("usage: limits threads|areas|bigareas [MAX] | "
	    "limits faultcost AREAS PAGES ROUNDS | limits hold N | "
	    "limits pthog ROUNDS | limits memhog sys|touch [hold]\n");
	return 2;
}
