/** @file frame.c
 * Physical frame allocator: memory zones, each managed by a binary buddy system.
 *
 * Zones
 * -----
 * frame_init() creates one zone per usable RAM region; a region that crosses the
 * 4 GiB boundary is split there, so that every zone lies either entirely below or
 * entirely above 4 GiB (FRAME_LOWMEM allocations only use the former). Regions are
 * clipped to the direct map (PHYS_MAP_MAX) and physical frame 0 is never managed
 * (0 is the failure value of frame_alloc()). Zones are kept sorted by base address
 * and are tried in that order.
 *
 * Each zone carves its per-frame metadata array (frame_t[]) from its own first
 * frames, accessed through the direct map (PA2KA); the managed range of the zone
 * starts right after the array.
 *
 * Buddy system
 * ------------
 * A block of order k is 2^k frames, aligned to 2^k frames relative to physical
 * address 0, so the buddy of the block at frame number p is the block at
 * p ^ 2^k. A buddy only counts if it lies entirely inside the same zone. Each
 * zone has one doubly linked free list per order 0..FRAME_MAX_ORDER, linked through
 * the frame_t entries (32-bit indices), never through the free memory itself.
 *
 * Every frame_t has a state:
 *  - FRAME_FREE: first frame of a free block, `order` is the block's order, the
 *    entry is linked in free_list[order];
 *  - FRAME_BUSY: first frame of an allocated block, `order` is the block's order;
 *  - FRAME_TAIL: any other frame of a (free or allocated) block.
 * Invariant: exactly the first frame of each block is FREE or BUSY, all the other
 * frames are TAIL. This is what frame_free() validates against (double frees and
 * frees with a wrong count panic).
 *
 * Per-CPU frame caches
 * --------------------
 * Single frames (count 1 without FRAME_LOWMEM: page-table pages, user pages,
 * order-0 slabs) go through a small cache per CPU, as Linux's per-CPU page
 * lists do: frame_free() pushes the frame onto its CPU's cache and
 * frame_alloc() pops the most recently freed one, so the fault path and the
 * slab layer take no zone lock for most frames. A cache holds at most
 * FRAME_PCP_HIGH frames; an empty cache is refilled, and a full one flushed,
 * FRAME_PCP_BATCH frames at a time under one acquisition of the zone lock. A
 * cached frame stays FRAME_BUSY in its zone (the zone only sees the batches);
 * frame_get_stats() and zones_print() count it as free. When the zones cannot
 * satisfy a request, frame_alloc() flushes every CPU's cache back to the zones
 * and tries once more, so a request fails only when the frames are really
 * gone, not while another CPU holds them.
 *
 * frame_free() of a single frame validates it (a zone's BUSY block head of
 * order 0) without the zone lock: the metadata of an allocated block is written
 * only when the block is freed to its zone, which its owner alone does, so the
 * reads race with no write. A double free whose first free is still in a cache
 * is caught when the cache is flushed (the zone then finds the frame free) and,
 * in debug builds, at once if the first free went to the same CPU's cache.
 *
 * Locking: each zone has an IRQ-safe spinlock; each per-CPU cache has one too
 * ("frame.pcp"), taken by its CPU on the fast path (an uncontended lock on a
 * line no other CPU writes) and by any CPU that flushes every cache. Lock
 * order: a cache's lock, then a zone's lock. Every lock is taken with
 * interrupts disabled, so the allocator can be used from any CPU and any
 * context (including interrupt handlers). The zone table itself is written
 * only by frame_init() (BSP, before any other CPU runs) and is read-only
 * afterwards.
 */

#include <debug/kasan.h>
#include <mm/frame.h>
#include <arch/mm.h>
#include <arch/asm.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <debug.h>
#include <panic.h>
#include <print.h>
#include <lib/str.h>

/** Maximum number of zones (usable regions, after the 4 GiB split). */
#define ZONES_MAX 32

/** 4 GiB boundary at which regions are split (FRAME_LOWMEM limit). */
#define LOWMEM_LIMIT GiB(4)

/** "No frame" value of the free-list links. */
#define FRAME_NIL UINT32_MAX

/** State of one frame, see the file comment. */
typedef enum {
	FRAME_TAIL = 0,
	FRAME_FREE = 1,
	FRAME_BUSY = 2,
} frame_state_t;

/**
 * Per-frame metadata. Protected by: the lock of the zone the frame belongs to.
 * Links are indices into the zone's frames[] array (FRAME_NIL: none) and are only
 * meaningful while the frame is the head of a free block (state FRAME_FREE).
 */
