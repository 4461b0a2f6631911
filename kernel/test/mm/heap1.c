/** @file heap1.c
 * Kernel heap test.
 *
 * - sizes 1 B .. 1 MiB (every power of two and odd sizes around it), freed in
 *   forward, reverse and interleaved order;
 * - thousands of small allocations;
 * - a random alloc/free churn over a window of live blocks;
 * - calloc() zeroing and overflow, malloc(0), impossible sizes, free(NULL).
 * Every block is filled with a pattern derived from its address and size and
 * verified before it is freed (which also detects overlapping blocks). At the end
 * the heap counters (live allocations, bytes, frames) and the frame counters must
 * be back at their baseline exactly (after slab_reclaim(), which gives back the
 * memory cached in the slab allocator's magazines).
 *
 * The test assumes nothing else uses the heap while it runs.
 */

#include <test.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <print.h>
#include <lib/str.h>
#include <typedefs.h>

#define HEAP1_MAX_SIZE   MiB(1)
#define HEAP1_SIZES_MAX  128
#define HEAP1_SMALL      4096
#define HEAP1_WINDOW     256
#define HEAP1_CHURN      20000

/** Pointers and sizes of the live blocks of the current phase. */
static void *ptrs[HEAP1_SMALL];
static size_t sizes[HEAP1_SMALL];

/** The size list of the first phase. */
static size_t size_list[HEAP1_SIZES_MAX];
static size_t size_count;

typedef enum {
	ORDER_FORWARD,
	ORDER_REVERSE,
	ORDER_INTERLEAVED,
} heap1_order_t;

static const char *order_names[] = { "forward", "reverse", "interleaved" };

static uint64_t seed_of(void *p, size_t size)
{
	return ((uintptr_t) p * 0x9E3779B97F4A7C15UL) ^ (size * 0xC2B2AE3D27D4EB4FUL) ^
	    0x1234567887654321UL;
}

/** Fills @a size bytes at @a p with a pattern derived from (p, size). */
static void fill(void *p, size_t size)
{
	uint64_t seed = seed_of(p, size);
	uint64_t *w = p;
	size_t words = size / 8;

	for (size_t i = 0; i < words; i++)
		w[i] = seed ^ (i * 0x100000001B3UL);
	uint8_t *b = p;
	for (size_t i = words * 8; i < size; i++)
		b[i] = (uint8_t) (seed >> ((i % 8) * 8)) ^ (uint8_t) i;
}

/** Verifies the pattern written by fill(). */
static bool verify(void *p, size_t size)
{
	uint64_t seed = seed_of(p, size);
	uint64_t *w = p;
	size_t words = size / 8;

	for (size_t i = 0; i < words; i++) {
		if (w[i] != (seed ^ (i * 0x100000001B3UL)))
			return false;
	}
	uint8_t *b = p;
	for (size_t i = words * 8; i < size; i++) {
		if (b[i] != ((uint8_t) (seed >> ((i % 8) * 8)) ^ (uint8_t) i))
			return false;
	}
	return true;
}

/** Allocates, checks and fills one block of @a size bytes into slot @a i. */
static const char *alloc_one(size_t i, size_t size)
{
	void *p = malloc(size);

	if (p == NULL) {
		printf("heap1: malloc(%zu) failed\n", size);
		return "malloc failed";
	}
	if (!IS_ALIGNED((uintptr_t) p, 16)) {
		printf("heap1: malloc(%zu) = %p not 16-byte aligned\n", size, p);
		free(p);
		return "block not 16-byte aligned";
	}
	if (malloc_usable_size(p) < size) {
		printf("heap1: malloc(%zu): usable size %zu\n", size,
		    malloc_usable_size(p));
		free(p);
		return "usable size smaller than requested";
	}
#ifdef CONFIG_DEBUG
	/* Debug builds poison fresh memory with 0xA5. */
	for (size_t j = 0; j < size && j < 64; j++) {
		if (((uint8_t *) p)[j] != 0xA5) {
			free(p);
			return "fresh block not poisoned with 0xA5 (debug build)";
		}
	}
#endif
	fill(p, size);
	ptrs[i] = p;
	sizes[i] = size;
	return NULL;
}

/** Verifies and frees the block in slot @a i. */
static const char *free_one(size_t i)
{
	if (!verify(ptrs[i], sizes[i])) {
		printf("heap1: block %p (%zu bytes) corrupted\n", ptrs[i], sizes[i]);
		return "block pattern corrupted (overlapping blocks?)";
	}
	free(ptrs[i]);
	ptrs[i] = NULL;
	return NULL;
}

