/** @file cht.h
 * Concurrent hash table (CHT): wait-free lookups in RCU reader sections,
 * lock-free inserts and removes, automatic background resize.
 *
 * Design: a relativistic split-ordered list. Every item of the table lives in
 * one singly linked list sorted by the item's mixed hash (Michael, SPAA 2002:
 * lock-free sorted list with CAS on marked pointers). A bucket is a pointer to a
 * dummy node placed in the list at the first hash of its range; the bucket of a
 * hash is its top `order` bits (so growing splits each bucket's range in two and
 * shrinking joins neighbours). Resizing swaps the RCU-protected bucket array and
 * never moves an item, so a concurrent lookup cannot miss a present item. A
 * grow inserts the new buckets' dummies into the list before it publishes the
 * larger array, so every published bucket has its dummy and a lookup starts
 * with one load (Shalev and Shavit, "Split-ordered lists", JACM 2006, insert
 * them lazily; eager insertion keeps that work off the lookups and updates).
 * The relativistic hash table paper (Triplett, McKenney, Walpole, USENIX ATC 2011,
 * section 2) names this combination as the natural relativistic table; see
 * README (CHT design) for why it replaced the bucket-moving resize of HelenOS.
 *
 * Items are intrusive: embed a cht_link_t in your object. Duplicates (items that
 * compare equal) are allowed through cht_insert(); cht_insert_unique() refuses
 * them. Removed items are passed, exactly once and after a grace period, to
 * ops->remove_callback (from the RCU reclaimer: thread context).
 *
 * Item lifetime: an item belongs to the table from its insert until its
 * remove callback has run. Until then it must not be freed, changed in its
 * key, or inserted again (into this or another table): a lookup that started
 * before the removal may still be walking through its link, and the link's
 * reclamation state is in use. To re-insert the same key, insert a new item.
 *
 * Context rules: every operation must run inside an RCU reader section
 * (rcu_read_lock()), except cht_create() and cht_destroy(). Lookups never block,
 * never write shared memory and never retry. Updates never block and never wait
 * for a resize (they may help by inserting a missing bucket dummy).
 */
#ifndef KERN_CHT_H_
#define KERN_CHT_H_

#include <adt/cht_env.h>
#include <adt/cht_mix.h>

/** Link embedded in every item. Fields are private to the table. */
typedef struct cht_link {
	/** Next node | mark bits (CHT_DELETED). Atomics. */
	uintptr_t next;
	/** Mixed hash | 1 (items are odd; bucket dummies are even). Set once. */
	uint64_t hash;
	/** Deferred reclamation after removal. */
	cht_env_rcu_item_t rcu;
	/** Set by the thread that unlinked the node: whose remove_callback to call. */
	const struct cht_ops *op;
} cht_link_t;

/** Operations supplied by the user; all may be called concurrently. */
typedef struct cht_ops {
	/** Hash of an item (any 64-bit value; the table mixes it). */
	size_t (*hash)(const cht_link_t *item);
	/** Hash of a search key; must equal hash() of items that match the key. */
	size_t (*key_hash)(void *key);
	/** True if two items are equal (duplicates). */
	bool (*equal)(const cht_link_t *a, const cht_link_t *b);
	/** True if @a item matches @a key. */
	bool (*key_equal)(void *key, const cht_link_t *item);
	/**
	 * Called once for every removed item after a grace period (may be NULL).
	 * It runs on the RCU reclaimer (kernel: the per-CPU reclaimer thread;
	 * userspace: the RCU callback thread), with other callbacks queued behind
	 * it, so it must be short and must not wait for RCU: no rcu_synchronize(),
	 * rcu_barrier() or cht_destroy() (each waits for callbacks, possibly for
	 * this one: a deadlock), and nothing that blocks for long. Freeing the
	 * item, dropping a reference and rcu_call() are fine.
	 */
	void (*remove_callback)(cht_link_t *item);
} cht_ops_t;

/**
 * A bucket array (private to the table; in this header only so that
 * cht_find_fast() can be inlined into its callers). Published by the resizer
 * with a release store into cht_t.b and read under RCU with acquire loads; once
 * published it never changes (every entry is filled before publication), and
 * it is freed after a grace period once it has been replaced.
 */