typedef struct {
	uint32_t next;
	uint32_t prev;
	/** Order of the block this frame heads (FREE or BUSY only). */
	uint8_t order;
	/** frame_state_t. */
	uint8_t state;
} frame_t;

/** One zone of physically contiguous memory. */
typedef struct {
	/** Protects every field below that is not marked immutable. */
	irq_spinlock_t lock;
	/** Physical frame number of the first managed frame. Immutable after init. */
	uintptr_t base_pfn;
	/** Number of managed frames (metadata excluded). Immutable after init. */
	size_t count;
	/** Frames used by the metadata array, preceding base_pfn. Immutable after init. */
	size_t meta_frames;
	/** Metadata, one entry per managed frame (direct-map address). Array pointer is
	 *  immutable after init; the entries are protected by @c lock. */
	frame_t *frames;
	/** Heads (frame indices) of the free lists per order; protected by @c lock. */
	uint32_t free_list[FRAME_MAX_ORDER + 1];
	/** Number of free blocks per order; protected by @c lock. */
	size_t free_blocks[FRAME_MAX_ORDER + 1];
	/**
	 * Free frames; written under @c lock, with relaxed atomic stores
	 * because reserve_allows() reads it without the lock (KCSAN: a plain
	 * write racing with that atomic read is a data race).
	 */
	size_t free_count;
	/** Allocated frames; protected by @c lock. free_count + busy_count == count. */
	size_t busy_count;
} zone_t;

/** Most frames one per-CPU cache holds (a power of two: the cache is a ring). */
#define FRAME_PCP_HIGH 1024
/** Frames moved between a cache and the zones at a time. */
#define FRAME_PCP_BATCH 32
/** Newest cached frames a debug build searches for a double free. */
#define FRAME_PCP_DEBUG_SCAN 64

/**
 * A CPU's cache of free single frames (see the file comment): a ring, the
 * newest frame allocated first, the oldest flushed first.
 */
typedef struct {
	/** Protects the fields below; taken with interrupts disabled. */
	irq_spinlock_t lock;
	/** Frames in the ring; protected by @c lock. */
	size_t count;
	/** Index of the oldest frame; protected by @c lock. */
	size_t head;
	/** Physical addresses; protected by @c lock. */
	uintptr_t frames[FRAME_PCP_HIGH];
} __attribute__((aligned(64))) frame_pcp_t;

#define PCP_SLOT(p, i) ((p)->frames[((p)->head + (i)) & (FRAME_PCP_HIGH - 1)])

/** The per-CPU caches, indexed by CPU id; initialized by frame_init(). */
static frame_pcp_t pcp[CONFIG_MAX_CPUS];

/** Zone table. Protected by: written only by frame_init() before SMP, then read-only. */
static zone_t zones[ZONES_MAX];
/** Number of valid entries in zones[]. Same protection as zones[]. */
static size_t zones_count;

/** Smallest order k such that 2^k >= count (count >= 1). */
static unsigned order_for_count(size_t count)
{
	unsigned order = 0;

	while (((size_t) 1 << order) < count)
		order++;
	return order;
}

/** Links block head @a idx into the free list of @a order. Zone lock held. */
static void free_list_push(zone_t *z, uint32_t idx, unsigned order)
{
	assert(irq_spinlock_locked_by_me(&z->lock));
	frame_t *f = &z->frames[idx];

	f->state = FRAME_FREE;
	f->order = order;
	f->prev = FRAME_NIL;
	f->next = z->free_list[order];
	if (f->next != FRAME_NIL)
		z->frames[f->next].prev = idx;
	z->free_list[order] = idx;
	z->free_blocks[order]++;
}

/** Unlinks free block head @a idx from the free list of its order. Zone lock held. */
static void free_list_remove(zone_t *z, uint32_t idx)
{
	assert(irq_spinlock_locked_by_me(&z->lock));
	frame_t *f = &z->frames[idx];
	unsigned order = f->order;

	assert(f->state == FRAME_FREE);
	if (f->prev != FRAME_NIL)
		z->frames[f->prev].next = f->next;
	else
		z->free_list[order] = f->next;
	if (f->next != FRAME_NIL)
		z->frames[f->next].prev = f->prev;
	f->next = FRAME_NIL;
	f->prev = FRAME_NIL;
	assert(z->free_blocks[order] > 0);
	z->free_blocks[order]--;
}

