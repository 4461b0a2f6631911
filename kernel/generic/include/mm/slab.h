/** @file slab.h
 * Slab allocator (Bonwick's object caches with per-CPU magazines, HelenOS style).
 *
 * An object cache hands out objects of one size and alignment. It has two layers:
 *
 * - The **slab layer**: slabs of 2^k physically contiguous frames (from
 *   frame_alloc()) cut into objects, with a slab descriptor at the start of each
 *   slab. Protected by the cache's lock (an IRQ spinlock).
 * - The **magazine layer**: every CPU has two magazines (arrays of up to 32 object
 *   pointers) per cache, "current" and "last"; a hit takes or puts an object with
 *   interrupts disabled on the local CPU and touches no shared state and no lock.
 *   When both magazines are empty (allocation) or full (free), the CPU exchanges
 *   one with the cache's depot of full and empty magazines (under the cache lock);
 *   only when the depot cannot help does the operation go to the slab layer.
 *
 * Constructors (Bonwick semantics, constructed state is cached): the constructor
 * runs when an object leaves the slab layer (the first slab_alloc() that does not
 * hit a magazine), the destructor when it goes back to its slab (a magazine is
 * flushed by slab_reclaim(), a depot overflows, or the cache has no magazines). An
 * object passes through any number of slab_alloc()/slab_free() pairs in between
 * without them, so **slab_free() must be given the object in its constructed
 * state**.
 *
 * Memory is never given back to the frame allocator behind the caller's back except
 * for completely free slabs beyond one kept per cache; slab_reclaim() flushes the
 * magazines and frees every empty slab. Frames held by magazines are therefore not
 * returned by slab_free(): code that checks that memory is back at a baseline must
 * call slab_reclaim(SLAB_RECLAIM_ALL) before taking the baseline and before the check.
 *
 * Debug builds (CONFIG_DEBUG) poison the objects of caches without a constructor
 * with 0xDE when they are freed and check the poison (except the first machine
 * word) when they are allocated again; a write after free panics, naming the cache.
 * slab_free() also validates the object (slab magic, owning cache, object boundary).
 *
 * Nothing in this interface sleeps. All functions may be called on any CPU, with
 * interrupts enabled or disabled, and from interrupt handlers, except where a
 * function says otherwise (slab_cache_create/destroy and
 * slab_reclaim(SLAB_RECLAIM_ALL) want thread context).
 */
#ifndef KERN_SLAB_H_
#define KERN_SLAB_H_

#include <typedefs.h>
#include <errno.h>

/** An object cache (opaque). */
typedef struct slab_cache slab_cache_t;

/** Flags for slab_cache_create(). */
enum {
	SLAB_CACHE_NONE = 0,
	/**
	 * No per-CPU magazines: every slab_alloc()/slab_free() takes the cache lock
	 * and runs the constructor/destructor. For caches used rarely (the allocator's
	 * own magazines and cache descriptors) or that must not hold memory in
	 * magazines.
	 */
	SLAB_CACHE_NOMAGAZINE = 1 << 0,
};

/** Flags for slab_alloc() (kmflags; also passed to the constructor). */
enum {
	SLAB_KM_NONE = 0,
	/**
	 * When memory is short, do not wait for other CPUs to give back the objects
	 * in their magazines (slab_reclaim() without SLAB_RECLAIM_ALL). Implied in
	 * interrupt handlers, with interrupts or preemption disabled.
	 */
	SLAB_ATOMIC = 1 << 0,
};

/** Flags for slab_reclaim(). */
enum {
	/**
	 * Also flush the magazines of every online CPU (not only the caller's). Waits
	 * until every online CPU has taken two timer ticks (about 20 ms at HZ 100;
	 * the waiter yields the CPU when it can). Needs interrupts and preemption
	 * enabled (no spinlock held) and not an interrupt handler; elsewhere it falls
	 * back to the local variant.
	 */
	SLAB_RECLAIM_ALL = 1 << 0,
};

/** Largest alignment slab_cache_create() accepts. */
#define SLAB_MAX_ALIGN 4096
/** Slabs have at most 2^SLAB_MAX_ORDER frames (1 MiB), which bounds object size. */
#define SLAB_MAX_ORDER 8
/** Longest cache name kept (characters, without the terminator). */
#define SLAB_NAME_MAX 23

