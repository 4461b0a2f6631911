/** @file spindead1.c
 * (unsafe) The debug builds' spin watchdog (synch/spinlock.c): it reports a
 * deadlock when CPUs spin in a cycle, and only then.
 *
 * - spindead1: two threads on two CPUs take locks A and B in opposite orders
 *   and deadlock (ABBA); each CPU of the cycle must print "Deadlock: ..."
 *   with both locks and holders (two reports).
 * - spindead2: one thread takes a lock it holds (a cycle of one CPU): one
 *   report.
 * - spinslow1: a holder keeps a lock for 8 s without waiting for anything
 *   (as a holder whose vCPU the host descheduled) while another CPU spins
 *   on it: no deadlock report, one long-wait line. Before the watchdog
 *   looked for cycles it printed "Deadlock probable" here.
 *
 * The locks have no name, so the lock validator (which would report the ABBA
 * and the recursion before they spin) does not see them; the reports print
 * their addresses, which each test prints first. A rescuer thread on a third
 * CPU waits for the reports (at most a minute), then breaks the deadlock by
 * releasing the lock from outside (what no kernel code may do), so the CPUs
 * run on and the test returns. Run by name on a debug build: spindead1 needs
 * three CPUs, the others two.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <synch/spinlock.h>
#include <time/delay.h>
#include <arch/asm.h>

/* The tests' locks; unnamed (not validated), protect nothing. */
static spinlock_t sd_a = SPINLOCK_INITIALIZER(NULL);
static spinlock_t sd_b = SPINLOCK_INITIALIZER(NULL);

/* Atomics: which steps the workers reached (SD_*), whether the rescuer released sd_a. */
static unsigned sd_stage;
static bool sd_forced;
/** The deadlock count before the test's threads started; set before them. */
static unsigned sd_base;

#define SD_HAS_A 1u
#define SD_HAS_B 2u
/** How long the rescuer waits for the reports. */
#define SD_REPORT_WAIT_US 60000000ULL
/** How long spinslow1's holder keeps its lock (past the 5 s long-wait bound). */
#define SD_SLOW_HOLD_US 8000000ULL

static void wait_stage(unsigned bit)
{
	while (!(__atomic_load_n(&sd_stage, __ATOMIC_ACQUIRE) & bit))
		cpu_relax();
}

/**
 * Releases @a lock held by another CPU (the deadlock's way out; a test only):
 * the holder finds sd_forced set and re-enables preemption instead of
 * unlocking.
 */
static void force_release(spinlock_t *lock)
{
	__atomic_store_n(&sd_forced, true, __ATOMIC_RELAXED);
	__atomic_store_n(&lock->owner, 0, __ATOMIC_RELAXED);
	/* Release: sd_forced is seen by whoever takes the lock next. */
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
}

/** The holder's end of sd_a: unlock, or only preemption if it was forced. */
static void release_a(void)
{
	if (__atomic_load_n(&sd_forced, __ATOMIC_ACQUIRE))
		preemption_enable();
	else
		spinlock_unlock(&sd_a);
}

/** spindead1: A, then B once the other holds B. */
static void abba_first(void *arg)
{
	(void) arg;
	spinlock_lock(&sd_a);
	__atomic_fetch_or(&sd_stage, SD_HAS_A, __ATOMIC_RELEASE);
	wait_stage(SD_HAS_B);
	spinlock_lock(&sd_b);
	spinlock_unlock(&sd_b);
	release_a();
}

/** spindead1: B once the other holds A, then A. */
static void abba_second(void *arg)
{
	(void) arg;
	wait_stage(SD_HAS_A);
	spinlock_lock(&sd_b);
	__atomic_fetch_or(&sd_stage, SD_HAS_B, __ATOMIC_RELEASE);
	spinlock_lock(&sd_a);
	spinlock_unlock(&sd_a);
	spinlock_unlock(&sd_b);
}

/** spindead2: A twice. */
static void self_dead(void *arg)
{
	(void) arg;
	spinlock_lock(&sd_a);
	__atomic_fetch_or(&sd_stage, SD_HAS_A, __ATOMIC_RELEASE);
	spinlock_lock(&sd_a);
	spinlock_unlock(&sd_a);
	/* The first acquisition's preemption count (the rescuer took the lock). */
	preemption_enable();
}

