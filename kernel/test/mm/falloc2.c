/** @file falloc2.c
 * Frame allocator SMP test: concurrent frame allocation from all CPUs.
 *
 * One thread wired to each online CPU keeps up to FALLOC2_HOLD blocks and, for
 * FALLOC2_ITERS steps, picks a random slot: a held block is verified and freed, an
 * empty slot gets a new block of a random size (1 frame half of the time, 2..4 a
 * quarter, 5..16 a quarter; a quarter of them with FRAME_ZERO). Every block is
 * checked for natural alignment (to its size rounded up to a power of two), zeroed
 * blocks are checked to be zero, and every cache line of every frame gets a pattern
 * word derived from the thread, the slot and the allocation, verified before the
 * block is freed -- so two blocks handed out twice (overlapping) are detected. The
 * blocks a thread still holds at its end are verified and freed by the main
 * thread, i.e. on another CPU than the one that allocated them.
 *
 * The frame counters (after slab_reclaim(SLAB_RECLAIM_ALL), which gives back what
 * the thread structures left in slab magazines) must be back at their baseline.
 * Verdicts depend on counts only, never on timing.
 */

#include <test.h>
#include <testlib.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <arch/mm.h>
#include <proc/thread.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <errno.h>
#include "mmtest.h"

#define FALLOC2_HOLD      32
#define FALLOC2_ITERS     3000
/** Pattern words per frame: one per 64-byte cache line. */
#define FALLOC2_STRIDE    8
#define FALLOC2_WORDS     (FRAME_SIZE / sizeof(uint64_t))

typedef struct {
	uintptr_t pa;   /**< 0: slot empty */
	size_t count;
	uint64_t seed;
} f2_block_t;

typedef struct {
	unsigned index;
	unsigned cpu;
	/** Blocks held; the thread's own until it exits, then the main thread's. */
	f2_block_t held[FALLOC2_HOLD];
	size_t allocs;
	size_t frees;
} f2_arg_t;

static f2_arg_t args[CONFIG_MAX_CPUS];
static thread_t *handles[CONFIG_MAX_CPUS];
static atomic_t errors;
/** First error message (a static string). Atomics (set once by CAS). */
static void *first_error;

static void f2_error(const char *msg)
{
	atomic_inc(&errors);
	(void) atomic_cas_ptr(&first_error, NULL, (void *) msg);
}

static size_t pow2_roundup(size_t n)
{
	size_t r = 1;

	while (r < n)
		r <<= 1;
	return r;
}

static void block_fill(const f2_block_t *b)
{
	uint64_t *w = PA2KA(b->pa);

	for (size_t f = 0; f < b->count; f++) {
		for (size_t i = 0; i < FALLOC2_WORDS; i += FALLOC2_STRIDE)
			w[f * FALLOC2_WORDS + i] = mmtest_mix(b->seed ^ (f << 16) ^ i);
	}
}

static bool block_verify(const f2_block_t *b)
{
	const uint64_t *w = PA2KA(b->pa);

	for (size_t f = 0; f < b->count; f++) {
		for (size_t i = 0; i < FALLOC2_WORDS; i += FALLOC2_STRIDE) {
			if (w[f * FALLOC2_WORDS + i] != mmtest_mix(b->seed ^ (f << 16) ^ i))
				return false;
		}
	}
	return true;
}

static bool block_is_zero(const f2_block_t *b)
{
	const uint64_t *w = PA2KA(b->pa);

	for (size_t i = 0; i < b->count * FALLOC2_WORDS; i++) {
		if (w[i] != 0)
			return false;
	}
	return true;
}

/** Verifies and frees block @a b, emptying the slot. */
static void block_release(f2_block_t *b)
{
	if (!block_verify(b))
		f2_error("block contents corrupted (overlapping blocks?)");
	frame_free(b->pa, b->count);
	b->pa = 0;
}