/** Frees slots [0, n) in @a order (each verified first). */
static const char *free_all(size_t n, heap1_order_t order)
{
	const char *err;

	switch (order) {
	case ORDER_FORWARD:
		for (size_t i = 0; i < n; i++) {
			if ((err = free_one(i)) != NULL)
				return err;
		}
		break;
	case ORDER_REVERSE:
		for (size_t i = n; i-- > 0;) {
			if ((err = free_one(i)) != NULL)
				return err;
		}
		break;
	case ORDER_INTERLEAVED:
		for (size_t i = 0; i < n; i += 2) {
			if ((err = free_one(i)) != NULL)
				return err;
		}
		for (size_t i = 1; i < n; i += 2) {
			if ((err = free_one(i)) != NULL)
				return err;
		}
		break;
	}
	return NULL;
}

/** Frees whatever is still allocated in slots [0, n) (after a failure). */
static void cleanup(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ptrs[i] != NULL) {
			free(ptrs[i]);
			ptrs[i] = NULL;
		}
	}
}

static void add_size(size_t s)
{
	if (s >= 1 && s <= HEAP1_MAX_SIZE && size_count < HEAP1_SIZES_MAX)
		size_list[size_count++] = s;
}

/** Sizes 1 B .. 1 MiB: 2^k - 1, 2^k, 2^k + 1, 2^k + 2^(k-1) + 3. */
static void make_sizes(void)
{
	size_count = 0;
	for (unsigned k = 0; k <= 20; k++) {
		size_t s = (size_t) 1 << k;
		if (k > 1)
			add_size(s - 1);
		add_size(s);
		if (k > 0)
			add_size(s + 1);
		add_size(s + s / 2 + 3);
	}
}

/** Phase 1: the size list, allocated at once and freed in @a order. */
static const char *phase_sizes(heap1_order_t order)
{
	const char *err;
	heap_stats_t hs;
	heap_stats_t before;
	size_t bytes = 0;

	heap_get_stats(&before);
	for (size_t i = 0; i < size_count; i++) {
		if ((err = alloc_one(i, size_list[i])) != NULL) {
			cleanup(i);
			return err;
		}
		bytes += size_list[i];
	}

	heap_get_stats(&hs);
	TPRINTF("heap1: %zu blocks, %zu bytes (1 B .. 1 MiB) live, heap holds %zu "
	    "frames; freeing %s\n", size_count, bytes, hs.pages, order_names[order]);
	if (hs.allocs != before.allocs + size_count ||
	    hs.bytes != before.bytes + bytes) {
		cleanup(size_count);
		return "heap stats do not count the live blocks";
	}

	/* Verify everything before freeing anything: catches overlaps early. */
	for (size_t i = 0; i < size_count; i++) {
		if (!verify(ptrs[i], sizes[i])) {
			cleanup(size_count);
			return "block pattern corrupted (overlapping blocks?)";
		}
	}

	if ((err = free_all(size_count, order)) != NULL) {
		cleanup(size_count);
		return err;
	}
	return NULL;
}

/** Phase 2: thousands of small blocks. */
static const char *phase_small(heap1_order_t order)
{
	const char *err;

	for (size_t i = 0; i < HEAP1_SMALL; i++) {
		size_t size = 1 + (i * 37 + i / 5) % 300;
		if ((err = alloc_one(i, size)) != NULL) {
			cleanup(i);
			return err;
		}
	}
	if ((err = free_all(HEAP1_SMALL, order)) != NULL) {
		cleanup(HEAP1_SMALL);
		return err;
	}
	return NULL;
}

/** Phase 3: random replacement over a window of live blocks. */
static const char *phase_churn(void)
{
	const char *err;
	uint64_t rnd = 0x2545F4914F6CDD1DUL;

	for (size_t i = 0; i < HEAP1_WINDOW; i++)
		ptrs[i] = NULL;

	for (size_t it = 0; it < HEAP1_CHURN; it++) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;

		size_t i = rnd % HEAP1_WINDOW;
		if (ptrs[i] != NULL) {
			if ((err = free_one(i)) != NULL) {
				cleanup(HEAP1_WINDOW);
				return err;
			}
			continue;
		}

		size_t size;
		switch ((rnd >> 32) % 16) {
		case 0:
			size = 1 + (rnd >> 40) % 65536;
			break;
		case 1:
		case 2:
		case 3:
			size = 1 + (rnd >> 40) % 4096;
			break;
		default:
			size = 1 + (rnd >> 40) % 256;
			break;
		}
		if ((err = alloc_one(i, size)) != NULL) {
			cleanup(HEAP1_WINDOW);
			return err;
		}
	}

	for (size_t i = 0; i < HEAP1_WINDOW; i++) {
		if (ptrs[i] != NULL && (err = free_one(i)) != NULL) {
			cleanup(HEAP1_WINDOW);
			return err;
		}
	}
	return NULL;
}

