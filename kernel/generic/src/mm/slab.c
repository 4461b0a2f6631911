/** @file slab.c
 * Slab allocator: object caches with per-CPU magazines (Bonwick, HelenOS style);
 * this file: the magazine layer and the allocation fast paths.
 *
 * See mm/slab.h for the interface and the constructor semantics. This comment is
 * about the implementation.
 *
 * **Slabs** (slab_space.c, the slab layer: the cold path under the cache lock).
 * A slab is a block of 2^order frames naturally aligned to its size, holding a
 * descriptor (slab_t) and objects linked through their first word when free;
 * a cache keeps its slabs on partial, full and empty lists. This file holds
 * the layer above it, which serves almost every allocation and free: the
 * per-CPU magazines, the depot, and slab_alloc()/slab_free(); it goes to the
 * slab layer (slab_objs_get(), slab_objs_put()) only on a miss.
 *
 * **Magazines.** Each cache has, for every CPU, a slab_cpu_cache_t with two
 * magazines (current and last, either may be NULL). The owning CPU uses them only
 * with interrupts disabled, which makes the fast path safe against interrupt
 * handlers and preemption without any lock or atomic read-modify-write:
 * - alloc: pop from current; if empty and last is non-empty, swap them and pop;
 *   otherwise exchange with the depot (cache lock): a full magazine from the depot
 *   becomes current, the old current becomes last and the old (empty) last goes to
 *   the depot's empty list. If the depot has no full magazine: slab layer.
 * - free: push into current; if full and last has room, swap and push; otherwise
 *   get an empty magazine (the depot's, or a new one allocated from the magazine
 *   cache with interrupts enabled, then retry), the old (full) last goes to the
 *   depot's full list, the old current becomes last. If no magazine can be had:
 *   slab layer.
 * **Per-CPU stacks.** Besides its two magazines, each CPU keeps its own stacks of
 *   full and empty magazines (slab_cpu_cache_t.full/empty, at most
 *   slab_cache_t.cpu_cap each: 1/1024 of memory in objects, at least 4
 *   magazines), used with interrupts disabled like the two magazines and with no
 *   lock: a free that finds both magazines full parks the old last on the full
 *   stack and takes an empty one from the empty stack; an allocation that finds
 *   both empty takes a full one from the full stack and parks the old last on
 *   the empty stack. Only when a stack is empty (or full) does the CPU go to the
 *   shared depot under the cache lock. This is for objects freed through RCU:
 *   a CPU's reclaimer thread frees a grace period's batch (thousands of objects)
 *   on that CPU, and that CPU's updaters allocate them again; through the
 *   shared depot the batch took the cache lock once a magazine and its objects
 *   went to whichever CPU asked next (chtbench 15, -smp 2, 20 % updates: 5.3-5.6
 *   transfers per operation, the cache's lock line hottest; with the stacks and
 *   the batched refill below 1.46). The reclaim path empties the stacks with the
 *   two magazines (cpu_slot_detach()); they are not trimmed over time.
 * **Batched refill.** When the CPU's stacks and the depot have no full magazine,
 *   slab_alloc() fills a whole magazine from the slab layer in one hold of the
 *   cache lock (mag_refill(), slab_objs_get()), constructs the objects with no
 *   lock held and installs the magazine in the CPU's slot: the objects a CPU
 *   allocates while its RCU-deferred frees wait for their grace period come a
 *   magazine at a time, not one lock hold each.
 * **Bulk frees.** slab_free_bulk() frees an array of objects of one cache
 *   with one interrupts-disabled section per run that fits the current
 *   magazine (a full one is exchanged by slab_free()); RCU's reclaimer hands
 *   it the frees its callbacks gathered (rcu_slab_free()).
 * **The depot's working set** (Bonwick and Adams, "Magazines and Vmem", USENIX
 * 2001, section 3.6). The depot keeps what the cache's recent demand needs: the
 * fewest full (and empty) magazines it held during each interval of
 * SLAB_DEPOT_TRIM_US were never used in that interval, and the next depot
 * exchange after the interval frees them (SLAB_DEPOT_TRIM_BATCH per exchange, so
 * no single call pays for a large trim). Only magazines above depot_base() are
 * trimmed. A hard cap, depot_cap() (the objects of a depot list at most 1/256 of
 * memory), bounds a burst: a full magazine pushed beyond it is flushed back to
 * its slabs, an empty one is freed; slab_reclaim() empties every depot. This
 * matters for objects freed through RCU: a grace period's batch of callbacks
 * frees thousands of objects at once that the updaters then allocate again; with
 * a small fixed depot they went through the slab layer both ways (chtbench 7 at
 * 100 % updates, icount: 608 instructions per update with a depot of
 * 4 + 2 x CPUs magazines). Magazine capacity depends on the object size: 32 objects up to 256 B, 16
 * up to 2 KiB, 8 up to 16 KiB, 4 above. Objects in magazines are constructed.
 *
 * Interrupts rather than only preemption are disabled on the fast path for two
 * reasons: interrupt handlers may then use the magazines too, and a timer tick on a
 * CPU proves that the CPU is not inside a magazine operation, which is what lets
 * another CPU flush its magazines without a per-CPU lock (the flush_req
 * protocol, in the file comment of slab_reclaim.c).
 *
 * **Locking and what protects what.**
 * - slab_cache_t fields set at creation (name, size, geometry, constructor, ...):
 *   immutable.
 * - the depot (depot_full, depot_empty, their counts and the working-set
 *   fields): the cache's lock, an IRQ spinlock (taken with interrupts disabled
 *   so interrupt handlers may allocate). The same lock protects the slab lists,
 *   slab_t.free/available/link, nslabs, nempty and objs_used, which
 *   slab_space.c changes (slab_cache.c reads them for statistics and at
 *   destruction).
 * - slab_cpu_cache_t of CPU i (current, last, the full and empty stacks with
 *   their counts, and the statistics): CPU i with
 *   interrupts disabled, or a reclaimer that owns the slot through the flush_req
 *   protocol (slab_reclaim.c). Statistics are written with relaxed atomic stores and read
 *   racily by slab_cache_get_stats().
 * - magazines: in a slot or on a CPU's stack (slab_magazine_t.next), owned like the slot; in the depot, by the cache lock; on a
 *   local list of a reclaim, by that reclaim.
 * - slab_cache_list and slab_cache_t.link: slab_cache_list_lock (IRQ spinlock). A cache is
 *   removed from the list only by slab_cache_destroy() holding slab_reclaim_busy, so a
 *   reclaim (holding slab_reclaim_busy) may walk the list dropping the lock in between.
 * - frames, slow_allocs, slow_frees, misses: atomics (slab_frames_held_cnt:
 *   slab_space.c).
 * Lock order: slab_cache_list_lock -> cache lock -> (frame allocator's zone locks are
 * never taken under a slab lock: frame_alloc()/frame_free() are called with no slab
 * lock held). Constructors and destructors run with no slab lock held.
 */

