/** @file impl_ck.c
 * Concurrency Kit (Debian libck-dev 0.7.1): ck_hs and ck_ht in their SPMC
 * modes (one writer, many lock-free readers) with the writers serialized by
 * a mutex per table, as the issue prescribes; readers in ck_epoch sections.
 * Memory the tables free with defer=true (old maps after a grow) and removed
 * objects go through ck_epoch_call on the table's writer record (used only
 * under the mutex) and are reclaimed by ck_epoch_poll every 64 writes.
 *
 *  ckhs      ck_hs, CK_HS_MODE_DIRECT: the 8-byte key is the stored value
 *            (a set: its "value" is the key itself)
 *  ckhs-ptr  ck_hs, CK_HS_MODE_OBJECT: stores pointers to {key, value}
 *            objects, hashes and compares through them
 *  ckht      ck_ht, CK_HT_MODE_DIRECT: key and value inline in the entry
 *  ckht-ptr  ck_ht, CK_HT_MODE_DIRECT: value is a pointer to the object,
 *            dereferenced on lookup
 * Both grow by themselves when they fill up and never shrink.
 */
#include "bench.h"
#include <ck_epoch.h>
#include <ck_hs.h>
#include <ck_ht.h>
#include <pthread.h>
#include <stdlib.h>

static ck_epoch_t epoch;
static pthread_once_t epoch_once = PTHREAD_ONCE_INIT;
static __thread ck_epoch_record_t *rec;

static void epoch_init(void)
{
	ck_epoch_init(&epoch);
}

static void ck_thread_init(void)
{
	pthread_once(&epoch_once, epoch_init);
	if (!rec) {
		rec = ck_epoch_recycle(&epoch, NULL);
		if (!rec) {
			rec = malloc(sizeof(*rec));
			ck_epoch_register(&epoch, rec, NULL);
		}
	}
}

static void ck_thread_fini(void)
{
	if (rec) {
		ck_epoch_unregister(rec);  /* recycled by a later thread */
		rec = NULL;
	}
}

/* --- deferred frees --------------------------------------------------------- */

typedef struct {
	pthread_mutex_t lock;
	ck_epoch_record_t wrec;   /* the writer's record: under lock */
	unsigned writes;
} ckbase_t;

/** The table whose writer runs now (ck_malloc's free has no context). */
static __thread ckbase_t *cur_writer;

typedef struct {
	ck_epoch_entry_t entry;
	void *p;
} deferred_t;

static void deferred_free(ck_epoch_entry_t *e)
{
	deferred_t *d = (deferred_t *) e;
	free(d->p);
	free(d);
}

static void *ck_m_malloc(size_t n)
{
	return malloc(n);
}

static void *ck_m_realloc(void *p, size_t old, size_t n, bool defer)
{
	(void) old;
	(void) defer;
	return realloc(p, n);
}

static void ck_m_free(void *p, size_t n, bool defer)
{
	(void) n;
	if (!defer || !cur_writer) {
		free(p);
		return;
	}
	deferred_t *d = malloc(sizeof(*d));
	d->p = p;
	ck_epoch_call(&cur_writer->wrec, &d->entry, deferred_free);
}

static struct ck_malloc ck_alloc = {
	.malloc = ck_m_malloc, .realloc = ck_m_realloc, .free = ck_m_free,
};

static void base_init(ckbase_t *b)
{
	pthread_once(&epoch_once, epoch_init);
	pthread_mutex_init(&b->lock, NULL);
	ck_epoch_register(&epoch, &b->wrec, NULL);
	b->writes = 0;
}

static void w_lock(ckbase_t *b)
{
	pthread_mutex_lock(&b->lock);
	cur_writer = b;
}

static void w_unlock(ckbase_t *b)
{
	if ((++b->writes & 63) == 0)
		ck_epoch_poll(&b->wrec);
	cur_writer = NULL;
	pthread_mutex_unlock(&b->lock);
}

static void base_fini(ckbase_t *b)
{
	ck_epoch_barrier(&b->wrec);  /* runs every deferred free */
	ck_epoch_unregister(&b->wrec);
	pthread_mutex_destroy(&b->lock);
}