typedef struct cht_buckets {
	/** 64 - order: the bucket of a hash is hash >> shift (order >= 1). */
	unsigned shift;
	/** log2 of the number of buckets, 1 .. CHT_MAX_ORDER. */
	size_t order;
	/**
	 * Dummy node of each bucket, all present: a grow puts the new buckets'
	 * dummies into the list before it publishes the array (Shalev and Shavit,
	 * JACM 2006, initialize buckets eagerly instead of lazily), so a lookup's
	 * start is one load and never falls back to a parent bucket.
	 */
	cht_link_t *head[];
} cht_buckets_t;

/** A table. Create with cht_create(); fields are private. */
typedef struct cht {
	const cht_ops_t *op;
	/** Current bucket array; RCU-protected, replaced by the resizer. */
	cht_buckets_t *b;
	/** Dummy of bucket 0 (hash 0): the head of the list. */
	cht_link_t head;
	size_t min_order;
	size_t max_load;
	/** Live items (approximate while updates are in flight). Atomics. */
	size_t item_cnt;
	/** Pending resize requests; the resize work runs while > 0. Atomics. */
	size_t resize_reqs;
	/** The table is being destroyed: no new resize requests. Atomics. */
	bool destroying;
	/** cht_env_now_ms() of the last grow; resizer only. */
	uint64_t last_grow_ms;
	/**
	 * An explicit resize (cht_set_max_load(), cht_resize()) is pending: the
	 * shrink hold-off does not apply. Atomics.
	 */
	bool resize_forced;
	cht_env_work_t resize_work;
	/** Statistics (atomics, relaxed). */
	uint64_t stat_grows;
	uint64_t stat_shrinks;
	uint64_t stat_dummies;
	/** Registry link for chtstat; protected by the registry lock. */
	cht_env_link_t reg_link;
	const char *name;
} cht_t;

/** Status codes of the userspace-visible API (kernel uses them too). */
#define CHT_OK        0
#define CHT_ENOMEM   (-2)
#define CHT_EINVAL   (-3)
#define CHT_EBUSY    (-4)

/**
 * Creates a table with 2^k >= @a init_size buckets (at least @a min_size),
 * growing when items exceed @a max_load per bucket on average and shrinking when
 * they drop below a quarter of that. @a max_load 0 means the default (4 in the
 * kernel; the userspace library's environment sets 1).
 * Resizes run as deferred work (the system work queue in the kernel, a worker
 * thread in userspace); updates only request them with a non-blocking enqueue,
 * so no operation other than cht_create() and cht_destroy() ever blocks. (The
 * HelenOS API's `can_block` argument is gone: updates run inside reader
 * sections, where blocking is forbidden, so it could never be honoured.)
 * @return CHT_OK, CHT_ENOMEM, CHT_EINVAL (NULL ops or callbacks).
 * Context: thread, may sleep (allocates); not in a reader section required.
 */
int cht_create(cht_t *h, size_t init_size, size_t min_size, size_t max_load,
    const cht_ops_t *op);
/** cht_create() with a name shown by `chtstat`. */
int cht_create_named(cht_t *h, const char *name, size_t init_size,
    size_t min_size, size_t max_load, const cht_ops_t *op);

/**
 * Destroys an empty table: waits for a resize in flight and for pending
 * callbacks, frees the bucket array and dummies.
 * @return CHT_OK, or CHT_EBUSY if items are still in the table (then nothing
 * is freed and the table stays usable).
 * Context: thread, may sleep; not in a reader section.
 */
int cht_destroy(cht_t *h);

/**
 * Inserts @a item (duplicates allowed). Lock-free; never blocks.
 * Inside a reader section. The item is visible to lookups that start after the
 * insert returned; concurrent lookups may or may not see it.
 */
void cht_insert(cht_t *h, cht_link_t *item);

/**
 * Inserts @a item unless an equal item is present.
 * @return true if inserted; false if an equal item exists, and then
 *         *dup_item (if not NULL) is that item (valid until the reader section
 *         ends).
 */
bool cht_insert_unique(cht_t *h, cht_link_t *item, cht_link_t **dup_item);

/**
 * Finds an item matching @a key. Wait-free: no locks, no CAS, no retries; never
 * misses an item present during the whole lookup, also during a resize.
 * @return the item or NULL; valid until the caller's reader section ends.
 */
cht_link_t *cht_find(cht_t *h, void *key);
/** Bit 0 of cht_link_t.next: the node is logically deleted. */
#define CHT_LINK_DELETED ((uintptr_t) 1)
/** Mark bits of cht_link_t.next. */
#define CHT_LINK_MARKS   ((uintptr_t) 3)

