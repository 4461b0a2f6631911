/** @file test_api.c
 * Unit tests of libcht's API semantics: the kernel's sanity sequence (this
 * project's kernel/test/cht/cht1.c, and HelenOS's cht1 do_sanity_test) on the
 * raw kernel API at several table sizes, the checked API's
 * status codes (NULL table, unregistered thread, destroy of a non-empty table,
 * calls inside/outside reader sections), duplicates, remove callbacks exactly
 * once and only after readers are done, background resizes both ways, the
 * key-value wrapper and the RCU's own API (nesting, synchronize waits for
 * readers, barrier, threads that exit registered).
 */
#include "tutil.h"
#include <cht.h>
#include "cht_sanity.h"

#define ALIVE 0x11fe11feu
#define DEAD  0xdeaddeadu

typedef struct {
	cht_link_t link;
	size_t hash;
	uint64_t key;
	int mark;
	unsigned magic;
	int cb_count;
} val_t;

static int callbacks;

static size_t v_hash(const cht_link_t *l)
{
	return cht_item_of(l, val_t, link)->hash;
}

/* Keys hash to key % 10: 1 and 11 share a hash but differ (HelenOS test). */
static size_t v_key_hash(void *key)
{
	return *(uint64_t *) key % 10;
}

static bool v_equal(const cht_link_t *a, const cht_link_t *b)
{
	return cht_item_of(a, val_t, link)->key == cht_item_of(b, val_t, link)->key;
}

static bool v_key_equal(void *key, const cht_link_t *l)
{
	return *(uint64_t *) key == cht_item_of(l, val_t, link)->key;
}

static void v_remove(cht_link_t *l)
{
	val_t *v = cht_item_of(l, val_t, link);
	CHECK(v->magic == ALIVE, "callback on a dead item");
	v->cb_count++;
	__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
}

static const cht_ops_t ops = {
	.hash = v_hash, .key_hash = v_key_hash, .equal = v_equal,
	.key_equal = v_key_equal, .remove_callback = v_remove,
};

/* Items whose hash is their key (set hash = key): for the bulk tests. */
static size_t k_key_hash(void *key)
{
	return *(uint64_t *) key;
}

static const cht_ops_t kops = {
	.hash = v_hash, .key_hash = k_key_hash, .equal = v_equal,
	.key_equal = v_key_equal, .remove_callback = v_remove,
};

static void set_val(val_t *v, size_t hash, uint64_t key)
{
	memset(v, 0, sizeof(*v));
	v->hash = hash;
	v->key = key;
	v->magic = ALIVE;
}

static cht_link_t *find(cht_t *h, uint64_t key)
{
	return cht_find(h, &key);
}

static val_t *V(cht_link_t *l)
{
	return cht_item_of(l, val_t, link);
}

/*
 * The kernel's sanity sequence (HelenOS kernel/test/cht/cht1.c,
 * do_sanity_test), on the raw API inside one reader section.
 */
static const char *sanity(cht_t *h)
{
	uint64_t k0 = 0;
	if (cht_find_lazy(h, &k0))
		return "Found lazy in empty table.";
	if (find(h, 0))
		return "Found in empty table.";
	if (cht_remove_key(h, &k0))
		return "Removed from empty table.";

	static val_t v[6];
	uint64_t key[] = { 1, 1, 1, 11, 12, 13 };
	for (int i = 0; i < 3; i++)
		set_val(&v[i], 1, key[i]);  /* three equal items */
	set_val(&v[3], 1, key[3]);          /* same hash, different key */
	set_val(&v[4], 2, key[4]);
	set_val(&v[5], 3, key[5]);

	cht_link_t *dup;
	if (!cht_insert_unique(h, &v[0].link, &dup))
		return "Duplicates in empty";
	if (cht_insert_unique(h, &v[1].link, &dup))
		return "Inserted a duplicate";
	if (dup != &v[0].link)
		return "Returned wrong duplicate";
	if (!cht_insert_unique(h, &v[3].link, &dup))
		return "Refused non-equal item but with a hash in table.";
	cht_insert(h, &v[1].link);
	cht_insert(h, &v[2].link);
	bool ok = cht_insert_unique(h, &v[4].link, &dup);
	ok = ok && cht_insert_unique(h, &v[5].link, &dup);
	if (!ok)
		return "Refused unique ins 4, 5.";

	if (find(h, 0))
		return "Phantom find.";
	cht_link_t *item = find(h, v[5].key);
	if (!item || item != &v[5].link)
		return "Missing 5.";
	if (cht_find_next(h, &v[5].key, &v[5].link))
		return "Found nonexisting duplicate 5";
	item = find(h, v[3].key);
	if (!item || item != &v[3].link)
		return "Missing 3.";
	if (cht_find_next(h, &v[3].key, &v[3].link))
		return "Found nonexisting duplicate 3, same hash as others.";

	item = find(h, v[0].key);
	if (!item)
		return "Missing 0.";
	V(item)->mark = 1;
	for (int k = 1; k < 3; k++) {
		item = cht_find_next(h, &key[0], item);
		if (!item)
			return "Did not find an inserted duplicate";
		if (V(item)->key != v[0].key)
			return "Found item with a different key.";
		if (V(item)->mark)
			return "Found twice the same node.";
		V(item)->mark = 1;
	}
	for (int i = 0; i < 3; i++) {
		if (!v[i].mark)
			return "Did not find all duplicates";
		v[i].mark = 0;
	}
	if (cht_find_next(h, &key[0], item))
		return "Found non-existing duplicate.";
	/* cht_find_next_equal() walks the same run. */
	int eq = 1;
	for (cht_link_t *e = find(h, key[0]); (e = cht_find_next_equal(h, e));)
		eq++;
	if (eq != 3)
		return "find_next_equal did not see 3 duplicates";

	item = cht_find_next(h, &key[0], find(h, key[0]));
	if (!item)
		return "Missing second duplicate.";
	V(item)->mark = 1;
	if (!cht_remove_item(h, item))
		return "Failed to remove duplicate item.";
	if (cht_remove_item(h, item))
		return "Removed an item twice.";
	if (find(h, key[0]) == item)
		return "Found removed item.";
	for (cht_link_t *l = find(h, key[0]); l; l = cht_find_next(h, &key[0], l))
		if (l == item)
			return "Found removed item as a duplicate.";

	size_t removed = cht_remove_key(h, &key[0]);
	if (removed != 2)
		return "Failed to remove all duplicates";
	if (find(h, key[0]))
		return "Found removed key";
	if (!find(h, key[3]))
		return "Removed incorrect key";
	for (size_t k = 0; k < sizeof(key) / sizeof(key[0]); k++)
		(void) cht_remove_key(h, &key[k]);
	for (size_t k = 0; k < sizeof(key) / sizeof(key[0]); k++)
		if (find(h, key[k]))
			return "Found a key in a cleared table";
	return NULL;
}

