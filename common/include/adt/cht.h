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
 * resize (a grow or a shrink alike) links every dummy of the new array into the
 * list before it publishes the array, so every published bucket has its dummy
 * and a lookup starts with one load (Shalev and Shavit, "Split-ordered
 * lists", JACM 2006, insert them lazily; eager insertion keeps that work off
 * the lookups and updates).
 * The relativistic hash table paper (Triplett, McKenney, Walpole, USENIX ATC 2011,
 * section 2) names this combination as the natural relativistic table; see
 * docs/CHT.md ("Design") for why it replaced the bucket-moving resize of HelenOS.
 *
 * Items are intrusive: embed a cht_link_t in your object. Duplicates (items that
 * compare equal) are allowed through cht_insert(); cht_insert_unique() refuses
 * them. Removed items are passed, exactly once and after a grace period, to
 * ops->remove_callback or ops->rcu_free (from the RCU reclaimer: thread).
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
 * for a resize: past a load threshold they only request one (a non-blocking
 * enqueue of the resize work), and on their walk they help by unlinking
 * deleted nodes (removed items, and the dummies of a bucket array being
 * replaced). They never insert a dummy: every bucket of a published array
 * already has its dummy in the list (see above, and cht.c's "Data layout").
 */
#ifndef KERN_CHT_H_
#define KERN_CHT_H_

/*
 * The environment: RCU, deferred work, allocation, atomics, assertions and
 * printing, as the cht_env_* names (docs/ARCHITECTURE.md, "One CHT, three
 * environments"). Each build names its header with -DCHT_ENV_HEADER:
 * adt/cht_env_kernel.h (the kernel), uspace/lib/cht/env/adt/cht_env_posix.h
 * (libcht on Linux; <cht.h> for its users), uspace/lib/cht/osenv/adt/
 * cht_env_os.h (the OS's user tasks, UCHT_FLAGS). The names differ, so an
 * include path that reaches two cannot pick the wrong one silently.
 */
#ifndef CHT_ENV_HEADER
#error "CHT_ENV_HEADER must name the CHT's environment header (see above)"
#endif
#include CHT_ENV_HEADER
#include <adt/cht_mix.h>

/**
 * The part of a node that the list walk reads. Every item's link and every
 * bucket dummy begins with it; a node with an odd hash is an item's link, one
 * with an even hash a dummy (in a bucket array, or the table's list head).
 */
typedef struct cht_node {
	/** Next node | mark bits (CHT_LINK_DELETED). Atomics. */
	uintptr_t next;
	/** Mixed hash | 1 for an item, the first hash of its bucket's range for
	 * a dummy. Written before the node is linked, then read-only. */
	uint64_t hash;
} cht_node_t;

/**
 * Link embedded in every item. Fields are private to the table.
 *
 * The list node is the link's last member, so that it sits right before the
 * fields that the user's item puts after the link (its key, typically): a
 * lookup reads the node (next, hash) and then the key, and the two are
 * adjacent in memory; the reclamation fields, which only a removal writes,
 * come first. (With the node first, memcached's item header put 24 cold bytes
 * between the node and the key: 0.3 more last-level cache misses per GET in
 * callgrind's simulation.) cht_link_of() goes from a node of odd hash to its
 * link.
 */
typedef struct cht_link {
	/** Deferred reclamation after removal. */
	cht_env_rcu_item_t rcu;
	/** Set by the thread that unlinked the node: whose remove_callback to call. */
	const struct cht_ops *op;
	/** In the list (a node of odd hash is the n of a cht_link_t). */
	cht_node_t n;
} cht_link_t;

/** The link whose node is @a n (a node of odd hash: an item's). */
static inline cht_link_t *cht_link_of(const cht_node_t *n)
{
	return (cht_link_t *) ((char *) n - offsetof(cht_link_t, n));
}

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
#ifdef CHT_ENV_OPS_RCU_FREE
	/** Optional (the kernel; libcht's ABI fixes cht_ops_t's size): called
	 * instead of remove_callback, alike, as the RCU callback of the item's
	 * link itself (cht_link_of_rcu()): no wrapper call, no ops store. */
	void (*rcu_free)(cht_env_rcu_item_t *rcu);
#endif
} cht_ops_t;

