/** @file rcu.h
 * Read-copy-update: one API, two algorithms chosen at build time.
 *
 * - A-RCU (default, `make RCU=a-rcu`): the reader adds to / subtracts from a
 *   nesting counter of the running thread; no atomics, no barriers, no preemption
 *   toggling. Quiescent states are observed at context switches; the reclaimer
 *   that needs a grace period becomes the detector and samples the remaining
 *   CPUs with smp_call (Hraska, "Read-Copy-Update for HelenOS", 2013, ch. 4).
 * - Preemptible Podzimek RCU (`make RCU=podzimek-rcu`): the reader disables
 *   preemption around a per-CPU nesting counter; the outermost lock and unlock
 *   record a quiescent state once per grace period; a detector thread asks CPUs
 *   found in a reader to announce their next quiescent state (Podzimek,
 *   "Read-copy-update for OpenSolaris", 2010, with Hraska's preemptible
 *   modification).
 *
 * In both flavours readers may be preempted but must not sleep (no blocking
 * call inside a reader section; debug builds assert it: rcu_assert_may_block()).
 * Readers may nest and may run in interrupt handlers. A thread preempted inside
 * a reader section delays only the grace periods that started before its section.
 */
#ifndef KERN_RCU_H_
#define KERN_RCU_H_

#include <typedefs.h>
#include <synch/rcu_types.h>
#include <debug.h>

/** Name of the flavour built in: "a-rcu" or "podzimek-rcu". */
extern const char *const rcu_flavour_name;

/**
 * Enters a reader section. Nestable; callable from any context, including
 * interrupt handlers and with interrupts or preemption disabled. Never blocks.
 */
static inline void rcu_read_lock(void);
/** Leaves a reader section. Same context rules as rcu_read_lock(). */
static inline void rcu_read_unlock(void);
/** True if the current thread (or interrupt handler) is inside a reader section. */
static inline bool rcu_read_locked(void);

/**
 * Calls func(item) after a grace period: after every reader section that was
 * running when rcu_call() was called has ended. Callbacks posted on one CPU run
 * in the order they were posted, in the CPU's reclaimer thread (thread context,
 * preemption enabled; they may not sleep for long but may take mutexes).
 * Context: any, including interrupt handlers and reader sections; never blocks.
 * @param item embedded in the object to reclaim; must stay valid until func runs.
 *
 * Inline (rcu_inline.h): appending to the CPU's list is a dozen
 * instructions, and the call around it cost the CHT's removes 8 more each
 * (chtbench 15, icount); waking the reclaimer stays out of line.
 */
static inline void rcu_call(rcu_item_t *item, rcu_func_t func);

/**
 * Like rcu_call() (func(item) after a grace period, in the reclaimer; any
 * context, never blocks; rcu_barrier() waits for it), but without the order:
 * callbacks posted with it run in no particular order among themselves or
 * with rcu_call()'s. For frees, whose order nobody observes.
 *
 * Cheaper per call: one compare-and-swap onto a per-CPU stack, with
 * interrupts left enabled and no count; the CPU's reclaimer takes the whole
 * stack with one exchange when it next moves its arriving callbacks
 * (Linux batches kfree_rcu() for the same reason). Only the push onto an
 * empty stack calls out, to wake an idle reclaimer. docs/RCU.md, "Batched
 * callbacks".
 * @param item embedded in the object to reclaim; must stay valid until func runs.
 */
static inline void rcu_call_batched(rcu_item_t *item, rcu_func_t func);

/**
 * Frees @a obj to the slab cache @a cache from an RCU callback: as
 * slab_free(cache, obj), but the reclaimer gathers the frees of the callbacks
 * it runs in a row (up to RCU_FREE_BATCH objects of one cache) and hands
 * them to slab_free_bulk() together, before it runs a callback of another
 * function and at the end of the batch; a grace period's thousands of frees
 * then take one magazine section per run instead of one each (Linux's
 * kfree_rcu() batches into kfree_bulk() for the same). Outside a callback
 * the reclaimer runs it is slab_free() (any thread context).
 * Context: RCU callbacks (or thread context); not interrupt handlers.
 */
