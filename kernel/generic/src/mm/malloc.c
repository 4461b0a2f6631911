/** @file malloc.c
 * Kernel heap on top of the slab allocator.
 *
 * Every block starts with a 16-byte header (heap_hdr_t) followed by the payload, so
 * every returned pointer is 16-byte aligned and free() can find the block's size
 * class and validate its argument.
 *
 * Small blocks (size <= 64 KiB) come from 13 size-class slab caches whose usable
 * sizes are the powers of two 16 B .. 64 KiB; an object of class k is 2^k + 16
 * bytes (header included), 16-byte aligned. A power-of-two request therefore fits
 * its class exactly. The caches have per-CPU magazines, so malloc()/free() of small
 * blocks take no shared lock on a magazine hit (see mm/slab.h); the header records
 * the class, from which free() finds the cache.
 *
 * Large blocks (size > 64 KiB) are served by frame_alloc() directly; the header at
 * the start of the block records the requested size, from which the frame count is
 * recomputed on free.
 *
 * malloc(0) returns a unique pointer to a minimal block (16 usable bytes) that must
 * be passed to free() like any other; it counts as an allocation of 0 bytes.
 *
 * When memory is exhausted, the slab layer (small blocks) or malloc() itself (large
 * blocks) runs slab_reclaim() once and retries before returning NULL.
 *
 * Debug builds (CONFIG_DEBUG): fresh allocations are filled with 0xA5; freed small
 * blocks are poisoned with 0xDE by the slab allocator, which panics when it hands
 * out a block whose poison was overwritten (a write after free); freed large blocks
 * are filled with 0xDE.
 *
 * Bad frees (pointer not from malloc, double free, corrupted header) panic: they are
 * kernel bugs. In debug builds the slab allocator also checks that the block
 * belongs to the cache named by its header.
 *
 * Statistics: live allocations and requested bytes are kept in per-CPU counters
 * (atomic adds on the current CPU's cache line, so a migration between reading the
 * CPU id and the add is harmless; the sums are exact). Frames held = frames of the
 * class caches' slabs + frames of large blocks. Objects cached in the per-CPU
 * magazines keep their slabs: after free() the frame count drops only when
 * slab_reclaim() runs, so tests that compare frames with a baseline call
 * slab_reclaim(SLAB_RECLAIM_ALL) first.
 *
 * Context: any CPU, any context including interrupt handlers (the slab allocator
 * disables interrupts around magazine operations and takes IRQ-saving spinlocks;
 * frame_alloc() is IRQ-safe); never sleeps.
 */

#include <debug/kasan.h>
#include <mm/malloc.h>
#include <mm/slab.h>
#include <mm/frame.h>
#include <arch/mm.h>
#include <atomic.h>
#include <cpu.h>
#include <debug.h>
#include <panic.h>
#include <print.h>
#include <lib/str.h>

/** Size of the block header; also the alignment of returned pointers. */
#define HEAP_HDR_SIZE    16
/** Smallest class: 2^4 = 16 usable bytes. */
#define HEAP_MIN_SHIFT   4
/** Largest class: 2^16 = 64 KiB usable bytes. */
#define HEAP_MAX_SHIFT   16
#define HEAP_CLASSES     (HEAP_MAX_SHIFT - HEAP_MIN_SHIFT + 1)
#define HEAP_MAX_SMALL   ((size_t) 1 << HEAP_MAX_SHIFT)
/** Largest request frame_alloc() can satisfy (one max-order block minus header). */
#define HEAP_MAX_SIZE \
	((((size_t) 1 << FRAME_MAX_ORDER) * FRAME_SIZE) - HEAP_HDR_SIZE)

#define HEAP_MAGIC_USED   0x48656170U  /* "Heap" */
#define HEAP_MAGIC_FREE   0x46726565U  /* "Free" */
#define HEAP_MAGIC_LARGE  0x4c617267U  /* "Larg" */
/** What a small block's magic reads after the slab allocator poisoned it. */
#define HEAP_MAGIC_POISON 0xDEDEDEDEU

#define HEAP_POISON_ALLOC 0xA5
#define HEAP_POISON_FREE  0xDE

