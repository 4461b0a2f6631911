/** @file cht_map_int.h
 * Internal interface of libcht's managed maps: the allocator (cht_alloc.c)
 * used by the byte-string and u64 maps (cht_map.c) and by the inline backend
 * of cht_map_u64_t (cht_imap.c), and that backend's entry points. Not
 * installed; the symbols are local to libcht.so (libcht.map).
 */
#ifndef CHT_MAP_INT_H_
#define CHT_MAP_INT_H_

#include <stddef.h>
#include <stdint.h>

/*
 * --- per-phase cycle counts (bench-only: compiled in with -DCHT_IM_PROF) ---
 *
 * bench/userspace/growprof.c builds the library's sources with CHT_IM_PROF
 * to attribute each slow insert of the inline map to what it was doing. The
 * production build (uspace/Makefile) never defines it: the macros are empty.
 */
#ifdef CHT_IM_PROF
enum {
	CHT_IMP_SPLIT,      /* cht__im_pay(): one split (and its segment) */
	CHT_IMP_SEG,        /* cht__im_seg_ensure(): a new segment mapped */
	CHT_IMP_ALLOC,      /* cht__ma_alloc64() */
	CHT_IMP_REFILL,     /* tc_refill(): a chain from the depot */
	CHT_IMP_SLAB,       /* tc_refill(): a new slab carved */
	CHT_IMP_RCU_CALL,   /* cht__ma_flush_retired(): a batch to the RCU */
	CHT_IMP_LOCKWAIT,   /* im_lock(): a bucket lock found taken */
	CHT_IMP_N
};
typedef struct {
	uint64_t n[CHT_IMP_N];
	uint64_t tsc[CHT_IMP_N];
} cht_im_prof_t;
/** The calling thread's counts (owner only). */
extern __thread cht_im_prof_t cht__im_prof;
/** Background reclaims started and their cycles (any thread; relaxed). */
extern uint64_t cht__im_prof_reclaims, cht__im_prof_reclaim_tsc;
#define CHT_IMP_BEGIN(v) uint64_t v = __builtin_ia32_rdtsc()
#define CHT_IMP_END(v, k) do { \
		cht__im_prof.n[k]++; \
		cht__im_prof.tsc[k] += __builtin_ia32_rdtsc() - (v); \
	} while (0)
#else
#define CHT_IMP_BEGIN(v) do { } while (0)
#define CHT_IMP_END(v, k) do { } while (0)
#endif

/* --- the allocator (cht_alloc.c) --- */

/** The size class of 64-byte, 64-byte-aligned objects (one cache line). */
#define CHT__MA_CLS64 3
/** Class of an object too large for the classes (from aligned_alloc()). */
#define CHT__MA_CLS_LARGE 0xff

/**
 * An object of at least @a size bytes, its class into *@a cls (what
 * cht__ma_free() and cht__ma_retire() take back); CHT__MA_CLS_LARGE for a
 * large one or when the thread has no cache. NULL when out of memory.
 * Any thread; no lock held by the caller is needed.
 */
void *cht__ma_alloc(size_t size, uint8_t *cls);
/**
 * Frees object @a p of class @a cls (@a size: the size it was allocated
 * with) now: no reader may hold it. May ask for a background reclaim.
 */
void cht__ma_free(void *p, uint8_t cls, size_t size);
/**
 * Frees object @a p (as cht__ma_free()) after a grace period: into the
 * calling thread's retire batch, one cht_rcu_call() per
 * CHT_MAP_RETIRE_BATCH objects. Aborts if a batch cannot be allocated.
 */
void cht__ma_retire(void *p, uint8_t cls, size_t size);
/** Posts the calling thread's open retire batch (if not empty) to the RCU. */
void cht__ma_flush_retired(void);
/**
 * Waits for a callback on the RCU reclaimer thread that passes that
 * thread's cache to the depot (after the callbacks posted before it).
 * Not inside a reader section.
 */
void cht__ma_flush_reclaimer(void);
/**
 * Returns every wholly free slab to the system now (waits for a running
 * reclaim). Not inside a reader section.
 */
void cht__ma_reclaim(void);
/**
 * Background reclaims (the worker's, not a destroy's) that took the depot
 * since the process started: statistics for the tests.
 */
uint64_t cht__ma_bg_reclaims(void);
/** Reclaims the idle decay ran that took the depot (RECLAIM_DECAY_MS in
 * cht_alloc.c; statistics, relaxed). */
uint64_t cht__ma_decay_reclaims(void);
/** Bytes handed out by the allocator to every map of the process. */
size_t cht__ma_in_use(void);
/** The class of an object of @a size bytes (CHT__MA_CLS_LARGE: none). */
unsigned cht__ma_cls_of(size_t size);
/** Bytes of an object of class @a cls (0 for no such class). */
size_t cht__ma_cls_size(unsigned cls);

