/** @file test_stress.c
 * Multithreaded stress of the table with continuous background resizes,
 * checked against per-thread bookkeeping.
 *
 *   test_stress [SECONDS] [THREADS]
 *
 * - Every worker owns a key range nobody else touches and records which of
 *   its keys are present: every insert-unique, remove (by key or by item) and
 *   lookup must agree with that record exactly, whatever the others do. Each
 *   worker fills its range to 90% and drains it to 2%, again and again, so the
 *   table keeps growing and shrinking (2^0 .. 2^14 buckets) under the updates.
 * - Shared keys: all workers race insert-unique/remove-key on the same 64
 *   keys; at the end, successful inserts - successful removes of each key must
 *   equal its presence (0 or 1), and a key is never present twice.
 * - Stable keys: 1024 keys inserted first and never removed; a dedicated
 *   reader looks them up in a loop during all the resizes: zero misses allowed
 *   (a lookup never misses a present item, Triplett et al.).
 * - Items carry a magic that the remove callback poisons before freeing:
 *   a reader that sees a poisoned item proves a grace period too short; every
 *   removed item must reach the callback exactly once (counted).
 */
#include "tutil.h"
#include <cht.h>

#define ALIVE 0xa11fe5a1u
#define DEAD  0xdeadbeefu

enum { RANGE = 12288, SHARED = 64, STABLE = 1024 };
#define SHARED_BASE  (1ull << 40)
#define STABLE_BASE  (1ull << 41)

typedef struct {
	cht_link_t link;
	uint64_t key;
	unsigned magic;
} item_t;

static uint64_t callbacks;

static size_t s_hash(const cht_link_t *l)
{
	return cht_item_of(l, item_t, link)->key;
}

static size_t s_key_hash(void *key)
{
	return *(uint64_t *) key;
}

static bool s_equal(const cht_link_t *a, const cht_link_t *b)
{
	return cht_item_of(a, item_t, link)->key == cht_item_of(b, item_t, link)->key;
}

static bool s_key_equal(void *key, const cht_link_t *l)
{
	const item_t *it = cht_item_of(l, item_t, link);
	CHECK(it->magic == ALIVE, "key_equal on a dead item (key %lu)",
	    (unsigned long) it->key);
	return *(uint64_t *) key == it->key;
}

static void s_remove(cht_link_t *l)
{
	item_t *it = cht_item_of(l, item_t, link);
	CHECK(it->magic == ALIVE, "callback on a dead item");
	it->magic = DEAD;
	__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
	free(it);
}

static const cht_ops_t ops = {
	.hash = s_hash, .key_hash = s_key_hash, .equal = s_equal,
	.key_equal = s_key_equal, .remove_callback = s_remove,
};

static cht_t table;
static int stop;
/** Phase all workers follow: 1 fill, 0 drain; flipped by main(). */
static int fill_phase = 1;
static uint64_t shared_ins[SHARED], shared_rem[SHARED];

static item_t *new_item(uint64_t key)
{
	item_t *it = malloc(sizeof(*it));
	if (!it) {
		perror("malloc");
		exit(2);
	}
	it->key = key;
	it->magic = ALIVE;
	return it;
}

typedef struct {
	int id;
	uint64_t seed;
	item_t *item[RANGE];   /* present item of each own key, or NULL */
	size_t count;
	uint64_t ops, removed;
} worker_t;

/** From @a k on (cyclically), the first own key that is (not) present. */
static size_t probe(worker_t *w, size_t k, bool present)
{
	for (size_t i = 0; i < RANGE; i++, k = (k + 1) % RANGE)
		if ((w->item[k] != NULL) == present)
			return k;
	return k;
}