/**
 * Header in front of every block; owned by the block's owner. @c size comes first:
 * it is the word the slab allocator reuses as its free-list link while the block
 * sits free in a slab, so the magic of a freed block stays readable (release
 * builds) for double-free detection.
 */
typedef struct {
	/** Bytes requested by the caller. */
	uint64_t size;
	/** HEAP_MAGIC_USED / HEAP_MAGIC_FREE (small block) or HEAP_MAGIC_LARGE. */
	uint32_t magic;
	/** Size class index (small blocks only). */
	uint16_t cls;
	uint16_t reserved;
} heap_hdr_t;

_Static_assert(sizeof(heap_hdr_t) == HEAP_HDR_SIZE, "heap header size");

/** The size-class caches; set once by heap_init(), immutable afterwards. */
static slab_cache_t *classes[HEAP_CLASSES];

static const char *const class_names[HEAP_CLASSES] = {
	"malloc-16", "malloc-32", "malloc-64", "malloc-128", "malloc-256",
	"malloc-512", "malloc-1K", "malloc-2K", "malloc-4K", "malloc-8K",
	"malloc-16K", "malloc-32K", "malloc-64K",
};

/**
 * Per-CPU statistics, one cache line per CPU. Updated with atomic adds on the
 * current CPU's entry (possibly a stale one after a migration: still correct).
 * Sums over all CPUs (modulo 2^64) are the live counts.
 */
typedef struct {
	size_t allocs;
	size_t bytes;
} ALIGNED(64) heap_cpu_stats_t;

static heap_cpu_stats_t cpu_stats[CONFIG_MAX_CPUS];

/** Live large allocations. Atomics. */
static atomic_t stat_large_allocs = ATOMIC_INIT(0);
/** Frames held by large allocations (rounded to powers of two). Atomics. */
static atomic_t stat_large_pages = ATOMIC_INIT(0);

static inline void stats_account(ssize_t allocs, ssize_t bytes)
{
	heap_cpu_stats_t *s = &cpu_stats[CPU->id];

	__atomic_fetch_add(&s->allocs, (size_t) allocs, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->bytes, (size_t) bytes, __ATOMIC_RELAXED);
}

/** Frames of a large block holding @a size bytes, as passed to frame_alloc(). */
static size_t large_frames(size_t size)
{
	return (size + HEAP_HDR_SIZE + FRAME_SIZE - 1) / FRAME_SIZE;
}

/** @a count rounded up to a power of two (what frame_alloc() really hands out). */
static size_t pow2_roundup(size_t count)
{
	size_t r = 1;

	while (r < count)
		r <<= 1;
	return r;
}

/** Index of the smallest class with at least @a size usable bytes (size >= 1). */
static unsigned class_index(size_t size)
{
	if (size <= ((size_t) 1 << HEAP_MIN_SHIFT))
		return 0;
	/* ceil(log2(size)) - HEAP_MIN_SHIFT */
	return (unsigned) (64 - __builtin_clzl(size - 1)) - HEAP_MIN_SHIFT;
}

/** Allocates a large block straight from the frame allocator; NULL on failure. */
static void *large_alloc(size_t size)
{
	size_t frames = large_frames(size);
	uintptr_t pa = frame_alloc(frames, FRAME_NONE);

	if (pa == 0) {
		/* Memory may be sitting in slab magazines and empty slabs. */
		(void) slab_reclaim(SLAB_RECLAIM_ALL);
		pa = frame_alloc(frames, FRAME_NONE);
		if (pa == 0)
			return NULL;
	}

	heap_hdr_t *h = PA2KA(pa);
	h->magic = HEAP_MAGIC_LARGE;
	h->cls = 0;
	h->reserved = 0;
	h->size = size;

	size_t rounded = pow2_roundup(frames);
	atomic_add(&stat_large_pages, rounded);
	atomic_inc(&stat_large_allocs);
	return (uint8_t *) h + HEAP_HDR_SIZE;
}

/** Usable bytes of the block with header @a h (validated by the caller). */
static size_t block_usable(heap_hdr_t *h)
{
	if (h->magic == HEAP_MAGIC_LARGE)
		return pow2_roundup(large_frames(h->size)) * FRAME_SIZE - HEAP_HDR_SIZE;
	return (size_t) 1 << (HEAP_MIN_SHIFT + h->cls);
}

