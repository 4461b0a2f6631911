/** @file cht_sanity.c
 * The CHT sanity sequence (see cht_sanity.h), compiled into the kernel test
 * `cht` (kernel/test/cht/cht1.c) and into the userspace tests
 * (uspace/tests/test_api.c). It uses only the table's API (<adt/cht.h>) and
 * the cht_sanity_env_* functions each side provides.
 */
#include "cht_sanity.h"

/** Keys 0 .. SAN_N - 1. */
#define SAN_N        200
#define SAN_MAX      (SAN_N + 8)
#define SAN_INIT_SIZE 16
#define SAN_MAX_LOAD  4

typedef struct {
	cht_link_t link;
	uint64_t key;
	/** Remove callbacks so far. Atomics. */
	uint32_t cbs;
} san_item_t;

/* One sequence runs at a time (see cht_sanity_run()). */
static san_item_t *san_items[SAN_MAX];
static size_t san_n;
/** Remove callbacks so far. Atomics. */
static size_t san_cbs;

static inline san_item_t *item_of(const cht_link_t *l)
{
	return (san_item_t *) (void *) ((char *) l -
	    __builtin_offsetof(san_item_t, link));
}

static size_t key_hash_of(uint64_t key)
{
	return (key >> 3) & 1023;
}

/** Counts, does not free (the items are checked later). */
static void san_cb(cht_link_t *l)
{
	san_item_t *it = item_of(l);
	__atomic_fetch_add(&it->cbs, 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&san_cbs, 1, __ATOMIC_ACQ_REL);
}

CHT_DEFINE_U64_KEY(san, san_item_t, link, key, key_hash_of)

static const cht_ops_t san_ops = {
	CHT_U64_KEY_OPS(san),
	.remove_callback = san_cb,
};

static san_item_t *san_new(uint64_t key)
{
	if (san_n >= SAN_MAX)
		return NULL;
	san_item_t *it = cht_sanity_env_alloc(sizeof(*it));
	if (it) {
		it->key = key;
		san_items[san_n++] = it;
	}
	return it;
}

/** Frees the last item san_new() made (it never was in the table). */
static void san_drop_last(void)
{
	cht_sanity_env_free(san_items[--san_n]);
}

/** Finds @a key in @a h. Inside a reader section. */
static san_item_t *find(cht_t *h, uint64_t key)
{
	cht_link_t *l = cht_find(h, &key);
	return l ? item_of(l) : NULL;
}

/** Number of items matching @a key (cht_find + cht_find_next), max 100. */
static size_t count_key(cht_t *h, uint64_t key, bool use_equal)
{
	size_t n = 0;
	cht_link_t *l = cht_find(h, &key);
	while (l && n < 100) {
		if (item_of(l)->key != key)
			return 1000;
		n++;
		l = use_equal ? cht_find_next_equal(h, l) : cht_find_next(h, &key, l);
	}
	return n;
}

/** Phase 1: inserts keys 0 .. SAN_N - 1 (many more than 16 buckets *
 * max_load 4) and finds each of them; absent keys, some sharing the hash of
 * present ones, are not found. */
static const char *steps_insert_find(cht_t *h)
{
	san_item_t *it;

	for (uint64_t k = 0; k < SAN_N; k++) {
		if (!(it = san_new(k)))
			return "out of memory";
		cht_sanity_env_read_lock();
		cht_insert(h, &it->link);
		bool found = find(h, k) == it;
		cht_sanity_env_read_unlock();
		if (!found)
			return "an item is not found right after its insert";
	}
	cht_sanity_env_read_lock();
	for (uint64_t k = 0; k < SAN_N; k++) {
		san_item_t *f = find(h, k);
		if (!f || f->key != k || f != san_items[k]) {
			cht_sanity_env_read_unlock();
			return "an inserted item is not found";
		}
	}
	for (uint64_t k = SAN_N; k < SAN_N + 64; k++) {
		if (find(h, k) || find(h, k + 8192)) {
			cht_sanity_env_read_unlock();
			return "a key never inserted is found";
		}
	}
	cht_sanity_env_read_unlock();
	return NULL;
}