static inline void rcu_slab_free(struct slab_cache *cache, void *obj);

/** Frees the objects gathered in @a b (rcu_slab_free()) and empties it. */
void rcu_free_batch_flush(rcu_free_batch_t *b);

/**
 * rcu_slab_free() when its batch is full, holds another cache's objects or
 * is absent (not in a callback the reclaimer runs): flushes the batch and
 * starts it with @a obj, or calls slab_free(). Context: as rcu_slab_free().
 */
void rcu_slab_free_slow(struct slab_cache *cache, void *obj);

/**
 * Blocks until a grace period has elapsed: every reader section that existed
 * when it was called has ended. Thread context, not in a reader section (that
 * would deadlock: asserted), may sleep.
 */
void rcu_synchronize(void);
/** Like rcu_synchronize() but asks the detector not to batch (lower latency). */
void rcu_synchronize_expedite(void);
/**
 * Waits until every callback posted (on any CPU) before the call has run.
 * Thread context, may sleep. Posts one marker callback per CPU via smp_call.
 */
void rcu_barrier(void);

/** Number of grace periods completed since boot. Any context. */
uint64_t rcu_completed_gps(void);

/*
 * The accessors of RCU-protected pointers. Such a pointer is declared
 * `T __rcu *` (compiler.h): sparse (`make check`) then reports every read or
 * write of it that does not go through these four, and every dereference of
 * it. For GCC the annotations and the `__force` casts are empty: each
 * accessor compiles to the plain access it names.
 */

/**
 * Publishes @a value through the `__rcu` pointer @a ptr: initialization of
 * the pointed-to object is ordered before the pointer store (release). Any
 * context.
 */
#define rcu_assign(ptr, value) \
	__atomic_store_n(&(ptr), \
	    (__typeof__(*(value)) __force __rcu *) (value), __ATOMIC_RELEASE)
/**
 * Reads the `__rcu` pointer @a ptr once, inside a reader section. @return a
 * plain (kernel) pointer.
 *
 * A relaxed atomic load ordered by the address dependency, as Linux's
 * rcu_dereference() (C11's memory_order_consume, which GCC promotes to
 * acquire: an LDAR on arm64, which cannot pair into an LDP). Every load
 * whose address is computed from the result (`p->field`, `p->next->x`) is
 * ordered after this load by the hardware on both CPUs we build for: amd64
 * keeps all loads in order (TSO) and arm64 orders a load after a load its
 * address depends on (ARMv8 dependency ordering). The release store of
 * rcu_assign() ordered the object's initialization before the pointer, so
 * such a dereference sees the initialized object. The atomic load itself is
 * what keeps the compiler from loading the pointer twice or tearing it.
 *
 * Rules for the callers (what keeps the dependency a dependency):
 * - reach the protected object only through the returned pointer (or values
 *   computed from it: a field, a masked or offset address);
 * - do not compare the pointer with another known pointer and then
 *   dereference that other pointer (or let the compiler do so: after
 *   `if (p == &static_obj)` GCC may use `&static_obj`, with no dependency);
 *   comparing with NULL is fine;
 * - do not turn the pointer into a value the compiler can know (an integer
 *   computation whose result does not depend on it, `p - p`, a table index
 *   after a bounds check that leaves one possible value);
 * - a load that does not depend on the pointer (a flag, a counter, another
 *   global) is not ordered by it: such code needs its own acquire.
 */
#define rcu_access(ptr) \
	((__typeof__(*(ptr)) __force *) __atomic_load_n(&(ptr), __ATOMIC_RELAXED))
