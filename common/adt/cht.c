/** @file cht.c
 * Concurrent hash table: a relativistic split-ordered list (see adt/cht.h).
 *
 * This file is shared by the kernel and the userspace library: it uses only
 * the cht_env_* names of the environment header that adt/cht.h includes
 * (CHT_ENV_HEADER, named by each build) for RCU, deferred work, allocation
 * and assertions.
 *
 * Data layout
 * -----------
 * One list of nodes sorted by `hash` ascending. Item hashes are odd (mixed hash
 * | 1), dummy hashes are even: the dummy of bucket i at order k has hash
 * i << (64 - k), the first value of the bucket's range, so a dummy and an item
 * never compare equal and the dummy of a range precedes all its items. A dummy
 * node is a cht_node_t (next, hash); an item's cht_link_t begins with one.
 * h->head (hash 0) is a sentinel before everything, h->tail (CHT_TAIL_HASH,
 * even, above every item and dummy hash; next 0) one after everything: every
 * walk stops at a node by its hash compare, so none tests for NULL.
 *
 * The bucket array (h->b) holds the dummies themselves (b->d[i], as liburcu's
 * rculfhash lays out its bucket nodes), so a lookup reaches its bucket's first
 * node with one load (b->d[i].next) and no pointer to follow. Every dummy of a
 * published array is in the list: a resize (grow or shrink alike) allocates the
 * new array, links all of its dummies into the list while lookups and updates
 * still use the old array (each after the old dummy whose range contains it;
 * a new dummy may equal an old one in hash, which is harmless: both are even,
 * and lookups and inserts only ever compare them as "smaller than an item"),
 * publishes it, waits a grace period (no traversal starts at an old dummy any
 * more), marks and unlinks all of the old array's dummies and hands the old
 * array to rcu_call, which frees it after another grace period (no traversal
 * stands on one of its dummies any more). So a
 * lookup never falls back to a parent bucket and an update never inserts a
 * dummy (in Shalev and Shavit's lazy initialization, which this table used
 * before, a lookup right after a grow walked from the parent bucket: twice the
 * chain).
 *
 * Marks: bit 0 of a node's `next` (CHT_DELETED) is the logical deletion of that
 * node (Michael 2002; Harris 2001). A marked `next` is never changed again, so
 * nothing is inserted right after a deleted node. A deleted node is unlinked by
 * whoever first succeeds in the CAS on its predecessor's `next`; that thread
 * hands an item to RCU (then to ops->remove_callback); an unlinked dummy needs
 * nothing (its array is freed by the resizer, see above).
 *
 * Memory ordering
 * ---------------
 * - Publication: a new node's hash and next are written with plain/relaxed
 *   stores before the release CAS that links it; readers load every `next` with
 *   acquire, so the hash and the user's fields of a node are visible once the
 *   pointer to it is. (x86-64 needs no fence for either; the orders document
 *   the requirement and keep the compiler honest.)
 * - The bucket array is published with a release store and read with acquire
 *   loads: its dummies' hashes and links (written, and linked by release CAS,
 *   before publication) are visible to whoever finds the array.
 * - Reclamation: an unlinked item is passed to the environment's rcu_call
 *   (its unordered cht_env_rcu_call_batched where it has one), so
 *   it stays valid for every reader section that may still hold it; a replaced
 *   bucket array is freed after its dummies are unlinked and a grace period.
 */
#include <adt/cht.h>

#define CHT_DELETED   CHT_LINK_DELETED
/* Grow limit (items per bucket) for max_load 0; an environment may choose. */
#ifdef CHT_ENV_DEFAULT_MAX_LOAD
#define DEFAULT_MAX_LOAD CHT_ENV_DEFAULT_MAX_LOAD
#else
#define DEFAULT_MAX_LOAD 4
#endif
/** Largest bucket order; 2^40 buckets is beyond any memory we have. */
#define MAX_ORDER 40
/**
 * Smallest bucket order: two buckets, so that the bucket of a hash is always
 * hash >> (64 - order) with a shift below 64 (no special case for one bucket).
 */