static void ck_settle_base(ckbase_t *b)
{
	pthread_mutex_lock(&b->lock);
	ck_epoch_barrier(&b->wrec);
	pthread_mutex_unlock(&b->lock);
}

/* Objects of the pointer variants (freed through the epoch). */
typedef struct {
	ck_epoch_entry_t entry;
	uint64_t key;
	uint64_t value;
} ckobj_t;

static void obj_free(ck_epoch_entry_t *e)
{
	free(e);
}

static ckobj_t *obj_new(uint64_t key, uint64_t val)
{
	ckobj_t *o = malloc(sizeof(*o));
	o->key = key;
	o->value = val;
	return o;
}

/* --- ck_hs --------------------------------------------------------------------- */

typedef struct {
	ckbase_t base;
	ck_hs_t hs;
	bool ptr;
} hs_t;

static unsigned long hs_hash_direct(const void *object, unsigned long seed)
{
	(void) seed;
	return (unsigned long) bench_mix((uint64_t) (uintptr_t) object);
}

static unsigned long hs_hash_obj(const void *object, unsigned long seed)
{
	(void) seed;
	return (unsigned long) bench_mix(((const ckobj_t *) object)->key);
}

static bool hs_compare_obj(const void *a, const void *b)
{
	return ((const ckobj_t *) a)->key == ((const ckobj_t *) b)->key;
}

/*
 * Slots per key of a table created for a number of keys: ck_hs and ck_ht
 * grow (double) as soon as more than half their slots are taken
 * (n_entries * 2 > capacity, ck_hs_map_postinsert() and ck_ht's put), so a
 * table created for N keys without a rehash needs 2N slots. Created with N
 * (as before), the presized runs at 1e8 keys rehashed during their fill
 * (ck_ht's largest insert 30 s): their P rows were growth rows.
 */
#define CK_SLOTS_PER_KEY 2

static void *hs_create_common(size_t initial, bool ptr)
{
	hs_t *t = calloc(1, sizeof(*t));
	base_init(&t->base);
	t->ptr = ptr;
	unsigned long cap = initial ? CK_SLOTS_PER_KEY * initial : 1;
	bool ok = ptr ?
	    ck_hs_init(&t->hs, CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC, hs_hash_obj,
	    hs_compare_obj, &ck_alloc, cap, 0) :
	    ck_hs_init(&t->hs, CK_HS_MODE_DIRECT | CK_HS_MODE_SPMC,
	    hs_hash_direct, NULL, &ck_alloc, cap, 0);
	if (!ok)
		abort();
	return t;
}

static void *hs_create(size_t expect, size_t initial)
{
	(void) expect;
	return hs_create_common(initial, false);
}

static void *hs_create_ptr(size_t expect, size_t initial)
{
	(void) expect;
	return hs_create_common(initial, true);
}

static int hs_lookup(void *tp, uint64_t key, uint64_t *val)
{
	hs_t *t = tp;
	unsigned long h = (unsigned long) bench_mix(key);
	int hit;
	ck_epoch_begin(rec, NULL);
	if (t->ptr) {
		ckobj_t tmpl = { .key = key };
		ckobj_t *o = ck_hs_get(&t->hs, h, &tmpl);
		hit = o != NULL;
		if (o)
			*val = __atomic_load_n(&o->value, __ATOMIC_RELAXED);
	} else {
		void *r = ck_hs_get(&t->hs, h, (void *) (uintptr_t) key);
		hit = r != NULL;
		if (r)
			*val = (uint64_t) (uintptr_t) r;
	}
	ck_epoch_end(rec, NULL);
	return hit;
}

static int hs_insert(void *tp, uint64_t key, uint64_t val)
{
	hs_t *t = tp;
	unsigned long h = (unsigned long) bench_mix(key);
	if (t->ptr) {
		ckobj_t *o = obj_new(key, val);
		w_lock(&t->base);
		bool ok = ck_hs_put(&t->hs, h, o);
		w_unlock(&t->base);
		if (!ok)
			free(o);
		return ok;
	}
	w_lock(&t->base);
	bool ok = ck_hs_put(&t->hs, h, (void *) (uintptr_t) key);
	w_unlock(&t->base);
	return ok;
}

