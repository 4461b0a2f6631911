/** @file kcsan1.c
 * KCSAN's negative controls (unsafe: never run by `test *`, whose clean runs
 * must print no report):
 *
 * - kcsan1: two threads wired to CPUs 0 and 1 increment one plain int, a
 *   data race KCSAN must report (BUG: KCSAN: data-race in
 *   kcsan1_plain_inc / kcsan1_plain_inc, both accesses with their stacks).
 *   The test rounds until the runtime printed a report of the counter's race
 *   with both accesses (passes) or a minute went by (fails). A value change
 *   seen at unknown origin (the other CPU's increment fell outside the
 *   watchpoint's window) counts as a race but not as that report: on a
 *   loaded host the first rounds may see only those.
 * - kcsan2: the same with __atomic_fetch_add: marked accesses, no report on
 *   the counter may appear (passes when none was counted; also checks that
 *   the increments are exact, which the plain variant cannot be expected to).
 *
 * Need a KCSAN kernel (make SANITIZE=kcsan) and at least two CPUs; otherwise
 * they fail saying so.
 */
#include <test.h>
#include <testlib.h>
#include <cpu.h>
#include <time/delay.h>
#include <debug/kcsan.h>
#include <print.h>

#define KCSAN1_ROUND 200000
#define KCSAN1_MAX_US 60000000ULL

#ifdef CONFIG_KCSAN
/* Shared by the two workers of one round; the race is the point (kcsan1). */
static int kcsan1_counter;
static unsigned kcsan1_atomic_counter;

/* Not static and not inlined, so that the report names them. */
__attribute__((noinline)) void kcsan1_plain_inc(int *p);
__attribute__((noinline)) void kcsan1_plain_inc(int *p)
{
	(*p)++;
}

__attribute__((noinline)) void kcsan1_atomic_inc(unsigned *p);
__attribute__((noinline)) void kcsan1_atomic_inc(unsigned *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

static void plain_worker(void *arg)
{
	for (unsigned i = 0; i < KCSAN1_ROUND; i++)
		kcsan1_plain_inc(&kcsan1_counter);
}

static void atomic_worker(void *arg)
{
	for (unsigned i = 0; i < KCSAN1_ROUND; i++)
		kcsan1_atomic_inc(&kcsan1_atomic_counter);
}

/** One round: both workers on CPUs 0 and 1, joined. */
static const char *round(thread_func_t f)
{
	thread_t *a = testlib_spawn(f, NULL, "kcsan1-a", &cpus[0]);
	thread_t *b = testlib_spawn(f, NULL, "kcsan1-b", &cpus[1]);
	bool ja = testlib_join(a, WAIT_LIMIT_US);
	bool jb = testlib_join(b, WAIT_LIMIT_US);
	CHECK(a && b, "out of memory creating the workers");
	CHECK(ja && jb, "a worker did not finish");
	return NULL;
}
#endif

const char *test_kcsan1(void)
{
#ifndef CONFIG_KCSAN
	return "not a KCSAN kernel (make SANITIZE=kcsan)";
#else
	CHECK(cpu_count >= 2, "needs two CPUs");
	kcsan_test_track(&kcsan1_counter, sizeof(kcsan1_counter));
	uint64_t start = uptime_us();
	unsigned rounds = 0;
	while (kcsan_test_printed_both() == 0 &&
	    uptime_us() - start < KCSAN1_MAX_US) {
		const char *r = round(plain_worker);
		if (r)
			return r;
		rounds++;
	}
	size_t hits = kcsan_test_hits(), both = kcsan_test_printed_both();
	kcsan_test_track(NULL, 0);
	printf("kcsan1: %zu race(s) on the plain counter in %u round(s), %zu "
	    "printed with both accesses\n", hits, rounds, both);
	CHECK(hits > 0, "KCSAN did not report the plain increments' race");
	CHECK(both > 0, "KCSAN saw the race only as a value change at unknown "
	    "origin, never with both accesses");
	return NULL;
#endif
}

const char *test_kcsan2(void)
{
#ifndef CONFIG_KCSAN
	return "not a KCSAN kernel (make SANITIZE=kcsan)";
#else
	CHECK(cpu_count >= 2, "needs two CPUs");
	kcsan_test_track(&kcsan1_atomic_counter, sizeof(kcsan1_atomic_counter));
	__atomic_store_n(&kcsan1_atomic_counter, 0, __ATOMIC_RELAXED);
	const unsigned rounds = 3;
	for (unsigned i = 0; i < rounds; i++) {
		const char *r = round(atomic_worker);
		if (r)
			return r;
	}
	size_t hits = kcsan_test_hits();
	kcsan_test_track(NULL, 0);
	unsigned got = __atomic_load_n(&kcsan1_atomic_counter, __ATOMIC_RELAXED);
	printf("kcsan2: %zu race(s) on the atomic counter, %u increments\n", hits,
	    got);
	CHECK(got == rounds * 2 * KCSAN1_ROUND, "atomic increments lost");
	CHECK(hits == 0, "KCSAN reported atomic increments as a race");
	return NULL;
#endif
}
