/** @file slab2.c
 * Slab allocator SMP test: every CPU allocates and frees concurrently, objects are
 * handed between CPUs.
 *
 * One thread wired to each online CPU. In each of SLAB2_ROUNDS rounds a thread
 * allocates SLAB2_N items -- three of four are objects of a shared slab cache with
 * a constructor, one of four is a malloc() block of a varying size -- and fills
 * them with a pattern naming the thread. It verifies and frees half of them itself
 * and hands the other half to the thread of the next CPU through a ring (a
 * spinlock-protected array, one per pair of neighbours); it receives as many from
 * the previous CPU's thread, verifies that they are intact and constructed, and
 * frees them on its own CPU. So objects allocated on one CPU are freed on another,
 * and every CPU's magazines see foreign objects. Push and pop never block (a thread
 * that can do neither yields), so the ring of threads cannot deadlock.
 *
 * Afterwards the main thread joins every thread, runs
 * slab_reclaim(SLAB_RECLAIM_ALL) and checks: no errors; the cache has no object in
 * use, none cached and no slab; every constructed object was destructed once; the
 * magazine hits and misses add up to the allocations and frees exactly, and
 * at least half of them were hits; the cache can be destroyed; the heap counters and the
 * frame counters are back at their baseline exactly.
 *
 * Verdicts depend on counts only, never on timing.
 */

#include <test.h>
#include <testlib.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <proc/thread.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>
#include <lib/str.h>
#include "mmtest.h"

#define SLAB2_N        256
#define SLAB2_HALF     (SLAB2_N / 2)
#define SLAB2_ROUNDS   40
#define SLAB2_RING     64
#define SLAB2_MAGIC    0x51AB2C7012345678UL
#define SLAB2_DEAD     0xDEADBEEFDEADBEEFUL
#define SLAB2_WORDS    12

/** A slab object of the test cache. */
typedef struct {
	uint64_t magic;        /**< Constructed state (set by the constructor). */
	uint32_t owner;        /**< Index of the thread that allocated it. */
	uint32_t round;
	uint64_t seed;
	uint64_t data[SLAB2_WORDS];
} s2_obj_t;

/** An item handed between threads: a slab object or a malloc() block. */
typedef struct {
	void *p;
	/** 0 for a slab object, else the malloc() size. */
	size_t size;
} s2_item_t;

/** Ring from thread i to thread i + 1. Protected by @c lock. */
typedef struct {
	spinlock_t lock;
	s2_item_t items[SLAB2_RING];
	size_t head;
	size_t count;
} s2_ring_t;

typedef struct {
	unsigned index;
	unsigned cpu;
	/** Per-thread item buffer of one round; touched by its thread only. */
	s2_item_t local[SLAB2_N];
} s2_arg_t;

static s2_ring_t rings[CONFIG_MAX_CPUS];
static s2_arg_t args[CONFIG_MAX_CPUS];
static thread_t *handles[CONFIG_MAX_CPUS];
/** Threads started; written by the main thread before any starts. */
static unsigned nthreads;
static slab_cache_t *cache;
/** Set when not every thread could be created: threads exit at once. Atomics. */
static bool abort_run;

static atomic_t ctor_calls;
static atomic_t dtor_calls;
static atomic_t errors;
/** First error message (a static string). Atomics (set once by CAS). */
static void *first_error;

static void s2_error(const char *msg)
{
	atomic_inc(&errors);
	(void) atomic_cas_ptr(&first_error, NULL, (void *) msg);
}

static int s2_ctor(void *p, unsigned kmflags)
{
	s2_obj_t *o = p;

	o->magic = SLAB2_MAGIC;
	atomic_inc(&ctor_calls);
	return 0;
}

static size_t s2_dtor(void *p)
{
	s2_obj_t *o = p;

	if (o->magic != SLAB2_MAGIC)
		s2_error("destructor found an object not in its constructed state");
	o->magic = SLAB2_DEAD;
	atomic_inc(&dtor_calls);
	return 0;
}

/** Byte pattern of a malloc() block: from its address, size and owner. */
static uint8_t block_byte(const void *p, size_t size, unsigned owner, size_t i)
{
	uint64_t s = mmtest_mix((uintptr_t) p ^ (size << 20) ^ owner);
	return (uint8_t) (s >> ((i % 8) * 8)) ^ (uint8_t) (i / 8);
}

/** Allocates and fills item @a i of round @a round for thread @a a. */
static void item_make(s2_arg_t *a, unsigned round, unsigned i, s2_item_t *it)
{
	if (i % 4 == 3) {
		size_t size = 1 + (i * 37 + round * 11 + a->index * 101) % 2000;
		uint8_t *b = malloc(size);
		it->p = b;
		it->size = size;
		if (b == NULL) {
			s2_error("malloc failed");
			return;
		}
		for (size_t k = 0; k < size; k++)
			b[k] = block_byte(b, size, a->index, k);
		return;
	}

	s2_obj_t *o = slab_alloc(cache, SLAB_KM_NONE);
	it->p = o;
	it->size = 0;
	if (o == NULL) {
		s2_error("slab_alloc failed");
		return;
	}
	if (o->magic != SLAB2_MAGIC)
		s2_error("slab_alloc returned an object not in its constructed state");
	o->owner = a->index;
	o->round = round;
	o->seed = mmtest_mix(((uint64_t) a->index << 40) ^ ((uint64_t) round << 20) ^ i);
	for (unsigned k = 0; k < SLAB2_WORDS; k++)
		o->data[k] = mmtest_mix(o->seed + k);
}

