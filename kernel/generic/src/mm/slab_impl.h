/** @file slab_impl.h
 * What the parts of the slab allocator share: slab.c (magazines, the
 * allocation fast paths), slab_space.c (the slab layer: slabs and their
 * lists under the cache lock), slab_reclaim.c (the reclaim lock, flushing
 * magazines, slab_reclaim()) and slab_cache.c (cache creation and
 * destruction, statistics). The design and what protects what are in the
 * file comments of slab.c, slab_space.c (the slabs) and slab_reclaim.c
 * (flushing other CPUs' magazines); the interface is mm/slab.h. Private to
 * mm/.
 */
#ifndef KERN_MM_SLAB_IMPL_H_
#define KERN_MM_SLAB_IMPL_H_

#include <mm/slab.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <adt/list.h>
#include <synch/spinlock.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <atomic.h>
#include <cpu.h>
#include <debug.h>
#include <panic.h>
#include <print.h>
#include <lib/str.h>

#define SLAB_MAGIC        0x536c6162U  /* "Slab" */
#define SLAB_CACHE_MAGIC  0x53436368U  /* "SCch" */
/** Capacity of the magazine structure (a cache may use fewer slots). */
#define SLAB_MAG_MAX      32
/** Completely free slabs a cache keeps before freeing them at once. */
#define SLAB_KEEP_EMPTY   1
/** Poison of free objects of caches without a constructor (debug builds). */
#define SLAB_POISON       0xDE
#define SLAB_CACHE_LINE   64
/** Ticks every online CPU must take before its magazines can be flushed. */
#define SLAB_FLUSH_TICKS  2
/** How long a reclaimer waits for a CPU's ticks before skipping that CPU. */
#define SLAB_FLUSH_TIMEOUT_US 5000000UL
/** Internal slab_alloc() flag: do not reclaim on exhaustion (magazine allocation). */
#define SLAB_KM_NORECLAIM (1U << 15)

/** Slab descriptor, at the start of the slab. */
typedef struct slab {
	/** SLAB_MAGIC while the slab exists. Immutable in between. */
	uint32_t magic;
	/** Owning cache. Immutable. */
	slab_cache_t *cache;
	/** Link in one of the cache's slab lists; cache lock. */
	link_t link;
	/** First free object (linked through the first word); cache lock. */
	void *free;
	/** Number of free objects; cache lock. */
	size_t available;
} slab_t;

/** A magazine: a stack of constructed objects. */
typedef struct slab_magazine {
	/** Link in a depot list (cache lock) or in a reclaim's local list. */
	link_t link;
	/** Cache whose objects it holds. Immutable. */
	slab_cache_t *cache;
	/** Objects in objs[]; see slab.c's file comment for who owns the magazine. */
	size_t busy;
	/** Capacity (cache->mag_size). Immutable. */
	size_t size;
	/** Next magazine on a CPU's stack (slab_cpu_cache_t.full/empty); owned like the slot. */
	struct slab_magazine *next;
	void *objs[SLAB_MAG_MAX];
} slab_magazine_t;

/** Per-CPU part of a cache: owned by that CPU (interrupts disabled). */
typedef struct {
	slab_magazine_t *current;
	slab_magazine_t *last;
	/**
	 * The CPU's own stacks of full and empty magazines (linked through
	 * slab_magazine_t.next), at most cache->cpu_cap each: a batch of frees
	 * on this CPU (RCU callbacks) parks its magazines here, and the CPU's
	 * allocations take them back, with no lock (slab.c, "Per-CPU stacks").
	 */
	slab_magazine_t *full;
	slab_magazine_t *empty;
	uint32_t nfull;
	uint32_t nempty;
	/** Statistics: relaxed atomic stores by the owner, racy reads by anyone. */
	uint64_t hits;
	uint64_t allocs;
	uint64_t frees;
} ALIGNED(SLAB_CACHE_LINE) slab_cpu_cache_t;

struct slab_cache {
	/** SLAB_CACHE_MAGIC while the cache exists. */
	uint32_t magic;
	/* Immutable after creation. */
	char name[SLAB_NAME_MAX + 1];
	size_t size;
	/** The size asked for (size: the slot, with KASAN's redzone). */
	size_t obj_size;
	size_t align;
	unsigned flags;
	int (*constructor)(void *obj, unsigned kmflags);
	size_t (*destructor)(void *obj);
	unsigned order;          /**< Slab = 2^order frames. */
	size_t slab_bytes;
	size_t first_off;        /**< Offset of the first object in a slab. */
	size_t objs;             /**< Objects per slab. */
	size_t mag_size;         /**< Objects per magazine (0 with NOMAGAZINE). */

	/** Link in slab_cache_list; slab_cache_list_lock. */
	link_t link;

	/** Protects the slab lists, the counters below it and the depot. */
	irq_spinlock_t lock;
	list_t slabs_partial;
	list_t slabs_full;
	list_t slabs_empty;
	size_t nslabs;
	size_t nempty;
	/** Objects taken out of slabs (held by clients or in magazines). */
	size_t objs_used;
	list_t depot_full;
	list_t depot_empty;
	size_t ndepot_full;
	size_t ndepot_empty;
	/** Working set (slab.c): fewest full/empty magazines this interval. */
	size_t depot_full_min;
	size_t depot_empty_min;
	/** Magazines found unused in the last interval, still to be freed. */
	size_t depot_due_full;
	size_t depot_due_empty;
	/** uptime_us() when the current interval began. */
	uint64_t depot_trim_us;
	/** depot_cap() for this cache's object size; set at creation. */
	size_t depot_cap;
	/** Most magazines on each of a CPU's stacks; set at creation. */
	size_t cpu_cap;

