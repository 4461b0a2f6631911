/** @file regs.c
 * Per-thread user register state: every register a user program
 * may write must be its thread's own, and a new task and a new thread must
 * start with the defined initial state.
 *
 *   regs [-l] set                fill every user-writable register with a
 *                                pattern and exit 0
 *   regs [-l] check              read them at once; must be the initial
 *                                state; print what differs, exit 1 if any
 *   regs [-l] threads N ROUNDS   N threads (1-32) wired to CPU 0: each checks
 *                                its initial state, then ROUNDS times writes
 *                                its own pattern, yields or sleeps so the
 *                                threads interleave, and reads it back;
 *                                exit 1 on any corruption
 *   regs -m [-l] threads N ROUNDS  the same, but every round each thread
 *                                wires itself to the next CPU instead of
 *                                yielding: the state follows a thread that
 *                                migrates (saved on one CPU, loaded on
 *                                another)
 *   regs -p ...                  (arm64) also PSTATE.DIT and PSTATE.SSBS,
 *                                which live in the exception frame's SPSR
 *                                (FEAT_DIT, FEAT_SSBS: -cpu max)
 *   regs info                    which register groups are covered
 *   regs pingpong ROUNDS         two threads wired to CPU 0 yield to each
 *                                other ROUNDS times each (the cost of a
 *                                switch between user threads: with -icount
 *                                shift=0 the clock counts instructions)
 *
 * The registers (regs_arch.h): amd64 the x87 registers, control, status and
 * tag words (the MMX registers are the x87 ones), MXCSR, XMM0-15, the upper
 * halves of YMM0-15 where the CPU and the kernel enable AVX, and the data
 * segment selectors DS, ES, FS, GS; arm64 V0-V31, FPCR, FPSR and TPIDR_EL0.
 * `-l` restricts them to what a kernel without FP/SIMD support let ring 3
 * use (amd64: x87/MMX and the selectors; arm64: TPIDR_EL0), to show the
 * leak on such a kernel. Set and check wire themselves to CPU 0 first (the
 * program's own code touches none of these registers before), so that the
 * task that checks runs where the one that set ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>
#include <sys.h>
#include "regs_arch.h"

/** splitmix64: the pattern of (seed, index). */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int regs_diff_word(const char *where, const char *name, uint64_t now,
    uint64_t want)
{
	if (now == want)
		return 0;
	if (where)
		printf("regs: %s: %s = %#lx, expected %#lx\n", where, name, now,
		    want);
	return 1;
}

uint64_t regs_pattern(uint64_t seed, unsigned i)
{
	return mix(seed * 1000003ULL + i);
}

static int legacy;
int regs_pstate;
static int migrate;
static long cpus;

static long n_threads, rounds;
static int corrupt_total, bad_initial_total;

typedef struct {
	long idx;
	int corrupt;
	int bad_initial;
} worker_t;

static mutex_t print_lock = MUTEX_INITIALIZER;

static int worker(void *arg)
{
	worker_t *w = arg;
	regs_t now, want;
	if (sys_thread_wire(0) != 0)
		return 1;
	regs_read(&now, legacy);
	mutex_lock(&print_lock);
	char where[48];
	snprintf(where, sizeof(where), "thread %ld start", w->idx);
	w->bad_initial = regs_diff_initial(&now, legacy, where);
	mutex_unlock(&print_lock);
	for (long r = 0; r < rounds; r++) {
		uint64_t seed = (uint64_t) (w->idx + 1) * 0x100000001ULL + (uint64_t) r;
		regs_write(seed, legacy);
		regs_read(&want, legacy);
		if (migrate) {
			if (sys_thread_wire((unsigned) ((w->idx + r + 1) % cpus)) != 0)
				return 1;
		} else if (r % 4 == 3) {
			thread_sleep_ns(100000);
		} else {
			sys_yield();
		}
		regs_read(&now, legacy);
		if (memcmp(&now, &want, sizeof(now)) != 0) {
			if (w->corrupt < 3) {
				mutex_lock(&print_lock);
				snprintf(where, sizeof(where), "thread %ld round %ld",
				    w->idx, r);
				regs_diff(&now, &want, legacy, where);
				mutex_unlock(&print_lock);
			}
			w->corrupt++;
		}
	}
	return 0;
}

static long pp_rounds;
static int pp_started;
static long pp_ns[2];

static int pingpong(void *arg)
{
	long idx = (long) arg;
	if (sys_thread_wire(0) != 0)
		return 1;
	/* Both threads on CPU 0 before either starts counting. */
	__atomic_fetch_add(&pp_started, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&pp_started, __ATOMIC_SEQ_CST) < 2)
		sys_yield();
	long t0 = sys_clock_ns();
	for (long i = 0; i < pp_rounds; i++)
		sys_yield();
	pp_ns[idx] = sys_clock_ns() - t0;
	return 0;
}

