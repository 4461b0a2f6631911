/** @file rcu1.h
 * What the files of the kernel test `rcu1` share: rcu1.c (the file comment
 * describing the test, the helpers every part uses and the driver that runs
 * the parts) and rcu1_parts1.c, rcu1_parts2.c (the parts). Tests run one at
 * a time, so the shared state is the running test's.
 */
#ifndef KERN_TEST_RCU1_H_
#define KERN_TEST_RCU1_H_

#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/semaphore.h>
#include <time/delay.h>
#include <mm/malloc.h>
#include <lib/str.h>
#include "../mm/mmtest.h"

/** How long a reader holds a GP back in the preemption tests. */
#define HOLD_US 40000
/** Spin of the reader that the timer should preempt (rcu_synchronize part). */
#define SYNC_SPIN_US 150000
/** Most test threads of one kind at once. */
#define MAX_THREADS 32
#define NOP_READER_MIN 100
#define NOP_READER_MAX 30000
#define NOP_CBS 2000
/** Callbacks of the one-CPU flood (3 x the expedite threshold). */
#define FLOOD_CBS (3 * RCU_EXPEDITE_THRESHOLD)
#define BARRIER_CBS 200
#define SEQ_ITERS 10
#define SEQ_TOTAL 200
#define STRESS_TOTAL 24000
#define STRESS_MIN 3000
#define STRESS_OUTSTANDING 2000
/**
 * "Preempted during GP detection": the reader must have been switched out at
 * least this often while a GP was in progress (started, not completed); a run
 * that falls short is repeated, at most PV_DURING_TRIES times in all.
 */
#define PV_DURING_MIN 5
#define PV_DURING_TRIES 3
/** Memory back at its baseline: rcu_barrier() and re-reads, at most this often. */
#define SETTLE_TRIES 300
#define SETTLE_SLEEP_US 10000

/** The GP started last (synch/rcu_inline.h, both flavours); atomics. */
extern uint64_t rcu_cur_gp;

typedef struct {
	semaphore_t go;
	atomic_t runs;
	bool stop;          /**< Atomics. */
	thread_t *thread;
} hog_t;

/* Shared state (defined in the files below; comments there). */
extern unsigned rcu1_online_n;
extern char rcu1_reason_buf[192];

/* Functions the files call across. */
bool rcu1_gp_elapses(void);
uint64_t rcu1_gps_now(void);
bool rcu1_hog_start(hog_t *h, cpu_t *cpu);
bool rcu1_hog_stop(hog_t *h);
const char *rcu1_in_flight(const char *why);
unsigned rcu1_spawn_n(thread_t **t, unsigned n, thread_func_t f, void *args,
    size_t stride, const char *name);
const char *rcu1_join_all(thread_t **t, unsigned made, unsigned n);
const char *rcu1_join_barrier(thread_t **t, unsigned made, unsigned n,
    atomic_t *oom);
cpu_t *rcu1_nth_cpu(unsigned k);
bool rcu1_preempt_me(hog_t *h);
unsigned rcu1_thread_cnt(void);
bool rcu1_wait_atleast(atomic_t *a, size_t v);
const char *rcu1_part_barrier(void);
const char *rcu1_part_one_cb(void);
const char *rcu1_part_preempt(void);
const char *rcu1_part_synch(void);
const char *rcu1_part_exit(void);
const char *rcu1_part_nop_cbs(void);
const char *rcu1_part_nop_readers(void);
const char *rcu1_part_seq(void);
const char *rcu1_part_stress(void);
const char *rcu1_part_slab_free(void);

#endif