/**
 * Walks an RCU-protected singly linked list inside a reader section: sets
 * @a n to each node from the `__rcu` pointer @a head on, following the
 * `__rcu` link field @a pf, with @a w (a variable of @a wf's type) set to
 * the node's 64-bit field @a wf for the body; @a wf must directly follow
 * @a pf (checked at compile time) and must not change while the node is
 * reachable by readers (a key or a value set before rcu_assign() published
 * the node). The link is read as rcu_access() reads it (its rules apply to
 * @a n), the word with a plain load or in the same instruction: where the
 * architecture loads both in one instruction (ARCH_RCU_LOAD_PAIR: arm64's
 * LDP, which GCC never forms from an atomic load) the link and the word of
 * a node are one load, both ordered after the load that produced the node
 * by the address dependency; elsewhere (amd64) the word is read at the top
 * of the body and the link after it, the shape GCC compiles best (the
 * word's load folded into its use, then the link). The body must not
 * change @a n.
 * Defined in synch/rcu_inline.h (it needs the architecture's header).
 * Example: `rcu_for_each_pair(n, list_head, next, value, v) sum += v;`
 */
/**
 * Reads the `__rcu` pointer @a ptr with a plain load, in code that no other
 * updater can race with (it holds the update-side lock, or it is the only
 * updater: a constructor, a destructor, the one resizer). Readers use
 * rcu_access().
 */
#define rcu_access_owned(ptr) ((__typeof__(*(ptr)) __force *) (ptr))
/**
 * Stores @a value into the `__rcu` pointer @a ptr with a plain store, where
 * no reader can see it yet or the order does not matter: before the
 * enclosing object is published, or storing NULL. Otherwise rcu_assign().
 */
#define rcu_init_ptr(ptr, value) \
	((void) ((ptr) = (__typeof__(*(value)) __force __rcu *) (value)))

/**
 * Debug builds (CONFIG_DEBUG): panics with "blocking inside an RCU reader
 * section" if the running thread is inside a reader section. Every operation
 * that may block calls it (the wait queue sleep, on which mutexes, semaphores,
 * condition variables, rwlocks, joins and thread_usleep are built), even when
 * it would not block this time; the scheduler's sleep path checks again (the
 * thread_sleeps hook). Preemption inside an A-RCU reader (a timer preemption,
 * thread_yield) is allowed and not checked. Context: thread, interrupts or
 * preemption disabled (the wait queue calls it with its lock held).
 */
#ifdef CONFIG_DEBUG
#define rcu_assert_may_block() \
	assert_verbose(!rcu_thread_in_reader(THREAD), \
	    "blocking inside an RCU reader section")
#else
#define rcu_assert_may_block() do { } while (0)
#endif

/*
 * RCU CPU stall warnings (after Linux's RCU CPU stall detector): when a grace
 * period has been held up longer than the stall limit (default
 * RCU_STALL_DEFAULT_MS), the detector prints ONE warning for that grace period
 * naming what holds it: each CPU found inside a reader section (with the thread
 * running there) and each reader thread switched out inside its section (name,
 * id, the CPU it last ran on), and how long the grace period has been held.
 * The lines begin with "rcu: INFO: stall". `rcu` shows the limit and the count.
 */

/** Default stall limit in milliseconds. */
#define RCU_STALL_DEFAULT_MS   10000
/** The limit is clamped to [RCU_STALL_MIN_MS, RCU_STALL_MAX_MS]. */
#define RCU_STALL_MIN_MS       10
#define RCU_STALL_MAX_MS       3600000
/** Holders a warning names at most (the rest are counted). */
#define RCU_STALL_MAX_HOLDERS  8
#define RCU_STALL_NAME_MAX     32

