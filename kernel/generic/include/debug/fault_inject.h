/** @file fault_inject.h
 * Fault injection for the negative controls: one named predicate,
 * fault_inject(point), in the manner of Linux's should_fail().
 *
 * A negative control is a build in which a test must FAIL, so that a test
 * which cannot catch what it exists to catch is noticed (tests/controls/,
 * docs/CONTROLS.md). Two kinds exist:
 *   - a fixed defect put back: a patch in tests/controls/<name>.patch that
 *     `make controls` applies to a copy of the tree (not here);
 *   - a fault no correct kernel has but a test must notice: a cross-call or a
 *     work item dropped, a grace period that does not wait, a TLB shootdown
 *     that does not reach the other CPUs, a shared write in the CHT's lookup.
 *     These are the points below; the code asks fault_inject(point) where
 *     the fault would happen.
 *
 * The build chooses the points: `make BROKEN=smpcall` (tests/controls/
 * controls.mk) defines CONFIG_FAULT_INJECT as the mask of the chosen points
 * (FI_BIT(FI_SMPCALL_DROP) = 4u; controls.mk lists the points in the order
 * of the enum below). Without it the mask is 0 and fault_inject() is
 * the constant false, so every production build (debug and release) compiles
 * the injected branch away: the code is that of a kernel without the point.
 *
 * Any context (no lock; a configured point with an interval above 1 counts
 * its calls with one relaxed atomic, a statistic nothing is ordered by).
 * Header only: nothing of it is in a kernel without configured points.
 */
#ifndef KERN_DEBUG_FAULT_INJECT_H_
#define KERN_DEBUG_FAULT_INJECT_H_

#include <typedefs.h>

/** The fault-injection points (make BROKEN=<name>: controls.mk). */
enum {
	/** rcu: grace-period detection completes a GP without waiting. */
	FI_RCU_NOWAIT,
	/**
	 * shootdown: tlb_shootdown() does not reach the other CPUs (amd64: does
	 * nothing; arm64: the non-broadcast TLBI, this CPU only).
	 */
	FI_TLB_SHOOTDOWN,
	/** smpcall: a cross-call is marked done without running. */
	FI_SMPCALL_DROP,
	/** workq: an accepted work item is never run. */
	FI_WORKQ_DROP,
	/** sharedcount: every CHT lookup increments one global counter. */
	FI_CHT_SHAREDCOUNT,
	/**
	 * asid: a released address space's ASID is freed for reuse without
	 * invalidating it (arm64, asid_release()).
	 */
	FI_ASID_REUSE,
	FI_POINTS
};

/** The bit of @a point in CONFIG_FAULT_INJECT. */
#define FI_BIT(point)  (1u << (point))

#ifndef CONFIG_FAULT_INJECT
/** No point configured: fault_inject() is constant false. */
#define CONFIG_FAULT_INJECT 0u
#endif

/**
 * Whether @a point (FI_*) is configured in this build: a compile-time
 * constant.
 */
#define fault_inject_enabled(point) \
	((((unsigned) (CONFIG_FAULT_INJECT)) & FI_BIT(point)) != 0)

/**
 * The interval of @a point: a configured point fails one call in this many
 * (1: every call). Drops of one call in hundreds keep the test running long
 * enough to see the loss (smpcall1 counts calls; workqueue sees items that
 * never ran when its queue is idle).
 */
#define fault_inject_interval(point) \
	((point) == FI_SMPCALL_DROP ? 500u : \
	 (point) == FI_WORKQ_DROP ? 1000u : 1u)

/**
 * Counts a call of configured @a point and says whether it is the one in
 * fault_inject_interval(point) that fails. The count is the translation
 * unit's (a static of this inline function: each point is asked in one file,
 * smp_call.c and workqueue.c); one relaxed atomic, a statistic. Only
 * reached in builds that configure @a point.
 */
static inline __attribute__((always_inline)) bool fault_inject_count(
    unsigned point)
{
	static uint64_t calls[FI_POINTS];
	return __atomic_add_fetch(&calls[point], 1, __ATOMIC_RELAXED) %
	    fault_inject_interval(point) == 0;
}

/**
 * The predicate: true when this call at @a point (FI_*) must inject its
 * fault. Constant false unless the build configured @a point (a macro, so
 * that the front end folds the condition and the compiler never sees the
 * injected branch: the code is that of a kernel without the point); then
 * true on every call (interval 1) or on every interval-th call.
 */
#define fault_inject(point) \
	(fault_inject_enabled(point) && \
	 (fault_inject_interval(point) == 1 || fault_inject_count(point)))

#endif
