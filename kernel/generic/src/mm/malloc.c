/** @file malloc.c
 * Kernel heap: a simple locked allocator on top of the frame allocator.
 *
 * (An interim implementation; a slab allocator with per-CPU magazines replaces it
 * later. It is kept deliberately simple.)
 *
 * Every block starts with a 16-byte header (heap_hdr_t) followed by the payload, so
 * every returned pointer is 16-byte aligned and free() can validate its argument.
 *
 * Small blocks (header + size <= 2 KiB) come from power-of-two size classes whose
 * slots are 32 B .. 2 KiB including the header (usable 16 .. 2032 bytes). A class
 * carves single frames into equal slots; slot 0 begins at the frame start, and the
 * header of slot 0 also holds the number of allocated slots of that frame
 * (page_used), so there is no per-page header and the 2 KiB class fits two objects
 * per frame. Free slots keep their header (magic HEAP_MAGIC_FREE) and are linked
 * into a per-class doubly linked free list through their payload. When the last
 * allocated slot of a frame is freed, all its slots are unlinked and the frame is
 * returned to the frame allocator at once, so after everything is freed the heap
 * holds exactly as many frames as before (no page cache).
 *
 * Large blocks (header + size > 2 KiB) are served by frame_alloc() directly; the
 * header at the start of the block records the requested size, from which the frame
 * count is recomputed on free.
 *
 * malloc(0) returns a unique pointer to a minimal block (16 usable bytes) that must
 * be passed to free() like any other; it counts as an allocation of 0 bytes.
 *
 * Debug builds (CONFIG_DEBUG): fresh allocations are filled with 0xA5, freed memory
 * with 0xDE; a free slot whose poison was overwritten (a write after free) is
 * reported by a panic when the slot is handed out again.
 *
 * Bad frees (pointer not from malloc, double free, corrupted header) panic: they are
 * kernel bugs.
 *
 * Locking: each size class has its own IRQ-saving spinlock (so the heap may be used
 * with interrupts disabled and from interrupt handlers); large blocks take no heap
 * lock. Lock order: class lock -> zone lock is never needed (frames are allocated and
 * freed with no class lock held). Statistics are atomics.
 */

#include <mm/malloc.h>
#include <mm/frame.h>
#include <arch/mm.h>
#include <synch/spinlock.h>
#include <atomic.h>
#include <debug.h>
#include <panic.h>
#include <print.h>
#include <lib/str.h>

/** Size of the block header; also the alignment of returned pointers. */
#define HEAP_HDR_SIZE    16
/** Smallest slot (header + 16 bytes, room for the free-list links): 2^5. */
#define HEAP_MIN_SHIFT   5
/** Largest slot: 2^11 = 2 KiB. */
#define HEAP_MAX_SHIFT   11
#define HEAP_CLASSES     (HEAP_MAX_SHIFT - HEAP_MIN_SHIFT + 1)
#define HEAP_MAX_SMALL   ((size_t) 1 << HEAP_MAX_SHIFT)
/** Largest request frame_alloc() can satisfy (one max-order block minus header). */
#define HEAP_MAX_SIZE \
	((((size_t) 1 << FRAME_MAX_ORDER) * FRAME_SIZE) - HEAP_HDR_SIZE)

#define HEAP_MAGIC_USED   0x48656170U  /* "Heap" */
#define HEAP_MAGIC_FREE   0x46726565U  /* "Free" */
#define HEAP_MAGIC_LARGE  0x4c617267U  /* "Larg" */

#define HEAP_POISON_ALLOC 0xA5
#define HEAP_POISON_FREE  0xDE

/**
 * Header in front of every block. For small slots it is owned by the slot's class
 * lock; for large blocks by the block's owner.
 */
typedef struct {
	/** HEAP_MAGIC_USED / HEAP_MAGIC_FREE (small slot) or HEAP_MAGIC_LARGE. */
	uint32_t magic;
	/** Size class index (small slots only). */
	uint16_t cls;
	/** Slot 0 of a class frame only: allocated slots in that frame. */
	uint16_t page_used;
	/** Bytes requested by the caller (allocated blocks). */
	uint64_t size;
} heap_hdr_t;

_Static_assert(sizeof(heap_hdr_t) == HEAP_HDR_SIZE, "heap header size");

/** A free small slot: header, then the free-list links in the payload. */
typedef struct heap_free_slot {
	heap_hdr_t hdr;
	struct heap_free_slot *next;
	struct heap_free_slot *prev;
} heap_free_slot_t;

_Static_assert(sizeof(heap_free_slot_t) == ((size_t) 1 << HEAP_MIN_SHIFT),
    "smallest slot must hold the free-list links");

