/** @file cht2.c
 * Test `chtcount`: the CHT's item count and its resize requests.
 *
 * Part 1, the item count never goes below the number of linked items. Pairs
 * of threads share a key: the inserter inserts one item of that key and waits
 * until it is gone, the remover removes the key as soon as it finds it. So at
 * most one item per pair is ever in the table and the table's count must
 * never exceed the number of pairs. The table starts at its smallest size (two
 * buckets) with max_load = pairs, so no correct count ever asks for a grow
 * (the grow limit is 2 x pairs; a wrapped count is far above it).
 * When an insert counted its item only after linking it, a remover could
 * decrement first and the count wrapped to 2^64-1: cht_get_stats() reported
 * huge counts and the table grew although it never held more than `pairs`
 * items. The count is now a signed sum that cht_count() and cht_get_stats()
 * clamp at 0, so that wrap can no longer be seen through them (with the
 * defect put back, make BROKEN=chtcount, the test passed on every boot):
 * both threads also read the unclamped sum through cht_count_raw(), which
 * for this table (counted in item_cnt alone, one word) is the count at one
 * instant, and the remover reads it just after taking its item out. Required:
 * every unclamped count read is >= 0, every count read by the threads is <=
 * pairs, no grow, the count is 0 at the end, every item's remove callback ran
 * exactly once.
 * In debug builds every CHT2_HOLD_EVERY-th insert is held right after its
 * linking CAS (cht_env_linked_hook) until the remover has taken the item out
 * again, which makes the old window (link, remove, count) certain instead of
 * rare; release builds and a single CPU (where the remover cannot run while
 * the inserter is held: Podzimek readers are not preemptible) run the same
 * check on the natural race.
 *
 * Part 2, a resize request is never lost. The resize work's enqueue is made
 * to fail once through cht_env_enqueue_hook, and while it fails a second
 * request arrives (the hook calls cht_set_max_load(), which requests a resize
 * and, seeing one in flight, leaves the enqueue to the first). Required: the
 * table is not "resizing" afterwards, a later update past the grow threshold
 * makes it grow (bounded wait), and cht_destroy() returns. When the failing
 * requester only took back its own request, the count stayed at 1: the table
 * never resized again and cht_destroy() waited forever (then this test leaks
 * the table instead of calling it).
 *
 * Part 3, the split count. One thread per online CPU,
 * wired there, inserts CHT3_PER_THREAD keys of its own into a table that
 * starts at 16 buckets with max_load 1, then removes them all. The count
 * starts in item_cnt alone (too small a table for per-CPU slots) and moves to
 * the slots as the table grows; the resize checks ride on the folds.
 * Required: the table grew to fit every item (a fold that skipped its check,
 * or deltas never folded, leave it small), the split count was in use at the
 * full size (cnt_batch > 0), cht_count() is exact once the threads are done
 * (a fold that lost or doubled a delta is off), the table shrinks back to its
 * minimum when emptied with the count at 0 and the slots drained into
 * item_cnt, every remove callback runs once, and cht_destroy() succeeds; and
 * the slots start on a 64-byte boundary (the allocators align to 16 only, and
 * two CPUs' slots on one cache line undo the point of splitting the count).
 */

#include <test.h>
#include <testlib.h>
#include <adt/cht.h>
#include <synch/rcu.h>
#include <mm/malloc.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <cpu.h>
#include <arch/asm.h>
#include <atomic.h>
#include <print.h>
#include <lib/str.h>

/** Insert/remove rounds per pair. */
#define CHT2_ROUNDS     4000
#define CHT2_MAX_PAIRS  8
/** Bound for a round's item to be removed (generous: TCG, loaded host). */
#define CHT2_WAIT_US    (20 * 1000 * 1000UL)
#define CHT2_MAGIC      0xC4C0FFEEu
/** Every how many rounds an insert is held after linking (debug builds). */
#define CHT2_HOLD_EVERY 4
/** Bound of one hold (the remover normally needs microseconds). */
#define CHT2_HOLD_US    (50 * 1000UL)

