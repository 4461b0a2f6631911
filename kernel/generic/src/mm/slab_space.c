/** @file slab_space.c
 * Slab allocator: the slab layer (the cold path under the cache lock).
 *
 * The magazine layer and the allocation fast paths are in slab.c, whose file
 * comment describes the whole allocator; slab_impl.h is what the files share.
 * This file holds the slabs themselves: creating and freeing a slab
 * (slab_space_alloc(), slab_space_free()), taking objects out of the slabs
 * and returning them (slab_objs_get(), slab_objs_put(): a magazine's worth in
 * one hold of the cache lock), freeing a cache's empty slabs
 * (slab_cache_free_empty(), for slab_reclaim() and cache destruction), the
 * debug poison check and the count of frames all caches hold.
 *
 * **Slabs.** A slab is a block of 2^order frames from frame_alloc(), which returns
 * blocks naturally aligned to their size, so the slab of an object is found by
 * rounding its address down to the slab size. The slab descriptor (slab_t) sits at
 * the start of the slab; the objects follow at the first aligned offset. The order
 * (chosen by slab_cache.c) is the smallest (up to SLAB_MAX_ORDER) for which the
 * space lost to the descriptor and the tail is at most 1/8 of the slab (or, when
 * no order achieves that, the order that loses the smallest fraction). Free
 * objects of a slab are linked through their first machine word. A cache keeps
 * its slabs on three lists (partial, full, empty); allocation prefers partial
 * slabs. A slab that becomes completely free is kept on the empty list if the
 * cache keeps fewer than SLAB_KEEP_EMPTY empty slabs, otherwise it is freed at
 * once; slab_reclaim() frees all empty slabs. Objects in slabs are not
 * constructed: the callers (slab.c) run the constructor and destructor, with
 * no lock held.
 *
 * **Locking.** The slab lists, slab_t.free/available/link, nslabs, nempty and
 * objs_used: the cache's lock (an IRQ spinlock, so interrupt handlers may
 * allocate), taken here and only here for them. A slab being formatted by
 * slab_space_alloc() or freed by slab_space_free() is on no list and owned by
 * its caller. The frame allocator is called with no slab lock held (the lock is
 * dropped around slab_space_alloc() and the slabs to free are collected on a
 * local list first). frames (per cache) and slab_frames_held_cnt: atomics.
 */

#include <debug/kasan.h>
#include "slab_impl.h"

/** Frames held by all caches. Atomics. */
static atomic_t slab_frames_held_cnt = ATOMIC_INIT(0);

/*
 * Debug poisoning (caches without a constructor; cache_poisons() is in
 * slab_impl.h).
 */

#ifdef CONFIG_DEBUG
/** Panics if the poison of free object @a obj (after its first word) was changed. */
void slab_obj_check_poison(slab_cache_t *c, void *obj)
{
	const uint8_t *p = (const uint8_t *) obj + sizeof(void *);
	const uint8_t *end = (const uint8_t *) obj + c->size;

	for (; p < end; p++) {
		if (*p != SLAB_POISON) {
			panic("slab: free object %p of cache '%s' (%zu B) modified at "
			    "offset %zu (write after free)", obj, c->name, c->size,
			    (size_t) (p - (const uint8_t *) obj));
		}
	}
}
#endif

/*
 * Slab layer.
 */

/** Allocates and formats a new slab; no lock held. NULL when out of frames. */
static slab_t *slab_space_alloc(slab_cache_t *c)
{
	size_t frames = (size_t) 1 << c->order;
	uintptr_t pa = frame_alloc(frames, FRAME_NONE);

	if (pa == 0)
		return NULL;

	slab_t *s = PA2KA(pa);
	s->magic = SLAB_MAGIC;
	s->cache = c;
	link_initialize(&s->link);
	s->available = c->objs;

	uint8_t *first = (uint8_t *) s + c->first_off;
#ifdef CONFIG_KASAN
	kasan_slab_new(first, c->slab_bytes - c->first_off);
#endif
#ifdef CONFIG_DEBUG
	if (cache_poisons(c))
		memset(first, SLAB_POISON, c->objs * c->size);
#endif
	void *next = NULL;
	for (size_t i = c->objs; i-- > 0;) {
		void *obj = first + i * c->size;
		*(void **) obj = next;
		next = obj;
	}
	s->free = next;

	atomic_add(&c->frames, frames);
	atomic_add(&slab_frames_held_cnt, frames);
	return s;
}

