/** @file cht_api.c
 * The checked userspace API (cht_u_*) over the kernel's table functions, and
 * the key-value convenience wrapper (cht_kv_*). See cht.h.
 */
#include <cht.h>

#ifndef CHT_VERSION_STRING
#define CHT_VERSION_STRING "unknown"
#endif

const char *cht_version(void)
{
	return CHT_VERSION_STRING;
}

/** A created, not destroyed table (what can be checked without a tag). */
static bool table_ok(cht_t *h)
{
	return h && h->op && __atomic_load_n(&h->b, __ATOMIC_ACQUIRE);
}

#define CHECK_TABLE(h) do { \
		if (!table_ok(h)) \
			return CHT_EINVAL; \
		if (!cht_rcu_registered()) \
			return CHT_EPERM; \
	} while (0)

int cht_u_create(cht_t *h, size_t init_size, size_t min_size, size_t max_load,
    const cht_ops_t *op)
{
	if (!h)
		return CHT_EINVAL;
	return cht_create(h, init_size, min_size, max_load, op);
}

int cht_u_destroy(cht_t *h)
{
	CHECK_TABLE(h);
	if (cht_rcu_read_locked())
		return CHT_EDEADLK;
	/*
	 * cht_destroy() reads h->b with a plain load before it waits for a
	 * resize in flight (a data race with the resizer's store, harmless
	 * on x86-64 but reported by ThreadSanitizer): let the resize finish
	 * first. The acquire load pairs with the worker's final decrement.
	 */
	while (__atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0)
		cht_env_sleep_ms(1);
	return cht_destroy(h);
}

int cht_u_insert(cht_t *h, cht_link_t *item)
{
	CHECK_TABLE(h);
	if (!item)
		return CHT_EINVAL;
	cht_rcu_read_lock();
	cht_insert(h, item);
	cht_rcu_read_unlock();
	return CHT_OK;
}

int cht_u_insert_unique(cht_t *h, cht_link_t *item, cht_link_t **dup)
{
	CHECK_TABLE(h);
	if (!item)
		return CHT_EINVAL;
	bool outer = cht_rcu_read_locked();
	cht_link_t *d = NULL;
	cht_rcu_read_lock();
	bool ok = cht_insert_unique(h, item, &d);
	cht_rcu_read_unlock();
	if (dup)
		*dup = ok || !outer ? NULL : d;
	return ok ? CHT_OK : CHT_EEXIST;
}

int cht_u_find(cht_t *h, void *key, cht_link_t **out)
{
	if (out)
		*out = NULL;
	CHECK_TABLE(h);
	if (!out)
		return CHT_EINVAL;
	if (!cht_rcu_read_locked())
		return CHT_ENOSECT;
	*out = cht_find(h, key);
	return *out ? CHT_OK : CHT_ENOENT;
}

int cht_u_find_next(cht_t *h, void *key, const cht_link_t *item,
    cht_link_t **out)
{
	if (out)
		*out = NULL;
	CHECK_TABLE(h);
	if (!out || !item)
		return CHT_EINVAL;
	if (!cht_rcu_read_locked())
		return CHT_ENOSECT;
	*out = cht_find_next(h, key, item);
	return *out ? CHT_OK : CHT_ENOENT;
}

long cht_u_remove_key(cht_t *h, void *key)
{
	CHECK_TABLE(h);
	cht_rcu_read_lock();
	size_t n = cht_remove_key(h, key);
	cht_rcu_read_unlock();
	return (long) n;
}

int cht_u_remove_item(cht_t *h, cht_link_t *item)
{
	CHECK_TABLE(h);
	if (!item)
		return CHT_EINVAL;
	cht_rcu_read_lock();
	bool ok = cht_remove_item(h, item);
	cht_rcu_read_unlock();
	return ok ? CHT_OK : CHT_ENOENT;
}

int cht_u_get_stats(cht_t *h, cht_stats_t *st)
{
	CHECK_TABLE(h);
	if (!st)
		return CHT_EINVAL;
	/* The bucket array may be freed by a resize: read it in a section. */
	cht_rcu_read_lock();
	cht_get_stats(h, st);
	cht_rcu_read_unlock();
	return CHT_OK;
}

