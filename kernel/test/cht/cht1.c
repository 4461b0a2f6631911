/** @file cht1.c
 * Concurrent hash table test `cht` (the seed's name): a single-threaded sanity
 * sequence, then a stress run of concurrent updaters and resize waves.
 *
 * Hashes collide on purpose: ops->hash is (key >> 3) & 1023, so eight
 * neighbouring keys (which belong to different threads in the stress run) and
 * keys 8192 apart share a hash; key_equal decides within the runs of equal
 * hashes. This exercises insertion before an equal-hash run, the unique check
 * over the run, find_next and remove_key inside runs that other threads change.
 *
 * Sanity (one thread, its own table; the sequence is kernel/test/cht/
 * cht_sanity.c, which the userspace tests run too): insert, lookups (present, absent, same
 * hash different key), duplicates (cht_find_next and cht_find_next_equal see
 * each exactly once), cht_insert_unique refusing a duplicate and returning it,
 * cht_remove_item (true once, then false), cht_remove_key returning the count
 * and removing only matching keys of an equal-hash run, cht_destroy refusing a
 * non-empty table, every remove callback exactly once after rcu_barrier(), and
 * the table empty at the end.
 *
 * Stress: max(4, CPUs) worker threads wired round-robin to the online CPUs.
 * Worker w owns keys w + n * k (n workers, k < CHT1_KEYS) and keeps exact
 * bookkeeping of its items (up to CHT1_DUPS duplicates per key); nobody else
 * touches those keys, so its view is exact while everyone runs. Each worker
 * does random operations, each in its own reader section: find (walking all
 * duplicates with cht_find_next / cht_find_next_equal: exactly the items it
 * holds, each once), insert (duplicates; found right after), insert-unique
 * (refused with one of its items as the duplicate iff it holds the key),
 * remove-key (returns the count it holds), remove-item (true, then false for
 * a second remove), and lookups of keys it never inserts (must miss).
 * CHT1_RESIZERS resizer threads (not wired) each insert waves of CHT1_WAVE
 * items of their own keys (sharing hashes with the workers' keys), let the
 * table grow, check that every item is found, remove them all (remove-key and
 * remove-item alternately) and let it shrink, CHT1_WAVES times. The workers do
 * at least CHT1_OPS operations each and go on until the resizers are done
 * (at most CHT1_OPS_MAX), so the length of the run is set by counts. The table
 * starts at 16 buckets (also its minimum) with max_load 4.
 *
 * Workers rest one timer tick (outside any reader section) every CHT1_REST_US
 * of work: CPU-bound readers on every CPU make A-RCU grace periods slow (a
 * CPU found inside a reader is only polled again), and every resize step and
 * remove callback waits for grace periods; without the rests the run takes
 * minutes under TCG. The checks do not depend on it.
 *
 * Items come from a slab cache; the remove callback checks that the item was
 * removed by its owner and has had no callback yet, counts it and frees it
 * (debug builds poison freed objects; lookups check each item's magic, so a
 * read of a freed item is detected). Failures: a lost item (a lookup misses an
 * item its owner holds), a phantom item (a lookup or the unique check returns
 * an item the owner does not hold or a removed one), a wrong count from
 * remove-key or the walk of duplicates, a double or missing remove callback
 * (callbacks = removals after rcu_barrier(); items of the slab cache all
 * freed), the table's item count differing from the items held, a wave the
 * table did not grow to hold (CHT1_WAVE / CHT1_MAX_LOAD buckets), fewer grows
 * or shrinks than the doublings and halvings one resizer saw between its
 * observations, the emptied table not back at CHT1_INIT_SIZE buckets with as
 * many grows as shrinks, fewer than CHT1_MIN_DURING worker operations started
 * while a resize was pending, the table not empty at the end, cht_destroy() failing, heap
 * or frame counts not back at the baseline. A resize still pending two minutes
 * after the run is a failure too; then the table is leaked (destroying it
 * would wait forever).
 */

#include <test.h>
#include <tests.h>
#include <testlib.h>
#include "cht_sanity.h"
#include <lib/str.h>
#include <adt/cht.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>

#define CHT1_MIN_WORKERS  4
#define CHT1_KEYS         64
#define CHT1_DUPS         4
/** Operations per worker: at least CHT1_OPS, more while resizers run. */
#define CHT1_OPS          20000
#define CHT1_OPS_MAX      (50 * CHT1_OPS)
/** Work time between two rests of a worker (one timer tick, see stress()). */
#define CHT1_REST_US      30000
#define CHT1_RESIZERS     2
#define CHT1_WAVES        6
#define CHT1_WAVE         2048
/** First key of the resizers' ranges (one range of 2^20 keys per resizer). */
#define CHT1_RES_KEY      (1UL << 32)
#define CHT1_MAGIC        0xC4711717u
#define CHT1_DEAD         0xDEADC471u
/**
 * Worker operations that must have started while a resize was pending (the
 * race the stress exists for).
 */
