/** @file cht.c
 * Concurrent hash table: a relativistic split-ordered list (see adt/cht.h).
 *
 * This file is shared by the kernel and the userspace library: it uses only
 * adt/cht_env.h for RCU, deferred work, allocation and assertions.
 *
 * Data layout
 * -----------
 * One list of nodes sorted by `hash` ascending. Item hashes are odd (mixed hash
 * | 1), dummy hashes are even: the dummy of bucket i at order k has hash
 * i << (64 - k), the first value of the bucket's range, so a dummy and an item
 * never compare equal and the dummy of a range precedes all its items. A dummy
 * serves every order at which its hash starts a bucket (bucket i at order k and
 * bucket 2i at order k + 1 share it). h->head is the dummy of hash 0.
 *
 * The bucket array (h->b) maps bucket index -> dummy, and every entry of a
 * published array is filled: grow() inserts the new buckets' dummies into the
 * list while lookups and updates still use the smaller array, and publishes
 * the larger one only then (cht_create() fills the first array the same way).
 * So a lookup or an update finds its bucket's dummy with one load and never
 * falls back to a parent bucket or inserts a dummy itself (in Shalev and
 * Shavit's lazy initialization, which this table used before, a lookup right
 * after a grow walked from the parent bucket: twice the chain).
 *
 * Marks: bit 0 of a node's `next` (CHT_DELETED) is the logical deletion of that
 * node (Michael 2002; Harris 2001). A marked `next` is never changed again, so
 * nothing is inserted right after a deleted node. A deleted node is unlinked by
 * whoever first succeeds in the CAS on its predecessor's `next`; that thread
 * hands it to RCU (user items to ops->remove_callback, dummies to free).
 *
 * Memory ordering
 * ---------------
 * - Publication: a new node's hash and next are written with plain/relaxed
 *   stores before the release CAS that links it; readers load every `next` with
 *   acquire, so the hash and the user's fields of a node are visible once the
 *   pointer to it is. (x86-64 needs no fence for either; the orders document
 *   the requirement and keep the compiler honest.)
 * - The bucket array is published with rcu_assign (release) and read with
 *   rcu_access (acquire); its entries are written by CAS (release) and read with
 *   acquire for the same reason as `next`.
 * - Reclamation: an unlinked node is passed to the environment's rcu_call, so
 *   it stays valid for every reader section that may still hold it; the old
 *   bucket array is freed after rcu_synchronize.
 * - Resize: grow publishes the new array and needs one grace period before the
 *   old one is freed. Shrink publishes the smaller array, waits a grace period
 *   (after it no updater can take a dummy of a dropped bucket as its start any
 *   more), then deletes those dummies like ordinary nodes.
 */
#include <adt/cht.h>

#define CHT_DELETED   CHT_LINK_DELETED
#define CHT_MARKS     CHT_LINK_MARKS
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

static inline bool is_dummy(const cht_link_t *n)
{
	return (n->hash & 1) == 0;
}

static inline uintptr_t load_next(cht_link_t *n)
{
	return __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
}

static inline uint64_t bucket_start(size_t idx, size_t order)
{
	return (uint64_t) idx << (64 - order);
}

/** An array of 2^@a order buckets (MIN_ORDER <= order), entries still empty. */
static cht_buckets_t *buckets_alloc(size_t order)
{
	size_t n = (size_t) 1 << order;
	cht_buckets_t *b = cht_env_malloc(sizeof(cht_buckets_t) +
	    n * sizeof(cht_link_t *));
	if (!b)
		return NULL;
	b->order = order;
	b->shift = (unsigned) (64 - order);
	cht_env_memset(b->head, 0, n * sizeof(cht_link_t *));
	return b;
}

/* Reclamation */

/**
 * RCU callback of an unlinked node: `reclaim_op` was stored by the unlinking
 * thread (the node is no longer reachable for new traversals; old ones only
 * read next and hash).
 */
void cht__node_reclaim(cht_env_rcu_item_t *rcu)
{
	cht_link_t *n = (cht_link_t *) ((char *) rcu - offsetof(cht_link_t, rcu));
	if (is_dummy(n))
		cht_env_free(n);
	else if (n->op->remove_callback)  /* n->op: set by cht__unlinked() */
		n->op->remove_callback(n);
}