static bool all_zero(const void *p, size_t size)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < size; i++) {
		if (b[i] != 0)
			return false;
	}
	return true;
}

/** Phase 4: calloc, malloc(0), impossible sizes, free(NULL). */
static const char *phase_misc(void)
{
	/* Dirty blocks, free them, then calloc the same size: likely the same memory. */
	for (size_t i = 0; i < size_count; i++) {
		size_t s = size_list[i];
		if (s > KiB(64))
			break;

		void *p = malloc(s);
		if (p == NULL)
			return "malloc failed";
		memset(p, 0xFF, s);
		free(p);

		void *q = (i % 2) ? calloc(1, s) : calloc(s, 1);
		if (q == NULL)
			return "calloc failed";
		if (!IS_ALIGNED((uintptr_t) q, 16)) {
			free(q);
			return "calloc block not 16-byte aligned";
		}
		if (!all_zero(q, s)) {
			free(q);
			return "calloc memory not zeroed";
		}
		free(q);
	}

	void *q = calloc(300, 7);
	if (q == NULL)
		return "calloc(300, 7) failed";
	bool zero = all_zero(q, 2100);
	free(q);
	if (!zero)
		return "calloc(300, 7) not zeroed";

	if (calloc(SIZE_MAX / 2 + 1, 2) != NULL)
		return "calloc overflow not detected";
	if (calloc(SIZE_MAX, SIZE_MAX) != NULL)
		return "calloc overflow not detected";

	if (malloc(SIZE_MAX) != NULL || malloc(SIZE_MAX - 15) != NULL ||
	    malloc(SIZE_MAX - 4096) != NULL)
		return "malloc of an impossible size succeeded";
	if (malloc(GiB(64)) != NULL)
		return "malloc(64 GiB) succeeded";

	/* malloc(0): NULL or a unique pointer that can be freed. */
	void *z1 = malloc(0);
	void *z2 = malloc(0);
	if (z1 != NULL && z1 == z2)
		return "malloc(0) returned the same pointer twice";
	if ((z1 != NULL && !IS_ALIGNED((uintptr_t) z1, 16)) ||
	    (z2 != NULL && !IS_ALIGNED((uintptr_t) z2, 16)))
		return "malloc(0) pointer not 16-byte aligned";
	free(z1);
	free(z2);

	free(NULL);
	if (malloc_usable_size(NULL) != 0)
		return "malloc_usable_size(NULL) != 0";
	return NULL;
}

/**
 * Heap test, see the file comment.
 * @return NULL on success, or the reason of the failure.
 */
const char *test_heap1(void)
{
	heap_stats_t hbase;
	heap_stats_t hs;
	frame_stats_t fbase;
	frame_stats_t fs;
	const char *err;

	/*
	 * Freed blocks stay in the slab allocator's per-CPU magazines (with their
	 * slabs) until a reclaim: flush everything before both measurements.
	 */
	slab_reclaim(SLAB_RECLAIM_ALL);
	heap_get_stats(&hbase);
	frame_get_stats(&fbase);
	TPRINTF("heap1: baseline %zu allocations, %zu bytes, %zu frames\n",
	    hbase.allocs, hbase.bytes, hbase.pages);

	make_sizes();
	for (int order = ORDER_FORWARD; order <= ORDER_INTERLEAVED; order++) {
		if ((err = phase_sizes(order)) != NULL)
			return err;
	}

	for (int order = ORDER_FORWARD; order <= ORDER_INTERLEAVED; order++) {
		if ((err = phase_small(order)) != NULL)
			return err;
	}
	TPRINTF("heap1: %d x %d small blocks done\n", 3, HEAP1_SMALL);

	if ((err = phase_churn()) != NULL)
		return err;
	TPRINTF("heap1: %d churn steps over %d blocks done\n", HEAP1_CHURN,
	    HEAP1_WINDOW);

	if ((err = phase_misc()) != NULL)
		return err;

	slab_reclaim(SLAB_RECLAIM_ALL);
	heap_get_stats(&hs);
	frame_get_stats(&fs);
	TPRINTF("heap1: end %zu allocations, %zu bytes, %zu frames\n", hs.allocs,
	    hs.bytes, hs.pages);
	if (hs.allocs != hbase.allocs || hs.bytes != hbase.bytes)
		return "heap allocations not back at baseline (leak in the heap?)";
	if (hs.pages != hbase.pages)
		return "heap frames not back at baseline";
	if (fs.free != fbase.free || fs.busy != fbase.busy || fs.total != fbase.total)
		return "frame stats not back at baseline";
	return NULL;
}