/** Phase 2: three more items with key 5; @a d5 receives the four items of
 * key 5 (d5[0] the first). find_next and find_next_equal see exactly them. */
static const char *steps_duplicates(cht_t *h, san_item_t *d5[4])
{
	d5[0] = san_items[5];
	for (int i = 1; i < 4; i++) {
		if (!(d5[i] = san_new(5)))
			return "out of memory";
		cht_sanity_env_read_lock();
		cht_insert(h, &d5[i]->link);
		cht_sanity_env_read_unlock();
	}
	cht_sanity_env_read_lock();
	size_t c1 = count_key(h, 5, false);
	size_t c2 = count_key(h, 5, true);
	unsigned seen = 0;
	uint64_t key5 = 5;
	for (cht_link_t *l = cht_find(h, &key5); l; l = cht_find_next(h, &key5, l)) {
		for (int i = 0; i < 4; i++) {
			if (item_of(l) == d5[i])
				seen |= 1u << i;
		}
	}
	size_t c6 = count_key(h, 6, false);
	cht_sanity_env_read_unlock();
	if (c1 != 4 || c2 != 4)
		return "find_next / find_next_equal do not see 4 duplicates exactly";
	if (seen != 0xF)
		return "find_next does not return every duplicate";
	if (c6 != 1)
		return "duplicates of a key show up under another key of the same hash";
	return NULL;
}

/** Phase 3: insert-unique is refused for a present key (returning it) and
 * for a duplicated key (returning one of them); an absent key with a shared
 * hash is inserted. */
static const char *steps_insert_unique(cht_t *h)
{
	san_item_t *it;
	cht_link_t *dup;

	if (!(it = san_new(7)))
		return "out of memory";
	cht_sanity_env_read_lock();
	dup = NULL;
	bool ins = cht_insert_unique(h, &it->link, &dup);
	cht_sanity_env_read_unlock();
	if (ins)
		return "insert_unique inserted a duplicate";
	if (!dup || item_of(dup) != san_items[7])
		return "insert_unique did not return the present duplicate";
	san_drop_last();   /* it was never in the table */
	/* Duplicate of key 5 (4 items): returns one of them. */
	if (!(it = san_new(5)))
		return "out of memory";
	cht_sanity_env_read_lock();
	dup = NULL;
	ins = cht_insert_unique(h, &it->link, &dup);
	cht_sanity_env_read_unlock();
	if (ins || !dup || item_of(dup)->key != 5)
		return "insert_unique of a duplicated key misbehaves";
	san_drop_last();
	/* Absent key with a shared hash: inserted. */
	if (!(it = san_new(SAN_N + 1)))
		return "out of memory";
	cht_sanity_env_read_lock();
	dup = NULL;
	ins = cht_insert_unique(h, &it->link, &dup);
	bool found = find(h, SAN_N + 1) == it;
	cht_sanity_env_read_unlock();
	if (!ins || !found)
		return "insert_unique of an absent key failed";
	return NULL;
}

/** Phase 4: removes one duplicate item (@a d5_item, true once, then false),
 * then key 5 (the count; other keys of that hash stay); after a grace period
 * the 4 remove callbacks have run, each once. */
static const char *steps_remove(cht_t *h, san_item_t *d5_item)
{
	uint64_t key5 = 5;

	cht_sanity_env_read_lock();
	bool r1 = cht_remove_item(h, &d5_item->link);
	bool r2 = cht_remove_item(h, &d5_item->link);
	size_t c1 = count_key(h, 5, false);
	cht_sanity_env_read_unlock();
	if (!r1 || r2)
		return "remove_item: not true once and then false";
	if (c1 != 3)
		return "3 duplicates expected after remove_item";

	cht_sanity_env_read_lock();
	size_t removed = cht_remove_key(h, &key5);
	size_t again = cht_remove_key(h, &key5);
	bool gone = find(h, 5) == NULL;
	bool others = find(h, 4) == san_items[4] && find(h, 6) == san_items[6];
	cht_sanity_env_read_unlock();
	if (removed != 3)
		return "remove_key did not return the number of duplicates (3)";
	if (again != 0 || !gone)
		return "a removed key is still found or removed again";
	if (!others)
		return "remove_key removed another key of the same hash";

	cht_sanity_env_barrier();
	if (__atomic_load_n(&san_cbs, __ATOMIC_ACQUIRE) != 4)
		return "wrong number of remove callbacks (4 expected)";
	for (size_t i = 0; i < san_n; i++) {
		bool is5 = san_items[i]->key == 5;
		if (san_items[i]->cbs != (is5 ? 1u : 0u))
			return "remove callback count of an item is not 1 (removed) or "
			    "0 (present)";
	}
	return NULL;
}

