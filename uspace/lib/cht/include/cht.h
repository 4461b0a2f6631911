/** @file cht.h
 * libcht: the kernel's concurrent hash table in userspace.
 *
 * Build flags: `pkg-config --cflags --libs cht` (headers live in their own
 * directory, <prefix>/include/cht; this file includes the kernel's table
 * header <adt/cht.h> and the userspace environment <adt/cht_env_posix.h> from
 * there).
 *
 * Two layers:
 *
 *  - The kernel API, unchanged (<adt/cht.h>): cht_create(), cht_destroy(),
 *    cht_insert(), cht_insert_unique(), cht_find(), cht_find_next(),
 *    cht_remove_key(), cht_remove_item(), cht_set_max_load(), ... Every operation except create
 *    and destroy must run inside a reader section (cht_rcu_read_lock()) of a
 *    registered thread; misuse fails an assertion (abort) as in the kernel.
 *    Fastest: use it in hot loops inside one reader section.
 *
 *  - The checked API below (cht_u_*): the same operations returning status
 *    codes, never aborting on bad arguments: CHT_EINVAL (NULL table or item,
 *    destroyed table), CHT_EPERM (thread not registered), CHT_EBUSY (destroy
 *    of a non-empty table), CHT_EDEADLK (destroy inside a reader section),
 *    CHT_ENOSECT (a lookup outside a reader section: its result would be
 *    dangling), CHT_ENOENT, CHT_EEXIST. Updates enter a reader section
 *    themselves (nesting is allowed); lookups need the caller's section
 *    because the returned item is only valid inside it.
 *
 * Threads: call cht_rcu_register_thread() once in every thread that uses a
 * table (unregistration at thread exit is automatic). Removed items reach
 * ops->remove_callback after a grace period, from the library's reclaimer
 * thread. Resizes run on the library's worker thread, never in the caller's
 * operation. The library has two helper threads (reclaimer, resize worker),
 * started on first use; if one cannot be started (no memory for its stack,
 * thread limit), the registration fails with CHT_ENOMEM or the table stays
 * at its size, and the next registration or resize request tries again.
 * Signal handlers may enter reader sections and look up (cht_find*, with
 * async-signal-safe ops), but not update a table (see cht_rcu.h,
 * "Async-signal safety").
 *
 * Item layout, for tables larger than the caches: put the key and what a
 * lookup reads (the value) right after the cht_link_t and start every item
 * on a CHT_ITEM_ALIGN boundary (aligned_alloc(), a pool of lines), so that
 * the link's list node (its last 16 bytes), the key and the value share one
 * cache line: {cht_link_t; 8-byte key; 8-byte value} is 56 bytes. From
 * malloc() the same item starts 16 bytes into a line (glibc) and its value
 * lies in the next one: one last-level miss more per successful lookup
 * (bench_us misses, 2^22 keys: 3.53 against 2.49). The load (items per
 * bucket) sets the rest: cht_create_load(), and uspace/lib/cht/README.md,
 * "Load and item layout", for the counts and bytes per key of each choice.
 *
 * Huge pages, for tables of tens of millions of items: the library advises
 * its bucket arrays of 4 MiB or more for transparent huge pages
 * (MADV_HUGEPAGE; THP set to "madvise", the usual default, honours it);
 * the items are yours: allocate them from memory advised the same way (a
 * pool of 2 MiB-aligned chunks with madvise(MADV_HUGEPAGE), or glibc's
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for the whole process). At 1e8 keys
 * on 4 KiB pages nearly every lookup also walks the page tables for its
 * bucket and again for its item (README.md there, "Huge pages").
 */
#ifndef CHT_USPACE_H_
#define CHT_USPACE_H_

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <cht_rcu.h>
/* The table's environment for <adt/cht.h>: libcht's POSIX one. */
#ifndef CHT_ENV_HEADER
#define CHT_ENV_HEADER "adt/cht_env_posix.h"
#endif
#include <adt/cht.h>

/** The object containing the link @a ptr (member @a member of @a type). */
#define cht_item_of(ptr, type, member) \
	((type *) ((char *) (ptr) - offsetof(type, member)))

/** The alignment of an item that keeps its hot fields in one line (above). */
#define CHT_ITEM_ALIGN 64

/** Library version. */
#define CHT_VERSION_MAJOR 2
#define CHT_VERSION_MINOR 0
const char *cht_version(void);

/**
 * cht_create() with status codes. @a max_load 0 = default (1 item per bucket
 * in this library; the kernel's default is 4).
 * @return CHT_OK, CHT_EINVAL (NULL table or ops, missing callbacks),
 * CHT_ENOMEM. Any thread (registration not needed).
 */
int cht_u_create(cht_t *h, size_t init_size, size_t min_size, size_t max_load,
    const cht_ops_t *op);

/**
 * Destroys an empty table; waits for a resize in flight and for pending
 * remove callbacks. @return CHT_OK, CHT_EINVAL, CHT_EPERM, CHT_EDEADLK,
 * CHT_EBUSY (items left: nothing is freed, the table stays usable).
 */
