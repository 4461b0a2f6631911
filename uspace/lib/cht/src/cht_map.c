/** @file cht_map.c
 * The managed map (cht_map.h): byte-string and 8-byte maps on the CHT. Their
 * items and values come from the library's own allocator (cht_alloc.c, via
 * cht_map_int.h), replaced values are freed through its batched deferred
 * frees; the 8-byte map's default inline layout is cht_imap.c.
 */
#include <cht.h>
#include <cht_map.h>
#include "cht_map_int.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* --- common --------------------------------------------------------------------- */

/**
 * The maps' grow limit: 1/CHT_MAP_LOAD_DEN items per bucket on average (the
 * table shrinks below a quarter of it). See create_table().
 */
#ifndef CHT_MAP_LOAD_DEN
#define CHT_MAP_LOAD_DEN 2
#endif

/**
 * Creates the table of a map: sized for @a expect_keys at the map's load
 * (never shrinking below that), growing above 1/CHT_MAP_LOAD_DEN items per
 * bucket. A lower load than libcht's default of 1 shortens the walk of a
 * lookup: at load L a hit reads about 1 + L/2 items of its bucket and a miss
 * finds its bucket empty with probability about e^-L, at 16 bytes of bucket
 * array per bucket (bench/userspace/README.md, "Cache misses").
 */
static int create_table(cht_t *h, const char *name, size_t expect_keys,
    const cht_ops_t *ops)
{
	size_t b = 1;
	while (b < expect_keys * CHT_MAP_LOAD_DEN && b < ((size_t) 1 << 40))
		b <<= 1;
	int rc = cht_create_named(h, name, b, b, 0, ops);
	if (rc != CHT_OK)
		return rc;
	if (CHT_MAP_LOAD_DEN > 1 &&
	    cht_set_max_load_frac(h, 1, CHT_MAP_LOAD_DEN) != CHT_OK)
		abort();
	return CHT_OK;
}

static inline int ensure_reg(void)
{
	if (likely(cht_rcu_registered()))
		return CHT_OK;
	return cht_rcu_register_thread();
}

int cht_map_read_lock(void)
{
	int rc = ensure_reg();
	if (rc != CHT_OK)
		return rc;
	return cht_rcu_read_lock();
}

void cht_map_read_unlock(void)
{
	cht_rcu_read_unlock();
}

static void fill_stats(cht_t *h, cht_map_stats_t *st, size_t item_bytes)
{
	cht_stats_t cs;
	cht_rcu_read_lock();
	cht_get_stats(h, &cs);
	cht_rcu_read_unlock();
	st->items = cs.items;
	st->buckets = cs.buckets;
	st->bucket_bytes = sizeof(cht_buckets_t) + cs.buckets * sizeof(cht_node_t);
	st->item_bytes = item_bytes;
	st->reserved_bytes = cht__ma_reserved();
	st->bytes_per_key = cs.items ? (double) (st->bucket_bytes + item_bytes) /
	    (double) cs.items : 0.0;
	st->resizing = cs.resizing ||
	    __atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0;
}

/**
 * Removes every item of @a h (no concurrent users), destroys it and returns
 * the wholly free slabs to the system (cht__ma_reclaim()).
 */
static int destroy_table(cht_t *h)
{
	if (cht_rcu_read_locked())
		return CHT_EDEADLK;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	cht_rcu_read_lock();
	uintptr_t nx = __atomic_load_n(&h->head.next, __ATOMIC_ACQUIRE);
	for (;;) {
		cht_node_t *n = (cht_node_t *) (nx & ~CHT_LINK_MARKS);
		if (!n)
			break;
		nx = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
		if ((n->hash & 1) && !(nx & CHT_LINK_DELETED))
			cht_remove_item(h, cht_link_of(n));
	}
	cht_rcu_read_unlock();
	cht__ma_flush_retired();
	while (__atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0)
		cht_env_sleep_ms(1);
	cht_rcu_barrier();
	/*
	 * The remove callbacks ran on the RCU reclaimer thread: its cache
	 * passes its objects to the depot (a callback of our own, run after
	 * theirs), then the slabs that are wholly free go back to the system.
	 */
	cht__ma_flush_reclaimer();
	int rc = cht_destroy(h) == CHT_OK ? CHT_OK : CHT_EBUSY;
	cht__ma_reclaim();
	return rc;
}

