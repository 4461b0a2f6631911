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
 * thread's retire batch: one cht_rcu_call() per CHT_MAP_RETIRE_BATCH).
 */
void cht__ma_retire64(void *p);
/**
 * Waits until every retired object is freed, then returns the wholly free
 * slabs to the system (what cht_map_*_destroy() do after their frees).
 * Not inside a reader section.
 */
void cht__ma_settle(void);
/** Bytes the allocator holds from the system (cht_map_stats_t.reserved_bytes). */
size_t cht__ma_reserved(void);
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