/**
 * Allocates @a size bytes of kernel memory, 16-byte aligned.
 *
 * @param size bytes; 0 yields a unique minimal block (must be freed).
 * @return the block (contents undefined; 0xA5 bytes in debug builds), or NULL when
 *         memory is exhausted or @a size is larger than the frame allocator's
 *         largest block. Never panics on exhaustion.
 * Context: any CPU and context (interrupt handlers included); never sleeps.
 */
void *malloc(size_t size)
{
	heap_hdr_t *h;
	void *ptr;

	if (size > HEAP_MAX_SIZE)
		return NULL;

	if (size <= HEAP_MAX_SMALL) {
		unsigned ci = class_index(size == 0 ? 1 : size);

		h = slab_alloc(classes[ci], SLAB_KM_NONE);
		if (h == NULL)
			return NULL;
		h->size = size;
		h->magic = HEAP_MAGIC_USED;
		h->cls = (uint16_t) ci;
		h->reserved = 0;
		ptr = h + 1;
	} else {
		ptr = large_alloc(size);
		if (ptr == NULL)
			return NULL;
		h = (heap_hdr_t *) ptr - 1;
	}

	stats_account(1, (ssize_t) size);
#ifdef CONFIG_DEBUG
	memset(ptr, HEAP_POISON_ALLOC, block_usable(h));
#endif
#ifdef CONFIG_KASAN
	/* The header and the slack after size are redzones. */
	if (h->magic == HEAP_MAGIC_LARGE)
		kasan_malloc_mark(h, ptr, size,
		    pow2_roundup(large_frames(size)) * FRAME_SIZE);
	else
		kasan_malloc_mark(h, ptr, size, HEAP_HDR_SIZE + block_usable(h));
#endif
	return ptr;
}

/**
 * Allocates a zeroed array of @a nmemb elements of @a size bytes each.
 * @return the block, or NULL on exhaustion or when nmemb * size overflows.
 * Context: as malloc().
 */
void *calloc(size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total))
		return NULL;

	void *ptr = malloc(total);
	if (ptr != NULL)
		memset(ptr, 0, total);
	return ptr;
}

/**
 * Validates @a ptr as a live block and returns its header; panics with a message
 * naming @a who otherwise (double free, foreign or corrupted pointer).
 */
static heap_hdr_t *hdr_validate(void *ptr, const char *who)
{
	if (!IS_ALIGNED((uintptr_t) ptr, HEAP_HDR_SIZE))
		panic("%s(%p): pointer not 16-byte aligned, not from malloc()", who, ptr);

	heap_hdr_t *h = (heap_hdr_t *) ptr - 1;

	switch (h->magic) {
	case HEAP_MAGIC_LARGE:
		if (!IS_ALIGNED((uintptr_t) h, FRAME_SIZE) || h->size <= HEAP_MAX_SMALL ||
		    h->size > HEAP_MAX_SIZE)
			panic("%s(%p): corrupted heap header", who, ptr);
		break;
	case HEAP_MAGIC_USED:
		if (h->cls >= HEAP_CLASSES ||
		    h->size > ((size_t) 1 << (HEAP_MIN_SHIFT + h->cls)))
			panic("%s(%p): corrupted heap header", who, ptr);
		break;
	case HEAP_MAGIC_FREE:
	case HEAP_MAGIC_POISON:
		panic("%s(%p): block already freed (double free)", who, ptr);
	default:
		panic("%s(%p): bad pointer or corrupted heap header (magic %#x)", who,
		    ptr, h->magic);
	}
	return h;
}

/**
 * Frees a block obtained from malloc() or calloc(). NULL is ignored.
 *
 * Small blocks go back to their size-class cache (usually a per-CPU magazine);
 * large blocks are returned to the frame allocator immediately. Panics on a pointer
 * that is not a live heap block (double free, foreign pointer, corrupted header).
 * Context: as malloc().
 */
