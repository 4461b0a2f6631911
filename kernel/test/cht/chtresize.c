/** @file chtresize.c
 * The experiment of the relativistic hash table paper (Triplett, McKenney,
 * Walpole, USENIX ATC 2011, section 5, "continuous resize": 2^16 items, the
 * table resized between 2^13 and 2^14 buckets over and over) as a test:
 * lookups of present items must never miss while the table is resized.
 *
 * Set-up: keys 0 .. 2^16 - 1 are inserted once and stay in the table for the
 * whole run (hash = key; the table mixes it). The table has 2^13 buckets
 * (init_size = min_size = 2^13) and max_load CHTR_LOAD_SMALL.
 *
 * Forcing the resizes: the table grows when items > max_load * 2^order and
 * shrinks when items < max_load * 2^order / 4 (never below min_size). With
 * 2^16 items, cht_set_max_load(4) makes 2^13 buckets too small (65536 > 32768)
 * and 2^14 fit exactly (65536 <= 65536, and not < 16384): the table grows to
 * 2^14 and stops there. cht_set_max_load(32) makes 2^14 too big
 * (65536 < 32 * 2^14 / 4 = 131072): it shrinks to 2^13, the minimum, where it
 * stays (65536 <= 32 * 2^13). So the resizer thread flips the table exactly
 * between 2^13 and 2^14 buckets with 2^16 items always present, CHTR_RESIZES
 * times, waiting after each request until the table has the new size. (Without
 * cht_set_max_load the flip would need a wave of more than 2^16 extra items
 * each time: growing at 2^13 and shrinking at 2^14 under one max_load needs a
 * peak item count more than twice the trough.)
 *
 * Readers: one thread wired to each online CPU plus CHTR_EXTRA_READERS more
 * (wired round-robin, so some CPUs run two and readers get preempted inside
 * their reader sections while the table resizes) loop: rcu_read_lock();
 * CHTR_BATCH lookups of random keys in 0 .. 2^16 - 1, each of which must
 * return exactly the item with that key; rcu_read_unlock(). They run until
 * the resizer has done all its resizes, so the verdict depends on counts, not
 * on timing: no miss, no wrong item, grows and shrinks exactly
 * CHTR_RESIZES / 2 each, at least CHTR_MIN_DURING lookups made while a resize
 * was in progress, no
 * remove callback before the clean-up and exactly one per item in it.
 *
 * Readers rest one timer tick every CHTR_REST_US of reading (outside their
 * reader section). Without the rests a CPU-bound reader on every CPU leaves
 * A-RCU only the short gaps between its sections to detect a grace period in
 * (a CPU found inside a reader is polled again later), and every resize waits
 * for a grace period: about one second per resize at -smp 4 and 8 under TCG.
 * The rests do not change what is checked.
 *
 * Clean-up: every item is removed, cht_destroy() must succeed, and the heap and
 * frame counters must be back at their baseline.
 */

#include <test.h>
#include <testlib.h>
#include <adt/cht.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <mm/malloc.h>
#include <mm/slab.h>
#include <mm/frame.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>
#include "prng.h"

#define CHTR_ORDER_SMALL  13
#define CHTR_ITEMS        (1UL << 16)
/** max_load at which 2^16 items fit 2^13 buckets and not 2^14. */
#define CHTR_LOAD_SMALL   32
/** max_load at which 2^16 items fit 2^14 buckets and not 2^13. */
#define CHTR_LOAD_BIG     4
/** Resizes (grow + shrink pairs: CHTR_RESIZES / 2 each). */
#define CHTR_RESIZES      40
/**
 * Lookups that must have run while a resize was in progress (the race the
 * test exists for).
 */
#define CHTR_MIN_DURING   (CHTR_RESIZES * 1000)
#define CHTR_EXTRA_READERS 2
#define CHTR_BATCH        16
/** Reading time between two rests of a reader (see the file comment). */
#define CHTR_REST_US      30000
/** Updates per reader section when filling and emptying the table. */
#define CHTR_UPD_BATCH    32
#define CHTR_LIVE         0xC47A11FEu
/** Bound for one resize to complete (generous: TCG, 2 host cores). */
#define CHTR_RESIZE_MAX_US  (120 * 1000 * 1000UL)
#define CHTR_SETTLE_MAX_US  (10 * 1000 * 1000UL)

typedef struct {
	cht_link_t link;
	uint64_t key;
	uint32_t magic;
	/** Remove callbacks run on this item. Atomics. */
	uint32_t callbacks;
} chtr_item_t;