/*
 * Hash of a byte string: 8 bytes at a time, each word xored in and
 * multiplied by an odd constant (the multiplicative step of cht_mix_hash(),
 * Knuth's hashing by multiplication), the length folded in first; the table
 * mixes the result again (cht_item_hash()), so this only has to be
 * injective-ish per word, not well spread.
 */
static uint64_t bytes_hash(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t) len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		len -= 8;
	}
	if (len) {
		uint64_t w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

/* --- byte-string map ---------------------------------------------------------------- */

/** A value block (immutable once published). */
typedef struct bval {
	uint32_t len;
	uint8_t cls;
	unsigned char data[];
} bval_t;

/** An item: the link, then what the lookup reads next (length, hash, key). */
typedef struct bitem {
	cht_link_t link;
	uint32_t klen;
	uint8_t cls;
	/** The current value; swapped by CAS (release), read with acquire. */
	bval_t *val;
	unsigned char key[];
} bitem_t;

struct cht_map {
	cht_t h;
};

typedef struct {
	const void *p;
	size_t len;
	uint64_t hash;
} bkey_t;

static size_t bm_hash(const cht_link_t *l)
{
	const bitem_t *it = cht_item_of(l, bitem_t, link);
	return bytes_hash(it->key, it->klen);
}

static size_t bm_key_hash(void *k)
{
	return ((bkey_t *) k)->hash;
}

static bool bm_equal(const cht_link_t *a, const cht_link_t *b)
{
	const bitem_t *x = cht_item_of(a, bitem_t, link);
	const bitem_t *y = cht_item_of(b, bitem_t, link);
	return x->klen == y->klen &&
	    (x->klen == 0 || memcmp(x->key, y->key, x->klen) == 0);
}

static bool bm_key_equal(void *k, const cht_link_t *l)
{
	const bkey_t *key = k;
	const bitem_t *it = cht_item_of(l, bitem_t, link);
	return it->klen == key->len &&
	    (key->len == 0 || memcmp(it->key, key->p, key->len) == 0);
}

static void bval_free(bval_t *v)
{
	cht__ma_free(v, v->cls, sizeof(bval_t) + v->len);
}

static void bm_remove_cb(cht_link_t *l)
{
	bitem_t *it = cht_item_of(l, bitem_t, link);
	bval_free(__atomic_load_n(&it->val, __ATOMIC_ACQUIRE));
	cht__ma_free(it, it->cls, sizeof(bitem_t) + it->klen);
}

static const cht_ops_t bm_ops = {
	.hash = bm_hash, .key_hash = bm_key_hash, .equal = bm_equal,
	.key_equal = bm_key_equal, .remove_callback = bm_remove_cb,
};

static bval_t *bval_new(const void *a, size_t alen, const void *b, size_t blen)
{
	uint8_t cls;
	bval_t *v = cht__ma_alloc(sizeof(bval_t) + alen + blen, &cls);
	if (!v)
		return NULL;
	v->len = (uint32_t) (alen + blen);
	v->cls = cls;
	if (alen)
		memcpy(v->data, a, alen);
	if (blen)
		memcpy(v->data + alen, b, blen);
	return v;
}

static bitem_t *bitem_new(const void *key, size_t klen, bval_t *v)
{
	uint8_t cls;
	bitem_t *it = cht__ma_alloc(sizeof(bitem_t) + klen, &cls);
	if (!it)
		return NULL;
	it->klen = (uint32_t) klen;
	it->cls = cls;
	it->val = v;
	if (klen)
		memcpy(it->key, key, klen);
	return it;
}

int cht_map_create(cht_map_t **out, size_t expect_keys)
{
	if (!out)
		return CHT_EINVAL;
	*out = NULL;
	cht_map_t *m = calloc(1, sizeof(*m));
	if (!m)
		return CHT_ENOMEM;
	int rc = create_table(&m->h, "cht_map", expect_keys, &bm_ops);
	if (rc != CHT_OK) {
		free(m);
		return rc;
	}
	*out = m;
	return CHT_OK;
}

int cht_map_destroy(cht_map_t *m)
{
	if (!m)
		return CHT_EINVAL;
	int rc = destroy_table(&m->h);
	if (rc == CHT_OK)
		free(m);
	return rc;
}

#define CHECK_ARGS(m, key, klen) do { \
		if (!(m) || ((klen) && !(key)) || (klen) > CHT_MAP_KEY_MAX) \
			return CHT_EINVAL; \
		int rc_ = ensure_reg(); \
		if (rc_ != CHT_OK) \
			return rc_; \
	} while (0)