/** Verifies that @a it was made by thread @a owner, then frees it. */
static void item_check_free(const s2_item_t *it, unsigned owner)
{
	if (it->p == NULL)
		return;   /* its allocation failed (already reported) */

	if (it->size != 0) {
		const uint8_t *b = it->p;
		for (size_t k = 0; k < it->size; k++) {
			if (b[k] != block_byte(b, it->size, owner, k)) {
				s2_error("malloc block corrupted");
				break;
			}
		}
		free(it->p);
		return;
	}

	s2_obj_t *o = it->p;
	bool ok = o->magic == SLAB2_MAGIC && o->owner == owner;
	for (unsigned k = 0; ok && k < SLAB2_WORDS; k++)
		ok = o->data[k] == mmtest_mix(o->seed + k);
	if (!ok)
		s2_error("slab object corrupted or not from the expected CPU");
	slab_free(cache, o);
}

static bool ring_push(s2_ring_t *r, const s2_item_t *it)
{
	bool ok = false;

	spinlock_lock(&r->lock);
	if (r->count < SLAB2_RING) {
		r->items[(r->head + r->count) % SLAB2_RING] = *it;
		r->count++;
		ok = true;
	}
	spinlock_unlock(&r->lock);
	return ok;
}

static bool ring_pop(s2_ring_t *r, s2_item_t *it)
{
	bool ok = false;

	spinlock_lock(&r->lock);
	if (r->count > 0) {
		*it = r->items[r->head];
		r->head = (r->head + 1) % SLAB2_RING;
		r->count--;
		ok = true;
	}
	spinlock_unlock(&r->lock);
	return ok;
}

static void s2_thread(void *p)
{
	s2_arg_t *a = p;
	unsigned prev = (a->index + nthreads - 1) % nthreads;
	s2_ring_t *out = &rings[a->index];
	s2_ring_t *in = &rings[prev];

	if (__atomic_load_n(&abort_run, __ATOMIC_RELAXED))
		return;

	for (unsigned round = 0; round < SLAB2_ROUNDS; round++) {
		for (unsigned i = 0; i < SLAB2_N; i++)
			item_make(a, round, i, &a->local[i]);
		if (CPU->id != a->cpu)
			s2_error("wired thread runs on another CPU");

		/* The second half stays here. */
		for (unsigned i = SLAB2_HALF; i < SLAB2_N; i++)
			item_check_free(&a->local[i], a->index);

		/* The first half goes to the next CPU; as many come from the previous. */
		unsigned sent = 0;
		unsigned received = 0;
		while (sent < SLAB2_HALF || received < SLAB2_HALF) {
			bool progress = false;
			if (sent < SLAB2_HALF && ring_push(out, &a->local[sent])) {
				sent++;
				progress = true;
			}
			s2_item_t it;
			if (received < SLAB2_HALF && ring_pop(in, &it)) {
				item_check_free(&it, prev);
				received++;
				progress = true;
			}
			if (!progress)
				thread_yield();
		}
	}
}

/** One thread per online CPU passes objects around the ring; @return NULL,
 *  or the failure (the cache is destroyed when the threads could not all be
 *  created). */
static const char *s2_run_threads(void)
{
	nthreads = 0;
	for (unsigned c = 0; c < cpu_count && nthreads < CONFIG_MAX_CPUS; c++) {
		if (!cpu_is_online(c))
			continue;
		args[nthreads].index = nthreads;
		args[nthreads].cpu = c;
		spinlock_initialize(&rings[nthreads].lock, "slab2.ring");
		rings[nthreads].head = 0;
		rings[nthreads].count = 0;
		nthreads++;
	}
	TPRINTF("slab2: %u threads (one per CPU), %u rounds of %u items, half handed "
	    "to the next CPU\n", nthreads, SLAB2_ROUNDS, SLAB2_N);

	unsigned created = 0;
	__atomic_store_n(&abort_run, false, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < nthreads; i++) {
		handles[i] = testlib_create(s2_thread, &args[i], "slab2",
		    &cpus[args[i].cpu]);
		if (handles[i] == NULL)
			break;
		created++;
	}
	if (created < nthreads) {
		/* The ring needs every thread: let the created ones exit at once. */
		__atomic_store_n(&abort_run, true, __ATOMIC_RELAXED);
		for (unsigned i = 0; i < created; i++)
			thread_start(handles[i]);
		for (unsigned i = 0; i < created; i++)
			(void) thread_join(handles[i]);
		(void) slab_cache_destroy(cache);
		return "thread_create failed (out of memory)";
	}
	for (unsigned i = 0; i < nthreads; i++)
		thread_start(handles[i]);
	for (unsigned i = 0; i < nthreads; i++) {
		if (thread_join(handles[i]) != EOK)
			return "thread_join failed";
	}
	return NULL;
}

