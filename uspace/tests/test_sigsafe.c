/** @file test_sigsafe.c
 * Reader sections in signal handlers.
 *
 * Part 1, deterministic (x86-64): the test single-steps its own reader
 * sections. With the trap flag (EFLAGS.TF) set, the CPU raises SIGTRAP after
 * every instruction; the SIGTRAP handler keeps the flag set in the context it
 * returns to, so it runs at EVERY instruction boundary of the stepped loop,
 * including every point inside the inlined cht_rcu_read_lock() and
 * cht_rcu_read_unlock(). At each one the handler
 *   - checks the interrupted code's state: where the loop says it is inside
 *     its section (after cht_rcu_read_lock() returned, before
 *     cht_rcu_read_unlock() is called), the thread must hold a snapshot
 *     (ctr != 0, nest >= 1); where it says it is outside, nothing (ctr == 0,
 *     nest == 0);
 *   - enters a reader section of its own (two deep) and checks that it holds
 *     a snapshot (ctr != 0) inside it;
 *   - leaves, and checks that nest is back to what it found.
 * The loop covers outermost and nested sections.
 *
 * Part 2, stress (every architecture and flavour): a reader thread loops in
 * reader sections that read a published object repeatedly, while another
 * thread hits it with signals whose handler reads the same object in its own
 * section, and an updater replaces the object, waits for a grace period
 * (cht_rcu_synchronize) and poisons the old one. A reader that sees poison
 * read an object after its grace period ended.
 *
 * Usage: test_sigsafe [seconds-of-part-2] ; prints PASSED or FAILED.
 */
#include "tutil.h"
#include <cht_rcu.h>

#include <signal.h>
#include <ucontext.h>

/* --- part 1: single-stepping ------------------------------------------- */

/*
 * Not under ThreadSanitizer: its runtime deadlocks when a SIGTRAP handler
 * interrupts its own instrumentation at every instruction (the plain and
 * ASan builds run part 1; TSan runs part 2).
 */
#if defined(__x86_64__) && defined(REG_EFL) && !defined(__SANITIZE_THREAD__)
#define HAVE_STEP 1
#else
#define HAVE_STEP 0
#endif

#if HAVE_STEP
enum { W_OUT, W_IN, W_TRANS };

/* Written by the stepped loop, read by the handler (same thread). */
static volatile sig_atomic_t where = W_OUT;
static volatile sig_atomic_t stepping;

/* Handler results (same thread; read after stepping ends). */
static unsigned long steps, steps_trans;
static unsigned long bad_in, bad_out, bad_handler, bad_restore;
static uint64_t first_bad_ctr;
static unsigned long first_bad_nest, first_bad_step;
static const char *first_bad_what;

static void note_bad(unsigned long *counter, const char *what, uint64_t ctr,
    unsigned long nest)
{
	if (!first_bad_what) {
		first_bad_what = what;
		first_bad_ctr = ctr;
		first_bad_nest = nest;
		first_bad_step = steps;
	}
	(*counter)++;
}

static void on_trap(int sig, siginfo_t *info, void *uctx)
{
	(void) sig;
	(void) info;
	ucontext_t *uc = uctx;
	steps++;
	int w = where;
	uint64_t ctr = __atomic_load_n(&cht_rcu_self.ctr, __ATOMIC_RELAXED);
	unsigned long nest = __atomic_load_n(&cht_rcu_self.nest,
	    __ATOMIC_RELAXED);
	if (w == W_TRANS)
		steps_trans++;
	else if (w == W_IN && (ctr == 0 || nest == 0))
		note_bad(&bad_in, "interrupted section has no snapshot", ctr, nest);
	else if (w == W_OUT && (ctr != 0 || nest != 0))
		note_bad(&bad_out, "state left over outside any section", ctr,
		    nest);

	/* The handler's own section, two deep. */
	if (cht_rcu_read_lock() == CHT_OK) {
		uint64_t c1 = __atomic_load_n(&cht_rcu_self.ctr, __ATOMIC_RELAXED);
		if (c1 == 0)
			note_bad(&bad_handler, "handler's section has no snapshot",
			    c1, nest);
		if (cht_rcu_read_lock() == CHT_OK) {
			uint64_t c2 = __atomic_load_n(&cht_rcu_self.ctr,
			    __ATOMIC_RELAXED);
			if (c2 == 0)
				note_bad(&bad_handler, "handler's nested section has "
				    "no snapshot", c2, nest);
			cht_rcu_read_unlock();
		}
		cht_rcu_read_unlock();
	}
	unsigned long nest2 = __atomic_load_n(&cht_rcu_self.nest,
	    __ATOMIC_RELAXED);
	if (nest2 != nest)
		note_bad(&bad_restore, "handler changed nest", ctr, nest2);

	if (stepping)
		uc->uc_mcontext.gregs[REG_EFL] |= 0x100;
	else
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100;
}

