/** @file rcu_impl.h
 * Private to the RCU implementation: what rcu.c (the shared machinery:
 * grace-period numbers, preempted readers, callbacks), the algorithm's file
 * (rcu_arcu.c or rcu_podzimek.c: the grace-period detection) and rcu_stall.c
 * (stall warnings) share.
 */
#ifndef KERN_SYNCH_RCU_IMPL_H_
#define KERN_SYNCH_RCU_IMPL_H_

#include <synch/spinlock.h>
#include <synch/rcu.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <adt/list.h>
#include <typedefs.h>

/** Tunables of the detection. */
#define DETECT_SLEEP_US        10000  /**< first wait of a normal GP detection */
#define POLL_SLEEP_US          1000   /**< A-RCU: re-poll of CPUs still in readers */

/**
 * Readers preempted inside a section that may predate the current GP (rcu.c,
 * "Shared machinery"); rcu_cur_preempted is protected by rcu_preempt_lock,
 * which also protects the next-GP list and the detector's wait flag in rcu.c.
 */
extern irq_spinlock_t rcu_preempt_lock;
extern list_t rcu_cur_preempted;
/**
 * The started grace period (rcu.c); Podzimek's readers see it through
 * rcu_inline.h, the tests through kernel/test/synch/rcu1.h.
 */
extern uint64_t rcu_cur_gp;

/** Stall watch of the GP being detected; owned by the detection (one at a time:
 * A-RCU holds gp_mutex, Podzimek runs it in the detector thread). */
typedef struct {
	uint64_t gp;
	uint64_t start_us;   /**< uptime when the GP started */
	bool warned;         /**< the warning for this GP was printed */
} gp_watch_t;

/** rcu_stall_due_us(): the warning was printed, no more checks for this GP. */
#define STALL_NEVER UINT64_MAX

/** Starts watching GP @a gp (now). The detection, thread context. */
void rcu_gp_watch_start(gp_watch_t *w, uint64_t gp);
/**
 * Microseconds until the stall warning of @a w is due: 0 if it is due now,
 * STALL_NEVER once it was printed. Any context.
 */
uint64_t rcu_stall_due_us(const gp_watch_t *w);
/**
 * Prints the stall warning of @a w (once: marks it warned). Detector thread,
 * interrupts enabled, no locks held.
 */
void rcu_stall_report(gp_watch_t *w);
/** Prints the stall warning of @a w if it is due. Detector thread. */
void rcu_stall_check(gp_watch_t *w);

/* rcu.c: the grace-period numbers, statistics, the shared detection. */
extern uint64_t rcu_cur_gp;
/** GPs delayed by CPUs found in readers; atomics (relaxed). */
extern uint64_t rcu_stat_delayed;
/** Cross-calls the detection sent; atomics (relaxed). */
extern uint64_t rcu_stat_cross_calls;

/** The GP started last (seq_cst). */
static inline uint64_t rcu_started_gp(void)
{
	return __atomic_load_n(&rcu_cur_gp, __ATOMIC_SEQ_CST);
}

/** Is CPU @a i known to be quiescent for GP @a gp without asking it? */
bool rcu_cpu_quiescent(unsigned i, uint64_t gp);
/** Called with rcu_preempt_lock held after a reader left rcu_cur_preempted. */
void rcu_preempted_reader_left_locked(void);
/** Puts @a t, switched out inside a reader, on the right preempted list. */
void rcu_add_preempted_locked(thread_t *t);
/** The scheduler's thread_exits hook: rcu_thread_exiting() (both flavours). */
void rcu_thread_exits_hook(thread_t *t);
#ifdef CONFIG_DEBUG
/** Scheduler hook: @a t is about to sleep; asserts it is outside any reader. */
void rcu_thread_sleeps(thread_t *t);
#define RCU_SLEEP_HOOK rcu_thread_sleeps
#else
#define RCU_SLEEP_HOOK NULL
#endif
/**
 * The detection's wait for acknowledgements: yields when @a expedite, else
 * sleeps @a us microseconds. Thread context.
 */
void rcu_detect_sleep(bool expedite, unsigned us);
/**
 * Detects one grace period, the frame both algorithms share: takes the
 * expedite request, starts GP rcu_cur_gp + 1, lets the algorithm wait for the
 * CPUs (rcu_alg_detect()), waits for the readers preempted before the GP and
 * marks it complete. fault_inject(FI_RCU_NOWAIT) (make BROKEN=rcu): completes
 * it right after starting it. Called
 * by one thread at a time (A-RCU: a reclaimer holding gp_mutex; Podzimek: the
 * detector thread).
 */
void rcu_run_gp(void);

/* The algorithm's file (rcu_arcu.c or rcu_podzimek.c). */
/**
 * Waits until every online CPU acknowledged GP @a gp or has its reader on
 * rcu_cur_preempted (rcu_run_gp()); @a w is the GP's stall watch.
 */
void rcu_alg_detect(uint64_t gp, bool expedite, gp_watch_t *w);
/** Blocks until GP @a gp completed (the reclaimers). */
void rcu_wait_for_gp(uint64_t gp);
/** The algorithm's scheduler hooks (rcu_init registers them). */
extern const sched_hooks_t rcu_alg_hooks;
/** Initializes the algorithm's own state (rcu_init). */
void rcu_alg_init(void);
/** Starts the algorithm's own threads, if any (rcu_start_threads). */
void rcu_alg_start_threads(void);

#endif
