/** @file impl_cuckoo.cc
 * libcuckoo (Debian libcuckoo-dev 0.3.1): cuckoohash_map, 4 slots per bucket,
 * fine-grained bucket locks taken by readers too; grows by itself (in the
 * caller's insert), never shrinks by itself.
 *
 *  cuckoo      cuckoohash_map<uint64_t, uint64_t>: key and value inline
 *  cuckoo-ptr  cuckoohash_map<uint64_t, bench_obj_t *>: the value is a
 *              pointer to an object, dereferenced under the bucket lock;
 *              erase frees the object under the lock (no deferral needed)
 *
 * Resize experiment: rehash(hashpower). Four slots per bucket, so the chained
 * tables' 2^13 <-> 2^14 buckets for 2^16 keys map to 2^14 <-> 2^15 cuckoo
 * buckets (the same 2x swing; 2^13 buckets cannot hold 2^16 keys).
 */
#include "bench.h"
#include <cstdlib>
#include <libcuckoo/cuckoohash_map.hh>

namespace {

struct MixHash {
	size_t operator()(uint64_t k) const { return (size_t) bench_mix(k); }
};

using Inline = libcuckoo::cuckoohash_map<uint64_t, uint64_t, MixHash>;
using Ptr = libcuckoo::cuckoohash_map<uint64_t, bench_obj_t *, MixHash>;

size_t log2_of(size_t n)
{
	size_t k = 0;
	while (((size_t) 1 << k) < n)
		k++;
	return k;
}

/* --- inline ---------------------------------------------------------------------- */

void *i_create(size_t expect, size_t initial)
{
	(void) expect;
	return initial ? new Inline(initial) : new Inline();
}

void i_destroy(void *t)
{
	delete static_cast<Inline *>(t);
}

int i_lookup(void *t, uint64_t key, uint64_t *val)
{
	return static_cast<Inline *>(t)->find(key, *val);
}

int i_insert(void *t, uint64_t key, uint64_t val)
{
	return static_cast<Inline *>(t)->insert(key, val);
}

int i_remove(void *t, uint64_t key)
{
	return static_cast<Inline *>(t)->erase(key);
}

int i_update(void *t, uint64_t key, uint64_t val)
{
	return static_cast<Inline *>(t)->update(key, val);
}

long i_buckets(void *t)
{
	return (long) static_cast<Inline *>(t)->bucket_count();
}

int i_resize(void *t, size_t buckets)
{
	static_cast<Inline *>(t)->rehash(log2_of(buckets) + 1);
	return 0;
}

/* --- pointer ---------------------------------------------------------------------- */

void *p_create(size_t expect, size_t initial)
{
	(void) expect;
	return initial ? new Ptr(initial) : new Ptr();
}

void p_destroy(void *tp)
{
	Ptr *t = static_cast<Ptr *>(tp);
	{
		auto lt = t->lock_table();
		for (auto &kv : lt)
			free(kv.second);
	}
	delete t;
}

int p_lookup(void *t, uint64_t key, uint64_t *val)
{
	return static_cast<Ptr *>(t)->find_fn(key, [val](bench_obj_t *const &o) {
		*val = __atomic_load_n(&o->value, __ATOMIC_RELAXED);
	});
}

int p_insert(void *t, uint64_t key, uint64_t val)
{
	bench_obj_t *o = static_cast<bench_obj_t *>(malloc(sizeof(*o)));
	o->key = key;
	o->value = val;
	if (static_cast<Ptr *>(t)->insert(key, o))
		return 1;
	free(o);
	return 0;
}

int p_remove(void *t, uint64_t key)
{
	return static_cast<Ptr *>(t)->erase_fn(key, [](bench_obj_t *&o) {
		free(o);
		return true;
	});
}

int p_update(void *t, uint64_t key, uint64_t val)
{
	return static_cast<Ptr *>(t)->find_fn(key, [val](bench_obj_t *const &o) {
		__atomic_store_n(&o->value, val, __ATOMIC_RELAXED);
	});
}

long p_buckets(void *t)
{
	return (long) static_cast<Ptr *>(t)->bucket_count();
}

int p_resize(void *t, size_t buckets)
{
	static_cast<Ptr *>(t)->rehash(log2_of(buckets) + 1);
	return 0;
}

void nothing(void)
{
}

void settle(void *t)
{
	(void) t;
}

bench_impl_t make(const char *name, const char *layout, bool ptr)
{
	bench_impl_t m = {};
	m.name = name;
	m.library = "libcuckoo cuckoohash_map";
	m.layout = layout;
	m.presized = false;
	m.thread_init = nothing;
	m.thread_fini = nothing;
	m.settle = settle;
	/* rehash(log2(b) + 1): b asked, 2b buckets (see i_resize()). */
	m.resize_shift = 1;
	m.est_bytes_per_key = ptr ? 110 : 75;
	if (ptr) {
		m.create = p_create;
		m.destroy = p_destroy;
		m.lookup = p_lookup;
		m.insert = p_insert;
		m.remove = p_remove;
		m.update = p_update;
		m.buckets = p_buckets;
		m.resize = p_resize;
	} else {
		m.create = i_create;
		m.destroy = i_destroy;
		m.lookup = i_lookup;
		m.insert = i_insert;
		m.remove = i_remove;
		m.update = i_update;
		m.buckets = i_buckets;
		m.resize = i_resize;
	}
	return m;
}

}  // namespace

extern "C" {
const bench_impl_t impl_cuckoo = make("cuckoo", "inline", false);
const bench_impl_t impl_cuckoo_ptr = make("cuckoo-ptr", "ptr", true);
}
