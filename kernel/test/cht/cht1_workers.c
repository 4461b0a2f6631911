/** @file cht1_workers.c
 * The kernel test `cht` (see cht1.c): the stress run's worker threads (each
 * owns its keys and checks every operation exactly) and resizer threads
 * (waves that make the table grow and shrink).
 */
#include "cht1.h"
#include "prng.h"

/* ---- stress: workers ---------------------------------------------------- */

static inline uint64_t wkey(unsigned w, unsigned k)
{
	return w + (uint64_t) cht1_nworkers * k;
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
void cht1_op_find(cht1_worker_t *w, unsigned k, bool use_equal)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key = wkey(w->index, k);
	unsigned seen = 0, cnt = 0;

	rcu_read_lock();
	cht_link_t *l = cht_find(cht1_table, &key);
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
		l = use_equal ? cht_find_next_equal(cht1_table, l) :
		    cht_find_next(cht1_table, &key, l);
	}
	rcu_read_unlock();
	if (cnt != s->n && !cht1_aborted()) {
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
	cht1_item_t *it = cht1_item_alloc(*key, w->index);
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
	cht_insert(cht1_table, &it->link);
	cht1_item_t *f = cht1_find(cht1_table, key);
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
	bool ins = cht_insert_unique(cht1_table, &it->link, &dup);
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
			if (cht_remove_item(cht1_table, &it->link)) {
				state_set(it, ST_REMOVED);
				atomic_inc(&cht1_removed_cnt);
			}
			rcu_read_unlock();
		}
	} else {
		w->dup_refused++;
		state_set(it, ST_FRESH);
		cht1_item_free_unused(it);
	}
}

void cht1_op_rmkey(cht1_worker_t *w, unsigned k)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key = wkey(w->index, k);
	rcu_read_lock();
	size_t c = cht_remove_key(cht1_table, &key);
	if (c == s->n) {
		for (unsigned i = 0; i < s->n; i++)
			state_set(s->it[i], ST_REMOVED);
	}
	rcu_read_unlock();
	if (c != s->n) {
		cht1_error("remove_key returned a wrong count", key, c, s->n);
		return;  /* the items' fate is unknown: leave them */
	}
	atomic_add(&cht1_removed_cnt, c);
	s->n = 0;
}

static void op_rmitem(cht1_worker_t *w, unsigned k)
{
	cht1_slot_t *s = &w->slot[k];
	uint64_t key = wkey(w->index, k);
	unsigned j = (unsigned) (prng_xorshift64s(&w->seed) % s->n);
	cht1_item_t *it = s->it[j];
	rcu_read_lock();
	bool r1 = cht_remove_item(cht1_table, &it->link);
	bool r2 = cht_remove_item(cht1_table, &it->link);
	if (r1)
		state_set(it, ST_REMOVED);
	rcu_read_unlock();
	if (!r1) {
		cht1_error("remove_item failed for an item in the table", key, s->n,
		    j);
		return;
	}
	atomic_inc(&cht1_removed_cnt);
	s->it[j] = s->it[--s->n];
	if (r2)
		cht1_error("remove_item succeeded twice for one item", key, s->n, j);
}

/** Keys of the worker's residue class it never inserts: lookups must miss. */
static void op_absent(cht1_worker_t *w, unsigned k)
{
	uint64_t key = wkey(w->index, CHT1_KEYS + k);
	rcu_read_lock();
	cht1_item_t *f = cht1_find(cht1_table, key);
	size_t c = f ? 0 : cht_remove_key(cht1_table, &key);
	rcu_read_unlock();
	if (f || c)
		cht1_error("a key never inserted is found or removed (phantom)", key,
		    c, 0);
}

