/** @file as.c
 * Address spaces, areas, unmapping and TLB shootdown.
 *
 * The page fault path, the lock-free area look-up and the memory charge of
 * a fault are in mm/as_fault.c, the freeing of page tables in mm/as_prune.c
 * (their shared helpers: as_impl.h).
 *
 * Unmap: remove the record, clear the hardware entry under the page's
 * page-table lock,
 * shoot down the TLBs of the CPUs in cpus_running with smp_call (a range:
 * every page's record and entry first, then one shootdown for the range, one
 * cross-call per CPU; where the architecture's invalidation is broadcast,
 * ARCH_TLB_BROADCAST, arm64, the shootdown is one broadcast invalidation and
 * no cross-call: tlb_shootdown()); the frame and record are freed by RCU
 * after a grace period. All of it runs inside an RCU reader section, so that grace period
 * cannot end before the shootdown is done. A range is done in batches of at
 * most UNMAP_BATCH pages, each in its own reader section with its own
 * shootdown, and only in the 2 MiB regions that have a last-level page
 * table: a fault and as_page_fill() create the page's table (paging_walk()
 * with alloc) under the area lock before they insert its record, so a
 * region without a table has no record (the destroy or shrink that removed
 * the area under the same lock sees the table, by the lock's ordering and
 * paging_walk()'s release install). Exit time is then proportional to what
 * was touched, not to the areas' size.
 *
 * Areas: an AVL tree per address space keyed by base (adt/avl.h), changed
 * under as->area_lock: the fault's look-up, create's overlap check
 * (predecessor and successor) and destroy are O(log n). Count and total
 * size are bounded (AS_AREAS_MAX, AS_AREA_PAGES_MAX: ELIMIT).
 *
 * Page tables: counted per address space (pt_pages) and freed by
 * a destroy or shrink when no area needs them any more: prune_tables(),
 * mm/as_prune.c and docs/LOCKING.md ("Freeing page tables"). The fault path's
 * look-up and its lock-free walk share one RCU reader section for that.
 *
 * cpus_running: a CPU sets its bit before loading the address space into its
 * MMU (arch_as_load()) and clears it after loading another one (seq_cst). An
 * unmapper clears the entry before it reads the mask: a CPU whose bit it does
 * not see loads the tables later and walks the cleared entry.
 */
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <arch.h>
#include <arch/paging.h>
#include <arch/mm.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <proc/task.h>
#include <smp/smp_call.h>
#include <synch/rcu.h>
#include <console/console.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <errno.h>
#include <cpu.h>
#include <lib/str.h>
#include <abi/syscall.h>
#include <debug/fault_inject.h>
#include "as_impl.h"

as_stats_t as_stats(as_t *as)
{
	as_stats_t s = { 0 };
	for (unsigned i = 0; i < as->nstats; i++) {
		const as_cpu_stats_t *r = &as->stats[i];
		s.faults += __atomic_load_n(&r->faults, __ATOMIC_RELAXED);
		s.faults_minor += __atomic_load_n(&r->faults_minor,
		    __ATOMIC_RELAXED);
		s.faults_raced += __atomic_load_n(&r->faults_raced,
		    __ATOMIC_RELAXED);
		s.faults_unmapped += __atomic_load_n(&r->faults_unmapped,
		    __ATOMIC_RELAXED);
		s.pages_mapped += __atomic_load_n(&r->pages_mapped,
		    __ATOMIC_RELAXED);
		s.shootdowns += __atomic_load_n(&r->shootdowns,
		    __ATOMIC_RELAXED);
#if ARCH_TLB_BROADCAST
		s.tlb_broadcasts += __atomic_load_n(&r->tlb_broadcasts,
		    __ATOMIC_RELAXED);
#endif
		s.charge_budget += __atomic_load_n(&r->charge_budget,
		    __ATOMIC_RELAXED);
		s.pt_freed += __atomic_load_n(&r->pt_freed, __ATOMIC_RELAXED);
	}
	return s;
}

/* Memory charged to an address space (its task's limit) */