/**
 * Frees block (idx, order) into zone @a z, merging it with its free buddies as far
 * as possible. The block's frames must all be TAIL except the head. Zone lock held.
 */
static void zone_free_block(zone_t *z, uint32_t idx, unsigned order)
{
	assert(irq_spinlock_locked_by_me(&z->lock));
	while (order < FRAME_MAX_ORDER) {
		uintptr_t pfn = z->base_pfn + idx;
		uintptr_t buddy_pfn = pfn ^ ((uintptr_t) 1 << order);

		/* The buddy must lie entirely inside the zone. */
		if (buddy_pfn < z->base_pfn ||
		    buddy_pfn + ((uintptr_t) 1 << order) > z->base_pfn + z->count)
			break;

		uint32_t buddy = (uint32_t) (buddy_pfn - z->base_pfn);
		frame_t *b = &z->frames[buddy];
		if (b->state != FRAME_FREE || b->order != order)
			break;

		free_list_remove(z, buddy);
		/* The higher of the two heads becomes a tail of the merged block. */
		if (buddy < idx) {
			z->frames[idx].state = FRAME_TAIL;
			idx = buddy;
		} else {
			b->state = FRAME_TAIL;
		}
		z->frames[idx].state = FRAME_TAIL;
		order++;
	}
	free_list_push(z, idx, order);
}

/**
 * Allocates a block of @a order from zone @a z.
 * @return frame index in the zone, or FRAME_NIL if the zone has no such block.
 * Zone lock held.
 */
static uint32_t zone_alloc_block(zone_t *z, unsigned order)
{
	assert(irq_spinlock_locked_by_me(&z->lock));
	unsigned o = order;

	while (o <= FRAME_MAX_ORDER && z->free_list[o] == FRAME_NIL)
		o++;
	if (o > FRAME_MAX_ORDER)
		return FRAME_NIL;

	uint32_t idx = z->free_list[o];
	free_list_remove(z, idx);

	/* Split down to the requested order, returning the upper halves. */
	while (o > order) {
		o--;
		free_list_push(z, idx + ((uint32_t) 1 << o), o);
	}

	frame_t *f = &z->frames[idx];
	f->state = FRAME_BUSY;
	f->order = order;
	f->next = FRAME_NIL;
	f->prev = FRAME_NIL;

	size_t n = (size_t) 1 << order;
	__atomic_store_n(&z->free_count, z->free_count - n, __ATOMIC_RELAXED);
	z->busy_count += n;
	return idx;
}

/**
 * Sets up a zone over physical range [start, end) (page aligned, end > start):
 * carves the metadata from its beginning and puts the rest on the free lists.
 * @return true if the zone was created (the range is big enough).
 */
static bool zone_create(zone_t *z, uintptr_t start, uintptr_t end)
{
	size_t frames = (end - start) / FRAME_SIZE;
	/* Metadata for all frames of the range (a slight overestimate, simple). */
	size_t meta_frames = (frames * sizeof(frame_t) + FRAME_SIZE - 1) / FRAME_SIZE;

	if (frames <= meta_frames)
		return false;

	size_t count = frames - meta_frames;
	if (count >= FRAME_NIL)
		count = FRAME_NIL - 1;  /* Indices are 32-bit (16 TiB per zone). */

	irq_spinlock_initialize(&z->lock, "zone.lock");
	z->frames = (frame_t *) PA2KA(start);
	z->meta_frames = meta_frames;
	z->base_pfn = start / FRAME_SIZE + meta_frames;
	z->count = count;
	z->free_count = 0;
	z->busy_count = 0;
	for (unsigned o = 0; o <= FRAME_MAX_ORDER; o++) {
		z->free_list[o] = FRAME_NIL;
		z->free_blocks[o] = 0;
	}

	/* All frames start as tails; block heads are set by free_list_push(). */
	for (size_t i = 0; i < count; i++) {
		z->frames[i].next = FRAME_NIL;
		z->frames[i].prev = FRAME_NIL;
		z->frames[i].order = 0;
		z->frames[i].state = FRAME_TAIL;
	}

	/*
	 * Cover the range with maximal naturally aligned blocks. Nobody else
	 * sees the zone yet; the lock is taken anyway so that the free-list
	 * functions' rule (zone lock held, asserted) holds for every caller.
	 */
	irq_spinlock_lock(&z->lock, true);
	uintptr_t pfn = z->base_pfn;
	uintptr_t end_pfn = z->base_pfn + count;
	while (pfn < end_pfn) {
		unsigned order = 0;
		while (order < FRAME_MAX_ORDER &&
		    (pfn & (((uintptr_t) 1 << (order + 1)) - 1)) == 0 &&
		    pfn + ((uintptr_t) 1 << (order + 1)) <= end_pfn)
			order++;
		free_list_push(z, (uint32_t) (pfn - z->base_pfn), order);
		pfn += (uintptr_t) 1 << order;
	}
	z->free_count = count;
	irq_spinlock_unlock(&z->lock, true);
	return true;
}