static int hs_remove(void *tp, uint64_t key)
{
	hs_t *t = tp;
	unsigned long h = (unsigned long) bench_mix(key);
	void *r;
	w_lock(&t->base);
	if (t->ptr) {
		ckobj_t tmpl = { .key = key };
		r = ck_hs_remove(&t->hs, h, &tmpl);
		if (r)
			ck_epoch_call(&t->base.wrec, &((ckobj_t *) r)->entry, obj_free);
	} else {
		r = ck_hs_remove(&t->hs, h, (void *) (uintptr_t) key);
	}
	w_unlock(&t->base);
	return r != NULL;
}

static int hs_update(void *tp, uint64_t key, uint64_t val)
{
	hs_t *t = tp;
	unsigned long h = (unsigned long) bench_mix(key);
	if (t->ptr) {
		/* In place in the object, like the node tables. */
		ckobj_t tmpl = { .key = key };
		ck_epoch_begin(rec, NULL);
		ckobj_t *o = ck_hs_get(&t->hs, h, &tmpl);
		if (o)
			__atomic_store_n(&o->value, val, __ATOMIC_RELAXED);
		ck_epoch_end(rec, NULL);
		return o != NULL;
	}
	/* A set has no value: replace the key's slot (a writer operation). */
	void *prev = NULL;
	w_lock(&t->base);
	bool ok = ck_hs_set(&t->hs, h, (void *) (uintptr_t) key, &prev);
	w_unlock(&t->base);
	return ok && prev != NULL;
}

static long hs_buckets(void *tp)
{
	(void) tp;
	return -1;  /* ck_hs does not publish its capacity */
}

static void hs_settle(void *tp)
{
	ck_settle_base(&((hs_t *) tp)->base);
}

static void hs_destroy(void *tp)
{
	hs_t *t = tp;
	if (t->ptr) {
		ck_hs_iterator_t it = CK_HS_ITERATOR_INITIALIZER;
		void *o;
		while (ck_hs_next(&t->hs, &it, &o))
			free(o);
	}
	ck_hs_destroy(&t->hs);
	base_fini(&t->base);
	free(t);
}

/* --- ck_ht --------------------------------------------------------------------- */

typedef struct {
	ckbase_t base;
	ck_ht_t ht;
	bool ptr;
} ht_t;

static void ht_hash(ck_ht_hash_t *h, const void *key, size_t len, uint64_t seed)
{
	(void) len;
	(void) seed;
	h->value = bench_mix(*(const uint64_t *) key);
}

static void *ht_create_common(size_t initial, bool ptr)
{
	ht_t *t = calloc(1, sizeof(*t));
	base_init(&t->base);
	t->ptr = ptr;
	if (!ck_ht_init(&t->ht, CK_HT_MODE_DIRECT, ht_hash, &ck_alloc,
	    initial ? CK_SLOTS_PER_KEY * initial : 1, 0))
		abort();
	return t;
}

static void *ht_create(size_t expect, size_t initial)
{
	(void) expect;
	return ht_create_common(initial, false);
}

static void *ht_create_ptr(size_t expect, size_t initial)
{
	(void) expect;
	return ht_create_common(initial, true);
}

static int ht_lookup(void *tp, uint64_t key, uint64_t *val)
{
	ht_t *t = tp;
	ck_ht_hash_t h;
	ck_ht_entry_t e;
	ck_ht_hash_direct(&h, &t->ht, (uintptr_t) key);
	ck_ht_entry_key_set_direct(&e, (uintptr_t) key);
	ck_epoch_begin(rec, NULL);
	bool hit = ck_ht_get_spmc(&t->ht, h, &e);
	if (hit) {
		uintptr_t v = ck_ht_entry_value_direct(&e);
		*val = t->ptr ? __atomic_load_n(&((ckobj_t *) v)->value,
		    __ATOMIC_RELAXED) : (uint64_t) v;
	}
	ck_epoch_end(rec, NULL);
	return hit;
}

