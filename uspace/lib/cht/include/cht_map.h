/** @file cht_map.h
 * libcht's managed map: the CHT with items the library allocates, copies
 * into and frees itself. The intrusive API of <cht.h> stays; this
 * is the layer for users who do not want to allocate items, defer their
 * frees past a grace period or register threads.
 *
 * Two maps:
 *
 *  - cht_map_t: byte-string keys and values of any size (keys up to
 *    CHT_MAP_KEY_MAX bytes, values up to CHT_MAP_VAL_MAX). An item holds the
 *    key and a pointer to its value block; every write of a value
 *    (cht_map_put() of a present key, cht_map_cas(), cht_map_append())
 *    builds a new block and swaps the pointer with one compare-and-swap, so a
 *    reader sees the old value or the new one, never a mix. Replaced blocks
 *    are retired into a per-thread batch and freed after one grace period
 *    per batch of CHT_MAP_RETIRE_BATCH (one cht_rcu_call() per batch, not per
 *    block).
 *  - cht_map_u64_t: the fast path for 8-byte keys and values, in one of two
 *    layouts chosen at creation (cht_map_u64_create_opts()):
 *    - inline (the default): key and value live in the bucket's own 64-byte
 *      line (three pairs per line, a chain of overflow lines when full), in
 *      a linear-hashing table that grows one bucket at a time inside the
 *      inserts (no resize step, no second array); lookups are lock-free
 *      reader sections of libcht's RCU that never wait (a per-bucket
 *      sequence count makes a reader that raced a slot's reuse retry),
 *      updates take a per-bucket lock. About 1.2 cache misses per lookup
 *      and 31 bytes per key (src/cht_imap.c, uspace/lib/cht/README.md).
 *    - chained (CHT_MAP_U64_CHAINED): items on the CHT below: key and value
 *      in the item, in the same 64-byte line as its list node (the item is
 *      one 64-byte, 64-byte-aligned object), resized by the CHT's worker
 *      thread; 2.25 misses per hit and 96 bytes per key.
 *    In both a value is written in place with an atomic store or
 *    compare-and-swap.
 *
 * Memory: items and value blocks come from the library's allocator: size
 * classes of 16 to 4096 bytes carved from 64 KiB slabs, a per-thread cache of
 * free objects per class, and a global depot that takes and gives whole
 * chains of objects (the remove callbacks of the table run on the RCU
 * reclaimer thread, whose cache passes its frees on in chains); larger
 * objects come from malloc(). A slab whose objects are all free in the depot
 * goes back to the system: cht_map_destroy() and cht_map_u64_destroy() do it
 * before they return, and frees ask for it in the background (on the
 * library's worker thread, after the RCU callbacks that freed, at most a
 * tenth of that thread's time), so deleting most keys returns their slabs
 * shortly after the grace periods that free them. Free objects in the cache
 * of a live user thread (under 256 per class, or the rest of a slab it just
 * carved) keep their slabs until the thread passes them on (a free past 256)
 * or exits; the destroying thread's and the RCU reclaimer's caches are
 * emptied. cht_map_stats() and cht_map_u64_stats() report the memory.
 *
 * Threads: any thread may call any function; a thread that has not
 * registered with the RCU is registered on its first call (the automatic
 * unregistration at thread exit of <cht_rcu.h> applies). Every call enters
 * and leaves its own reader section (nesting in a caller's section is
 * allowed), except cht_map_get_ref(), whose result lives only inside the
 * caller's section (cht_map_read_lock() ... cht_map_read_unlock()).
 * cht_map_destroy() and cht_map_u64_destroy() must not run concurrently with
 * any other call on the same map.
 *
 * Status codes are those of <cht_rcu.h>: CHT_OK, CHT_EINVAL (NULL map,
 * length out of range), CHT_ENOMEM, CHT_ENOENT (no such key), CHT_EEXIST
 * (the key is present), CHT_ESTALE (compare-and-replace: the value differs
 * from the expected one), CHT_ERANGE (the copy buffer is too small), CHT_EPERM
 * (the thread could not be registered), CHT_ENOSECT (cht_map_get_ref()
 * outside a reader section), CHT_EDEADLK (destroy inside a reader section).
 *
 * The table underneath is common/adt/cht.c (a relativistic split-ordered
 * list, docs/CHT.md), resized automatically on its worker thread; lookups are
 * wait-free, updates lock-free.
 */