/** A 64-byte, 64-byte-aligned object from the allocator (class 64), or NULL. */
void *cht__ma_alloc64(void);
/** Frees an object of cht__ma_alloc64() now (no reader may hold it). */
void cht__ma_free64(void *p);
/**
 * Frees an object of cht__ma_alloc64() after a grace period (into the calling
 * thread's batch of lines: one cht_rcu_call() per 4096; cht_retire.c).
 */
void cht__ma_retire64(void *p);
/**
 * Waits until every retired object is freed, then returns the wholly free
 * slabs to the system (what cht_map_*_destroy() do after their frees).
 * Not inside a reader section.
 */
void cht__ma_settle(void);
/**
 * Bytes the allocator holds from the system (cht_map_stats_t.reserved_bytes),
 * the slab reserve's included.
 */
size_t cht__ma_reserved(void);
/** Slabs in the allocator's list now (relaxed read: a figure, no lock). */
size_t cht__ma_nslabs(void);

/* The slab reserve (cht_spare.c). */
/** Bytes of a slab of the classes up to 1 KiB, and of a spare. */
#define CHT__MA_SLAB_BYTES ((size_t) 64 * 1024)
/**
 * A block of CHT__MA_SLAB_BYTES, 64-byte aligned and faulted in, from the
 * reserve, or NULL when it is empty (the caller allocates one itself).
 * Asks the library's worker to fill the reserve up to its bound for
 * @a nslabs slabs in the list (the one about to be carved counted). Any
 * thread; takes the reserve's lock, so not under the allocator's.
 */
void *cht__spare_take(size_t nslabs);
/**
 * Frees the spares beyond the reserve's bound for @a nslabs slabs (after a
 * reclaim shrank the list). Any thread, not under the allocator's lock.
 */
void cht__spare_trim(size_t nslabs);
/** Bytes of the spares held now (relaxed read). */
size_t cht__spare_bytes(void);
/**
 * Counts of the process: slabs carved from a spare the worker had ready,
 * refills that found the reserve empty and allocated the slab themselves,
 * and the spares held now. Any thread: relaxed reads, the last under the
 * reserve's lock.
 */
void cht__ma_spare_stats(uint64_t *taken, uint64_t *missed, size_t *held);
/** Registers the calling thread with the RCU if it is not yet. */
int cht__ma_ensure_reg(void);

/* The inline backend (cht_imap.c), called by cht_map.c's cht_map_u64_*. */
typedef struct cht_imap cht_imap_t;

int cht__im_create(cht_imap_t **out, size_t expect_keys);
void cht__im_destroy(cht_imap_t *m);
int cht__im_get(cht_imap_t *m, uint64_t key, uint64_t *val);
/** mode: IM_PUT, IM_INSERT, IM_ADD (cht_imap.c). */
int cht__im_upsert(cht_imap_t *m, uint64_t key, uint64_t val, int mode,
    uint64_t *out);
int cht__im_delete(cht_imap_t *m, uint64_t key);
int cht__im_cas(cht_imap_t *m, uint64_t key, uint64_t *expect, uint64_t val);
long cht__im_get_many(cht_imap_t *m, const uint64_t *keys, size_t n,
    uint64_t *vals, unsigned char *found);
/** Items, buckets, bucket bytes, overflow bytes, whether a split is due. */
/** cht_map_u64_reserve() of the inline backend (cht_imap_grow.c). */
int cht__im_reserve(cht_imap_t *m, size_t keys);
void cht__im_stats(cht_imap_t *m, size_t *items, size_t *buckets,
    size_t *bucket_bytes, size_t *ovf_bytes, int *growing);
/**
 * Growth statistics of the inline backend: the splits run so far and the
 * most one insert ran (1 at most since the splits are paid one per insert).
 * Any thread; relaxed reads (exact when no update runs).
 */
void cht__im_split_stats(cht_imap_t *m, uint64_t *splits,
    uint64_t *max_per_insert);
/**
 * Populate-ahead of the bucket segments (cht_imap_grow.c,
 * im_populate_ahead()), counts of the process: requests queued for the
 * worker, ranges it faulted in, and requests that failed (no worker, or
 * madvise(MADV_POPULATE_WRITE) refused: a kernel before 5.14, or the map
 * was destroyed first). Any thread; relaxed reads.
 */
void cht__im_pop_stats(uint64_t *requested, uint64_t *done, uint64_t *failed);
/**
 * The same for a cht_map_u64_t (cht_map.c; for the tests, which link the
 * static archive or the objects). @return CHT_OK, CHT_EINVAL (NULL or the
 * chained layout).
 */
typedef struct cht_map_u64 cht_map_u64_t;
int cht__map_u64_split_stats(cht_map_u64_t *m, uint64_t *splits,
    uint64_t *max_per_insert);

#define CHT__IM_PUT 0
#define CHT__IM_INSERT 1
#define CHT__IM_ADD 2

#endif
