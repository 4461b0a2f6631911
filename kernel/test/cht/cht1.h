/** @file cht1.h
 * What the two files of the kernel test `cht` share: cht1.c (the file
 * comment describing the test, the table and its items, the sanity
 * environment, the stress driver and the verdict) and cht1_workers.c (the
 * stress run's worker and resizer threads). Tests run one at a time, so the
 * shared state below is the running test's.
 */
#ifndef KERN_TEST_CHT_CHT1_H_
#define KERN_TEST_CHT_CHT1_H_

#include <test.h>
#include <testlib.h>
#include "cht_sanity.h"
#include <lib/str.h>
#include <adt/cht.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>

#define CHT1_MIN_WORKERS  4
#define CHT1_KEYS         64
#define CHT1_DUPS         4
/** Operations per worker: at least CHT1_OPS, more while resizers run. */
#define CHT1_OPS          20000
#define CHT1_OPS_MAX      (50 * CHT1_OPS)
/** Work time between two rests of a worker (one timer tick, see stress()). */
#define CHT1_REST_US      30000
#define CHT1_RESIZERS     2
#define CHT1_WAVES        6
#define CHT1_WAVE         2048
/** First key of the resizers' ranges (one range of 2^20 keys per resizer). */
#define CHT1_RES_KEY      (1UL << 32)
#define CHT1_MAGIC        0xC4711717u
#define CHT1_DEAD         0xDEADC471u
/**
 * Worker operations that must have started while a resize was pending (the
 * race the stress exists for).
 */
#define CHT1_MIN_DURING   10000
/** Table parameters: small and low so that resizes are frequent. */
#define CHT1_INIT_SIZE    16
#define CHT1_MAX_LOAD     4
/** Bounded waits (no verdict; TCG on 2 host cores is slow). */
#define CHT1_RESIZE_WAIT_US  (20 * 1000 * 1000UL)
#define CHT1_SETTLE_MAX_US   (10 * 1000 * 1000UL)
/** A resize pending this long after the run is stuck (a failure). */
#define CHT1_STUCK_US        (120 * 1000 * 1000UL)

enum {
	ST_FRESH = 1,    /**< Allocated, not (yet) in the table. */
	ST_IN,           /**< Inserted, not removed. */
	ST_REMOVED,      /**< Removed by its owner; the callback is due. */
};

typedef struct {
	/** First word: slab debug poisoning skips it (free list link). */
	uint64_t word0;
	cht_link_t link;
	uint64_t key;
	uint32_t magic;
	uint32_t owner;
	/** ST_*; written by the owner, read by the remove callback. Atomics. */
	uint32_t state;
	/** Remove callbacks so far. Atomics. */
	uint32_t cbs;
} cht1_item_t;

typedef struct {
	unsigned n;
	cht1_item_t *it[CHT1_DUPS];
} cht1_slot_t;

enum {
	OP_FIND, OP_INSERT, OP_UNIQUE, OP_RMKEY, OP_RMITEM, OP_ABSENT, OP_COUNT
};

typedef struct {
	unsigned index;
	uint64_t seed;
	cht1_slot_t slot[CHT1_KEYS];
	/** Statistics of the worker; read by the main thread after the join. */
	uint64_t ops[OP_COUNT];
	uint64_t dup_refused;
	uint64_t max_run;
	/** Operations that started while a resize was pending. */
	uint64_t during_resize;
} cht1_worker_t;

typedef struct {
	unsigned index;
	cht1_item_t *items[CHT1_WAVE];
	size_t max_buckets;
	size_t min_buckets;
	/** Bucket count it saw last (after its last let_resize()). */
	size_t last_buckets;
	/** Doublings / halvings between its consecutive observations: lower
	 * bounds of the table's grows and shrinks. */
	uint64_t rises;
	uint64_t drops;
	/** Waves after which the table had not grown to hold the wave (no
	 * resize pending). */
	unsigned small_waves;
	/** Waves after which a resize was still pending at the end of the
	 * bounded wait (not judged; printed). */
	unsigned pending_waves;
} cht1_resizer_t;

static inline cht1_item_t *item_of(const cht_link_t *l)
{
	return container_of(l, cht1_item_t, link);
}

static inline uint32_t state_get(cht1_item_t *it)
{
	return __atomic_load_n(&it->state, __ATOMIC_ACQUIRE);
}

static inline void state_set(cht1_item_t *it, uint32_t st)
{
	__atomic_store_n(&it->state, st, __ATOMIC_RELEASE);
}

/* Shared state (defined in cht1.c; comments there). */
extern unsigned cht1_nworkers;
extern atomic_t cht1_removed_cnt;
extern cht1_resizer_t cht1_resizers[CHT1_RESIZERS];
extern atomic_t cht1_resizers_running;
extern cht_t *cht1_table;
extern cht1_worker_t cht1_workers[CONFIG_MAX_CPUS + CHT1_MIN_WORKERS];

/* Functions the two files call across. */
bool cht1_aborted(void);
void cht1_error(const char *msg, uint64_t key, uint64_t a, uint64_t b);
cht1_item_t *cht1_find(cht_t *h, uint64_t key);
cht1_item_t *cht1_item_alloc(uint64_t key, unsigned owner);
void cht1_item_free_unused(cht1_item_t *it);
const char *cht1_stress(void);
void cht1_op_find(cht1_worker_t *w, unsigned k, bool use_equal);
void cht1_op_rmkey(cht1_worker_t *w, unsigned k);
void cht1_resizer_thread(void *arg);
bool cht1_wait_resized(uint64_t max_us);
void cht1_worker_thread(void *arg);

#endif