typedef struct {
	cht_link_t link;
	uint64_t key;
	uint32_t magic;
	/** Remove callbacks run on this item. Atomics. */
	uint32_t callbacks;
} cht2_item_t;

typedef struct {
	uint64_t key;
	/** Items removed so far, written by the remover (release). */
	uint64_t removed;
	/** The inserter is done (release). */
	bool done;
	/** Largest item count either thread read. Written by its own thread. */
	size_t max_seen_ins;
	size_t max_seen_rem;
	/**
	 * Smallest unclamped count (cht_count_raw()) either thread read, and
	 * whether a read found the table counting in per-CPU slots. Written by
	 * its own thread.
	 */
	int64_t min_raw_ins;
	int64_t min_raw_rem;
	bool split_seen;
	/** Failure of this pair (static string), or NULL. */
	const char *fail;
	/** Round of the inserter; written and read by the inserter only. */
	uint64_t round;
	/** Inserts held by the hook until removed (inserter only). */
	uint64_t held;
} cht2_pair_t;

static cht_t *table;
static cht2_pair_t pairs[CHT2_MAX_PAIRS];
static unsigned npairs;
/** Remove callbacks run, and those on a bad item. Atomics. */
static atomic_t callbacks;
static atomic_t bad_callbacks;

static void cht2_remove_callback(cht_link_t *item)
{
	cht2_item_t *it = (cht2_item_t *) item;
	if (it->magic != CHT2_MAGIC ||
	    __atomic_fetch_add(&it->callbacks, 1, __ATOMIC_RELAXED) != 0)
		atomic_inc(&bad_callbacks);
	it->magic = 0;
	atomic_inc(&callbacks);
	free(it);
}

CHT_DEFINE_U64_KEY(cht2, cht2_item_t, link, key, cht_u64_identity)

static const cht_ops_t cht2_ops = {
	CHT_U64_KEY_OPS(cht2),
	.remove_callback = cht2_remove_callback,
};

/** A fresh item of @a key, or NULL without memory. */
static cht2_item_t *cht2_item_new(uint64_t key)
{
	cht2_item_t *it = malloc(sizeof(*it));
	if (it) {
		it->key = key;
		it->magic = CHT2_MAGIC;
		it->callbacks = 0;
	}
	return it;
}

/**
 * Inserts a fresh item of @a key into the table (in a reader section of its
 * own). @return false without memory.
 */
static bool cht2_insert_new(uint64_t key)
{
	cht2_item_t *it = cht2_item_new(key);
	if (!it)
		return false;
	rcu_read_lock();
	cht_insert(table, &it->link);
	rcu_read_unlock();
	return true;
}

static size_t read_count(void)
{
	cht_stats_t st;
	cht_get_stats(table, &st);
	return st.items;
}

/**
 * The count as summed, not clamped at 0: cht_get_stats() clamps it, so a
 * count that went below the linked items shows only here (a wrap of the old
 * unsigned count showed in read_count() too). Keeps the smallest in *@a min.
 */
static void read_raw(cht2_pair_t *p, int64_t *min)
{
	bool split;
	int64_t c = cht_count_raw(table, &split);
	if (split)
		p->split_seen = true;
	if (c < *min)
		*min = c;
}

#ifdef CONFIG_DEBUG
/** The linked-item hook: holds some inserts until their item was removed. */
static void hold_linked(void *h, void *item)
{
	if (h != table)
		return;
	cht2_item_t *it = item;
	unsigned i = (unsigned) (it->key - 0x1000);
	if (i >= npairs)
		return;
	cht2_pair_t *p = &pairs[i];
	if (p->round % CHT2_HOLD_EVERY != 0)
		return;
	uint64_t t0 = uptime_us();
	while (__atomic_load_n(&p->removed, __ATOMIC_ACQUIRE) <= p->round) {
		if (uptime_us() - t0 > CHT2_HOLD_US)
			return;
		cpu_relax();
	}
	p->held++;
}
#endif