uint64_t as_mem_limit_default(void)
{
	uint64_t total = frame_total(), reserve = frame_reserve();
	uint64_t limit = total / 4 * PAGE_SIZE;
	if (limit < AS_MEM_LIMIT_MIN)
		limit = AS_MEM_LIMIT_MIN;
	if (total > reserve && limit > (total - reserve) * PAGE_SIZE)
		limit = (total - reserve) * PAGE_SIZE;
	return limit;
}

uint64_t as_charged(as_t *as)
{
	return __atomic_load_n(&as->mem_charged, __ATOMIC_RELAXED) +
	    __atomic_load_n(&as->pt_pages, __ATOMIC_RELAXED) * PAGE_SIZE;
}

int as_charge(as_t *as, size_t bytes)
{
	uint64_t c = __atomic_load_n(&as->mem_charged, __ATOMIC_RELAXED);
	do {
		/*
		 * The tables count too; read each time round (relaxed: a
		 * table installed meanwhile is charged by its walk, and may
		 * take the task past the limit by the tables of the faults in
		 * flight, at most 3 each: see the README's limits table).
		 */
		uint64_t pt = __atomic_load_n(&as->pt_pages, __ATOMIC_RELAXED);
		if (c + bytes + pt * PAGE_SIZE > as->mem_limit)
			return ELIMIT;
	} while (!__atomic_compare_exchange_n(&as->mem_charged, &c, c + bytes,
	    true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return EOK;
}

void as_uncharge(as_t *as, size_t bytes)
{
	__atomic_fetch_sub(&as->mem_charged, bytes, __ATOMIC_RELAXED);
}

/** All address spaces; protected by as_list_lock. */
static list_t as_list = LIST_INITIALIZER(as_list);
static irq_spinlock_t as_list_lock = IRQ_SPINLOCK_INITIALIZER("as.list");
static size_t as_n;
static uint64_t next_as_id = 1;

/* Address space switching */

/** Loads @a next into this CPU's MMU. Interrupts disabled. */
static void as_switch_cpu(as_t *next)
{
	cpu_t *c = CPU;
	as_t *prev = c->as;
	if (prev == next)
		return;
	uint64_t bit = 1UL << c->id;
	if (next) {
		__atomic_fetch_or(&next->cpus_running, bit, __ATOMIC_SEQ_CST);
		arch_as_load(next);
	} else {
		arch_as_load(NULL);
	}
	if (prev)
		__atomic_fetch_and(&prev->cpus_running, ~bit, __ATOMIC_SEQ_CST);
	c->as = next;
}

static void as_before_thread_runs(thread_t *t)
{
	as_switch_cpu(t->as);
}

/** An exiting thread leaves its address space (scheduler hook). */
static void as_thread_exits(thread_t *t)
{
	(void) t;
	as_leave();
}

static const sched_hooks_t as_hooks = {
	.before_thread_runs = as_before_thread_runs,
	.thread_exits = as_thread_exits,
};

void as_enter(as_t *as)
{
	thread_t *t = THREAD;
	assert(!t->as);
	as_hold(as);
	ipl_t ipl = interrupts_disable();
	t->as = as;
	as_switch_cpu(as);
	interrupts_restore(ipl);
}

void as_leave(void)
{
	thread_t *t = THREAD;
	as_t *as = t->as;
	if (!as)
		return;
	ipl_t ipl = interrupts_disable();
	t->as = NULL;
	as_switch_cpu(NULL);
	interrupts_restore(ipl);
	as_release(as);
}

/* TLB shootdown */

#if ARCH_TLB_BROADCAST

/**
 * Invalidates the TLB entries of [@a base, @a base + @a pages * PAGE_SIZE)
 * (@a pages >= 1) on every CPU with the architecture's broadcast
 * invalidation (arch.h, "TLB invalidation"; arm64: `dsb ishst`, `tlbi
 * vae1is`, `dsb ish`, `isb`, argued in arch/paging.h): no cross-call, and no
 * read of cpus_running. Call after clearing the hardware entries, inside
 * the reader section that also covers their page hash table removal (see
 * the file comment): on return no CPU holds the old translation or has an
 * access through it outstanding, so the grace period after the section is
 * all the frame's free waits for, as with the cross-calls.
 *
 * Why nothing else the cross-call did is needed here:
 *   - cpus_running and its store-buffering fence (the other branch): they
 *     choose whom to cross-call. The broadcast reaches every CPU, and one
 *     that loads the address space concurrently cannot cache the old entry
 *     after the TLBI: the `dsb ishst` made the cleared entry visible to
 *     every walker before the TLBI was issued, so a walk before the TLBI is
 *     invalidated by it and one after reads the cleared entry. The mask is
 *     still kept by as_switch_cpu() for sys_membarrier(), whose cross-call
 *     is its point (a full barrier on each CPU running the task) and stays.
 *   - the remote CPUs' interrupt: nothing waits for it. The fault path
 *     closes its race with an unmap with the page-table lock and the
 *     record's re-check, not by running with interrupts disabled, and page
 *     tables are freed after a grace period that follows their walk-cache
 *     invalidation (prune_tables(), tlb_invalidate_walks_broadcast()) or
 *     when the address space is destroyed (paging_destroy_root(), no CPU
 *     runs it then), so no software walk depends on the IPI either; RCU's grace period is
 *     detected by its own means (A-RCU's IPIs, Podzimek's quiescent states),
 *     not by the shootdown's.
 * Counted in the address space's tlb_broadcasts (shootdowns, the cross-calls,
 * stays 0: kernel tests as1 and pagefault1 check both). Thread context.
 */
static __attribute__((noinline)) void tlb_shootdown(as_t *as, uintptr_t base,
    size_t pages)
{
	if (fault_inject(FI_TLB_SHOOTDOWN)) {
		/*
		 * The non-broadcast form, only this CPU's TLB: pagefault1 must
		 * fail (a remote CPU keeps translating through the removed frame).
		 */
		tlb_invalidate_pages_local(&as->tlb_ctx, base, pages);
	} else {
		tlb_invalidate_pages_broadcast(&as->tlb_ctx, base, pages);
	}
	__atomic_fetch_add(&as_cpu_stats(as)->tlb_broadcasts, 1,
	    __ATOMIC_RELAXED);
}

#else /* !ARCH_TLB_BROADCAST: a cross-call per CPU running the address space */

/** What a shootdown invalidates: pages [base, base + pages * PAGE_SIZE). */
typedef struct {
	uintptr_t base;
	size_t pages;
} tlb_range_t;

/** smp_call target: invalidates the range of @a arg on this CPU. */
static void tlb_range_func(void *arg)
{
	const tlb_range_t *r = arg;
	tlb_invalidate_pages_local(r->base, r->pages);
}

/**
 * Invalidates the TLB entries of [@a base, @a base + @a pages * PAGE_SIZE)
 * (@a pages >= 1) on the CPUs running @a as: one cross-call per such CPU,
 * whatever the number of pages. Call after clearing the hardware entries to
 * invalidate, inside the reader section that also covers their page hash table
 * removal (see the file comment). Thread context, interrupts enabled
 * (smp_call). Kept out of line so that tests/test_static.py can check its
 * fence in the binary.
 */
static __attribute__((noinline)) void tlb_shootdown(as_t *as, uintptr_t base,
    size_t pages)
{
	if (fault_inject(FI_TLB_SHOOTDOWN))
		return;  /* no CPU invalidates: pagefault1 must fail */
	/*
	 * Store-buffering pattern: the caller stored the cleared entries, this
	 * loads cpus_running; as_switch_cpu() sets its bit in cpus_running (a
	 * seq_cst RMW, which is not a full fence on arm64) and then loads the
	 * tables into its MMU with arch_as_load(), which begins with a full
	 * barrier (arch.h), after which its CPU's page walks read the entries. With a full fence here between our
	 * stores and our load, at least one side sees the other: either we see
	 * the bit (and shoot that CPU down) or its walks see the cleared entry.
	 * Without the fence C11 lets our load move before our stores (a store
	 * buffer does exactly that, on x86-64 and on arm64), and both sides could miss each
	 * other: a CPU keeps translating through the removed frame. (It used
	 * to hold only because an unrelated locked instruction, the
	 * pages_mapped update, happened to sit in between.)
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint64_t mask = __atomic_load_n(&as->cpus_running, __ATOMIC_SEQ_CST);
	tlb_range_t r = { .base = base, .pages = pages };
	for (unsigned i = 0; i < cpu_count && mask; i++) {
		if (!(mask & (1UL << i)))
			continue;
		mask &= ~(1UL << i);
		(void) smp_call(i, tlb_range_func, &r);
		__atomic_fetch_add(&as_cpu_stats(as)->shootdowns, 1,
		    __ATOMIC_RELAXED);
	}
}

#endif /* ARCH_TLB_BROADCAST */

/**
 * Invalidates, on every CPU that may hold them, the walk-cache entries
 * (paging-structure caches) that point to the tables covering the pages
 * @a va[0..n) (n >= 1), after their parent entries were cleared. Where the
 * invalidation is broadcast, tlb_invalidate_walks_broadcast() (arm64: a
 * non-last-level `tlbi vae1is` per table); elsewhere one shootdown round of
 * one page, whose local invalidation drops every walk-cache entry of the
 * CPU whatever the address (amd64: arch/paging.h, PAGING_LOCAL_DROPS_WALKS).
 * Thread context.
 */
void tlb_shootdown_tables(as_t *as, const uintptr_t *va, size_t n)
{
#if ARCH_TLB_BROADCAST
	tlb_invalidate_walks_broadcast(&as->tlb_ctx, va, n);
	__atomic_fetch_add(&as_cpu_stats(as)->tlb_broadcasts, 1,
	    __ATOMIC_RELAXED);
#else
	_Static_assert(PAGING_LOCAL_DROPS_WALKS, "the architecture must say how "
	    "its walk caches are invalidated");
	(void) n;
	tlb_shootdown(as, va[0], 1);
#endif
}

/* Area set: the writers' sequence count and the lock-free look-up */

/**
 * Starts a change of @a as's area set (the tree or an area's size): makes
 * area_seq odd. Caller holds area_lock; area_write_end() after the change.
 */
static inline void area_write_begin(as_t *as)
{
	assert(irq_spinlock_locked_by_me(&as->area_lock));
	/* Plain read: area_seq is stored only under area_lock, by us. */
	__atomic_store_n(&as->area_seq, as->area_seq + 1, __ATOMIC_RELAXED);
	/*
	 * Release fence: forbids the change's stores (links, sizes) from being
	 * reordered before the odd count; a reader that loads one of them
	 * (and then its acquire fence) sees the count odd or moved on.
	 */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/** Ends the change area_write_begin() started: area_seq even again. */
static inline void area_write_end(as_t *as)
{
	/*
	 * Release: forbids the change's stores from being reordered after the
	 * even count (a reader that sees it sees the whole change).
	 */
	__atomic_store_n(&as->area_seq, as->area_seq + 1, __ATOMIC_RELEASE);
}

/**
 * After a shrink or destroy changed the area set (area_lock released) and
 * before it unmaps: takes and releases every page-table lock of @a as. A
 * fault that inserted a record under its page's lock having validated the
 * old area set did so before we passed that lock, so the unmap (after this)
 * sees the record and the page's table; a fault that takes the lock after
 * us sees the new area_seq there and does not insert (mm/as_fault.c,
 * "Area look-up"). Thread context; AS_PT_LOCKS uncontended round trips.
 */
static void area_barrier(as_t *as)
{
	for (unsigned i = 0; i < AS_PT_LOCKS; i++) {
		irq_spinlock_lock(&as->pt_locks[i].lock, true);
		irq_spinlock_unlock(&as->pt_locks[i].lock, true);
	}
}

/** RCU callback: frees a destroyed area (no lock-free walk reaches it). */
static void area_free_rcu(rcu_item_t *item)
{
	free(container_of(item, as_area_t, rcu));
}

/* Address spaces */

as_t *as_create(void)
{
	/*
	 * One row of statistics per CPU; the whole on a line boundary (malloc
	 * aligns to 16 only), so the lines as_t separates stay separate.
	 */
	unsigned nstats = cpu_count ? cpu_count : 1;
	size_t size = sizeof(as_t) + nstats * sizeof(as_cpu_stats_t);
	void *raw = malloc(size + AS_LINE - 1);
	if (!raw)
		return NULL;
	as_t *as = (as_t *) ALIGN_UP((uintptr_t) raw, AS_LINE);
	memset(as, 0, size);
	as->raw = raw;
	as->nstats = nstats;
	as->root_phys = paging_create_root();
	if (!as->root_phys) {
		free(raw);
		return NULL;
	}
	as->root = PA2KA(as->root_phys);
	as->mem_limit = as_mem_limit_default();
	as->id = __atomic_fetch_add(&next_as_id, 1, __ATOMIC_RELAXED);
	atomic_set(&as->refcount, 1);
	for (unsigned i = 0; i < AS_PT_LOCKS; i++)
		irq_spinlock_initialize(&as->pt_locks[i].lock, "as.pt");
	mutex_initialize_named(&as->area_mtx, MUTEX_PASSIVE, "as.area_mtx");
	irq_spinlock_initialize(&as->area_lock, "as.areas");
	avl_init(&as->areas);
	irq_spinlock_lock(&as_list_lock, true);
	list_append(&as->as_link, &as_list);
	as_n++;
	irq_spinlock_unlock(&as_list_lock, true);
	return as;
}

void as_hold(as_t *as)
{
	atomic_inc(&as->refcount);
}

/**
 * Pages looked up per reader section of unmap_range(): bounds how long one
 * unmap holds up a grace period (about a thousand page hash look-ups).
 */
#define UNMAP_BATCH 1024

/**
 * Removes the mappings of [base, base + pages * PAGE_SIZE): records out of the
 * page hash table, hardware entries cleared, then one TLB shootdown per batch
 * for the span from its first to its last page removed (one cross-call per
 * CPU running the address space, not one per page). Only 2 MiB regions with
 * a last-level table are looked at (see the file comment), at most
 * UNMAP_BATCH pages per reader section. Without @a shoot no shootdown:
 * as_release() after arch_as_release_tlb() dropped every translation of
 * the address space at once. @return the number of pages it unmapped.
 * Thread context, interrupts enabled.
 */
static size_t unmap_range(as_t *as, uintptr_t base, size_t pages, bool shoot)
{
	uintptr_t va = base, end = base + pages * PAGE_SIZE;
	size_t total = 0;
	while (va < end) {
		size_t budget = UNMAP_BATCH, removed = 0;
		uintptr_t first = 0, last = 0;
		rcu_read_lock();
		while (va < end && budget) {
			uint64_t *pt = paging_next_leaf(as->root_phys, &va, end);
			if (!pt)
				break;
			uintptr_t stop = ALIGN_DOWN(va, LARGE_PAGE_SIZE) +
			    LARGE_PAGE_SIZE;
			stop = MIN(stop, end);
			stop = MIN(stop, va + budget * PAGE_SIZE);
			/*
			 * The records first, then the entries of those pages
			 * under one hold of the region's page-table lock (not
			 * one per page: the lock's line is shared with the
			 * region's faults). A fault that inserts a new record
			 * in between and installs it loses its entry to the
			 * clear and faults again (minor): as with a lock per
			 * page, the record decides.
			 */
			uint64_t gone[512 / 64] = { 0 };
			uintptr_t from = va;
			for (; va < stop; va += PAGE_SIZE) {
				budget--;
				if (page_mapping_remove(as->id, va) != EOK)
					continue;
				if (!removed)
					first = va;
				last = va;
				removed++;
				unsigned i = (va >> 12) & 511;
				gone[i / 64] |= 1UL << (i % 64);
			}
			if (last < from)
				continue;
			irq_spinlock_lock(as_pt_lock(as, from), true);
			for (unsigned w = 0; w < 512 / 64; w++) {
				for (uint64_t m = gone[w]; m; m &= m - 1) {
					unsigned i = w * 64 + __builtin_ctzl(m);
					__atomic_store_n(&pt[i], 0, __ATOMIC_RELEASE);
				}
			}
			irq_spinlock_unlock(as_pt_lock(as, from), true);
		}
		if (removed) {
			__atomic_fetch_sub(&as_cpu_stats(as)->pages_mapped,
			    removed, __ATOMIC_RELAXED);
			as_uncharge(as, removed * PAGE_SIZE);
			if (shoot)
				tlb_shootdown(as, first,
				    (last - first) / PAGE_SIZE + 1);
		}
		rcu_read_unlock();
		total += removed;
	}
	return total;
}

void as_release(as_t *as)
{
	if (atomic_predec(&as->refcount) > 0)
		return;
	assert(__atomic_load_n(&as->cpus_running, __ATOMIC_SEQ_CST) == 0);
	/*
	 * No CPU runs the address space or can load it again: where the
	 * architecture drops all of its translations at once (arm64: one
	 * `tlbi aside1is` of its ASID), the unmaps below need no shootdown,
	 * and nothing can cache a translation of it afterwards.
	 */
	bool shoot = !arch_as_release_tlb(as);
	for (;;) {
		irq_spinlock_lock(&as->area_lock, true);
		avl_node_t *n = avl_first(&as->areas);
		if (n) {
			area_write_begin(as);
			avl_remove(&as->areas, n);
			area_write_end(as);
			as->area_pages -= container_of(n, as_area_t, node)->pages;
		}
		irq_spinlock_unlock(&as->area_lock, true);
		if (!n)
			break;
		as_area_t *a = container_of(n, as_area_t, node);
		unmap_range(as, a->base, a->pages, shoot);
		/*
		 * At once, not after a grace period: nobody is inside the
		 * address space any more (no reference), so no fault walks it.
		 */
		free(a);
		as_uncharge(as, sizeof(as_area_t));
	}
	irq_spinlock_lock(&as_list_lock, true);
	list_remove(&as->as_link);
	as_n--;
	irq_spinlock_unlock(&as_list_lock, true);
	paging_destroy_root(as->root_phys);
	free(as->raw);
}

size_t as_count(void)
{
	irq_spinlock_lock(&as_list_lock, true);
	size_t n = as_n;
	irq_spinlock_unlock(&as_list_lock, true);
	return n;
}

/* Areas */

bool as_area_range_ok(uintptr_t base, size_t size)
{
	return size > 0 && size <= AREA_SIZE_MAX && IS_ALIGNED(size, PAGE_SIZE) &&
	    IS_ALIGNED(base, PAGE_SIZE) && base >= USER_AREA_START &&
	    base < USER_AREA_END && size <= USER_AREA_END - base;
}

/**
 * True when [base, base + size) overlaps an area other than @a except
 * (which, if given, starts at @a base). Areas do not overlap each other, so
 * only two can: the one with the greatest base <= @a base and the one with
 * the least base > @a base. O(log n). Caller holds as->area_lock.
 */
bool area_overlaps_locked(as_t *as, uintptr_t base, size_t size,
    const as_area_t *except)
{
	assert(irq_spinlock_locked_by_me(&as->area_lock));
	avl_node_t *n = avl_find_le(&as->areas, base);
	if (n) {
		as_area_t *a = container_of(n, as_area_t, node);
		if (a != except && base - a->base < a->pages * PAGE_SIZE)
			return true;
	}
	n = avl_find_gt(&as->areas, base);
	if (n) {
		as_area_t *a = container_of(n, as_area_t, node);
		if (a->base - base < size)
			return true;
	}
	return false;
}

int as_area_create(as_t *as, uintptr_t base, size_t size, unsigned flags)
{
	if (!as || !as_area_range_ok(base, size))
		return EINVAL;
	as_area_t *a = malloc(sizeof(as_area_t));
	if (!a)
		return ENOMEM;
	a->as = as;
	a->base = base;
	a->node.key = base;
	a->pages = size / PAGE_SIZE;
	a->flags = flags;
	/* The record is the task's: charged to its limit. */
	if (as_charge(as, sizeof(as_area_t)) != EOK) {
		free(a);
		return ELIMIT;
	}
	/* Not inside a range a shrink or destroy is still unmapping. */
	mutex_lock(&as->area_mtx);
	irq_spinlock_lock(&as->area_lock, true);
	int rc = EOK;
	if (as->areas.count >= AS_AREAS_MAX ||
	    a->pages > AS_AREA_PAGES_MAX - as->area_pages)
		rc = ELIMIT;
	else if (area_overlaps_locked(as, base, size, NULL))
		rc = EEXIST;
	else {
		area_write_begin(as);
		if (avl_insert(&as->areas, &a->node) != EOK)
			rc = EEXIST;   /* not reached: the overlap check covers it */
		area_write_end(as);
	}
	if (rc == EOK)
		as->area_pages += a->pages;
	irq_spinlock_unlock(&as->area_lock, true);
	mutex_unlock(&as->area_mtx);
	if (rc != EOK) {
		free(a);
		as_uncharge(as, sizeof(as_area_t));
	}
	return rc;
}

int as_area_resize(as_t *as, uintptr_t base, size_t size)
{
	if (!as || !as_area_range_ok(base, size))
		return EINVAL;
	mutex_lock(&as->area_mtx);
	irq_spinlock_lock(&as->area_lock, true);
	int rc = EOK;
	as_area_t *a = area_find_locked(as, base);
	size_t pages = size / PAGE_SIZE, old = 0;
	if (!a || a->base != base)
		rc = ENOENT;
	else if (pages > a->pages &&
	    pages - a->pages > AS_AREA_PAGES_MAX - as->area_pages)
		rc = ELIMIT;
	else if (pages > a->pages && area_overlaps_locked(as, base, size, a))
		rc = EEXIST;
	if (rc == EOK) {
		old = a->pages;
		area_write_begin(as);
		__atomic_store_n(&a->pages, pages, __ATOMIC_RELAXED);
		area_write_end(as);
		as->area_pages = as->area_pages - old + pages;
	}
	irq_spinlock_unlock(&as->area_lock, true);
	/* No fault inserts in the released range after this: */
	if (rc == EOK && pages < old)
		area_barrier(as);
	/*
	 * New faults beyond the end fail now; remove what was mapped there.
	 * area_mtx stays held until that is done: an area created in the
	 * released range before the unmap finished would lose its pages to it.
	 */
	if (rc == EOK && pages < old) {
		unmap_range(as, base + pages * PAGE_SIZE, old - pages, true);
		prune_tables(as, base + pages * PAGE_SIZE, base + old * PAGE_SIZE);
	}
	mutex_unlock(&as->area_mtx);
	return rc;
}

int as_area_destroy(as_t *as, uintptr_t base)
{
	mutex_lock(&as->area_mtx);
	irq_spinlock_lock(&as->area_lock, true);
	as_area_t *a = area_find_locked(as, base);
	if (!a || a->base != base) {
		irq_spinlock_unlock(&as->area_lock, true);
		mutex_unlock(&as->area_mtx);
		return ENOENT;
	}
	area_write_begin(as);
	avl_remove(&as->areas, &a->node);
	area_write_end(as);
	as->area_pages -= a->pages;
	irq_spinlock_unlock(&as->area_lock, true);
	/* No fault inserts in the area's range after this: */
	area_barrier(as);
	/* The range stays reserved (area_mtx) until its unmap is done. */
	unmap_range(as, a->base, a->pages, true);
	prune_tables(as, a->base, a->base + a->pages * PAGE_SIZE);
	mutex_unlock(&as->area_mtx);
	as_uncharge(as, sizeof(as_area_t));
	/* A lock-free look-up may still be walking it (area_find_rcu()). */
	rcu_call(&a->rcu, area_free_rcu);
	return EOK;
}

bool as_area_find(as_t *as, uintptr_t addr, as_area_t *out)
{
	irq_spinlock_lock(&as->area_lock, true);
	as_area_t *a = area_find_locked(as, addr);
	if (a)
		*out = *a;
	irq_spinlock_unlock(&as->area_lock, true);
	return a != NULL;
}

int as_unmap_page(as_t *as, uintptr_t page)
{
	page = ALIGN_DOWN(page, PAGE_SIZE);
	rcu_read_lock();
	if (page_mapping_remove(as->id, page) != EOK) {
		rcu_read_unlock();
		return ENOENT;
	}
	irq_spinlock_lock(as_pt_lock(as, page), true);
	uint64_t *e = paging_walk(as->root_phys, page, NULL);
	if (e)
		__atomic_store_n(e, 0, __ATOMIC_RELEASE);
	irq_spinlock_unlock(as_pt_lock(as, page), true);
	__atomic_fetch_sub(&as_cpu_stats(as)->pages_mapped, 1, __ATOMIC_RELAXED);
	as_uncharge(as, PAGE_SIZE);
	tlb_shootdown(as, page, 1);
	rcu_read_unlock();
	return EOK;
}

int as_unmap_range(as_t *as, uintptr_t base, size_t pages, size_t *removed)
{
	if (removed)
		*removed = 0;
	if (!as || !IS_ALIGNED(base, PAGE_SIZE) || base >= USER_SPACE_END ||
	    pages > (USER_SPACE_END - base) / PAGE_SIZE)
		return EINVAL;
	size_t n = pages ? unmap_range(as, base, pages, true) : 0;
	if (removed)
		*removed = n;
	return EOK;
}

void as_init(void)
{
	page_ht_init();
	sched_hooks_register(&as_hooks);
}

/* Commands */

/**
 * Areas `as` prints per address space; the rest are counted in one line.
 * The printout holds the locks with interrupts off: it must not grow with
 * a task's areas (up to AS_AREAS_MAX).
 */
#define AS_PRINT_AREAS 32

void as_print(void)
{
	console_lock();
	irq_spinlock_lock(&as_list_lock, true);
	printf("  id  refs    cpus-running    faults   minor  raced  unmapd  "
	    "mapped  shootdowns  ptables  ptfreed  mem-KiB\n");
	list_foreach(&as_list, l) {
		as_t *as = list_get_instance(l, as_t, as_link);
		as_stats_t st = as_stats(as);
		printf("%4lu  %4zu  %#14lx  %8lu  %6lu  %5lu  %6lu  %6lu  %10lu"
		    "  %7lu  %7lu  %7lu\n",
		    as->id, atomic_get(&as->refcount),
		    __atomic_load_n(&as->cpus_running, __ATOMIC_RELAXED),
		    st.faults, st.faults_minor, st.faults_raced,
		    st.faults_unmapped, st.pages_mapped, st.shootdowns,
		    __atomic_load_n(&as->pt_pages, __ATOMIC_RELAXED), st.pt_freed,
		    as_charged(as) / 1024);
		irq_spinlock_lock(&as->area_lock, false);
		size_t shown = 0;
		for (avl_node_t *m = avl_first(&as->areas);
		    m && shown < AS_PRINT_AREAS;
		    m = avl_find_gt(&as->areas, m->key), shown++) {
			as_area_t *a = container_of(m, as_area_t, node);
			printf("      area %#014lx-%#014lx %6zu pages %c%c%c\n", a->base,
			    a->base + a->pages * PAGE_SIZE, a->pages,
			    a->flags & AS_AREA_READ ? 'r' : '-',
			    a->flags & AS_AREA_WRITE ? 'w' : '-',
			    a->flags & AS_AREA_EXEC ? 'x' : '-');
		}
		if (as->areas.count > shown)
			printf("      ... %zu more areas (%zu areas, %zu pages in "
			    "all)\n", as->areas.count - shown, as->areas.count,
			    as->area_pages);
		irq_spinlock_unlock(&as->area_lock, false);
	}
	printf("%zu address spaces\n", as_n);
	irq_spinlock_unlock(&as_list_lock, true);
	console_unlock();
}
