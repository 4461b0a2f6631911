/** @file rcu_types.h
 * RCU types shared by the API header and the per-thread / per-CPU structures.
 */
#ifndef KERN_RCU_TYPES_H_
#define KERN_RCU_TYPES_H_

#include <typedefs.h>
#include <synch/waitq.h>

struct rcu_item;
typedef void (*rcu_func_t)(struct rcu_item *item);

/** A callback; embed it in the object to reclaim. */
typedef struct rcu_item {
	rcu_func_t func;
	/** Next in the CPU's callback batch; CPU-local (interrupts disabled). */
	struct rcu_item *next;
} rcu_item_t;

struct slab_cache;

/** Objects a run of RCU callbacks frees with rcu_slab_free(), at most. */
#define RCU_FREE_BATCH 32

/**
 * The frees gathered by rcu_slab_free() while the reclaimer runs a batch of
 * callbacks: up to RCU_FREE_BATCH objects of one slab cache, handed to
 * slab_free_bulk() together. On the reclaimer's stack (exec_batch()); used by
 * that thread only (thread_t.rcu_free_batch).
 */
typedef struct rcu_free_batch {
	struct slab_cache *cache;
	size_t n;
	void *objs[RCU_FREE_BATCH];
} rcu_free_batch_t;

/**
 * Per-CPU RCU state (a member of cpu_t). Fields say what protects them.
 */
typedef struct rcu_cpu {
	/** Last grace period this CPU acknowledged (passed a QS in). Written by the
	 * CPU itself (or by an smp_call it runs); read by the detector. Atomics. */
	uint64_t last_seen_gp;
	/** Nesting of the running thread's reader section (amd64; arm64 keeps
	 * it in register x18 instead, arch/rcu_arch.h); CPU-local, saved to the
	 * thread at switch-out and loaded at switch-in. RCU_CNT_INC per level,
	 * changed by the running thread with single %gs-relative add/sub
	 * instructions (atomic w.r.t. this CPU's interrupts); A-RCU: plus bit
	 * RCU_WAS_PREEMPTED, set by the switch-out hook or its smp_call. */
	size_t nesting;
	/** Podzimek: the detector waits for this CPU's next QS. Atomics. */
	bool is_delaying_gp;

	/** Callbacks arriving; CPU-local with interrupts disabled (rcu_call). */
	rcu_item_t *arriving_head;
	rcu_item_t **arriving_tail;
	size_t arriving_cnt;
	/**
	 * Callbacks of rcu_call_batched(): a stack pushed by compare-and-swap
	 * from any CPU and context (a thread may have migrated since it read
	 * CPU), taken whole by this CPU's reclaimer or rcu_barrier()'s smp_call
	 * with an exchange (acquire; pushes release). In no posting order.
	 */
	rcu_item_t *batched;
	/** Batches owned by the reclaimer thread of this CPU (thread-local). */
	rcu_item_t *next_cbs;
	uint64_t next_cbs_gp;
	size_t next_cnt;
	rcu_item_t *cur_cbs;
	uint64_t cur_cbs_gp;
	size_t cur_cnt;
	/** Reclaimer thread (wired to this CPU). Set once. */
	struct thread *reclaimer;
	/** The reclaimer sleeps here waiting for callbacks. */
	waitq_t reclaimer_wq;
	/** The reclaimer is (about to be) asleep with no callbacks. Written on
	 * this CPU with interrupts disabled (reclaimer, rcu_call); atomics,
	 * because rcu_call_batched() reads it from any CPU (seq_cst store and
	 * fence against its push: docs/RCU.md, "Batched callbacks"). */
	bool reclaimer_idle;
	/** Statistics (racy reads): callbacks posted, run; max batch. */
	uint64_t stat_posted;
	uint64_t stat_run;
	size_t stat_max_batch;
	uint64_t stat_batches;
	/** Times rcu_call() set rcu_expedite.req (it was clear). CPU-local,
	 * written with interrupts disabled; racy reads (statistics). */
	uint64_t stat_expedite_reqs;
} rcu_cpu_t;

/** Nesting counter step; bit 0 of a thread's counter marks "was preempted". */
#define RCU_CNT_INC        2
#define RCU_WAS_PREEMPTED  1

#endif