static void inserter(void *arg)
{
	cht2_pair_t *p = arg;
	for (uint64_t r = 0; r < CHT2_ROUNDS && !p->fail; r++) {
		p->round = r;
		if (!cht2_insert_new(p->key)) {
			p->fail = "out of memory";
			break;
		}
		size_t c = read_count();
		if (c > p->max_seen_ins)
			p->max_seen_ins = c;
		read_raw(p, &p->min_raw_ins);
		/* Wait for the remover to take it out. */
		uint64_t t0 = uptime_us();
		while (__atomic_load_n(&p->removed, __ATOMIC_ACQUIRE) <= r) {
			if (uptime_us() - t0 > CHT2_WAIT_US) {
				p->fail = "an inserted item was never removed";
				break;
			}
			/* The remover may share this CPU (-smp 1). */
			thread_yield();
		}
	}
	__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
}

static void remover(void *arg)
{
	cht2_pair_t *p = arg;
	uint64_t key = p->key;
	while (!__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		size_t n = cht_remove_key(table, &key);
		rcu_read_unlock();
		if (n > 1 && !p->fail)
			p->fail = "remove_key removed more than one item of a pair";
		if (n) {
			/*
			 * Our item is out: the count must still be >= 0 (an
			 * insert held after its CAS but not yet counted makes it
			 * -1 here when the insert counts after linking).
			 */
			read_raw(p, &p->min_raw_rem);
			size_t c = read_count();
			if (c > p->max_seen_rem)
				p->max_seen_rem = c;
			__atomic_fetch_add(&p->removed, n, __ATOMIC_RELEASE);
		} else {
			thread_yield();
		}
	}
}

/** What the pairs of part_count() saw, summed over the pairs. */
typedef struct {
	size_t max_seen;      /**< largest count read */
	int64_t min_raw;      /**< smallest unclamped count read */
	bool split_seen;      /**< the count table used per-CPU slots */
	const char *fail;     /**< the first pair's failure, or NULL */
	uint64_t total;       /**< items removed */
	uint64_t held;        /**< removed while their insert was held */
} count_sum_t;

/** Runs the npairs inserter/remover pairs on different CPUs (@a online,
 *  @a ncpu), with the linking hook when @a hold (debug builds). */
static const char *count_run(const unsigned *online, unsigned ncpu, bool hold)
{
	thread_t *th[2 * CHT2_MAX_PAIRS];
	for (unsigned i = 0; i < npairs; i++) {
		memset(&pairs[i], 0, sizeof(pairs[i]));
		pairs[i].key = 0x1000 + i;
		pairs[i].min_raw_ins = INT64_MAX;
		pairs[i].min_raw_rem = INT64_MAX;
	}
	bool ok = true;
	for (unsigned i = 0; i < 2 * npairs; i++) {
		cht2_pair_t *p = &pairs[i / 2];
		th[i] = thread_create(i % 2 ? remover : inserter, p,
		    i % 2 ? "chtcount-rem" : "chtcount-ins", THREAD_FLAG_NONE);
		if (!th[i]) {
			ok = false;
			break;
		}
		/* Inserter and remover of a pair on different CPUs. */
		thread_wire(th[i], &cpus[online[(i / 2 + i % 2) % ncpu]]);
	}
	if (!ok) {
		/* Nothing has started: release what was created. */
		return "thread_create failed";
	}
#ifdef CONFIG_DEBUG
	if (hold)
		__atomic_store_n(&cht_env_linked_hook, hold_linked,
		    __ATOMIC_RELEASE);
#endif
	for (unsigned i = 0; i < 2 * npairs; i++)
		thread_start(th[i]);
	for (unsigned i = 0; i < 2 * npairs; i++)
		(void) thread_join(th[i]);
#ifdef CONFIG_DEBUG
	__atomic_store_n(&cht_env_linked_hook, NULL, __ATOMIC_RELEASE);
	/* A hook call that loaded the pointer before the store may still run. */
	rcu_synchronize();
#endif
	return NULL;
}