typedef struct {
	uint64_t seed;
	/** Results, read by the main thread after the join. */
	uint64_t lookups;
	uint64_t misses;
	uint64_t wrong;
	uint64_t during_resize;
} chtr_reader_t;

/** Allocated per run: leaked (with the items) if a resize never completes. */
static cht_t *table;
static chtr_item_t *items;
static chtr_reader_t readers[CONFIG_MAX_CPUS + CHTR_EXTRA_READERS];
static thread_t *reader_threads[CONFIG_MAX_CPUS + CHTR_EXTRA_READERS];
/** Set by the main thread when the readers should stop. Atomics. */
static bool stop;
static atomic_t callbacks;
static atomic_t bad_callbacks;

static void chtr_remove_cb(cht_link_t *link)
{
	chtr_item_t *it = (chtr_item_t *) link;
	if (it < items || it >= items + CHTR_ITEMS || it->magic != CHTR_LIVE ||
	    __atomic_fetch_add(&it->callbacks, 1, __ATOMIC_RELAXED) != 0)
		atomic_inc(&bad_callbacks);
	atomic_inc(&callbacks);
}

CHT_DEFINE_U64_KEY(chtr, chtr_item_t, link, key, cht_u64_identity)

static const cht_ops_t chtr_ops = {
	CHT_U64_KEY_OPS(chtr),
	.remove_callback = chtr_remove_cb,
};

static void chtr_reader(void *arg)
{
	chtr_reader_t *r = arg;
	cht_stats_t st;
	uint64_t rest_at = uptime_us() + CHTR_REST_US;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		cht_get_stats(table, &st);
		rcu_read_lock();
		for (unsigned i = 0; i < CHTR_BATCH; i++) {
			uint64_t key = prng_xorshift64s(&r->seed) % CHTR_ITEMS;
			cht_link_t *l = cht_find(table, &key);
			if (l == NULL)
				r->misses++;
			else if ((chtr_item_t *) l != &items[key] ||
			    ((chtr_item_t *) l)->key != key ||
			    ((chtr_item_t *) l)->magic != CHTR_LIVE)
				r->wrong++;
		}
		rcu_read_unlock();
		r->lookups += CHTR_BATCH;
		if (st.resizing)
			r->during_resize += CHTR_BATCH;
		uint64_t now = uptime_us();
		if (now >= rest_at) {
			thread_usleep(1);
			rest_at = uptime_us() + CHTR_REST_US;
		}
	}
}

/** Waits (bounded) until the table has 2^order buckets and no resize runs. */
static bool wait_order(size_t order)
{
	cht_stats_t st;
	uint64_t start = uptime_us();
	for (;;) {
		cht_get_stats(table, &st);
		if (st.buckets == (1UL << order) && !st.resizing)
			return true;
		if (uptime_us() - start > CHTR_RESIZE_MAX_US) {
			TPRINTF("chtresize: waited %lu s for 2^%zu buckets: %zu buckets, "
			    "%zu items, resizing %d\n", CHTR_RESIZE_MAX_US / 1000000,
			    order, st.buckets, st.items, st.resizing);
			return false;
		}
		thread_usleep(1000);
	}
}

/** Inserts all items (reader sections of CHTR_UPD_BATCH inserts). */
static void insert_all(void)
{
	for (size_t i = 0; i < CHTR_ITEMS; i += CHTR_UPD_BATCH) {
		rcu_read_lock();
		for (size_t j = i; j < CHTR_ITEMS && j < i + CHTR_UPD_BATCH; j++)
			cht_insert(table, &items[j].link);
		rcu_read_unlock();
	}
}

/** Removes all items. @return how many cht_remove_item() calls failed. */
static size_t remove_all(void)
{
	size_t failed = 0;
	for (size_t i = 0; i < CHTR_ITEMS; i += CHTR_UPD_BATCH) {
		rcu_read_lock();
		for (size_t j = i; j < CHTR_ITEMS && j < i + CHTR_UPD_BATCH; j++) {
			if (!cht_remove_item(table, &items[j].link))
				failed++;
		}
		rcu_read_unlock();
	}
	return failed;
}

/** A resize did not complete in time: the table cannot be destroyed. */
static bool resize_stuck;

