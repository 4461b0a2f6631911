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

/* rcu.c: the grace-period numbers, the expedite request, statistics. */
extern uint64_t rcu_cur_gp;
extern uint64_t completed_gp;
#define expedite_req rcu_expedite.req
extern uint64_t stat_expedited;
extern uint64_t stat_delayed;
extern uint64_t stat_cross_calls;

/** The GP started last (seq_cst). */
static inline uint64_t cur_gp(void)
{
	return __atomic_load_n(&rcu_cur_gp, __ATOMIC_SEQ_CST);
}

/** Is CPU @a i known to be quiescent for GP @a gp without asking it? */
bool cpu_quiescent(unsigned i, uint64_t gp);
/** Starts GP cur_gp + 1: preempted readers so far may predate it. */
uint64_t gp_start(void);
/** Called with rcu_preempt_lock held after a reader left rcu_cur_preempted. */
void preempted_reader_left_locked(void);
/** Puts @a t, switched out inside a reader, on the right preempted list. */
void add_preempted_locked(thread_t *t);
/** The scheduler's thread_exits hook: rcu_thread_exiting() (both flavours). */
void rcu_thread_exits_hook(thread_t *t);
#ifdef CONFIG_DEBUG
/** Scheduler hook: @a t is about to sleep; asserts it is outside any reader. */
void rcu_thread_sleeps(thread_t *t);
#define RCU_SLEEP_HOOK rcu_thread_sleeps
#else
#define RCU_SLEEP_HOOK NULL
#endif

/* The algorithm's file (rcu_arcu.c or rcu_podzimek.c). */
/** Blocks until GP @a gp completed (the reclaimers). */
void wait_for_gp(uint64_t gp);
/** The algorithm's scheduler hooks (rcu_init registers them). */
extern const sched_hooks_t rcu_hooks;
/** Initializes the algorithm's own state (rcu_init). */
void rcu_alg_init(void);
/** Starts the algorithm's own threads, if any (rcu_start_threads). */
void rcu_alg_start_threads(void);

/**
 * Readers preempted inside a section that may predate the current GP (rcu.c,
 * "Shared machinery"); rcu_cur_preempted is protected by rcu_preempt_lock,
 * which also protects the next-GP list and the detector's wait flag in rcu.c.
 */
extern irq_spinlock_t rcu_preempt_lock;
extern list_t rcu_cur_preempted;

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

/**
 * Waits until every reader preempted before the GP started has left; prints
 * the stall warning of @a w when it is due meanwhile (rcu.c).
 */
void wait_for_preempted_readers(gp_watch_t *w);

#endif