/** Sums the pairs' results into @a sum. */
static void count_sum(count_sum_t *sum)
{
	sum->max_seen = 0;
	sum->min_raw = INT64_MAX;
	sum->split_seen = false;
	sum->fail = NULL;
	sum->total = 0;
	sum->held = 0;
	for (unsigned i = 0; i < npairs; i++) {
		sum->held += pairs[i].held;
		if (pairs[i].fail && !sum->fail)
			sum->fail = pairs[i].fail;
		if (pairs[i].max_seen_ins > sum->max_seen)
			sum->max_seen = pairs[i].max_seen_ins;
		if (pairs[i].max_seen_rem > sum->max_seen)
			sum->max_seen = pairs[i].max_seen_rem;
		sum->total += pairs[i].removed;
		if (pairs[i].min_raw_ins < sum->min_raw)
			sum->min_raw = pairs[i].min_raw_ins;
		if (pairs[i].min_raw_rem < sum->min_raw)
			sum->min_raw = pairs[i].min_raw_rem;
		sum->split_seen = sum->split_seen || pairs[i].split_seen;
	}
}

/** The verdict on the count: exact, never below zero, never past the
 *  items present; no grow; every removed item's callback run once. */
static const char *count_check(const count_sum_t *sum, const cht_stats_t *st,
    bool hold)
{
	static char reason[200];
	size_t max_seen = sum->max_seen;
	int64_t min_raw = sum->min_raw;
	uint64_t total = sum->total;
	uint64_t held = sum->held;

	(void) hold;
	(void) held;
	if (sum->fail)
		return sum->fail;
	/* The raw sum is one word, exact at every instant, only unsplit. */
	if (sum->split_seen)
		return "the count table used per-CPU slots: the unclamped count "
		    "is not exact (test set-up)";
#ifdef CONFIG_DEBUG
	/* The hook must have made the window happen (not every hold succeeds). */
	if (hold && held < (uint64_t) npairs * CHT2_ROUNDS / CHT2_HOLD_EVERY / 2) {
		snprintf(reason, sizeof(reason), "only %lu of %lu held inserts were "
		    "removed while held: the race was not exercised", held,
		    (uint64_t) npairs * CHT2_ROUNDS / CHT2_HOLD_EVERY);
		return reason;
	}
#endif
	if (min_raw < 0) {
		snprintf(reason, sizeof(reason), "the item count read %ld, below "
		    "zero: a remove was counted before the insert of its item "
		    "(counted after linking)", (long) min_raw);
		return reason;
	}
	if (max_seen > npairs) {
		snprintf(reason, sizeof(reason), "the item count read %zu with at most "
		    "%u items in the table (wrapped below zero)", max_seen, npairs);
		return reason;
	}
	if (st->grows != 0) {
		snprintf(reason, sizeof(reason), "the table grew %lu times although "
		    "it never held more than max_load = %u items",
		    (unsigned long) st->grows, npairs);
		return reason;
	}
	if (st->items != 0) {
		snprintf(reason, sizeof(reason), "item count %zu after every item "
		    "was removed", st->items);
		return reason;
	}
	if (total != (uint64_t) npairs * CHT2_ROUNDS)
		return "removed count differs from the inserted count";
	if ((uint64_t) atomic_get(&callbacks) != total ||
	    atomic_get(&bad_callbacks) != 0) {
		snprintf(reason, sizeof(reason), "%zu remove callbacks (%zu bad) "
		    "for %lu removed items", atomic_get(&callbacks),
		    atomic_get(&bad_callbacks), total);
		return reason;
	}
	return NULL;
}

