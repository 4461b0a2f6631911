/** @file frame.h
 * Physical frame allocator: zones with a binary buddy system each.
 *
 * Zones are created from the usable RAM regions the boot loader reported
 * (arch_boot_memory(): minus the kernel image and, on amd64, the low 1 MiB), split at the 4 GiB boundary. Each zone keeps
 * per-order free lists and counts of free and busy frames, under its own spinlock
 * (IRQ-safe), so the allocator may be called from any CPU and any context, including
 * interrupt handlers; it never sleeps.
 */
#ifndef KERN_FRAME_H_
#define KERN_FRAME_H_

#include <typedefs.h>
#include <arch/mm.h>

#define FRAME_SIZE PAGE_SIZE
/** Largest order (block of 2^FRAME_MAX_ORDER frames) the buddy system handles. */
#define FRAME_MAX_ORDER 18

/** Usable physical memory region, page aligned. */
typedef struct {
	uintptr_t base;
	size_t size;
} phys_region_t;

/** Flags for frame_alloc(). */
typedef enum {
	FRAME_NONE = 0,
	/** Allocate below 4 GiB (e.g. for page tables used by 32-bit boot code). */
	FRAME_LOWMEM = 1 << 0,
	/** Zero the frames. */
	FRAME_ZERO = 1 << 1,
	/**
	 * A frame charged to a user task (its pages and page tables): refused
	 * once the zones' free frames are at or below the kernel's reserve
	 * (frame_reserve()), so that kernel allocations still find frames
	 * while user tasks hold the rest.
	 */
	FRAME_USER = 1 << 2,
} frame_flags_t;

/**
 * Frames the kernel keeps from FRAME_USER allocations: 1/64 of the frames
 * managed at boot, at least FRAME_RESERVE_MIN (2 MiB) and at most a quarter
 * of them. Counted in the zones: a CPU's frame cache may still hand its
 * cached frames to user allocations (at most FRAME_PCP_HIGH a CPU), the
 * zones keep the reserve. Set by frame_init(); any context.
 */
size_t frame_reserve(void);
/** Frames managed by the zones (set by frame_init()). Any context. */
size_t frame_total(void);
/** The floor of frame_reserve(), in frames. */
#define FRAME_RESERVE_MIN 512

/**
 * Creates the zones. Called once by the BSP before any allocation, interrupts
 * disabled. The metadata of each zone is carved from that zone's own memory.
 * @param regions usable RAM regions (page-aligned, not overlapping the kernel).
 * @param count number of regions.
 */
void frame_init(const phys_region_t *regions, size_t count);

/**
 * Allocates a physically contiguous block of at least @a count frames (rounded up to
 * a power of two, naturally aligned to its size).
 * @return the physical address of the block, or 0 when no zone can satisfy it
 *         (the caller handles the failure; no panic).
 * Context: any; never sleeps.
 */
uintptr_t frame_alloc(size_t count, frame_flags_t flags);

/**
 * Frees a block returned by frame_alloc(); @a count must be the same value that was
 * passed to frame_alloc(). Freeing an address that is not an allocated block start
 * panics (it is a kernel bug).
 */
void frame_free(uintptr_t pa, size_t count);

/** Frame counts over all zones (in frames). */
typedef struct {
	size_t total;
	size_t free;
	size_t busy;
} frame_stats_t;

void frame_get_stats(frame_stats_t *stats);
/** Prints every zone: index, base, size, free and busy frames. */
void zones_print(void);
/** Number of zones. */
size_t zone_count(void);

#endif
