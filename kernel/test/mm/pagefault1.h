/** @file pagefault1.h
 * What the files of the kernel test `pagefault1` share: pagefault1.c (the file
 * comment describing the test, page contents, the shared state, the checks,
 * set-up, tear-down and the verdict) and pagefault1_threads.c (the test
 * threads: the three phases). Tests run one at a time, so the shared state
 * is the running test's.
 */
#ifndef KERN_TEST_PAGEFAULT1_H_
#define KERN_TEST_PAGEFAULT1_H_

#include <test.h>
#include <testlib.h>
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <adt/cht.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <time/delay.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <stdarg.h>
#include <errno.h>
#include <lib/str.h>
#include "mmtest.h"

#define PF_BASE         0x10000000UL
/** Pages of the shared area (all threads together, at least 64 each). */
#define PF_SHARED_ALL   1280
#define PF_SHARED_MIN   64
#define PF_SHARED_MAX   (PF_SHARED_ALL / 2)
#define PF_PRIV         96
#define PF_ROUNDS       3
/** Phase 2a: pages per thread, reader distances. */
#define PF_SPAIR_BASE   0x40000000UL
#define PF_SPAIR_K      4
#define PF_SPAIR_DISTS  1
/** Phase 2b: pages per thread and pair, tournaments. */
#define PF_PAIR_BASE    0x50000000UL
#define PF_PAIR_K       4
#define PF_PAIR_REPS    2
/**
 * Phase 3: pages every thread faults and unmaps; rounds (at least
 * PF_HOT_ROUNDS, at most PF_HOT_MAX_ROUNDS: until the races were seen); one
 * page in PF_HOT_UNMAP_EVERY is also unmapped singly in each round.
 */
#define PF_HOT_BASE     0x60000000UL
#define PF_HOT          64
#define PF_HOT_ROUNDS   4
#define PF_HOT_MAX_ROUNDS 128
/** Longest wait of a thread at a hot page for the others (microseconds). */
#define PF_HOT_MEET_US  200
#define PF_HOT_UNMAP_EVERY 4
/** How long the unmapper fights the others' faults on such a page (us). */
#define PF_HOT_FIGHT_US 2000
/**
 * Phase 3 with two CPUs or more shows the race it exists for at least this
 * often (the address space's exact counter): two faults on one page at
 * once, one losing the insert to the other (faults_raced). Where the held
 * faults run (below) their held inserts make it certain and it is required;
 * in the builds without the hooks (release) the free-running rounds go on
 * until it was seen this often (at most PF_HOT_MAX_ROUNDS) and it is
 * printed: two vCPUs faulting within the same few hundred instructions is
 * what a loaded host may not give. A fault whose page was unmapped between
 * its lookup and its install (faults_unmapped) is made certain the same way.
 */
#define PF_HOT_MIN_RACED    4
/**
 * Phase 3, held faults (debug builds, threads 0 and 1 on CPUs of their
 * own): pages whose minor fault as_fault_minor_hook holds until the page is
 * unmapped (each must then find it unmapped before the install), as many
 * pages whose fault as_fault_insert_hook holds before its insert until the
 * other thread's fault inserted the page (each must lose the insert), and
 * the bound of every wait of that step (microseconds; TCG on a loaded host).
 */
#define PF_HOLD_PAGES   8
#define PF_HOLD_US      (10 * 1000 * 1000UL)
/** The value as_page_fill() puts into the held fault's word (| round). */
#define PF_HOLD_MARK    0x401d000000000000ULL
#define MAX_THREADS     CONFIG_MAX_CPUS

enum { PG_ABSENT = 0, PG_ZERO, PG_PAT };

typedef struct {
	uint32_t gen;
	uint8_t state;
} pf_page_t;

/*
 * Barrier; the last thread to arrive runs a function before the others go on.
 * It also carries the fault check of the pair protocol.
 */