#include <debug/kasan.h>
#include "slab_impl.h"

slab_cpu_flag_t slab_cpu_flags[CONFIG_MAX_CPUS];

/** The bootstrap cache of magazines (a static descriptor, never destroyed;
 *  set up by slab_cache_init() with the cache of caches). */
slab_cache_t slab_mag_cache;

/** Magazines per depot list that a trim always leaves: scales with the CPUs. */
static size_t depot_base(void)
{
	return 4 + 2 * (size_t) atomic_get(&cpu_active_count);
}

/** Interval of the depot working-set trim (file comment). */
#define SLAB_DEPOT_TRIM_US     1000000
/** Magazines one depot exchange frees at most when it trims. */
#define SLAB_DEPOT_TRIM_BATCH  8

/** Most magazines either depot list of @a c may hold (file comment). */
static inline size_t depot_cap(slab_cache_t *c)
{
	size_t base = depot_base();
	return c->depot_cap > base ? c->depot_cap : base;
}

/** Takes one magazine off the depot's full list; cache lock held. */
static inline link_t *depot_take_full(slab_cache_t *c)
{
	link_t *lk = list_first(&c->depot_full);
	if (lk != NULL) {
		list_remove(lk);
		if (--c->ndepot_full < c->depot_full_min)
			c->depot_full_min = c->ndepot_full;
	}
	return lk;
}