int cht_u_destroy(cht_t *h);

/** Inserts (duplicates allowed). @return CHT_OK, CHT_EINVAL, CHT_EPERM. */
int cht_u_insert(cht_t *h, cht_link_t *item);

/**
 * Inserts unless an equal item is present. @return CHT_OK, CHT_EEXIST (then
 * *dup, if not NULL, is the present item: valid while the caller stays in a
 * reader section; NULL if the caller is not in one), CHT_EINVAL, CHT_EPERM.
 */
int cht_u_insert_unique(cht_t *h, cht_link_t *item, cht_link_t **dup);

/**
 * Finds an item matching @a key into *out (NULL if none).
 * @return CHT_OK, CHT_ENOENT, CHT_EINVAL, CHT_EPERM, CHT_ENOSECT.
 */
int cht_u_find(cht_t *h, void *key, cht_link_t **out);

/** Next item after @a item matching @a key (duplicates). Like cht_u_find(). */
int cht_u_find_next(cht_t *h, void *key, const cht_link_t *item,
    cht_link_t **out);

/**
 * Removes every item matching @a key.
 * @return how many (>= 0), or CHT_EINVAL, CHT_EPERM.
 */
long cht_u_remove_key(cht_t *h, void *key);

/**
 * Removes @a item (which must have been inserted into @a h).
 * @return CHT_OK, CHT_ENOENT (already removed), CHT_EINVAL, CHT_EPERM.
 */
int cht_u_remove_item(cht_t *h, cht_link_t *item);

/** Counters of the table. @return CHT_OK, CHT_EINVAL, CHT_EPERM. */
int cht_u_get_stats(cht_t *h, cht_stats_t *st);

/**
 * cht_set_max_load(): a new load limit (items per bucket); the table resizes
 * to fit it on its worker thread. @return CHT_OK, CHT_EINVAL (NULL table,
 * @a max_load 0).
 */
int cht_u_set_max_load(cht_t *h, size_t max_load);

/**
 * cht_set_max_load_frac(): a fractional load limit, @a num / @a den items per
 * bucket (in steps of 1/16), e.g. 3/2 as memcached's own table. The table
 * resizes to fit it on its worker thread. @return CHT_OK, CHT_EINVAL (NULL
 * table, @a den 0, a limit below 1/16).
 */
int cht_u_set_max_load_frac(cht_t *h, size_t num, size_t den);

/**
 * cht_grow_point(): the grow point of @a h at @a buckets buckets (those of
 * cht_get_stats()): the item count above which an insert asks the resizer to
 * grow, the load limit times the buckets. The grow itself runs later on the
 * worker thread; the bucket count changes when it publishes the new array.
 * The count an insert compares may lag the items linked by the split count's
 * unfolded deltas (cht_count()). Any thread; a relaxed load of the limit.
 */
static inline size_t cht_grow_point(cht_t *h, size_t buckets)
{
	return (__atomic_load_n(&h->grow_load, __ATOMIC_RELAXED) * buckets) >>
	    CHT_LOAD_SHIFT;
}

/*
 * Key-value convenience: 64-bit keys and values, nodes allocated and freed by
 * the library. Every call enters its own reader section (any registered
 * thread, inside or outside a section).
 */
typedef struct cht_kv cht_kv_t;

/** @return CHT_OK (*out set), CHT_EINVAL, CHT_ENOMEM. */
int cht_kv_create(cht_kv_t **out, size_t init_size);
/** @return CHT_OK, CHT_EINVAL, CHT_EPERM, CHT_EDEADLK, CHT_EBUSY (not empty). */
int cht_kv_destroy(cht_kv_t *kv);
/** Adds @a key -> @a value unless @a key is present.
 * @return CHT_OK, CHT_EEXIST, CHT_ENOMEM, CHT_EINVAL, CHT_EPERM. */
int cht_kv_put(cht_kv_t *kv, uint64_t key, uint64_t value);
/** @return CHT_OK (*value set if not NULL), CHT_ENOENT, CHT_EINVAL, CHT_EPERM. */
int cht_kv_get(cht_kv_t *kv, uint64_t key, uint64_t *value);
/** @return CHT_OK, CHT_ENOENT, CHT_EINVAL, CHT_EPERM. */
int cht_kv_del(cht_kv_t *kv, uint64_t key);
/** Number of keys (approximate while updates run); 0 for NULL. */
size_t cht_kv_size(cht_kv_t *kv);
/** The underlying table (for cht_u_get_stats()). */
cht_t *cht_kv_table(cht_kv_t *kv);