/** The resizes; readers are running. @return NULL or the failure reason. */
static const char *resize_run(uint64_t *done, uint64_t *resize_us)
{
	for (unsigned r = 0; r < CHTR_RESIZES; r++) {
		bool grow = r % 2 == 0;
		uint64_t t0 = uptime_us();
		cht_set_max_load(table, grow ? CHTR_LOAD_BIG : CHTR_LOAD_SMALL);
		if (!wait_order(grow ? CHTR_ORDER_SMALL + 1 : CHTR_ORDER_SMALL)) {
			cht_stats_t st;
			cht_get_stats(table, &st);
			resize_stuck = st.resizing;
			return grow ? "the table did not grow to 2^14 buckets" :
			    "the table did not shrink to 2^13 buckets";
		}
		*resize_us += uptime_us() - t0;
		(*done)++;
	}
	return NULL;
}

/**
 * Continuous resize test, see the file comment.
 * @return NULL on success, or the reason of the failure.
 */
/** Allocates the table and the items (all live) and creates the table at
 *  its small size. @return NULL or the failure (nothing left allocated). */
static const char *chtr_setup(void)
{
	table = malloc(sizeof(cht_t));
	items = malloc(CHTR_ITEMS * sizeof(chtr_item_t));
	if (!table || !items) {
		free(table);
		free(items);
		return "out of memory for the table or the items";
	}
	for (size_t i = 0; i < CHTR_ITEMS; i++) {
		items[i].key = i;
		items[i].magic = CHTR_LIVE;
		items[i].callbacks = 0;
	}
	if (cht_create_named(table, "chtresize", 1UL << CHTR_ORDER_SMALL,
	    1UL << CHTR_ORDER_SMALL, CHTR_LOAD_SMALL, &chtr_ops) != CHT_OK) {
		free(table);
		free(items);
		return "cht_create failed";
	}
	return NULL;
}

/** Creates the @a nreaders readers, wired round-robin to @a online (@a
 *  created: how many). @return NULL or the failure. */
static const char *chtr_create_readers(const unsigned *online, unsigned ncpu,
    unsigned nreaders, unsigned *created)
{
	const char *err = NULL;
	for (unsigned i = 0; i < nreaders; i++) {
		readers[i].seed = 0x9E3779B97F4A7C15ULL * (i + 1);
		readers[i].lookups = 0;
		readers[i].misses = 0;
		readers[i].wrong = 0;
		readers[i].during_resize = 0;
		reader_threads[i] = testlib_create(chtr_reader, &readers[i],
		    "chtresize-rd", &cpus[online[i % ncpu]]);
		if (!reader_threads[i]) {
			err = "thread_create failed (out of memory)";
			break;
		}
		(*created)++;
	}
	return err;
}

/** Clean-up after the run (also after a failure, @a err): removes every
 *  item, checks the remove callbacks (@a early_cbs: those that ran before
 *  any removal) and destroys the table. @a leaked: set when cht_destroy()
 *  failed and the table and items are left allocated. @return the verdict. */
static const char *chtr_cleanup(const char *err, size_t early_cbs, bool *leaked)
{
	size_t failed = remove_all();
	rcu_barrier();
	if (!err && failed != 0)
		err = "cht_remove_item failed for an item of the table";
	if (!err && early_cbs != 0)
		err = "a remove callback ran before any item was removed";
	if (!err && atomic_get(&callbacks) != CHTR_ITEMS)
		err = "wrong number of remove callbacks in the clean-up";
	if (!err && atomic_get(&bad_callbacks) != 0)
		err = "a remove callback ran twice or for a foreign item";
	int rc = cht_destroy(table);
	if (rc != CHT_OK && !err)
		err = "cht_destroy failed on the emptied table";
	if (rc != CHT_OK) {
		/* The table still references the items: leak both. */
		table = NULL;
		items = NULL;
		*leaked = true;
		return err;
	}
	free(table);
	free(items);
	table = NULL;
	items = NULL;
	return err;
}

/** The readers' verdict (@a lookups, @a misses, @a wrong, @a during: their
 *  sums) and the resize counts (@a st). @return the first failure or NULL. */
