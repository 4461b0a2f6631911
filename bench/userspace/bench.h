/** @file bench.h
 * Userspace peer benchmark: the interface every table adapter implements,
 * and what all of them share (the one 64-bit mixing hash, allocation).
 *
 * One adapter = one table library in one configuration ("impl"). Every
 * operation call is one function-pointer call from the harness (the same
 * overhead for every impl); inside it the adapter does what a user of that
 * library would write: enter the read-side section of its reclamation scheme,
 * call the library, read the value, leave the section.
 */
#ifndef BENCH_H_
#define BENCH_H_

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <adt/cht_mix.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The one 64-bit mixing hash every table uses: the CHT's own cht_mix_hash()
 * (multiplicative hashing, common/include/adt/cht_mix.h). libcht
 * applies it itself to the raw key, so its adapter hands the raw key over;
 * every other adapter calls bench_mix() once.
 */
static inline uint64_t bench_mix(uint64_t h)
{
	return cht_mix_hash(h);
}

/** The object the pointer variants of inline tables store and dereference. */
typedef struct {
	uint64_t key;
	uint64_t value;
} bench_obj_t;

typedef struct bench_impl {
	const char *name;     /**< e.g. "cht", "lfht-memb-presized" */
	const char *library;  /**< e.g. "libcht", "liburcu cds_lfht (memb)" */
	const char *layout;   /**< "node" (intrusive/chained), "inline", "ptr" */
	bool presized;        /**< sized for the key count, resizing off */
	/**
	 * Creates a table for about @a expect keys (presized impls size for
	 * it at load <= 1 and never resize; auto impls start at @a initial
	 * buckets, 0 = the library's default, and resize themselves).
	 */
	void *(*create)(size_t expect, size_t initial);
	/** Frees the table and whatever it still holds (single-threaded). */
	void (*destroy)(void *t);
	/** Called by every thread before/after it uses tables. */
	void (*thread_init)(void);
	void (*thread_fini)(void);
	/** A point where the thread holds no references (QSBR), or NULL. */
	void (*quiescent)(void);
	/** Around waits of a registered thread (QSBR offline/online), or NULL. */
	void (*offline)(void);
	void (*online)(void);
	/** Lookup: 1 and *val on a hit, 0 on a miss. */
	int (*lookup)(void *t, uint64_t key, uint64_t *val);
	/** Insert unless present: 1 inserted, 0 present. */
	int (*insert)(void *t, uint64_t key, uint64_t val);
	/** Remove: 1 removed, 0 absent. */
	int (*remove)(void *t, uint64_t key);
	/** Replace the value of a present key: 1 done, 0 absent. */
	int (*update)(void *t, uint64_t key, uint64_t val);
	/** Bucket (or slot) count, -1 if the library does not say. */
	long (*buckets)(void *t);
	/**
	 * Items above which the table asks for its next grow, from the
	 * library's own figures (its load limit times its bucket count now),
	 * or NULL when the library does not say. bench-big's crossing places
	 * its window there (big.c, phase_crossing()).
	 */
	long (*grow_at)(void *t);
	/** Resize to @a buckets now (Triplett experiment), or NULL. */
	int (*resize)(void *t, size_t buckets);
	/**
	 * Grows to at least @a buckets now, on the calling thread, beside
	 * other operations (a table that only grows: the managed inline map's
	 * cht_map_u64_reserve()), or NULL. bench-big's resize phase uses it
	 * when resize is NULL: lookups while a thread grows the table.
	 */
	int (*grow)(void *t, size_t buckets);
	/** Waits until background resizes and reclamation are done. */
	void (*settle)(void *t);
	/**
	 * Peak bytes per key while growing to N 8-byte keys and values (every
	 * overhead: items, bucket arrays, the old array during a resize), for
	 * bench-big's memory check (big.c, run_big.py); 0 = unknown (100 is
	 * assumed). A measured figure with some headroom, not a promise: the
	 * QUICK run's RSS per key at 2^21 keys times its peak/final, x 1.25.
	 */
	double est_bytes_per_key;
	/**
	 * resize(t, b) leaves buckets() == b << resize_shift (libcuckoo's
	 * adapter takes a slot-ish count: 1); 0 for every other table.
	 */
	int resize_shift;
	/**
	 * remove() is only safe without concurrent operations (TBB's
	 * concurrent_unordered_map::unsafe_erase): bench-big's churn skips the
	 * table and its soak only replaces values.
	 */
	bool no_concurrent_remove;
} bench_impl_t;