/** Takes one magazine off the depot's empty list; cache lock held. */
static inline link_t *depot_take_empty(slab_cache_t *c)
{
	link_t *lk = list_first(&c->depot_empty);
	if (lk != NULL) {
		list_remove(lk);
		if (--c->ndepot_empty < c->depot_empty_min)
			c->depot_empty_min = c->ndepot_empty;
	}
	return lk;
}

/**
 * The working-set trim, called at depot exchanges with the cache lock held:
 * when an interval has passed, the fewest magazines the depot held during it
 * become due for freeing; up to SLAB_DEPOT_TRIM_BATCH due magazines (the least
 * recently used: list tails) move to @a out, which the caller destroys after
 * dropping the lock.
 */
static void depot_trim_locked(slab_cache_t *c, list_t *out)
{
	assert(irq_spinlock_locked_by_me(&c->lock));
	uint64_t now = uptime_us();
	if (now - c->depot_trim_us >= SLAB_DEPOT_TRIM_US) {
		c->depot_trim_us = now;
		c->depot_due_full = c->depot_full_min;
		c->depot_due_empty = c->depot_empty_min;
		c->depot_full_min = c->ndepot_full;
		c->depot_empty_min = c->ndepot_empty;
	}
	size_t base = depot_base();
	for (unsigned i = 0; i < SLAB_DEPOT_TRIM_BATCH; i++) {
		if (c->depot_due_full > 0 && c->ndepot_full > base) {
			link_t *lk = list_last(&c->depot_full);
			list_remove(lk);
			list_append(lk, out);
			c->depot_due_full--;
			if (--c->ndepot_full < c->depot_full_min)
				c->depot_full_min = c->ndepot_full;
		} else if (c->depot_due_empty > 0 && c->ndepot_empty > base) {
			link_t *lk = list_last(&c->depot_empty);
			list_remove(lk);
			list_append(lk, out);
			c->depot_due_empty--;
			if (--c->ndepot_empty < c->depot_empty_min)
				c->depot_empty_min = c->ndepot_empty;
		} else {
			c->depot_due_full = 0;
			c->depot_due_empty = 0;
			break;
		}
	}
}

/**
 * True when the caller may wait for other CPUs: interrupts and preemption enabled
 * (so no spinlock is held) and not in an interrupt handler. A migration between
 * reading CPU and its fields can only make the answer false, never wrongly true.
 */
bool slab_may_wait(void)
{
	if (interrupts_disabled())
		return false;
	cpu_t *c = CPU;
	return c->irq_nesting == 0 && c->preemption_disabled == 0;
}

/*
 * KASAN: a constructor or destructor runs on an object the shadow marks
 * free; it is accessible for the call and free again after it.
 */
static inline void kasan_ctor_enter(slab_cache_t *c, void *obj)
{
	kasan_unpoison(obj, c->obj_size);
}

static inline void kasan_ctor_exit(slab_cache_t *c, void *obj)
{
	kasan_poison(obj, ALIGN_UP(c->obj_size, 8), KASAN_SLAB_FREE);
}

/*
 * Magazines.
 */

/** Allocates an empty magazine for @a c (slab layer of slab_mag_cache); may fail. */
static slab_magazine_t *mag_new(slab_cache_t *c)
{
	slab_magazine_t *m = slab_alloc(&slab_mag_cache, SLAB_ATOMIC | SLAB_KM_NORECLAIM);

	if (m != NULL) {
		link_initialize(&m->link);
		m->cache = c;
		m->busy = 0;
		m->size = c->mag_size;
	}
	return m;
}

/**
 * Gives the objects of @a m back to their slabs (running the destructor) and frees
 * the magazine. No lock held. @return frames freed.
 */
static size_t mag_destroy(slab_magazine_t *m)
{
	slab_cache_t *c = m->cache;
	size_t frames = 0;

	if (m->busy > 0) {
		if (c->destructor != NULL) {
			for (size_t i = 0; i < m->busy; i++) {
				kasan_ctor_enter(c, m->objs[i]);
				frames += c->destructor(m->objs[i]);
				kasan_ctor_exit(c, m->objs[i]);
			}
		}
		frames += slab_objs_put(c, m->objs, m->busy);
		m->busy = 0;
	}
	slab_free(&slab_mag_cache, m);
	return frames;
}