#define MIN_ORDER 1
/** Dummies a resize inserts or deletes per reader section. */
#define RESIZE_BATCH 256
/**
 * Shrink hold-off: a table does not shrink on its own within this long after
 * it last grew (explicit resizes are exempt). A table that is emptied and
 * refilled in quick succession (a process's pages mapped and unmapped, chtbench
 * 22's rounds) otherwise shrinks and grows again every round: about 80
 * instructions per page fault of resize work in chtbench 22 (icount). The
 * resizer waits out the hold-off in CHT_HOLDOFF_POLL_MS steps, re-checking
 * the count, so a shrink still comes, only later, and a grow never waits.
 */
#define CHT_SHRINK_HOLDOFF_MS 100
#define CHT_HOLDOFF_POLL_MS 10

#define ptr_of cht__ptr
#define search cht__search
#define mark_deleted cht__mark_deleted
#define unlinked cht__unlinked

static inline bool is_deleted(uintptr_t v)
{
	return (v & CHT_DELETED) != 0;
}

static inline bool is_dummy(const cht_node_t *n)
{
	return (n->hash & 1) == 0;
}

static inline uintptr_t load_next(const cht_node_t *n)
{
	return __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
}

static inline uint64_t bucket_start(size_t idx, size_t order)
{
	return (uint64_t) idx << (64 - order);
}

/**
 * An array of 2^@a order buckets (MIN_ORDER <= order) whose dummies carry
 * their hashes and are not linked yet.
 */
static cht_buckets_t *buckets_alloc(size_t order)
{
	size_t n = (size_t) 1 << order;
	cht_buckets_t *b = cht_env_malloc(sizeof(cht_buckets_t) +
	    n * sizeof(cht_node_t));
	if (!b)
		return NULL;
	b->order = order;
	b->shift = (unsigned) (64 - order);
	for (size_t i = 0; i < n; i++) {
		b->d[i].next = 0;
		b->d[i].hash = bucket_start(i, order);
	}
	return b;
}

/* Reclamation */

/**
 * RCU callback of an unlinked item: `op` was stored by the unlinking thread
 * (the item is no longer reachable for new traversals; old ones only read next
 * and hash).
 */
/* Model: verify/cht.pml */
void cht__node_reclaim(cht_env_rcu_item_t *rcu)
{
	cht_link_t *l = cht_link_of_rcu(rcu);
	if (l->op->remove_callback)  /* l->op: set by cht__unlinked_item() */
		l->op->remove_callback(l);
}

/* The list */

/** The dummy of @a hash's bucket in @a b. */
static inline cht_node_t *lookup_start(cht_buckets_t *b, uint64_t hash)
{
	return &b->d[hash >> b->shift];
}

/**
 * Links dummy @a d into the list after @a start (a node with a smaller or
 * equal hash, in the list): before the first node with a hash >= d's. Inside
 * a reader section (search() may unlink deleted nodes on the way).
 */
