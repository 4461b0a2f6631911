/** @file lockdep.h
 * Lock-dependency validator (build option LOCKDEP, CONFIG_LOCKDEP; on by default
 * in debug builds, `make LOCKDEP=0` turns it off, release builds never have it),
 * in the manner of Linux's lockdep.
 *
 * - Classes: every spinlock (plain or IRQ) whose name is the same string (by
 *   content, not pointer) is one class, as in lock statistics. Locks without a
 *   name are not validated.
 * - Held locks: one stack per CPU. A spinlock holder runs with preemption
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

/** One learned class, copied out by lockdep_snapshot_class(). */
typedef struct {
	const char *name;
	/** Acquisitions seen (relaxed counter, may lag). */
	uint64_t acquisitions;
	/** First site taken in a hardware interrupt (0: never). */
	uintptr_t irq_ip;
	/** First site taken with interrupts enabled (0: never). */
	uintptr_t irq_on_ip;
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
