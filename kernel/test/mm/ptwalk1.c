/** @file ptwalk1.c
 * Test `ptwalk1`: CPUs fault in different 2 MiB regions of a fresh address
 * space at the same moment, so they race to create the same intermediate
 * page tables (the page-directory-pointer table under the PML4 entry, the
 * page directory under it).
 *
 * Page-table locks are split by 2 MiB region (as_pt_lock()), so nothing but
 * paging_walk()'s compare-and-swap orders those creations. A walk that
 * overwrote another CPU's new table would orphan it: the other CPU's entry
 * would go into a table the hardware no longer reaches (its access faults a
 * second time, as a minor fault: the record is there) and the orphaned
 * tables' frames would never be freed.
 *
 * Each round: a new address space with one area of one 2 MiB region per
 * thread (threads wired one per CPU, at least two), every thread enters it,
 * all meet at a barrier, each stores to the first word of its region through
 * uaccess_store64() and reads it back; then the address space must have
 * counted exactly one fault per thread and no minor fault, and is released.
 * After the rounds, frames outside the slabs and the page hash table's
 * entries must be back at their baseline.
 */
#include <test.h>
#include <testlib.h>
#include "mmtest.h"
#include <mm/as.h>
#include <uaccess.h>
#include <proc/thread.h>
#include <cpu.h>
#include <errno.h>
#include <print.h>

#define PTW_BASE        0x80000000UL     /* 2 GiB: the first page of a PD */
#define PTW_REGION      (2UL << 20)
#define PTW_ROUNDS      100
#define PTW_ROUNDS_LONG 2000   /* ptwalk1long (make soak, the BROKEN=ptwalk1 control) */
#define PTW_MAX_THREADS 16

/*
 * Shared by the test's threads. ptw_as and ptw_round are written only by
 * round_end(), inside the barrier (the last thread to arrive, while the others
 * wait), and read by the threads after it: the barrier's release/acquire
 * generation orders them. ptw_threads is set before the threads start.
 * ptw_failure has its own atomics (mmtest.h).
 */
static as_t *ptw_as;
static unsigned ptw_threads;
static mmtest_barrier_t ptw_barrier;
static mmtest_failure_t ptw_failure;
static unsigned ptw_round;
/** Rounds of this run (PTW_ROUNDS or PTW_ROUNDS_LONG); set before the threads start. */
static unsigned ptw_rounds;

/** Between rounds (the last thread to arrive): checks and replaces the AS. */
static void round_end(mmtest_barrier_t *b)
{
	(void) b;
	as_t *as = ptw_as;
	uint64_t faults = as_stats(as).faults;
	uint64_t minor = as_stats(as).faults_minor;
	if (faults != ptw_threads || minor != 0)
		mmtest_fail(&ptw_failure, "round %u: %lu faults (%lu minor) for %u "
		    "first touches: an entry went into a table the hardware does "
		    "not reach", ptw_round, faults, minor, ptw_threads);
	as_release(as);
	ptw_as = NULL;
	if (++ptw_round < ptw_rounds && !mmtest_failed(&ptw_failure)) {
		ptw_as = as_create();
		if (!ptw_as || as_area_create(ptw_as, PTW_BASE, ptw_threads *
		    PTW_REGION, AS_AREA_READ | AS_AREA_WRITE) != EOK)
			mmtest_fail(&ptw_failure, "round %u: address space or area "
			    "not created", ptw_round);
	}
}

static void ptw_thread(void *arg)
{
	unsigned t = (unsigned) (uintptr_t) arg;
	for (;;) {
		as_t *as = ptw_as;
		mmtest_barrier_wait(&ptw_barrier, NULL);
		if (!as || mmtest_failed(&ptw_failure))
			return;
		as_enter(as);
		mmtest_barrier_wait(&ptw_barrier, NULL);
		uint64_t __user *word = uptr(PTW_BASE + t * PTW_REGION);
		uint64_t want = ((uint64_t) ptw_round << 8) | t, got = 0;
		if (uaccess_store64(word, want) != EOK ||
		    uaccess_load64(word, &got) != EOK || got != want)
			mmtest_fail(&ptw_failure, "round %u, thread %u: store or "
			    "load failed (read %#lx)", ptw_round, t, got);
		as_leave();
		mmtest_barrier_wait(&ptw_barrier, round_end);
	}
}

/** One run of @a rounds rounds; @return NULL or the failure. */
static const char *ptwalk1_run(unsigned rounds)
{
	static char reason[200];
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = test_online_cpus(online);
	mmtest_snap_t s0, s1;
	mmtest_failure_reset(&ptw_failure);
	mmtest_snap(&s0);

	ptw_threads = ncpu < 2 ? 2 : (ncpu > PTW_MAX_THREADS ? PTW_MAX_THREADS :
	    ncpu);
	ptw_barrier = (mmtest_barrier_t) { .n = ptw_threads,
	    .yield = ptw_threads > ncpu };
	ptw_round = 0;
	ptw_rounds = rounds;
	ptw_as = as_create();
	if (!ptw_as)
		return "as_create failed";
	if (as_area_create(ptw_as, PTW_BASE, ptw_threads * PTW_REGION,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		as_release(ptw_as);
		return "as_area_create failed";
	}
	thread_t *th[PTW_MAX_THREADS];
	for (unsigned t = 0; t < ptw_threads; t++) {
		th[t] = testlib_create(ptw_thread, (void *) (uintptr_t) t,
		    "ptwalk1", &cpus[online[t % ncpu]]);
		if (!th[t])
			panic("ptwalk1: thread_create failed");
	}
	for (unsigned t = 0; t < ptw_threads; t++)
		thread_start(th[t]);
	for (unsigned t = 0; t < ptw_threads; t++)
		(void) thread_join(th[t]);
	if (ptw_as) {
		as_release(ptw_as);
		ptw_as = NULL;
	}

	mmtest_snap(&s1);
	TPRINTF("ptwalk1: %u threads, %u rounds; frames outside slabs %ld, page "
	    "hash entries %ld against the baseline\n", ptw_threads, ptw_round,
	    (long) (s1.outside_slabs - s0.outside_slabs),
	    (long) (s1.entries - s0.entries));
	if (mmtest_failed(&ptw_failure))
		return ptw_failure.msg;
	if (ptw_round != ptw_rounds)
		return "not every round ran";
	if (s1.outside_slabs != s0.outside_slabs || s1.entries != s0.entries) {
		snprintf(reason, sizeof(reason), "frames outside slabs %+ld, page "
		    "hash entries %+ld after the rounds: page tables leaked",
		    (long) (s1.outside_slabs - s0.outside_slabs),
		    (long) (s1.entries - s0.entries));
		return reason;
	}
	return NULL;
}

const char *test_ptwalk1(void)
{
	return ptwalk1_run(PTW_ROUNDS);
}

/**
 * ptwalk1 with 20x the rounds: the negative control's test (BROKEN=ptwalk1
 * failed ptwalk1 in about half the runs at -smp 4; this stops at the first
 * orphaned table) and a longer run for make soak.
 */
const char *test_ptwalk1long(void)
{
	return ptwalk1_run(PTW_ROUNDS_LONG);
}