static int ht_insert(void *tp, uint64_t key, uint64_t val)
{
	ht_t *t = tp;
	ck_ht_hash_t h;
	ck_ht_entry_t e;
	ck_ht_hash_direct(&h, &t->ht, (uintptr_t) key);
	ckobj_t *o = t->ptr ? obj_new(key, val) : NULL;
	ck_ht_entry_set_direct(&e, h, (uintptr_t) key,
	    t->ptr ? (uintptr_t) o : (uintptr_t) val);
	w_lock(&t->base);
	bool ok = ck_ht_put_spmc(&t->ht, h, &e);
	w_unlock(&t->base);
	if (!ok && o)
		free(o);
	return ok;
}

static int ht_remove(void *tp, uint64_t key)
{
	ht_t *t = tp;
	ck_ht_hash_t h;
	ck_ht_entry_t e;
	ck_ht_hash_direct(&h, &t->ht, (uintptr_t) key);
	ck_ht_entry_key_set_direct(&e, (uintptr_t) key);
	w_lock(&t->base);
	bool ok = ck_ht_remove_spmc(&t->ht, h, &e);
	if (ok && t->ptr)
		ck_epoch_call(&t->base.wrec,
		    &((ckobj_t *) ck_ht_entry_value_direct(&e))->entry, obj_free);
	w_unlock(&t->base);
	return ok;
}

static int ht_update(void *tp, uint64_t key, uint64_t val)
{
	ht_t *t = tp;
	ck_ht_hash_t h;
	ck_ht_entry_t e;
	ck_ht_hash_direct(&h, &t->ht, (uintptr_t) key);
	if (t->ptr) {
		ck_ht_entry_key_set_direct(&e, (uintptr_t) key);
		ck_epoch_begin(rec, NULL);
		bool hit = ck_ht_get_spmc(&t->ht, h, &e);
		if (hit)
			__atomic_store_n(&((ckobj_t *) ck_ht_entry_value_direct(&e))->value,
			    val, __ATOMIC_RELAXED);
		ck_epoch_end(rec, NULL);
		return hit;
	}
	ck_ht_entry_set_direct(&e, h, (uintptr_t) key, (uintptr_t) val);
	w_lock(&t->base);
	bool ok = ck_ht_set_spmc(&t->ht, h, &e);  /* replaces the value */
	w_unlock(&t->base);
	return ok;
}

static long ht_buckets(void *tp)
{
	(void) tp;
	return -1;
}

static void ht_settle(void *tp)
{
	ck_settle_base(&((ht_t *) tp)->base);
}

static void ht_destroy(void *tp)
{
	ht_t *t = tp;
	if (t->ptr) {
		ck_ht_iterator_t it = CK_HT_ITERATOR_INITIALIZER;
		ck_ht_entry_t *e;
		while (ck_ht_next(&t->ht, &it, &e))
			free((void *) ck_ht_entry_value_direct(e));
	}
	ck_ht_destroy(&t->ht);
	base_fini(&t->base);
	free(t);
}

#define CK_IMPL(var, nm, lib, lay, pfx, create_fn, est) \
	const bench_impl_t var = { \
		.name = nm, .library = lib, .layout = lay, .presized = false, \
		.create = create_fn, .destroy = pfx##_destroy, \
		.thread_init = ck_thread_init, .thread_fini = ck_thread_fini, \
		.lookup = pfx##_lookup, .insert = pfx##_insert, \
		.remove = pfx##_remove, .update = pfx##_update, \
		.buckets = pfx##_buckets, .settle = pfx##_settle, \
		.est_bytes_per_key = est, \
	}

CK_IMPL(impl_ckhs, "ckhs", "Concurrency Kit ck_hs + ck_epoch", "inline", hs,
    hs_create, 40);
CK_IMPL(impl_ckhs_ptr, "ckhs-ptr", "Concurrency Kit ck_hs + ck_epoch", "ptr", hs,
    hs_create_ptr, 90);
CK_IMPL(impl_ckht, "ckht", "Concurrency Kit ck_ht + ck_epoch", "inline", ht,
    ht_create, 120);
CK_IMPL(impl_ckht_ptr, "ckht-ptr", "Concurrency Kit ck_ht + ck_epoch", "ptr", ht,
    ht_create_ptr, 130);