/** Every impl, NULL-terminated (harness.c): the adapters declared below,
 *  then every impl registered with BENCH_REGISTER() (bench_registered()).
 *  Filled at the start of main(). */
extern const bench_impl_t *const *const bench_impls_all;

/**
 * Registers an adapter without touching any other file: a file
 * impl_NAME.c (or .cc) in bench/userspace/ that defines its bench_impl_t and
 * says BENCH_REGISTER(var) is built (the Makefile takes every impl_*.c),
 * linked and listed by `bench_us list`, and `make -C uspace bench-big` runs
 * it (run_big.py takes the tables from that list). The pointers go into the
 * section bench_impls, which the linker brackets with __start_/__stop_.
 */
#define BENCH_REGISTER(var) \
	static const bench_impl_t *const bench_reg_##var \
	    __attribute__((used, section("bench_impls"))) = &var

/** The impls registered with BENCH_REGISTER(), @a n set to their count. */
const bench_impl_t *const *bench_registered(size_t *n);

/** `bench_us big ...` (big.c): the Big-Memory workloads. */
int bench_big_main(int argc, char **argv, const bench_impl_t *impl);

/* Adapters (one file per library). */
extern const bench_impl_t impl_cht, impl_cht_presized, impl_cht_presized_a64;
extern const bench_impl_t impl_lfht_memb, impl_lfht_memb_presized;
extern const bench_impl_t impl_lfht_qsbr, impl_lfht_qsbr_presized;
extern const bench_impl_t impl_cuckoo, impl_cuckoo_ptr;
extern const bench_impl_t impl_ckhs, impl_ckhs_ptr;
extern const bench_impl_t impl_ckht, impl_ckht_ptr;
extern const bench_impl_t impl_rwlock, impl_rwlock_presized;
extern const bench_impl_t impl_chtmap_u64, impl_chtmap_u64_presized,
    impl_chtmap_u64_chained, impl_chtmap_u64_chained_presized, impl_chtmap;
extern const bench_impl_t impl_ideal;