void free(void *ptr)
{
	if (ptr == NULL)
		return;
#ifdef CONFIG_KASAN
	/* A block freed before: reported with its stacks, this free dropped. */
	if (kasan_malloc_free_check(ptr))
		return;
#endif

	heap_hdr_t *h = hdr_validate(ptr, "free");
	size_t size = h->size;

	if (h->magic == HEAP_MAGIC_LARGE) {
		size_t frames = large_frames(size);
		size_t rounded = pow2_roundup(frames);

		h->magic = HEAP_MAGIC_FREE;
#if defined(CONFIG_DEBUG) && !defined(CONFIG_KASAN)
		memset(ptr, HEAP_POISON_FREE, rounded * FRAME_SIZE - HEAP_HDR_SIZE);
#endif
		frame_free(KA2PA(h), frames);
		atomic_sub(&stat_large_pages, rounded);
		atomic_dec(&stat_large_allocs);
	} else {
		h->magic = HEAP_MAGIC_FREE;
		slab_free(classes[h->cls], h);
	}

	stats_account(-1, -(ssize_t) size);
}

/**
 * Returns the number of bytes usable in the block @a ptr (at least the size that
 * was requested; 0 for NULL). Panics on a pointer that is not a live heap block.
 * Context: as malloc().
 */
size_t malloc_usable_size(void *ptr)
{
	if (ptr == NULL)
		return 0;
#ifdef CONFIG_KASAN
	/* The slack after the requested size is a redzone under KASAN. */
	return hdr_validate(ptr, "malloc_usable_size")->size;
#else
	return block_usable(hdr_validate(ptr, "malloc_usable_size"));
#endif
}

/**
 * Fills @a stats with the live allocation count, the bytes they requested and the
 * frames held by the heap (class caches' slabs + large blocks). The counters are
 * read one by one (not a snapshot); allocs and bytes are exact when no heap
 * operation is in progress.
 * Context: any.
 */
void heap_get_stats(heap_stats_t *stats)
{
#ifdef CONFIG_KASAN
	/* Counters as the clients see them: quarantined memory back first. */
	kasan_quarantine_flush_stats();
#endif
	size_t allocs = 0;
	size_t bytes = 0;

	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++) {
		allocs += __atomic_load_n(&cpu_stats[i].allocs, __ATOMIC_RELAXED);
		bytes += __atomic_load_n(&cpu_stats[i].bytes, __ATOMIC_RELAXED);
	}

	size_t pages = atomic_get(&stat_large_pages);
	for (unsigned ci = 0; ci < HEAP_CLASSES; ci++) {
		if (classes[ci] != NULL)
			pages += slab_cache_frames(classes[ci]);
	}

	stats->allocs = allocs;
	stats->bytes = bytes;
	stats->pages = pages;
}

/**
 * Initializes the heap: sets up the slab allocator and creates the size-class
 * caches. Panics if that fails (no memory at boot).
 * Context: BSP during boot, once, after frame_init(), interrupts disabled.
 */
void heap_init(void)
{
	slab_cache_init();
	for (unsigned ci = 0; ci < HEAP_CLASSES; ci++) {
		size_t usable = (size_t) 1 << (HEAP_MIN_SHIFT + ci);

		classes[ci] = slab_cache_create(class_names[ci], usable + HEAP_HDR_SIZE,
		    HEAP_HDR_SIZE, NULL, NULL, SLAB_CACHE_NONE);
		if (classes[ci] == NULL)
			panic("heap: cannot create the size class %zu B", usable);
	}
}

/**
 * Prints one line per size class (usable and object size, frames, blocks in use
 * and cached in magazines), the large blocks and the totals.
 * Context: any where printf() may be used.
 */
void heap_print(void)
{
	printf("class usable   object slab  slabs  frames   in use   cached\n");
	for (unsigned ci = 0; ci < HEAP_CLASSES; ci++) {
		slab_cache_stats_t st;

		if (classes[ci] == NULL)
			continue;
		slab_cache_get_stats(classes[ci], &st);
		printf("%-5u %-8zu %-6zu %-5zu %-6zu %-8zu %-8zu %zu\n", ci,
		    (size_t) 1 << (HEAP_MIN_SHIFT + ci), st.size, st.slab_frames,
		    st.slabs, st.frames, st.objs_in_use, st.objs_cached);
	}
	printf("large: %zu blocks, %zu frames\n", atomic_get(&stat_large_allocs),
	    atomic_get(&stat_large_pages));

	heap_stats_t st;
	heap_get_stats(&st);
	printf("total: %zu allocations, %zu bytes requested, %zu frames\n",
	    st.allocs, st.bytes, st.pages);
}
