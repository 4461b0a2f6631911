/** @file ufault.c
 * The user page-fault benchmark:
 *
 *   ufault [-t SECONDS] [-n THREADS] [-p PAGES]
 *
 * THREADS threads (default: one per CPU, thread i wired to CPU i % CPUs)
 * each own an area of PAGES pages (default 64) and repeat for SECONDS
 * (default 3): touch every page (a read that must see zero, then a write:
 * one fault each), then shrink the area to one page and grow it back (the
 * kernel unmaps the rest: the next round faults again). Prints
 * `ufault: threads=N pages=P faults=F ns=T faults_per_s=R errors=E` and
 * exits 0 when no page read back nonzero after its remapping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>
#include <sys.h>

#define PAGE 4096

static long seconds = 3, pages = 64, cpus;
static long start_ns;
static uint32_t go, ready;

typedef struct {
	long cpu;
	long faults;
	long errors;
} worker_t;

static int worker(void *arg)
{
	worker_t *w = arg;
	if (sys_thread_wire((unsigned) w->cpu) != 0)
		w->errors++;
	long base = sys_area_create(0, (size_t) pages * PAGE,
	    AREA_READ | AREA_WRITE);
	if (base < 0) {
		w->errors++;
		return 1;
	}
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	(void) sys_futex_wake(&ready, 1);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		(void) sys_futex_wait(&go, 0, 0);
	long end = start_ns + seconds * 1000000000L;
	long first = 0;  /* page 0 stays mapped after the first round */
	while (sys_clock_ns() < end) {
		for (long p = first; p < pages; p++) {
			volatile uint64_t *word = (uint64_t *) (base + p * PAGE);
			if (*word != 0)
				w->errors++;
			*word = (uint64_t) p + 1;
			w->faults++;
		}
		first = 1;
		if (sys_area_resize(base, PAGE) != 0 ||
		    sys_area_resize(base, (size_t) pages * PAGE) != 0) {
			w->errors++;
			break;
		}
	}
	(void) sys_area_destroy(base);
	return 0;
}

int main(int argc, char **argv)
{
	cpus = sys_cpu_count();
	long n = cpus;
	const opt_t opts[] = { { "-t", &seconds, NULL }, { "-n", &n, NULL },
		{ "-p", &pages, NULL } };
	if (opts_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0])) != 0) {
		printf("usage: ufault [-t SECONDS] [-n THREADS] [-p PAGES]\n");
		return 2;
	}
	if (seconds < 1 || seconds > 600 || n < 1 || n > 32 || pages < 2 ||
	    pages > 16384) {
		printf("ufault: -t 1..600, -n 1..32, -p 2..16384\n");
		return 2;
	}
	worker_t w[32];
	uthread_t *t[32];
	memset(w, 0, sizeof(w));
	for (long i = 0; i < n; i++) {
		w[i].cpu = i % cpus;
		t[i] = thread_create(worker, &w[i]);
		if (!t[i]) {
			printf("ufault: cannot create thread %ld\n", i);
			return 1;
		}
	}
	/* Start when every thread runs on its CPU with its area. */
	for (;;) {
		uint32_t r = __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
		if (r >= (uint32_t) n)
			break;
		(void) sys_futex_wait(&ready, r, 1000000);
	}
	start_ns = sys_clock_ns();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	(void) sys_futex_wake(&go, 64);
	long faults = 0, errors = 0;
	for (long i = 0; i < n; i++) {
		(void) thread_join(t[i]);
		faults += w[i].faults;
		errors += w[i].errors;
	}
	long ns = sys_clock_ns() - start_ns;
	printf("ufault: threads=%ld pages=%ld faults=%ld ns=%ld faults_per_s=%ld "
	    "errors=%ld\n", n, pages, faults, ns,
	    ns >= 1000 ? faults * 1000000 / (ns / 1000) : 0,
	    errors);
	return errors ? 1 : 0;
}