/** Adds a zone over [start, end) keeping zones[] sorted by base. BSP, init only. */
static void zone_add(uintptr_t start, uintptr_t end)
{
	if (zones_count == ZONES_MAX) {
		printf("frame: too many zones, ignoring %#lx-%#lx\n", start, end);
		return;
	}

	/* Find the sorted position, then shift the later zones up. */
	size_t pos = zones_count;
	while (pos > 0 && zones[pos - 1].base_pfn * FRAME_SIZE > start)
		pos--;
	for (size_t i = zones_count; i > pos; i--)
		zones[i] = zones[i - 1];

	if (zone_create(&zones[pos], start, end)) {
		zones_count++;
	} else {
		/* Too small for its own metadata: undo the shift. */
		for (size_t i = pos; i < zones_count; i++)
			zones[i] = zones[i + 1];
	}
}

/**
 * Creates the zones from the usable RAM regions (see frame.h).
 *
 * Each region is rounded inwards to whole frames, clipped to the direct map
 * (PHYS_MAP_MAX), frame 0 is skipped, and a region crossing 4 GiB is split there.
 * Ranges too small to hold their own metadata plus one frame are ignored.
 *
 * Context: BSP, once, interrupts disabled, before any frame_alloc(); the regions
 * must be reachable through the direct map.
 * @param regions usable RAM regions (must not overlap each other or the kernel).
 * @param count number of entries in @a regions.
 */
/** See frame_reserve(); frames managed. Set once by frame_init(). */
static size_t reserve_frames, total_frames;

size_t frame_reserve(void)
{
	return reserve_frames;
}

size_t frame_total(void)
{
	return total_frames;
}

/**
 * Whether a FRAME_USER allocation of @a n frames from the zones leaves the
 * reserve there. The zones' counts are read without their locks (relaxed:
 * a racy sum, off by what concurrent allocations take, which the reserve's
 * size absorbs). Any context.
 */
static bool reserve_allows(size_t n)
{
	size_t free = 0;
	for (size_t i = 0; i < zones_count; i++)
		free += __atomic_load_n(&zones[i].free_count, __ATOMIC_RELAXED);
	return free >= reserve_frames + n;
}

void frame_init(const phys_region_t *regions, size_t count)
{
	zones_count = 0;
	for (size_t i = 0; i < CONFIG_MAX_CPUS; i++) {
		irq_spinlock_initialize(&pcp[i].lock, "frame.pcp");
		pcp[i].count = 0;
		pcp[i].head = 0;
	}

	for (size_t i = 0; i < count; i++) {
		uintptr_t start = ALIGN_UP(regions[i].base, FRAME_SIZE);
		uintptr_t end = ALIGN_DOWN(regions[i].base + regions[i].size, FRAME_SIZE);

		if (start < FRAME_SIZE)
			start = FRAME_SIZE;
		if (end > PHYS_MAP_MAX)
			end = PHYS_MAP_MAX;
		if (end <= start)
			continue;

#ifdef CONFIG_KASAN
		/* Free frames: poisoned until frame_alloc() hands them out. */
		kasan_frames_free(start, (end - start) / FRAME_SIZE);
#endif
		if (start < LOWMEM_LIMIT && end > LOWMEM_LIMIT) {
			zone_add(start, LOWMEM_LIMIT);
			zone_add(LOWMEM_LIMIT, end);
		} else {
			zone_add(start, end);
		}
	}
	for (size_t i = 0; i < zones_count; i++)
		total_frames += zones[i].count;
	reserve_frames = MAX(total_frames / 64, (size_t) FRAME_RESERVE_MIN);
	reserve_frames = MIN(reserve_frames, total_frames / 4);
}