/** Counters of one cache, see slab_cache_get_stats(). */
typedef struct {
	char name[SLAB_NAME_MAX + 1];
	size_t size;           /**< Object size (bytes, after rounding for alignment). */
	size_t align;          /**< Object alignment. */
	size_t slab_frames;    /**< Frames per slab. */
	size_t objs_per_slab;  /**< Objects per slab. */
	size_t mag_size;       /**< Objects per magazine (0: no magazines). */
	size_t slabs;          /**< Slabs held (including empty ones). */
	size_t empty_slabs;    /**< Completely free slabs kept. */
	size_t frames;         /**< Frames held (slabs * slab_frames). */
	size_t objs_total;     /**< Objects in the slabs held (slabs * objs_per_slab). */
	size_t objs_slab_used; /**< Objects out of their slabs (clients + magazines). */
	/**
	 * Objects held by clients: slab_alloc() minus slab_free() calls. Exact when no
	 * operation on the cache is in progress.
	 */
	size_t objs_in_use;
	size_t objs_cached;    /**< Objects in magazines (objs_slab_used - objs_in_use). */
	size_t depot_full;     /**< Full magazines in the depot. */
	size_t depot_empty;    /**< Empty magazines in the depot. */
	uint64_t mag_hits;     /**< Operations served by the magazine layer (and depot). */
	uint64_t mag_misses;   /**< Operations that went to the slab layer. */
} slab_cache_stats_t;

/** One memory range of the slab allocator, see slab_map_snapshot(). */
typedef struct {
	char name[SLAB_NAME_MAX + 1]; /**< The owning cache's name. */
	uintptr_t start;              /**< Kernel virtual address (direct map). */
	size_t bytes;                 /**< Length of the range. */
	bool desc;                    /**< The cache descriptor (else a slab). */
} slab_map_entry_t;

/**
 * Fills @a out with up to @a max ranges: for every cache its descriptor and
 * each of its slabs (objects of a slab lie inside its range), so that a host
 * tool can name the cache of a kernel address (docs/SHARING.md). A snapshot:
 * slabs may come and go right after. @return the number of entries written
 * (ranges beyond @a max are left out).
 * Context: thread; takes the cache list lock and each cache's lock (IRQ
 * spinlocks) for the walk; never sleeps.
 */
size_t slab_map_snapshot(slab_map_entry_t *out, size_t max);

/**
 * Sets up the allocator: the cache of cache descriptors and the cache of
 * magazines, and registers the `slabs` kconsole command. Called once by heap_init()
 * on the BSP after frame_init(), interrupts disabled, before any other function
 * here. Panics if the bootstrap caches cannot be set up.
 */
void slab_cache_init(void);

/**
 * Creates an object cache.
 *
 * @param name        name for `slabs` and panics (copied, truncated to
 *                    SLAB_NAME_MAX characters).
 * @param size        object size in bytes, >= 1; rounded up to a multiple of the
 *                    alignment and to at least 8 bytes.
 * @param align       object alignment: 0 (8 bytes) or a power of two up to
 *                    SLAB_MAX_ALIGN.
 * @param constructor called as constructor(obj, kmflags) when an object leaves the
 *                    slab layer; returns 0 on success, non-zero on failure (the
 *                    allocation then fails and the object goes back unconstructed).
 *                    May be NULL. Must not sleep; may run with interrupts disabled.
 * @param destructor  called when a constructed object goes back to its slab;
 *                    returns the number of frames it freed (added to what
 *                    slab_reclaim() reports; 0 normally). May be NULL. Must not
 *                    sleep or allocate from this cache.
 * @param flags       SLAB_CACHE_* flags.
 * @return the cache, or NULL on invalid arguments (size 0, objects that do not fit
 *         in a slab of 2^SLAB_MAX_ORDER frames, bad alignment) or out of memory.
 * Context: thread or boot context (takes IRQ spinlocks briefly); never sleeps.
 */
slab_cache_t *slab_cache_create(const char *name, size_t size, size_t align,
    int (*constructor)(void *obj, unsigned kmflags), size_t (*destructor)(void *obj),
    unsigned flags);

