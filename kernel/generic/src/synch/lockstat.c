/** @file lockstat.c
 * Lock statistics per lock class (see synch/lockstat.h).
 *
 * A class is the name pointer a lock was initialized with. Classes are
 * registered on first acquisition into class_name[] by compare-and-swap and
 * the index is cached in the lock (spinlock_t.lockstat_class, written by the
 * holder). The counts live in per-CPU rows so that CPUs taking different
 * locks write no shared line; lockstat_snapshot() sums the rows.
 */
#include <synch/lockstat.h>
#include <synch/spinlock.h>
#include <cpu.h>

#ifdef CONFIG_LOCK_STAT

/** One class's counts on one CPU. Written only by its CPU (preemption
 *  disabled) with relaxed atomics, because an interrupt handler on the same
 *  CPU may add to the same row between a load and a store; read by
 *  lockstat_snapshot() on any CPU with relaxed loads. */
typedef struct {
	uint64_t acquisitions;
	uint64_t contended;
	uint64_t wait_cycles;
	uint64_t hold_cycles;
	uint64_t max_hold_cycles;
} lockstat_counts_t;

typedef struct {
	lockstat_counts_t cls[LOCKSTAT_CLASSES];
} __attribute__((aligned(64))) lockstat_cpu_t;

static lockstat_cpu_t rows[CONFIG_MAX_CPUS];

/**
 * Class names by index; the last slot is LOCKSTAT_OTHER. Atomics: a slot goes
 * once from NULL to a name by compare-and-swap (acquire/release, so the
 * string is visible with the pointer) and never changes again.
 */
static const char *class_name[LOCKSTAT_CLASSES];

#define OTHER_IDX (LOCKSTAT_CLASSES - 1)

static unsigned class_of_name(const char *name)
{
	if (!name)
		return OTHER_IDX;
	uint64_t h = ((uint64_t) (uintptr_t) name >> 3) * 0x9E3779B97F4A7C15ULL;
	unsigned start = (unsigned) (h >> 58) % OTHER_IDX;
	for (unsigned i = 0; i < OTHER_IDX; i++) {
		unsigned idx = (start + i) % OTHER_IDX;
		const char *cur = __atomic_load_n(&class_name[idx],
		    __ATOMIC_ACQUIRE);
		if (cur == name)
			return idx;
		if (cur)
			continue;
		const char *expected = NULL;
		if (__atomic_compare_exchange_n(&class_name[idx], &expected, name,
		    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || expected == name)
			return idx;
	}
	return OTHER_IDX;
}

static inline lockstat_counts_t *counts_of(spinlock_t *lock)
{
	/* The holder caches the class in the lock (index + 1; 0 unknown). */
	if (!lock->lockstat_class)
		lock->lockstat_class = class_of_name(lock->name) + 1;
	return &rows[CPU->id].cls[lock->lockstat_class - 1];
}

void lockstat_acquired(spinlock_t *lock, uint64_t t0, uint64_t t1,
    bool contended)
{
	lockstat_counts_t *c = counts_of(lock);
	__atomic_fetch_add(&c->acquisitions, 1, __ATOMIC_RELAXED);
	if (contended) {
		__atomic_fetch_add(&c->contended, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->wait_cycles, t1 - t0, __ATOMIC_RELAXED);
	}
	lock->acquired_at = t1;
}

void lockstat_released(spinlock_t *lock, uint64_t t1)
{
	lockstat_counts_t *c = counts_of(lock);
	uint64_t held = t1 - lock->acquired_at;
	__atomic_fetch_add(&c->hold_cycles, held, __ATOMIC_RELAXED);
	/* A maximum raced by an interrupt on this CPU may be lost; counts are not. */
	if (held > __atomic_load_n(&c->max_hold_cycles, __ATOMIC_RELAXED))
		__atomic_store_n(&c->max_hold_cycles, held, __ATOMIC_RELAXED);
}

bool lockstat_enabled(void)
{
	return true;
}

size_t lockstat_snapshot(lockstat_class_t *out, size_t max)
{
	size_t n = 0;
	for (unsigned idx = 0; idx < LOCKSTAT_CLASSES && n < max; idx++) {
		const char *name = idx == OTHER_IDX ? LOCKSTAT_OTHER :
		    __atomic_load_n(&class_name[idx], __ATOMIC_ACQUIRE);
		if (!name)
			continue;
		lockstat_class_t s = { .name = name };
		for (unsigned cpu = 0; cpu < CONFIG_MAX_CPUS; cpu++) {
			lockstat_counts_t *c = &rows[cpu].cls[idx];
			s.acquisitions += __atomic_load_n(&c->acquisitions,
			    __ATOMIC_RELAXED);
			s.contended += __atomic_load_n(&c->contended,
			    __ATOMIC_RELAXED);
			s.wait_cycles += __atomic_load_n(&c->wait_cycles,
			    __ATOMIC_RELAXED);
			s.hold_cycles += __atomic_load_n(&c->hold_cycles,
			    __ATOMIC_RELAXED);
			uint64_t m = __atomic_load_n(&c->max_hold_cycles,
			    __ATOMIC_RELAXED);
			if (m > s.max_hold_cycles)
				s.max_hold_cycles = m;
		}
		if (s.acquisitions)
			out[n++] = s;
	}
	return n;
}

void lockstat_reset(void)
{
	for (unsigned cpu = 0; cpu < CONFIG_MAX_CPUS; cpu++) {
		for (unsigned idx = 0; idx < LOCKSTAT_CLASSES; idx++) {
			lockstat_counts_t *c = &rows[cpu].cls[idx];
			__atomic_store_n(&c->acquisitions, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->contended, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->wait_cycles, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->hold_cycles, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&c->max_hold_cycles, 0, __ATOMIC_RELAXED);
		}
	}
}

#else /* !CONFIG_LOCK_STAT */

bool lockstat_enabled(void)
{
	return false;
}

size_t lockstat_snapshot(lockstat_class_t *out, size_t max)
{
	(void) out;
	(void) max;
	return 0;
}

void lockstat_reset(void)
{
}

#endif