static const char *part_count(void)
{
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = test_online_cpus(online);
	npairs = ncpu < 2 ? 2 : ncpu;
	if (npairs > CHT2_MAX_PAIRS)
		npairs = CHT2_MAX_PAIRS;
	if (cht_create_named(table, "chtcount", 1, 1, npairs, &cht2_ops) !=
	    CHT_OK)
		return "cht_create failed";
	atomic_set(&callbacks, 0);
	atomic_set(&bad_callbacks, 0);

	bool hold = ncpu >= 2;
	const char *r = count_run(online, ncpu, hold);
	if (r)
		return r;
	count_sum_t sum;
	count_sum(&sum);
	rcu_barrier();
	cht_stats_t st;
	cht_get_stats(table, &st);
	TPRINTF("chtcount: %u pairs x %d rounds: %lu removed (%lu while the "
	    "insert was held after linking), largest count read %zu (limit %u), "
	    "smallest unclamped %ld, grows %lu, count at the end %zu\n", npairs,
	    CHT2_ROUNDS, sum.total, sum.held, sum.max_seen, npairs,
	    (long) sum.min_raw, (unsigned long) st.grows, st.items);
	if ((r = count_check(&sum, &st, hold)))
		return r;
	/* Wait for a (spurious) resize in flight before destroying. */
	for (unsigned i = 0; i < 1000; i++) {
		cht_get_stats(table, &st);
		if (!st.resizing)
			break;
		thread_usleep(10000);
	}
	if (st.resizing)
		return "a resize is still pending after 10 s (table leaked)";
	if (cht_destroy(table) != CHT_OK)
		return "cht_destroy failed";
	return NULL;
}

/* Part 2 */

/** Requests injected from the hook. Written by the hook (thread context). */
static unsigned hook_calls;

static bool failing_enqueue(cht_env_work_t *w)
{
	/* Fail once: the next enqueue goes to the work queue again. */
	__atomic_store_n(&cht_env_enqueue_hook, NULL, __ATOMIC_RELEASE);
	hook_calls++;
	/* A second request while the first one's enqueue is failing. */
	cht_set_max_load(table, 4);
	return false;
}

static const char *part_lost_request(void)
{
	static char reason[200];
	if (cht_create_named(table, "chtcount-req", 1, 1, 4, &cht2_ops) != CHT_OK)
		return "cht_create failed";
	hook_calls = 0;
	__atomic_store_n(&cht_env_enqueue_hook, failing_enqueue, __ATOMIC_RELEASE);
	/* Request a resize (nothing to do for an empty table) that fails. */
	cht_set_max_load(table, 4);
	__atomic_store_n(&cht_env_enqueue_hook, NULL, __ATOMIC_RELEASE);
	if (hook_calls != 1)
		return "the enqueue hook was not called exactly once";

	/* Nothing is queued now; the table must not claim a resize in flight. */
	cht_stats_t st;
	cht_get_stats(table, &st);
	bool stuck = st.resizing;

	/* Past the grow threshold (4 items per bucket, 2 buckets): must grow. */
	enum { N = 64 };
	for (uint64_t k = 0; k < N; k++) {
		if (!cht2_insert_new(k))
			return "out of memory";
	}
	for (unsigned i = 0; i < 1000; i++) {
		cht_get_stats(table, &st);
		if (st.grows && !st.resizing)
			break;
		thread_usleep(10000);
	}
	TPRINTF("chtcount: failed enqueue + concurrent request: resizing "
	    "afterwards %s; after %d inserts: %zu buckets, %lu grows, resizing "
	    "%s\n", stuck ? "yes" : "no", N, st.buckets, (unsigned long) st.grows,
	    st.resizing ? "yes" : "no");
	for (uint64_t k = 0; k < N; k++) {
		rcu_read_lock();
		(void) cht_remove_key(table, &k);
		rcu_read_unlock();
	}
	if (stuck || !st.grows || st.resizing) {
		snprintf(reason, sizeof(reason), "resize request lost after a failed "
		    "enqueue: resizing %s, %lu grows with %d items in 1 bucket (the "
		    "table is leaked: cht_destroy would wait forever)",
		    stuck ? "stuck at yes" : "no", (unsigned long) st.grows, N);
		return reason;
	}
	rcu_barrier();
	for (unsigned i = 0; i < 1000; i++) {
		cht_get_stats(table, &st);
		if (!st.resizing)
			break;
		thread_usleep(10000);
	}
	if (cht_destroy(table) != CHT_OK)
		return "cht_destroy failed";
	return NULL;
}