/** Returns the frames of an unlinked, completely free slab; no lock held. */
static size_t slab_space_free(slab_cache_t *c, slab_t *s)
{
	size_t frames = (size_t) 1 << c->order;

	assert(s->available == c->objs);
	s->magic = 0;
	frame_free(KA2PA(s), frames);
	atomic_sub(&c->frames, frames);
	atomic_sub(&slab_frames_held_cnt, frames);
	return frames;
}

/**
 * Takes up to @a want (unconstructed) objects out of the slabs into @a objs in
 * one hold of the cache lock, creating a slab (with the lock dropped) only
 * when no slab has a free object and none was taken yet.
 * @return the number taken: 0 only when the frame allocator is exhausted.
 */
size_t slab_objs_get(slab_cache_t *c, void **objs, size_t want)
{
	size_t got = 0;

	irq_spinlock_lock(&c->lock, true);
	while (got < want) {
		if (list_empty(&c->slabs_partial) && list_empty(&c->slabs_empty)) {
			if (got > 0)
				break;
			irq_spinlock_unlock(&c->lock, true);
			slab_t *fresh = slab_space_alloc(c);
			if (fresh == NULL)
				return 0;
			irq_spinlock_lock(&c->lock, true);
			list_append(&fresh->link, &c->slabs_empty);
			c->nslabs++;
			c->nempty++;
			continue;
		}

		slab_t *s;
		if (!list_empty(&c->slabs_partial)) {
			s = list_get_instance(list_first(&c->slabs_partial), slab_t, link);
		} else {
			s = list_get_instance(list_first(&c->slabs_empty), slab_t, link);
			list_remove(&s->link);
			list_prepend(&s->link, &c->slabs_partial);
			c->nempty--;
		}
		while (got < want && s->available > 0) {
			void *obj = s->free;
			assert(obj != NULL);
			s->free = *(void **) obj;
			s->available--;
			c->objs_used++;
			objs[got++] = obj;
		}
		if (s->available == 0) {
			list_remove(&s->link);
			list_append(&s->link, &c->slabs_full);
		}
	}
	irq_spinlock_unlock(&c->lock, true);

#ifdef CONFIG_DEBUG
	if (cache_poisons(c)) {
		for (size_t i = 0; i < got; i++)
			slab_obj_check_poison(c, objs[i]);
	}
#endif
	return got;
}

/**
 * Returns @a n (destructed, poisoned where applicable) objects to their slabs and
 * frees slabs that become completely free beyond SLAB_KEEP_EMPTY.
 * Panics on an object of another cache or an object that is already free.
 * @return frames freed.
 */
size_t slab_objs_put(slab_cache_t *c, void **objs, size_t n)
{
	list_t release;
	size_t frames = 0;

	list_initialize(&release);
	irq_spinlock_lock(&c->lock, true);
	for (size_t i = 0; i < n; i++) {
		void *obj = objs[i];
		slab_t *s = obj_slab_checked(c, obj);

		if (s->available >= c->objs || c->objs_used == 0)
			panic("slab_free('%s', %p): object already free", c->name, obj);
		*(void **) obj = s->free;
		s->free = obj;
		if (s->available == 0) {
			list_remove(&s->link);
			list_prepend(&s->link, &c->slabs_partial);
		}
		s->available++;
		c->objs_used--;
		if (s->available == c->objs) {
			list_remove(&s->link);
			if (c->nempty < SLAB_KEEP_EMPTY) {
				list_append(&s->link, &c->slabs_empty);
				c->nempty++;
			} else {
				list_append(&s->link, &release);
				c->nslabs--;
			}
		}
	}
	irq_spinlock_unlock(&c->lock, true);

	link_t *l;
	while ((l = list_first(&release)) != NULL) {
		list_remove(l);
		frames += slab_space_free(c, list_get_instance(l, slab_t, link));
	}
	return frames;
}

/** Frees every empty slab of @a c. @return frames freed. No lock held. */
size_t slab_cache_free_empty(slab_cache_t *c)
{
	list_t release;
	size_t frames = 0;

	list_initialize(&release);
	irq_spinlock_lock(&c->lock, true);
	link_t *l;
	while ((l = list_first(&c->slabs_empty)) != NULL) {
		list_remove(l);
		list_append(l, &release);
		c->nslabs--;
		c->nempty--;
	}
	irq_spinlock_unlock(&c->lock, true);

	while ((l = list_first(&release)) != NULL) {
		list_remove(l);
		frames += slab_space_free(c, list_get_instance(l, slab_t, link));
	}
	return frames;
}

size_t slab_frames_held(void)
{
	return atomic_get(&slab_frames_held_cnt);
}