static inline void set_where(int w)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	where = w;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static uint64_t sink;

/* The stepped loop: noinline so that it is one piece of straight code. */
static __attribute__((noinline)) void stepped_loop(int iters)
{
	for (int i = 0; i < iters; i++) {
		set_where(W_TRANS);
		cht_rcu_read_lock();
		set_where(W_IN);
		sink += __atomic_load_n(&cht_rcu_gp.seq, __ATOMIC_ACQUIRE);
		if (i & 1) {
			/* A nested section inside the outer one. */
			set_where(W_TRANS);
			cht_rcu_read_lock();
			set_where(W_IN);
			sink++;
			set_where(W_TRANS);
			cht_rcu_read_unlock();
			set_where(W_IN);
		}
		set_where(W_TRANS);
		cht_rcu_read_unlock();
		set_where(W_OUT);
	}
}

static void part_step(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, NULL) != 0) {
		perror("sigaction");
		exit(2);
	}
	stepping = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Set TF: the CPU traps after the next instruction, and so on. */
	__asm__ volatile("pushfq\n\torl $0x100, (%%rsp)\n\tpopfq" ::: "memory",
	    "cc");
	stepped_loop(200);
	stepping = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The next trap (after this store) clears TF. */
	__asm__ volatile("nop" ::: "memory");
	signal(SIGTRAP, SIG_DFL);

	printf("part 1: %lu single steps, %lu inside lock/unlock; bad: %lu "
	    "interrupted section, %lu outside, %lu handler section, %lu "
	    "restore\n", steps, steps_trans, bad_in, bad_out, bad_handler,
	    bad_restore);
	if (first_bad_what)
		printf("  first at step %lu: %s (ctr %llu, nest %lu)\n",
		    first_bad_step, first_bad_what,
		    (unsigned long long) first_bad_ctr, first_bad_nest);
	CHECK(steps_trans > 100, "the stepping did not run (%lu steps)", steps);
	CHECK_EQ(bad_in, 0);
	CHECK_EQ(bad_out, 0);
	CHECK_EQ(bad_handler, 0);
	CHECK_EQ(bad_restore, 0);
}
#endif

/* --- part 2: signal stress with a poisoning updater ----------------------- */

#define ALIVE  0x600d600d600d600dull
#define POISON 0xdeadbeefdeadbeefull

typedef struct obj {
	uint64_t v[8];
	struct obj *retired_next;
} obj_t;

static obj_t *published;       /* RCU-published */
static int stop;               /* atomics */
static unsigned long seen_poison, handler_runs, reader_loops, replaced;
static pthread_t reader_tid;
static int reader_ready;       /* atomics */

static unsigned long read_obj(void)
{
	obj_t *o = cht_rcu_access(published);
	unsigned long bad = 0;
	for (int k = 0; k < 8; k++) {
		if (__atomic_load_n(&o->v[k], __ATOMIC_RELAXED) != ALIVE)
			bad++;
	}
	return bad;
}