static void test_sanity(void)
{
	static const struct { size_t init, min, load; } cfg[] = {
		{ 0, 0, 0 }, { 1, 1, 1 }, { 5, 1, 4 }, { 128, 16, 2 },
		{ 1 << 16, 1, 4 },
	};
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		cht_t h;
		CHECK_EQ(cht_create(&h, cfg[c].init, cfg[c].min, cfg[c].load,
		    &ops), CHT_OK);
		int before = __atomic_load_n(&callbacks, __ATOMIC_RELAXED);
		cht_rcu_read_lock();
		const char *err = sanity(&h);
		cht_rcu_read_unlock();
		CHECK(err == NULL, "sanity (init %zu): %s", cfg[c].init, err);
		CHECK_EQ(cht_rcu_barrier(), CHT_OK);
		/* Six items, each removed once: six callbacks. */
		CHECK_EQ(__atomic_load_n(&callbacks, __ATOMIC_RELAXED) - before, 6);
		CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	}
}

/*
 * The project kernel's own sanity sequence: common/test/cht_sanity.c, the
 * same source the kernel test `cht` runs, linked into this test (see
 * uspace/Makefile); here is its environment.
 */
void *cht_sanity_env_alloc(size_t size)
{
	return calloc(1, size);
}

void cht_sanity_env_free(void *p)
{
	free(p);
}

void cht_sanity_env_read_lock(void)
{
	cht_rcu_read_lock();
}

void cht_sanity_env_read_unlock(void)
{
	cht_rcu_read_unlock();
}

void cht_sanity_env_barrier(void)
{
	cht_rcu_barrier();
}

/* cht_u_destroy: the raw cht_destroy() races with a resize in flight on h->b
 * (reported to the kernel side; see cht_api.c). */
int cht_sanity_env_destroy(cht_t *h)
{
	return cht_u_destroy(h);
}

void cht_sanity_env_get_stats(cht_t *h, cht_stats_t *st)
{
	cht_u_get_stats(h, st);
}

void cht_sanity_env_report(size_t items, size_t cbs,
    const cht_stats_t *st)
{
	printf("kernel sanity: %zu items, %zu callbacks; table had %zu buckets, "
	    "%lu grows\n", items, cbs, st->buckets,
	    (unsigned long) st->grows);
}

static void test_kernel_sanity(void)
{
	const char *err = cht_sanity_run();
	CHECK(err == NULL, "kernel sanity: %s", err);
}

/* --- checked API status codes ------------------------------------------------- */

typedef struct {
	cht_t *h;
	cht_kv_t *kv;
	val_t *item;
	int rc[16];
	bool locked;
} unreg_arg_t;