static inline bitem_t *bm_find(cht_map_t *m, bkey_t *k)
{
	cht_link_t *l = cht_find_fast(&m->h, k, &bm_ops);
	return l ? cht_item_of(l, bitem_t, link) : NULL;
}

/**
 * Swaps in a value built from the current one by @a build until the CAS
 * succeeds; the replaced block is retired. Inside the caller's section.
 * @a build returns NULL for out of memory, or (bval_t *) 1 to give up with
 * CHT_ESTALE.
 */
typedef bval_t *(*build_fn)(const bval_t *cur, void *arg);

static int bm_swap(bitem_t *it, build_fn build, void *arg)
{
	bval_t *cur = __atomic_load_n(&it->val, __ATOMIC_ACQUIRE);
	for (;;) {
		bval_t *nv = build(cur, arg);
		if (!nv)
			return CHT_ENOMEM;
		if (nv == (bval_t *) 1)
			return CHT_ESTALE;
		/* release: the new block's bytes before its pointer */
		if (__atomic_compare_exchange_n(&it->val, &cur, nv, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			cht__ma_retire(cur, cur->cls, sizeof(bval_t) + cur->len);
			return CHT_OK;
		}
		bval_free(nv);  /* never published */
	}
}

typedef struct {
	const void *p;
	size_t len;
	const void *exp;
	size_t elen;
} swap_arg_t;

static bval_t *build_put(const bval_t *cur, void *arg)
{
	(void) cur;
	swap_arg_t *a = arg;
	return bval_new(a->p, a->len, NULL, 0);
}

static bval_t *build_cas(const bval_t *cur, void *arg)
{
	swap_arg_t *a = arg;
	if (cur->len != a->elen ||
	    (a->elen && memcmp(cur->data, a->exp, a->elen) != 0))
		return (bval_t *) 1;
	return bval_new(a->p, a->len, NULL, 0);
}

static bval_t *build_append(const bval_t *cur, void *arg)
{
	swap_arg_t *a = arg;
	if ((size_t) cur->len + a->len > CHT_MAP_VAL_MAX)
		return (bval_t *) 1;
	return bval_new(cur->data, cur->len, a->p, a->len);
}

/**
 * Inserts a new item for @a key with the value built by @a build from an
 * empty value, or applies @a build to the present item's value.
 * @a insert_only: CHT_EEXIST when present.
 */
static int bm_upsert(cht_map_t *m, const void *key, size_t klen,
    build_fn build, swap_arg_t *a, bool insert_only)
{
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	static const bval_t empty = { 0, 0 };
	cht_rcu_read_lock();
	bitem_t *it = bm_find(m, &k);
	for (;;) {
		if (it) {
			int rc = insert_only ? CHT_EEXIST : bm_swap(it, build, a);
			cht_rcu_read_unlock();
			return rc;
		}
		bval_t *v = build(&empty, a);
		if (!v || v == (bval_t *) 1) {
			cht_rcu_read_unlock();
			return v ? CHT_EINVAL : CHT_ENOMEM;
		}
		bitem_t *n = bitem_new(key, klen, v);
		if (!n) {
			bval_free(v);
			cht_rcu_read_unlock();
			return CHT_ENOMEM;
		}
		cht_link_t *dup = NULL;
		if (cht_insert_unique_fast(&m->h, &n->link, &dup, &bm_ops)) {
			cht_rcu_read_unlock();
			return CHT_OK;
		}
		/* Lost a race with an insert of the same key: never published. */
		bval_free(v);
		cht__ma_free(n, n->cls, sizeof(bitem_t) + klen);
		it = cht_item_of(dup, bitem_t, link);
	}
}

int cht_map_put(cht_map_t *m, const void *key, size_t klen, const void *val,
    size_t vlen)
{
	CHECK_ARGS(m, key, klen);
	if (vlen > CHT_MAP_VAL_MAX || (vlen && !val))
		return CHT_EINVAL;
	swap_arg_t a = { val, vlen, NULL, 0 };
	return bm_upsert(m, key, klen, build_put, &a, false);
}

int cht_map_insert(cht_map_t *m, const void *key, size_t klen,
    const void *val, size_t vlen)
{
	CHECK_ARGS(m, key, klen);
	if (vlen > CHT_MAP_VAL_MAX || (vlen && !val))
		return CHT_EINVAL;
	swap_arg_t a = { val, vlen, NULL, 0 };
	return bm_upsert(m, key, klen, build_put, &a, true);
}

int cht_map_append(cht_map_t *m, const void *key, size_t klen,
    const void *data, size_t dlen)
{
	CHECK_ARGS(m, key, klen);
	if (dlen > CHT_MAP_VAL_MAX || (dlen && !data))
		return CHT_EINVAL;
	swap_arg_t a = { data, dlen, NULL, 0 };
	int rc = bm_upsert(m, key, klen, build_append, &a, false);
	return rc == CHT_ESTALE ? CHT_EINVAL : rc;
}

int cht_map_cas(cht_map_t *m, const void *key, size_t klen,
    const void *expect, size_t elen, const void *val, size_t vlen)
{
	CHECK_ARGS(m, key, klen);
	if (vlen > CHT_MAP_VAL_MAX || (vlen && !val) || (elen && !expect))
		return CHT_EINVAL;
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	swap_arg_t a = { val, vlen, expect, elen };
	cht_rcu_read_lock();
	bitem_t *it = bm_find(m, &k);
	int rc = it ? bm_swap(it, build_cas, &a) : CHT_ENOENT;
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_get(cht_map_t *m, const void *key, size_t klen, void *buf,
    size_t cap, size_t *vlen)
{
	CHECK_ARGS(m, key, klen);
	if (cap && !buf)
		return CHT_EINVAL;
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	cht_rcu_read_lock();
	bitem_t *it = bm_find(m, &k);
	int rc = CHT_ENOENT;
	if (it) {
		const bval_t *v = __atomic_load_n(&it->val, __ATOMIC_ACQUIRE);
		size_t n = v->len < cap ? v->len : cap;
		if (n)
			memcpy(buf, v->data, n);
		if (vlen)
			*vlen = v->len;
		rc = v->len <= cap ? CHT_OK : CHT_ERANGE;
	}
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_get_ref(cht_map_t *m, const void *key, size_t klen,
    const void **val, size_t *vlen)
{
	if (!m || ((klen) && !(key)) || klen > CHT_MAP_KEY_MAX || !val)
		return CHT_EINVAL;
	if (!cht_rcu_read_locked())
		return CHT_ENOSECT;
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	bitem_t *it = bm_find(m, &k);
	if (!it)
		return CHT_ENOENT;
	const bval_t *v = __atomic_load_n(&it->val, __ATOMIC_ACQUIRE);
	*val = v->data;
	if (vlen)
		*vlen = v->len;
	return CHT_OK;
}

int cht_map_delete(cht_map_t *m, const void *key, size_t klen)
{
	CHECK_ARGS(m, key, klen);
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	cht_rcu_read_lock();
	size_t n = cht_remove_key_fast(&m->h, &k, &bm_ops);
	cht_rcu_read_unlock();
	return n ? CHT_OK : CHT_ENOENT;
}

int cht_map_stats(cht_map_t *m, cht_map_stats_t *st)
{
	if (!m || !st)
		return CHT_EINVAL;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	fill_stats(&m->h, st, 0);
	st->item_bytes = cht__ma_in_use();
	if (st->items)
		st->bytes_per_key = (double) (st->bucket_bytes + st->item_bytes) /
		    (double) st->items;
	return CHT_OK;
}

/* --- 8-byte map ----------------------------------------------------------------------- */

/**
 * One cache line: the link's node (next, hash) at bytes 24-39, the key at
 * 40, the value at 48. From class 64, 64-byte aligned: a lookup that
 * reaches the node has the key and the value in the same line.
 */
typedef struct uitem {
	cht_link_t link;
	uint64_t key;
	/** Atomics (relaxed: nothing else is published through it). */
	uint64_t value;
} uitem_t;
_Static_assert(sizeof(uitem_t) <= 64, "an 8-byte item is one cache line");

struct cht_map_u64 {
	/** The inline backend (cht_imap.c), or NULL: the chained one below. */
	cht_imap_t *im;
	cht_t h;
};

CHT_DEFINE_U64_KEY(um, uitem_t, link, key, cht_u64_identity)

/** The class of every uitem_t (64 bytes; checked by cht_map_u64_create()). */
#define UM_CLS CHT__MA_CLS64

static void um_remove_cb(cht_link_t *l)
{
	cht__ma_free(cht_item_of(l, uitem_t, link), UM_CLS, sizeof(uitem_t));
}

static const cht_ops_t um_ops = {
	CHT_U64_KEY_OPS(um), .remove_callback = um_remove_cb,
};

int cht_map_u64_create(cht_map_u64_t **out, size_t expect_keys)
{
	return cht_map_u64_create_opts(out, expect_keys, CHT_MAP_U64_INLINE);
}

int cht_map_u64_create_opts(cht_map_u64_t **out, size_t expect_keys,
    unsigned flags)
{
	if (!out || (flags & ~(unsigned) CHT_MAP_U64_CHAINED))
		return CHT_EINVAL;
	*out = NULL;
	if (cht__ma_cls_of(sizeof(uitem_t)) != UM_CLS ||
	    cht__ma_cls_size(UM_CLS) != 64)
		abort();  /* the class table changed: fix UM_CLS */
	cht_map_u64_t *m = calloc(1, sizeof(*m));
	if (!m)
		return CHT_ENOMEM;
	if (!(flags & CHT_MAP_U64_CHAINED)) {
		int rc = cht__im_create(&m->im, expect_keys);
		if (rc != CHT_OK) {
			free(m);
			return rc;
		}
		*out = m;
		return CHT_OK;
	}
	int rc = create_table(&m->h, "cht_map_u64", expect_keys, &um_ops);
	if (rc != CHT_OK) {
		free(m);
		return rc;
	}
	*out = m;
	return CHT_OK;
}

int cht_map_u64_destroy(cht_map_u64_t *m)
{
	if (!m)
		return CHT_EINVAL;
	if (m->im) {
		if (cht_rcu_read_locked())
			return CHT_EDEADLK;
		if (ensure_reg() != CHT_OK)
			return CHT_EPERM;
		cht__im_destroy(m->im);
		free(m);
		return CHT_OK;
	}
	int rc = destroy_table(&m->h);
	if (rc == CHT_OK)
		free(m);
	return rc;
}

#define CHECK_U(m) do { \
		if (!(m)) \
			return CHT_EINVAL; \
		int rc_ = ensure_reg(); \
		if (rc_ != CHT_OK) \
			return rc_; \
	} while (0)

static inline uitem_t *um_find(cht_map_u64_t *m, uint64_t *key)
{
	cht_link_t *l = cht_find_fast(&m->h, key, &um_ops);
	return l ? cht_item_of(l, uitem_t, link) : NULL;
}

int cht_map_u64_get(cht_map_u64_t *m, uint64_t key, uint64_t *val)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_get(m->im, key, val);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	if (it && val)
		*val = __atomic_load_n(&it->value, __ATOMIC_RELAXED);
	cht_rcu_read_unlock();
	return it ? CHT_OK : CHT_ENOENT;
}

/** Inserts key -> val, or returns the present item (in the caller's section). */
static int um_insert(cht_map_u64_t *m, uint64_t key, uint64_t val,
    uitem_t **present)
{
	uint8_t cls;
	uitem_t *n = cht__ma_alloc(sizeof(uitem_t), &cls);
	if (!n)
		return CHT_ENOMEM;
	n->key = key;
	n->value = val;
	cht_link_t *dup = NULL;
	if (cht_insert_unique_fast(&m->h, &n->link, &dup, &um_ops))
		return CHT_OK;
	cht__ma_free(n, cls, sizeof(uitem_t));  /* never published */
	*present = cht_item_of(dup, uitem_t, link);
	return CHT_EEXIST;
}

int cht_map_u64_insert(cht_map_u64_t *m, uint64_t key, uint64_t val)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_upsert(m->im, key, val, CHT__IM_INSERT, NULL);
	uitem_t *it;
	cht_rcu_read_lock();
	int rc = um_insert(m, key, val, &it);
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_u64_put(cht_map_u64_t *m, uint64_t key, uint64_t val)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_upsert(m->im, key, val, CHT__IM_PUT, NULL);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	int rc = CHT_OK;
	if (!it)
		rc = um_insert(m, key, val, &it);
	if (rc == CHT_EEXIST || (it && rc == CHT_OK)) {
		__atomic_store_n(&it->value, val, __ATOMIC_RELAXED);
		rc = CHT_OK;
	}
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_u64_delete(cht_map_u64_t *m, uint64_t key)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_delete(m->im, key);
	cht_rcu_read_lock();
	size_t n = cht_remove_key_fast(&m->h, &key, &um_ops);
	cht_rcu_read_unlock();
	return n ? CHT_OK : CHT_ENOENT;
}