/** Waits for @a want deadlock reports in all (or the bound), then frees sd_a. */
static void rescuer(void *arg)
{
	unsigned want = *(unsigned *) arg;
	wait_stage(SD_HAS_A);
	uint64_t start = uptime_us();
	unsigned d, l;
	do {
		udelay(10000);
		spinlock_watchdog_counts(&d, &l);
	} while (d - sd_base < want && uptime_us() - start < SD_REPORT_WAIT_US);
	force_release(&sd_a);
}

/** spinslow1: holds sd_a for SD_SLOW_HOLD_US without waiting for any lock. */
static void slow_holder(void *arg)
{
	(void) arg;
	spinlock_lock(&sd_a);
	__atomic_fetch_or(&sd_stage, SD_HAS_A, __ATOMIC_RELEASE);
	udelay(SD_SLOW_HOLD_US);
	spinlock_unlock(&sd_a);
}

/** spinslow1: spins on sd_a while the holder keeps it. */
static void slow_spinner(void *arg)
{
	(void) arg;
	wait_stage(SD_HAS_A);
	spinlock_lock(&sd_a);
	spinlock_unlock(&sd_a);
}

static void reset(void)
{
	spinlock_initialize(&sd_a, NULL);
	spinlock_initialize(&sd_b, NULL);
	__atomic_store_n(&sd_stage, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sd_forced, false, __ATOMIC_RELAXED);
}

/** Runs @a n threads (function, CPU) and joins them; the counts' changes. */
static const char *run(unsigned n, thread_func_t *f, unsigned *cpu,
    void *arg, unsigned *deadlocks, unsigned *long_waits)
{
	unsigned d0, l0;
	spinlock_watchdog_counts(&d0, &l0);
	sd_base = d0;
	thread_t *t[3];
	for (unsigned i = 0; i < n; i++)
		t[i] = testlib_spawn(f[i], arg, "spindead", &cpus[cpu[i]]);
	bool joined = true;
	for (unsigned i = 0; i < n; i++) {
		if (t[i] && !testlib_join(t[i], 2 * SD_REPORT_WAIT_US))
			joined = false;
	}
	for (unsigned i = 0; i < n; i++)
		CHECK(t[i], "out of memory creating the threads");
	CHECK(joined, "a thread did not finish");
	spinlock_watchdog_counts(deadlocks, long_waits);
	*deadlocks -= d0;
	*long_waits -= l0;
	return NULL;
}

static const char *not_debug(void)
{
#ifdef CONFIG_DEBUG
	return NULL;
#else
	return "the spin watchdog is in debug builds only";
#endif
}

const char *test_spindead1(void)
{
	const char *r = not_debug();
	if (r)
		return r;
	CHECK(cpu_count >= 3, "needs three CPUs");
	reset();
	printf("spindead1: locks A %p and B %p taken in both orders on CPUs 1 "
	    "and 2\n", &sd_a, &sd_b);
	thread_func_t f[3] = { abba_first, abba_second, rescuer };
	unsigned cpu[3] = { 1, 2, 0 }, want = 2, d, l;
	r = run(3, f, cpu, &want, &d, &l);
	if (r)
		return r;
	printf("spindead1: %u deadlock reports, %u long waits\n", d, l);
	CHECK(d == 2, "the cycle was not reported by both of its CPUs");
	return NULL;
}

const char *test_spindead2(void)
{
	const char *r = not_debug();
	if (r)
		return r;
	CHECK(cpu_count >= 2, "needs two CPUs");
	reset();
	printf("spindead2: lock A %p taken twice on CPU 1\n", &sd_a);
	thread_func_t f[2] = { self_dead, rescuer };
	unsigned cpu[2] = { 1, 0 }, want = 1, d, l;
	r = run(2, f, cpu, &want, &d, &l);
	if (r)
		return r;
	printf("spindead2: %u deadlock reports, %u long waits\n", d, l);
	CHECK(d == 1, "the lock taken twice was not reported once");
	return NULL;
}

const char *test_spinslow1(void)
{
	const char *r = not_debug();
	if (r)
		return r;
	CHECK(cpu_count >= 2, "needs two CPUs");
	reset();
	printf("spinslow1: lock A %p held 8 s on CPU 1, spun on from CPU 0\n",
	    &sd_a);
	thread_func_t f[2] = { slow_holder, slow_spinner };
	unsigned cpu[2] = { 1, 0 }, d, l;
	r = run(2, f, cpu, NULL, &d, &l);
	if (r)
		return r;
	printf("spinslow1: %u deadlock reports, %u long waits\n", d, l);
	CHECK(d == 0, "a slow holder was reported as a deadlock");
	CHECK(l == 1, "the long wait was not reported once");
	return NULL;
}