/**
 * The table's hash of a user hash: the user's hash mixed so that its top bits
 * (the bucket index) are well distributed, with bit 0 set (items are odd,
 * bucket dummies even). Every path of the table computes item hashes here.
 */
static inline uint64_t cht_item_hash(size_t user_hash)
{
	return cht_mix_hash(user_hash) | 1;
}

/**
 * cht_find() specialized at compile time: @a ops must be a constant (the
 * address of a `static const cht_ops_t`), so that the compiler folds
 * ops->key_hash and ops->key_equal into direct calls and inlines them into the
 * lookup (as Linux's rhashtable_lookup_fast() does with its const
 * rhashtable_params). @a ops must be the ops the table was created with.
 * Wait-free, no writes to shared memory, no indirect calls when inlined; the
 * stored hash is compared before the key, so key_equal() runs only on a hash
 * match. Inside a reader section; same guarantees and result as cht_find().
 *
 * Cost (release amd64, chtbench 12, icount): see bench/RESULTS.md.
 */
static inline __attribute__((always_inline)) cht_link_t *cht_find_fast(
    cht_t *h, void *key, const cht_ops_t *const ops)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_env_assert(ops == h->op);
	uint64_t hash = cht_item_hash(ops->key_hash(key));
	cht_buckets_t *b = __atomic_load_n(&h->b, __ATOMIC_ACQUIRE);
	cht_link_t *d = __atomic_load_n(&b->head[hash >> b->shift],
	    __ATOMIC_ACQUIRE);
	uintptr_t nx = __atomic_load_n(&d->next, __ATOMIC_ACQUIRE);
	for (;;) {
		cht_link_t *n = (cht_link_t *) (nx & ~CHT_LINK_MARKS);
		if (!n)
			return NULL;
		nx = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
		uint64_t nh = n->hash;
		if (nh >= hash) {
			if (nh != hash)
				return NULL;
			if (!(nx & CHT_LINK_DELETED) && ops->key_equal(key, n))
				return n;
		}
	}
}

/** Same as cht_find() (kept for HelenOS API compatibility). */
cht_link_t *cht_find_lazy(cht_t *h, void *key);
/**
 * Next item after @a item that matches @a key (duplicates), or NULL. Items
 * inserted concurrently next to @a item may be missed.
 */
cht_link_t *cht_find_next(cht_t *h, void *key, const cht_link_t *item);
/** Like cht_find_next() for items equal (ops->equal) to @a item. */
cht_link_t *cht_find_next_equal(cht_t *h, const cht_link_t *item);

/**
 * Removes every item matching @a key. @return how many this call removed
 * (concurrent removers of the same items split them; each item is counted and
 * passed to remove_callback exactly once).
 */
size_t cht_remove_key(cht_t *h, void *key);

/**
 * Removes @a item. @return true if this call removed it, false if it was not
 * in the table (or another thread removed it first).
 */
bool cht_remove_item(cht_t *h, cht_link_t *item);

/**
 * Changes the average load per bucket at which the table grows (it shrinks
 * below a quarter of it) and asks the background resizer to bring the table to
 * the size that fits. Used by benchmarks and tests to force resizes (e.g. the
 * relativistic paper's 2^13 <-> 2^14 experiment). @a max_load >= 1.
 * Context: any outside a reader section or inside one; never blocks.
 */
void cht_set_max_load(cht_t *h, size_t max_load);

/**
 * Sets the load at which the table grows (as cht_set_max_load()) and brings
 * the table to the size that fits in the calling thread, not on the work
 * queue: returns when the resize is complete. If a resize is already in flight
 * on the work queue, waits for it first (polling, 1 ms). For benchmarks and
 * tests that want each resize finished before the next and run on a CPU of
 * their choice (chtbench 18 wires its resizer away from the readers).
 * @return CHT_OK, or CHT_EINVAL for @a max_load 0 or a table being destroyed.
 * Context: thread, may sleep (waits for grace periods); not in a reader
 * section.
 */
int cht_resize(cht_t *h, size_t max_load);

/** Table state for statistics and tests. */
typedef struct {
	size_t items;
	size_t buckets;
	size_t dummies;
	uint64_t grows;
	uint64_t shrinks;
	bool resizing;
} cht_stats_t;

/** Snapshot of the table's counters (racy while updates run). Any context. */
void cht_get_stats(cht_t *h, cht_stats_t *st);

/** Prints every live table (for `chtstat`). */
void cht_print_tables(void);

#endif