/** Destroys every magazine on @a list. @return frames freed. */
size_t slab_mag_list_destroy(list_t *list)
{
	size_t frames = 0;
	link_t *l;

	while ((l = list_first(list)) != NULL) {
		list_remove(l);
		frames += mag_destroy(list_get_instance(l, slab_magazine_t, link));
	}
	return frames;
}

/**
 * Magazine layer of slab_alloc(): an object from the local CPU's magazines or the
 * depot. @return the object, or NULL on a miss.
 */
static void *mag_obj_get(slab_cache_t *c)
{
	slab_magazine_t *excess = NULL;
	void *obj = NULL;
	list_t trimmed;
	list_initialize(&trimmed);
	ipl_t ipl = interrupts_disable();
	unsigned id = CPU->id;

	if (unlikely(cpu_flush_requested(id)))
		goto out;

	slab_cpu_cache_t *cc = &c->cpu[id];
	slab_magazine_t *m = cc->current;

	if (unlikely(m == NULL || m->busy == 0)) {
		slab_magazine_t *l = cc->last;

		if (l != NULL && l->busy > 0) {
			cc->last = m;
			cc->current = l;
			m = l;
		} else if (cc->full != NULL) {
			/* A full magazine of this CPU's own stack: no lock. */
			slab_magazine_t *f = cc->full;
			cc->full = f->next;
			cc->nfull--;
			if (l != NULL) {
				if (cc->nempty < c->cpu_cap) {
					l->next = cc->empty;
					cc->empty = l;
					cc->nempty++;
				} else {
					excess = l;
				}
			}
			cc->last = m;
			cc->current = f;
			m = f;
		} else {
			/* Both empty (or absent): a full magazine from the depot. */
			irq_spinlock_lock(&c->lock, false);
			depot_trim_locked(c, &trimmed);
			link_t *lk = depot_take_full(c);
			if (lk == NULL) {
				irq_spinlock_unlock(&c->lock, false);
				goto out;
			}
			if (l != NULL) {
				if (c->ndepot_empty < depot_cap(c)) {
					list_prepend(&l->link, &c->depot_empty);
					c->ndepot_empty++;
				} else {
					excess = l;
				}
			}
			cc->last = m;
			m = list_get_instance(lk, slab_magazine_t, link);
			cc->current = m;
			irq_spinlock_unlock(&c->lock, false);
		}
	}

	obj = m->objs[--m->busy];
	stat_inc(&cc->hits);
	stat_inc(&cc->allocs);
out:
	interrupts_restore(ipl);
	if (excess != NULL)
		slab_free(&slab_mag_cache, excess);
	(void) slab_mag_list_destroy(&trimmed);
	return obj;
}

/**
 * Free path, both of this CPU's magazines full: parks the full @a l (the
 * last magazine) on this CPU's full stack, takes an empty magazine from its
 * empty stack, makes it current (the old current @a m becomes last) and puts
 * @a obj into it. No lock: interrupts disabled on the CPU that owns @a cc,
 * whose empty stack is not empty and whose full stack has room.
 */
static inline void mag_exchange_local(slab_cpu_cache_t *cc, slab_magazine_t *m,
    slab_magazine_t *l, void *obj)
{
	slab_magazine_t *e = cc->empty;
	cc->empty = e->next;
	cc->nempty--;
	l->next = cc->full;
	cc->full = l;
	cc->nfull++;
	cc->last = m;
	cc->current = e;
	e->objs[e->busy++] = obj;
}

/** An empty magazine from the depot of @a c, or NULL. Cache lock held. */
static inline slab_magazine_t *mag_depot_take_empty(slab_cache_t *c)
{
	link_t *lk = depot_take_empty(c);
	return lk != NULL ? list_get_instance(lk, slab_magazine_t, link) : NULL;
}

/**
 * Free path, the depot exchange: retires the full magazine @a l (the last
 * of the CPU that owns @a cc) to that CPU's full stack or, that stack full,
 * to the depot's full list.
 *
 * Cache lock held, interrupts disabled on the CPU that owns @a cc.
 * @return The full magazine the depot's cap (depot_cap()) pushed out, for
 *         the caller to destroy with no lock held; NULL if none.
 */