/** Returns the zone containing frame number @a pfn, or NULL. */
static zone_t *zone_find(uintptr_t pfn)
{
	for (size_t i = 0; i < zones_count; i++) {
		if (pfn >= zones[i].base_pfn && pfn < zones[i].base_pfn + zones[i].count)
			return &zones[i];
	}
	return NULL;
}

/**
 * Allocates a block of @a order from the first zone that has one (below 4 GiB
 * only with FRAME_LOWMEM). @return its physical address, or 0.
 */
static uintptr_t zones_alloc(unsigned order, frame_flags_t flags)
{
	for (size_t i = 0; i < zones_count; i++) {
		zone_t *z = &zones[i];

		if ((flags & FRAME_LOWMEM) &&
		    (z->base_pfn + z->count) * FRAME_SIZE > LOWMEM_LIMIT)
			continue;

		irq_spinlock_lock(&z->lock, true);
		uint32_t idx = zone_alloc_block(z, order);
		irq_spinlock_unlock(&z->lock, true);

		if (idx != FRAME_NIL)
			return (z->base_pfn + idx) * FRAME_SIZE;
	}
	return 0;
}

/**
 * Names what frame @a pfn of zone @a z is when a free finds it not to be the
 * head of an allocated block of the freed size, independent of coalescing: the
 * buddy system may have merged an earlier free of the frame into a larger free
 * block (its head then FRAME_TAIL), so the frame's own state alone cannot tell a
 * double free from a wrong count. The block containing the frame is found by
 * trying each order k: the candidate head is the frame number rounded down to
 * 2^k frames (blocks are naturally aligned), and it is the containing block iff
 * it is a FREE or BUSY head of order >= k. Zone lock held.
 * @return "double free" if the frame lies in a free block; "wrong count" if it
 *         heads an allocated block of another order; "inside an allocated
 *         block" if it is an interior frame of one; "not a block" otherwise
 *         (corrupt metadata).
 */
static const char *zone_frame_describe(zone_t *z, uintptr_t pfn,
    unsigned freed_order)
{
	assert(irq_spinlock_locked_by_me(&z->lock));
	for (unsigned k = 0; k <= FRAME_MAX_ORDER; k++) {
		uintptr_t head = pfn & ~(((uintptr_t) 1 << k) - 1);
		if (head < z->base_pfn)
			break;
		frame_t *h = &z->frames[head - z->base_pfn];
		if (h->state == FRAME_TAIL || h->order < k)
			continue;
		if (h->state == FRAME_FREE)
			return "double free";
		if (head == pfn && h->order != freed_order)
			return "wrong count";
		if (head != pfn)
			return "inside an allocated block";
		break;
	}
	return "not a block";
}

/**
 * Returns the single frames @a frames[0..n) (taken out of a cache) to their
 * zones, taking each zone's lock once per run of frames in it; panics on a
 * frame that is not an allocated single frame (a double free that went through
 * a cache). Caller holds the cache's lock.
 */
static void pcp_return(const uintptr_t *frames, size_t n)
{
	size_t i = 0;
	while (i < n) {
		zone_t *z = zone_find(frames[i] / FRAME_SIZE);
		assert(z);
		irq_spinlock_lock(&z->lock, true);
		for (; i < n; i++) {
			uintptr_t pfn = frames[i] / FRAME_SIZE;
			if (pfn < z->base_pfn || pfn >= z->base_pfn + z->count)
				break;
			uint32_t idx = (uint32_t) (pfn - z->base_pfn);
			frame_t *f = &z->frames[idx];
			if (f->state != FRAME_BUSY || f->order != 0) {
				const char *what = zone_frame_describe(z, pfn, 0);
				irq_spinlock_unlock(&z->lock, true);
				panic("frame_free(%#lx, 1): block is not an allocated "
				    "single frame (%s; found when its CPU's cache was "
				    "flushed)", frames[i], what);
			}
			f->state = FRAME_TAIL;
			z->busy_count--;
			__atomic_store_n(&z->free_count, z->free_count + 1,
			    __ATOMIC_RELAXED);
			zone_free_block(z, idx, 0);
		}
		irq_spinlock_unlock(&z->lock, true);
	}
}

/** Returns the oldest @a n (at most FRAME_PCP_BATCH, at most its count) frames
 *  of cache @a p to their zones. Caller holds @a p's lock. */