#define CHT1_MIN_DURING   10000
/** Table parameters: small and low so that resizes are frequent. */
#define CHT1_INIT_SIZE    16
#define CHT1_MAX_LOAD     4
/** Bounded waits (no verdict; TCG on 2 host cores is slow). */
#define CHT1_RESIZE_WAIT_US  (20 * 1000 * 1000UL)
#define CHT1_SETTLE_MAX_US   (10 * 1000 * 1000UL)
/** A resize pending this long after the run is stuck (a failure). */
#define CHT1_STUCK_US        (120 * 1000 * 1000UL)

enum {
	ST_FRESH = 1,    /**< Allocated, not (yet) in the table. */
	ST_IN,           /**< Inserted, not removed. */
	ST_REMOVED,      /**< Removed by its owner; the callback is due. */
};

typedef struct {
	/** First word: slab debug poisoning skips it (free list link). */
	uint64_t word0;
	cht_link_t link;
	uint64_t key;
	uint32_t magic;
	uint32_t owner;
	/** ST_*; written by the owner, read by the remove callback. Atomics. */
	uint32_t state;
	/** Remove callbacks so far. Atomics. */
	uint32_t cbs;
} cht1_item_t;

typedef struct {
	unsigned n;
	cht1_item_t *it[CHT1_DUPS];
} cht1_slot_t;

enum {
	OP_FIND, OP_INSERT, OP_UNIQUE, OP_RMKEY, OP_RMITEM, OP_ABSENT, OP_COUNT
};

typedef struct {
	unsigned index;
	uint64_t seed;
	cht1_slot_t slot[CHT1_KEYS];
	/** Statistics of the worker; read by the main thread after the join. */
	uint64_t ops[OP_COUNT];
	uint64_t dup_refused;
	uint64_t max_run;
	/** Operations that started while a resize was pending. */
	uint64_t during_resize;
} cht1_worker_t;

typedef struct {
	unsigned index;
	cht1_item_t *items[CHT1_WAVE];
	size_t max_buckets;
	size_t min_buckets;
	/** Bucket count it saw last (after its last let_resize()). */
	size_t last_buckets;
	/** Doublings / halvings between its consecutive observations: lower
	 * bounds of the table's grows and shrinks. */
	uint64_t rises;
	uint64_t drops;
	/** Waves after which the table had not grown to hold the wave. */
	unsigned small_waves;
} cht1_resizer_t;

static cht_t *table;
static slab_cache_t *cache;
static unsigned nworkers;
static cht1_worker_t workers[CONFIG_MAX_CPUS + CHT1_MIN_WORKERS];
static thread_t *worker_threads[CONFIG_MAX_CPUS + CHT1_MIN_WORKERS];
static cht1_resizer_t resizers[CHT1_RESIZERS];
static thread_t *resizer_threads[CHT1_RESIZERS];

/** Items removed by their owners (each must get one callback). Atomics. */
static atomic_t removed_cnt;
/** Remove callbacks run. Atomics. */
static atomic_t callback_cnt;
static atomic_t errors;
/** First error (static string) and its details. Set once (CAS). */
static void *first_error;
static char error_detail[160];
/** Resizer threads still running. Atomics. */
static atomic_t resizers_running;
/** Set on the first error: the threads stop early. Atomics. */
static bool abort_run;

static void cht1_error(const char *msg, uint64_t key, uint64_t a, uint64_t b)
{
	atomic_inc(&errors);
	if (atomic_cas_ptr(&first_error, NULL, (void *) msg) == NULL) {
		snprintf(error_detail, sizeof(error_detail), "%s (key %#lx, %lu, %lu)",
		    msg, key, a, b);
	}
	__atomic_store_n(&abort_run, true, __ATOMIC_RELEASE);
}

static bool aborted(void)
{
	return __atomic_load_n(&abort_run, __ATOMIC_ACQUIRE);
}

static inline cht1_item_t *item_of(const cht_link_t *l)
{
	return container_of(l, cht1_item_t, link);
}

static inline uint32_t state_get(cht1_item_t *it)
{
	return __atomic_load_n(&it->state, __ATOMIC_ACQUIRE);
}

static inline void state_set(cht1_item_t *it, uint32_t st)
{
	__atomic_store_n(&it->state, st, __ATOMIC_RELEASE);
}