int cht_map_u64_cas(cht_map_u64_t *m, uint64_t key, uint64_t *expect,
    uint64_t val)
{
	CHECK_U(m);
	if (!expect)
		return CHT_EINVAL;
	if (m->im)
		return cht__im_cas(m->im, key, expect, val);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	int rc = CHT_ENOENT;
	if (it)
		rc = __atomic_compare_exchange_n(&it->value, expect, val, false,
		    __ATOMIC_RELAXED, __ATOMIC_RELAXED) ? CHT_OK : CHT_ESTALE;
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_u64_add(cht_map_u64_t *m, uint64_t key, uint64_t delta,
    uint64_t *out)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_upsert(m->im, key, delta, CHT__IM_ADD, out);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	int rc = CHT_OK;
	uint64_t after = delta;
	if (!it)
		rc = um_insert(m, key, delta, &it);
	if (rc == CHT_EEXIST || (rc == CHT_OK && it)) {
		/*
		 * GCC 12.2 -O2 compiled both __atomic_add_fetch(p, delta) and
		 * __atomic_fetch_add(p, delta) + delta here into lock xadd
		 * followed by doubling the old value (test_map caught it: 3 +
		 * 4 returned 6); the empty asm makes the old value opaque, so
		 * that delta is added to it as written.
		 */
		uint64_t old = __atomic_fetch_add(&it->value, delta,
		    __ATOMIC_RELAXED);
		__asm__("" : "+r"(old));
		after = old + delta;
		rc = CHT_OK;
	}
	cht_rcu_read_unlock();
	if (rc == CHT_OK && out)
		*out = after;
	return rc;
}