static inline slab_magazine_t *mag_retire_full_locked(slab_cache_t *c,
    slab_cpu_cache_t *cc, slab_magazine_t *l)
{
	if (cc->nfull < c->cpu_cap) {
		/* The old last is full: to this CPU's stack. */
		l->next = cc->full;
		cc->full = l;
		cc->nfull++;
		return NULL;
	}
	/* The old last is full: to the depot. */
	list_prepend(&l->link, &c->depot_full);
	c->ndepot_full++;
	if (c->ndepot_full > depot_cap(c)) {
		link_t *lk = list_last(&c->depot_full);
		list_remove(lk);
		c->ndepot_full--;
		return list_get_instance(lk, slab_magazine_t, link);
	}
	return NULL;
}

/** Counts a free served by the magazines of the CPU that owns @a cc. */
static inline void mag_count_free_hit(slab_cpu_cache_t *cc)
{
	stat_inc(&cc->hits);
	stat_inc(&cc->frees);
}

/**
 * The end of mag_obj_put(), no lock held: frees the new magazine it did not
 * use (@a spare), destroys the one the depot's cap pushed out (@a excess)
 * and those the depot's trim took out (@a trimmed). NULLs are skipped.
 */
static void mag_put_release(slab_magazine_t *spare, slab_magazine_t *excess,
    list_t *trimmed)
{
	if (spare != NULL)
		slab_free(&slab_mag_cache, spare);
	if (excess != NULL)
		(void) mag_destroy(excess);
	(void) slab_mag_list_destroy(trimmed);
}

/**
 * Magazine layer of slab_free(): puts @a obj into the local CPU's magazines,
 * exchanging with the depot or allocating a new magazine when needed.
 * @return false when the object must go to the slab layer.
 */
static bool mag_obj_put(slab_cache_t *c, void *obj)
{
	slab_magazine_t *spare = NULL;
	slab_magazine_t *excess = NULL;
	bool done = false;
	list_t trimmed = LIST_INITIALIZER(trimmed);

	for (;;) {
		ipl_t ipl = interrupts_disable();
		unsigned id = CPU->id;

		if (unlikely(cpu_flush_requested(id))) {
			interrupts_restore(ipl);
			break;
		}

		slab_cpu_cache_t *cc = &c->cpu[id];
		slab_magazine_t *m = cc->current;

		if (likely(m != NULL && m->busy < m->size)) {
			m->objs[m->busy++] = obj;
			mag_count_free_hit(cc);
			interrupts_restore(ipl);
			done = true;
			break;
		}

		slab_magazine_t *l = cc->last;
		if (l != NULL && l->busy < l->size) {
			cc->last = m;
			cc->current = l;
			l->objs[l->busy++] = obj;
			mag_count_free_hit(cc);
			interrupts_restore(ipl);
			done = true;
			break;
		}

		/*
		 * Both full (or absent): an empty magazine is needed. With an
		 * empty one on this CPU's stack and room on its full stack, the
		 * exchange stays on this CPU: no lock.
		 */
		if (l != NULL && cc->empty != NULL && cc->nfull < c->cpu_cap) {
			mag_exchange_local(cc, m, l, obj);
			mag_count_free_hit(cc);
			interrupts_restore(ipl);
			done = true;
			break;
		}

		irq_spinlock_lock(&c->lock, false);
		depot_trim_locked(c, &trimmed);
		/* The caller's new magazine, else an empty one of the depot. */
		slab_magazine_t *e = spare != NULL ? spare : mag_depot_take_empty(c);
		spare = NULL;
		if (e == NULL) {
			irq_spinlock_unlock(&c->lock, false);
			interrupts_restore(ipl);
			/* With interrupts as the caller had them; we may migrate. */
			spare = mag_new(c);
			if (spare == NULL)
				break;
			continue;
		}
		if (l != NULL)
			excess = mag_retire_full_locked(c, cc, l);
		cc->last = m;
		cc->current = e;
		e->objs[e->busy++] = obj;
		mag_count_free_hit(cc);
		irq_spinlock_unlock(&c->lock, false);
		interrupts_restore(ipl);
		done = true;
		break;
	}

	mag_put_release(spare, excess, &trimmed);
	return done;
}

