/** @file lockdep.h
 * Lock-dependency validator (build option LOCKDEP, CONFIG_LOCKDEP; on by default
 * in debug builds, `make LOCKDEP=0` turns it off, release builds never have it),
 * in the manner of Linux's lockdep.
 *
 * - Classes: every spinlock (plain or IRQ) whose name is the same string (by
 *   content, not pointer) is one class, as in lock statistics. Locks without a
 *   name are not validated.
 * - Held locks: spinlocks on one stack per CPU, sleeping locks on one stack
 *   per thread (see "Sleeping locks" below). A spinlock holder runs with preemption
 *   disabled and no spinlock is held across a context switch, so a CPU's stack
 *   is at every moment the stack of the thread running on it (a per-thread
 *   stack in effect); locks taken in a hardware interrupt are pushed on the same
 *   stack marked with the interrupt nesting depth, and no dependency is learned
 *   across that boundary (the interrupt checks below cover it).
 * - Graph: acquiring B while A is the newest held lock of the same context adds
 *   the edge A -> B (first sites kept, then a count). On every new edge a
 *   breadth-first search from B looks for A: found, the report names both
 *   chains with their call sites and the kernel panics.
 * - Interrupts: a class taken in a hardware interrupt handler (vector >= 32)
 *   and also taken with interrupts enabled is reported, as is an edge from an
 *   interrupt-taken class (directly or through a chain) to a class taken with
 *   interrupts enabled.
 * - Sleeping: lockdep_might_sleep() (wait queue sleeps, mutexes, RCU
 *   synchronize and barrier) reports every spinlock held.
 * - Sleeping locks: mutex_t (and rwlock_t, whose readers and writers are
 *   validated as one exclusive class: with writer preference a reader waits
 *   for a waiting writer, so a read-read cycle can deadlock too) are classes
 *   in the same graph, named by mutex_initialize_named() and
 *   rwlock_initialize_named(). They are held across sleeps and migrations,
 *   so they live on a per-THREAD stack
 *   (thread_t.lockdep); a spinlock taken in thread context with no spinlock
 *   of that context held learns its edge from the thread's newest sleeping
 *   lock, so the graph has mutex -> mutex and mutex -> spinlock edges and
 *   one cycle search covers both kinds. Semaphores and condition variables
 *   are not classes (a semaphore has no owner: down and up by different
 *   threads is its normal use).
 * - RCU: classes taken inside an RCU callback (lockdep_rcu_cb_enter/exit
 *   around the reclaimer's batch) and spinlocks taken in thread context
 *   inside a reader section are marked; lockdep_rcu_wait() (rcu_synchronize,
 *   rcu_barrier) reports a held class so marked, and a class held across
 *   such a wait that a callback takes later is reported when the callback
 *   takes it. The same for work queues: classes taken in a work item's
 *   function are marked, lockdep_workq_stop() reports a held one.
 *
 * Tables are static (LOCKDEP_MAX_CLASSES, LOCKDEP_MAX_EDGES): nothing is
 * allocated on the lock path; a full table turns the validator off with one
 * message. The internal lock is a raw test-and-set flag taken with interrupts
 * disabled, not a spinlock_t, so it is never validated itself.
 *
 * Report format (the harness matches "LOCKDEP REPORT"): see docs/LOCKING.md.
 */
#ifndef KERN_LOCKDEP_H_
#define KERN_LOCKDEP_H_

#include <typedefs.h>

/** Most classes (distinct lock names). */
#define LOCKDEP_MAX_CLASSES 256
/** Most distinct dependencies (edges). */
#define LOCKDEP_MAX_EDGES 2048
/** Most locks one CPU holds at once (thread and interrupt context together):
 *  pcp_lock_all() holds every CPU's frame cache lock (CONFIG_MAX_CPUS, 64)
 *  and then a zone lock. */
#define LOCKDEP_MAX_HELD 96

/** Most sleeping locks (mutexes, rwlocks) one thread holds at once. */
#define LOCKDEP_MAX_HELD_SLEEP 16

/**
 * The validator's part of a sleeping lock (mutex_t): its class name (NULL:
 * not validated) and the class index + 1 once looked up (a cache written with
 * relaxed atomics by any thread; every writer writes the same value).
 */
