/** @file impl_tbb.cc
 * oneTBB (Debian libtbb-dev 2021.8): the two concurrent hash tables a C++
 * programmer picks from it, 8-byte keys and values inline in the node.
 *
 *  tbb-hm  tbb::concurrent_hash_map<uint64_t, uint64_t>: chained, a
 *          reader-writer lock per item (const_accessor for lookups, accessor
 *          for updates), erase is concurrency-safe, grows by itself (bucket
 *          segments are added, never moved); rehash() is not safe beside
 *          other operations, so no forced resize
 *  tbb-um  tbb::concurrent_unordered_map<uint64_t, atomic<uint64_t>>: a
 *          split-ordered list (Shalev and Shavit), lock-free find and
 *          insert, grows by itself; its erase is unsafe_extract (not safe
 *          beside other operations): remove is single-threaded only
 *          (no_concurrent_remove), so churn and the soak's removals skip it
 *
 * Both hash with bench_mix(), like every other adapter. Freed nodes are
 * reclaimed by the library itself (hm: under the item's lock; um: never
 * while the table lives, only by unsafe_extract/destruction).
 */
#include "bench.h"
#include <atomic>
#include <cstdlib>
#include <oneapi/tbb/concurrent_hash_map.h>
#include <oneapi/tbb/concurrent_unordered_map.h>
#include <oneapi/tbb/scalable_allocator.h>

namespace {

struct HmCompare {
	static size_t hash(uint64_t k) { return (size_t) bench_mix(k); }
	static bool equal(uint64_t a, uint64_t b) { return a == b; }
};

struct UmHash {
	size_t operator()(uint64_t k) const { return (size_t) bench_mix(k); }
};

using Hm = tbb::concurrent_hash_map<uint64_t, uint64_t, HmCompare>;
using Um = tbb::concurrent_unordered_map<uint64_t, std::atomic<uint64_t>,
    UmHash>;

/* --- concurrent_hash_map ------------------------------------------------------------ */

void *hm_create(size_t expect, size_t initial)
{
	(void) expect;
	return initial ? new Hm(initial) : new Hm();
}

/*
 * The tables allocate through tbbmalloc, which keeps freed memory in its
 * caches and pools; after a table is deleted the caches are emptied, as a
 * user who wants the memory back would, so that the heap after the teardown
 * (bench_heap_bytes(): tbbmalloc's mappings included) is back to its start.
 */
static void tbb_release(void)
{
	(void) scalable_allocation_command(TBBMALLOC_CLEAN_ALL_BUFFERS, NULL);
}

void hm_destroy(void *t)
{
	delete static_cast<Hm *>(t);
	tbb_release();
}

int hm_lookup(void *t, uint64_t key, uint64_t *val)
{
	Hm::const_accessor a;
	if (!static_cast<Hm *>(t)->find(a, key))
		return 0;
	*val = a->second;
	return 1;
}

int hm_insert(void *t, uint64_t key, uint64_t val)
{
	Hm::accessor a;
	if (!static_cast<Hm *>(t)->insert(a, key))
		return 0;
	a->second = val;
	return 1;
}

int hm_remove(void *t, uint64_t key)
{
	return static_cast<Hm *>(t)->erase(key);
}

int hm_update(void *t, uint64_t key, uint64_t val)
{
	Hm::accessor a;
	if (!static_cast<Hm *>(t)->find(a, key))
		return 0;
	a->second = val;
	return 1;
}

long hm_buckets(void *t)
{
	return (long) static_cast<Hm *>(t)->bucket_count();
}

/* --- concurrent_unordered_map -------------------------------------------------------- */

void *um_create(size_t expect, size_t initial)
{
	(void) expect;
	return initial ? new Um(initial) : new Um();
}

void um_destroy(void *t)
{
	delete static_cast<Um *>(t);
	tbb_release();
}

int um_lookup(void *t, uint64_t key, uint64_t *val)
{
	Um *m = static_cast<Um *>(t);
	auto it = m->find(key);
	if (it == m->end())
		return 0;
	*val = it->second.load(std::memory_order_relaxed);
	return 1;
}

int um_insert(void *t, uint64_t key, uint64_t val)
{
	return static_cast<Um *>(t)->emplace(key, val).second;
}

/*
 * unsafe_extract(key): only without concurrent operations
 * (no_concurrent_remove); the node handle frees the node when it goes out
 * of scope. Not unsafe_erase: oneTBB 2021.8's unsafe_erase(key) takes
 * equal_range(key), whose end is the next key's node, and unsafe_erase(it)
 * returns the next value node: both walk the split-ordered list past the
 * dummy node of every empty bucket up to the next key, about
 * buckets / keys-left nodes, so a table emptied from 1e8 keys slowed to
 * 1,000-2,000 erases a second. unsafe_extract(it) unlinks the node from
 * its bucket's dummy and returns nothing.
 */
int um_remove(void *t, uint64_t key)
{
	return !static_cast<Um *>(t)->unsafe_extract(key).empty();
}

int um_update(void *t, uint64_t key, uint64_t val)
{
	Um *m = static_cast<Um *>(t);
	auto it = m->find(key);
	if (it == m->end())
		return 0;
	it->second.store(val, std::memory_order_relaxed);
	return 1;
}

long um_buckets(void *t)
{
	/* An atomic counter read; "unsafe" is about the bucket contents. */
	return (long) static_cast<Um *>(t)->unsafe_bucket_count();
}

void nothing(void)
{
}

/*
 * tbbmalloc maps its backend's first region (2.3 MiB) on its first
 * allocation and keeps it for the process's life: a thread's first
 * allocation happens here, before bench-big takes the heap's starting
 * figure, so that the figure after the teardown compares like with like.
 */
void tbb_thread_init(void)
{
	scalable_free(scalable_malloc(64));
}

void settle(void *t)
{
	(void) t;
}

bench_impl_t make(bool hm)
{
	bench_impl_t m = {};
	m.name = hm ? "tbb-hm" : "tbb-um";
	m.library = hm ? "oneTBB concurrent_hash_map" :
	    "oneTBB concurrent_unordered_map";
	m.layout = "node";
	m.presized = false;
	m.thread_init = tbb_thread_init;
	m.thread_fini = nothing;
	m.settle = settle;
	m.create = hm ? hm_create : um_create;
	m.destroy = hm ? hm_destroy : um_destroy;
	m.lookup = hm ? hm_lookup : um_lookup;
	m.insert = hm ? hm_insert : um_insert;
	m.remove = hm ? hm_remove : um_remove;
	m.update = hm ? hm_update : um_update;
	m.buckets = hm ? hm_buckets : um_buckets;
	m.resize = nullptr;
	m.est_bytes_per_key = hm ? 85 : 55;
	m.no_concurrent_remove = !hm;
	return m;
}

}  // namespace

extern "C" {
extern const bench_impl_t impl_tbb_hm;
extern const bench_impl_t impl_tbb_um;
const bench_impl_t impl_tbb_hm = make(true);
const bench_impl_t impl_tbb_um = make(false);
}
BENCH_REGISTER(impl_tbb_hm);
BENCH_REGISTER(impl_tbb_um);