/* ---- table operations (hashes collide on purpose) ---------------------- */

static size_t key_hash_of(uint64_t key)
{
	return (key >> 3) & 1023;
}

static size_t cht1_hash(const cht_link_t *l)
{
	return key_hash_of(item_of(l)->key);
}

static size_t cht1_key_hash(void *key)
{
	return key_hash_of(*(uint64_t *) key);
}

static bool cht1_equal(const cht_link_t *a, const cht_link_t *b)
{
	return item_of(a)->key == item_of(b)->key;
}

static bool cht1_key_equal(void *key, const cht_link_t *l)
{
	return *(uint64_t *) key == item_of(l)->key;
}

/** Stress callback: checks the item, counts the callback, frees the item. */
static void cht1_stress_cb(cht_link_t *l)
{
	cht1_item_t *it = item_of(l);
	atomic_inc(&callback_cnt);
	if (it->magic != CHT1_MAGIC) {
		cht1_error("remove callback for a freed or foreign item (a second "
		    "callback?)", it->key, it->magic, 0);
		return;
	}
	uint32_t st = state_get(it);
	if (st != ST_REMOVED) {
		cht1_error("remove callback for an item its owner did not remove",
		    it->key, st, it->owner);
		return;
	}
	if (__atomic_fetch_add(&it->cbs, 1, __ATOMIC_ACQ_REL) != 0) {
		cht1_error("second remove callback for an item", it->key, it->cbs, 0);
		return;
	}
	it->magic = CHT1_DEAD;
	slab_free(cache, it);
}

static const cht_ops_t stress_ops = {
	.hash = cht1_hash,
	.key_hash = cht1_key_hash,
	.equal = cht1_equal,
	.key_equal = cht1_key_equal,
	.remove_callback = cht1_stress_cb,
};

static cht1_item_t *item_alloc(uint64_t key, unsigned owner)
{
	cht1_item_t *it = slab_alloc(cache, SLAB_KM_NONE);
	if (!it)
		return NULL;
	it->key = key;
	it->magic = CHT1_MAGIC;
	it->owner = owner;
	it->cbs = 0;
	state_set(it, ST_FRESH);
	return it;
}

/** Frees an item that never was in a table (or whose callback will not run). */
static void item_free_unused(cht1_item_t *it)
{
	it->magic = CHT1_DEAD;
	slab_free(cache, it);
}

/* ---- sanity: the shared sequence (cht_sanity.c) in the kernel ----------- */

void *cht_sanity_env_alloc(size_t size)
{
	void *p = malloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

void cht_sanity_env_free(void *p)
{
	free(p);
}

void cht_sanity_env_read_lock(void)
{
	rcu_read_lock();
}

void cht_sanity_env_read_unlock(void)
{
	rcu_read_unlock();
}

void cht_sanity_env_barrier(void)
{
	rcu_barrier();
}

int cht_sanity_env_destroy(cht_t *h)
{
	return cht_destroy(h);
}

void cht_sanity_env_get_stats(cht_t *h, cht_stats_t *st)
{
	cht_get_stats(h, st);
}

void cht_sanity_env_report(size_t items, size_t callbacks,
    const cht_stats_t *st)
{
	TPRINTF("cht: sanity: %zu items, %zu callbacks; table had %zu buckets, "
	    "%lu grows, %lu shrinks\n", items, callbacks, st->buckets,
	    (unsigned long) st->grows, (unsigned long) st->shrinks);
}

/* ---- table lookups -------------------------------------------------------- */

/** Finds @a key in @a h. Inside a reader section. */
static cht1_item_t *find(cht_t *h, uint64_t key)
{
	cht_link_t *l = cht_find(h, &key);
	return l ? item_of(l) : NULL;
}

/* ---- stress: workers ---------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t wkey(unsigned w, unsigned k)
{
	return w + (uint64_t) nworkers * k;
}

/** Index of @a it in @a s, or -1. */
static int slot_index(const cht1_slot_t *s, const cht1_item_t *it)
{
	for (unsigned i = 0; i < s->n; i++) {
		if (s->it[i] == it)
			return (int) i;
	}
	return -1;
}

/**
 * Checks an item a lookup of the worker's own key returned: one of the items
 * it holds for that key, intact, not removed.
 */
static bool check_own(cht1_worker_t *w, const cht1_slot_t *s, uint64_t key,
    const cht1_item_t *it, const char *what)
{
	if (it->magic != CHT1_MAGIC || it->key != key || it->owner != w->index) {
		cht1_error(what, key, it->magic, it->key);
		return false;
	}
	if (state_get((cht1_item_t *) it) != ST_IN || slot_index(s, it) < 0) {
		cht1_error("a lookup returned an item its owner removed or never "
		    "inserted (phantom)", key, state_get((cht1_item_t *) it),
		    s->n);
		return false;
	}
	return true;
}

/** Find: the walk over the duplicates sees exactly the items held. */
static void op_find(cht1_worker_t *w, unsigned k, bool use_equal)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key = wkey(w->index, k);
	unsigned seen = 0, cnt = 0;

	rcu_read_lock();
	cht_link_t *l = cht_find(table, &key);
	while (l) {
		cht1_item_t *it = item_of(l);
		if (!check_own(w, s, key, it, "a lookup returned a foreign or freed "
		    "item"))
			break;
		unsigned bit = 1u << slot_index(s, it);
		if (seen & bit) {
			cht1_error("find_next returned an item twice", key, cnt, s->n);
			break;
		}
		seen |= bit;
		cnt++;
		l = use_equal ? cht_find_next_equal(table, l) :
		    cht_find_next(table, &key, l);
	}
	rcu_read_unlock();
	if (cnt != s->n && !aborted()) {
		cht1_error(cnt < s->n ? "lost item: a lookup of the owner's key "
		    "misses items it holds" : "phantom item in the walk of "
		    "duplicates", key, cnt, s->n);
	}
	if (cnt > w->max_run)
		w->max_run = cnt;
}

