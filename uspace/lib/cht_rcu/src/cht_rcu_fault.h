/** @file cht_rcu_fault.h
 * Fault injection of libcht's user RCU for the negative controls: one named
 * predicate, cht_rcu_fault(point), the user-space twin of the kernel's
 * fault_inject() (kernel/generic/include/debug/fault_inject.h).
 *
 * The build chooses the points: CHT_RCU_FAULT_INJECT is the mask of the
 * configured points (bit CHT_RCU_FI_BIT(point)). Only the negative-control
 * builds define it: the `broken` variant of `make -C uspace` (the RCU
 * torture test must fail against it) and the OS program chtnowait (chtuser
 * linked with a libcht built with the point, tests/test_tasks.py). Without
 * it the mask is 0 and cht_rcu_fault() is the constant false: every
 * production build of libcht (Linux and the OS) compiles the injected branch
 * away. Private to the library (src/): nothing of it is exported.
 */
#ifndef CHT_RCU_FAULT_H_
#define CHT_RCU_FAULT_H_

/** The fault-injection points of the user RCU. */
enum {
	/** cht_rcu_synchronize() completes a grace period without waiting. */
	CHT_RCU_FI_NO_WAIT,
	CHT_RCU_FI_POINTS
};

/** The bit of @a point in CHT_RCU_FAULT_INJECT. */
#define CHT_RCU_FI_BIT(point)  (1u << (point))

#ifndef CHT_RCU_FAULT_INJECT
/** No point configured: cht_rcu_fault() is constant false. */
#define CHT_RCU_FAULT_INJECT 0u
#endif

/**
 * Whether @a point (CHT_RCU_FI_*) is configured in this build: a
 * compile-time constant, so the branch it guards is folded away when off.
 */
#define cht_rcu_fault(point) \
	((((unsigned) (CHT_RCU_FAULT_INJECT)) & CHT_RCU_FI_BIT(point)) != 0)

#endif