int cht_u_set_max_load(cht_t *h, size_t max_load)
{
	if (!table_ok(h) || max_load == 0)
		return CHT_EINVAL;
	cht_set_max_load(h, max_load);
	return CHT_OK;
}

int cht_u_set_max_load_frac(cht_t *h, size_t num, size_t den)
{
	if (!table_ok(h))
		return CHT_EINVAL;
	return cht_set_max_load_frac(h, num, den);
}

/* Key-value wrapper */

struct cht_kv {
	cht_t table;
};

typedef struct {
	cht_link_t link;
	uint64_t key;
	uint64_t value;
} kv_node_t;

static size_t kv_hash(const cht_link_t *item)
{
	return (size_t) cht_item_of(item, kv_node_t, link)->key;
}

static size_t kv_key_hash(void *key)
{
	return (size_t) *(const uint64_t *) key;
}

static bool kv_equal(const cht_link_t *a, const cht_link_t *b)
{
	return cht_item_of(a, kv_node_t, link)->key ==
	    cht_item_of(b, kv_node_t, link)->key;
}

static bool kv_key_equal(void *key, const cht_link_t *item)
{
	return *(const uint64_t *) key == cht_item_of(item, kv_node_t, link)->key;
}

static void kv_remove_callback(cht_link_t *item)
{
	free(cht_item_of(item, kv_node_t, link));
}

static const cht_ops_t kv_ops = {
	.hash = kv_hash,
	.key_hash = kv_key_hash,
	.equal = kv_equal,
	.key_equal = kv_key_equal,
	.remove_callback = kv_remove_callback,
};

int cht_kv_create(cht_kv_t **out, size_t init_size)
{
	if (!out)
		return CHT_EINVAL;
	*out = NULL;
	cht_kv_t *kv = malloc(sizeof(*kv));
	if (!kv)
		return CHT_ENOMEM;
	int rc = cht_create_named(&kv->table, "cht_kv", init_size, 0, 0,
	    &kv_ops);
	if (rc != CHT_OK) {
		free(kv);
		return rc;
	}
	*out = kv;
	return CHT_OK;
}

int cht_kv_destroy(cht_kv_t *kv)
{
	if (!kv)
		return CHT_EINVAL;
	int rc = cht_u_destroy(&kv->table);
	if (rc == CHT_OK)
		free(kv);
	return rc;
}

int cht_kv_put(cht_kv_t *kv, uint64_t key, uint64_t value)
{
	if (!kv)
		return CHT_EINVAL;
	CHECK_TABLE(&kv->table);
	kv_node_t *n = malloc(sizeof(*n));
	if (!n)
		return CHT_ENOMEM;
	n->key = key;
	n->value = value;
	cht_rcu_read_lock();
	bool ok = cht_insert_unique(&kv->table, &n->link, NULL);
	cht_rcu_read_unlock();
	if (!ok) {
		free(n);  /* never published */
		return CHT_EEXIST;
	}
	return CHT_OK;
}

int cht_kv_get(cht_kv_t *kv, uint64_t key, uint64_t *value)
{
	if (!kv)
		return CHT_EINVAL;
	CHECK_TABLE(&kv->table);
	cht_rcu_read_lock();
	cht_link_t *l = cht_find(&kv->table, &key);
	if (l && value)
		*value = cht_item_of(l, kv_node_t, link)->value;
	cht_rcu_read_unlock();
	return l ? CHT_OK : CHT_ENOENT;
}

int cht_kv_del(cht_kv_t *kv, uint64_t key)
{
	if (!kv)
		return CHT_EINVAL;
	CHECK_TABLE(&kv->table);
	cht_rcu_read_lock();
	size_t n = cht_remove_key(&kv->table, &key);
	cht_rcu_read_unlock();
	return n ? CHT_OK : CHT_ENOENT;
}

size_t cht_kv_size(cht_kv_t *kv)
{
	if (!kv || !table_ok(&kv->table))
		return 0;
	return cht_count(&kv->table);
}

cht_t *cht_kv_table(cht_kv_t *kv)
{
	return kv ? &kv->table : NULL;
}

size_t cht_find_many(cht_t *h, void *const *keys, size_t n, cht_link_t **out)
{
	return cht_find_many_fast(h, keys, n, out, h->op);
}