/** After the threads: no error, nothing in use, and the magazine hits and
 *  misses add up to the operations (at least half of them hits). */
static const char *s2_check_magazines(void)
{
	static char reason[128];
	slab_cache_stats_t st;

	if (atomic_get(&errors) != 0) {
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    atomic_get(&errors), (const char *) first_error);
		return reason;
	}

	slab_cache_get_stats(cache, &st);
	TPRINTF("slab2: before reclaim: %zu in use, %zu cached in magazines, %zu "
	    "slabs, %lu magazine hits, %lu misses\n", st.objs_in_use, st.objs_cached,
	    st.slabs, st.mag_hits, st.mag_misses);
	if (st.objs_in_use != 0)
		return "objects still in use after every thread freed its objects";
	/*
	 * Every slab_alloc and slab_free of the cache counts one magazine hit or
	 * one miss: exactly 2 * objs operations. A free goes to a magazine unless
	 * no empty magazine can be had, and after the first round most
	 * allocations find a freed object in the CPU's magazines: at least as many
	 * hits as objects (half of the operations) are required.
	 */
	uint64_t objs = (uint64_t) nthreads * SLAB2_ROUNDS * (SLAB2_N -
	    SLAB2_N / 4);
	if (st.mag_hits + st.mag_misses != 2 * objs) {
		snprintf(reason, sizeof(reason), "%lu magazine hits + %lu misses, "
		    "but %lu allocations and frees", st.mag_hits, st.mag_misses,
		    2 * objs);
		return reason;
	}
	if (st.mag_hits < objs) {
		snprintf(reason, sizeof(reason), "only %lu magazine hits in %lu "
		    "allocations and frees (at least %lu required)", st.mag_hits,
		    2 * objs, objs);
		return reason;
	}
	return NULL;
}

/** slab_reclaim() empties the cache (every constructed object destroyed),
 *  which then is destroyed. */
static const char *s2_check_reclaim(void)
{
	slab_cache_stats_t st;

	slab_reclaim(SLAB_RECLAIM_ALL);
	slab_cache_get_stats(cache, &st);
	TPRINTF("slab2: after reclaim: %zu in use, %zu out of slabs, %zu slabs; "
	    "%zu constructor, %zu destructor calls\n", st.objs_in_use,
	    st.objs_slab_used, st.slabs, atomic_get(&ctor_calls),
	    atomic_get(&dtor_calls));
	if (st.objs_in_use != 0 || st.objs_slab_used != 0)
		return "cache object counts not back to 0 after slab_reclaim";
	if (st.slabs != 0 || slab_cache_frames(cache) != 0)
		return "cache still holds slabs after slab_reclaim";
	if (atomic_get(&ctor_calls) != atomic_get(&dtor_calls))
		return "constructor and destructor call counts differ";
	if (atomic_get(&errors) != 0)
		return (const char *) first_error;
	if (slab_cache_destroy(cache) != EOK)
		return "slab_cache_destroy failed";
	cache = NULL;
	return NULL;
}

/**
 * Slab SMP test, see the file comment.
 * @return NULL on success, or the reason of the failure.
 */
const char *test_slab2(void)
{
	heap_stats_t hbase, hs;
	frame_stats_t fbase, fs;
	const char *r;

	slab_reclaim(SLAB_RECLAIM_ALL);
	heap_get_stats(&hbase);
	frame_get_stats(&fbase);

	atomic_set(&ctor_calls, 0);
	atomic_set(&dtor_calls, 0);
	atomic_set(&errors, 0);
	first_error = NULL;

	cache = slab_cache_create("slab2", sizeof(s2_obj_t), 0, s2_ctor, s2_dtor,
	    SLAB_CACHE_NONE);
	if (cache == NULL)
		return "slab_cache_create failed";
	if ((r = s2_run_threads()) || (r = s2_check_magazines()) ||
	    (r = s2_check_reclaim()))
		return r;

	slab_reclaim(SLAB_RECLAIM_ALL);
	heap_get_stats(&hs);
	frame_get_stats(&fs);
	TPRINTF("slab2: heap %zu allocations (baseline %zu), free frames %zu "
	    "(baseline %zu)\n", hs.allocs, hbase.allocs, fs.free, fbase.free);
	if (hs.allocs != hbase.allocs || hs.bytes != hbase.bytes)
		return "heap counters not back at the baseline";
	if (hs.pages != hbase.pages)
		return "heap frames not back at the baseline";
	if (fs.free != fbase.free || fs.busy != fbase.busy)
		return "frame counters not back at the baseline";
	return NULL;
}
