/** @file slab_reclaim.c
 * Slab allocator: giving memory back. The reclaim lock (one reclaim or cache
 * destruction at a time), flushing the per-CPU magazines of every CPU (the
 * flush_req protocol), slab_cache_flush() for slab_cache_destroy(), and
 * slab_reclaim() (see slab.c for the rest of the design).
 *
 * **Flushing another CPU's magazines** (slab_reclaim(SLAB_RECLAIM_ALL),
 * slab_cache_destroy()). The reclaimer sets flush_req of every online CPU (one
 * flag per CPU for all caches; a CPU that sees its flag set bypasses its
 * magazines and the depot and goes straight to the slab layer), reads each
 * CPU's tick counter (cpu_t.ticks, incremented first thing by the timer
 * interrupt on that CPU) and waits until each has advanced by two. A magazine
 * operation runs with interrupts disabled, so it lies entirely before or after
 * each tick. An operation before the second tick has all its stores visible
 * once that tick's increment is visible: clock_tick() stores the tick with
 * release order (on a weakly ordered CPU such as arm64 nothing else would
 * keep the magazine stores before it) and the reclaimer loads it with
 * acquire. An operation after the second tick follows, in program order,
 * the first tick's increment and the full fence clock_tick() executes right
 * after it, so its load of flush_req happens after the first increment became
 * visible, which is after the reclaimer read the old tick value, which (by
 * the reclaimer's full fence between its stores of the flags and its loads
 * of the ticks) is after its store of the flag: it sees the flag and keeps
 * off its magazines. (A store-buffering pattern: each side needs its full
 * fence; x86's TSO gave the CPU side one for free in the locked instructions
 * that follow the tick, arm64 gives none.) The reclaimer then owns
 * the magazine slots of those CPUs, detaches the magazines, and clears the
 * flags with release stores (the owner's acquire load of its flag then sees the
 * detached slots). A CPU whose ticks do not advance within
 * SLAB_FLUSH_TIMEOUT_US is skipped (its magazines stay; a warning is printed).
 * Only one reclaim runs at a time (slab_reclaim_busy); a full reclaim that had to
 * wait for another one skips its pass if a complete pass started after it was
 * called. The wait for ticks is why a full reclaim needs interrupts and
 * preemption enabled: a CPU spinning with interrupts disabled on a lock the
 * reclaimer held would never tick.
 */
#include <debug/kasan.h>
#include "slab_impl.h"

/** 1 while a reclaim or a cache destruction runs. Atomics (a try-lock). */
static int slab_reclaim_busy;
/**
 * Full reclaims (SLAB_RECLAIM_ALL) started and completed, as sequence numbers:
 * written under slab_reclaim_busy, read with atomics. A full reclaim that waited for
 * slab_reclaim_busy skips its own pass when one that started after its call completed
 * meanwhile (many CPUs out of memory at once then wait for one pass, not for one
 * each).
 */
static uint64_t slab_reclaim_all_started;
static uint64_t slab_reclaim_all_done;

/** One step of a wait loop: yield when possible, spin otherwise. */
static void slab_wait_relax(void)
{
	if (THREAD != NULL && slab_may_wait())
		thread_yield();
	else
		cpu_relax();
}