#ifndef CHT_MAP_H_
#define CHT_MAP_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest key of a cht_map_t, in bytes. */
#define CHT_MAP_KEY_MAX ((size_t) 1 << 20)
/** Longest value of a cht_map_t, in bytes. */
#define CHT_MAP_VAL_MAX ((size_t) 1 << 30)
/** Replaced value blocks a thread collects before one grace period frees them. */
#define CHT_MAP_RETIRE_BATCH 64

typedef struct cht_map cht_map_t;
typedef struct cht_map_u64 cht_map_u64_t;

/** Memory and size of a map (cht_map_stats(), cht_map_u64_stats()). */
typedef struct {
	/** Keys in the map (approximate while updates run). */
	size_t items;
	/** Buckets of the table now. */
	size_t buckets;
	/** Bytes of the table's bucket array (16 per bucket and a header). */
	size_t bucket_bytes;
	/**
	 * Bytes of the map's items and live value blocks, counted at their size
	 * class (what the allocator hands out for them). Exact for
	 * cht_map_u64_t (items * 64); for cht_map_t the bytes of every
	 * cht_map_t of the process (one allocator), including replaced value
	 * blocks still waiting for their grace period.
	 */
	size_t item_bytes;
	/**
	 * Bytes the allocator holds from the system for every map of the
	 * process: slabs (in use or cached) and large objects.
	 */
	size_t reserved_bytes;
	/** (bucket_bytes + item_bytes) / items; 0 when empty. */
	double bytes_per_key;
	/** 1 while a resize is requested or running on the worker thread. */
	int resizing;
} cht_map_stats_t;

/* --- byte-string keys and values ------------------------------------------- */

/**
 * Creates an empty map sized for about @a expect_keys keys (0: start small;
 * the table grows and shrinks by itself in either case, on its worker
 * thread).
 * @return CHT_OK (*out set), CHT_EINVAL (@a out NULL), CHT_ENOMEM.
 * Context: any thread, not inside a reader section; may allocate.
 */
int cht_map_create(cht_map_t **out, size_t expect_keys);

/**
 * Frees the map, its items and values. No other call on the map may run
 * concurrently or later. Waits for the grace periods of the items' frees.
 * @return CHT_OK, CHT_EINVAL (NULL), CHT_EDEADLK (inside a reader section).
 */
int cht_map_destroy(cht_map_t *m);

/**
 * Sets the value of @a key (@a klen bytes, 0 .. CHT_MAP_KEY_MAX) to @a val
 * (@a vlen bytes, 0 .. CHT_MAP_VAL_MAX; @a val may be NULL when @a vlen is 0),
 * inserting the key when absent. Lock-free; a concurrent reader sees the old
 * or the new value.
 * @return CHT_OK, CHT_EINVAL, CHT_ENOMEM, CHT_EPERM.
 */
int cht_map_put(cht_map_t *m, const void *key, size_t klen, const void *val,
    size_t vlen);

/**
 * Inserts @a key -> @a val only if @a key is absent.
 * @return CHT_OK, CHT_EEXIST (present; the map is unchanged), CHT_EINVAL,
 * CHT_ENOMEM, CHT_EPERM.
 */
int cht_map_insert(cht_map_t *m, const void *key, size_t klen,
    const void *val, size_t vlen);

/**
 * Copies the value of @a key into @a buf (@a cap bytes) and stores its length
 * in *@a vlen (if not NULL). Wait-free.
 * @return CHT_OK; CHT_ERANGE when the value is longer than @a cap (then the
 * first @a cap bytes are copied and *@a vlen is the full length); CHT_ENOENT;
 * CHT_EINVAL; CHT_EPERM.
 */
int cht_map_get(cht_map_t *m, const void *key, size_t klen, void *buf,
    size_t cap, size_t *vlen);

/**
 * Enters a read guard (an RCU reader section; registers the thread on first
 * use). Guards nest. Inside, cht_map_get_ref() returns values in place.
 * @return CHT_OK, CHT_EPERM (the thread could not be registered).
 */