/** What one stall warning named (copied out by rcu_stall_last()). */
typedef struct {
	uint64_t gp;          /**< the grace period held up */
	uint64_t held_ms;     /**< how long it had been held at the warning */
	unsigned n;           /**< holders in holder[] */
	unsigned more;        /**< holders found beyond RCU_STALL_MAX_HOLDERS */
	struct {
		uint64_t tid;
		/** The CPU the thread runs on inside its section, or the CPU it last
		 * ran on when it is switched out (running false). */
		int cpu;
		bool running;
		char name[RCU_STALL_NAME_MAX];
	} holder[RCU_STALL_MAX_HOLDERS];
} rcu_stall_info_t;

/**
 * Sets the stall limit to @a ms milliseconds (clamped to [RCU_STALL_MIN_MS,
 * RCU_STALL_MAX_MS]); applies to the checks made from now on, including those
 * of a grace period in progress. Any context.
 * @return the previous limit in milliseconds.
 */
uint64_t rcu_stall_limit_set(uint64_t ms);
/** The stall limit in milliseconds. Any context. */
uint64_t rcu_stall_limit_get(void);
/** Number of stall warnings printed since boot. Any context. */
uint64_t rcu_stall_warnings(void);
/**
 * Copies what the last stall warning named into @a out (all zero before the
 * first warning). The copy is taken before rcu_stall_warnings() counts the
 * warning. Thread or interrupt context.
 */
void rcu_stall_last(rcu_stall_info_t *out);

/** Initializes RCU (BSP, after the scheduler, SMP calls and threads). */
void rcu_init(void);
/** Starts the per-CPU reclaimer threads (and Podzimek's detector). Boot. */
void rcu_start_threads(void);
/**
 * Closes a reader section the current thread left open; RCU's thread_exits
 * scheduler hook (thread_exit()) calls it. Thread context.
 */
void rcu_thread_exiting(void);
/** RCU-wide statistics (the `rcu` command, tests); see rcu_get_stats(). */
typedef struct {
	const char *algorithm;         /**< "a-rcu" or "podzimek-rcu" */
	bool broken;                   /**< FI_RCU_NOWAIT configured (BROKEN=rcu) */
	unsigned detect_sleep_us;      /**< first wait of a normal detection */
	unsigned poll_sleep_us;        /**< A-RCU re-poll of CPUs in readers */
	unsigned expedite_threshold;   /**< arriving callbacks that expedite */
	unsigned critical_threshold;   /**< ...that wake the reclaimer at once */
	uint64_t gps_completed;
	uint64_t gps_started;
	uint64_t gps_expedited;
	uint64_t gps_delayed;          /**< delayed by CPUs in readers */
	uint64_t gps_blocked_preempted;
	uint64_t cross_calls;
	uint64_t stall_limit_ms;
	uint64_t stall_warnings;
	size_t pending_callbacks;
} rcu_stats_t;

/** Callback statistics of one CPU; see rcu_cpu_get_stats(). */
typedef struct {
	uint64_t last_seen_gp;
	uint64_t posted;      /**< callbacks posted on the CPU */
	uint64_t run;         /**< callbacks run by its reclaimer */
	size_t pending;
	size_t max_batch;
	uint64_t batches;
	/** times rcu_call() on the CPU set the shared expedite request */
	uint64_t expedite_reqs;
} rcu_cpu_stats_t;

/**
 * Reads the RCU-wide counters into @a st (each read on its own, relaxed: a
 * racy snapshot). Any context.
 */
void rcu_get_stats(rcu_stats_t *st);
/**
 * Reads the callback counters of CPU @a cpu (< cpu_count) into @a st; the
 * reclaimer's own counters are read without synchronization (statistics).
 * Any context.
 */
void rcu_cpu_get_stats(unsigned cpu, rcu_cpu_stats_t *st);
/** Pending callbacks on all CPUs (racy sum, for tests and statistics; of a
 * long batched stack at most 1,001 until its batch runs: docs/RCU.md). */
size_t rcu_pending_callbacks(void);

/* The inline reader functions of the flavour built in. */
#include <synch/rcu_inline.h>

#endif
