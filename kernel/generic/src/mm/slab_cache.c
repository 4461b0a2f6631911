/** @file slab_cache.c
 * Slab allocator: cache creation and destruction, the bootstrap caches and
 * the statistics (see slab.c for the design, slab_space.c for the slabs).
 */
#include <debug/kasan.h>
#include "slab_impl.h"

/** The bootstrap cache of cache descriptors (static, never destroyed). */
static slab_cache_t slab_cache_cache;

/** Every cache; protected by slab_cache_list_lock. */
list_t slab_cache_list = LIST_INITIALIZER(slab_cache_list);
irq_spinlock_t slab_cache_list_lock = IRQ_SPINLOCK_INITIALIZER("slab.caches");

/*
 * Caches.
 */

/** Magazine capacity for objects of @a size bytes. */
static size_t mag_size_for(size_t size)
{
	if (size <= 256)
		return 32;
	if (size <= 2048)
		return 16;
	if (size <= 16384)
		return 8;
	return 4;
}

/**
 * Fills in the descriptor @a c (zeroed here).
 * @return false on invalid arguments (the descriptor is then unusable).
 */
static bool cache_init(slab_cache_t *c, const char *name, size_t size,
    size_t align, int (*constructor)(void *, unsigned), size_t (*destructor)(void *),
    unsigned flags)
{
	memset(c, 0, sizeof(*c));

	if (align == 0)
		align = sizeof(void *);
	if (size == 0 || (align & (align - 1)) != 0 || align > SLAB_MAX_ALIGN ||
	    size > (FRAME_SIZE << SLAB_MAX_ORDER))
		return false;
	align = MAX(align, sizeof(void *));
	size_t obj_size = size;
#ifdef CONFIG_KASAN
	/* The slot: the object, KASAN's metadata and redzone. */
	size = kasan_slab_slot_size(size);
#endif
	size = ALIGN_UP(MAX(size, sizeof(void *)), align);

	/* Smallest order that loses at most 1/8; else the one that loses least. */
	size_t first_off = ALIGN_UP(sizeof(slab_t), align);
	bool found = false;
	unsigned best_order = 0;
	size_t best_waste = 0;
	size_t best_bytes = 1;
	for (unsigned order = 0; order <= SLAB_MAX_ORDER; order++) {
		size_t bytes = FRAME_SIZE << order;
		if (first_off + size > bytes)
			continue;
		size_t objs = (bytes - first_off) / size;
		size_t waste = bytes - objs * size;
		if (!found || waste * best_bytes < best_waste * bytes) {
			found = true;
			best_order = order;
			best_waste = waste;
			best_bytes = bytes;
		}
		if (waste * 8 <= bytes)
			break;
	}
	if (!found)
		return false;

	c->magic = SLAB_CACHE_MAGIC;
	str_cpy(c->name, sizeof(c->name), name ? name : "?");
	c->size = size;
	c->obj_size = obj_size;
	c->align = align;
	c->flags = flags;
	c->constructor = constructor;
	c->destructor = destructor;
	c->order = best_order;
	c->slab_bytes = FRAME_SIZE << best_order;
	c->first_off = first_off;
	c->objs = (c->slab_bytes - first_off) / size;
	c->mag_size = (flags & SLAB_CACHE_NOMAGAZINE) ? 0 : mag_size_for(size);
	link_initialize(&c->link);
	irq_spinlock_initialize(&c->lock, "slab.cache");
	list_initialize(&c->slabs_partial);
	list_initialize(&c->slabs_full);
	list_initialize(&c->slabs_empty);
	list_initialize(&c->depot_full);
	list_initialize(&c->depot_empty);
	if (c->mag_size > 0) {
		frame_stats_t fs;
		frame_get_stats(&fs);
		c->depot_cap = fs.total * (FRAME_SIZE / 256) / (c->mag_size * size);
		/* Each CPU's stack: at most 1/1024 of memory, at least 4 magazines. */
		c->cpu_cap = MAX(c->depot_cap / 4, (size_t) 4);
	}
	return true;
}

static void cache_list_add(slab_cache_t *c)
{
	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_append(&c->link, &slab_cache_list);
	irq_spinlock_unlock(&slab_cache_list_lock, true);
}

void slab_cache_init(void)
{
	_Static_assert(sizeof(slab_magazine_t) <= 512, "magazine size");

	if (!cache_init(&slab_cache_cache, "slab_cache", sizeof(slab_cache_t),
	    SLAB_CACHE_LINE, NULL, NULL, SLAB_CACHE_NOMAGAZINE))
		panic("slab: cannot set up the cache of caches");
	if (!cache_init(&slab_mag_cache, "slab_magazine", sizeof(slab_magazine_t), 0,
	    NULL, NULL, SLAB_CACHE_NOMAGAZINE))
		panic("slab: cannot set up the magazine cache");
	cache_list_add(&slab_cache_cache);
	cache_list_add(&slab_mag_cache);
}

slab_cache_t *slab_cache_create(const char *name, size_t size, size_t align,
    int (*constructor)(void *obj, unsigned kmflags), size_t (*destructor)(void *obj),
    unsigned flags)
{
	slab_cache_t *c = slab_alloc(&slab_cache_cache, SLAB_KM_NONE);

	if (c == NULL)
		return NULL;
	if (!cache_init(c, name, size, align, constructor, destructor, flags)) {
		slab_free(&slab_cache_cache, c);
		return NULL;
	}
	cache_list_add(c);
	return c;
}