/**
 * A new item with worker @a w's key @a k in state ST_IN, its key in @a key;
 * NULL (error recorded) when the slab allocation fails.
 */
static cht1_item_t *slot_item_new(cht1_worker_t *w, unsigned k, uint64_t *key)
{
	*key = wkey(w->index, k);
	cht1_item_t *it = item_alloc(*key, w->index);
	if (!it) {
		cht1_error("out of memory (slab_alloc)", *key, 0, 0);
		return NULL;
	}
	state_set(it, ST_IN);
	return it;
}

static void op_insert(cht1_worker_t *w, unsigned k)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key;
	cht1_item_t *it = slot_item_new(w, k, &key);
	if (!it)
		return;
	s->it[s->n++] = it;
	rcu_read_lock();
	cht_insert(table, &it->link);
	cht1_item_t *f = find(table, key);
	if (!f)
		cht1_error("lost item: not found right after its insert", key, s->n,
		    0);
	else
		(void) check_own(w, s, key, f, "a lookup after an insert returned "
		    "a foreign item");
	rcu_read_unlock();
}

static void op_unique(cht1_worker_t *w, unsigned k)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key;
	cht1_item_t *it = slot_item_new(w, k, &key);
	if (!it)
		return;
	cht_link_t *dup = NULL;
	rcu_read_lock();
	bool ins = cht_insert_unique(table, &it->link, &dup);
	if (ins && s->n != 0)
		cht1_error("insert_unique inserted a duplicate", key, s->n, 0);
	else if (!ins && s->n == 0)
		cht1_error("insert_unique refused a key its owner does not hold "
		    "(phantom)", key, 0, 0);
	else if (!ins && (!dup || !check_own(w, s, key, item_of(dup),
	    "insert_unique returned a foreign duplicate")))
		cht1_error("insert_unique returned no or a wrong duplicate", key,
		    s->n, 0);
	rcu_read_unlock();
	if (ins) {
		if (s->n < CHT1_DUPS) {
			s->it[s->n++] = it;
		} else {
			/* Only after an error: keep the table consistent. */
			rcu_read_lock();
			if (cht_remove_item(table, &it->link)) {
				state_set(it, ST_REMOVED);
				atomic_inc(&removed_cnt);
			}
			rcu_read_unlock();
		}
	} else {
		w->dup_refused++;
		state_set(it, ST_FRESH);
		item_free_unused(it);
	}
}

static void op_rmkey(cht1_worker_t *w, unsigned k)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key = wkey(w->index, k);
	rcu_read_lock();
	size_t c = cht_remove_key(table, &key);
	if (c == s->n) {
		for (unsigned i = 0; i < s->n; i++)
			state_set(s->it[i], ST_REMOVED);
	}
	rcu_read_unlock();
	if (c != s->n) {
		cht1_error("remove_key returned a wrong count", key, c, s->n);
		return;  /* the items' fate is unknown: leave them */
	}
	atomic_add(&removed_cnt, c);
	s->n = 0;
}