/** Keys whose bucket entries are prefetched ahead of the walk. */
#define GET_MANY_AHEAD 8

long cht_map_u64_get_many(cht_map_u64_t *m, const uint64_t *keys, size_t n,
    uint64_t *vals, unsigned char *found)
{
	CHECK_U(m);
	if (n && (!keys || !vals))
		return CHT_EINVAL;
	if (m->im)
		return cht__im_get_many(m->im, keys, n, vals, found);
	long hits = 0;
	cht_rcu_read_lock();
	cht_buckets_t *b = cht_env_rcu_access(m->h.b);
	/*
	 * A pipeline of three stages (DRAMHiT, EuroSys'23, section 4): 2A keys
	 * ahead, prefetch the key's bucket entry; A keys ahead, read the entry
	 * (in the cache by then) and prefetch the first node it points to; at
	 * the key itself, walk with cht_find_fast() (the entry and the node
	 * now cached). The prefetches are hints: a resize that replaces the
	 * array meanwhile, or an insert ahead of the node, costs a miss, never
	 * a wrong result (the walk is the ordinary one).
	 */
	const size_t a = GET_MANY_AHEAD;
	for (size_t i = 0; i < n && i < 2 * a; i++)
		__builtin_prefetch(&b->d[cht_item_hash(keys[i]) >> b->shift], 0, 0);
	for (size_t i = 0; i < n; i++) {
		if (i + 2 * a < n)
			__builtin_prefetch(&b->d[cht_item_hash(keys[i + 2 * a]) >>
			    b->shift], 0, 0);
		if (i + a < n) {
			uintptr_t nx = __atomic_load_n(&b->d[cht_item_hash(
			    keys[i + a]) >> b->shift].next, __ATOMIC_RELAXED);
			__builtin_prefetch((void *) (nx & ~CHT_LINK_MARKS), 0, 0);
		}
		uint64_t k = keys[i];
		uitem_t *it = um_find(m, &k);
		if (it) {
			vals[i] = __atomic_load_n(&it->value, __ATOMIC_RELAXED);
			hits++;
		}
		if (found)
			found[i] = it != NULL;
	}
	cht_rcu_read_unlock();
	return hits;
}