/** One size class. */
typedef struct {
	/** Protects every field below except slot_size. */
	irq_spinlock_t lock;
	/** Slot size in bytes, header included. Immutable. */
	size_t slot_size;
	/** Free slots of all frames of this class; protected by @c lock. */
	heap_free_slot_t *free_head;
	/** Frames owned by this class; protected by @c lock. */
	size_t pages;
	/** Allocated slots; protected by @c lock. */
	size_t used;
	/** Slots on the free list; protected by @c lock. */
	size_t free_slots;
} heap_class_t;

#define HEAP_CLASS_INIT(shift) { \
	.lock = IRQ_SPINLOCK_INITIALIZER("heap.class" #shift), \
	.slot_size = (size_t) 1 << (shift), \
	.free_head = NULL, .pages = 0, .used = 0, .free_slots = 0 }

/** The size classes; the table itself is immutable, each entry has its lock. */
static heap_class_t classes[HEAP_CLASSES] = {
	HEAP_CLASS_INIT(5), HEAP_CLASS_INIT(6), HEAP_CLASS_INIT(7),
	HEAP_CLASS_INIT(8), HEAP_CLASS_INIT(9), HEAP_CLASS_INIT(10),
	HEAP_CLASS_INIT(11),
};

_Static_assert(HEAP_CLASSES == 7, "update the classes[] initializer");

/** Live allocations (small and large). Protected by: atomics. */
static atomic_t stat_allocs = ATOMIC_INIT(0);
/** Bytes requested by live allocations. Protected by: atomics. */
static atomic_t stat_bytes = ATOMIC_INIT(0);
/** Frames held by the heap (class frames + large blocks, rounded). Atomics. */
static atomic_t stat_pages = ATOMIC_INIT(0);
/** Live large allocations. Protected by: atomics. */
static atomic_t stat_large_allocs = ATOMIC_INIT(0);
/** Frames held by large allocations (rounded to powers of two). Atomics. */
static atomic_t stat_large_pages = ATOMIC_INIT(0);

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

/** Index of the smallest class whose slot holds @a need bytes (header included). */
static unsigned class_index(size_t need)
{
	unsigned ci = 0;

	while (((size_t) 1 << (HEAP_MIN_SHIFT + ci)) < need)
		ci++;
	return ci;
}

/** Header of slot 0 of the class frame containing @a slot (holds page_used). */
static heap_hdr_t *page_hdr(void *slot)
{
	return (heap_hdr_t *) ALIGN_DOWN((uintptr_t) slot, FRAME_SIZE);
}

/** Links @a s at the head of the free list of @a c. Class lock held. */
static void free_slot_push(heap_class_t *c, heap_free_slot_t *s)
{
	s->prev = NULL;
	s->next = c->free_head;
	if (s->next != NULL)
		s->next->prev = s;
	c->free_head = s;
	c->free_slots++;
}

/** Unlinks @a s from the free list of @a c. Class lock held. */
static void free_slot_remove(heap_class_t *c, heap_free_slot_t *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		c->free_head = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	c->free_slots--;
}

#ifdef CONFIG_DEBUG
/** Panics if the poison of free slot @a s (after its links) was overwritten. */
static void check_free_poison(heap_class_t *c, heap_free_slot_t *s)
{
	const uint8_t *p = (const uint8_t *) (s + 1);
	const uint8_t *end = (const uint8_t *) s + c->slot_size;

	for (; p < end; p++) {
		if (*p != HEAP_POISON_FREE) {
			panic("heap: free slot %p (class %zu B) modified at offset %zu "
			    "(write after free)", (void *) s, c->slot_size,
			    (size_t) (p - (const uint8_t *) s));
		}
	}
}
#endif

/**
 * Gets a fresh frame and formats it into free slots of class @a ci, then adds them
 * to the class free list. Called without the class lock.
 * @return false when the frame allocator is out of memory.
 */
static bool class_grow(unsigned ci)
{
	heap_class_t *c = &classes[ci];
	uintptr_t pa = frame_alloc(1, FRAME_NONE);

	if (pa == 0)
		return false;

	uint8_t *page = PA2KA(pa);
	size_t nslots = FRAME_SIZE / c->slot_size;

#ifdef CONFIG_DEBUG
	memset(page, HEAP_POISON_FREE, FRAME_SIZE);
#endif
	for (size_t i = 0; i < nslots; i++) {
		heap_hdr_t *h = (heap_hdr_t *) (page + i * c->slot_size);
		h->magic = HEAP_MAGIC_FREE;
		h->cls = ci;
		h->page_used = 0;
		h->size = 0;
	}

	irq_spinlock_lock(&c->lock, true);
	for (size_t i = 0; i < nslots; i++)
		free_slot_push(c, (heap_free_slot_t *) (page + i * c->slot_size));
	c->pages++;
	irq_spinlock_unlock(&c->lock, true);

	atomic_inc(&stat_pages);
	return true;
}