static void pcp_flush_oldest(frame_pcp_t *p, size_t n)
{
	uintptr_t batch[FRAME_PCP_BATCH];
	assert(n <= FRAME_PCP_BATCH && n <= p->count);
	for (size_t i = 0; i < n; i++)
		batch[i] = PCP_SLOT(p, i);
	pcp_return(batch, n);
	p->head = (p->head + n) & (FRAME_PCP_HIGH - 1);
	p->count -= n;
}

/** Order of the block a refill takes whole: FRAME_PCP_BATCH frames. */
#define FRAME_PCP_BATCH_ORDER 5
_Static_assert((1 << FRAME_PCP_BATCH_ORDER) == FRAME_PCP_BATCH,
    "a refill block is one batch");

/** Refills the empty cache @a p with up to FRAME_PCP_BATCH single frames.
 *  Caller holds @a p's lock.
 *
 *  One block of FRAME_PCP_BATCH frames when a zone has one, split here into
 *  single allocated frames (each its own BUSY head of order 0, as if
 *  allocated one by one): one free-list removal and one count update in the
 *  zone per batch instead of one per frame. The zone's lines are shared by
 *  every CPU, and the per-frame updates made the zone's free-list heads and
 *  counts lines every faulting CPU wrote about once per fault while the
 *  caches warmed up (chtbench 22, docs/SHARING.md). Single frames only
 *  when no such block is left. */
static void pcp_refill(frame_pcp_t *p)
{
	for (size_t i = 0; i < zones_count && p->count < FRAME_PCP_BATCH; i++) {
		zone_t *z = &zones[i];
		irq_spinlock_lock(&z->lock, true);
		if (p->count == 0) {
			uint32_t idx = zone_alloc_block(z, FRAME_PCP_BATCH_ORDER);
			if (idx != FRAME_NIL) {
				for (uint32_t k = 0; k < FRAME_PCP_BATCH; k++) {
					frame_t *f = &z->frames[idx + k];
					f->state = FRAME_BUSY;
					f->order = 0;
					f->next = FRAME_NIL;
					f->prev = FRAME_NIL;
					PCP_SLOT(p, k) = (z->base_pfn + idx + k) *
					    FRAME_SIZE;
				}
				p->count = FRAME_PCP_BATCH;
			}
		}
		while (p->count < FRAME_PCP_BATCH) {
			uint32_t idx = zone_alloc_block(z, 0);
			if (idx == FRAME_NIL)
				break;
			PCP_SLOT(p, p->count) = (z->base_pfn + idx) * FRAME_SIZE;
			p->count++;
		}
		irq_spinlock_unlock(&z->lock, true);
	}
}

/**
 * A single frame from this CPU's cache (refilled when empty; for a FRAME_USER
 * allocation, @a user, only if the zones keep the reserve), or 0.
 */
static uintptr_t pcp_alloc(bool user)
{
	ipl_t ipl = interrupts_disable();
	/* CPU is stable with interrupts disabled; the lock makes it safe anyway. */
	frame_pcp_t *p = &pcp[CPU->id];
	irq_spinlock_lock(&p->lock, false);
	if (p->count == 0 && (!user || reserve_allows(FRAME_PCP_BATCH)))
		pcp_refill(p);
	uintptr_t pa = 0;
	if (p->count) {
		p->count--;
		pa = PCP_SLOT(p, p->count);
	}
	irq_spinlock_unlock(&p->lock, false);
	interrupts_restore(ipl);
	return pa;
}

/** Puts the allocated single frame @a pa on this CPU's cache, flushing the
 *  oldest FRAME_PCP_BATCH frames to their zones when the cache is full. */
static void pcp_free(uintptr_t pa)
{
	ipl_t ipl = interrupts_disable();
	frame_pcp_t *p = &pcp[CPU->id];
	irq_spinlock_lock(&p->lock, false);
#ifdef CONFIG_DEBUG
	for (size_t i = p->count; i-- > 0 && p->count - i <= FRAME_PCP_DEBUG_SCAN;) {
		if (PCP_SLOT(p, i) == pa) {
			irq_spinlock_unlock(&p->lock, false);
			interrupts_restore(ipl);
			panic("frame_free(%#lx, 1): double free (the frame is in "
			    "CPU %u's cache)", pa, CPU->id);
		}
	}
#endif
	if (p->count == FRAME_PCP_HIGH)
		pcp_flush_oldest(p, FRAME_PCP_BATCH);
	PCP_SLOT(p, p->count) = pa;
	p->count++;
	irq_spinlock_unlock(&p->lock, false);
	interrupts_restore(ipl);
}