int cht_map_read_lock(void);
/** Leaves the guard entered by cht_map_read_lock(). */
void cht_map_read_unlock(void);

/**
 * The value of @a key in place: *@a val points to its @a *vlen bytes, valid
 * and unchanged until the caller's read guard ends (a concurrent put makes a
 * new block; this one is freed only after the guard). Wait-free.
 * @return CHT_OK, CHT_ENOENT, CHT_EINVAL, CHT_ENOSECT (not inside a guard).
 */
int cht_map_get_ref(cht_map_t *m, const void *key, size_t klen,
    const void **val, size_t *vlen);

/**
 * Removes @a key. Its item and value are freed after a grace period.
 * @return CHT_OK, CHT_ENOENT, CHT_EINVAL, CHT_EPERM.
 */
int cht_map_delete(cht_map_t *m, const void *key, size_t klen);

/**
 * Compare-and-replace: sets the value of @a key to @a val only if it equals
 * (same length and bytes) @a expect (@a elen bytes). Linearizable: the
 * comparison and the swap are one compare-and-swap of the value pointer.
 * @return CHT_OK, CHT_ESTALE (the value differs), CHT_ENOENT, CHT_EINVAL,
 * CHT_ENOMEM, CHT_EPERM.
 */
int cht_map_cas(cht_map_t *m, const void *key, size_t klen,
    const void *expect, size_t elen, const void *val, size_t vlen);

/**
 * Appends @a data (@a dlen bytes) to the value of @a key, inserting the key
 * with @a data as its value when absent (the Big Memory write). Lock-free
 * (retries on a concurrent write of the same key); concurrent appends to one
 * key all land, in some order. Costs a copy of the whole value.
 * @return CHT_OK, CHT_EINVAL (the value would exceed CHT_MAP_VAL_MAX),
 * CHT_ENOMEM, CHT_EPERM.
 */
int cht_map_append(cht_map_t *m, const void *key, size_t klen,
    const void *data, size_t dlen);

/** Memory and size of @a m. @return CHT_OK, CHT_EINVAL. */
int cht_map_stats(cht_map_t *m, cht_map_stats_t *st);

/* --- 8-byte keys and values ----------------------------------------------- */

/** The inline layout of cht_map_u64_t (the default; cht_map.h). */
#define CHT_MAP_U64_INLINE 0u
/** The chained layout: items on the CHT (cht_map.h). */
#define CHT_MAP_U64_CHAINED 1u

/**
 * cht_map_create() for 8-byte keys and values (any 64-bit key), in the
 * inline layout: cht_map_u64_create_opts(out, expect_keys,
 * CHT_MAP_U64_INLINE).
 */
int cht_map_u64_create(cht_map_u64_t **out, size_t expect_keys);
/**
 * Creates an empty 8-byte map in the layout @a flags selects:
 * CHT_MAP_U64_INLINE (0) or CHT_MAP_U64_CHAINED. @a expect_keys sizes it (0:
 * start small; both grow by themselves; the inline layout never shrinks its
 * bucket array, the chained one shrinks on its worker thread).
 * @return CHT_OK (*out set), CHT_EINVAL (@a out NULL, unknown flags),
 * CHT_ENOMEM. Any thread; since libcht 2.1.
 */
int cht_map_u64_create_opts(cht_map_u64_t **out, size_t expect_keys,
    unsigned flags);
/** cht_map_destroy() for a cht_map_u64_t. */
int cht_map_u64_destroy(cht_map_u64_t *m);
/** Sets the value of @a key, inserting it when absent (see cht_map_put()). */
int cht_map_u64_put(cht_map_u64_t *m, uint64_t key, uint64_t val);
/** Inserts @a key -> @a val if absent: CHT_OK, CHT_EEXIST (see cht_map_insert()). */
int cht_map_u64_insert(cht_map_u64_t *m, uint64_t key, uint64_t val);
/**
 * The value of @a key into *@a val (if not NULL). Wait-free; one reader
 * section; reads the item's line once.
 * @return CHT_OK, CHT_ENOENT, CHT_EINVAL, CHT_EPERM.
 */