typedef struct {
	mmtest_barrier_t b;
	/** Pair protocol: the address space, its faults before step 4, the
	 * faults step 4 must take, steps 4 checked. Written by the last thread
	 * to arrive, read after the barrier. */
	as_t *as;
	uint64_t faults_before;
	uint64_t want;
	unsigned checks;
} pf_bar_t;

static inline pf_bar_t *pf_bar(mmtest_barrier_t *b)
{
	return container_of(b, pf_bar_t, b);
}

static inline void pf_bar_wait(pf_bar_t *b, void (*fn)(mmtest_barrier_t *))
{
	mmtest_barrier_wait(&b->b, fn);
}

typedef struct {
	unsigned index;
	unsigned cpu;
	uint64_t seed;
	as_t *priv;
	pf_page_t shared[PF_SHARED_MAX];
	pf_page_t own[PF_PRIV];
	size_t steps;
	size_t unmaps;
	size_t pair_rounds;
	/** Phase 3: the value it wrote last into each hot page (its word). */
	uint64_t hot_last[PF_HOT];
	size_t hot_unmaps;
	/** Phase 3: its unmaps (EOK) while the others fault the page. */
	size_t hot_extra_unmaps;
	/** Phase 3: its unmaps during which another thread accessed the page. */
	size_t hot_overlaps;
	/** Phase 3, held faults: its unmaps (EOK). */
	size_t hot_held_unmaps;
} pf_arg_t;

/** Phase 2b: the address space and barrier of threads i < j, at [i * T + j]. */
typedef struct {
	as_t *as;
	pf_bar_t bar;
} pf_pair_t;

/** Phase 3 counts (hot_counts). */
typedef struct {
	uint64_t faults, minor, inserted, lost;
	/** The address space's own race counters. */
	uint64_t raced, unmapped;
	size_t unmaps, overlaps;
	/**
	 * Held faults: pages filled by as_page_fill() (inserted by no fault),
	 * faults held until their page was unmapped, and the address space's
	 * faults_unmapped during that step.
	 */
	size_t fills;
	unsigned held;
	uint64_t held_unmapped;
	/**
	 * Held inserts: faults held before their insert until another fault
	 * had inserted their page, and the address space's faults_raced during
	 * the held faults (each held insert must lose: exactly held_lost).
	 */
	unsigned held_lost;
	uint64_t held_raced;
} hot_counts_t;

/* Shared state (defined in the files below; comments there). */
extern pf_arg_t pf1_args[MAX_THREADS];
extern pf_bar_t pf1_bar;
extern mmtest_failure_t pf1_failure;
extern unsigned pf1_hot_arrived[PF_HOT];
extern as_t *pf1_hot_as;
extern size_t pf1_hot_bulk_unmapped;
extern unsigned pf1_hot_busy[PF_HOT];
extern unsigned pf1_hot_fought[PF_HOT];
extern bool pf1_hot_more;
extern unsigned pf1_hot_online;
extern unsigned pf1_hot_rounds;
extern unsigned pf1_hot_seq[PF_HOT];
extern bool pf1_hold_ran;
extern unsigned pf1_nthreads;
extern pf_pair_t *pf1_pairs;
extern as_t *pf1_shared_as;
extern unsigned pf1_shared_per;

/* Functions the files call across. */
uint64_t pf1_page_cmp(uintptr_t va, uint64_t gen, uint64_t salt, bool zero,
    bool *ok);
void pf1_page_write(uintptr_t va, uint64_t gen, uint64_t salt);
void pf1_phase1_end(mmtest_barrier_t *b);
void pf1_phase2a_end(mmtest_barrier_t *b);
void pf1_phase3_end(mmtest_barrier_t *b);
void pf1_sample_table(void);
uintptr_t pf1_shared_page(unsigned t, unsigned j);
void pf1_hot_counts(hot_counts_t *c);
uintptr_t pf1_hot_page(unsigned j);
bool pf1_hold_runs(void);
void pf1_pf_thread(void *p);

#endif
