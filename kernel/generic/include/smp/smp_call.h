/** @file smp_call.h
 * SMP cross-calls: run a function on another CPU through an IPI.
 *
 * Ordering guarantee (see docs/RCU.md, "Shared machinery"): everything the
 * caller wrote before smp_call()/smp_call_async() is visible to func when it runs
 * on the target; everything func wrote is visible to the caller once smp_call()
 * or smp_call_wait() returns; and the call is a full memory barrier on the target
 * CPU (func runs between two full fences there). RCU relies on the last point: a
 * CPU that runs a cross-call has passed a memory barrier.
 *
 * Callers must have interrupts enabled (asserted): two CPUs that call each other
 * with interrupts off would wait for each other forever. A CPU waiting for its
 * call keeps serving the calls other CPUs send to it (its interrupts stay on).
 */
#ifndef KERN_SMP_CALL_H_
#define KERN_SMP_CALL_H_

#include <typedefs.h>
#include <adt/list.h>

typedef void (*smp_call_func_t)(void *arg);

/** One cross-call; the caller owns it until smp_call_wait() returns. */
typedef struct smp_call {
	/** Link in the target's pending queue; protected by the target's queue lock. */
	link_t link;
	smp_call_func_t func;
	void *arg;
	/** True until func has run on the target. Atomics (release on the target). */
	bool pending;
} smp_call_t;

/** Registers the IPI handler and initializes the per-CPU queues. BSP, at boot. */
void smp_call_init(void);

/**
 * Runs func(arg) on CPU @a cpu_id with interrupts disabled and waits for it to
 * finish. If @a cpu_id is the calling CPU, runs it in place (interrupts disabled).
 * @return EOK, or ENOENT when the CPU does not exist or is not online (nothing
 *         runs then).
 * Context: thread, interrupts enabled; may spin (not sleep) while waiting.
 */
int smp_call(unsigned cpu_id, smp_call_func_t func, void *arg);

/**
 * Queues func(arg) for CPU @a cpu_id and returns at once; @a call must stay valid
 * until smp_call_wait(@a call) returned. A local call runs in place before this
 * returns.
 * @return EOK or ENOENT (then @a call is marked complete, so waiting is harmless).
 * Context: any with interrupts enabled (asserted).
 */
int smp_call_async(unsigned cpu_id, smp_call_func_t func, void *arg,
    smp_call_t *call);

/** Waits until the call has run. Interrupts enabled. */
void smp_call_wait(smp_call_t *call);

/**
 * Queues func(arg) on every other online CPU without waiting and without
 * asserting the interrupt state: for panic and halt, where the caller stops
 * anyway. Uses per-CPU static call slots; a CPU whose queue lock is busy is
 * skipped (the NMI that follows stops it).
 */
void smp_call_stop_others(smp_call_func_t func);

/**
 * Stops every other CPU: a cross-call first (clean, for CPUs with interrupts on),
 * then, for CPUs that did not stop within 100 ms, an NMI. Used by panic and halt.
 * Interrupts disabled (the caller must not migrate between reading CPU and
 * the cross-calls, or it could stop its own CPU); the caller should stop
 * itself afterwards.
 */
void smp_halt_others(void);

#endif