typedef struct {
	const char *name;
	unsigned cls;
} lockdep_map_t;

/** One held lock (an entry of a CPU's or a thread's held stack). */
typedef struct {
	const void *lock;
	uintptr_t ip;
	uint16_t cls;
	/** Hardware interrupt depth at acquisition (0: thread or exception). */
	uint8_t ctx;
	bool trylock;
} lockdep_held_t;

/**
 * Per-thread state (thread_t.lockdep): the sleeping locks the thread holds and
 * whether it runs RCU callbacks. Thread-local: read and written only by the
 * thread itself (interrupts disabled inside the validator; interrupt handlers
 * never touch it); zeroed by thread_create().
 */
/** The contexts whose nesting lockdep_thread_t.nest counts. */
typedef enum {
	/** RCU callback context (lockdep_rcu_cb_enter()). */
	LOCKDEP_NEST_RCU_CB,
	/** Work item context (lockdep_work_enter()). */
	LOCKDEP_NEST_WORK,
	LOCKDEP_NEST_COUNT
} lockdep_nest_t;

typedef struct {
	lockdep_held_t held[LOCKDEP_MAX_HELD_SLEEP];
	unsigned depth;
	/** Nesting of each context of lockdep_nest_t. */
	unsigned nest[LOCKDEP_NEST_COUNT];
} lockdep_thread_t;

/** One learned class, copied out by lockdep_snapshot_class(). */
typedef struct {
	const char *name;
	/** Acquisitions seen (relaxed counter, may lag). */
	uint64_t acquisitions;
	/** First site taken in a hardware interrupt (0: never). */
	uintptr_t irq_ip;
	/** First site taken with interrupts enabled (0: never). */
	uintptr_t irq_on_ip;
	/** A sleeping lock (mutex, rwlock) class. */
	bool sleeping;
	/** First site taken inside an RCU callback (0: never). */
	uintptr_t rcu_cb_ip;
	/** First site taken in thread context inside an RCU reader (0: never). */
	uintptr_t rcu_read_ip;
} lockdep_class_info_t;

/** One learned edge "from -> to", copied out by lockdep_snapshot_edge(). */
typedef struct {
	unsigned from;
	unsigned to;
	uint64_t count;
	/** Where @c from was acquired and where @c to was acquired, first time. */
	uintptr_t from_ip;
	uintptr_t to_ip;
} lockdep_edge_info_t;

#ifdef CONFIG_LOCKDEP

struct spinlock;

/**
 * Called by spinlock_lock() before spinning and by a successful trylock
 * (@a trylock true: no edge to it is learned), preemption disabled, for
 * @a lock acquired at return address @a ip. Learns the class, the edge from
 * the newest held lock of the same context and checks it; pushes the lock on
 * this CPU's held stack. Any context; disables interrupts inside; never
 * sleeps. On a violation prints the report and panics (lockdep_panic).
 */
void lockdep_acquire(struct spinlock *lock, uintptr_t ip, bool trylock);
/**
 * lockdep_acquire() validating this acquisition as class @a as (a static
 * string) instead of the lock's name: for an access pattern of a lock whose
 * instances make the class-level order too coarse (see
 * irq_spinlock_lock_as() and docs/LOCKING.md). @a as NULL: the lock's class.
 */
void lockdep_acquire_as(struct spinlock *lock, uintptr_t ip, bool trylock,
    const char *as);
/** Called by spinlock_unlock() before the release: pops @a lock. Any context. */
void lockdep_release(struct spinlock *lock);
/**
 * Reports (then panics, see lockdep_panic) if this CPU holds any validated
 * spinlock other than @a except (NULL: none; the wait queue's own lock, which
 * the sleep releases): for every function that may sleep. @a what names the
 * caller. Thread context, any interrupt state; never sleeps itself.
 */
void lockdep_might_sleep(const char *what, const struct spinlock *except);
/** Hardware interrupt entry/exit on this CPU (interrupt_dispatch). */
void lockdep_hardirq_enter(unsigned vector);
void lockdep_hardirq_exit(unsigned vector);