#define CHT3_PER_THREAD 3000
#define CHT3_MIN_BUCKETS 16

typedef struct {
	uint64_t first, end;
	bool remove;
	const char *fail;
} cht3_worker_t;

static void cht3_worker(void *arg)
{
	cht3_worker_t *w = arg;
	for (uint64_t k = w->first; k < w->end; k++) {
		if (w->remove) {
			rcu_read_lock();
			size_t n = cht_remove_key(table, &k);
			rcu_read_unlock();
			if (n != 1) {
				w->fail = "a key was not removed exactly once";
				return;
			}
			continue;
		}
		if (!cht2_insert_new(k)) {
			w->fail = "out of memory";
			return;
		}
	}
}

/**
 * Runs one worker per online CPU, inserting or removing keys [lo, hi) of its
 * range; NULL or why not.
 */
static const char *cht3_round(bool remove, uint64_t lo, uint64_t hi)
{
	static cht3_worker_t w[CONFIG_MAX_CPUS];
	thread_t *t[CONFIG_MAX_CPUS];
	unsigned ids[CONFIG_MAX_CPUS];
	unsigned n = test_online_cpus(ids);
	for (unsigned i = 0; i < n; i++) {
		w[i].first = 0x100000 + (uint64_t) i * CHT3_PER_THREAD + lo;
		w[i].end = 0x100000 + (uint64_t) i * CHT3_PER_THREAD + hi;
		w[i].remove = remove;
		w[i].fail = NULL;
		t[i] = testlib_spawn(cht3_worker, &w[i], "chtcount3",
		    &cpus[ids[i]]);
		if (!t[i])
			return "cannot create a worker";
	}
	const char *r = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (!testlib_join(t[i], WAIT_LIMIT_US))
			return "a worker did not finish (leaked)";
		if (w[i].fail && !r)
			r = w[i].fail;
	}
	return r;
}

/** Waits (bounded) until no resize is requested and the size is stable. */
static void cht3_settle(cht_stats_t *st)
{
	size_t last = 0;
	for (unsigned i = 0; i < 3000; i++) {
		cht_get_stats(table, st);
		if (!st->resizing && st->buckets == last)
			return;
		last = st->buckets;
		thread_usleep(20000);
	}
}

