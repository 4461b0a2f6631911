/** @file lockstat.h
 * Lock statistics (build option LOCK_STAT=1, CONFIG_LOCK_STAT): for every
 * class of spinlock (the locks that share one name, such as every address
 * space's "as.pt"), how often it was taken, how often the taker had to spin,
 * the time spent spinning and the time it was held, in cycle-counter ticks, in the
 * manner of Linux's lock_stat (/proc/lock_stat).
 *
 * Under QEMU's `-icount shift=0` the cycle counter (cycle_count(), the
 * architecture's; CYCLE_COUNT_UNIT names it) counts guest instructions, so the
 * hold times become exact instruction counts: the fraction of an operation
 * spent under a lock is the serial fraction that bounds its scaling
 * (Amdahl). The `lockstat` command prints and resets the table.
 *
 * Without CONFIG_LOCK_STAT nothing is recorded and spinlocks carry no extra
 * field or instruction; lockstat_enabled() is false.
 */
#ifndef KERN_LOCKSTAT_H_
#define KERN_LOCKSTAT_H_

#include <typedefs.h>

/** Most lock classes recorded; later names are summed into LOCKSTAT_OTHER. */
#define LOCKSTAT_CLASSES 64

/** Class name of the locks that did not fit (or had no name). */
#define LOCKSTAT_OTHER "(other)"

/** Totals of one lock class, summed over CPUs by lockstat_snapshot(). */
typedef struct {
	/** The class's name (a static string, the locks' name). */
	const char *name;
	/** Acquisitions, by spinlock_lock() or a successful trylock. */
	uint64_t acquisitions;
	/** Acquisitions that found the lock held and spun. */
	uint64_t contended;
	/** Cycle-counter ticks from the first attempt to holding the lock, summed. */
	uint64_t wait_cycles;
	/** Cycle-counter ticks from acquisition to release, summed. */
	uint64_t hold_cycles;
	/** Longest single hold, in cycle-counter ticks. */
	uint64_t max_hold_cycles;
} lockstat_class_t;

/** True when the kernel was built with CONFIG_LOCK_STAT. */
bool lockstat_enabled(void);

/**
 * Copies the totals of up to @a max classes into @a out (order of first use).
 * Any context; the counts of a CPU that is taking locks meanwhile may be a few
 * operations behind.
 * @return the number of classes written.
 */
size_t lockstat_snapshot(lockstat_class_t *out, size_t max);

/**
 * Zeroes every count (the class names stay). Thread context; a count being
 * added on another CPU at the same moment may survive the reset.
 */
void lockstat_reset(void);

#ifdef CONFIG_LOCK_STAT
struct spinlock;
/**
 * Records an acquisition of @a lock that began at cycle count @a t0 and completed at
 * @a t1, after spinning when @a contended. Called by the spinlock code with the
 * lock held and preemption disabled.
 */
void lockstat_acquired(struct spinlock *lock, uint64_t t0, uint64_t t1,
    bool contended);
/**
 * Records the hold of @a lock ending at cycle count @a t1. Called by the spinlock code
 * just before the release, with preemption disabled.
 */
void lockstat_released(struct spinlock *lock, uint64_t t1);
#endif

#endif