/**
 * Called by a sleeping lock (mutex_lock) before it may sleep, for @a lock of
 * class @a map acquired at @a ip: learns the edges from the thread's newest
 * held sleeping lock (and the trylocks above it) and checks each for a cycle
 * in the combined graph, and the thread holding @a lock already (recursion).
 * Pushes nothing: lockdep_sleep_acquired() does once the lock is taken, so
 * the lock's own wait queue lock is not learned as taken under it. Thread
 * context; never sleeps. On a violation prints the report and panics.
 */
void lockdep_sleep_acquire(const void *lock, lockdep_map_t *map, uintptr_t ip);
/**
 * Called once @a lock is held (after lockdep_sleep_acquire(), or after a
 * successful trylock, @a trylock true: no edge to it is learned): pushes it
 * on the thread's held stack and marks RCU callback context. Thread context;
 * never sleeps.
 */
void lockdep_sleep_acquired(const void *lock, lockdep_map_t *map, uintptr_t ip,
    bool trylock);
/** Called by a sleeping lock's release: pops @a lock from the thread's stack. */
void lockdep_sleep_release(const void *lock, lockdep_map_t *map);
/**
 * For rcu_synchronize() and rcu_barrier() (@a what), called from @a ip:
 * reports a held lock whose class an RCU callback or (spinlocks) a reader
 * section takes, naming the lock, where the callback or reader took it,
 * where the caller took it and @a ip; remembers each held class so a
 * callback taking it later is reported then; finally lockdep_might_sleep().
 * Thread context; never sleeps itself. Panics on a report (lockdep_panic).
 */
void lockdep_rcu_wait(const char *what, uintptr_t ip);
/**
 * Brackets the RCU reclaimer's invocation of callbacks (thread context):
 * every class acquired in between is marked as taken by an RCU callback.
 */
void lockdep_rcu_cb_enter(void);
void lockdep_rcu_cb_exit(void);
/**
 * Brackets a work queue worker's call of an item's function (thread
 * context): every class acquired in between is marked as taken by a work
 * item (of any queue: the mark is per class, so the check is conservative).
 */
void lockdep_work_enter(void);
void lockdep_work_exit(void);
/**
 * For workq_stop(), called from @a ip: reports a held sleeping lock whose
 * class a work item takes (the stop waits for the items, an item for the
 * caller). Thread context; never sleeps. Panics on a report (lockdep_panic).
 */
void lockdep_workq_stop(uintptr_t ip);

#else

struct spinlock;
static inline void lockdep_might_sleep(const char *what,
    const struct spinlock *except)
{
	(void) what;
	(void) except;
}
static inline void lockdep_hardirq_enter(unsigned vector)
{
	(void) vector;
}
static inline void lockdep_hardirq_exit(unsigned vector)
{
	(void) vector;
}
static inline void lockdep_rcu_wait(const char *what, uintptr_t ip)
{
	(void) what;
	(void) ip;
}
static inline void lockdep_rcu_cb_enter(void)
{
}
static inline void lockdep_rcu_cb_exit(void)
{
}
static inline void lockdep_work_enter(void)
{
}
static inline void lockdep_work_exit(void)
{
}
static inline void lockdep_workq_stop(uintptr_t ip)
{
	(void) ip;
}

#endif

/** True when the kernel was built with CONFIG_LOCKDEP. */
bool lockdep_enabled(void);
/** True while validating (false once a table filled up or after a report). */
bool lockdep_active(void);
/** Number of classes / edges learned so far. Any context. */
size_t lockdep_class_count(void);
size_t lockdep_edge_count(void);
/** Copies class / edge @a i (index < count) into @a out; false if out of range. */
bool lockdep_snapshot_class(size_t i, lockdep_class_info_t *out);
bool lockdep_snapshot_edge(size_t i, lockdep_edge_info_t *out);
/** Reports found so far (each is followed by a panic unless lockdep_panic is false). */
size_t lockdep_report_count(void);
/**
 * Whether a report ends in a panic (default true: debug builds are test
 * builds). When false, the validator prints the report and turns itself off.
 */
extern bool lockdep_panic;

#endif