/* The list */

/** The dummy of @a hash's bucket in @a b (every published entry is set). */
static inline cht_link_t *lookup_start(cht_buckets_t *b, uint64_t hash)
{
	return __atomic_load_n(&b->head[hash >> b->shift], __ATOMIC_ACQUIRE);
}

/**
 * Puts a dummy with hash @a key into the list after @a parent (a dummy with a
 * smaller hash) unless it is there already. Called by the resizer (and by
 * cht_create()) for a bucket array that is not yet published, inside a reader
 * section (search() may unlink and reclaim deleted nodes on the way).
 * @return the dummy, or NULL without memory.
 */
static cht_link_t *dummy_insert(cht_t *h, cht_link_t *parent, uint64_t key)
{
	cht_link_t *fresh = NULL;
	for (;;) {
		uintptr_t *prev;
		cht_link_t *cur;
		search(h, parent, key, false, &prev, &cur);
		if (cur && cur->hash == key) {
			/* Left in the list by an earlier grow that ran out of memory. */
			if (fresh)
				cht_env_free(fresh);
			return cur;
		}
		if (!fresh) {
			fresh = cht_env_malloc(sizeof(cht_link_t));
			if (!fresh)
				return NULL;
			fresh->hash = key;
			fresh->op = NULL;
		}
		__atomic_store_n(&fresh->next, (uintptr_t) cur, __ATOMIC_RELAXED);
		uintptr_t expected = (uintptr_t) cur;
		if (__atomic_compare_exchange_n(prev, &expected, (uintptr_t) fresh,
		    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			__atomic_fetch_add(&h->stat_dummies, 1, __ATOMIC_RELAXED);
			return fresh;
		}
	}
}

/**
 * Fills the odd entries of @a nb (order k + 1) whose even entries are set:
 * inserts each new bucket's dummy after its parent's (bucket i - 1),
 * RESIZE_BATCH per reader section so that a large grow never holds up a grace
 * period. @return false without memory or when the table is being destroyed
 * (the dummies inserted so far stay in the list: they are correct, and the
 * next grow finds them).
 */
static bool buckets_fill(cht_t *h, cht_buckets_t *nb)
{
	size_t n = (size_t) 1 << nb->order;
	for (size_t i = 1; i < n;) {
		if (__atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
			return false;
		bool ok = true;
		cht_env_rcu_read_lock();
		for (size_t end = i + 2 * RESIZE_BATCH; i < end && i < n; i += 2) {
			cht_link_t *d = dummy_insert(h, nb->head[i - 1],
			    bucket_start(i, nb->order));
			if (!d) {
				ok = false;
				break;
			}
			nb->head[i] = d;
		}
		cht_env_rcu_read_unlock();
		if (!ok)
			return false;
	}
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

static inline size_t grow_limit(cht_t *h, size_t order)
{
	return __atomic_load_n(&h->max_load, __ATOMIC_ACQUIRE) << order;
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

/** Largest and smallest fold threshold of a count slot. */
#define CNT_BATCH_MAX 64
#define CNT_BATCH_MIN 8

/**
 * The item count: item_cnt plus every slot's delta, clamped at 0 (a sum read
 * while updates run can be off by their in-flight deltas either way; it is
 * exact when no update runs). Any context.
 */
static int64_t count_sum(cht_t *h)
{
	int64_t sum = __atomic_load_n(&h->item_cnt, __ATOMIC_RELAXED);
	for (size_t i = 0; h->cnt_slots && i < h->cnt_nslots; i++)
		sum += __atomic_load_n(&h->cnt_slots[i].delta, __ATOMIC_RELAXED);
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

/**
 * Doubles the bucket array: the new array is filled completely (every new
 * bucket's dummy inserted into the list) before it is published, so lookups
 * never see an empty bucket; then one grace period before the old array is
 * freed. Resizer only (the resize work).
 */
static void grow(cht_t *h)
{
	cht_buckets_t *old = h->b;
	cht_buckets_t *nb = buckets_alloc(old->order + 1);
	if (!nb)
		return;  /* no memory: keep the current size, try at the next request */
	size_t n = (size_t) 1 << old->order;
	for (size_t i = 0; i < n; i++)
		nb->head[2 * i] = old->head[i];
	if (!buckets_fill(h, nb)) {
		cht_env_free(nb);
		return;
	}
	__atomic_store_n(&h->b, nb, __ATOMIC_RELEASE);
	cht_env_rcu_synchronize();
	cht_env_free(old);
	__atomic_fetch_add(&h->stat_grows, 1, __ATOMIC_RELAXED);
}

/**
 * Halves the bucket array: publishes the smaller array (the even entries), waits
 * one grace period (after it no lookup or update starts from a dummy of an odd
 * old bucket any more), then deletes those dummies like ordinary nodes,
 * RESIZE_BATCH per reader section. Resizer only.
 */
static void shrink(cht_t *h)
{
	cht_buckets_t *old = h->b;
	cht_buckets_t *nb = buckets_alloc(old->order - 1);
	if (!nb)
		return;
	size_t n = (size_t) 1 << nb->order;
	for (size_t i = 0; i < n; i++)
		nb->head[i] = old->head[2 * i];
	__atomic_store_n(&h->b, nb, __ATOMIC_RELEASE);
	cht_env_rcu_synchronize();
	for (size_t i = 1; i < 2 * n;) {
		cht_env_rcu_read_lock();
		for (size_t end = i + 2 * RESIZE_BATCH; i < end && i < 2 * n; i += 2) {
			cht_link_t *d = old->head[i];
			if (!mark_deleted(d))
				continue;
			uintptr_t *prev;
			cht_link_t *cur;
			/* Unlink it (search removes deleted nodes on its way). */
			search(h, lookup_start(nb, d->hash), d->hash, true, &prev,
			    &cur);
			__atomic_fetch_sub(&h->stat_dummies, 1, __ATOMIC_RELAXED);
		}
		cht_env_rcu_read_unlock();
	}
	cht_env_free(old);
	__atomic_fetch_add(&h->stat_shrinks, 1, __ATOMIC_RELAXED);
}

/** Resizes until the item count fits the thresholds (one resize at a time). */
static void resize_once(cht_t *h)
{
	for (int steps = 0; steps < 2 * MAX_ORDER;) {
		int64_t items = count_sum(h);
		cht_buckets_t *b = h->b;
		if (items > (int64_t) grow_limit(h, b->order) && b->order < MAX_ORDER) {
			grow(h);
			h->last_grow_ms = cht_env_now_ms();
		} else if (b->order > h->min_order &&
		    items < (int64_t) (grow_limit(h, b->order) / 4)) {
			if (!__atomic_load_n(&h->resize_forced, __ATOMIC_ACQUIRE) &&
			    cht_env_now_ms() - h->last_grow_ms <
			    CHT_SHRINK_HOLDOFF_MS) {
				/* Not counted as a step: re-check after a pause. */
				cht_env_sleep_ms(CHT_HOLDOFF_POLL_MS);
				if (__atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
					break;
				continue;
			}
			shrink(h);
		} else {
			break;
		}
		steps++;
		/* The fold threshold follows the size at once. */
		count_rebatch(h, h->b->order);
		if (__atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
			break;
	}
	/* The size fits: a later automatic shrink waits out the hold-off. */
	__atomic_store_n(&h->resize_forced, false, __ATOMIC_RELEASE);
	count_rebatch(h, h->b->order);
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
	h->max_load = max_load ? max_load : DEFAULT_MAX_LOAD;
	h->name = name ? name : "cht";
	h->head.hash = 0;
	h->head.next = 0;
	cht_buckets_t *b = buckets_alloc(order);
	if (!b)
		return CHT_ENOMEM;
	b->head[0] = &h->head;
	/* Every bucket's dummy, each after its parent's (a smaller index). */
	for (size_t i = 1; i < ((size_t) 1 << order); i++) {
		b->head[i] = dummy_insert(h, b->head[i & (i - 1)],
		    bucket_start(i, order));
		if (!b->head[i]) {
			for (cht_link_t *d = ptr_of(h->head.next); d;) {
				cht_link_t *next = ptr_of(d->next);
				cht_env_free(d);
				d = next;
			}
			cht_env_free(b);
			return CHT_ENOMEM;
		}
	}
	h->b = b;
#ifdef CHT_ENV_CNT_SLOTS
	/* Without memory for the slots the table counts in item_cnt alone. */
	h->cnt_nslots = cht_env_cnt_nslots();
	h->cnt_slots = cht_env_malloc(h->cnt_nslots * sizeof(cht_cnt_slot_t));
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
	if (!h || !__atomic_load_n(&h->b, __ATOMIC_ACQUIRE))
		return CHT_EINVAL;
	/* No update runs any more (the caller's promise): the sum is exact. */
	if (count_sum(h) != 0)
		return CHT_EBUSY;
	__atomic_store_n(&h->destroying, true, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0)
		cht_env_sleep_ms(1);
	cht_env_registry_remove(&h->reg_link);

	/* Unlink (and hand to RCU) every deleted node still in the list. */
	cht_env_rcu_read_lock();
	uintptr_t *prev;
	cht_link_t *cur;
	search(h, &h->head, UINT64_MAX, true, &prev, &cur);
	cht_env_rcu_read_unlock();
	/* Every remove callback and node reclaim has run after this. */
	cht_env_rcu_barrier();

	/* Only live dummies remain (the table is empty). */
	cht_link_t *n = ptr_of(h->head.next);
	while (n) {
		cht_link_t *next = ptr_of(n->next);
		cht_env_assert(is_dummy(n));
		cht_env_free(n);
		n = next;
	}
	h->head.next = 0;
	cht_env_free(h->b);
	h->b = NULL;
	cht_env_free(h->cnt_slots);
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
	cht_link_t *n = ptr_of(load_next((cht_link_t *) item));
	while (n && n->hash == item->hash) {
		uintptr_t nx = load_next(n);
		if (!is_deleted(nx) && h->op->key_equal(key, n))
			return n;
		n = ptr_of(nx);
	}
	return NULL;
}

cht_link_t *cht_find_next_equal(cht_t *h, const cht_link_t *item)
{
	cht_env_assert(cht_env_rcu_read_locked());
	cht_link_t *n = ptr_of(load_next((cht_link_t *) item));
	while (n && n->hash == item->hash) {
		uintptr_t nx = load_next(n);
		if (!is_deleted(nx) && h->op->equal(n, item))
			return n;
		n = ptr_of(nx);
	}
	return NULL;
}

void cht__cleanup(cht_t *h, uint64_t hash)
{
	cht_buckets_t *b = __atomic_load_n(&h->b, __ATOMIC_ACQUIRE);
	uintptr_t *prev;
	cht_link_t *cur;
	search(h, lookup_start(b, hash), hash, true, &prev, &cur);
}

size_t cht_remove_key(cht_t *h, void *key)
{
	return cht__remove_key(h, key, h->op);
}

bool cht_remove_item(cht_t *h, cht_link_t *item)
{
	cht_env_assert(cht_env_rcu_read_locked());
	if (!mark_deleted(item))
		return false;
	cht_buckets_t *b = __atomic_load_n(&h->b, __ATOMIC_ACQUIRE);
	int64_t items = 0;
	bool check = cht__count(h, -1, &items);
	cht__cleanup(h, item->hash);
	if (check)
		cht__check_shrink(h, b, items);
	return true;
}

void cht_set_max_load(cht_t *h, size_t max_load)
{
	if (!h || max_load == 0)
		return;
	__atomic_store_n(&h->max_load, max_load, __ATOMIC_RELEASE);
	__atomic_store_n(&h->resize_forced, true, __ATOMIC_RELEASE);
	request_resize(h);
}

int cht_resize(cht_t *h, size_t max_load)
{
	if (!h || max_load == 0 || __atomic_load_n(&h->destroying, __ATOMIC_ACQUIRE))
		return CHT_EINVAL;
	__atomic_store_n(&h->max_load, max_load, __ATOMIC_RELEASE);
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

void cht_get_stats(cht_t *h, cht_stats_t *st)
{
	/* The bucket array may be freed by a concurrent resize. */
	cht_env_rcu_read_lock();
	cht_buckets_t *b = __atomic_load_n(&h->b, __ATOMIC_ACQUIRE);
	st->items = (size_t) count_sum(h);
	st->buckets = b ? (size_t) 1 << b->order : 0;
	st->dummies = __atomic_load_n(&h->stat_dummies, __ATOMIC_RELAXED);
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