static void op_rmitem(cht1_worker_t *w, unsigned k)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key = wkey(w->index, k);
	unsigned j = (unsigned) (rnd(&w->seed) % s->n);
	cht1_item_t *it = s->it[j];
	rcu_read_lock();
	bool r1 = cht_remove_item(table, &it->link);
	bool r2 = cht_remove_item(table, &it->link);
	if (r1)
		state_set(it, ST_REMOVED);
	rcu_read_unlock();
	if (!r1) {
		cht1_error("remove_item failed for an item in the table", key, s->n,
		    j);
		return;
	}
	atomic_inc(&removed_cnt);
	s->it[j] = s->it[--s->n];
	if (r2)
		cht1_error("remove_item succeeded twice for one item", key, s->n, j);
}

/** Keys of the worker's residue class it never inserts: lookups must miss. */
static void op_absent(cht1_worker_t *w, unsigned k)
{
	uint64_t key = wkey(w->index, CHT1_KEYS + k);
	rcu_read_lock();
	cht1_item_t *f = find(table, key);
	size_t c = f ? 0 : cht_remove_key(table, &key);
	rcu_read_unlock();
	if (f || c)
		cht1_error("a key never inserted is found or removed (phantom)", key,
		    c, 0);
}

static void worker_thread(void *arg)
{
	cht1_worker_t *w = arg;
	cht_stats_t st;
	uint64_t rest_at = uptime_us() + CHT1_REST_US;
	for (unsigned i = 0; i < CHT1_OPS_MAX && !aborted(); i++) {
		if (uptime_us() >= rest_at) {
			thread_usleep(1);
			rest_at = uptime_us() + CHT1_REST_US;
		}
		if (i >= CHT1_OPS && atomic_get(&resizers_running) == 0)
			break;
		cht_get_stats(table, &st);
		if (st.resizing)
			w->during_resize++;
		uint64_t r = rnd(&w->seed);
		unsigned k = (unsigned) ((r >> 8) % CHT1_KEYS);
		cht1_slot_t *s = &w->slot[k];
		unsigned p = (unsigned) (r % 100);
		int op;
		if (p < 30)
			op = OP_FIND;
		else if (p < 50)
			op = s->n < CHT1_DUPS ? OP_INSERT : OP_RMKEY;
		else if (p < 65)
			op = s->n < CHT1_DUPS ? OP_UNIQUE : OP_FIND;
		else if (p < 80)
			op = OP_RMKEY;
		else if (p < 95)
			op = s->n > 0 ? OP_RMITEM : OP_UNIQUE;
		else
			op = OP_ABSENT;
		w->ops[op]++;
		switch (op) {
		case OP_FIND:
			op_find(w, k, (r >> 40) & 1);
			break;
		case OP_INSERT:
			op_insert(w, k);
			break;
		case OP_UNIQUE:
			op_unique(w, k);
			break;
		case OP_RMKEY:
			op_rmkey(w, k);
			break;
		case OP_RMITEM:
			op_rmitem(w, k);
			break;
		default:
			op_absent(w, k);
			break;
		}
	}
}

/* ---- stress: resizers -------------------------------------------------- */

static inline uint64_t rkey(unsigned r, unsigned i)
{
	return CHT1_RES_KEY + ((uint64_t) r << 20) + i;
}

/**
 * Waits (bounded by @a max_us) until no resize is pending.
 * @return true if one is still pending.
 */
static bool wait_resized(uint64_t max_us)
{
	cht_stats_t st;
	uint64_t start = uptime_us();
	for (;;) {
		cht_get_stats(table, &st);
		if (!st.resizing)
			return false;
		if (uptime_us() - start > max_us)
			return true;
		thread_usleep(2000);
	}
}

/**
 * Lets the table resize (no verdict); @return its bucket count. Adds the
 * doublings or halvings since the resizer's previous observation to its
 * rises or drops (each is one grow or shrink at least: a resize step changes
 * the order by one).
 */
static size_t let_resize(cht1_resizer_t *rz)
{
	cht_stats_t st;
	if (!aborted())
		(void) wait_resized(CHT1_RESIZE_WAIT_US);
	cht_get_stats(table, &st);
	for (size_t b = rz->last_buckets; b < st.buckets; b *= 2)
		rz->rises++;
	for (size_t b = st.buckets; b < rz->last_buckets; b *= 2)
		rz->drops++;
	rz->last_buckets = st.buckets;
	return st.buckets;
}