void cht1_worker_thread(void *arg)
{
	cht1_worker_t *w = arg;
	cht_stats_t st;
	uint64_t rest_at = uptime_us() + CHT1_REST_US;
	for (unsigned i = 0; i < CHT1_OPS_MAX && !cht1_aborted(); i++) {
		if (uptime_us() >= rest_at) {
			thread_usleep(1);
			rest_at = uptime_us() + CHT1_REST_US;
		}
		if (i >= CHT1_OPS && atomic_get(&cht1_resizers_running) == 0)
			break;
		cht_get_stats(cht1_table, &st);
		if (st.resizing)
			w->during_resize++;
		uint64_t r = prng_xorshift64s(&w->seed);
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
			cht1_op_find(w, k, (r >> 40) & 1);
			break;
		case OP_INSERT:
			op_insert(w, k);
			break;
		case OP_UNIQUE:
			op_unique(w, k);
			break;
		case OP_RMKEY:
			cht1_op_rmkey(w, k);
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
bool cht1_wait_resized(uint64_t max_us)
{
	cht_stats_t st;
	uint64_t start = uptime_us();
	for (;;) {
		cht_get_stats(cht1_table, &st);
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
static size_t let_resize(cht1_resizer_t *rz, bool *pending)
{
	cht_stats_t st;
	bool still = false;
	if (!cht1_aborted())
		still = cht1_wait_resized(CHT1_RESIZE_WAIT_US);
	if (pending)
		*pending = still;
	cht_get_stats(cht1_table, &st);
	for (size_t b = rz->last_buckets; b < st.buckets; b *= 2)
		rz->rises++;
	for (size_t b = st.buckets; b < rz->last_buckets; b *= 2)
		rz->drops++;
	rz->last_buckets = st.buckets;
	return st.buckets;
}

void cht1_resizer_thread(void *arg)
{
	cht1_resizer_t *rz = arg;
	unsigned owner = 1000 + rz->index;
	rz->max_buckets = 0;
	rz->min_buckets = (size_t) -1;

	for (unsigned wave = 0; wave < CHT1_WAVES && !cht1_aborted(); wave++) {
		unsigned n = 0;
		for (; n < CHT1_WAVE; n++) {
			uint64_t key = rkey(rz->index, n);
			cht1_item_t *it = cht1_item_alloc(key, owner);
			if (!it) {
				cht1_error("out of memory (slab_alloc)", key, 0, 0);
				break;
			}
			state_set(it, ST_IN);
			rz->items[n] = it;
			rcu_read_lock();
			if (n % 2) {
				cht_insert(cht1_table, &it->link);
			} else if (!cht_insert_unique(cht1_table, &it->link, NULL)) {
				cht1_error("insert_unique of a resizer's unique key "
				    "refused", key, n, 0);
				state_set(it, ST_FRESH);
				cht1_item_free_unused(it);
				rcu_read_unlock();
				break;
			}
			rcu_read_unlock();
		}
		bool pending;
		size_t b = let_resize(rz, &pending);
		if (b > rz->max_buckets)
			rz->max_buckets = b;
		/*
		 * Its own n items are in the table: at most max_load per bucket,
		 * once no resize is pending. A resize still pending after
		 * CHT1_RESIZE_WAIT_US (a loaded host slows the TCG guest's grace
		 * periods) is no verdict on the size: the wait for the emptied
		 * table (CHT1_STUCK_US) fails the test if it never completes.
		 */
		if (pending)
			rz->pending_waves++;
		else if (n == CHT1_WAVE && b < CHT1_WAVE / CHT1_MAX_LOAD)
			rz->small_waves++;
		for (unsigned i = 0; i < n; i++) {
			uint64_t key = rkey(rz->index, i);
			rcu_read_lock();
			cht1_item_t *f = cht1_find(cht1_table, key);
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
				ok = cht_remove_key(cht1_table, &key) == 1;
			else
				ok = cht_remove_item(cht1_table, &it->link);
			if (ok)
				state_set(it, ST_REMOVED);
			rcu_read_unlock();
			if (!ok) {
				cht1_error("a resizer could not remove its item", key, i,
				    0);
				continue;
			}
			atomic_inc(&cht1_removed_cnt);
		}
		b = let_resize(rz, NULL);
		if (b < rz->min_buckets)
			rz->min_buckets = b;
	}
	atomic_dec(&cht1_resizers_running);
}