/**
 * Batched lookup (userspace only): out[i] = cht_find(h, keys[i]) for i < @a n,
 * with the bucket entries of the keys 2 * CHT_FIND_MANY_AHEAD ahead
 * prefetched, the first nodes of the keys CHT_FIND_MANY_AHEAD ahead
 * prefetched from them, and the second nodes of the keys
 * CHT_FIND_MANY_AHEAD / 2 ahead whose first node lies below their hash
 * (uspace/lib/cht/README.md, "Batching"), so that the cache misses of
 * independent lookups overlap instead of following one another (DRAMHiT, Narayanan et al.,
 * EuroSys 2023: batching and prefetching in a fixed-size table; here on the
 * resizable table, whose walks stay the ordinary wait-free ones: a resize or
 * an insert during the batch costs a wasted prefetch, never a wrong result).
 * Same results as @a n calls of cht_find(), the items valid until the
 * caller's reader section ends. Inside a reader section; wait-free.
 * @return the number of keys found.
 */
size_t cht_find_many(cht_t *h, void *const *keys, size_t n, cht_link_t **out);
/** How far cht_find_many() prefetches ahead (keys). */
#define CHT_FIND_MANY_AHEAD 8

/**
 * cht_find_many() specialized at compile time, as cht_find_fast() is
 * cht_find(): @a ops must be a constant (the address of a `static const
 * cht_ops_t`), the ops the table was created with, so that the keys' hashes
 * and comparisons are inlined. Each key is hashed once, for the prefetches
 * and the walk both (cht_find_many() is this function with the table's ops:
 * indirect calls, the same single hash). Same context, guarantees and results
 * as cht_find_many().
 * @return the number of keys found.
 */
static inline __attribute__((always_inline)) size_t cht_find_many_fast(
    cht_t *h, void *const *keys, size_t n, cht_link_t **out,
    const cht_ops_t *const ops)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_env_assert(ops == h->op);
	/*
	 * The prefetches use the bucket array current at entry; each walk
	 * below loads h->b again (cht__find_hashed()), so a resize during the
	 * batch costs wasted prefetches, never a wrong result.
	 */
	cht_buckets_t *b = cht_env_rcu_access(h->b);
	enum { A = CHT_FIND_MANY_AHEAD, RN = 2 * CHT_FIND_MANY_AHEAD + 1 };
	/*
	 * The keys' table hashes, computed once: stage one needs them 2A keys
	 * ahead, stage two A keys ahead, the walk at the key itself. A ring of
	 * 2A + 1 entries: the slot written at key i (for key i + 2A) is not
	 * the one read for key i.
	 */
	uint64_t ring[RN];
	cht_node_t *first[RN];
	size_t found = 0;
	for (size_t i = 0; i < n && i < 2 * A; i++) {
		ring[i] = cht_item_hash(ops->key_hash(keys[i]));
		__builtin_prefetch(&b->d[ring[i] >> b->shift], 0, 0);
	}
	/* Stage two of the first A keys (stage three reads first[]). */
	for (size_t i = 0; i < n && i < A; i++) {
		uintptr_t nx = __atomic_load_n(&b->d[ring[i] >> b->shift].next,
		    __ATOMIC_ACQUIRE);
		first[i] = (cht_node_t *) (nx & ~CHT_LINK_MARKS);
		__builtin_prefetch(first[i], 0, 0);
	}
	for (size_t i = 0; i < n; i++) {
		if (i + 2 * A < n) {
			uint64_t hh = cht_item_hash(ops->key_hash(keys[i + 2 * A]));
			ring[(i + 2 * A) % RN] = hh;
			__builtin_prefetch(&b->d[hh >> b->shift], 0, 0);
		}
		if (i + A < n) {
			/*
			 * A hint only: the walk below is the real one. Acquire
			 * (as the walk's load of a bucket): stage three reads the
			 * node's hash, written before the insert's release CAS
			 * published it; a relaxed load would not order that read
			 * after the write (TSan reports it).
			 */
			uintptr_t nx = __atomic_load_n(&b->d[ring[(i + A) % RN] >>
			    b->shift].next, __ATOMIC_ACQUIRE);
			first[(i + A) % RN] = (cht_node_t *) (nx & ~CHT_LINK_MARKS);
			__builtin_prefetch(first[(i + A) % RN], 0, 0);
		}
		if (i + A / 2 < n) {
			/*
			 * Stage three: the second node, when the first lies below
			 * the key's hash (the walk will pass it). The node is not
			 * freed before this reader section ends, however it was
			 * unlinked meanwhile; its next is only prefetched (relaxed:
			 * a hint, never dereferenced here).
			 */
			cht_node_t *f = first[(i + A / 2) % RN];
			if (__atomic_load_n(&f->hash, __ATOMIC_RELAXED) <
			    ring[(i + A / 2) % RN])
				__builtin_prefetch((void *) (__atomic_load_n(&f->next,
				    __ATOMIC_RELAXED) & ~CHT_LINK_MARKS), 0, 0);
		}
		out[i] = cht__find_hashed(h, keys[i], ring[i % RN], ops);
		found += out[i] != NULL;
	}
	return found;
}

/* The managed map: the library allocates and frees the items (cht_map.h). */
#include <cht_map.h>

#ifdef __cplusplus
}
#endif

#endif
