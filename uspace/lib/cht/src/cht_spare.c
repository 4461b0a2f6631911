/** @file cht_spare.c
 * The slab reserve of the managed maps' allocator (cht_alloc.c; interface
 * in cht_map_int.h).
 *
 * Carving a slab on an allocating thread was that thread's slowest step.
 * aligned_alloc() grows glibc's heap with mprotect(), which takes the
 * process's mmap_lock for writing and so waits while the library's worker
 * faults a 2 MiB page of a bucket segment in (populate-ahead,
 * cht_imap_grow.c: 7-14 ms on this project's VM), and the carving then
 * faulted the slab's 16 pages in one by one (about 17 us each there).
 * growprof (1e7 keys) found every slab of a growing map among the inserts
 * over 2 us, 260-355 us on average, the slowest 6-12 ms: the growing map's
 * largest inserts, its inserting thread blocked (voluntary switches) 61-95
 * times.
 *
 * So the worker keeps a few blocks of CHT__MA_SLAB_BYTES allocated and
 * faulted in ahead (spare_run()), and a refill that finds the depot empty
 * carves one of them (cht__spare_take(): no system call, no page fault); it
 * allocates a block itself only when the reserve is empty, as before. The
 * reserve's size follows the allocator's slab list: at most one spare per
 * SPARE_DIV slabs and SPARE_MAX in all (1 MiB, 0.01 bytes per key at 1e8
 * keys), so a small map has none, and a reclaim that shrinks the list gives
 * the spares beyond the new bound back with its slabs (cht__spare_trim()),
 * a destroy all of them.
 */
#include <cht.h>
#include <cht_map.h>
#include "cht_map_int.h"
#include <pthread.h>
#include <stdlib.h>

#define SPARE_MAX 16
#define SPARE_DIV 8

/** A spare: its first word links the reserve. */
typedef struct spare {
	struct spare *next;
} spare_t;

/*
 * The reserve: spares, nspare and the bytes (written under spare_lock, the
 * bytes with relaxed atomic stores for cht__spare_bytes()). Taken after
 * the allocator's alloc_lock is released, never inside it.
 */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static spare_t *spares;
static size_t nspare;
static size_t spare_bytes;
/** 1 while spare_work is queued or running (spare_ask()); atomics. */
static int spare_queued;
static cht_env_work_t spare_work;
/** Spares taken by refills, refills that found none (statistics; relaxed). */
static uint64_t spare_taken, spare_missed;

/** Spares the reserve may hold with @a n slabs in the allocator's list. */
static inline size_t spare_target(size_t n)
{
	return n / SPARE_DIV < SPARE_MAX ? n / SPARE_DIV : SPARE_MAX;
}

/**
 * Whether the reserve of @a held spares needs the worker, with @a n slabs
 * in the list: at half its bound or below (spare_lock held). The worker
 * then fills it to the bound, so it is woken once per half a reserve
 * taken, not once per slab: with as many inserting threads as CPUs each
 * wake-up preempts one of them (2 threads at 1e8 keys, asking at every
 * take: 26,000 preemptions of the inserters in a growth, 14,000 before the
 * reserve).
 */
static inline bool spare_low(size_t held, size_t n)
{
	size_t t = spare_target(n);
	return t > 0 && held <= t / 2;
}

/**
 * Takes the spares beyond spare_target(@a n) out of the reserve (spare_lock
 * held) and returns them, linked, for spares_free().
 */
static spare_t *spares_cut_locked(size_t n)
{
	spare_t *out = NULL;
	while (nspare > spare_target(n)) {
		spare_t *s = spares;
		spares = s->next;
		nspare--;
		__atomic_store_n(&spare_bytes, spare_bytes - CHT__MA_SLAB_BYTES,
		    __ATOMIC_RELAXED);
		s->next = out;
		out = s;
	}
	return out;
}

static void spares_free(spare_t *s)
{
	while (s) {
		spare_t *next = s->next;
		free(s);
		s = next;
	}
}