/* Model: verify/cht.pml */
static void dummy_link(cht_t *h, cht_node_t *start, cht_node_t *d)
{
	for (;;) {
		uintptr_t *prev;
		cht_node_t *cur;
		search(h, h->op, start, d->hash, false, &prev, &cur);
		__atomic_store_n(&d->next, (uintptr_t) cur, __ATOMIC_RELAXED);
		uintptr_t expected = (uintptr_t) cur;
		if (__atomic_compare_exchange_n(prev, &expected, (uintptr_t) d,
		    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
}

/**
 * Links every dummy of the unpublished array @a nb into the list, each after
 * the dummy of @a from (the published array) whose range holds its hash,
 * RESIZE_BATCH per reader section, so that a large resize never holds up a
 * grace period; or, with @a from NULL (cht_create(): a list of the head
 * alone that no other thread sees), chains them behind the head with plain
 * stores and no reader section. Resizer or cht_create() only.
 */
/* Model: verify/cht.pml */
static void dummies_link(cht_t *h, cht_buckets_t *nb, cht_buckets_t *from)
{
	size_t n = (size_t) 1 << nb->order;
	if (!from) {
		/*
		 * Creation: the list holds only the head and nobody else sees
		 * the table yet, so the dummies (sorted by hash already) are
		 * chained with plain stores, outside any reader section: creating
		 * a table needs no RCU reader, so in userspace no registered
		 * thread (memcached creates its table before it registers; a
		 * reader section here would abort it). cht_create()'s caller
		 * publishes the table after it returns.
		 */
		cht_env_assert(h->head.next == 0);
		for (size_t i = 0; i + 1 < n; i++)
			nb->d[i].next = (uintptr_t) &nb->d[i + 1];
		nb->d[n - 1].next = (uintptr_t) &h->tail;
		h->head.next = (uintptr_t) &nb->d[0];
		return;
	}
	for (size_t i = 0; i < n;) {
		cht_env_rcu_read_lock();
		for (size_t end = i + RESIZE_BATCH; i < end && i < n; i++) {
			cht_node_t *start = from ? lookup_start(from, nb->d[i].hash) :
			    (i ? &nb->d[i - 1] : &h->head);
			dummy_link(h, start, &nb->d[i]);
		}
		cht_env_rcu_read_unlock();
	}
}

/** RCU callback: frees a replaced bucket array (all its dummies unlinked). */
/* Model: verify/cht.pml */
static void buckets_reclaim(cht_env_rcu_item_t *rcu)
{
	cht_env_free((char *) rcu - offsetof(cht_buckets_t, rcu));
}

/**
 * Retires the replaced array @a old once @a nb is published and a grace period
 * has passed (no traversal starts at an old dummy any more): marks each old
 * dummy deleted and unlinks it with a search from the newest dummy before it
 * (a dummy of @a nb with a smaller hash, or the list head), RESIZE_BATCH per
 * reader section; then hands @a old to RCU, which frees it after another grace
 * period (no traversal stands on an old dummy any more). The resizer does not
 * wait for that one (a resize waited for two grace periods, which doubled the
 * time of the `cht` test's resize waves); cht_destroy()'s rcu_barrier() waits
 * for any such free still pending. Resizer only.
 */
/* Model: verify/cht.pml */
static void dummies_retire(cht_t *h, cht_buckets_t *old, cht_buckets_t *nb)
{
	size_t n = (size_t) 1 << old->order;
	for (size_t j = 0; j < n;) {
		cht_env_rcu_read_lock();
		for (size_t end = j + RESIZE_BATCH; j < end && j < n; j++) {
			cht_node_t *d = &old->d[j];
			(void) mark_deleted(d);
			cht_node_t *start = d->hash ?
			    lookup_start(nb, d->hash - 1) : &h->head;
			uintptr_t *prev;
			cht_node_t *cur;
			/* Passes d (hash <= d->hash) and unlinks it on its way. */
			search(h, h->op, start, d->hash, true, &prev, &cur);
		}
		cht_env_rcu_read_unlock();
	}
	cht_env_rcu_call(cht_env_rcu_item_of(&old->rcu), buckets_reclaim);
}

/**
 * Replaces the bucket array by one of 2^@a order buckets (see the file
 * comment). @return false without memory (the size stays). Resizer only.
 */
/* Model: verify/cht.pml */
static bool buckets_replace(cht_t *h, size_t order)
{
	cht_buckets_t *old = cht_env_rcu_access_owned(h->b);
	cht_buckets_t *nb = buckets_alloc(order);
	if (!nb)
		return false;
	dummies_link(h, nb, old);
	cht_env_rcu_assign(h->b, nb);
	cht_env_rcu_synchronize();
	dummies_retire(h, old, nb);
	return true;
}

/* Resizing */

static void resize_work(cht_env_work_t *work);

static void request_resize(cht_t *h)
{
	if (__atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
		return;
	/* One request in flight: only the first of a burst enqueues the work. */
	if (__atomic_fetch_add(&h->resize_reqs, 1, __ATOMIC_ACQ_REL) == 0) {
		/*
		 * Updates run inside reader sections, which must not sleep: always
		 * the non-blocking enqueue here.
		 */
		if (!cht_env_work_enqueue(&h->resize_work, resize_work, false)) {
			/*
			 * No work is queued, so nobody will count the requests
			 * down: drop all of them, including those that other
			 * threads added meanwhile (they saw a non-zero count and
			 * left the enqueue to us). Only subtracting our own
			 * request would leave the count above zero for good: no
			 * resize ever again and cht_destroy() waiting forever.
			 * The next update past a threshold requests again.
			 */
			__atomic_store_n(&h->resize_reqs, 0, __ATOMIC_RELEASE);
		}
	}
}

/** Items above which a table of 2^@a order buckets grows. */
static inline size_t grow_limit(cht_t *h, size_t order)
{
	return (__atomic_load_n(&h->grow_load, __ATOMIC_ACQUIRE) << order) >>
	    CHT_LOAD_SHIFT;
}

/** @a max_load items per bucket in CHT_LOAD_ONE units, clamped. */
static inline size_t load_of(size_t max_load)
{
	if (max_load > CHT_MAX_LOAD_LIMIT)
		max_load = CHT_MAX_LOAD_LIMIT;
	return max_load << CHT_LOAD_SHIFT;
}

void cht__check_grow(cht_t *h, cht_buckets_t *b, int64_t items)
{
	if (items > (int64_t) grow_limit(h, b->order) && b->order < MAX_ORDER)
		request_resize(h);
}

void cht__check_shrink(cht_t *h, cht_buckets_t *b, int64_t items)
{
	if (b->order > h->min_order && items < (int64_t) (grow_limit(h, b->order) / 4))
		request_resize(h);
}

/* The split item count */

void cht__count_fold(cht_t *h, int64_t *slot, int64_t v, cht_buckets_t *b)
{
	/* Moves exactly v: the sum of item_cnt and the slots stays the count. */
	__atomic_fetch_sub(slot, v, __ATOMIC_RELAXED);
	int64_t items = __atomic_add_fetch(&h->item_cnt, v, __ATOMIC_RELAXED);
	if (v > 0)
		cht__check_grow(h, b, items);
	else
		cht__check_shrink(h, b, items);
}

/** Largest and smallest fold threshold of a count slot. */
#define CNT_BATCH_MAX 64
#define CNT_BATCH_MIN 8

/**
 * The item count: item_cnt plus every slot's delta, clamped at 0 (a sum read
 * while updates run can be off by their in-flight deltas either way; it is
 * exact when no update runs). Any context.
 */
static int64_t count_sum_raw(cht_t *h)
{
	int64_t sum = __atomic_load_n(&h->item_cnt, __ATOMIC_RELAXED);
	for (size_t i = 0; h->cnt_slots && i < h->cnt_nslots; i++)
		sum += __atomic_load_n(&h->cnt_slots[i].delta, __ATOMIC_RELAXED);
	return sum;
}

static int64_t count_sum(cht_t *h)
{
	int64_t sum = count_sum_raw(h);
	return sum < 0 ? 0 : sum;
}

/**
 * Chooses the fold threshold for a table of 2^@a order buckets: the sum of
 * the deltas that are not yet in item_cnt stays below 1/8 of the grow limit
 * (so a resize is requested at most that late), at most CNT_BATCH_MAX per
 * slot; below CNT_BATCH_MIN the table counts in item_cnt directly. When the
 * count goes back to item_cnt alone, the slots are drained into it (an
 * update that still saw the old threshold may leave a small delta behind;
 * the next fold or drain takes it). Resizer and cht_create() only.
 */
static void count_rebatch(cht_t *h, size_t order)
{
	if (!h->cnt_slots)
		return;
	size_t batch = grow_limit(h, order) / (8 * h->cnt_nslots);
	if (batch > CNT_BATCH_MAX)
		batch = CNT_BATCH_MAX;
	if (batch < CNT_BATCH_MIN)
		batch = 0;
	__atomic_store_n(&h->cnt_batch, batch, __ATOMIC_RELAXED);
	if (batch == 0) {
		for (size_t i = 0; i < h->cnt_nslots; i++) {
			int64_t v = __atomic_exchange_n(&h->cnt_slots[i].delta, 0,
			    __ATOMIC_RELAXED);
			__atomic_fetch_add(&h->item_cnt, v, __ATOMIC_RELAXED);
		}
	}
}

/** Doubles the bucket array. Resizer only (the resize work). */
static void grow(cht_t *h)
{
	/* Without memory the size stays; the next request tries again. */
	if (buckets_replace(h, cht_env_rcu_access_owned(h->b)->order + 1))
		__atomic_fetch_add(&h->stat_grows, 1, __ATOMIC_RELAXED);
}

/** Halves the bucket array. Resizer only. */
static void shrink(cht_t *h)
{
	if (buckets_replace(h, cht_env_rcu_access_owned(h->b)->order - 1))
		__atomic_fetch_add(&h->stat_shrinks, 1, __ATOMIC_RELAXED);
}

/**
 * Resizes until the item count fits the thresholds (one resize at a time).
 *
 * A table grows above its grow limit and starts to shrink below a quarter of
 * it (the hysteresis: a grow leaves half the limit, so neither is undone by
 * a few updates). An automatic shrink, once started, goes on halving while
 * the halved table still holds the items within its grow limit, so after a
 * mass delete the table has the size a growth to the same count reaches
 * (load above half the limit), as cds_lfht's shrink to its count does.
 * Stopping at the quarter instead left up to 4 times the buckets a grown
 * table has (2^14 keys deleted to 2^11: 8192 buckets, not 2048;
 * bench/RESULTS.md, "Big-Memory harness"). A forced resize (a new limit,
 * cht_set_max_load*(), cht_resize()) stops at the quarter: it moves the table
 * the fewest steps into the band, which the resize experiments rely on (one
 * halving from a limit that only the larger size exceeds).
 */
static void resize_once(cht_t *h)
{
	/* An automatic shrink is under way: halve down to the grow limit. */
	bool shrinking = false;
	for (int steps = 0; steps < 2 * MAX_ORDER;) {
		int64_t items = count_sum(h);
		cht_buckets_t *b = cht_env_rcu_access_owned(h->b);
		bool forced = __atomic_load_n(&h->resize_forced, __ATOMIC_ACQUIRE);
		if (items > (int64_t) grow_limit(h, b->order) && b->order < MAX_ORDER) {
			grow(h);
			h->last_grow_ms = cht_env_now_ms();
			shrinking = false;
		} else if (b->order > h->min_order &&
		    (items < (int64_t) (grow_limit(h, b->order) / 4) ||
		    (shrinking && !forced &&
		    items <= (int64_t) grow_limit(h, b->order - 1)))) {
			if (!forced && cht_env_now_ms() - h->last_grow_ms <
			    CHT_SHRINK_HOLDOFF_MS) {
				/* Not counted as a step: re-check after a pause. */
				cht_env_sleep_ms(CHT_HOLDOFF_POLL_MS);
				if (__atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
					break;
				continue;
			}
			shrink(h);
			shrinking = !forced;
		} else {
			break;
		}
		steps++;
		/* The fold threshold follows the size at once. */
		count_rebatch(h, cht_env_rcu_access_owned(h->b)->order);
		if (__atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
			break;
	}
	/* The size fits: a later automatic shrink waits out the hold-off. */
	__atomic_store_n(&h->resize_forced, false, __ATOMIC_RELEASE);
	count_rebatch(h, cht_env_rcu_access_owned(h->b)->order);
}

static void resize_work(cht_env_work_t *work)
{
	cht_t *h = (cht_t *) ((char *) work - offsetof(cht_t, resize_work));
	do {
		resize_once(h);
	} while (__atomic_sub_fetch(&h->resize_reqs, 1, __ATOMIC_ACQ_REL) > 0);
}

/* API */

int cht_create_named(cht_t *h, const char *name, size_t init_size,
    size_t min_size, size_t max_load, const cht_ops_t *op)
{
	if (!h || !op || !op->hash || !op->key_hash || !op->equal ||
	    !op->key_equal)
		return CHT_EINVAL;
	size_t min_order = MIN_ORDER;
	while (((size_t) 1 << min_order) < min_size && min_order < MAX_ORDER)
		min_order++;
	size_t order = min_order;
	while (((size_t) 1 << order) < init_size && order < MAX_ORDER)
		order++;
	cht_env_memset(h, 0, sizeof(*h));
	h->op = op;
	h->min_order = min_order;
	h->grow_load = load_of(max_load ? max_load : DEFAULT_MAX_LOAD);
	h->name = name ? name : "cht";
	h->head.hash = 0;
	h->head.next = 0;
	h->tail.hash = CHT_TAIL_HASH;
	h->tail.next = 0;
	cht_buckets_t *b = buckets_alloc(order);
	if (!b)
		return CHT_ENOMEM;
	/* Nobody else sees the table yet: linked without reader sections. */
	dummies_link(h, b, NULL);
	cht_env_rcu_init_ptr(h->b, b);
#ifdef CHT_ENV_CNT_SLOTS
	/*
	 * Without memory for the slots the table counts in item_cnt alone. The
	 * allocators align to 16 bytes only: the slots are placed on a 64-byte
	 * boundary inside a larger block, or two CPUs' slots would share a cache
	 * line (which held ht-upd/cht at 20 % to no gain from a second CPU).
	 */
	h->cnt_nslots = cht_env_cnt_nslots();
	h->cnt_mem = cht_env_malloc((h->cnt_nslots + 1) *
	    sizeof(cht_cnt_slot_t));
	h->cnt_slots = h->cnt_mem ? (cht_cnt_slot_t *) (((uintptr_t) h->cnt_mem +
	    sizeof(cht_cnt_slot_t) - 1) & ~(uintptr_t) (sizeof(cht_cnt_slot_t) - 1)) :
	    NULL;
	if (h->cnt_slots) {
		cht_env_memset(h->cnt_slots, 0, h->cnt_nslots *
		    sizeof(cht_cnt_slot_t));
		count_rebatch(h, order);
	}
#endif
	cht_env_registry_add(&h->reg_link);
	return CHT_OK;
}

int cht_create(cht_t *h, size_t init_size, size_t min_size, size_t max_load,
    const cht_ops_t *op)
{
	return cht_create_named(h, NULL, init_size, min_size, max_load, op);
}

int cht_destroy(cht_t *h)
{
	if (!h || !cht_env_rcu_access(h->b))
		return CHT_EINVAL;
	/* No update runs any more (the caller's promise): the sum is exact. */
	if (count_sum(h) != 0)
		return CHT_EBUSY;
	__atomic_store_n(&h->destroying, true, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0)
		cht_env_sleep_ms(1);
	cht_env_registry_remove(&h->reg_link);

	/* Unlink (and hand to RCU) every deleted item still in the list. */
	cht_env_rcu_read_lock();
	uintptr_t *prev;
	cht_node_t *cur;
	search(h, h->op, &h->head, CHT_TAIL_HASH, false, &prev, &cur);
	cht_env_rcu_read_unlock();
	/* Every remove callback has run after this. */
	cht_env_rcu_barrier();

	/* Only the dummies of h->b remain (the table is empty), then the tail. */
	size_t left = 0;
	for (cht_node_t *n = ptr_of(h->head.next); n != &h->tail;
	    n = ptr_of(n->next)) {
		cht_env_assert(is_dummy(n));
		left++;
	}
	cht_env_assert(left ==
	    (size_t) 1 << cht_env_rcu_access_owned(h->b)->order);
	(void) left;
	h->head.next = 0;
	cht_env_free(cht_env_rcu_access_owned(h->b));
	cht_env_rcu_init_ptr(h->b, NULL);
	cht_env_free(h->cnt_mem);
	h->cnt_mem = NULL;
	h->cnt_slots = NULL;
	return CHT_OK;
}

void cht_insert(cht_t *h, cht_link_t *item)
{
	(void) cht__insert(h, item, false, NULL, h->op);
}

bool cht_insert_unique(cht_t *h, cht_link_t *item, cht_link_t **dup_item)
{
	return cht__insert(h, item, true, dup_item, h->op);
}

cht_link_t *cht_find(cht_t *h, void *key)
{
	/* The generic lookup: the same walk with the table's ops called through
	 * pointers. */
	return cht_find_fast(h, key, h->op);
}

cht_link_t *cht_find_lazy(cht_t *h, void *key)
{
	return cht_find(h, key);
}

cht_link_t *cht_find_next(cht_t *h, void *key, const cht_link_t *item)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_node_t *n = ptr_of(load_next(&item->n));
	while (n && n->hash == item->n.hash) {
		uintptr_t nx = load_next(n);
		if (!is_deleted(nx) && h->op->key_equal(key, cht_link_of(n)))
			return cht_link_of(n);
		n = ptr_of(nx);
	}
	return NULL;
}

cht_link_t *cht_find_next_equal(cht_t *h, const cht_link_t *item)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_node_t *n = ptr_of(load_next(&item->n));
	while (n && n->hash == item->n.hash) {
		uintptr_t nx = load_next(n);
		if (!is_deleted(nx) && h->op->equal(cht_link_of(n), item))
			return cht_link_of(n);
		n = ptr_of(nx);
	}
	return NULL;
}

/* Model: verify/cht.pml */
void cht__cleanup(cht_t *h, uint64_t hash)
{
	cht_buckets_t *b = cht_env_rcu_access(h->b);
	uintptr_t *prev;
	cht_node_t *cur;
	search(h, h->op, lookup_start(b, hash), hash, true, &prev, &cur);
}

size_t cht_remove_key(cht_t *h, void *key)
{
	return cht__remove_key(h, key, h->op);
}

bool cht_remove_item(cht_t *h, cht_link_t *item)
{
	cht_env_assert(cht_env_rcu_read_locked());
	if (!mark_deleted(&item->n))
		return false;
	cht__count_add(h, -1, false, cht_env_rcu_access(h->b));
	cht__cleanup(h, item->n.hash);
	return true;
}

/** Sets the grow load (CHT_LOAD_ONE units) and asks for a forced resize. */
static void set_grow_load(cht_t *h, size_t load)
{
	__atomic_store_n(&h->grow_load, load, __ATOMIC_RELEASE);
	__atomic_store_n(&h->resize_forced, true, __ATOMIC_RELEASE);
	request_resize(h);
}

void cht_set_max_load(cht_t *h, size_t max_load)
{
	if (!h || max_load == 0)
		return;
	set_grow_load(h, load_of(max_load));
}

int cht_set_max_load_frac(cht_t *h, size_t num, size_t den)
{
	/* den bounded: (num % den) << CHT_LOAD_SHIFT must not overflow. */
	if (!h || den == 0 || den > ((size_t) -1 >> CHT_LOAD_SHIFT))
		return CHT_EINVAL;
	size_t load;
	if (num / den >= CHT_MAX_LOAD_LIMIT)
		load = load_of(CHT_MAX_LOAD_LIMIT);
	else
		load = (num / den << CHT_LOAD_SHIFT) +
		    ((num % den) << CHT_LOAD_SHIFT) / den;
	if (load == 0)
		return CHT_EINVAL;
	set_grow_load(h, load);
	return CHT_OK;
}

#ifdef CHT_ENV_CREATE_LOAD
int cht_create_load(cht_t *h, const char *name, size_t init_size,
    size_t min_size, size_t load_num, size_t load_den, const cht_ops_t *op)
{
	if (load_den == 0 || load_den > ((size_t) -1 >> CHT_LOAD_SHIFT))
		return CHT_EINVAL;
	/* In CHT_LOAD_ONE units, rounded down, clamped; the shift of the
	 * remainder (< load_den) cannot overflow. */
	size_t whole = load_num / load_den;
	size_t load = whole >= CHT_MAX_LOAD_LIMIT ? load_of(CHT_MAX_LOAD_LIMIT) :
	    load_of(whole) + ((load_num % load_den) << CHT_LOAD_SHIFT) / load_den;
	if (load == 0)
		return CHT_EINVAL;
	int rc = cht_create_named(h, name, init_size, min_size, 1, op);
	if (rc != CHT_OK)
		return rc;
	/*
	 * Nobody else sees the table yet: a plain store, and the count's fold
	 * threshold follows the limit (cht_create_named() chose it for 1).
	 */
	h->grow_load = load;
	count_rebatch(h, cht_env_rcu_access_owned(h->b)->order);
	return CHT_OK;
}
#endif

int cht_resize(cht_t *h, size_t max_load)
{
	if (!h || max_load == 0 || __atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
		return CHT_EINVAL;
	__atomic_store_n(&h->grow_load, load_of(max_load), __ATOMIC_RELEASE);
	__atomic_store_n(&h->resize_forced, true, __ATOMIC_RELEASE);
	for (;;) {
		/*
		 * Take the resizer's role the way the first request does (0 -> 1),
		 * but run the work here instead of enqueuing it. Requests that
		 * arrive meanwhile see a non-zero count and leave the work to us.
		 */
		size_t idle = 0;
		if (__atomic_compare_exchange_n(&h->resize_reqs, &idle, 1, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			do {
				resize_once(h);
			} while (__atomic_sub_fetch(&h->resize_reqs, 1,
			    __ATOMIC_ACQ_REL) > 0);
			return CHT_OK;
		}
		/* A resize is in flight on the work queue: let it finish. */
		cht_env_sleep_ms(1);
	}
}

size_t cht_count(cht_t *h)
{
	return (size_t) count_sum(h);
}

int64_t cht_count_raw(cht_t *h, bool *split)
{
	if (split)
		*split = __atomic_load_n(&h->cnt_batch, __ATOMIC_RELAXED) != 0;
	return count_sum_raw(h);
}

void cht_get_stats(cht_t *h, cht_stats_t *st)
{
	/* The bucket array may be freed by a concurrent resize. */
	cht_env_rcu_read_lock();
	cht_buckets_t *b = cht_env_rcu_access(h->b);
	st->items = (size_t) count_sum(h);
	st->buckets = b ? (size_t) 1 << b->order : 0;
	st->dummies = st->buckets;  /* one per bucket, in the bucket array */
	st->grows = __atomic_load_n(&h->stat_grows, __ATOMIC_RELAXED);
	st->shrinks = __atomic_load_n(&h->stat_shrinks, __ATOMIC_RELAXED);
	st->resizing = __atomic_load_n(&h->resize_reqs, __ATOMIC_RELAXED) != 0;
	cht_env_rcu_read_unlock();
}

static void print_one(cht_env_link_t *link)
{
	cht_t *h = (cht_t *) ((char *) link - offsetof(cht_t, reg_link));
	cht_stats_t st;
	cht_get_stats(h, &st);
	size_t load10 = st.buckets ? st.items * 10 / st.buckets : 0;
	cht_env_printf("%-16s %10zu %10zu %6zu.%zu  %8zu %6lu %7lu  %s\n", h->name,
	    st.items, st.buckets, load10 / 10, load10 % 10, st.dummies,
	    (unsigned long) st.grows, (unsigned long) st.shrinks,
	    st.resizing ? "yes" : "no");
}

void cht_print_tables(void)
{
	cht_env_printf("%-16s %10s %10s %8s  %8s %6s %7s  %s\n", "table", "items",
	    "buckets", "load", "dummies", "grows", "shrinks", "resizing");
	cht_env_registry_foreach(print_one);
}