int cht_map_u64_get(cht_map_u64_t *m, uint64_t key, uint64_t *val);
/** Removes @a key: CHT_OK, CHT_ENOENT (see cht_map_delete()). */
int cht_map_u64_delete(cht_map_u64_t *m, uint64_t key);
/**
 * Sets the value of @a key to @a val if it is @a expect (an atomic
 * compare-and-swap of the value in the item).
 * @return CHT_OK, CHT_ESTALE (*@a expect is then the value seen),
 * CHT_ENOENT, CHT_EINVAL, CHT_EPERM.
 */
int cht_map_u64_cas(cht_map_u64_t *m, uint64_t key, uint64_t *expect,
    uint64_t val);
/**
 * Adds @a delta to the value of @a key (atomic fetch-and-add, the 8-byte
 * form of append), inserting @a key with value @a delta when absent; the
 * value after the add into *@a out (if not NULL).
 * @return CHT_OK, CHT_ENOMEM, CHT_EINVAL, CHT_EPERM.
 */
int cht_map_u64_add(cht_map_u64_t *m, uint64_t key, uint64_t delta,
    uint64_t *out);
/**
 * Batched lookup: the values of @a n keys into @a vals (and @a found[i] 1/0
 * if @a found is not NULL), in one reader section, with the bucket entries of
 * a window of keys prefetched ahead of their walks, so that the misses of
 * independent lookups overlap (DRAMHiT, EuroSys'23). Same results as @a n
 * calls of cht_map_u64_get().
 * @return the number of keys found, or CHT_EINVAL / CHT_EPERM (negative).
 */
long cht_map_u64_get_many(cht_map_u64_t *m, const uint64_t *keys, size_t n,
    uint64_t *vals, unsigned char *found);
/**
 * Memory and size. Chained: item_bytes exact (64 per key), bucket_bytes the
 * CHT's array. Inline: bucket_bytes = 64 per bucket plus the map's header
 * (the pages of the bucket segments that can be touched; untouched ones cost
 * nothing), item_bytes = 64 per overflow bucket, resizing always 0 (growth
 * runs inside inserts). @return CHT_OK, CHT_EINVAL.
 */
int cht_map_u64_stats(cht_map_u64_t *m, cht_map_stats_t *st);
/**
 * Grows the map now so that @a keys keys fit at the load limit without a
 * further split: the inline layout's splits (linear hashing, one bucket each)
 * run on the calling thread, one at a time under the map's split lock, while
 * readers and writers go on (an insert that finds the lock taken skips its
 * split; a reader that meets a bucket being split retries it, as during
 * growth by inserts). Never shrinks (the inline layout's bucket array only
 * grows: @a keys at or below the present capacity returns at once). Memory:
 * 64 bytes per bucket, 2.75 keys per bucket. Any thread outside a reader
 * section (registered on first use); since libcht 2.2.
 * @return CHT_OK, CHT_EINVAL (@a m NULL, or the chained layout: it sizes
 * itself on its worker thread), CHT_EPERM, CHT_EDEADLK (inside a reader
 * section), CHT_ENOMEM (no segment or overflow line could be mapped: the
 * buckets split so far stay).
 */
int cht_map_u64_reserve(cht_map_u64_t *m, size_t keys);
/**
 * The grow point: the key count above which an insert asks the map's resizer
 * to grow the table (the load limit times the buckets now; cht_grow_point()
 * of cht.h). The grow runs later on the worker thread; the bucket count
 * of cht_map_u64_stats() changes when it publishes the new array. For a
 * benchmark or a test that wants to place inserts at a grow. Any thread
 * outside or inside a reader section (registered on first use); since
 * libcht 2.3. @return the key count; 0 for @a m NULL, an unregistrable
 * thread, or the inline layout (it splits one bucket at a time inside the
 * inserts: no grow point).
 */
size_t cht_map_u64_grow_at(cht_map_u64_t *m);
/** cht_map_u64_grow_at() for the byte-string map; since libcht 2.3. */
size_t cht_map_grow_at(cht_map_t *m);

#ifdef __cplusplus
}
#endif

#endif