/** Allocates a slot of class @a ci for @a size bytes; NULL when out of memory. */
static void *class_alloc(unsigned ci, size_t size)
{
	heap_class_t *c = &classes[ci];

	irq_spinlock_lock(&c->lock, true);
	while (c->free_head == NULL) {
		irq_spinlock_unlock(&c->lock, true);
		if (!class_grow(ci))
			return NULL;
		irq_spinlock_lock(&c->lock, true);
	}

	heap_free_slot_t *s = c->free_head;
	free_slot_remove(c, s);
	if (s->hdr.magic != HEAP_MAGIC_FREE || s->hdr.cls != ci) {
		irq_spinlock_unlock(&c->lock, true);
		panic("heap: corrupted free slot %p in class %zu B", (void *) s,
		    c->slot_size);
	}
#ifdef CONFIG_DEBUG
	check_free_poison(c, s);
#endif
	s->hdr.magic = HEAP_MAGIC_USED;
	s->hdr.size = size;
	page_hdr(s)->page_used++;
	c->used++;
	irq_spinlock_unlock(&c->lock, true);

	return (uint8_t *) s + HEAP_HDR_SIZE;
}

/** Allocates a large block straight from the frame allocator; NULL on failure. */
static void *large_alloc(size_t size)
{
	size_t frames = large_frames(size);
	uintptr_t pa = frame_alloc(frames, FRAME_NONE);

	if (pa == 0)
		return NULL;

	heap_hdr_t *h = PA2KA(pa);
	h->magic = HEAP_MAGIC_LARGE;
	h->cls = 0;
	h->page_used = 0;
	h->size = size;

	size_t rounded = pow2_roundup(frames);
	atomic_add(&stat_pages, rounded);
	atomic_add(&stat_large_pages, rounded);
	atomic_inc(&stat_large_allocs);
	return (uint8_t *) h + HEAP_HDR_SIZE;
}

/** Usable bytes of the block with header @a h (validated by the caller). */
static size_t block_usable(heap_hdr_t *h)
{
	if (h->magic == HEAP_MAGIC_LARGE)
		return pow2_roundup(large_frames(h->size)) * FRAME_SIZE - HEAP_HDR_SIZE;
	return classes[h->cls].slot_size - HEAP_HDR_SIZE;
}

/**
 * Allocates @a size bytes of kernel memory, 16-byte aligned.
 *
 * @param size bytes; 0 yields a unique minimal block (must be freed).
 * @return the block (contents undefined; 0xA5 bytes in debug builds), or NULL when
 *         memory is exhausted or @a size is larger than the frame allocator's
 *         largest block. Never panics on exhaustion.
 * Context: any CPU; takes IRQ-saving spinlocks (usable with interrupts disabled);
 * never sleeps.
 */