static const char *chtr_verdict(uint64_t lookups, uint64_t misses,
    uint64_t wrong, uint64_t during, const cht_stats_t *st)
{
	static char reason[200];
	const char *err = NULL;

	if (!err && misses != 0) {
		snprintf(reason, sizeof(reason), "%lu of %lu lookups missed a "
		    "present item", misses, lookups);
		err = reason;
	}
	if (!err && wrong != 0) {
		snprintf(reason, sizeof(reason), "%lu of %lu lookups returned a "
		    "wrong item", wrong, lookups);
		err = reason;
	}
	if (!err && (st->grows != CHTR_RESIZES / 2 ||
	    st->shrinks != CHTR_RESIZES / 2))
		err = "grow/shrink counts differ from the resizes requested";
	if (!err && during < CHTR_MIN_DURING) {
		snprintf(reason, sizeof(reason), "only %lu lookups ran while a "
		    "resize was in progress (at least %lu required)", during,
		    (unsigned long) CHTR_MIN_DURING);
		err = reason;
	}
	return err;
}

const char *test_chtresize(void)
{
	static char reason[200];
	heap_stats_t hbase;
	frame_stats_t fbase;
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = 0;
	cht_stats_t st;

	ncpu = test_online_cpus(online);
	if (ncpu == 0)
		return "no CPU online";
	unsigned nreaders = ncpu + CHTR_EXTRA_READERS;

	testlib_wait_workers_idle(CHTR_SETTLE_MAX_US);
	testlib_mem_snapshot(&hbase, &fbase);

	atomic_set(&callbacks, 0);
	atomic_set(&bad_callbacks, 0);
	resize_stuck = false;
	__atomic_store_n(&stop, false, __ATOMIC_RELAXED);

	const char *err = chtr_setup();
	if (err)
		return err;
	TPRINTF("chtresize: %lu items always present, %u readers on %u CPUs, %d "
	    "resizes 2^%d <-> 2^%d buckets (cht_set_max_load %d <-> %d)\n",
	    CHTR_ITEMS, nreaders, ncpu, CHTR_RESIZES, CHTR_ORDER_SMALL,
	    CHTR_ORDER_SMALL + 1, CHTR_LOAD_SMALL, CHTR_LOAD_BIG);

	unsigned created = 0;
	err = chtr_create_readers(online, ncpu, nreaders, &created);
	uint64_t t0 = uptime_us();
	if (!err) {
		insert_all();
		cht_get_stats(table, &st);
		TPRINTF("chtresize: %lu items inserted in %lu ms: %zu buckets\n",
		    CHTR_ITEMS, (uptime_us() - t0) / 1000, st.buckets);
		if (st.items != CHTR_ITEMS ||
		    st.buckets != (1UL << CHTR_ORDER_SMALL))
			err = "unexpected table state after inserting the items";
	}
	if (err) {
		/* Let the created readers exit at once. */
		__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	}
	uint64_t t1 = uptime_us();
	for (unsigned i = 0; i < created; i++)
		thread_start(reader_threads[i]);
	uint64_t resizes = 0, resize_us = 0;
	if (!err)
		err = resize_run(&resizes, &resize_us);
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < created; i++)
		(void) thread_join(reader_threads[i]);
	uint64_t t2 = uptime_us();

	uint64_t lookups = 0, misses = 0, wrong = 0, during = 0;
	for (unsigned i = 0; i < created; i++) {
		lookups += readers[i].lookups;
		misses += readers[i].misses;
		wrong += readers[i].wrong;
		during += readers[i].during_resize;
	}
	cht_get_stats(table, &st);
	TPRINTF("chtresize: %lu resizes in %lu ms (%lu ms waiting for them): "
	    "%lu lookups, %lu of them while a resize was in progress, %lu misses, "
	    "%lu wrong items; table: %lu grows, %lu shrinks\n", resizes,
	    (t2 - t1) / 1000, resize_us / 1000, lookups, during, misses, wrong,
	    (unsigned long) st.grows, (unsigned long) st.shrinks);
	size_t early_cbs = atomic_get(&callbacks);
	if (resize_stuck) {
		/* cht_destroy() would wait for the resize forever: leak it all. */
		TPRINTF("chtresize: a resize never completed; the table and its "
		    "items are left allocated\n");
		table = NULL;
		items = NULL;
		if (misses != 0) {
			snprintf(reason, sizeof(reason), "%s; %lu of %lu lookups missed "
			    "a present item", err, misses, lookups);
			return reason;
		}
		return err;
	}

	bool leaked = false;
	err = chtr_cleanup(err, early_cbs, &leaked);
	if (leaked)
		return err;
	if (!err)
		err = chtr_verdict(lookups, misses, wrong, during, &st);
	if (err)
		return err;

	err = testlib_mem_back(&hbase, &fbase, CHTR_SETTLE_MAX_US);
	if (err)
		return err;
	TPRINTF("chtresize: heap and frames back at the baseline\n");
	return NULL;
}