static void own_op(worker_t *w, bool fill)
{
	uint64_t r = tu_rand(&w->seed);
	size_t k = (size_t) (r % RANGE);
	unsigned op = (unsigned) ((r >> 32) % 100);
	/*
	 * 40% lookups; 45% the phase's update (insert while filling, remove
	 * while draining) on a key chosen to succeed; 15% the other update on
	 * a random key. Each worker's item count so sweeps between 2% and 90%
	 * of its range, and the table grows and shrinks.
	 */
	if (op >= 40 && op < 85 && (fill ? w->count < RANGE : w->count > 0))
		k = probe(w, k, !fill);
	uint64_t key = (uint64_t) w->id * RANGE + k;
	item_t *cur = w->item[k];
	cht_link_t *dup = NULL;

	if (op < 40) {
		/* Lookup: exactly our record. */
		cht_link_t *l = cht_find(&table, &key);
		CHECK(l == (cur ? &cur->link : NULL), "find key %lu: %p, expected %p",
		    (unsigned long) key, (void *) l, (void *) cur);
		if (l) {
			item_t *it = cht_item_of(l, item_t, link);
			CHECK(it->magic == ALIVE && it->key == key, "bad item found");
			CHECK(cht_find_next(&table, &key, l) == NULL,
			    "own key %lu present twice", (unsigned long) key);
		}
	} else if ((op < 85) == fill) {
		/* Filling: 45% inserts, 15% removes; draining: the reverse. */
		/* Insert unique. */
		item_t *it = new_item(key);
		bool ok = cht_insert_unique(&table, &it->link, &dup);
		if (cur) {
			CHECK(!ok && dup == &cur->link, "insert of present key %lu: "
			    "ok=%d dup=%p expected %p", (unsigned long) key, ok,
			    (void *) dup, (void *) cur);
			if (ok)
				w->item[k] = it;  /* keep the books straight */
			else
				free(it);  /* never published */
		} else {
			CHECK(ok, "insert of absent key %lu refused", (unsigned long) key);
			w->item[k] = it;
			w->count++;
		}
	} else {
		/* Remove, by key or by item. */
		bool by_item = cur && (r & (1ull << 20));
		size_t n;
		if (by_item)
			n = cht_remove_item(&table, &cur->link) ? 1 : 0;
		else
			n = cht_remove_key(&table, &key);
		CHECK(n == (cur ? 1u : 0u), "remove of key %lu: %zu (present %d)",
		    (unsigned long) key, n, cur != NULL);
		if (cur && n) {
			w->item[k] = NULL;
			w->count--;
			w->removed++;
		}
		if (by_item)  /* a second remove of the same item fails */
			CHECK(!cht_remove_item(&table, &cur->link),
			    "item removed twice");
	}
}

static void shared_op(worker_t *w)
{
	uint64_t r = tu_rand(&w->seed);
	size_t k = (size_t) (r % SHARED);
	uint64_t key = SHARED_BASE + k;
	if (r & (1ull << 40)) {
		item_t *it = new_item(key);
		if (cht_insert_unique(&table, &it->link, NULL))
			__atomic_fetch_add(&shared_ins[k], 1, __ATOMIC_RELAXED);
		else
			free(it);
	} else {
		size_t n = cht_remove_key(&table, &key);
		CHECK(n <= 1, "shared key %zu present %zu times", k, n);
		__atomic_fetch_add(&shared_rem[k], n, __ATOMIC_RELAXED);
	}
}

static void *worker(void *p)
{
	worker_t *w = p;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		bool fill = __atomic_load_n(&fill_phase, __ATOMIC_RELAXED);
		/* Sections of 1..32 operations. */
		unsigned len = 1 + (unsigned) (tu_rand(&w->seed) % 32);
		cht_rcu_read_lock();
		for (unsigned i = 0; i < len; i++) {
			if (tu_rand(&w->seed) % 16 == 0)
				shared_op(w);
			else
				own_op(w, fill);
			w->ops++;
		}
		cht_rcu_read_unlock();
		/* Now and then through the checked API, outside a section. */
		if (tu_rand(&w->seed) % 64 == 0) {
			uint64_t key = STABLE_BASE + tu_rand(&w->seed) % STABLE;
			item_t *it = new_item(key);
			CHECK_EQ(cht_u_insert_unique(&table, &it->link, NULL),
			    CHT_EEXIST);
			free(it);
		}
	}
	return NULL;
}

static uint64_t stable_lookups, stable_misses;