static void resizer_thread(void *arg)
{
	cht1_resizer_t *rz = arg;
	unsigned owner = 1000 + rz->index;
	rz->max_buckets = 0;
	rz->min_buckets = (size_t) -1;

	for (unsigned wave = 0; wave < CHT1_WAVES && !aborted(); wave++) {
		unsigned n = 0;
		for (; n < CHT1_WAVE; n++) {
			uint64_t key = rkey(rz->index, n);
			cht1_item_t *it = item_alloc(key, owner);
			if (!it) {
				cht1_error("out of memory (slab_alloc)", key, 0, 0);
				break;
			}
			state_set(it, ST_IN);
			rz->items[n] = it;
			rcu_read_lock();
			if (n % 2) {
				cht_insert(table, &it->link);
			} else if (!cht_insert_unique(table, &it->link, NULL)) {
				cht1_error("insert_unique of a resizer's unique key "
				    "refused", key, n, 0);
				state_set(it, ST_FRESH);
				item_free_unused(it);
				rcu_read_unlock();
				break;
			}
			rcu_read_unlock();
		}
		size_t b = let_resize(rz);
		if (b > rz->max_buckets)
			rz->max_buckets = b;
		/* Its own n items are in the table: at most max_load per bucket. */
		if (n == CHT1_WAVE && b < CHT1_WAVE / CHT1_MAX_LOAD)
			rz->small_waves++;
		for (unsigned i = 0; i < n; i++) {
			uint64_t key = rkey(rz->index, i);
			rcu_read_lock();
			cht1_item_t *f = find(table, key);
			bool ok = f == rz->items[i] && f->magic == CHT1_MAGIC &&
			    state_get(f) == ST_IN;
			rcu_read_unlock();
			if (!ok) {
				cht1_error("lost item: a resizer's item is not found "
				    "(or another one is)", key, i, f != NULL);
				break;
			}
		}
		for (unsigned i = 0; i < n; i++) {
			uint64_t key = rkey(rz->index, i);
			cht1_item_t *it = rz->items[i];
			bool ok;
			rcu_read_lock();
			if (i % 2)
				ok = cht_remove_key(table, &key) == 1;
			else
				ok = cht_remove_item(table, &it->link);
			if (ok)
				state_set(it, ST_REMOVED);
			rcu_read_unlock();
			if (!ok) {
				cht1_error("a resizer could not remove its item", key, i,
				    0);
				continue;
			}
			atomic_inc(&removed_cnt);
		}
		b = let_resize(rz);
		if (b < rz->min_buckets)
			rz->min_buckets = b;
	}
	atomic_dec(&resizers_running);
}

/* ---- stress: driver ----------------------------------------------------- */

/** Removes and checks everything the workers hold (main thread, at the end). */
static void final_check_and_empty(size_t *live)
{
	*live = 0;
	for (unsigned w = 0; w < nworkers; w++) {
		cht1_worker_t *wk = &workers[w];
		for (unsigned k = 0; k < CHT1_KEYS; k++) {
			cht1_slot_t *s = &wk->slot[k];
			for (unsigned i = 0; i < s->n; i++) {
				if (s->it[i]->cbs != 0)
					cht1_error("a remove callback ran for an item "
					    "still in the table", s->it[i]->key, w, k);
			}
			*live += s->n;
			op_find(wk, k, false);
			if (s->n)
				op_rmkey(wk, k);
		}
	}
}