/**
 * The miss path of a magazine cache (the depot had no full magazine): fills a
 * magazine from the slab layer in one hold of the cache lock (slab_objs_get()),
 * constructs its objects with no lock held, returns one of them and installs
 * the magazine with the rest in the local CPU's slot. One trip to the slab
 * layer then serves up to mag_size allocations instead of one: the objects a
 * CPU allocates while its RCU-deferred frees wait for a grace period come from
 * the slabs a magazine at a time (Linux SLAB's batched refill, cache_alloc_refill()).
 * The magazine is the slot's empty one when it has one, else a new one.
 * @return the object, or NULL when no object could be had (the caller then
 *         goes to the single-object path with its reclaim).
 */
static void *mag_refill(slab_cache_t *c, unsigned kmflags)
{
	slab_magazine_t *m = NULL;
	ipl_t ipl = interrupts_disable();
	unsigned id = CPU->id;

	if (unlikely(cpu_flush_requested(id))) {
		interrupts_restore(ipl);
		return NULL;
	}
	slab_cpu_cache_t *cc = &c->cpu[id];
	if (cc->empty != NULL) {
		m = cc->empty;
		cc->empty = m->next;
		cc->nempty--;
	} else if (cc->last != NULL && cc->last->busy == 0) {
		m = cc->last;
		cc->last = NULL;
	} else if (cc->current != NULL && cc->current->busy == 0) {
		m = cc->current;
		cc->current = NULL;
	}
	interrupts_restore(ipl);

	if (m == NULL) {
		m = mag_new(c);
		if (m == NULL)
			return NULL;
	}

	size_t n = slab_objs_get(c, m->objs, m->size);
	if (n > 0 && c->constructor != NULL) {
		for (size_t i = 0; i < n; i++) {
			kasan_ctor_enter(c, m->objs[i]);
			int rc = c->constructor(m->objs[i], kmflags);
			kasan_ctor_exit(c, m->objs[i]);
			if (rc != 0) {
				/* The rest go back unconstructed. */
				(void) slab_objs_put(c, &m->objs[i], n - i);
				n = i;
				break;
			}
		}
	}
	if (n == 0) {
		slab_free(&slab_mag_cache, m);
		return NULL;
	}
	void *obj = m->objs[n - 1];
	m->busy = n - 1;
	atomic_inc(&c->slow_allocs);

	/* Install it; we may have migrated, so look at the slot again. */
	slab_magazine_t *extra = NULL;
	ipl = interrupts_disable();
	id = CPU->id;
	if (unlikely(cpu_flush_requested(id))) {
		extra = m;
	} else {
		cc = &c->cpu[id];
		if (cc->current == NULL || cc->current->busy == 0) {
			if (cc->last == NULL) {
				cc->last = cc->current;
			} else {
				extra = cc->current;
			}
			cc->current = m;
		} else if (cc->last == NULL || cc->last->busy == 0) {
			extra = cc->last;
			cc->last = m;
		} else {
			extra = m;
		}
	}
	interrupts_restore(ipl);
	if (extra != NULL)
		(void) mag_destroy(extra);
	return obj;
}

/*
 * Allocation and free.
 */

/**
 * slab_alloc() without KASAN's marks. Always inlined into its one caller:
 * left to itself GCC keeps it out of line (it is on a cycle through the
 * magazine allocation, mag_alloc() -> slab_alloc()), and every slab_alloc()
 * of a build without KASAN paid a jump to it.
 */