static int usage(void)
{
	printf("usage: regs [-l] [-m] [-p] set|check|info|x18 N|threads N ROUNDS|"
	    "pingpong ROUNDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	int a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "-l") == 0)
			legacy = 1;
		else if (strcmp(argv[a], "-m") == 0)
			migrate = 1;
#ifdef __aarch64__
		else if (strcmp(argv[a], "-p") == 0)
			regs_pstate = 1;
#endif
		else
			return usage();
	}
	cpus = sys_cpu_count();
	if (a >= argc)
		return usage();
	const char *mode = argv[a++];
	regs_t now;

	if (strcmp(mode, "info") == 0) {
		printf("regs: %s\n", regs_groups(legacy));
		return 0;
	}
	if (strcmp(mode, "set") == 0) {
		if (sys_thread_wire(0) != 0)
			return 1;
		regs_write(0x5ec2e7ULL + (uint64_t) sys_task_id(), legacy);
		regs_read(&now, legacy);
		/* The pattern took: (almost) every register left its initial value. */
		int set = regs_diff_initial(&now, legacy, NULL);
		printf("regs set: %s = pattern of task %ld: %d of %d registers "
		    "differ from the initial state\n", regs_groups(legacy),
		    sys_task_id(), set, regs_count(legacy));
		return 2 * set >= regs_count(legacy) ? 0 : 1;
	}
	if (strcmp(mode, "check") == 0) {
		/*
		 * On CPU 0, where `set` ran: a kernel that does not switch a
		 * register leaves there what the last task wrote.
		 */
		if (sys_thread_wire(0) != 0)
			return 1;
		regs_read(&now, legacy);
		int bad = regs_diff_initial(&now, legacy, "check");
		printf("regs check: %s: %d differ from the initial state\n",
		    regs_groups(legacy), bad);
		return bad ? 1 : 0;
	}
	if (strcmp(mode, "pingpong") == 0) {
		if (a >= argc)
			return usage();
		pp_rounds = strtol(argv[a], NULL, 0);
		if (pp_rounds < 1)
			return usage();
		if (sys_thread_wire(0) != 0)
			return 1;
		uthread_t *t[2];
		for (long i = 0; i < 2; i++) {
			t[i] = thread_create(pingpong, (void *) i);
			if (!t[i])
				return 1;
		}
		int bad = 0;
		for (int i = 0; i < 2; i++)
			bad |= thread_join(t[i]);
		/* Thread 0's span: its own yields and the other's between. */
		long ns = pp_ns[0];
		printf("regs pingpong: yields=%ld ns=%ld ns_per_yield=%ld\n",
		    2 * pp_rounds, ns, ns / (2 * pp_rounds));
		return bad;
	}
	if (strcmp(mode, "x18") == 0) {
		long n = a < argc ? strtol(argv[a], NULL, 0) : 0;
		if (n < 1)
			return usage();
#ifdef __aarch64__
		int bad = regs_x18(n);
		printf("regs x18: %ld sleeps with x18 = 2: %d changed it\n", n, bad);
		return bad ? 1 : 0;
#else
		printf("regs x18: arm64 only\n");
		return 0;
#endif
	}
	if (strcmp(mode, "threads") == 0) {
		if (a + 1 >= argc)
			return usage();
		n_threads = strtol(argv[a], NULL, 0);
		rounds = strtol(argv[a + 1], NULL, 0);
		if (n_threads < 1 || n_threads > 32 || rounds < 1)
			return usage();
		worker_t w[32];
		uthread_t *t[32];
		for (long i = 0; i < n_threads; i++) {
			w[i] = (worker_t) { .idx = i };
			t[i] = thread_create(worker, &w[i]);
			if (!t[i]) {
				printf("regs: cannot create thread %ld\n", i);
				return 1;
			}
		}
		int failed = 0;
		for (long i = 0; i < n_threads; i++) {
			if (thread_join(t[i]) != 0)
				failed++;
			corrupt_total += w[i].corrupt;
			bad_initial_total += w[i].bad_initial;
		}
		printf("regs threads: %s: %ld threads %s, %ld rounds each: "
		    "%d of %ld rounds corrupted, %d registers not in the initial "
		    "state at thread start\n", regs_groups(legacy), n_threads,
		    migrate ? "moving between CPUs" : "on CPU 0",
		    rounds, corrupt_total, n_threads * rounds, bad_initial_total);
		return (corrupt_total || bad_initial_total || failed) ? 1 : 0;
	}
	return usage();
}