/**
 * Destroys an empty cache: flushes the magazines of every CPU, frees its slabs and
 * the descriptor.
 * @return EOK; EBUSY when objects are still allocated from the cache (it is then
 *         left intact and usable; the objects cached in magazines were given back
 *         to the slabs); EINVAL for NULL or a bootstrap cache.
 * Context: thread context, interrupts and preemption enabled (no spinlock held);
 * waits about two timer ticks (yielding the CPU); the cache must not be used
 * concurrently.
 */
errno_t slab_cache_destroy(slab_cache_t *cache);

/**
 * Allocates one object in its constructed state (see the file comment).
 *
 * Fast path (magazine hit): interrupts disabled on the local CPU for a few
 * instructions, no lock. On a miss: the depot (cache lock), then the slab layer
 * (cache lock; frame_alloc() with no lock held; the constructor with no lock held).
 * When the frame allocator fails, the allocator runs slab_reclaim() once -- with
 * SLAB_RECLAIM_ALL unless @a kmflags has SLAB_ATOMIC or the context forbids
 * waiting -- and retries.
 *
 * @param kmflags SLAB_KM_NONE or SLAB_ATOMIC (passed on to the constructor).
 * @return the object, or NULL when memory is exhausted or the constructor failed.
 *         Never panics on exhaustion.
 * Context: any (interrupt handlers included); never sleeps.
 */
void *slab_alloc(slab_cache_t *cache, unsigned kmflags);

/**
 * Returns an object (in its constructed state) to @a cache. Usually it goes into a
 * magazine of the local CPU; memory returns to the frame allocator only through
 * slab_reclaim() or when a slab becomes free and the cache already keeps an empty
 * one. Debug builds panic on an object that does not belong to @a cache.
 * @param obj an object from slab_alloc(cache); NULL is not allowed.
 * Context: any (interrupt handlers included); never sleeps.
 */
void slab_free(slab_cache_t *cache, void *obj);

/**
 * Returns the @a n objects @a objs (each as slab_free() wants it: constructed,
 * from slab_alloc(cache)) to @a cache, as @a n slab_free() calls would, but with
 * one interrupts-disabled section per run that fits the CPU's current magazine
 * (the objects are copied in); a full magazine is exchanged by an ordinary
 * slab_free() of the next object. For frees that arrive in runs: RCU callbacks
 * through rcu_slab_free() (Linux has kmem_cache_free_bulk() for the same).
 * Debug and KASAN builds free one object at a time (their checks and
 * quarantine). @a n may be 0. Context: as slab_free().
 */
void slab_free_bulk(slab_cache_t *cache, void **objs, size_t n);

/**
 * Gives memory back to the frame allocator: flushes the depots (destructing their
 * objects and returning them to their slabs), flushes the magazines of the calling
 * CPU (or of every online CPU with SLAB_RECLAIM_ALL), frees the magazines and every
 * completely free slab of every cache.
 *
 * Only one reclaim runs at a time. Without SLAB_RECLAIM_ALL the call never waits:
 * if another reclaim is in progress it returns 0 at once (that one frees memory).
 * With SLAB_RECLAIM_ALL it waits for a running reclaim, then about two timer ticks
 * (see SLAB_RECLAIM_ALL for the context it needs).
 *
 * @return the number of frames freed (slabs plus what destructors reported).
 * Context: any for the local variant; see SLAB_RECLAIM_ALL. Never sleeps.
 */
size_t slab_reclaim(unsigned flags);

/**
 * Fills @a stats with the counters of @a cache (a consistent snapshot of the slab
 * layer under the cache lock; the per-CPU counters are summed without locks).
 * Context: any.
 */
void slab_cache_get_stats(slab_cache_t *cache, slab_cache_stats_t *stats);

/** Frames held by the slabs of @a cache (atomic counter, no lock). Context: any. */
size_t slab_cache_frames(slab_cache_t *cache);

/** Frames held by all caches together (atomic counter). Context: any. */
size_t slab_frames_held(void);

/** The name of @a cache (valid while the cache exists). Any context. */
const char *slab_cache_name(slab_cache_t *cache);

/** Number of slab caches that exist. Any context (takes the cache list lock). */
size_t slab_cache_count(void);

/**
 * Fills @a out with the statistics of up to @a max caches, in the order of
 * the cache list (creation order), read under the cache list lock with
 * interrupts disabled. Any context; never sleeps.
 * @return the number filled.
 */
size_t slab_get_all_stats(slab_cache_stats_t *out, size_t max);

#endif