void *malloc(size_t size)
{
	void *ptr;

	if (size > HEAP_MAX_SIZE)
		return NULL;

	/* malloc(0) gets the smallest slot. */
	size_t need = (size == 0 ? 1 : size) + HEAP_HDR_SIZE;
	if (need <= HEAP_MAX_SMALL)
		ptr = class_alloc(class_index(need), size);
	else
		ptr = large_alloc(size);

	if (ptr == NULL)
		return NULL;

	atomic_inc(&stat_allocs);
	atomic_add(&stat_bytes, size);
#ifdef CONFIG_DEBUG
	memset(ptr, HEAP_POISON_ALLOC, block_usable((heap_hdr_t *) ptr - 1));
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
 * For small slots the check is repeated under the class lock by free().
 */
static heap_hdr_t *hdr_validate(void *ptr, const char *who)
{
	if (!IS_ALIGNED((uintptr_t) ptr, HEAP_HDR_SIZE))
		panic("%s(%p): pointer not 16-byte aligned, not from malloc()", who, ptr);

	heap_hdr_t *h = (heap_hdr_t *) ptr - 1;

	switch (h->magic) {
	case HEAP_MAGIC_LARGE:
		if (!IS_ALIGNED((uintptr_t) h, FRAME_SIZE))
			panic("%s(%p): corrupted heap header", who, ptr);
		break;
	case HEAP_MAGIC_USED:
		if (h->cls >= HEAP_CLASSES ||
		    !IS_ALIGNED((uintptr_t) h & (FRAME_SIZE - 1),
		    classes[h->cls].slot_size))
			panic("%s(%p): corrupted heap header", who, ptr);
		break;
	case HEAP_MAGIC_FREE:
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
 * Empty class frames and large blocks are returned to the frame allocator
 * immediately. Panics on a pointer that is not a live heap block (double free,
 * foreign pointer, corrupted header).
 * Context: as malloc().
 */
void free(void *ptr)
{
	if (ptr == NULL)
		return;

	heap_hdr_t *h = hdr_validate(ptr, "free");
	size_t size = h->size;

	if (h->magic == HEAP_MAGIC_LARGE) {
		size_t frames = large_frames(size);
		size_t rounded = pow2_roundup(frames);

		h->magic = HEAP_MAGIC_FREE;
#ifdef CONFIG_DEBUG
		memset(ptr, HEAP_POISON_FREE, rounded * FRAME_SIZE - HEAP_HDR_SIZE);
#endif
		frame_free(KA2PA(h), frames);
		atomic_sub(&stat_pages, rounded);
		atomic_sub(&stat_large_pages, rounded);
		atomic_dec(&stat_large_allocs);
	} else {
		unsigned ci = h->cls;
		heap_class_t *c = &classes[ci];
		heap_free_slot_t *s = (heap_free_slot_t *) h;
		heap_hdr_t *ph = page_hdr(h);
		uint8_t *page = (uint8_t *) ph;
		bool release = false;

		irq_spinlock_lock(&c->lock, true);
		if (h->magic != HEAP_MAGIC_USED || h->cls != ci) {
			irq_spinlock_unlock(&c->lock, true);
			panic("free(%p): block already freed (double free)", ptr);
		}
		if (ph->page_used == 0 || ph->cls != ci) {
			irq_spinlock_unlock(&c->lock, true);
			panic("free(%p): corrupted heap page header", ptr);
		}
#ifdef CONFIG_DEBUG
		memset(ptr, HEAP_POISON_FREE, c->slot_size - HEAP_HDR_SIZE);
#endif
		h->magic = HEAP_MAGIC_FREE;
		h->size = 0;
		free_slot_push(c, s);
		c->used--;
		if (--ph->page_used == 0) {
			/* Whole frame free: take all its slots off the list. */
			size_t nslots = FRAME_SIZE / c->slot_size;
			for (size_t i = 0; i < nslots; i++)
				free_slot_remove(c,
				    (heap_free_slot_t *) (page + i * c->slot_size));
			c->pages--;
			release = true;
		}
		irq_spinlock_unlock(&c->lock, true);

		if (release) {
			frame_free(KA2PA(page), 1);
			atomic_dec(&stat_pages);
		}
	}

	atomic_dec(&stat_allocs);
	atomic_sub(&stat_bytes, size);
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
	return block_usable(hdr_validate(ptr, "malloc_usable_size"));
}

/**
 * Fills @a stats with the live allocation count, the bytes they requested and the
 * frames held by the heap. The counters are read one by one (not a snapshot).
 * Context: any.
 */
void heap_get_stats(heap_stats_t *stats)
{
	stats->allocs = atomic_get(&stat_allocs);
	stats->bytes = atomic_get(&stat_bytes);
	stats->pages = atomic_get(&stat_pages);
}

/**
 * Initializes the heap. The class table is statically initialized, so this only
 * checks the configuration; malloc() works as soon as frame_init() has run.
 * Context: BSP during boot, after frame_init(). May be called more than once.
 */
void heap_init(void)
{
	for (unsigned ci = 0; ci < HEAP_CLASSES; ci++) {
		assert(classes[ci].slot_size == ((size_t) 1 << (HEAP_MIN_SHIFT + ci)));
		assert(classes[ci].slot_size >= sizeof(heap_free_slot_t));
		assert(FRAME_SIZE % classes[ci].slot_size == 0);
	}
}

/**
 * Prints one line per size class (slot size, frames, used and free slots), the large
 * blocks and the totals.
 * Context: any where printf() may be used.
 */
void heap_print(void)
{
	printf("class  slot   usable pages      used       free\n");
	for (unsigned ci = 0; ci < HEAP_CLASSES; ci++) {
		heap_class_t *c = &classes[ci];

		irq_spinlock_lock(&c->lock, true);
		size_t pages = c->pages;
		size_t used = c->used;
		size_t free_slots = c->free_slots;
		irq_spinlock_unlock(&c->lock, true);

		printf("%-6u %-6zu %-6zu %-10zu %-10zu %zu\n", ci, c->slot_size,
		    c->slot_size - HEAP_HDR_SIZE, pages, used, free_slots);
	}
	printf("large: %zu blocks, %zu frames\n", atomic_get(&stat_large_allocs),
	    atomic_get(&stat_large_pages));

	heap_stats_t st;
	heap_get_stats(&st);
	printf("total: %zu allocations, %zu bytes requested, %zu frames\n",
	    st.allocs, st.bytes, st.pages);
}