static inline __attribute__((always_inline)) void *slab_alloc_raw(
    slab_cache_t *c, unsigned kmflags)
{
	void *obj;

	assert(c != NULL && c->magic == SLAB_CACHE_MAGIC);

	if (likely(cache_has_magazines(c))) {
		obj = mag_obj_get(c);
		if (likely(obj != NULL)) {
#ifdef CONFIG_DEBUG
			if (cache_poisons(c))
				slab_obj_check_poison(c, obj);
#endif
			return obj;
		}
		atomic_inc(&c->misses);
		obj = mag_refill(c, kmflags);
		if (obj != NULL)
			return obj;
	}

	obj = slab_obj_get(c);
	if (obj == NULL && !(kmflags & SLAB_KM_NORECLAIM)) {
		bool all = !(kmflags & SLAB_ATOMIC) && slab_may_wait();
		(void) slab_reclaim(all ? SLAB_RECLAIM_ALL : 0);
		obj = slab_obj_get(c);
	}
	if (obj == NULL)
		return NULL;

	kasan_ctor_enter(c, obj);
	if (c->constructor != NULL && c->constructor(obj, kmflags) != 0) {
		(void) slab_objs_put(c, &obj, 1);
		return NULL;
	}
	atomic_inc(&c->slow_allocs);
	return obj;
}

void *slab_alloc(slab_cache_t *c, unsigned kmflags)
{
	void *obj = slab_alloc_raw(c, kmflags);
#ifdef CONFIG_KASAN
	if (obj != NULL)
		kasan_slab_alloc(c, obj, c->obj_size);
#endif
	return obj;
}

void slab_free_bulk(slab_cache_t *c, void **objs, size_t n)
{
#if defined(CONFIG_DEBUG) || defined(CONFIG_KASAN)
	for (size_t i = 0; i < n; i++)
		slab_free(c, objs[i]);
#else
	assert(c != NULL && c->magic == SLAB_CACHE_MAGIC);
	while (n > 0) {
		if (likely(cache_has_magazines(c))) {
			/* The fast path of mag_obj_put(), a run at a time. */
			ipl_t ipl = interrupts_disable();
			unsigned id = CPU->id;
			slab_cpu_cache_t *cc = &c->cpu[id];
			slab_magazine_t *m = cc->current;
			if (likely(!cpu_flush_requested(id) && m != NULL &&
			    m->busy < m->size)) {
				size_t k = m->size - m->busy;
				if (k > n)
					k = n;
				void **dst = &m->objs[m->busy];
				/* Unrolled: 2.75 instructions an object, not 5. */
#pragma GCC unroll 4
				for (size_t i = 0; i < k; i++)
					dst[i] = objs[i];
				m->busy += k;
				/* Statistics: CPU-local, interrupts disabled. */
				__atomic_store_n(&cc->hits, __atomic_load_n(&cc->hits,
				    __ATOMIC_RELAXED) + k, __ATOMIC_RELAXED);
				__atomic_store_n(&cc->frees, __atomic_load_n(&cc->frees,
				    __ATOMIC_RELAXED) + k, __ATOMIC_RELAXED);
				interrupts_restore(ipl);
				objs += k;
				n -= k;
				continue;
			}
			interrupts_restore(ipl);
		}
		/* Magazine full (or none, or a flush pending): the exchange. */
		slab_free(c, *objs++);
		n--;
	}
#endif
}

void slab_free(slab_cache_t *c, void *obj)
{
#ifdef CONFIG_KASAN
	assert(c != NULL && c->magic == SLAB_CACHE_MAGIC);
	assert(obj != NULL);
	(void) obj_slab_checked(c, obj);
	/*
	 * The allocator's own magazines go back at once: slab_reclaim() frees
	 * them after its quarantine flush, and must leave no slab behind.
	 */
	if (c != &slab_mag_cache && kasan_slab_free(c, obj, c->obj_size))
		return;
	slab_free_now(c, obj);
}

/** Frees @a obj at once (KASAN's quarantine releases through it). */
void slab_free_now(slab_cache_t *c, void *obj)
{
#endif
	assert(c != NULL && c->magic == SLAB_CACHE_MAGIC);
	assert(obj != NULL);

#ifdef CONFIG_DEBUG
	(void) obj_slab_checked(c, obj);
	if (cache_poisons(c))
		memset(obj, SLAB_POISON, c->size);
#endif

	if (likely(cache_has_magazines(c))) {
		if (likely(mag_obj_put(c, obj)))
			return;
		atomic_inc(&c->misses);
	}

	if (c->destructor != NULL) {
		kasan_ctor_enter(c, obj);
		(void) c->destructor(obj);
		kasan_ctor_exit(c, obj);
	}
	(void) slab_objs_put(c, &obj, 1);
	atomic_inc(&c->slow_frees);
}
