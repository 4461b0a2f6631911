/** @file kasan.h
 * KASAN, the kernel address sanitizer (SANITIZE=kasan; docs/SANITIZERS.md).
 *
 * GCC instruments every load and store of the kernel's C code
 * (-fsanitize=kernel-address, outline: a call of __asan_loadN_noabort /
 * __asan_storeN_noabort per access; stack redzones written inline at
 * KASAN_SHADOW_OFFSET). One shadow byte describes 8 bytes of memory: 0 all
 * accessible, 1..7 the first k accessible, a KASAN_* code below none.
 * Shadow exists for the kernel image (from kasan_early_init(), before
 * main_bsp()) and for the direct map up to the top of RAM (from
 * kasan_init_shadow()); accesses elsewhere (user memory, MMIO) are not
 * checked.
 *
 * The allocators call the hooks below so that the shadow says what the
 * code means: frames (free: KASAN_PAGE_FREE), slab objects (a redzone after
 * each object holding its allocation and free stacks; freed objects
 * KASAN_SLAB_FREE and kept in a quarantine before their reuse; objects freed
 * by an RCU callback KASAN_SLAB_FREE_RCU and kept for one more grace
 * period), malloc blocks (the header and the slack after the requested size
 * a redzone), thread stacks (KASAN_STACK_EXITED after the thread's exit,
 * quarantined too).
 *
 * Without CONFIG_KASAN every hook is an empty inline.
 */
#ifndef KERN_DEBUG_KASAN_H_
#define KERN_DEBUG_KASAN_H_

#include <typedefs.h>
#include <debug/sanitize.h>
#include <mm/frame.h>

/* Shadow codes (one byte per 8 bytes of memory). */
#define KASAN_PAGE_FREE       0xFF  /**< a free frame */
#define KASAN_PAGE_REDZONE    0xFE  /**< after a large malloc block in its frames */
#define KASAN_SLAB_REDZONE    0xFC  /**< slab redzone, or slab space never allocated */
#define KASAN_SLAB_FREE       0xFB  /**< a freed slab object */
#define KASAN_MALLOC_REDZONE  0xFA  /**< malloc header and slack */
#define KASAN_GLOBAL_REDZONE  0xF9  /**< after a global */
#define KASAN_STACK_SCOPE     0xF8  /**< a local out of its scope (GCC) */
#define KASAN_SLAB_FREE_RCU   0xF7  /**< a slab object freed by an RCU callback */
#define KASAN_STACK_EXITED    0xF5  /**< the stack of an exited thread */
#define KASAN_STACK_RIGHT     0xF3  /**< stack redzones (GCC) */
#define KASAN_STACK_MID       0xF2
#define KASAN_STACK_LEFT      0xF1

struct slab_cache;

#ifdef CONFIG_KASAN
/** Maps the kernel image's shadow and registers the globals (boot.S, before main_bsp). */
void kasan_early_init(void);

/**
 * Takes the direct map's shadow (RAM top / 8, 2 MiB aligned) out of the end
 * of one of @a regions (shrinking it), maps and clears it, and enables the
 * checks of the direct map. BSP, after arch_boot_memory(), before
 * frame_init(). Panics when no region can hold it.
 */
void kasan_init_shadow(phys_region_t *regions, size_t count);

/** Marks [addr, addr + size) with @a code (addr 8-aligned; size rounded up). */
void kasan_poison(const void *addr, size_t size, uint8_t code);

/** Marks [addr, addr + size) accessible (addr 8-aligned; a partial last granule). */
void kasan_unpoison(const void *addr, size_t size);

/** Checks an access the compiler does not see (memcpy, memset ...); reports. */
void kasan_check_range(const void *addr, size_t size, bool write, uintptr_t ip);

/** Slot size of a cache of @a size-byte objects (object, metadata, redzone). */
size_t kasan_slab_slot_size(size_t size);
/** A new slab's object space [start, start + bytes): all redzone until allocated. */
void kasan_slab_new(void *start, size_t bytes);
/** Object @a obj of cache @a c (@a size bytes) handed out: accessible, alloc stack kept. */
void kasan_slab_alloc(struct slab_cache *c, void *obj, size_t size);
/**
 * Object @a obj given to slab_free(): checks it (a double or invalid free is
 * reported and the free dropped), poisons it, keeps the free stack and puts
 * it in the quarantine. @return true: the caller must not free it now (the
 * quarantine frees it later with slab_free_now()).
 */
bool kasan_slab_free(struct slab_cache *c, void *obj, size_t size);
/** Frees every quarantined object of @a c (slab_cache_destroy()). */
void kasan_quarantine_drain_cache(struct slab_cache *c);
/** Frees the whole quarantine (slab_reclaim(), the leak checks). @return objects freed. */
size_t kasan_quarantine_flush(void);
/**
 * The statistics getters (frame_get_stats(), heap_get_stats(),
 * slab_cache_get_stats()): the quarantine flushed first, so that the counters
 * (and the tests' leak checks) see the memory the clients freed as free.
 * Only with interrupts enabled (elsewhere nothing is done).
 */
void kasan_quarantine_flush_stats(void);
/**
 * RCU-callback frees the quarantine released before their grace period
 * completed, other than by kasan_quarantine_flush(): zero unless the
 * quarantine's overflow list is broken (kasan_quar1). Any context.
 * @return the count since boot.
 */
uint64_t kasan_quarantine_early(void);
/** Frees a slab object at once (slab.c; the quarantine's release). */
void slab_free_now(struct slab_cache *c, void *obj);

/** Frames [pa, pa + count pages) allocated / freed (frame.c). */
void kasan_frames_alloc(uintptr_t pa, size_t count);
void kasan_frames_free(uintptr_t pa, size_t count);
/**
 * An exited thread's stack (count frames at pa): poisoned as
 * KASAN_STACK_EXITED and quarantined (freed later by frame_free()).
 * @return true (the caller must not free it).
 */
bool kasan_stack_free(uintptr_t pa, size_t count);

/** A malloc block: @a ptr (@a size bytes) inside the slab object or frames [obj, obj + span). */
void kasan_malloc_mark(void *obj, void *ptr, size_t size, size_t span);
/** free(@a ptr) of a block already freed: reported as a double free. @return true if so. */
bool kasan_malloc_free_check(void *ptr);

/** RCU callbacks of this CPU's reclaimer start / end (frees inside are RCU frees). */
void kasan_rcu_cb_enter(void);
void kasan_rcu_cb_exit(void);

/** Maps the whole kernel half's shadow read-only to one zero page (arch; first). */
void kasan_arch_early_shadow(void);
/** Maps shadow [va, va + bytes) to physical pa, 2 MiB pages (arch; boot only). */
void kasan_arch_map_shadow(uintptr_t va, uintptr_t pa, size_t bytes);

/** Quarantine and shadow statistics (the `sanitize` command). */
void kasan_print_stats(void);
#else
static inline void kasan_poison(const void *a, size_t s, uint8_t c) { }
static inline void kasan_unpoison(const void *a, size_t s) { }
static inline void kasan_rcu_cb_enter(void) { }
static inline void kasan_rcu_cb_exit(void) { }
static inline size_t kasan_quarantine_flush(void) { return 0; }
#endif

#endif