/** Returns every CPU's cached frames to the zones. @return whether any was. */
static bool pcp_drain_all(void)
{
	bool any = false;
	for (size_t i = 0; i < CONFIG_MAX_CPUS; i++) {
		frame_pcp_t *p = &pcp[i];
		irq_spinlock_lock(&p->lock, true);
		if (p->count)
			any = true;
		while (p->count)
			pcp_flush_oldest(p, MIN(p->count, (size_t) FRAME_PCP_BATCH));
		irq_spinlock_unlock(&p->lock, true);
	}
	return any;
}

/**
 * Allocates a physically contiguous, naturally aligned block of frames.
 *
 * A single frame (count 1 without FRAME_LOWMEM) comes from the calling CPU's
 * frame cache; see the file comment. When no zone has a block, every CPU's
 * cache is flushed to the zones and the request tried again.
 *
 * @param count number of frames; rounded up to a power of two (at most
 *        2^FRAME_MAX_ORDER). 0 or a larger count fails.
 * @param flags FRAME_LOWMEM: only zones entirely below 4 GiB; FRAME_ZERO: zero the
 *        block (through the direct map) before returning it; FRAME_USER: a
 *        user task's frame: from this CPU's cache as usual, from the zones
 *        only while they keep frame_reserve() frames free (no cache drain).
 * @return physical address of the block (aligned to its rounded size in bytes), or
 *         0 when no zone can satisfy the request. Never panics on exhaustion.
 * Context: any CPU, any context, interrupts enabled or disabled; never sleeps.
 */
uintptr_t frame_alloc(size_t count, frame_flags_t flags)
{
	if (count == 0 || count > ((size_t) 1 << FRAME_MAX_ORDER))
		return 0;

	unsigned order = order_for_count(count);
	uintptr_t pa = 0;
	if (order == 0 && !(flags & FRAME_LOWMEM))
		pa = pcp_alloc(flags & FRAME_USER);
	if (!pa && (flags & FRAME_USER) &&
	    !reserve_allows((size_t) 1 << order))
		return 0;
	if (!pa) {
		pa = zones_alloc(order, flags);
		if (!pa && pcp_drain_all())
			pa = zones_alloc(order, flags);
	}
#ifdef CONFIG_KASAN
	if (pa)
		kasan_frames_alloc(pa, (size_t) 1 << order);
#endif
	if (pa && (flags & FRAME_ZERO))
		memset(PA2KA(pa), 0, ((size_t) 1 << order) * FRAME_SIZE);
	return pa;
}

/**
 * Returns a block to its zone, merging it with free buddies; a single frame goes
 * to the calling CPU's frame cache instead (see the file comment).
 *
 * @param pa physical address returned by frame_alloc().
 * @param count the count passed to frame_alloc() for this block (any count that
 *        rounds up to the same power of two is accepted).
 * Panics (kernel bug) if @a pa is not inside a zone, not aligned to the block size,
 * not the start of an allocated block (double free, free of a never allocated or
 * interior frame) or if the block was allocated with a different rounded count.
 * A double free of a single frame whose first free is still in a CPU's cache
 * panics when that cache is flushed (in debug builds at once when it is this
 * CPU's cache).
 * Context: any CPU, any context; never sleeps.
 */
void frame_free(uintptr_t pa, size_t count)
{
	if (count == 0 || count > ((size_t) 1 << FRAME_MAX_ORDER))
		panic("frame_free(%#lx, %zu): invalid frame count", pa, count);
#ifdef CONFIG_KASAN
	kasan_frames_free(pa, (size_t) 1 << order_for_count(count));
#endif

	unsigned order = order_for_count(count);
	size_t bytes = ((size_t) 1 << order) * FRAME_SIZE;

	if (!IS_ALIGNED(pa, bytes))
		panic("frame_free(%#lx, %zu): address not aligned to the block size "
		    "(%zu bytes)", pa, count, bytes);

	zone_t *z = zone_find(pa / FRAME_SIZE);
	if (z == NULL)
		panic("frame_free(%#lx, %zu): address outside every zone", pa, count);

	uint32_t idx = (uint32_t) (pa / FRAME_SIZE - z->base_pfn);

	if (order == 0) {
		/*
		 * Read without the zone lock: the metadata of an allocated block
		 * changes only when the block is freed to its zone, and only its
		 * owner (this caller) frees it. A frame that fails the check takes
		 * the locked path below, which names the error.
		 */
		frame_t *f = &z->frames[idx];
		if (f->state == FRAME_BUSY && f->order == 0) {
			pcp_free(pa);
			return;
		}
	}

	irq_spinlock_lock(&z->lock, true);

	frame_t *f = &z->frames[idx];
	if (f->state != FRAME_BUSY) {
		const char *what = zone_frame_describe(z, pa / FRAME_SIZE, order);
		irq_spinlock_unlock(&z->lock, true);
		panic("frame_free(%#lx, %zu): block is not allocated (%s)", pa, count,
		    what);
	}
	if (f->order != order) {
		unsigned real = f->order;
		irq_spinlock_unlock(&z->lock, true);
		panic("frame_free(%#lx, %zu): wrong count, block was allocated with "
		    "%zu frames", pa, count, (size_t) 1 << real);
	}

	f->state = FRAME_TAIL;
	z->busy_count -= (size_t) 1 << order;
	__atomic_store_n(&z->free_count, z->free_count + ((size_t) 1 << order),
	    __ATOMIC_RELAXED);
	zone_free_block(z, idx, order);

	irq_spinlock_unlock(&z->lock, true);
}