int cht__map_u64_split_stats(cht_map_u64_t *m, uint64_t *splits,
    uint64_t *max_per_insert)
{
	if (!m || !m->im || !splits || !max_per_insert)
		return CHT_EINVAL;
	cht__im_split_stats(m->im, splits, max_per_insert);
	return CHT_OK;
}

int cht_map_u64_reserve(cht_map_u64_t *m, size_t keys)
{
	if (!m || !m->im)
		return CHT_EINVAL;
	/* Outside a section: a reserve of 1e8 keys runs for seconds. */
	if (cht_rcu_read_locked())
		return CHT_EDEADLK;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	return cht__im_reserve(m->im, keys);
}

/** The grow point of the intrusive table @a h (cht_grow_point()). */
static size_t table_grow_at(cht_t *h)
{
	if (ensure_reg() != CHT_OK)
		return 0;
	cht_stats_t cs;
	cht_rcu_read_lock();
	cht_get_stats(h, &cs);
	cht_rcu_read_unlock();
	return cht_grow_point(h, cs.buckets);
}

size_t cht_map_u64_grow_at(cht_map_u64_t *m)
{
	return m && !m->im ? table_grow_at(&m->h) : 0;
}

size_t cht_map_grow_at(cht_map_t *m)
{
	return m ? table_grow_at(&m->h) : 0;
}

int cht_map_u64_stats(cht_map_u64_t *m, cht_map_stats_t *st)
{
	if (!m || !st)
		return CHT_EINVAL;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	if (m->im) {
		cht__im_stats(m->im, &st->items, &st->buckets,
		    &st->bucket_bytes, &st->item_bytes, &st->resizing);
		st->reserved_bytes = cht__ma_reserved();
		st->bytes_per_key = st->items ? (double) (st->bucket_bytes +
		    st->item_bytes) / (double) st->items : 0.0;
		return CHT_OK;
	}
	cht_stats_t cs;
	cht_rcu_read_lock();
	cht_get_stats(&m->h, &cs);
	cht_rcu_read_unlock();
	fill_stats(&m->h, st, cs.items * 64);
	return CHT_OK;
}

int cht__ma_ensure_reg(void)
{
	return ensure_reg();
}