static void *unregistered_thread(void *p)
{
	unreg_arg_t *a = p;
	uint64_t key = a->item->key;
	cht_link_t *out = (cht_link_t *) 1;
	a->rc[0] = cht_u_insert(a->h, &a->item->link);
	a->rc[1] = cht_u_insert_unique(a->h, &a->item->link, NULL);
	a->rc[2] = cht_u_find(a->h, &key, &out);
	a->rc[3] = (int) cht_u_remove_key(a->h, &key);
	a->rc[4] = cht_u_remove_item(a->h, &a->item->link);
	a->rc[5] = cht_u_destroy(a->h);
	a->rc[6] = cht_rcu_read_lock();
	a->locked = cht_rcu_read_locked();
	a->rc[7] = cht_kv_put(a->kv, 1, 2);
	a->rc[8] = cht_kv_get(a->kv, 1, NULL);
	a->rc[9] = cht_kv_del(a->kv, 1);
	cht_stats_t st;
	a->rc[10] = cht_u_get_stats(a->h, &st);
	/* Grace periods and barriers need no registration. */
	a->rc[11] = cht_rcu_synchronize();
	a->rc[12] = cht_rcu_barrier();
	a->rc[13] = cht_rcu_unregister_thread();
	a->rc[14] = out == NULL ? 0 : 1;
	return NULL;
}

static void test_errors(void)
{
	cht_t h;
	val_t a, b;
	set_val(&a, 7, 7);
	set_val(&b, 7, 7);
	uint64_t key = 7;
	cht_link_t *out;
	cht_stats_t st;

	/* Bad arguments. */
	CHECK_EQ(cht_u_create(NULL, 0, 0, 0, &ops), CHT_EINVAL);
	CHECK_EQ(cht_u_create(&h, 0, 0, 0, NULL), CHT_EINVAL);
	cht_ops_t bad = ops;
	bad.key_equal = NULL;
	CHECK_EQ(cht_u_create(&h, 0, 0, 0, &bad), CHT_EINVAL);
	CHECK_EQ(cht_u_insert(NULL, &a.link), CHT_EINVAL);
	CHECK_EQ(cht_u_insert_unique(NULL, &a.link, NULL), CHT_EINVAL);
	CHECK_EQ(cht_u_find(NULL, &key, &out), CHT_EINVAL);
	CHECK_EQ(cht_u_find_next(NULL, &key, &a.link, &out), CHT_EINVAL);
	CHECK_EQ(cht_u_remove_key(NULL, &key), CHT_EINVAL);
	CHECK_EQ(cht_u_remove_item(NULL, &a.link), CHT_EINVAL);
	CHECK_EQ(cht_u_destroy(NULL), CHT_EINVAL);
	CHECK_EQ(cht_u_get_stats(NULL, &st), CHT_EINVAL);
	CHECK_EQ(cht_destroy(NULL), CHT_EINVAL);
	CHECK_EQ(cht_kv_create(NULL, 0), CHT_EINVAL);
	CHECK_EQ(cht_kv_put(NULL, 1, 1), CHT_EINVAL);
	CHECK_EQ(cht_kv_get(NULL, 1, NULL), CHT_EINVAL);
	CHECK_EQ(cht_kv_del(NULL, 1), CHT_EINVAL);
	CHECK_EQ(cht_kv_destroy(NULL), CHT_EINVAL);
	CHECK_EQ(cht_kv_size(NULL), 0);

	CHECK_EQ(cht_u_create(&h, 4, 1, 0, &ops), CHT_OK);
	CHECK_EQ(cht_u_insert(&h, NULL), CHT_EINVAL);
	CHECK_EQ(cht_u_insert(&h, &a.link), CHT_OK);
	/* Lookups need the caller's section. */
	CHECK_EQ(cht_u_find(&h, &key, &out), CHT_ENOSECT);
	CHECK(out == NULL, "out not cleared");
	CHECK_EQ(cht_u_find(&h, &key, NULL), CHT_EINVAL);
	cht_rcu_read_lock();
	CHECK_EQ(cht_u_find(&h, &key, &out), CHT_OK);
	CHECK(out == &a.link, "found the wrong item");
	CHECK_EQ(cht_u_find_next(&h, &key, out, &out), CHT_ENOENT);
	/* Duplicate: EEXIST and the present item (we are in a section). */
	CHECK_EQ(cht_u_insert_unique(&h, &b.link, &out), CHT_EEXIST);
	CHECK(out == &a.link, "wrong duplicate reported");
	/* Inside a section: destroy, synchronize, barrier would deadlock. */
	CHECK_EQ(cht_u_destroy(&h), CHT_EDEADLK);
	CHECK_EQ(cht_rcu_synchronize(), CHT_EDEADLK);
	CHECK_EQ(cht_rcu_barrier(), CHT_EDEADLK);
	CHECK_EQ(cht_rcu_unregister_thread(), CHT_EDEADLK);
	cht_rcu_read_unlock();
	/* Outside a section, no duplicate pointer is handed out. */
	out = (cht_link_t *) 1;
	CHECK_EQ(cht_u_insert_unique(&h, &b.link, &out), CHT_EEXIST);
	CHECK(out == NULL, "dangling duplicate returned outside a section");

	/* Destroy of a non-empty table: EBUSY, and the table still works. */
	CHECK_EQ(cht_u_destroy(&h), CHT_EBUSY);
	cht_rcu_read_lock();
	CHECK_EQ(cht_u_find(&h, &key, &out), CHT_OK);
	cht_rcu_read_unlock();
	CHECK_EQ(cht_u_get_stats(&h, &st), CHT_OK);
	CHECK_EQ(st.items, 1);

	/* An unregistered thread gets CHT_EPERM from everything it may not do. */
	cht_kv_t *kv;
	CHECK_EQ(cht_kv_create(&kv, 0), CHT_OK);
	val_t c;
	set_val(&c, 7, 7);
	unreg_arg_t ua = { .h = &h, .kv = kv, .item = &c };
	pthread_t t;
	tu_spawn(&t, unregistered_thread, &ua);
	pthread_join(t, NULL);
	for (int i = 0; i <= 10; i++)
		CHECK(ua.rc[i] == CHT_EPERM, "unregistered call %d returned %d (%s)",
		    i, ua.rc[i], cht_strerror(ua.rc[i]));
	CHECK(!ua.locked, "unregistered thread believes it is in a section");
	CHECK_EQ(ua.rc[11], CHT_OK);
	CHECK_EQ(ua.rc[12], CHT_OK);
	CHECK_EQ(ua.rc[13], CHT_EPERM);
	CHECK_EQ(ua.rc[14], 0);

	/* remove_item: once OK, then ENOENT. remove_key counts. */
	CHECK_EQ(cht_u_remove_item(&h, &a.link), CHT_OK);
	CHECK_EQ(cht_u_remove_item(&h, &a.link), CHT_ENOENT);
	CHECK_EQ(cht_u_remove_key(&h, &key), 0);
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);  /* a's callback has run */
	set_val(&a, 7, 7);
	set_val(&b, 7, 7);
	CHECK_EQ(cht_u_insert(&h, &a.link), CHT_OK);
	CHECK_EQ(cht_u_insert(&h, &b.link), CHT_OK);
	CHECK_EQ(cht_u_remove_key(&h, &key), 2);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	/* A destroyed table is refused. */
	CHECK_EQ(cht_u_insert(&h, &a.link), CHT_EINVAL);
	CHECK_EQ(cht_u_destroy(&h), CHT_EINVAL);
	CHECK_EQ(cht_destroy(&h), CHT_EINVAL);
	CHECK_EQ(cht_kv_destroy(kv), CHT_OK);
	CHECK(strcmp(cht_strerror(CHT_EPERM), "unknown error") != 0, "strerror");
}