static bool slab_reclaim_trylock(void)
{
	int expected = 0;
	return __atomic_compare_exchange_n(&slab_reclaim_busy, &expected, 1, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void slab_reclaim_lock(void)
{
	while (!slab_reclaim_trylock())
		slab_wait_relax();
}

void slab_reclaim_unlock(void)
{
	__atomic_store_n(&slab_reclaim_busy, 0, __ATOMIC_RELEASE);
}

/** Moves the magazines of slot @a cc (current, last and both stacks) to @a out (the caller owns the slot). */
static void cpu_slot_detach(slab_cpu_cache_t *cc, list_t *out)
{
	if (cc->current != NULL)
		list_append(&cc->current->link, out);
	if (cc->last != NULL)
		list_append(&cc->last->link, out);
	cc->current = NULL;
	cc->last = NULL;
	for (slab_magazine_t *m = cc->full, *next; m != NULL; m = next) {
		next = m->next;
		list_append(&m->link, out);
	}
	for (slab_magazine_t *m = cc->empty, *next; m != NULL; m = next) {
		next = m->next;
		list_append(&m->link, out);
	}
	cc->full = NULL;
	cc->empty = NULL;
	cc->nfull = 0;
	cc->nempty = 0;
}

/**
 * Takes the magazines of every online CPU (of cache @a only, or of all caches) to
 * @a out, using the flush_req/tick protocol of the file comment. slab_reclaim_busy held;
 * slab_may_wait() is true.
 */
static void slab_flush_all_cpus(slab_cache_t *only, list_t *out)
{
	uint64_t t0[CONFIG_MAX_CPUS];
	bool flagged[CONFIG_MAX_CPUS];
	bool owned[CONFIG_MAX_CPUS];
	unsigned n = MIN(cpu_count, (unsigned) CONFIG_MAX_CPUS);

	for (unsigned i = 0; i < n; i++) {
		flagged[i] = cpu_is_online(i);
		owned[i] = false;
		if (flagged[i])
			__atomic_store_n(&slab_cpu_flags[i].flush_req, 1, __ATOMIC_SEQ_CST);
	}
	memory_barrier();
	for (unsigned i = 0; i < n; i++) {
		if (flagged[i])
			t0[i] = __atomic_load_n(&cpus[i].ticks, __ATOMIC_ACQUIRE);
	}

	uint64_t start = uptime_us();
	for (unsigned i = 0; i < n; i++) {
		if (!flagged[i])
			continue;
		owned[i] = true;
		while (__atomic_load_n(&cpus[i].ticks, __ATOMIC_ACQUIRE) <
		    t0[i] + SLAB_FLUSH_TICKS) {
			if (uptime_us() - start > SLAB_FLUSH_TIMEOUT_US) {
				printf("slab: CPU %u takes no timer ticks; its magazines "
				    "are not flushed\n", i);
				owned[i] = false;
				break;
			}
			slab_wait_relax();
		}
	}

	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_foreach(&slab_cache_list, l) {
		slab_cache_t *c = list_get_instance(l, slab_cache_t, link);
		if ((only != NULL && c != only) || !cache_has_magazines(c))
			continue;
		for (unsigned i = 0; i < n; i++) {
			if (owned[i])
				cpu_slot_detach(&c->cpu[i], out);
		}
	}
	irq_spinlock_unlock(&slab_cache_list_lock, true);

	for (unsigned i = 0; i < n; i++) {
		if (flagged[i])
			__atomic_store_n(&slab_cpu_flags[i].flush_req, 0, __ATOMIC_RELEASE);
	}
}

/**
 * Takes the calling CPU's magazines (of @a only, or of all caches) to @a out.
 * slab_reclaim_busy held (so no remote flush owns the slots). Any context.
 */
static void slab_flush_local_cpu(slab_cache_t *only, list_t *out)
{
	/* The IRQ lock keeps interrupts off: the slots are ours meanwhile. */
	irq_spinlock_lock(&slab_cache_list_lock, true);
	unsigned id = CPU->id;
	assert(!cpu_flush_requested(id));
	list_foreach(&slab_cache_list, l) {
		slab_cache_t *c = list_get_instance(l, slab_cache_t, link);
		if ((only == NULL || c == only) && cache_has_magazines(c))
			cpu_slot_detach(&c->cpu[id], out);
	}
	irq_spinlock_unlock(&slab_cache_list_lock, true);
}

/** Moves every depot magazine (of @a only, or of all caches) to @a out. */
static void slab_drain_depots(slab_cache_t *only, list_t *out)
{
	irq_spinlock_lock(&slab_cache_list_lock, true);
	list_foreach(&slab_cache_list, l) {
		slab_cache_t *c = list_get_instance(l, slab_cache_t, link);
		if ((only != NULL && c != only) || !cache_has_magazines(c))
			continue;
		irq_spinlock_lock(&c->lock, false);
		link_t *m;
		while ((m = list_first(&c->depot_full)) != NULL) {
			list_remove(m);
			list_append(m, out);
		}
		while ((m = list_first(&c->depot_empty)) != NULL) {
			list_remove(m);
			list_append(m, out);
		}
		c->ndepot_full = 0;
		c->ndepot_empty = 0;
		irq_spinlock_unlock(&c->lock, false);
	}
	irq_spinlock_unlock(&slab_cache_list_lock, true);
}

/** Frees the empty slabs of every cache. slab_reclaim_busy held. @return frames. */
static size_t free_all_empty_slabs(void)
{
	size_t frames = 0;

	irq_spinlock_lock(&slab_cache_list_lock, true);
	/* Not list_foreach: the list lock is held for each step only. */
	link_t *l = list_first(&slab_cache_list);
	irq_spinlock_unlock(&slab_cache_list_lock, true);
	while (l != NULL) {
		/* Caches are not removed while slab_reclaim_busy is held. */
		frames += slab_cache_free_empty(list_get_instance(l, slab_cache_t,
		    link));
		irq_spinlock_lock(&slab_cache_list_lock, true);
		l = list_next(l, &slab_cache_list);
		irq_spinlock_unlock(&slab_cache_list_lock, true);
	}
	return frames;
}

size_t slab_reclaim(unsigned flags)
{
	bool all = (flags & SLAB_RECLAIM_ALL) && slab_may_wait();
	list_t mags;

	/* KASAN's quarantined objects go back to their caches first. */
	(void) kasan_quarantine_flush();

	if (all) {
		uint64_t seen = __atomic_load_n(&slab_reclaim_all_started, __ATOMIC_ACQUIRE);
		slab_reclaim_lock();
		if (__atomic_load_n(&slab_reclaim_all_done, __ATOMIC_RELAXED) > seen) {
			/* A whole pass ran after our call began: nothing left to do. */
			slab_reclaim_unlock();
			return 0;
		}
	} else if (!slab_reclaim_trylock()) {
		return 0;
	}

	list_initialize(&mags);
	uint64_t seq = 0;
	if (all) {
		seq = __atomic_add_fetch(&slab_reclaim_all_started, 1, __ATOMIC_ACQ_REL);
		slab_flush_all_cpus(NULL, &mags);
	} else {
		slab_flush_local_cpu(NULL, &mags);
	}
	slab_drain_depots(NULL, &mags);

	size_t frames = slab_mag_list_destroy(&mags);
	/* Last: the magazine cache's slabs emptied by the destruction above. */
	frames += free_all_empty_slabs();

	if (all)
		__atomic_store_n(&slab_reclaim_all_done, seq, __ATOMIC_RELEASE);
	slab_reclaim_unlock();
	return frames;
}

void slab_cache_flush(slab_cache_t *c)
{
	list_t mags;

	list_initialize(&mags);
	if (slab_may_wait())
		slab_flush_all_cpus(c, &mags);
	else
		slab_flush_local_cpu(c, &mags);
	slab_drain_depots(c, &mags);
	(void) slab_mag_list_destroy(&mags);
}
