/** @file rcu_impl.h
 * Private to the RCU implementation: what rcu.c (grace-period detection,
 * callbacks) and rcu_stall.c (stall warnings) share.
 */
#ifndef KERN_SYNCH_RCU_IMPL_H_
#define KERN_SYNCH_RCU_IMPL_H_

#include <synch/spinlock.h>
#include <adt/list.h>
#include <typedefs.h>

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

#endif