static void spare_ask(void);

/**
 * Worker thread: fills the reserve up to spare_target() of the slab list's
 * length (asked for at half of it: spare_low()). Each spare is allocated
 * and faulted in here, one store per page (the block is ours: nothing else
 * reads it), then published under
 * spare_lock, which orders those stores before the refill that takes it.
 * The length is read under spare_lock: a reclaim stores it before its
 * cht__spare_trim() takes the lock, so a push after that trim sees the new
 * length and cuts its own spare, and a push before it is cut by the trim.
 */
static void spare_run(cht_env_work_t *w)
{
	(void) w;
	for (;;) {
		pthread_mutex_lock(&spare_lock);
		bool need = nspare < spare_target(cht__ma_nslabs());
		pthread_mutex_unlock(&spare_lock);
		if (!need)
			break;
		char *b = aligned_alloc(64, CHT__MA_SLAB_BYTES);
		if (!b)
			break;
		for (size_t off = 0; off < CHT__MA_SLAB_BYTES; off += 4096)
			__atomic_store_n(&b[off], 0, __ATOMIC_RELAXED);
		spare_t *s = (spare_t *) b;
		pthread_mutex_lock(&spare_lock);
		s->next = spares;
		spares = s;
		nspare++;
		__atomic_store_n(&spare_bytes, spare_bytes + CHT__MA_SLAB_BYTES,
		    __ATOMIC_RELAXED);
		spare_t *extra = spares_cut_locked(cht__ma_nslabs());
		pthread_mutex_unlock(&spare_lock);
		spares_free(extra);
	}
	/*
	 * Release: the worker read the item's links before calling us, and
	 * the next spare_ask() writes them after its acquire. A refill that
	 * took a spare after our last look found us queued and did not ask:
	 * look once more.
	 */
	__atomic_store_n(&spare_queued, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&spare_lock);
	bool need = spare_low(nspare, cht__ma_nslabs());
	pthread_mutex_unlock(&spare_lock);
	if (need)
		spare_ask();
}

/** Asks the worker to fill the reserve, unless it is asked already. */
static void spare_ask(void)
{
	if (__atomic_load_n(&spare_queued, __ATOMIC_RELAXED))
		return;
	if (__atomic_exchange_n(&spare_queued, 1, __ATOMIC_ACQUIRE))
		return;
	if (!cht_env_work_enqueue(&spare_work, spare_run, false))
		__atomic_store_n(&spare_queued, 0, __ATOMIC_RELAXED);
}

void *cht__spare_take(size_t nslabs)
{
	pthread_mutex_lock(&spare_lock);
	spare_t *s = spares;
	if (s) {
		spares = s->next;
		nspare--;
		__atomic_store_n(&spare_bytes, spare_bytes - CHT__MA_SLAB_BYTES,
		    __ATOMIC_RELAXED);
	}
	bool ask = spare_low(nspare, nslabs);
	pthread_mutex_unlock(&spare_lock);
	if (ask)
		spare_ask();
	__atomic_fetch_add(s ? &spare_taken : &spare_missed, 1,
	    __ATOMIC_RELAXED);
	return s;
}

void cht__spare_trim(size_t nslabs)
{
	pthread_mutex_lock(&spare_lock);
	spare_t *extra = spares_cut_locked(nslabs);
	pthread_mutex_unlock(&spare_lock);
	spares_free(extra);
}

size_t cht__spare_bytes(void)
{
	return __atomic_load_n(&spare_bytes, __ATOMIC_RELAXED);
}

void cht__ma_spare_stats(uint64_t *taken, uint64_t *missed, size_t *held)
{
	*taken = __atomic_load_n(&spare_taken, __ATOMIC_RELAXED);
	*missed = __atomic_load_n(&spare_missed, __ATOMIC_RELAXED);
	pthread_mutex_lock(&spare_lock);
	*held = nspare;
	pthread_mutex_unlock(&spare_lock);
}