/** The link whose RCU item @a rcu is (for cht_ops_t.rcu_free). */
static inline cht_link_t *cht_link_of_rcu(cht_env_rcu_item_t *rcu)
{
	return (cht_link_t *) ((char *) rcu - offsetof(cht_link_t, rcu));
}

/**
 * Defines the four key functions of a table whose items are of type @a type,
 * a struct with a cht_link_t member @a link and a uint64_t member @a key, and
 * whose lookups pass the key as a `uint64_t *`: static PREFIX_hash(),
 * PREFIX_key_hash(), PREFIX_equal() and PREFIX_key_equal(), the user hash of
 * key k being @a hash_fn(k) (cht_u64_identity for the key itself: the table
 * mixes it). Put them into a cht_ops_t with CHT_U64_KEY_OPS(PREFIX).
 */
#define CHT_DEFINE_U64_KEY(prefix, type, link, key, hash_fn) \
	static inline const type *prefix##_item(const cht_link_t *l) \
	{ \
		return (const type *) (const void *) ((const char *) l - \
		    __builtin_offsetof(type, link)); \
	} \
	static size_t prefix##_hash(const cht_link_t *l) \
	{ \
		return hash_fn(prefix##_item(l)->key); \
	} \
	static size_t prefix##_key_hash(void *k) \
	{ \
		return hash_fn(*(uint64_t *) k); \
	} \
	static bool prefix##_equal(const cht_link_t *a, const cht_link_t *b) \
	{ \
		return prefix##_item(a)->key == prefix##_item(b)->key; \
	} \
	static bool prefix##_key_equal(void *k, const cht_link_t *l) \
	{ \
		return prefix##_item(l)->key == *(uint64_t *) k; \
	}

/** The cht_ops_t members defined by CHT_DEFINE_U64_KEY(@a prefix, ...). */
#define CHT_U64_KEY_OPS(prefix) \
	.hash = prefix##_hash, .key_hash = prefix##_key_hash, \
	.equal = prefix##_equal, .key_equal = prefix##_key_equal

/** The user hash of a u64 key that the table's mixer spreads by itself. */
static inline size_t cht_u64_identity(uint64_t key)
{
	return (size_t) key;
}

/**
 * A bucket array (private to the table; in this header only so that
 * cht_find_fast() can be inlined into its callers). Published by the resizer
 * with a release store into cht_t.b (cht_env_rcu_assign()) and read under RCU
 * with cht_env_rcu_access() (a relaxed load ordered by the address dependency
 * of every read of the array: docs/RCU.md, "Dependency ordering"); once
 * published it never changes (every entry is filled before publication), and
 * it is freed after a grace period once it has been replaced.
 */
typedef struct cht_buckets {
	/** 64 - order: the bucket of a hash is hash >> shift (order >= 1). */
	unsigned shift;
	/** log2 of the number of buckets, 1 .. CHT_MAX_ORDER. */
	size_t order;
	/** Deferred free of a replaced array (after its dummies are unlinked). */
	cht_env_rcu_item_t rcu;
	/**
	 * The dummy node of each bucket, in the array itself (as rculfhash's
	 * bucket nodes), all in the list before the array is published (eager,
	 * not Shalev and Shavit's lazy, initialization: cht.c's file comment).
	 */
	cht_node_t d[];
} cht_buckets_t;

/** One slot of the split item count: a delta not yet folded into
 * cht_t.item_cnt, alone on its cache line. Atomics (relaxed). */
typedef struct cht_cnt_slot {
	int64_t delta;
	char pad[64 - sizeof(int64_t)];
} cht_cnt_slot_t;
_Static_assert(sizeof(cht_cnt_slot_t) == 64, "one count slot per cache line");

/** A table. Create with cht_create(); fields are private. */
typedef struct cht {
	/*
	 * Read by every lookup and update, written rarely (resizes). The union
	 * pads them to 128 bytes, so that the fields after it, which updates
	 * write (the count, the resize requests, the list head's link), start at
	 * least 64 bytes after the last of them and never share its cache line,
	 * wherever the table lies: updates on one CPU do not take the lookups'
	 * line from another.
	 */
	union {
		struct {
			const cht_ops_t *op;
			/**
			 * Current bucket array; RCU-protected, replaced by the
			 * resizer. `__rcu` (compiler.h): readers take it with
			 * cht_env_rcu_access(), the resizer, creator and
			 * destroyer with cht_env_rcu_access_owned().
			 */
			cht_buckets_t __rcu *b;
			size_t min_order;
			/**
			 * Average items per bucket above which the table grows
			 * (it shrinks below a quarter of it), in fixed point:
			 * CHT_LOAD_ONE is one item per bucket. Atomics: set by
			 * cht_create() and the cht_set_max_load*() calls, read
			 * by updates and the resizer.
			 */
			size_t grow_load;
			/**
			 * The split item count (Linux's percpu_counter): one
			 * delta per CPU in the kernel, per stripe of threads in
			 * userspace, folded into item_cnt when it reaches
			 * +-cnt_batch, so an update of a large table writes a
			 * line of its own CPU's and not one shared by every
			 * updater. NULL when the environment has no slots
			 * (CHT_ENV_CNT_SLOTS undefined) or their allocation
			 * failed. Set by cht_create(), freed by cht_destroy();
			 * the deltas are atomics.
			 */
			struct cht_cnt_slot *cnt_slots;
			/** Entries of cnt_slots. Set once by cht_create(). */
			size_t cnt_nslots;
			/**
			 * Fold threshold of a slot's delta; 0 counts every
			 * update in item_cnt directly (small tables, where an
			 * error of nslots * batch items would delay a resize).
			 * Chosen by cht_create() and the resizer so that the
			 * error stays below 1/8 of the grow limit. Atomics
			 * (relaxed: any value that a reader sees keeps the sum
			 * correct).
			 */
			size_t cnt_batch;
			/** Being destroyed: no new resize requests. Atomics. */
			bool destroying;
		};
		struct {
			char tail_pad_[64];
			/** The list's last node (CHT_TAIL_HASH, next 0): set by
			 * cht_create(), then read-only; in the union's unused
			 * second line (sizeof(cht_t) unchanged). */
			cht_node_t tail;
		};
		char read_mostly_line_[128];
	};
	/**
	 * The head of the list (hash 0): a sentinel before every bucket's dummy,
	 * never removed.
	 */
	cht_node_t head;
	/**
	 * Live items, apart from the deltas still in cnt_slots (approximate while
	 * updates are in flight; may be read below zero for a moment when the
	 * deltas of inserts and removes sit in different slots). Atomics.
	 */
	int64_t item_cnt;
	/** Pending resize requests; the resize work runs while > 0. Atomics. */
	size_t resize_reqs;
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
	/** The block cnt_slots lies in (64-byte aligned inside it). */
	void *cnt_mem;
	/** Registry link for chtstat; protected by the registry lock. */
	cht_env_link_t reg_link;
	const char *name;
} cht_t;
_Static_assert(offsetof(cht_t, destroying) < 64 &&
    offsetof(cht_t, head) == 128, "cht_t: the read-mostly fields end 64 bytes "
    "before the written ones");
_Static_assert(offsetof(cht_t, tail) == 64, "cht_t: the tail in line 2");

/**
 * Load factors inside the table are fixed point with CHT_LOAD_SHIFT fraction
 * bits: CHT_LOAD_ONE is one item per bucket, so a grow limit such as
 * memcached's 1.5 items per bucket is exact (cht_set_max_load_frac()).
 */
#define CHT_LOAD_SHIFT 4
#define CHT_LOAD_ONE ((size_t) 1 << CHT_LOAD_SHIFT)
/**
 * Largest grow limit, in items per bucket: the limit of the largest table
 * (2^40 buckets) must fit in 64 bits. Larger requests are clamped to it.
 */
#define CHT_MAX_LOAD_LIMIT ((size_t) 1 << 18)

/** Status codes of the userspace-visible API (kernel uses them too). */
#define CHT_OK        0
#define CHT_ENOMEM   (-2)
#define CHT_EINVAL   (-3)
#define CHT_EBUSY    (-4)

/**
 * Creates a table with 2^k >= @a init_size buckets (at least @a min_size),
 * growing above @a max_load items per bucket on average, shrinking below a
 * quarter of that down to the size a growth to the same count reaches. @a
 * max_load 0 means the default (4 in the kernel; libcht's environment sets 1).
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

#ifdef CHT_ENV_CREATE_LOAD
/**
 * cht_create_named() with a fractional grow limit: the table grows when the
 * average load exceeds @a load_num / @a load_den items per bucket (rounded
 * down to a multiple of 1/CHT_LOAD_ONE, at most CHT_MAX_LOAD_LIMIT) and
 * shrinks below a quarter of it. A lower limit trades bucket-array memory
 * (16 bytes per bucket: 16 / load bytes per key) for fewer nodes walked per
 * lookup: a hit reads 1 + load / 2 nodes on average, a miss about
 * load / 2 + 1 - e^(-load / 2) (uspace/lib/cht/README.md, "Load and item
 * layout", has the measured last-level misses per load). Only in
 * environments that define CHT_ENV_CREATE_LOAD (libcht; the kernel passes
 * whole loads to cht_create()).
 * @return CHT_OK, CHT_ENOMEM, CHT_EINVAL (NULL ops or callbacks, @a load_den
 * 0 or above SIZE_MAX / CHT_LOAD_ONE, a limit below 1/CHT_LOAD_ONE).
 * Context: as cht_create().
 */
int cht_create_load(cht_t *h, const char *name, size_t init_size,
    size_t min_size, size_t load_num, size_t load_den, const cht_ops_t *op);
#endif

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
#define CHT_LINK_MARKS   CHT_LINK_DELETED

/** The tail's hash: even (walkers skip it as a dummy), above every item's
 * (at most UINT64_MAX - 2) and dummy's, so every walk stops at the tail. */
#define CHT_TAIL_HASH (UINT64_MAX - 1)

/**
 * The table's hash of a user hash: the user's hash mixed so that its top bits
 * (the bucket index) are well distributed, with bit 0 set (items are odd,
 * bucket dummies even), below CHT_TAIL_HASH (UINT64_MAX becomes - 2). Every
 * path of the table computes item hashes here.
 */
static inline uint64_t cht_item_hash(size_t user_hash)
{
	uint64_t h = cht_mix_hash(user_hash) | 1;
	return h == UINT64_MAX ? UINT64_MAX - 2 : h;
}

#ifndef cht_env_fault_lookup
/** Called at the start of every fast lookup: an environment may define it to
 * inject the shared write the CHT's read path must not have (the kernel's
 * sharedcount negative control, adt/cht_env_kernel.h); nothing by default. */
#define cht_env_fault_lookup() ((void) 0)
#endif

/* cht_find_fast()'s walk from the key's table hash @a hash, for callers that
 * computed it already (the batched lookup). Private; same context. */
/* Model: verify/cht.pml */
static inline __attribute__((always_inline)) cht_link_t *cht__find_hashed(
    cht_t *h, void *key, uint64_t hash, const cht_ops_t *const ops)
{
	cht_buckets_t *b = cht_env_rcu_access(h->b);
	size_t bi = hash >> b->shift;
	uintptr_t nx = __atomic_load_n(&b->d[bi].next, __ATOMIC_ACQUIRE);
#ifdef CHT_ENV_LOOKUP_STOP_AT_NEXT_DUMMY
	/* The dummy of the next bucket of b (none after the last): its hash,
	 * (bi + 1) << shift, is above every hash of bucket bi and never changes,
	 * so a walk that reaches it returns NULL without reading it, as reading it
	 * would decide (one line fewer when it lies in the array's next line). */
	const cht_node_t *stop = bi + 1 < ((size_t) 1 << b->order) ?
	    &b->d[bi + 1] : NULL;
#endif
	for (;;) {
		/* Never NULL: the tail's hash ends the walk below. */
		cht_node_t *n = (cht_node_t *) (nx & ~CHT_LINK_MARKS);
#ifdef CHT_ENV_LOOKUP_STOP_AT_NEXT_DUMMY
		if (n == stop)
			return NULL;
#endif
		nx = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
		uint64_t nh = n->hash;
		if (nh >= hash) {
			if (nh != hash)
				return NULL;
			/* Equal hashes: an item (dummies are even). */
			if (!(nx & CHT_LINK_DELETED) &&
			    ops->key_equal(key, cht_link_of(n)))
				return cht_link_of(n);
		}
	}
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
	cht_env_fault_lookup();
	return cht__find_hashed(h, key, cht_item_hash(ops->key_hash(key)), ops);
}

/*
 * Inline update paths. The walk, the insert and the remove are defined here
 * (not in cht.c) so that cht_insert_fast() and cht_remove_key_fast() can be
 * specialized for a caller's constant ops, as cht_find_fast() is; cht.c
 * instantiates the same code with the table's ops for cht_insert() and the
 * others. Names starting with cht__ are private to the table.
 */

/* Environments without test hooks. */
#ifndef cht_env_test_linked
#define cht_env_test_linked(table, item) ((void) 0)
#endif

/** RCU callback of an unlinked item (cht.c). */
void cht__node_reclaim(cht_env_rcu_item_t *rcu);
/** Out of line: asks for a resize if the count passed a threshold (cht.c). */
void cht__check_grow(cht_t *h, cht_buckets_t *b, int64_t items);
void cht__check_shrink(cht_t *h, cht_buckets_t *b, int64_t items);
/** Folds count slot @a slot's @a v into item_cnt and checks (cht.c). */
void cht__count_fold(cht_t *h, int64_t *slot, int64_t v, cht_buckets_t *b);
/** Unlinks the deleted nodes with @a hash and any before them (cht.c). */
void cht__cleanup(cht_t *h, uint64_t hash);

/*
 * Hands an unlinked item to RCU: an environment's cheaper, unordered call for
 * frees (the kernel's rcu_call_batched()), or the ordinary one (the order of
 * remove callbacks is not part of the table's contract).
 */
#ifndef cht_env_rcu_call_batched
#define cht_env_rcu_call_batched(item, func) cht_env_rcu_call((item), (func))
#endif

static inline cht_node_t *cht__ptr(uintptr_t v)
{
	return (cht_node_t *) (v & ~CHT_LINK_MARKS);
}

/** Called by the thread whose CAS unlinked item @a l (exactly one per item):
 * its remove callback runs after a grace period. */
/* Model: verify/cht.pml */
static inline __attribute__((always_inline)) void cht__unlinked_item(
    cht_t *h, cht_link_t *l, const cht_ops_t *const ops)
{
	(void) h;	/* unused since the ops travel with the call */
#ifdef CHT_ENV_OPS_RCU_FREE
	if (ops->rcu_free) {
		cht_env_rcu_call_batched(cht_env_rcu_item_of(&l->rcu), ops->rcu_free);
		return;
	}
#endif
	l->op = ops;
	cht_env_rcu_call_batched(cht_env_rcu_item_of(&l->rcu), cht__node_reclaim);
}

/** Called by the thread whose CAS unlinked node @a n. A dummy needs nothing:
 * the resizer frees its retired array after a grace period. */
/* Model: verify/cht.pml */
static inline __attribute__((always_inline)) void cht__unlinked(cht_t *h,
    cht_node_t *n, const cht_ops_t *const ops)
{
	if (n->hash & 1)
		cht__unlinked_item(h, cht_link_of(n), ops);
}

/**
 * Finds the position for @a hash after @a start: the first node with hash
 * >= @a hash (strict: > @a hash) and the link that points to it. Unlinks every
 * deleted node on the way (and reclaims it). Lock-free: restarts from @a start
 * when a CAS fails (Michael, SPAA 2002, search). @a hash <= CHT_TAIL_HASH
 * (strict: <): every walk stops at the tail by its hash compare, no NULL test.
 *
 * always_inline: specialized per call site (strict, out parameters): 100
 * instructions fewer per page fault, 21 per op of chtbench 15 at 20 % (icount).
 */
/* Model: verify/cht.pml */
static inline __attribute__((always_inline)) void cht__search(cht_t *h,
    const cht_ops_t *const ops, cht_node_t *start, uint64_t hash, bool strict,
    uintptr_t **pprev, cht_node_t **pcur)
{
retry:;
	uintptr_t *prev = &start->next;
	cht_node_t *cur = cht__ptr(__atomic_load_n(prev, __ATOMIC_ACQUIRE));
	uintptr_t nx;
	/*
	 * Two nodes per round (cur, then b, its successor): the node before cur
	 * is always in the other's register, advancing moves none (8 per node
	 * on amd64, not 10; chtbench 15 walks 2.8 per insert and per remove).
	 */
	for (;;) {
		nx = __atomic_load_n(&cur->next, __ATOMIC_ACQUIRE);
		if (__builtin_expect(nx & CHT_LINK_DELETED, 0))
			goto deleted;
		if (strict ? cur->hash > hash : cur->hash >= hash)
			break;
		/* Not deleted: nx is the pointer, not NULL (cur is no tail). */
		cht_node_t *b = (cht_node_t *) nx;
		nx = __atomic_load_n(&b->next, __ATOMIC_ACQUIRE);
		if (__builtin_expect(nx & CHT_LINK_DELETED, 0)) {
			prev = &cur->next;
			cur = b;
			goto deleted;
		}
		if (strict ? b->hash > hash : b->hash >= hash) {
			prev = &cur->next;
			cur = b;
			break;
		}
		prev = &b->next;
		cur = (cht_node_t *) nx;
		continue;
deleted:;
		/* cur is marked (its next is nx): unlink it from *prev. Fails if
		 * *prev changed or its node was deleted (marked): start over. */
		uintptr_t expected = (uintptr_t) cur;
		if (!__atomic_compare_exchange_n(prev, &expected,
		    (uintptr_t) cht__ptr(nx), false, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE))
			goto retry;
		cht__unlinked(h, cur, ops);
		cur = cht__ptr(nx);  /* the tail is never deleted */
	}
	*pprev = prev;
	*pcur = cur;
}

/** Marks @a n deleted. @return true if this call did it. */
/* Model: verify/cht.pml */
static inline bool cht__mark_deleted(cht_node_t *n)
{
	uintptr_t nx = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
	for (;;) {
		if (nx & CHT_LINK_DELETED)
			return false;
		if (__atomic_compare_exchange_n(&n->next, &nx, nx | CHT_LINK_DELETED,
		    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return true;
	}
}

/**
 * Adds @a d (+1, or -removed with @a up false) to the item count and asks for
 * a resize past the grow (@a up) or shrink limit of @a b. A split count
 * (Linux's percpu_counter) adds to the current CPU's (or stripe's) slot, atomic
 * (the thread may move), and folds it into item_cnt only at +batch (inserts)
 * or -batch (removes), where the check rides on the fold (cht__count_fold()
 * moves exactly what it read: item_cnt plus the slots is the count at every
 * step); a slot pushed the other way is folded by the next update of that
 * direction. Batch 0: item_cnt alone.
 */
static inline __attribute__((always_inline)) void cht__count_add(cht_t *h,
    int64_t d, bool up, cht_buckets_t *b)
{
#ifdef CHT_ENV_CNT_SLOTS
	size_t batch = __atomic_load_n(&h->cnt_batch, __ATOMIC_RELAXED);
	if (__builtin_expect(batch != 0, 1)) {
		int64_t *slot = &h->cnt_slots[cht_env_cnt_slot(h->cnt_nslots)].delta;
		int64_t v = __atomic_add_fetch(slot, d, __ATOMIC_RELAXED);
		if (__builtin_expect(up ? v >= (int64_t) batch :
		    v <= -(int64_t) batch, 0))
			cht__count_fold(h, slot, v, b);
		return;
	}
#endif
	int64_t items = __atomic_add_fetch(&h->item_cnt, d, __ATOMIC_RELAXED);
	size_t limit = (__atomic_load_n(&h->grow_load, __ATOMIC_RELAXED) <<
	    b->order) >> CHT_LOAD_SHIFT;
	if (up && __builtin_expect(items > (int64_t) limit, 0))
		cht__check_grow(h, b, items);
	else if (!up && __builtin_expect(items < (int64_t) (limit / 4), 0))
		cht__check_shrink(h, b, items);
}

/** The body of every insert; @a ops is h->op or a constant equal to it. */
/* Model: verify/cht.pml */
static inline __attribute__((always_inline)) bool cht__insert(cht_t *h,
    cht_link_t *item, bool unique, cht_link_t **dup,
    const cht_ops_t *const ops)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_env_assert(ops == h->op);
	uint64_t hash = cht_item_hash(ops->hash(item));
	item->n.hash = hash;
	/* item->op is written by the thread that unlinks it, before rcu_call. */
	cht_buckets_t *b = cht_env_rcu_access(h->b);
	cht_node_t *start = &b->d[hash >> b->shift];
	/*
	 * Count the item before it is linked: a remover finds it only after the
	 * release CAS below (its loads of `next` acquire), so an exact count is
	 * never below the items linked (it wrapped to 2^64-1 when a remover
	 * decremented first). A refused unique insert takes it back. */
	cht__count_add(h, 1, true, b);
	for (;;) {
		uintptr_t *prev;
		cht_node_t *cur;
		/* Plain inserts go after the run of equal hashes (a lookup on an
		 * old duplicate removed after the insert must not skip the new
		 * one); unique ones before it, so that two racing unique inserts
		 * of equal items conflict on one CAS (and see each other). */
		cht__search(h, ops, start, hash, !unique, &prev, &cur);
		if (unique) {
			/* The run of equal hashes starts at cur. */
			for (cht_node_t *n = cur; n->hash == hash;) {
				uintptr_t nx = __atomic_load_n(&n->next,
				    __ATOMIC_ACQUIRE);
				if (!(nx & CHT_LINK_DELETED) &&
				    ops->equal(cht_link_of(n), item)) {
					if (dup)
						*dup = cht_link_of(n);
					cht__count_add(h, -1, false, b);
					return false;
				}
				n = cht__ptr(nx);
			}
		}
		__atomic_store_n(&item->n.next, (uintptr_t) cur, __ATOMIC_RELAXED);
		uintptr_t expected = (uintptr_t) cur;
		if (__atomic_compare_exchange_n(prev, &expected, (uintptr_t) &item->n,
		    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			break;
	}
	cht_env_test_linked(h, item);
	return true;
}

/** The body of cht_remove_key(); @a ops as for cht__insert(). */
/* Model: verify/cht.pml */
static inline __attribute__((always_inline)) size_t cht__remove_key(cht_t *h,
    void *key, const cht_ops_t *const ops)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_env_assert(ops == h->op);
	uint64_t hash = cht_item_hash(ops->key_hash(key));
	cht_buckets_t *b = cht_env_rcu_access(h->b);
	uintptr_t *prev;
	cht_node_t *cur;
	cht__search(h, ops, &b->d[hash >> b->shift], hash, false, &prev, &cur);
	if (cur->hash != hash)  /* equal: an item (dummies are even) */
		return 0;
	size_t removed = 0;  /* the run's first, cur, apart */
	uintptr_t nx = __atomic_load_n(&cur->next, __ATOMIC_ACQUIRE);
	while (!(nx & CHT_LINK_DELETED) && ops->key_equal(key, cht_link_of(cur))) {
		/* Mark it deleted (Michael 2002); another remover may win. A
		 * failed CAS leaves the current next in nx: re-examine. */
		if (__atomic_compare_exchange_n(&cur->next, &nx,
		    nx | CHT_LINK_DELETED, false, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE)) {
			/* Its next, now final, ends the run: no duplicates. */
			if (__builtin_expect(cht__ptr(nx)->hash != hash, 1))
				goto unlink_first;
			removed = 1;
			break;
		}
	}
	bool only_first = removed;  /* this call marked cur and none after it */
	/* Duplicates further down the run (cht_insert() allows them). */
	for (cht_node_t *n = cht__ptr(nx); n->hash == hash;) {
		uintptr_t nn = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
		if (!(nn & CHT_LINK_DELETED) && ops->key_equal(key, cht_link_of(n))) {
			if (!__atomic_compare_exchange_n(&n->next, &nn,
			    nn | CHT_LINK_DELETED, false, __ATOMIC_ACQ_REL,
			    __ATOMIC_ACQUIRE))
				continue;  /* nn is the current next */
			removed++;
			only_first = false;
		}
		n = cht__ptr(nn);
	}
	if (!removed)
		return 0;
	if (!only_first) {
		cht__count_add(h, -(int64_t) removed, false, b);
		cht__cleanup(h, hash);
		return removed;
	}
unlink_first:
	cht__count_add(h, -1, false, b);
	/* The usual case, one item after the link the search found: one CAS
	 * on that link to nx (Michael 2002). It fails if the link changed or
	 * its node was deleted (marked); then a search from the bucket unlinks. */
	uintptr_t expected = (uintptr_t) cur;
	if (__atomic_compare_exchange_n(prev, &expected, (uintptr_t) cht__ptr(nx),
	    false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		cht__unlinked_item(h, cht_link_of(cur), ops);
	else
		cht__cleanup(h, hash);
	return 1;
}

/**
 * cht_insert() specialized at compile time for a constant @a ops (the
 * address of a `static const cht_ops_t`, the ops the table was created
 * with): ops->hash is called directly and can be inlined, as in Linux's
 * rhashtable_insert_fast(). Same guarantees and context as cht_insert():
 * inside a reader section, lock-free, never blocks.
 */
static inline __attribute__((always_inline)) void cht_insert_fast(cht_t *h,
    cht_link_t *item, const cht_ops_t *const ops)
{
	(void) cht__insert(h, item, false, NULL, ops);
}

/**
 * cht_insert_unique() specialized for a constant @a ops (see
 * cht_insert_fast()); ops->hash and ops->equal are called directly. Same
 * result, guarantees and context as cht_insert_unique().
 */
static inline __attribute__((always_inline)) bool cht_insert_unique_fast(
    cht_t *h, cht_link_t *item, cht_link_t **dup_item,
    const cht_ops_t *const ops)
{
	return cht__insert(h, item, true, dup_item, ops);
}

/**
 * cht_remove_key() specialized for a constant @a ops (see cht_insert_fast());
 * ops->key_hash and ops->key_equal are called directly. Same result,
 * guarantees and context as cht_remove_key().
 */
static inline __attribute__((always_inline)) size_t cht_remove_key_fast(
    cht_t *h, void *key, const cht_ops_t *const ops)
{
	return cht__remove_key(h, key, ops);
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
 * the size that fits, in the fewest steps (automatic shrinks go further).
 * Used by benchmarks and tests to force resizes (e.g. the relativistic
 * paper's 2^13 <-> 2^14 experiment). @a max_load >= 1.
 * Context: any outside a reader section or inside one; never blocks.
 */
void cht_set_max_load(cht_t *h, size_t max_load);

/**
 * cht_set_max_load() with a fractional limit: grows above @a num / @a den
 * items per bucket (rounded down to a multiple of 1/CHT_LOAD_ONE, at most
 * CHT_MAX_LOAD_LIMIT), shrinks below a quarter of it (memcached grows at 3/2);
 * asks the resizer for the size that fits, as cht_set_max_load() does.
 * @return CHT_OK, or CHT_EINVAL for a NULL table, @a den 0 or above
 * SIZE_MAX / CHT_LOAD_ONE, or a limit below 1/CHT_LOAD_ONE.
 * Context: any; never blocks.
 */
int cht_set_max_load_frac(cht_t *h, size_t num, size_t den);

/**
 * Sets the grow load (as cht_set_max_load()) and resizes to fit in the calling
 * thread, not on the work queue, returning when done; first waits (polling,
 * 1 ms) for a resize in flight. For benchmarks and tests that want each resize
 * finished before the next, on a CPU of their choice (chtbench 18).
 * @return CHT_OK, or CHT_EINVAL for @a max_load 0 or a table being destroyed.
 * Context: thread, may sleep (grace periods); not in a reader section.
 */
int cht_resize(cht_t *h, size_t max_load);

/** Table state for statistics and tests. */
typedef struct {
	size_t items;
	size_t buckets;
	/** Bucket dummies: one per bucket, inside the bucket array (no heap
	 * allocation of their own). */
	size_t dummies;
	uint64_t grows;
	uint64_t shrinks;
	bool resizing;
} cht_stats_t;

/**
 * The number of items: exact when no update runs; while updates run, off by
 * at most the deltas in flight (the split count's unfolded deltas are summed
 * in, so never by more than 1/8 of the grow limit plus one per running
 * update), and never below 0. Reads one line per count slot. Any context.
 */
size_t cht_count(cht_t *h);

/** Snapshot of the table's counters (racy while updates run). Any context. */
void cht_get_stats(cht_t *h, cht_stats_t *st);

/**
 * For tests: the item count as summed, not clamped at 0 as cht_count() and
 * cht_get_stats() clamp it. *@a split (if not NULL) says whether the table
 * counts in per-CPU slots now. Counting in item_cnt alone (!*split), one
 * word is read: the count at one instant, never below the items linked nor
 * negative (test chtcount). A split count read while updates fold may be
 * off either way. Any context.
 */
int64_t cht_count_raw(cht_t *h, bool *split);

/** Prints every live table (for `chtstat`). */
void cht_print_tables(void);

#endif