	/** Frames held by the slabs. Atomics. */
	atomic_t frames;
	/** Client allocations and frees served by the slab layer. Atomics. */
	atomic_t slow_allocs;
	atomic_t slow_frees;
	/** Operations of a magazine cache that went to the slab layer. Atomics. */
	atomic_t misses;

	/** Per-CPU magazines, indexed by logical CPU id. */
	slab_cpu_cache_t cpu[CONFIG_MAX_CPUS];
};

/** Per-CPU flush request (slab_reclaim.c's file comment). One cache line per CPU. */
typedef struct {
	/** Set and cleared by the reclaimer, read by the owner. Atomics. */
	int flush_req;
} ALIGNED(SLAB_CACHE_LINE) slab_cpu_flag_t;

/*
 * Small helpers.
 */

static inline void stat_inc(uint64_t *p)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1,
	    __ATOMIC_RELAXED);
}

static inline uint64_t stat_get(uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline bool cache_has_magazines(slab_cache_t *c)
{
	return !(c->flags & SLAB_CACHE_NOMAGAZINE);
}

/** Per-CPU flush requests (slab.c). */
extern slab_cpu_flag_t slab_cpu_flags[CONFIG_MAX_CPUS];

static inline bool cpu_flush_requested(unsigned id)
{
	return __atomic_load_n(&slab_cpu_flags[id].flush_req, __ATOMIC_ACQUIRE) != 0;
}

/* Shared state (comments where they are defined). */
extern list_t slab_cache_list;             /* slab_cache.c */
extern irq_spinlock_t slab_cache_list_lock; /* slab_cache.c */
extern slab_cache_t slab_mag_cache;        /* slab.c */

/* The magazine layer's entry points for the other files (slab.c). */
size_t slab_mag_list_destroy(list_t *list);
bool slab_may_wait(void);

/*
 * The slab layer (slab_space.c): objects in and out of the slabs under the
 * cache lock, for the magazine layer's misses (slab.c), the reclaim
 * (slab_reclaim.c) and cache destruction (slab_cache.c). The objects are
 * unconstructed; no slab lock may be held by the caller. Doxygen comments
 * are at the definitions.
 */
size_t slab_objs_get(slab_cache_t *c, void **objs, size_t want);
size_t slab_objs_put(slab_cache_t *c, void **objs, size_t n);
size_t slab_cache_free_empty(slab_cache_t *c);

/** The slab of @a obj (rounding down to the slab size); no check. */
static inline slab_t *obj_slab(slab_cache_t *c, void *obj)
{
	return (slab_t *) ALIGN_DOWN((uintptr_t) obj, c->slab_bytes);
}

/** Returns the slab of @a obj after checking it belongs to @a c; panics if not. */
static inline slab_t *obj_slab_checked(slab_cache_t *c, void *obj)
{
	slab_t *s = obj_slab(c, obj);
	uintptr_t off = (uintptr_t) obj - (uintptr_t) s;

	if (s->magic != SLAB_MAGIC || s->cache != c || off < c->first_off ||
	    (off - c->first_off) % c->size != 0 ||
	    (off - c->first_off) / c->size >= c->objs) {
		panic("slab_free('%s', %p): not an object of this cache", c->name,
		    obj);
	}
	return s;
}

/**
 * Takes one (unconstructed) object out of a slab, creating a slab when needed.
 * Here rather than in slab_space.c so that slab_alloc()'s miss path calls
 * slab_objs_get() directly, as it did when both were in one file.
 * @return the object, or NULL when the frame allocator is exhausted.
 */
static inline void *slab_obj_get(slab_cache_t *c)
{
	void *obj;
	return slab_objs_get(c, &obj, 1) == 1 ? obj : NULL;
}

#ifdef CONFIG_DEBUG
/** True when free objects of @a c are poisoned (debug builds, no constructor). */
static inline bool cache_poisons(slab_cache_t *c)
{
#ifdef CONFIG_KASAN
	/* KASAN's shadow and quarantine do this job (and keep stacks in the redzone). */
	(void) c;
	return false;
#else
	return c->constructor == NULL;
#endif
}

/** Panics if the poison of free object @a obj (after its first word) was changed. */
void slab_obj_check_poison(slab_cache_t *c, void *obj);
#endif

/* The reclaim side (slab_reclaim.c). */
/** Takes the reclaim lock (one reclaim or cache destruction at a time),
 *  waiting (yielding when slab_may_wait()) while another holds it. */
void slab_reclaim_lock(void);
void slab_reclaim_unlock(void);
/**
 * Returns every magazine of @a c (the CPUs' slots and stacks, the depot) to
 * its slabs and frees the magazines: all CPUs' with slab_may_wait(), else
 * only this CPU's. The reclaim lock held.
 */
void slab_cache_flush(slab_cache_t *c);

#endif