/* --- key-value wrapper ------------------------------------------------------------ */

static void test_kv(void)
{
	cht_kv_t *kv;
	uint64_t v = 0;
	CHECK_EQ(cht_kv_create(&kv, 0), CHT_OK);
	for (uint64_t k = 0; k < 20000; k++)
		CHECK_EQ(cht_kv_put(kv, k, k * 3), CHT_OK);
	CHECK_EQ(cht_kv_put(kv, 5, 0), CHT_EEXIST);
	CHECK_EQ(cht_kv_size(kv), 20000);
	for (uint64_t k = 0; k < 20000; k++) {
		v = 0;
		CHECK_EQ(cht_kv_get(kv, k, &v), CHT_OK);
		CHECK_EQ(v, k * 3);
	}
	CHECK_EQ(cht_kv_get(kv, 20000, &v), CHT_ENOENT);
	CHECK_EQ(cht_kv_del(kv, 20000), CHT_ENOENT);
	CHECK_EQ(cht_kv_destroy(kv), CHT_EBUSY);
	for (uint64_t k = 0; k < 20000; k++)
		CHECK_EQ(cht_kv_del(kv, k), CHT_OK);
	CHECK_EQ(cht_kv_get(kv, 7, &v), CHT_ENOENT);
	CHECK_EQ(cht_kv_size(kv), 0);
	CHECK_EQ(cht_kv_destroy(kv), CHT_OK);
}

/* --- resizes in the background ---------------------------------------------------- */

static size_t buckets_of(cht_t *h)
{
	cht_stats_t st;
	CHECK_EQ(cht_u_get_stats(h, &st), CHT_OK);
	return st.buckets;
}

/** Waits (up to 10 s) until the table is not resizing and has @a buckets. */
static bool wait_buckets(cht_t *h, size_t lo, size_t hi)
{
	for (int i = 0; i < 10000; i++) {
		cht_stats_t st;
		cht_u_get_stats(h, &st);
		if (!st.resizing && st.buckets >= lo && st.buckets <= hi)
			return true;
		tu_sleep_ms(1);
	}
	return false;
}

