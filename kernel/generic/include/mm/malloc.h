/** @file malloc.h
 * Kernel heap.
 *
 * Small sizes come from power-of-two size classes carved out of frames; sizes above
 * the largest class are served by frame_alloc() directly. Usable from any CPU in any
 * non-interrupt context (it takes IRQ-saving spinlocks, so interrupt handlers may use
 * it as well); never sleeps. Returns NULL on failure, never panics. Alignment: 16 bytes.
 */
#ifndef KERN_MALLOC_H_
#define KERN_MALLOC_H_

#include <typedefs.h>

void *malloc(size_t size);
void *calloc(size_t nmemb, size_t size);
/** Frees a block from malloc()/calloc(); NULL is ignored. */
void free(void *ptr);
/** Usable size of an allocated block. */
size_t malloc_usable_size(void *ptr);

/** Heap counters, for tests to check that memory returns to its baseline. */
typedef struct {
	size_t allocs;        /**< Live allocations. */
	size_t bytes;         /**< Bytes requested by live allocations. */
	size_t pages;         /**< Frames held by the heap. */
} heap_stats_t;

void heap_get_stats(heap_stats_t *stats);
void heap_init(void);
/** Prints the heap state (size classes, pages, live allocations). */
void heap_print(void);

#endif