static void f2_thread(void *p)
{
	f2_arg_t *a = p;
	uint64_t rnd = mmtest_mix(0x2545F4914F6CDD1DUL + a->index);

	for (unsigned it = 0; it < FALLOC2_ITERS; it++) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;

		f2_block_t *b = &a->held[rnd % FALLOC2_HOLD];
		if (b->pa != 0) {
			block_release(b);
			a->frees++;
			continue;
		}

		unsigned kind = (rnd >> 20) % 4;
		size_t count = kind < 2 ? 1 : kind == 2 ? 2 + (rnd >> 24) % 3 :
		    5 + (rnd >> 24) % 12;
		bool zero = ((rnd >> 32) % 4) == 0;
		uintptr_t pa = frame_alloc(count, zero ? FRAME_ZERO : FRAME_NONE);
		if (pa == 0) {
			f2_error("frame_alloc failed (memory should suffice)");
			continue;
		}
		b->pa = pa;
		b->count = count;
		b->seed = mmtest_mix(((uint64_t) a->index << 48) ^ ((uint64_t) it << 8) ^ pa);
		a->allocs++;
		if (!IS_ALIGNED(pa, pow2_roundup(count) * FRAME_SIZE))
			f2_error("block not naturally aligned");
		if (zero && !block_is_zero(b))
			f2_error("FRAME_ZERO block not zeroed");
		block_fill(b);
	}
	if (CPU->id != a->cpu)
		f2_error("wired thread runs on another CPU");
}

/**
 * Concurrent frame allocator test, see the file comment.
 * @return NULL on success, or the reason of the failure.
 */
const char *test_falloc2(void)
{
	static char reason[128];
	frame_stats_t fbase, fs;
	unsigned n = 0;

	slab_reclaim(SLAB_RECLAIM_ALL);
	frame_get_stats(&fbase);
	atomic_set(&errors, 0);
	first_error = NULL;

	for (unsigned c = 0; c < cpu_count && n < CONFIG_MAX_CPUS; c++) {
		if (!cpu_is_online(c))
			continue;
		args[n].index = n;
		args[n].cpu = c;
		args[n].allocs = 0;
		args[n].frees = 0;
		for (unsigned i = 0; i < FALLOC2_HOLD; i++)
			args[n].held[i].pa = 0;
		n++;
	}
	TPRINTF("falloc2: %u threads (one per CPU), %u steps each over %u blocks of "
	    "1..16 frames\n", n, FALLOC2_ITERS, FALLOC2_HOLD);

	unsigned created = 0;
	for (unsigned i = 0; i < n; i++) {
		handles[i] = testlib_create(f2_thread, &args[i], "falloc2",
		    &cpus[args[i].cpu]);
		if (handles[i] == NULL)
			break;
		created++;
	}
	/* Threads are independent: run whatever could be created. */
	for (unsigned i = 0; i < created; i++)
		thread_start(handles[i]);
	for (unsigned i = 0; i < created; i++) {
		if (thread_join(handles[i]) != EOK)
			f2_error("thread_join failed");
	}
	if (created < n)
		f2_error("thread_create failed (out of memory)");

	/* What the threads still hold is verified and freed here, on this CPU. */
	size_t allocs = 0;
	size_t left = 0;
	for (unsigned i = 0; i < created; i++) {
		allocs += args[i].allocs;
		for (unsigned k = 0; k < FALLOC2_HOLD; k++) {
			if (args[i].held[k].pa != 0) {
				block_release(&args[i].held[k]);
				left++;
			}
		}
	}

	slab_reclaim(SLAB_RECLAIM_ALL);
	frame_get_stats(&fs);
	TPRINTF("falloc2: %zu blocks allocated, %zu freed by the main thread; free "
	    "frames %zu (baseline %zu)\n", allocs, left, fs.free, fbase.free);
	if (atomic_get(&errors) != 0) {
		snprintf(reason, sizeof(reason), "%zu errors, first: %s",
		    atomic_get(&errors), (const char *) first_error);
		return reason;
	}
	if (fs.free != fbase.free || fs.busy != fbase.busy || fs.total != fbase.total)
		return "frame counters not back at the baseline";
	return NULL;
}