static const char *stress(void)
{
	static char reason[256];
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = 0;
	cht_stats_t st;

	ncpu = test_online_cpus(online);
	nworkers = ncpu < CHT1_MIN_WORKERS ? CHT1_MIN_WORKERS : ncpu;

	table = malloc(sizeof(cht_t));
	if (!table)
		return "out of memory";
	if (cht_create_named(table, "cht-stress", CHT1_INIT_SIZE, CHT1_INIT_SIZE,
	    CHT1_MAX_LOAD, &stress_ops) != CHT_OK) {
		free(table);
		return "cht_create failed";
	}
	uint64_t seed = uptime_us();
	TPRINTF("cht: stress: %u workers on %u CPUs x %d ops on %d keys each (up "
	    "to %d duplicates), %d resizers x %d waves of %d items; hash = (key >> "
	    "3) & 1023; seed %#lx\n", nworkers, ncpu, CHT1_OPS, CHT1_KEYS, CHT1_DUPS,
	    CHT1_RESIZERS, CHT1_WAVES, CHT1_WAVE, seed);

	for (unsigned w = 0; w < nworkers; w++) {
		workers[w].index = w;
		workers[w].seed = (0x9E3779B97F4A7C15ULL * (w + 1)) ^ seed;
		for (unsigned k = 0; k < CHT1_KEYS; k++)
			workers[w].slot[k].n = 0;
		for (unsigned o = 0; o < OP_COUNT; o++)
			workers[w].ops[o] = 0;
		workers[w].dup_refused = 0;
		workers[w].max_run = 0;
		workers[w].during_resize = 0;
		worker_threads[w] = NULL;
	}
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		resizers[r].index = r;
		resizers[r].last_buckets = CHT1_INIT_SIZE;
		resizers[r].rises = 0;
		resizers[r].drops = 0;
		resizers[r].small_waves = 0;
		resizer_threads[r] = NULL;
	}

	/* Create everything first; on failure nothing runs. */
	bool ok = true;
	for (unsigned w = 0; w < nworkers && ok; w++) {
		worker_threads[w] = thread_create(worker_thread, &workers[w],
		    "cht-worker", THREAD_FLAG_NONE);
		if (!worker_threads[w])
			ok = false;
		else
			thread_wire(worker_threads[w], &cpus[online[w % ncpu]]);
	}
	for (unsigned r = 0; r < CHT1_RESIZERS && ok; r++) {
		resizer_threads[r] = thread_create(resizer_thread, &resizers[r],
		    "cht-resizer", THREAD_FLAG_NONE);
		if (!resizer_threads[r])
			ok = false;
	}
	if (!ok)
		__atomic_store_n(&abort_run, true, __ATOMIC_RELEASE);
	atomic_set(&resizers_running, CHT1_RESIZERS);
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		if (!resizer_threads[r])
			atomic_dec(&resizers_running);
	}

	uint64_t t0 = uptime_us();
	uint64_t gp0 = rcu_completed_gps();
	for (unsigned w = 0; w < nworkers; w++) {
		if (worker_threads[w])
			thread_start(worker_threads[w]);
	}
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		if (resizer_threads[r])
			thread_start(resizer_threads[r]);
	}
	for (unsigned w = 0; w < nworkers; w++) {
		if (worker_threads[w])
			(void) thread_join(worker_threads[w]);
	}
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		if (resizer_threads[r])
			(void) thread_join(resizer_threads[r]);
	}
	uint64_t t1 = uptime_us();
	uint64_t gps = rcu_completed_gps() - gp0;
	if (!ok)
		cht1_error("thread_create failed (out of memory)", 0, 0, 0);

	uint64_t ops[OP_COUNT] = { 0 };
	uint64_t refused = 0, max_run = 0, during = 0;
	for (unsigned w = 0; w < nworkers; w++) {
		for (unsigned o = 0; o < OP_COUNT; o++)
			ops[o] += workers[w].ops[o];
		refused += workers[w].dup_refused;
		max_run = MAX(max_run, workers[w].max_run);
		during += workers[w].during_resize;
	}
	cht_get_stats(table, &st);
	TPRINTF("cht: stress: %lu ms, %lu grace periods: %lu finds, %lu inserts, "
	    "%lu insert-uniques (%lu refused), %lu remove-keys, %lu remove-items, "
	    "%lu absent-key lookups (%lu operations while a resize was pending); "
	    "up to %lu duplicates seen\n", (t1 - t0) / 1000, gps, ops[OP_FIND],
	    ops[OP_INSERT], ops[OP_UNIQUE], refused, ops[OP_RMKEY], ops[OP_RMITEM],
	    ops[OP_ABSENT], during, max_run);
	size_t minb = (size_t) -1, maxb = 0;
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		minb = MIN(minb, resizers[r].min_buckets);
		maxb = MAX(maxb, resizers[r].max_buckets);
	}
	TPRINTF("cht: stress: table: %zu items, %zu buckets, %zu dummies, %lu "
	    "grows, %lu shrinks; resizers saw %zu .. %zu buckets\n", st.items,
	    st.buckets, st.dummies, (unsigned long) st.grows,
	    (unsigned long) st.shrinks, minb, maxb);

	if (wait_resized(CHT1_STUCK_US)) {
		/* cht_destroy() would wait for it forever: leak the table. */
		cht1_error("a resize did not complete (the table and its items are "
		    "left allocated)", 0, st.buckets, st.items);
		table = NULL;
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    atomic_get(&errors), error_detail);
		return reason;
	}

	/* Everything the workers hold must be there; then empty the table. */
	size_t live = 0;
	size_t items_before = st.items;
	final_check_and_empty(&live);
	if (items_before != live && atomic_get(&errors) == 0)
		cht1_error("the table's item count differs from the items held",
		    0, items_before, live);
	cht_get_stats(table, &st);
	if (st.items != 0 && atomic_get(&errors) == 0)
		cht1_error("the table is not empty after removing everything", 0,
		    st.items, 0);
	rcu_barrier();
	TPRINTF("cht: stress: %zu items removed, %zu remove callbacks, %zu items "
	    "were left at the end\n", atomic_get(&removed_cnt),
	    atomic_get(&callback_cnt), live);
	if (atomic_get(&callback_cnt) != atomic_get(&removed_cnt))
		cht1_error("remove callbacks differ from removed items (missing or "
		    "double callbacks)", 0, atomic_get(&callback_cnt),
		    atomic_get(&removed_cnt));
	/*
	 * What the forced waves must have produced. Each resizer's wave of
	 * CHT1_WAVE items made the table grow to CHT1_WAVE / CHT1_MAX_LOAD
	 * buckets at least; the doublings and halvings one resizer saw between
	 * its own observations are lower bounds of the grows and shrinks. Empty
	 * and quiesced, the table is back at its initial size, so grows and
	 * shrinks are equal (one order each).
	 */
	bool stuck = wait_resized(CHT1_STUCK_US);
	cht_get_stats(table, &st);
	uint64_t min_grows = 0, min_shrinks = 0;
	unsigned small = 0;
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		cht1_resizer_t *rz = &resizers[r];
		uint64_t drops = rz->drops;
		for (size_t b = st.buckets; b < rz->last_buckets; b *= 2)
			drops++;
		min_grows = MAX(min_grows, rz->rises);
		min_shrinks = MAX(min_shrinks, drops);
		small += rz->small_waves;
	}
	TPRINTF("cht: stress: emptied: %zu buckets, %lu grows, %lu shrinks (the "
	    "resizers' observations require at least %lu and %lu); %lu "
	    "operations while a resize was pending\n", st.buckets,
	    (unsigned long) st.grows, (unsigned long) st.shrinks, min_grows,
	    min_shrinks, during);
	if (stuck) {
		/* cht_destroy() would wait for it forever: leak the table. */
		cht1_error("a resize of the emptied table did not complete (the "
		    "table is left allocated)", 0, st.buckets, 0);
		table = NULL;
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    atomic_get(&errors), error_detail);
		return reason;
	}
	if (atomic_get(&errors) == 0) {
		if (small)
			cht1_error("the table did not grow to hold a resizer's wave (waves "
			    "short, buckets)", 0, small, CHT1_WAVE / CHT1_MAX_LOAD);
		else if (st.grows < min_grows || st.shrinks < min_shrinks)
			cht1_error("fewer grows or shrinks than the resizers saw (grows, "
			    "shrinks)", 0, st.grows, st.shrinks);
		else if (st.buckets != CHT1_INIT_SIZE || st.grows != st.shrinks)
			cht1_error("the emptied table is not back at its initial size "
			    "with as many grows as shrinks (buckets, grows)", 0,
			    st.buckets, st.grows);
		else if (during < CHT1_MIN_DURING)
			cht1_error("too few operations while a resize was pending (got, "
			    "required)", 0, during, CHT1_MIN_DURING);
	}

	int rc = cht_destroy(table);
	if (rc != CHT_OK) {
		cht1_error("cht_destroy failed", 0, (uint64_t) -rc, 0);
		/* The table may still reference items: leak it deliberately. */
		table = NULL;
	} else {
		free(table);
		table = NULL;
	}
	if (atomic_get(&errors) != 0) {
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    atomic_get(&errors), error_detail);
		return reason;
	}
	return NULL;
}