static void on_usr1(int sig)
{
	(void) sig;
	if (cht_rcu_read_lock() != CHT_OK)
		return;
	unsigned long bad = read_obj();
	cht_rcu_read_unlock();
	if (bad)
		__atomic_fetch_add(&seen_poison, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&handler_runs, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	(void) arg;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	__atomic_store_n(&reader_ready, 1, __ATOMIC_RELEASE);
	unsigned long loops = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		cht_rcu_read_lock();
		/* Long enough for a grace period to overlap the section. */
		unsigned long bad = 0;
		for (int r = 0; r < 50; r++)
			bad += read_obj();
		cht_rcu_read_unlock();
		if (bad)
			__atomic_fetch_add(&seen_poison, 1, __ATOMIC_RELAXED);
		loops++;
	}
	__atomic_store_n(&reader_loops, loops, __ATOMIC_RELAXED);
	return NULL;
}

static void *signaller(void *arg)
{
	(void) arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_kill(reader_tid, SIGUSR1);
		for (volatile int i = 0; i < 200; i++)
			;
	}
	return NULL;
}

static obj_t *obj_new(void)
{
	obj_t *o = malloc(sizeof(*o));
	if (!o) {
		perror("malloc");
		exit(2);
	}
	for (int k = 0; k < 8; k++)
		o->v[k] = ALIVE;
	o->retired_next = NULL;
	return o;
}

static void part_stress(double seconds)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	cht_rcu_assign(published, obj_new());
	pthread_t sig_tid;
	tu_spawn(&reader_tid, reader, NULL);
	while (!__atomic_load_n(&reader_ready, __ATOMIC_ACQUIRE))
		tu_sleep_ms(1);
	tu_spawn(&sig_tid, signaller, NULL);

	/*
	 * Updater (this thread): replace, wait a grace period, poison. Old
	 * objects are kept (poisoned) until the end, so a late reader reads
	 * poison rather than reused memory.
	 */
	obj_t *retired = NULL;
	uint64_t end = tu_now_ns() + (uint64_t) (seconds * 1e9);
	unsigned long n = 0;
	while (tu_now_ns() < end) {
		obj_t *old = __atomic_exchange_n(&published, obj_new(),
		    __ATOMIC_ACQ_REL);
		CHECK_EQ(cht_rcu_synchronize(), CHT_OK);
		for (int k = 0; k < 8; k++)
			__atomic_store_n(&old->v[k], POISON, __ATOMIC_RELAXED);
		old->retired_next = retired;
		retired = old;
		n++;
		if (n % 4096 == 0) {
			/* Free the older half: two more GPs have passed. */
			CHECK_EQ(cht_rcu_synchronize(), CHT_OK);
			while (retired) {
				obj_t *next = retired->retired_next;
				free(retired);
				retired = next;
			}
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(sig_tid, NULL);
	pthread_join(reader_tid, NULL);
	signal(SIGUSR1, SIG_IGN);
	while (retired) {
		obj_t *next = retired->retired_next;
		free(retired);
		retired = next;
	}
	free(published);
	published = NULL;
	replaced = n;
	printf("part 2: %lu replacements, %lu reader sections, %lu handler "
	    "sections, %lu saw poison (flavour %s)\n", replaced,
	    __atomic_load_n(&reader_loops, __ATOMIC_RELAXED),
	    __atomic_load_n(&handler_runs, __ATOMIC_RELAXED),
	    __atomic_load_n(&seen_poison, __ATOMIC_RELAXED), cht_rcu_flavour());
	CHECK_EQ(__atomic_load_n(&seen_poison, __ATOMIC_RELAXED), 0);
	CHECK(__atomic_load_n(&handler_runs, __ATOMIC_RELAXED) > 0,
	    "no signal was handled");
}

int main(int argc, char **argv)
{
	double seconds = tu_seconds(argc, argv, 2);
	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
#if HAVE_STEP
	if (!getenv("SIGSAFE_NO_STEP"))
		part_step();
	else
		printf("part 1: skipped (SIGSAFE_NO_STEP)\n");
#elif defined(__SANITIZE_THREAD__)
	printf("part 1: skipped (ThreadSanitizer build)\n");
#else
	printf("part 1: skipped (single-stepping needs x86-64)\n");
#endif
	part_stress(seconds);
	return tu_finish("test_sigsafe");
}