/**
 * Locks every CPU's frame cache (interrupts must be disabled) and returns the
 * frames they hold; pcp_unlock_all() releases them.
 */
static size_t pcp_lock_all(void)
{
	size_t cached = 0;
	for (size_t i = 0; i < CONFIG_MAX_CPUS; i++) {
		irq_spinlock_lock(&pcp[i].lock, false);
		cached += pcp[i].count;
	}
	return cached;
}

static void pcp_unlock_all(void)
{
	for (size_t i = CONFIG_MAX_CPUS; i-- > 0;)
		irq_spinlock_unlock(&pcp[i].lock, false);
}

/**
 * Sums the frame counts of all zones into @a stats (in frames); frames in the
 * per-CPU caches count as free. Every cache and zone is read under its lock
 * (the caches held for the whole sum), so the result is an exact snapshot.
 * Context: any; disables interrupts for the sum.
 */
void frame_get_stats(frame_stats_t *stats)
{
#ifdef CONFIG_KASAN
	/* Counters as the clients see them: quarantined memory back first. */
	kasan_quarantine_flush_stats();
#endif
	stats->total = 0;
	stats->free = 0;
	stats->busy = 0;

	/* The caches are held still while the zones are read: an exact sum. */
	ipl_t ipl = interrupts_disable();
	size_t cached = pcp_lock_all();
	for (size_t i = 0; i < zones_count; i++) {
		zone_t *z = &zones[i];

		irq_spinlock_lock(&z->lock, false);
		stats->total += z->count;
		stats->free += z->free_count;
		stats->busy += z->busy_count;
		irq_spinlock_unlock(&z->lock, false);
	}
	pcp_unlock_all();
	interrupts_restore(ipl);
	/* A cached frame is busy in its zone and free to everybody else. */
	stats->free += cached;
	stats->busy -= cached;
}

/**
 * Prints a table of the zones (index, base physical address of the managed range,
 * managed/free/busy frames) and a total line.
 * Context: any where printf() may be used.
 */
void zones_print(void)
{
	size_t total = 0;
	size_t free = 0;
	size_t busy = 0;

	ipl_t ipl = interrupts_disable();
	size_t cached = pcp_lock_all();
	pcp_unlock_all();
	interrupts_restore(ipl);

	printf("#  base               frames     free       busy\n");
	for (size_t i = 0; i < zones_count; i++) {
		zone_t *z = &zones[i];

		irq_spinlock_lock(&z->lock, true);
		size_t zc = z->count;
		size_t zf = z->free_count;
		size_t zb = z->busy_count;
		irq_spinlock_unlock(&z->lock, true);

		printf("%-2zu 0x%016lx %-10zu %-10zu %zu\n", i, z->base_pfn * FRAME_SIZE,
		    zc, zf, zb);
		total += zc;
		free += zf;
		busy += zb;
	}
	/* Read apart from the zones: the total is exact only when idle. */
	printf("per-CPU caches           %-10zu (free frames, busy in the zones above)\n",
	    cached);
	printf("total                 %-10zu %-10zu %zu\n", total, free + cached,
	    busy - cached);
	printf("reserve: %zu frames (kept in the zones from user allocations)\n",
	    reserve_frames);
}

/**
 * Returns the number of zones created by frame_init().
 * Context: any.
 */
size_t zone_count(void)
{
	return zones_count;
}