/**
 * The `cht` test, see the file comment.
 * @return NULL on success, or the reason of the failure.
 */
const char *test_cht(void)
{
	static char reason[200];
	heap_stats_t hbase;
	frame_stats_t fbase;
	slab_cache_stats_t cs;

	testlib_wait_workers_idle(CHT1_SETTLE_MAX_US);
	testlib_mem_snapshot(&hbase, &fbase);

	atomic_set(&removed_cnt, 0);
	atomic_set(&callback_cnt, 0);
	atomic_set(&errors, 0);
	first_error = NULL;
	error_detail[0] = '\0';
	__atomic_store_n(&abort_run, false, __ATOMIC_RELEASE);

	cache = slab_cache_create("cht1-items", sizeof(cht1_item_t), 0, NULL,
	    NULL, SLAB_CACHE_NONE);
	if (!cache)
		return "slab_cache_create failed";

	const char *err = cht_sanity_run();
	if (err)
		return err;   /* items may still be referenced: keep the cache */
	TPRINTF("cht: sanity: ok\n");

	err = stress();
	if (err)
		return err;

	slab_cache_get_stats(cache, &cs);
	if (cs.objs_in_use != 0) {
		snprintf(reason, sizeof(reason), "%zu items never freed (missing "
		    "remove callbacks)", cs.objs_in_use);
		return reason;
	}
	if (slab_cache_destroy(cache) != EOK)
		return "slab_cache_destroy failed: items still allocated";
	cache = NULL;

	err = testlib_mem_back(&hbase, &fbase, CHT1_SETTLE_MAX_US);
	if (err)
		return err;
	TPRINTF("cht: heap and frames back at the baseline\n");
	return NULL;
}