errno_t slab_cache_destroy(slab_cache_t *c)
{
	if (c == NULL || c == &slab_cache_cache || c == &slab_mag_cache)
		return EINVAL;
	assert(c->magic == SLAB_CACHE_MAGIC);

#ifdef CONFIG_KASAN
	/* The cache's quarantined objects back first (no lock held here). */
	kasan_quarantine_drain_cache(c);
#endif
	slab_reclaim_lock();
	if (cache_has_magazines(c))
		slab_cache_flush(c);

	irq_spinlock_lock(&c->lock, true);
	bool busy = c->objs_used != 0;
	irq_spinlock_unlock(&c->lock, true);
	if (busy) {
		slab_reclaim_unlock();
		return EBUSY;
	}

	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_remove(&c->link);
	irq_spinlock_unlock(&slab_cache_list_lock, true);

	(void) slab_cache_free_empty(c);
	assert(c->nslabs == 0 && atomic_get(&c->frames) == 0);
	slab_reclaim_unlock();

	c->magic = 0;
	slab_free(&slab_cache_cache, c);
	return EOK;
}

/*
 * Statistics.
 */

void slab_cache_get_stats(slab_cache_t *c, slab_cache_stats_t *st)
{
#ifdef CONFIG_KASAN
	/* Counters as the clients see them: quarantined memory back first. */
	kasan_quarantine_flush_stats();
#endif
	memset(st, 0, sizeof(*st));
	str_cpy(st->name, sizeof(st->name), c->name);
	st->size = c->size;
	st->align = c->align;
	st->slab_frames = (size_t) 1 << c->order;
	st->objs_per_slab = c->objs;
	st->mag_size = c->mag_size;

	irq_spinlock_lock(&c->lock, true);
	st->slabs = c->nslabs;
	st->empty_slabs = c->nempty;
	st->objs_slab_used = c->objs_used;
	st->depot_full = c->ndepot_full;
	st->depot_empty = c->ndepot_empty;
	irq_spinlock_unlock(&c->lock, true);

	st->frames = st->slabs * st->slab_frames;
	st->objs_total = st->slabs * st->objs_per_slab;

	/* Modular arithmetic: the sum is right even if one CPU's part is negative. */
	size_t in_use = atomic_get(&c->slow_allocs) - atomic_get(&c->slow_frees);
	uint64_t hits = 0;
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++) {
		in_use += stat_get(&c->cpu[i].allocs) - stat_get(&c->cpu[i].frees);
		hits += stat_get(&c->cpu[i].hits);
	}
	st->objs_in_use = in_use;
	st->objs_cached = in_use <= st->objs_slab_used ?
	    st->objs_slab_used - in_use : 0;
	st->mag_hits = hits;
	st->mag_misses = atomic_get(&c->misses);
}

size_t slab_cache_frames(slab_cache_t *c)
{
	return atomic_get(&c->frames);
}

size_t slab_cache_count(void)
{
	size_t n = 0;
	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_foreach(&slab_cache_list, l)
		n++;
	irq_spinlock_unlock(&slab_cache_list_lock, true);
	return n;
}

size_t slab_get_all_stats(slab_cache_stats_t *out, size_t max)
{
	size_t got = 0;
	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_foreach(&slab_cache_list, l) {
		if (got == max)
			break;
		slab_cache_get_stats(list_get_instance(l, slab_cache_t, link),
		    &out[got++]);
	}
	irq_spinlock_unlock(&slab_cache_list_lock, true);
	return got;
}

static size_t map_add(slab_map_entry_t *out, size_t max, size_t got,
    const slab_cache_t *c, uintptr_t start, size_t bytes, bool desc)
{
	if (got >= max)
		return got;
	slab_map_entry_t *e = &out[got];
	str_cpy(e->name, sizeof(e->name), c->name);
	e->start = start;
	e->bytes = bytes;
	e->desc = desc;
	return got + 1;
}

static size_t map_list(slab_map_entry_t *out, size_t max, size_t got,
    const slab_cache_t *c, const list_t *slabs)
{
	list_foreach(slabs, l) {
		if (got >= max)
			break;
		got = map_add(out, max, got, c,
		    (uintptr_t) list_get_instance(l, slab_t, link), c->slab_bytes,
		    false);
	}
	return got;
}

size_t slab_map_snapshot(slab_map_entry_t *out, size_t max)
{
	size_t got = 0;
	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_foreach(&slab_cache_list, l) {
		if (got >= max)
			break;
		slab_cache_t *c = list_get_instance(l, slab_cache_t, link);
		got = map_add(out, max, got, c, (uintptr_t) c, sizeof(*c), true);
		/* The slab lists are protected by the cache lock. */
		irq_spinlock_lock(&c->lock, true);
		got = map_list(out, max, got, c, &c->slabs_partial);
		got = map_list(out, max, got, c, &c->slabs_full);
		got = map_list(out, max, got, c, &c->slabs_empty);
		irq_spinlock_unlock(&c->lock, true);
	}
	irq_spinlock_unlock(&slab_cache_list_lock, true);
	return got;
}

const char *slab_cache_name(slab_cache_t *c)
{
	return c->name;
}
