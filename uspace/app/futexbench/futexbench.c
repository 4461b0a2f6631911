/** @file futexbench.c
 * Futex calls of one task on different futexes from different CPUs, in a
 * window of the sharing counter (docs/SHARING.md):
 *
 *   futexbench [-n THREADS] [-c CALLS] [-s]
 *
 * THREADS threads (default one per CPU), thread i wired to CPU i % CPUs,
 * each on its own futex word in its own cache line, make CALLS futex calls
 * each (default 20000, rounded up to even): alternately a wake with no
 * waiter (SYS_FUTEX_WAKE, must return 0) and a wait whose value does not
 * match (SYS_FUTEX_WAIT with expected 1 on a word holding 0, must return
 * EAGAIN). With -s every thread uses the same word instead (the control of
 * the measure: the calls then share that futex's lock). The window markers run in user mode: the main thread (wired to
 * CPU 0) opens the window when every thread is ready and then raises the
 * start flag; the thread that finishes last closes it, the others spin
 * (reading only) until it has, so thread exits and joins stay out. After the
 * joins the main thread reports THREADS x CALLS operations to the plugin.
 *
 * Prints `futexbench: threads=N calls=C errors=E ns=T` (C: all threads'
 * calls; T: the main thread's clock from the start flag to the last join,
 * guest instructions under -icount shift=0) and exits 0 iff E is 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>
#include <sharing.h>
#include <sys.h>

#define MAX_THREADS 32

/** Each thread's futex word, alone in its cache line. Never changes (0). */
static struct {
	uint32_t word;
} __attribute__((aligned(64))) futexes[MAX_THREADS];

/* Written by one side, read by the others: release/acquire atomics. */
static uint32_t ready __attribute__((aligned(64)));   /* threads waiting to start */
static uint32_t go __attribute__((aligned(64)));      /* start flag */
static uint32_t done __attribute__((aligned(64)));    /* threads finished */
static uint32_t closed __attribute__((aligned(64)));  /* window closed */
static uint32_t errors __attribute__((aligned(64)));  /* relaxed */
static long nthreads, calls = 20000;
/** -s: every thread on futexes[0]; set before the threads start. */
static bool shared_word;

static int worker(void *arg)
{
	long i = (long) arg;
	const uint32_t *w = &futexes[shared_word ? 0 : i].word;
	long cpu = i % sys_cpu_count();
	uint32_t err = 0;
	if (sys_thread_wire((unsigned) cpu) != 0 || sys_cpu_current() != cpu)
		err++;
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		cpu_relax();
	for (long n = 0; n < calls; n += 2) {
		if (sys_futex_wake(w, 1) != 0)
			err++;
		if (sys_futex_wait(w, 1, 0) != EAGAIN)
			err++;
	}
	if (__atomic_add_fetch(&done, 1, __ATOMIC_ACQ_REL) == nthreads) {
		sharing_window_close();
		__atomic_store_n(&closed, 1, __ATOMIC_RELEASE);
	} else {
		while (!__atomic_load_n(&closed, __ATOMIC_ACQUIRE))
			cpu_relax();
	}
	if (err)
		__atomic_fetch_add(&errors, err, __ATOMIC_RELAXED);
	return 0;
}

int main(int argc, char **argv)
{
	long cpus = sys_cpu_count();
	nthreads = cpus;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-n") && a + 1 < argc)
			nthreads = strtol(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "-c") && a + 1 < argc)
			calls = strtol(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "-s"))
			shared_word = true;
		else
			nthreads = 0;
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || calls < 2) {
		printf("usage: futexbench [-n THREADS (1-%d)] [-c CALLS (>= 2)] "
		    "[-s]\n", MAX_THREADS);
		return 2;
	}
	calls = (calls + 1) & ~1L;
	/* One CPU for the marker bits of the report (see sharing.h). */
	if (sys_thread_wire(0) != 0) {
		printf("futexbench: cannot wire the main thread\n");
		return 1;
	}
	memset(futexes, 0, sizeof(futexes));
	uthread_t *t[MAX_THREADS];
	for (long i = 0; i < nthreads; i++) {
		t[i] = thread_create(worker, (void *) i);
		if (!t[i]) {
			printf("futexbench: cannot create thread %ld\n", i);
			return 1;
		}
	}
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < nthreads)
		sys_yield();
	long t0 = sys_clock_ns();
	sharing_window_open();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (long i = 0; i < nthreads; i++)
		thread_join(t[i]);
	long ns = sys_clock_ns() - t0;
	uint64_t total = (uint64_t) nthreads * (uint64_t) calls;
	sharing_window_report(total);
	uint32_t e = __atomic_load_n(&errors, __ATOMIC_RELAXED);
	printf("futexbench: threads=%ld calls=%lu errors=%u ns=%ld\n", nthreads,
	    total, e, ns);
	return e ? 1 : 0;
}