/** Phase 5: destroy refuses the non-empty table, which stays usable; then
 * the table is emptied by key, and every item gets exactly one remove
 * callback. */
static const char *steps_empty(cht_t *h)
{
	if (cht_sanity_env_destroy(h) != CHT_EBUSY)
		return "cht_destroy did not refuse a non-empty table";
	cht_sanity_env_read_lock();
	bool found = find(h, 100) == san_items[100];
	cht_sanity_env_read_unlock();
	if (!found)
		return "the table lost an item after a refused cht_destroy";

	size_t expect_cbs = 4;
	for (size_t i = 0; i < san_n; i++) {
		uint64_t k = san_items[i]->key;
		if (k == 5)
			continue;
		cht_sanity_env_read_lock();
		size_t c = cht_remove_key(h, &k);
		cht_sanity_env_read_unlock();
		if (c != 1)
			return "remove_key of a unique key did not return 1";
		expect_cbs++;
	}
	cht_stats_t st;
	cht_sanity_env_get_stats(h, &st);
	cht_sanity_env_read_lock();
	size_t left = 0;
	for (uint64_t k = 0; k < SAN_N + 8; k++)
		left += find(h, k) != NULL;
	cht_sanity_env_read_unlock();
	if (st.items != 0 || left != 0)
		return "the table is not empty after removing everything";
	cht_sanity_env_barrier();
	if (__atomic_load_n(&san_cbs, __ATOMIC_ACQUIRE) != expect_cbs)
		return "wrong number of remove callbacks at the end";
	for (size_t i = 0; i < san_n; i++) {
		if (san_items[i]->cbs != 1)
			return "an item did not get exactly one remove callback";
	}
	cht_sanity_env_report(san_n, expect_cbs, &st);
	return NULL;
}

/** The sequence's phases in order; the first error stops it. */
static const char *sanity_steps(cht_t *h)
{
	san_item_t *d5[4];
	const char *err;

	if ((err = steps_insert_find(h)) || (err = steps_duplicates(h, d5))
	    || (err = steps_insert_unique(h)) || (err = steps_remove(h, d5[2])))
		return err;
	return steps_empty(h);
}

const char *cht_sanity_run(void)
{
	cht_t *h = cht_sanity_env_alloc(sizeof(cht_t));
	if (!h)
		return "out of memory";
	san_n = 0;
	__atomic_store_n(&san_cbs, 0, __ATOMIC_RELEASE);
	if (cht_create_named(h, "cht-sanity", SAN_INIT_SIZE, SAN_INIT_SIZE,
	    SAN_MAX_LOAD, &san_ops) != CHT_OK) {
		cht_sanity_env_free(h);
		return "cht_create failed";
	}
	const char *err = sanity_steps(h);
	if (err) {
		/* Best effort: empty the table so that it can be destroyed. */
		for (size_t i = 0; i < san_n; i++) {
			cht_sanity_env_read_lock();
			(void) cht_remove_item(h, &san_items[i]->link);
			cht_sanity_env_read_unlock();
		}
		cht_sanity_env_barrier();
	}
	if (cht_sanity_env_destroy(h) != CHT_OK) {
		/* The table references the items: leak both deliberately. */
		return err ? err : "cht_destroy of the empty table failed";
	}
	cht_sanity_env_free(h);
	for (size_t i = 0; i < san_n; i++)
		cht_sanity_env_free(san_items[i]);
	san_n = 0;
	return err;
}
