/** @file cht_map_int.h
 * Internal interface between the managed map's allocator (cht_map.c) and the
 * inline backend of cht_map_u64_t (cht_imap.c). Not installed; the symbols
 * are local to libcht.so (libcht.map).
 */
#ifndef CHT_MAP_INT_H_
#define CHT_MAP_INT_H_

#include <stddef.h>
#include <stdint.h>

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
void cht__im_stats(cht_imap_t *m, size_t *items, size_t *buckets,
    size_t *bucket_bytes, size_t *ovf_bytes, int *growing);

#define CHT__IM_PUT 0
#define CHT__IM_INSERT 1
#define CHT__IM_ADD 2

#endif
