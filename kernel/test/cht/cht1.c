/** @file cht1.c
 * (Files: this one, cht1_workers.c with the stress threads, cht1.h; the
 * sanity sequence is cht_sanity.c.)
 *
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
 * table did not grow to hold (CHT1_WAVE / CHT1_MAX_LOAD buckets, judged when
 * no resize is pending after the bounded wait), fewer grows
 * or shrinks than the doublings and halvings one resizer saw between its
 * observations, the emptied table not back at CHT1_INIT_SIZE buckets with as
 * many grows as shrinks, fewer than CHT1_MIN_DURING worker operations started
 * while a resize was pending, the table not empty at the end, cht_destroy() failing, heap
 * or frame counts not back at the baseline. A resize still pending two minutes
 * after the run is a failure too; then the table is leaked (destroying it
 * would wait forever).
 */

#include "cht1.h"

cht_t *cht1_table;
static slab_cache_t *cache;
unsigned cht1_nworkers;
cht1_worker_t cht1_workers[CONFIG_MAX_CPUS + CHT1_MIN_WORKERS];
static thread_t *worker_threads[CONFIG_MAX_CPUS + CHT1_MIN_WORKERS];
cht1_resizer_t cht1_resizers[CHT1_RESIZERS];
static thread_t *resizer_threads[CHT1_RESIZERS];

/** Items removed by their owners (each must get one callback). Atomics. */
atomic_t cht1_removed_cnt;
/** Remove callbacks run. Atomics. */
static atomic_t callback_cnt;
static atomic_t errors;
/** First error (static string) and its details. Set once (CAS). */
static void *first_error;
static char error_detail[160];
/** Resizer threads still running. Atomics. */
atomic_t cht1_resizers_running;
/** Set on the first error: the threads stop early. Atomics. */
static bool abort_run;

void cht1_error(const char *msg, uint64_t key, uint64_t a, uint64_t b)
{
	atomic_inc(&errors);
	if (atomic_cas_ptr(&first_error, NULL, (void *) msg) == NULL) {
		snprintf(error_detail, sizeof(error_detail), "%s (key %#lx, %lu, %lu)",
		    msg, key, a, b);
	}
	__atomic_store_n(&abort_run, true, __ATOMIC_RELEASE);
}

bool cht1_aborted(void)
{
	return __atomic_load_n(&abort_run, __ATOMIC_ACQUIRE);
}

/* ---- table operations (hashes collide on purpose) ---------------------- */

static size_t key_hash_of(uint64_t key)
{
	return (key >> 3) & 1023;
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

CHT_DEFINE_U64_KEY(cht1, cht1_item_t, link, key, key_hash_of)

static const cht_ops_t stress_ops = {
	CHT_U64_KEY_OPS(cht1),
	.remove_callback = cht1_stress_cb,
};

cht1_item_t *cht1_item_alloc(uint64_t key, unsigned owner)
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
void cht1_item_free_unused(cht1_item_t *it)
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
cht1_item_t *cht1_find(cht_t *h, uint64_t key)
{
	cht_link_t *l = cht_find(h, &key);
	return l ? item_of(l) : NULL;
}

/* ---- stress: driver ----------------------------------------------------- */

/** Removes and checks everything the workers hold (main thread, at the end). */
static void final_check_and_empty(size_t *live)
{
	*live = 0;
	for (unsigned w = 0; w < cht1_nworkers; w++) {
		cht1_worker_t *wk = &cht1_workers[w];
		for (unsigned k = 0; k < CHT1_KEYS; k++) {
			cht1_slot_t *s = &wk->slot[k];
			for (unsigned i = 0; i < s->n; i++) {
				if (s->it[i]->cbs != 0)
					cht1_error("a remove callback ran for an item "
					    "still in the table", s->it[i]->key, w, k);
			}
			*live += s->n;
			cht1_op_find(wk, k, false);
			if (s->n)
				cht1_op_rmkey(wk, k);
		}
	}
}

/** The "%zu errors, first: ..." verdict of cht1_stress(). */
static const char *stress_reason(void)
{
	static char reason[256];
	snprintf(reason, sizeof(reason), "%zu errors, first: %s",
	    atomic_get(&errors), error_detail);
	return reason;
}

/** Resets the workers' and resizers' state; @a seed seeds the workers. */
static void stress_init(uint64_t seed)
{
	for (unsigned w = 0; w < cht1_nworkers; w++) {
		cht1_workers[w].index = w;
		cht1_workers[w].seed = (0x9E3779B97F4A7C15ULL * (w + 1)) ^ seed;
		for (unsigned k = 0; k < CHT1_KEYS; k++)
			cht1_workers[w].slot[k].n = 0;
		for (unsigned o = 0; o < OP_COUNT; o++)
			cht1_workers[w].ops[o] = 0;
		cht1_workers[w].dup_refused = 0;
		cht1_workers[w].max_run = 0;
		cht1_workers[w].during_resize = 0;
		worker_threads[w] = NULL;
	}
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		cht1_resizers[r].index = r;
		cht1_resizers[r].last_buckets = CHT1_INIT_SIZE;
		cht1_resizers[r].rises = 0;
		cht1_resizers[r].drops = 0;
		cht1_resizers[r].small_waves = 0;
		cht1_resizers[r].pending_waves = 0;
		resizer_threads[r] = NULL;
	}
}