static const char *part_split_count(void)
{
	static char reason[240];
	unsigned ids[CONFIG_MAX_CPUS];
	size_t expect = (size_t) test_online_cpus(ids) * CHT3_PER_THREAD;
	if (cht_create_named(table, "chtcount-split", CHT3_MIN_BUCKETS,
	    CHT3_MIN_BUCKETS, 1, &cht2_ops) != CHT_OK)
		return "cht_create failed";
	size_t batch0 = __atomic_load_n(&table->cnt_batch, __ATOMIC_RELAXED);
	/* Each CPU's slot on a cache line of its own (false sharing otherwise). */
	uintptr_t slots = (uintptr_t) table->cnt_slots;
	if (!slots || (slots & 63) != 0) {
		snprintf(reason, sizeof(reason), "split count: slots at %p, not on "
		    "a 64-byte boundary (two CPUs' slots share a cache line)",
		    (void *) slots);
		return reason;  /* the table is leaked */
	}
	atomic_set(&callbacks, 0);
	atomic_set(&bad_callbacks, 0);
	/*
	 * Half the keys, then let the table settle at its size (the split count
	 * is in use from there), then the other half: its grows can only come
	 * from the checks that ride on the folds.
	 */
	const char *r = cht3_round(false, 0, CHT3_PER_THREAD / 2);
	if (r)
		return r;
	cht_stats_t half, full, empty;
	cht3_settle(&half);
	size_t batch_half = __atomic_load_n(&table->cnt_batch, __ATOMIC_RELAXED);
	r = cht3_round(false, CHT3_PER_THREAD / 2, CHT3_PER_THREAD);
	if (r)
		return r;
	cht3_settle(&full);
	size_t counted = cht_count(table);
	size_t batch = __atomic_load_n(&table->cnt_batch, __ATOMIC_RELAXED);
	int64_t global = __atomic_load_n(&table->item_cnt, __ATOMIC_RELAXED);
	r = cht3_round(true, 0, CHT3_PER_THREAD);
	if (r)
		return r;
	cht3_settle(&empty);
	rcu_barrier();
	size_t batch_end = __atomic_load_n(&table->cnt_batch, __ATOMIC_RELAXED);
	int64_t global_end = __atomic_load_n(&table->item_cnt, __ATOMIC_RELAXED);
	TPRINTF("chtcount: split count: %zu items from %zu CPUs: counted %zu "
	    "(item_cnt %ld + slots), %zu buckets (%zu at half), fold batch %zu "
	    "-> %zu -> %zu -> %zu; emptied: counted %zu (item_cnt %ld), %zu "
	    "buckets, callbacks %ld\n",
	    expect, expect / CHT3_PER_THREAD, counted, (long) global,
	    full.buckets, half.buckets, batch0, batch_half, batch, batch_end,
	    empty.items,
	    (long) global_end, empty.buckets, (long) atomic_get(&callbacks));
	if (counted != expect)
		snprintf(reason, sizeof(reason), "split count: cht_count() %zu "
		    "after %zu inserts (item_cnt %ld)", counted, expect,
		    (long) global);
	else if (full.buckets < expect)
		snprintf(reason, sizeof(reason), "split count: %zu items in only "
		    "%zu buckets with max_load 1 (a grow was not requested)",
		    expect, full.buckets);
	else if (batch == 0 || batch_half == 0)
		snprintf(reason, sizeof(reason), "split count: not in use at "
		    "%zu / %zu buckets (fold batch %zu / %zu)", half.buckets,
		    full.buckets, batch_half, batch);
	else if (empty.items != 0 || global_end != 0)
		snprintf(reason, sizeof(reason), "split count: %zu items counted "
		    "(item_cnt %ld) after every item was removed", empty.items,
		    (long) global_end);
	else if (empty.buckets != CHT3_MIN_BUCKETS || batch_end != 0)
		snprintf(reason, sizeof(reason), "split count: emptied table at "
		    "%zu buckets (minimum %d), fold batch %zu", empty.buckets,
		    CHT3_MIN_BUCKETS, batch_end);
	else if ((size_t) atomic_get(&callbacks) != expect ||
	    atomic_get(&bad_callbacks) != 0)
		snprintf(reason, sizeof(reason), "split count: %ld remove "
		    "callbacks for %zu items, %ld bad",
		    (long) atomic_get(&callbacks), expect,
		    (long) atomic_get(&bad_callbacks));
	else
		reason[0] = 0;
	if (reason[0])
		return reason;  /* the table is leaked */
	if (cht_destroy(table) != CHT_OK)
		return "split count: cht_destroy failed on the emptied table";
	return NULL;
}

const char *test_chtcount(void)
{
	heap_stats_t hb;
	frame_stats_t fb;
	testlib_mem_snapshot(&hb, &fb);
	table = malloc(sizeof(cht_t));
	if (!table)
		return "out of memory";
	const char *r = part_count();
	if (!r)
		r = part_lost_request();
	if (!r)
		r = part_split_count();
	if (r)
		return r;  /* the table may still be in use: leaked */
	free(table);
	table = NULL;
	return testlib_mem_back(&hb, &fb, 10 * 1000 * 1000UL);
}