static void test_resize(void)
{
	enum { N = 50000 };
	cht_t h;
	val_t *v = calloc(N, sizeof(val_t));
	CHECK_EQ(cht_u_create(&h, 1, 1, 4, &kops), CHT_OK);
	/* The smallest table has two buckets (a bucket is hash >> (64 - order)). */
	CHECK_EQ(buckets_of(&h), 2);
	int before = __atomic_load_n(&callbacks, __ATOMIC_RELAXED);
	for (int i = 0; i < N; i++) {
		set_val(&v[i], (size_t) i, (uint64_t) i);  /* the table mixes it */
		CHECK_EQ(cht_u_insert_unique(&h, &v[i].link, NULL), CHT_OK);
	}
	/* Grows to N / max_load buckets: 2^14 >= 50000 / 4. */
	CHECK(wait_buckets(&h, 1 << 14, 1 << 14), "did not grow: %zu buckets",
	    buckets_of(&h));
	cht_stats_t st;
	cht_u_get_stats(&h, &st);
	CHECK(st.grows >= 13, "grows %lu", (unsigned long) st.grows);
	cht_rcu_read_lock();
	for (uint64_t i = 0; i < N; i++) {
		cht_link_t *l = cht_find(&h, &i);
		CHECK(l == &v[i].link, "lost %lu after growing", (unsigned long) i);
	}
	cht_rcu_read_unlock();
	for (uint64_t i = 0; i < N; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	/* Shrinks back to min_size. */
	CHECK(wait_buckets(&h, 2, 2), "did not shrink: %zu buckets",
	    buckets_of(&h));
	cht_u_get_stats(&h, &st);
	CHECK(st.shrinks >= 13, "shrinks %lu", (unsigned long) st.shrinks);
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(__atomic_load_n(&callbacks, __ATOMIC_RELAXED) - before, N);
	for (int i = 0; i < N; i++)
		CHECK(v[i].cb_count == 1, "item %d: %d callbacks", i, v[i].cb_count);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	free(v);

	/* cht_set_max_load(): the table resizes to the new limit. */
	CHECK_EQ(cht_u_set_max_load(NULL, 4), CHT_EINVAL);
	CHECK_EQ(cht_u_set_max_load(&h, 0), CHT_EINVAL);
	CHECK_EQ(cht_u_create(&h, 1, 1, 4, &kops), CHT_OK);
	v = calloc(4096, sizeof(val_t));
	for (int i = 0; i < 4096; i++) {
		set_val(&v[i], (size_t) i, (uint64_t) i);
		cht_u_insert(&h, &v[i].link);
	}
	CHECK(wait_buckets(&h, 1024, 1024), "4096 items at load 4: %zu buckets",
	    buckets_of(&h));
	CHECK_EQ(cht_u_set_max_load(&h, 1), CHT_OK);
	CHECK(wait_buckets(&h, 4096, 4096), "max_load 1: %zu buckets",
	    buckets_of(&h));
	CHECK_EQ(cht_u_set_max_load(&h, 64), CHT_OK);
	CHECK(wait_buckets(&h, 256, 256), "max_load 64: %zu buckets",
	    buckets_of(&h));
	cht_rcu_read_lock();
	for (uint64_t i = 0; i < 4096; i++)
		CHECK(cht_find(&h, &i) == &v[i].link, "lost %lu", (unsigned long) i);
	cht_rcu_read_unlock();
	for (uint64_t i = 0; i < 4096; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	free(v);

	/*
	 * cht_set_max_load_frac(): a fractional grow limit, exact at the
	 * threshold. At 3/2 items per bucket, 3072 items fit 2^11 buckets
	 * (3072 is not above 1.5 * 2048) and 3073 need 2^12; no whole-number
	 * limit gives both sizes.
	 */
	CHECK_EQ(cht_u_set_max_load_frac(NULL, 3, 2), CHT_EINVAL);
	CHECK_EQ(cht_u_create(&h, 1, 1, 4, &kops), CHT_OK);
	CHECK_EQ(cht_u_set_max_load_frac(&h, 3, 0), CHT_EINVAL);
	CHECK_EQ(cht_u_set_max_load_frac(&h, 1, 32), CHT_EINVAL);
	/* A huge den would overflow the fraction (0.999... read as 1/16). */
	CHECK_EQ(cht_u_set_max_load_frac(&h, (size_t) -1 / 2 - 1,
	    (size_t) -1 / 2), CHT_EINVAL);
	v = calloc(3073, sizeof(val_t));
	for (int i = 0; i < 3072; i++) {
		set_val(&v[i], (size_t) i, (uint64_t) i);
		cht_u_insert(&h, &v[i].link);
	}
	CHECK_EQ(cht_u_set_max_load_frac(&h, 3, 2), CHT_OK);
	CHECK(wait_buckets(&h, 2048, 2048), "3072 items at load 3/2: %zu "
	    "buckets", buckets_of(&h));
	set_val(&v[3072], 3072, 3072);
	cht_u_insert(&h, &v[3072].link);
	/* The exact count is read by the resize that the call requests. */
	CHECK_EQ(cht_u_set_max_load_frac(&h, 3, 2), CHT_OK);
	CHECK(wait_buckets(&h, 4096, 4096), "3073 items at load 3/2: %zu "
	    "buckets", buckets_of(&h));
	/* Below one item per bucket: 3073 items at 1/2 need 2^13. */
	CHECK_EQ(cht_u_set_max_load_frac(&h, 1, 2), CHT_OK);
	CHECK(wait_buckets(&h, 8192, 8192), "3073 items at load 1/2: %zu "
	    "buckets", buckets_of(&h));
	for (uint64_t i = 0; i < 3073; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	free(v);

	/*
	 * cht_create_load(): a fractional grow limit from creation on. 3000
	 * items (more than the count's unfolded deltas above 2048) need 2^13
	 * buckets at 1/2 item per bucket (the default limit of 1 holds them in
	 * 2^12), and no more (3000 < 4096; the shrink starts below 1024). The
	 * limit must be at least 1/CHT_LOAD_ONE and den not 0.
	 */
	CHECK_EQ(cht_create_load(&h, "load", 1, 1, 1, 0, &kops), CHT_EINVAL);
	CHECK_EQ(cht_create_load(&h, "load", 1, 1, 1, 32, &kops), CHT_EINVAL);
	CHECK_EQ(cht_create_load(&h, "load", 1, 1, 1, 2, &kops), CHT_OK);
	v = calloc(3000, sizeof(val_t));
	for (int i = 0; i < 3000; i++) {
		set_val(&v[i], (size_t) i, (uint64_t) i);
		cht_u_insert(&h, &v[i].link);
	}
	CHECK(wait_buckets(&h, 8192, 8192), "3000 items created at load 1/2: "
	    "%zu buckets", buckets_of(&h));
	for (uint64_t i = 0; i < 3000; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	free(v);

	/* min_size is respected; destroy right after a burst waits for the resize. */
	CHECK_EQ(cht_u_create(&h, 0, 64, 1, &kops), CHT_OK);
	CHECK_EQ(buckets_of(&h), 64);
	v = calloc(4096, sizeof(val_t));
	for (int i = 0; i < 4096; i++) {
		set_val(&v[i], (size_t) i, (uint64_t) i);
		cht_u_insert(&h, &v[i].link);
	}
	for (uint64_t i = 0; i < 4096; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	free(v);
}

/* --- duplicates racing through insert_unique ------------------------------------------- */

enum { RACE_KEYS = 2000 };
typedef struct {
	cht_t *h;
	val_t *items;
	int wins;
} race_arg_t;

static void *race_thread(void *p)
{
	race_arg_t *a = p;
	cht_rcu_register_thread();
	for (int i = 0; i < RACE_KEYS; i++)
		if (cht_u_insert_unique(a->h, &a->items[i].link, NULL) == CHT_OK)
			a->wins++;
	return NULL;
}

/*
 * An automatic shrink after a mass delete goes down to the size a growth to
 * the same count reaches, not only into the band: 2^14 items at load 1
 * (2^14 buckets) deleted to 2248 (a little above an eighth, so not on a
 * threshold) must leave at most 2 * 2248 / 1 buckets (4096; a grown table
 * of 2248 items has 4096). A shrink that stopped at a quarter of the grow
 * limit left 8192 (load 0.27). A forced resize still moves the table only
 * into the band: at cht_set_max_load(4) 2248 items would fit 1024 buckets,
 * but the shrink from 4096 stops at 2048, where 2248 is not below
 * 4 * 2048 / 4 (the resize experiments rely on one step).
 */
static void test_shrink_deep(void)
{
	enum { N = 1 << 14, KEEP = 2248 };
	cht_t h;
	val_t *v = calloc(N, sizeof(val_t));
	CHECK_EQ(cht_u_create(&h, 1, 1, 1, &kops), CHT_OK);
	for (int i = 0; i < N; i++) {
		set_val(&v[i], (size_t) i, (uint64_t) i);
		CHECK_EQ(cht_u_insert_unique(&h, &v[i].link, NULL), CHT_OK);
	}
	CHECK(wait_buckets(&h, N, N), "%d items at load 1: %zu buckets", N,
	    buckets_of(&h));
	for (uint64_t i = KEEP; i < N; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	/* Settled (not resizing) at 4096 buckets: load above 1/2. */
	bool ok = wait_buckets(&h, 2048, 2 * KEEP);
	size_t b = buckets_of(&h);
	printf("test_api: shrink: %d -> %d items, %d -> %zu buckets\n", N, KEEP,
	    N, b);
	CHECK(ok, "%d items left of %d at load 1: %zu buckets, more than "
	    "2 * %d", KEEP, N, b, KEEP);
	cht_rcu_read_lock();
	for (uint64_t i = 0; i < KEEP; i++)
		CHECK(cht_find(&h, &i) == &v[i].link, "lost %lu after the shrink",
		    (unsigned long) i);
	cht_rcu_read_unlock();
	CHECK_EQ(cht_u_set_max_load(&h, 4), CHT_OK);
	CHECK(wait_buckets(&h, 2048, 2048), "%d items at load 4: %zu buckets",
	    KEEP, buckets_of(&h));
	for (uint64_t i = 0; i < KEEP; i++)
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	free(v);
}

static void test_unique_race(void)
{
	cht_t h;
	CHECK_EQ(cht_u_create(&h, 1, 1, 0, &kops), CHT_OK);
	race_arg_t a[3];
	pthread_t t[3];
	for (int k = 0; k < 3; k++) {
		a[k].h = &h;
		a[k].wins = 0;
		a[k].items = calloc(RACE_KEYS, sizeof(val_t));
		for (int i = 0; i < RACE_KEYS; i++)
			set_val(&a[k].items[i], (size_t) i, (uint64_t) i);
	}
	for (int k = 0; k < 3; k++)
		tu_spawn(&t[k], race_thread, &a[k]);
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	CHECK_EQ(a[0].wins + a[1].wins + a[2].wins, RACE_KEYS);
	for (uint64_t i = 0; i < RACE_KEYS; i++) {
		cht_rcu_read_lock();
		cht_link_t *l = cht_find(&h, &i);
		CHECK(l && !cht_find_next(&h, &i, l), "key %lu not unique",
		    (unsigned long) i);
		cht_rcu_read_unlock();
		CHECK_EQ(cht_u_remove_key(&h, &i), 1);
	}
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);
	for (int k = 0; k < 3; k++)
		free(a[k].items);
}

/* --- RCU semantics ------------------------------------------------------------------ */

typedef struct {
	cht_t *h;
	uint64_t key;
	int phase;        /* 1: in section holding the item; 2: may leave */
	unsigned seen_magic;
} holder_arg_t;

static void *holder_thread(void *p)
{
	holder_arg_t *a = p;
	cht_rcu_register_thread();
	cht_rcu_read_lock();
	cht_rcu_read_lock();  /* nested */
	cht_link_t *l = cht_find(a->h, &a->key);
	cht_rcu_read_unlock();
	CHECK(cht_rcu_read_locked(), "nested unlock left the section");
	__atomic_store_n(&a->phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&a->phase, __ATOMIC_ACQUIRE) != 2)
		tu_sleep_ms(1);
	/* Still valid: the callback must not have run. */
	a->seen_magic = l ? V(l)->magic : 0;
	CHECK(l && V(l)->cb_count == 0, "callback ran while a reader held it");
	cht_rcu_read_unlock();
	CHECK(!cht_rcu_read_locked(), "still in a section");
	return NULL;
}

typedef struct {
	int done;
} sync_arg_t;

static void *sync_thread(void *p)
{
	sync_arg_t *a = p;
	CHECK_EQ(cht_rcu_synchronize(), CHT_OK);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *exit_registered(void *p)
{
	(void) p;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);  /* idempotent */
	cht_rcu_read_lock();
	cht_rcu_read_unlock();
	return NULL;  /* exits registered: the library unregisters it */
}

static void test_rcu(void)
{
	printf("rcu flavour: %s\n", cht_rcu_flavour());
	cht_rcu_stats_t rs0, rs;
	cht_rcu_get_stats(&rs0);

	/* A reader holding an item delays its callback and synchronize. */
	cht_t h;
	val_t x;
	set_val(&x, 3, 3);
	CHECK_EQ(cht_u_create(&h, 0, 0, 0, &ops), CHT_OK);
	CHECK_EQ(cht_u_insert(&h, &x.link), CHT_OK);
	holder_arg_t ha = { .h = &h, .key = 3 };
	pthread_t th, ts;
	tu_spawn(&th, holder_thread, &ha);
	while (__atomic_load_n(&ha.phase, __ATOMIC_ACQUIRE) != 1)
		tu_sleep_ms(1);
	CHECK_EQ(cht_u_remove_key(&h, &ha.key), 1);
	sync_arg_t sa = { 0 };
	tu_spawn(&ts, sync_thread, &sa);
	tu_sleep_ms(100);
	CHECK(!__atomic_load_n(&sa.done, __ATOMIC_ACQUIRE),
	    "synchronize returned while a reader was inside");
	CHECK_EQ(__atomic_load_n(&x.cb_count, __ATOMIC_RELAXED), 0);
	__atomic_store_n(&ha.phase, 2, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	pthread_join(ts, NULL);
	CHECK(sa.done, "synchronize did not return");
	CHECK_EQ(ha.seen_magic, ALIVE);
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(x.cb_count, 1);
	CHECK_EQ(cht_u_destroy(&h), CHT_OK);

	/*
	 * Statistics from inside a section while a grace period waits for this
	 * very section (it must not take the lock the waiter holds).
	 */
	sync_arg_t sb = { 0 };
	cht_rcu_read_lock();
	tu_spawn(&ts, sync_thread, &sb);
	tu_sleep_ms(50);
	cht_rcu_get_stats(&rs);
	CHECK(!__atomic_load_n(&sb.done, __ATOMIC_ACQUIRE),
	    "synchronize returned while this thread was inside");
	cht_rcu_read_unlock();
	pthread_join(ts, NULL);
	CHECK(sb.done, "synchronize did not return");

	/* Threads that exit while registered are unregistered automatically. */
	cht_rcu_get_stats(&rs);
	size_t readers = rs.readers;
	for (int i = 0; i < 20; i++) {
		pthread_t t;
		tu_spawn(&t, exit_registered, NULL);
		pthread_join(t, NULL);
	}
	cht_rcu_get_stats(&rs);
	CHECK_EQ(rs.readers, readers);
	CHECK_EQ(cht_rcu_synchronize(), CHT_OK);  /* does not wait for them */

	/* Unbalanced unlock is reported and ignored. */
	cht_rcu_read_unlock();
	CHECK(!cht_rcu_read_locked(), "unbalanced unlock entered a section");

	/* Unregister / re-register. */
	CHECK_EQ(cht_rcu_unregister_thread(), CHT_OK);
	CHECK_EQ(cht_rcu_unregister_thread(), CHT_EPERM);
	CHECK_EQ(cht_rcu_read_lock(), CHT_EPERM);
	CHECK(!cht_rcu_read_locked(), "unregistered thread in a section");
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	CHECK_EQ(cht_rcu_read_lock(), CHT_OK);
	cht_rcu_read_unlock();

	cht_rcu_get_stats(&rs);
	CHECK(rs.gps > rs0.gps, "no grace periods counted");
	CHECK(rs.callbacks_run > rs0.callbacks_run, "no callbacks counted");
}

/* --- statistics printing -------------------------------------------------------------- */

static void test_print(void)
{
	cht_t h;
	CHECK_EQ(cht_create_named(&h, "test_api", 16, 1, 0, &ops), CHT_OK);
	cht_print_tables();
	CHECK_EQ(cht_destroy(&h), CHT_OK);
	CHECK(strlen(cht_version()) > 0, "version");
}

/**
 * Creating a table needs no registered thread (nor a reader section): the
 * main thread runs this before it registers. A defect, since fixed, had
 * cht_create() link the bucket dummies inside reader sections and abort
 * here (memcached creates its table before its threads register).
 */
static void test_create_unregistered(void)
{
	static const size_t sizes[] = { 0, 1, 2, 64, 4096 };
	CHECK(!cht_rcu_registered(), "main thread registered at start");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cht_t h;
		CHECK_EQ(cht_create(&h, sizes[i], 1, 0, &ops), CHT_OK);
		cht_t u;
		CHECK_EQ(cht_u_create(&u, sizes[i], 1, 0, &ops), CHT_OK);
		CHECK(!cht_rcu_registered(), "create registered the thread");
		/* Usable once the thread registers; destroy needs a registered one. */
		CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
		val_t v;
		set_val(&v, 42 % 10, 42);
		cht_rcu_read_lock();
		cht_insert(&h, &v.link);
		uint64_t key = 42;
		CHECK(cht_find(&h, &key) == &v.link, "item not found");
		CHECK_EQ(cht_remove_key(&h, &key), 1);
		cht_rcu_read_unlock();
		cht_stats_t st;
		CHECK_EQ(cht_u_get_stats(&u, &st), CHT_OK);
		CHECK_EQ(st.items, 0);
		CHECK_EQ(cht_destroy(&h), CHT_OK);
		CHECK_EQ(cht_u_destroy(&u), CHT_OK);
		CHECK_EQ(cht_rcu_unregister_thread(), CHT_OK);
	}
}

/*
 * Whether the mapping of /proc/self/smaps that holds @a addr lists @a flag
 * among its VmFlags (-1: not found).
 */
static int vma_flag(uintptr_t addr, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	bool in = false;
	int r = -1;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		/* A mapping's first line: "lo-hi perms ..." (no field line
		 * starts with hex digits and a '-'). */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = lo <= addr && addr < hi;
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			r = 0;
			for (char *s = strtok(line + 8, " \n"); s;
			    s = strtok(NULL, " \n"))
				if (strcmp(s, flag) == 0)
					r = 1;
		}
	}
	fclose(f);
	return r;
}

/*
 * A big table's bucket array is advised for transparent huge pages
 * (cht_env_malloc(), CHT_ENV_HUGE_MIN): its mapping says "hg"
 * (VM_HUGEPAGE) in /proc/self/smaps. 2^20 buckets of 16 bytes, never
 * resized (min = init). Skipped where the kernel has no THP.
 */
static void test_huge_bucket_array(void)
{
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
		printf("test_api: no transparent huge pages here, the hint not "
		    "checked\n");
		return;
	}
	cht_t h;
	const size_t n = (size_t) 1 << 20;
	CHECK_EQ(cht_create(&h, n, n, 0, &ops), CHT_OK);
	cht_rcu_read_lock();
	cht_buckets_t *b = cht_rcu_access(h.b);
	CHECK_EQ(b->order, 20);
	uintptr_t mid = (uintptr_t) &b->d[n / 2];
	cht_rcu_read_unlock();
	int hg = vma_flag(mid, "hg");
	printf("test_api: a bucket array of %zu MiB: VmFlags hg %d\n",
	    n * sizeof(b->d[0]) >> 20, hg);
	CHECK(hg == 1, "the bucket array's mapping is not advised for huge "
	    "pages (VmFlags hg: %d)", hg);
	CHECK_EQ(cht_destroy(&h), CHT_OK);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_create_unregistered();
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	test_kernel_sanity();
	test_sanity();
	test_errors();
	test_kv();
	test_resize();
	test_shrink_deep();
	test_unique_race();
	test_rcu();
	test_print();
	test_huge_bucket_array();
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	return tu_finish("test_api");
}