/** Creates every worker (wired round-robin to @a online) and resizer, then
 *  runs them all (none when a creation failed). @a ms, @a gps: the run's
 *  time and grace periods. @return false when a thread could not be created. */
static bool stress_run(const unsigned *online, unsigned ncpu, uint64_t *ms,
    uint64_t *gps)
{
	/* Create everything first; on failure nothing runs. */
	bool ok = true;
	for (unsigned w = 0; w < cht1_nworkers && ok; w++) {
		worker_threads[w] = thread_create(cht1_worker_thread, &cht1_workers[w],
		    "cht-worker", THREAD_FLAG_NONE);
		if (!worker_threads[w])
			ok = false;
		else
			thread_wire(worker_threads[w], &cpus[online[w % ncpu]]);
	}
	for (unsigned r = 0; r < CHT1_RESIZERS && ok; r++) {
		resizer_threads[r] = thread_create(cht1_resizer_thread, &cht1_resizers[r],
		    "cht-resizer", THREAD_FLAG_NONE);
		if (!resizer_threads[r])
			ok = false;
	}
	if (!ok)
		__atomic_store_n(&abort_run, true, __ATOMIC_RELEASE);
	atomic_set(&cht1_resizers_running, CHT1_RESIZERS);
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		if (!resizer_threads[r])
			atomic_dec(&cht1_resizers_running);
	}

	uint64_t t0 = uptime_us();
	uint64_t gp0 = rcu_completed_gps();
	for (unsigned w = 0; w < cht1_nworkers; w++) {
		if (worker_threads[w])
			thread_start(worker_threads[w]);
	}
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		if (resizer_threads[r])
			thread_start(resizer_threads[r]);
	}
	for (unsigned w = 0; w < cht1_nworkers; w++) {
		if (worker_threads[w])
			(void) thread_join(worker_threads[w]);
	}
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		if (resizer_threads[r])
			(void) thread_join(resizer_threads[r]);
	}
	*ms = (uptime_us() - t0) / 1000;
	*gps = rcu_completed_gps() - gp0;
	return ok;
}

/** Prints the operations and the table after the run (@a st: its stats).
 *  @return the operations done while a resize was pending. */
static uint64_t stress_report(uint64_t ms, uint64_t gps, cht_stats_t *st)
{
	uint64_t ops[OP_COUNT] = { 0 };
	uint64_t refused = 0, max_run = 0, during = 0;
	for (unsigned w = 0; w < cht1_nworkers; w++) {
		for (unsigned o = 0; o < OP_COUNT; o++)
			ops[o] += cht1_workers[w].ops[o];
		refused += cht1_workers[w].dup_refused;
		max_run = MAX(max_run, cht1_workers[w].max_run);
		during += cht1_workers[w].during_resize;
	}
	cht_get_stats(cht1_table, st);
	TPRINTF("cht: stress: %lu ms, %lu grace periods: %lu finds, %lu inserts, "
	    "%lu insert-uniques (%lu refused), %lu remove-keys, %lu remove-items, "
	    "%lu absent-key lookups (%lu operations while a resize was pending); "
	    "up to %lu duplicates seen\n", ms, gps, ops[OP_FIND],
	    ops[OP_INSERT], ops[OP_UNIQUE], refused, ops[OP_RMKEY], ops[OP_RMITEM],
	    ops[OP_ABSENT], during, max_run);
	size_t minb = (size_t) -1, maxb = 0;
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		minb = MIN(minb, cht1_resizers[r].min_buckets);
		maxb = MAX(maxb, cht1_resizers[r].max_buckets);
	}
	TPRINTF("cht: stress: table: %zu items, %zu buckets, %zu dummies, %lu "
	    "grows, %lu shrinks; resizers saw %zu .. %zu buckets\n", st->items,
	    st->buckets, st->dummies, (unsigned long) st->grows,
	    (unsigned long) st->shrinks, minb, maxb);
	return during;
}

/** Everything the workers hold must be there; then the table is emptied and
 *  every removed item's callback must run (@a st: the stats after the run). */