/** Smallest power of two >= n (>= 1). */
static inline size_t bench_pow2(size_t n)
{
	size_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

/**
 * The progress watchdog (harness.c): a phase calls bench_progress_begin(),
 * its threads count completed operations with bench_progress_add(), and
 * bench_progress_end() closes it. The phase is reported stalled (a CSV row
 * "...,stalled,SECS", exit 3) when nothing completed for BENCH_STALL_IDLE
 * seconds in which the process did not wait for a CPU longer than it ran,
 * or a BENCH_STALL_WINDOW-second window ran below 1/BENCH_STALL_SLOWDOWN of
 * the phase's best rate (over any such window or any single second that
 * held BENCH_STALL_SECOND_CPU) or below BENCH_STALL_FLOOR operations per
 * second of the CPU time the process received in it. Rates count the CPU
 * of the seconds that made progress, and only windows that made progress
 * in at least half their seconds are judged by them: a pause (a
 * stop-the-world rehash) is the idle rule's.
 */
#define BENCH_STALL_IDLE 120
#define BENCH_STALL_WINDOW 30
/** The environment variable that shortens the window for tests: 2 to
 *  BENCH_STALL_WINDOW seconds (anything else: BENCH_STALL_WINDOW). */
#define BENCH_STALL_WINDOW_ENV "BENCH_STALL_WINDOW"
#define BENCH_STALL_SLOWDOWN 50
/** ... or below this many operations per CPU second over such a window (a
 *  table that takes over 500 us of CPU per operation has lost its
 *  resizes). */
#define BENCH_STALL_FLOOR 2000
/** ... judged once a window holds this many CPU seconds of the process. */
#define BENCH_STALL_MIN_CPU 1.0
/** A single second counts towards the phase's best rate when the process
 *  ran this many CPU seconds in it. */
#define BENCH_STALL_SECOND_CPU 0.5

/** The watchdog's state over one phase (harness.c). */
typedef struct {
	long tick;                 /* seconds of the phase */
	int idle;                  /* seconds without progress, not starved */
	uint64_t last;             /* progress at the last second */
	double cpu;                /* CPU seconds of the process in the phase's
	                              seconds that made progress */
	int active_n;              /* the phase's seconds that made progress */
	int window;                /* the window, seconds */
	double best;               /* the best rate, ops per CPU second */
	uint64_t hist[BENCH_STALL_WINDOW + 1];
	double hist_cpu[BENCH_STALL_WINDOW + 1];
	int hist_active[BENCH_STALL_WINDOW + 1];
} bench_stall_t;

/** Starts a phase's watchdog state at @a progress operations. */
void bench_stall_reset(bench_stall_t *s, uint64_t progress);
/**
 * One second of the phase: @a progress operations so far, the process ran
 * @a run and waited runnable @a wait CPU seconds in it. Returns true (the
 * reason in @a why, @a len bytes) when the phase is stalled.
 */
bool bench_stall_tick(bench_stall_t *s, uint64_t progress, double run,
    double wait, char *why, size_t len);
extern uint64_t bench_progress;
void bench_progress_begin(const char *kind, const char *what, size_t keys,
    int threads);
void bench_progress_end(void);

/** Counts @a n completed operations (relaxed: a statistic only). */
static inline void bench_progress_add(uint64_t n)
{
	__atomic_fetch_add(&bench_progress, n, __ATOMIC_RELAXED);
}

/** Sleeps @a us microseconds. */
void bench_sleep_us(long us);

/** TSC ticks per nanosecond, measured over a sleep of @a us microseconds. */
double bench_tsc_per_ns(long us);

/**
 * The allocator's figure, the same for every table: the bytes glibc's malloc
 * has handed out (mallinfo2: in use plus its mmapped chunks) plus the
 * resident part of the writable anonymous memory the libraries mapped
 * themselves (bench_mapped_bytes(): tbbmalloc, libcht's map segments).
 */
size_t bench_heap_bytes(void);
/** Resident bytes of the writable anonymous memory mapped outside malloc
 *  (mapcount.c: mincore() over the recorded mappings). */
size_t bench_mapped_bytes(void);
/** The same mappings' whole size, resident or not. */
size_t bench_mapped_virtual_bytes(void);
/**
 * @a len bytes of zeroed anonymous memory (MAP_NORESERVE) for the harness's
 * own buffers, left out of bench_mapped_bytes(); never unmapped. Aborts when
 * the kernel refuses.
 */
void *bench_map_own(size_t len);

/**
 * 64-byte items on 64-byte boundaries, for the adapters of the documented
 * item layout (the `-a64` tables: node, key and value in one cache line).
 * Carved from 2 MiB aligned slabs; a free list per thread, and a shared one
 * (a mutex) for the frees of other threads (the RCU callback threads), taken
 * whole by the next allocation that finds its own list empty. Memory is never
 * returned to the system (a benchmark's process). glibc's aligned_alloc()
 * would do, but it splits a larger chunk at every call: about 13 more
 * last-level misses per insert in `bench_us misses` (bench/RESULTS.md).
 * Any thread.
 */
void *bench_line_alloc(void);
/** Frees an item of bench_line_alloc(). Any thread. */
void bench_line_free(void *p);

/** The process's resident set in bytes (/proc/self/statm; 0 if unreadable). */
size_t bench_rss_bytes(void);

/**
 * A worker's start of its timed phase: waits at @a bar with all the others,
 * offline for @a impl's RCU around the wait (QSBR
 * flavours must not hold grace periods up while blocked).
 */
void bench_thread_go(const bench_impl_t *impl, pthread_barrier_t *bar);

#ifdef __cplusplus
}
#endif

#endif