static void *stable_reader(void *p)
{
	(void) p;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	uint64_t n = 0, miss = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		cht_rcu_read_lock();
		for (uint64_t i = 0; i < STABLE; i++) {
			uint64_t key = STABLE_BASE + i;
			cht_link_t *l = cht_find(&table, &key);
			if (!l)
				miss++;
			else
				CHECK(cht_item_of(l, item_t, link)->magic == ALIVE,
				    "stable item dead");
		}
		cht_rcu_read_unlock();
		n += STABLE;
	}
	stable_lookups = n;
	stable_misses = miss;
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	double secs = tu_seconds(argc, argv, 3.0);
	int nthreads = tu_threads(argc, argv, 4);
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	CHECK_EQ(cht_u_create(&table, 1, 1, 4, &ops), CHT_OK);
	for (uint64_t i = 0; i < STABLE; i++)
		CHECK_EQ(cht_u_insert_unique(&table, &new_item(STABLE_BASE + i)->link,
		    NULL), CHT_OK);

	worker_t *w = calloc((size_t) nthreads, sizeof(worker_t));
	pthread_t *t = calloc((size_t) nthreads, sizeof(pthread_t));
	pthread_t rt;
	for (int i = 0; i < nthreads; i++) {
		w[i].id = i;
		w[i].seed = 0x9e3779b97f4a7c15ull * (uint64_t) (i + 1);
		tu_spawn(&t[i], worker, &w[i]);
	}
	tu_spawn(&rt, stable_reader, NULL);

	/*
	 * Conduct: all workers fill until the table holds 85% of their ranges,
	 * then drain to 3%, and so on; sample the bucket count.
	 */
	size_t min_b = SIZE_MAX, max_b = 0;
	size_t base = STABLE + SHARED / 2;
	size_t hi = base + (size_t) nthreads * RANGE * 85 / 100;
	size_t lo = base + (size_t) nthreads * RANGE * 3 / 100;
	uint64_t cycles = 0;
	/*
	 * Run for the given time and at least one full cycle (no verdict
	 * depends on the machine's speed; the cap only catches a livelock).
	 */
	uint64_t t0 = tu_now_ns();
	uint64_t t_end = t0 + (uint64_t) (secs * 1e9);
	uint64_t t_cap = t0 + (uint64_t) ((secs * 20 + 60) * 1e9);
	for (;;) {
		uint64_t now = tu_now_ns();
		if ((now >= t_end && cycles > 0) || now >= t_cap)
			break;
		cht_stats_t st;
		cht_u_get_stats(&table, &st);
		if (st.buckets < min_b)
			min_b = st.buckets;
		if (st.buckets > max_b)
			max_b = st.buckets;
		bool fill = __atomic_load_n(&fill_phase, __ATOMIC_RELAXED);
		if (fill && st.items > hi) {
			__atomic_store_n(&fill_phase, 0, __ATOMIC_RELAXED);
		} else if (!fill && st.items < lo) {
			__atomic_store_n(&fill_phase, 1, __ATOMIC_RELAXED);
			cycles++;
		}
		tu_sleep_ms(2);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	secs = (double) (tu_now_ns() - t0) / 1e9;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	pthread_join(rt, NULL);

	/* Every own key agrees with the books; then remove it. */
	uint64_t removed = 0, ops_total = 0;
	for (int i = 0; i < nthreads; i++) {
		for (size_t k = 0; k < RANGE; k++) {
			uint64_t key = (uint64_t) i * RANGE + k;
			cht_rcu_read_lock();
			cht_link_t *l = cht_find(&table, &key);
			cht_rcu_read_unlock();
			CHECK(l == (w[i].item[k] ? &w[i].item[k]->link : NULL),
			    "final find of key %lu", (unsigned long) key);
			long n = cht_u_remove_key(&table, &key);
			CHECK_EQ(n, w[i].item[k] ? 1 : 0);
			removed += (uint64_t) n;
		}
		removed += w[i].removed;
		ops_total += w[i].ops;
	}
	/* Shared keys: inserts - removes = presence. */
	for (int k = 0; k < SHARED; k++) {
		uint64_t key = SHARED_BASE + (uint64_t) k;
		long n = cht_u_remove_key(&table, &key);
		CHECK(n == (long) (shared_ins[k] - shared_rem[k]),
		    "shared key %d: %lu inserts, %lu removes, %ld present", k,
		    (unsigned long) shared_ins[k], (unsigned long) shared_rem[k], n);
		removed += shared_rem[k] + (uint64_t) (n > 0 ? n : 0);
	}
	for (uint64_t i = 0; i < STABLE; i++) {
		uint64_t key = STABLE_BASE + i;
		CHECK_EQ(cht_u_remove_key(&table, &key), 1);
		removed++;
	}
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(__atomic_load_n(&callbacks, __ATOMIC_RELAXED), removed);

	cht_stats_t st;
	cht_u_get_stats(&table, &st);
	printf("test_stress: %d threads, %.1f s, %lu ops, %lu removals, %lu fill/drain "
	    "cycles, buckets %zu..%zu, %lu grows, %lu shrinks, stable lookups %lu "
	    "(misses %lu)\n", nthreads, secs, (unsigned long) ops_total,
	    (unsigned long) removed, (unsigned long) cycles, min_b, max_b,
	    (unsigned long) st.grows, (unsigned long) st.shrinks,
	    (unsigned long) stable_lookups, (unsigned long) stable_misses);
	CHECK_EQ(stable_misses, 0);
	CHECK(stable_lookups > 0, "the stable reader did not run");
	CHECK(st.grows > 0 && st.shrinks > 0, "no resizes happened (grows %lu, "
	    "shrinks %lu)", (unsigned long) st.grows, (unsigned long) st.shrinks);
	CHECK(cycles > 0, "no fill/drain cycle completed");
	CHECK_EQ(st.items, 0);
	CHECK_EQ(cht_u_destroy(&table), CHT_OK);
	free(w);
	free(t);
	return tu_finish("test_stress");
}