static void stress_empty(const cht_stats_t *st)
{
	cht_stats_t now;
	size_t live = 0;
	size_t items_before = st->items;
	final_check_and_empty(&live);
	if (items_before != live && atomic_get(&errors) == 0)
		cht1_error("the table's item count differs from the items held",
		    0, items_before, live);
	cht_get_stats(cht1_table, &now);
	if (now.items != 0 && atomic_get(&errors) == 0)
		cht1_error("the table is not empty after removing everything", 0,
		    now.items, 0);
	rcu_barrier();
	TPRINTF("cht: stress: %zu items removed, %zu remove callbacks, %zu items "
	    "were left at the end\n", atomic_get(&cht1_removed_cnt),
	    atomic_get(&callback_cnt), live);
	if (atomic_get(&callback_cnt) != atomic_get(&cht1_removed_cnt))
		cht1_error("remove callbacks differ from removed items (missing or "
		    "double callbacks)", 0, atomic_get(&callback_cnt),
		    atomic_get(&cht1_removed_cnt));
}

/** The emptied table against what the resizers' waves required (@a during:
 *  operations while a resize was pending). @return false when a resize of
 *  the emptied table never completed (the table is then leaked). */
static bool stress_check_resizes(uint64_t during)
{
	cht_stats_t st;
	/*
	 * What the forced waves must have produced. Each resizer's wave of
	 * CHT1_WAVE items made the table grow to CHT1_WAVE / CHT1_MAX_LOAD
	 * buckets at least; the doublings and halvings one resizer saw between
	 * its own observations are lower bounds of the grows and shrinks. Empty
	 * and quiesced, the table is back at its initial size, so grows and
	 * shrinks are equal (one order each).
	 */
	bool stuck = cht1_wait_resized(CHT1_STUCK_US);
	cht_get_stats(cht1_table, &st);
	uint64_t min_grows = 0, min_shrinks = 0;
	unsigned small = 0, pending = 0;
	for (unsigned r = 0; r < CHT1_RESIZERS; r++) {
		cht1_resizer_t *rz = &cht1_resizers[r];
		uint64_t drops = rz->drops;
		for (size_t b = st.buckets; b < rz->last_buckets; b *= 2)
			drops++;
		min_grows = MAX(min_grows, rz->rises);
		min_shrinks = MAX(min_shrinks, drops);
		small += rz->small_waves;
		pending += rz->pending_waves;
	}
	TPRINTF("cht: stress: emptied: %zu buckets, %lu grows, %lu shrinks (the "
	    "resizers' observations require at least %lu and %lu); %lu "
	    "operations while a resize was pending; %u waves not judged (a resize "
	    "still pending)\n", st.buckets,
	    (unsigned long) st.grows, (unsigned long) st.shrinks, min_grows,
	    min_shrinks, during, pending);
	if (stuck) {
		/* cht_destroy() would wait for it forever: leak the table. */
		cht1_error("a resize of the emptied table did not complete (the "
		    "table is left allocated)", 0, st.buckets, 0);
		cht1_table = NULL;
		return false;
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
	return true;
}

const char *cht1_stress(void)
{
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = 0;
	cht_stats_t st;

	ncpu = test_online_cpus(online);
	cht1_nworkers = ncpu < CHT1_MIN_WORKERS ? CHT1_MIN_WORKERS : ncpu;

	cht1_table = malloc(sizeof(cht_t));
	if (!cht1_table)
		return "out of memory";
	if (cht_create_named(cht1_table, "cht-stress", CHT1_INIT_SIZE, CHT1_INIT_SIZE,
	    CHT1_MAX_LOAD, &stress_ops) != CHT_OK) {
		free(cht1_table);
		return "cht_create failed";
	}
	uint64_t seed = uptime_us();
	TPRINTF("cht: stress: %u workers on %u CPUs x %d ops on %d keys each (up "
	    "to %d duplicates), %d resizers x %d waves of %d items; hash = (key >> "
	    "3) & 1023; seed %#lx\n", cht1_nworkers, ncpu, CHT1_OPS, CHT1_KEYS, CHT1_DUPS,
	    CHT1_RESIZERS, CHT1_WAVES, CHT1_WAVE, seed);

	stress_init(seed);
	uint64_t ms, gps;
	if (!stress_run(online, ncpu, &ms, &gps))
		cht1_error("thread_create failed (out of memory)", 0, 0, 0);
	uint64_t during = stress_report(ms, gps, &st);

	if (cht1_wait_resized(CHT1_STUCK_US)) {
		/* cht_destroy() would wait for it forever: leak the table. */
		cht1_error("a resize did not complete (the table and its items are "
		    "left allocated)", 0, st.buckets, st.items);
		cht1_table = NULL;
		return stress_reason();
	}
	stress_empty(&st);
	if (!stress_check_resizes(during))
		return stress_reason();

	int rc = cht_destroy(cht1_table);
	if (rc != CHT_OK) {
		cht1_error("cht_destroy failed", 0, (uint64_t) -rc, 0);
		/* The table may still reference items: leak it deliberately. */
		cht1_table = NULL;
	} else {
		free(cht1_table);
		cht1_table = NULL;
	}
	if (atomic_get(&errors) != 0) {
		return stress_reason();
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

	atomic_set(&cht1_removed_cnt, 0);
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

	err = cht1_stress();
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
