/** @file as_fault.c
 * The page fault path of an address space (mm/as.c).
 *
 * Page fault (the authoritative store is the page hash table):
 *   1. look the page up in the page hash table (an RCU reader: lock-free with the
 *      CHT back end);
 *   2. on a miss, find the area and ask its backend (anonymous: a zeroed frame)
 *      and insert the mapping with insert-unique; a CPU that lost the race to
 *      another CPU faulting the same page frees its frame and takes the winner's;
 *   3. under the page's page-table lock (as_pt_lock(): one of AS_PT_LOCKS,
 *      by 2 MiB region), look the page up again and install the hardware entry
 *      only if the record still maps that frame.
 *
 * Area look-up (the fault path's): no lock and no store to a shared line.
 * Faults of many CPUs in one address space used to take
 * as->area_lock for the look-up and the insert of the page's record: that
 * lock line was written by every faulting CPU on every fault, the hottest
 * line of chtbench 22 (docs/SHARING.md). Now:
 *   - writers (create, resize, destroy; under area_lock) make as->area_seq
 *     odd, change the tree or the size, and make it even again (a seqlock's
 *     write side; the tree's links are stored with release order, adt/avl.c);
 *   - the fault reads area_seq, walks the tree with avl_find_le_rcu() in an
 *     RCU reader section, copies the area's base, size and flags, and reads
 *     area_seq again: a walk that met a change (a rotation can hide a node
 *     from it) fails validation and is retried, AREA_LOOKUP_TRIES times at
 *     most, then the fault takes area_lock as before. Destroyed areas are
 *     freed after a grace period (rcu_call), so a walk never touches freed
 *     memory; the copy is all the fault keeps;
 *   - the fault then takes its page's page-table lock (which it took anyway
 *     to install the entry), checks that area_seq still has the value it
 *     validated, and inserts the record and installs the entry under that
 *     lock; a changed count sends it to the locked path;
 *   - a shrink or destroy, after its change and before its unmap, takes and
 *     releases every page-table lock of the address space (area_barrier()).
 * So a fault either inserted under its page-table lock before the writer
 * passed that lock (and the unmap, which comes after, finds the record and
 * the page's table) or took the lock after and saw the new count (and
 * retries under area_lock, where the area is gone or shorter). This is the
 * guarantee the area lock's single hold gave (test asrace1). A seqlock over
 * an RCU-walked tree was chosen over per-area references (Linux's per-VMA
 * locks): a reference count is a line every CPU faulting in the area writes
 * on every fault, which is what the design avoids; and over an rcu_synchronize()
 * between change and unmap, which would make every destroy and shrink wait
 * a grace period, where 16 uncontended lock round trips suffice.
 *
 * Page fault, step 3 closes the race with an unmap: either the unmapper
 * clears the entry after the fault installed it (its removal came first, its clear comes after
 * the fault's locked re-check... which then failed) or the re-check misses the
 * record and installs nothing; the access then faults again.
 * Debug builds call as_fault_minor_hook (mm/as.h), when a test set it,
 * between a minor fault's lookup and that lock: test pagefault1 holds a
 * fault there until another CPU has unmapped its page; and
 * as_fault_insert_hook between a missed lookup and the insert, where the
 * test holds a fault until another CPU's fault of the page has inserted it.
 *
 * Memory limit: the pages of the areas, the page tables and the
 * task's kernel objects are charged to the address space (as_charge(),
 * mem_charged + pt_pages against mem_limit); a fault takes its page's charge
 * from its CPU's row (charge_budget, refilled AS_CHARGE_BATCH at a time), so
 * the hot path adds one relaxed atomic subtract on a line of its own CPU. A
 * fault past the limit returns ELIMIT: a user fault kills the task with its
 * own report, a uaccess fault makes the system call return ELIMIT.
 */
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <arch.h>
#include <arch/paging.h>
#include <arch/mm.h>
#include <proc/thread.h>
#include <proc/task.h>
#include <synch/rcu.h>
#include <debug.h>
#include <errno.h>
#include <cpu.h>
#include <lib/str.h>
#include <abi/syscall.h>
#include "as_impl.h"

#ifdef CONFIG_DEBUG
void (*as_fault_minor_hook)(as_t *as, uintptr_t page);
void (*as_fault_insert_hook)(as_t *as, uintptr_t page);
#endif

/**
 * The slow half of fault_charge(): this row's budget is empty. Charges
 * AS_CHARGE_BATCH to the address space and keeps the rest of it in the row,
 * or, near the limit, just the page. @return EOK or ELIMIT.
 */
static __attribute__((noinline)) int fault_charge_refill(as_t *as,
    as_cpu_stats_t *st)
{
	if (as_charge(as, AS_CHARGE_BATCH) == EOK) {
		__atomic_fetch_add(&st->charge_budget,
		    AS_CHARGE_BATCH - PAGE_SIZE, __ATOMIC_RELAXED);
		return EOK;
	}
	return as_charge(as, PAGE_SIZE);
}

/**
 * Charges the page a fault is about to allocate to @a as: from the row
 * @a st's budget (one relaxed atomic subtract, the fault path's only cost
 * when the budget holds), else fault_charge_refill(). @return EOK or
 * ELIMIT.
 */
static inline int fault_charge(as_t *as, as_cpu_stats_t *st)
{
	if (__atomic_sub_fetch(&st->charge_budget, PAGE_SIZE,
	    __ATOMIC_RELAXED) >= 0)
		return EOK;
	__atomic_fetch_add(&st->charge_budget, PAGE_SIZE, __ATOMIC_RELAXED);
	return fault_charge_refill(as, st);
}

/** Gives a page fault_charge() charged but the fault did not map back. */
static inline void fault_uncharge(as_cpu_stats_t *st)
{
	__atomic_fetch_add(&st->charge_budget, PAGE_SIZE, __ATOMIC_RELAXED);
}

/** What a fault needs of an area: a copy, taken under the look-up's guard. */
typedef struct {
	uintptr_t base;
	size_t pages;
	unsigned flags;
} area_snap_t;

/** Lock-free look-ups a fault tries before it takes area_lock. */
#define AREA_LOOKUP_TRIES 4

/**
 * The fault path's look-up without area_lock (see the file comment): the
 * area containing @a addr, copied to *@a snap, validated by area_seq, whose
 * value is left in *@a seq for the re-check under the page-table lock.
 * @return 1 found, 0 no area contains @a addr (both as of the instant the
 * count was read), -1 a writer was busy or the walk gave up: take the lock.
 * Caller is in an RCU reader section (which also covers its page-table walk:
 * see "Freeing page tables"). Any context, never blocks; O(log n), stores
 * to no shared line.
 */
static int area_find_rcu(as_t *as, uintptr_t addr, area_snap_t *snap,
    uint64_t *seq)
{
	/* Acquire: forbids the walk's loads from moving before the count. */
	uint64_t s = __atomic_load_n(&as->area_seq, __ATOMIC_ACQUIRE);
	if (s & 1)
		return -1;
	int found = 0;
	avl_node_t *n;
	if (!avl_find_le_rcu(&as->areas, addr, &n))
		return -1;
	if (n) {
		const as_area_t *a = container_of(n, as_area_t, node);
		snap->base = a->base;
		snap->pages = __atomic_load_n(&a->pages, __ATOMIC_RELAXED);
		snap->flags = a->flags;
		found = addr - snap->base < snap->pages * PAGE_SIZE;
	}
	/*
	 * Acquire fence: forbids the walk's and the copy's loads from being
	 * reordered after the second read of the count (with the writers'
	 * release fence: a load that saw a change makes this read see the
	 * count moved on).
	 */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&as->area_seq, __ATOMIC_RELAXED) != s)
		return -1;
	*seq = s;
	return found;
}

/**
 * The record of a fresh page of area @a a in @a frame: present, user, cacheable,
 * owning its frame, with the area's write and execute permissions. Area lock
 * held (a->flags is read under it).
 */
static inline pte_t area_page_pte(const area_snap_t *a, uintptr_t frame)
{
	pte_t pte = { .frame = frame, .flags = PTE_REC_PRESENT | PTE_REC_USER |
	    PTE_REC_CACHEABLE | PTE_REC_FREE_FRAME };
	if (a->flags & AS_AREA_WRITE)
		pte.flags |= PTE_REC_WRITABLE;
	if (a->flags & AS_AREA_EXEC)
		pte.flags |= PTE_REC_EXEC;
	return pte;
}

int as_page_fill(as_t *as, uintptr_t page, const void *src, size_t off,
    size_t len)
{
	if (!IS_ALIGNED(page, PAGE_SIZE) || off > PAGE_SIZE ||
	    len > PAGE_SIZE - off)
		return EINVAL;
	pte_t pte;
	if (page_mapping_find(as->id, page, &pte)) {
		memcpy((uint8_t *) PA2KA(pte.frame) + off, src, len);
		return EOK;
	}
	if (as_charge(as, PAGE_SIZE) != EOK)
		return ELIMIT;
	uintptr_t frame = frame_alloc(1, FRAME_ZERO | FRAME_USER);
	if (!frame) {
		as_uncharge(as, PAGE_SIZE);
		return ENOMEM;
	}
	memcpy((uint8_t *) PA2KA(frame) + off, src, len);
	irq_spinlock_lock(&as->area_lock, true);
	as_area_t *a = area_find_locked(as, page);
	/* The page's table before its record: see unmap_range(). */
	if (!a || !paging_walk(as->root_phys, page, &as->pt_pages)) {
		irq_spinlock_unlock(&as->area_lock, true);
		frame_free(frame, 1);
		as_uncharge(as, PAGE_SIZE);
		return a ? ENOMEM : ENOENT;
	}
	area_snap_t snap = { .base = a->base, .pages = a->pages,
	    .flags = a->flags };
	pte = area_page_pte(&snap, frame);
	pte_t existing;
	int rc = page_mapping_insert(as->id, page, &pte, &existing);
	irq_spinlock_unlock(&as->area_lock, true);
	if (rc != EOK) {
		frame_free(frame, 1);
		as_uncharge(as, PAGE_SIZE);
		return rc;
	}
	__atomic_fetch_add(&as_cpu_stats(as)->pages_mapped, 1, __ATOMIC_RELAXED);
	return EOK;
}

static uint64_t hw_flags(const pte_t *pte)
{
	return paging_user_flags(pte->flags & PTE_REC_WRITABLE,
	    pte->flags & PTE_REC_EXEC);
}

/** Whether an area with @a flags permits an access of kind @a access. */
static inline bool area_permits(unsigned flags, pf_access_t access)
{
	return !(access == PF_ACCESS_WRITE && !(flags & AS_AREA_WRITE)) &&
	    !(access == PF_ACCESS_EXEC && !(flags & AS_AREA_EXEC));
}

/**
 * The lock-free area look-up of a fault's miss (see "Area look-up" above):
 * finds the area of @a addr without area_lock, creates the page's table and
 * takes the page's page-table lock @a ptl, where it re-checks area_seq.
 * @param snap receives the area's copy. @param entry receives the page's
 * last-level entry.
 * @param fast set when it succeeded: @a ptl is held, *@a snap and
 *        *@a entry are valid; clear: the caller takes the locked path.
 * @return EOK (see @a fast), or ENOENT / EINVAL / ENOMEM (nothing held).
 */
static inline int fault_area_fast(as_t *as, uintptr_t addr, uintptr_t page,
    pf_access_t access, irq_spinlock_t *ptl, area_snap_t *snap,
    uint64_t **entry, bool *fast)
{
	uint64_t seq = 0;
	int found = -1;
	*fast = false;
	const unsigned tries = AREA_LOOKUP_TRIES;
	/*
	 * One reader section for the look-up and the walk: a prune (after a
	 * destroy or shrink this look-up did not see) may unlink a table the
	 * walk is in; it frees it only after a grace period ("Freeing page
	 * tables").
	 */
	rcu_read_lock();
	for (unsigned i = 0; i < tries && found < 0; i++)
		found = area_find_rcu(as, addr, snap, &seq);
	if (found < 0) {
		rcu_read_unlock();
		return EOK;
	}
	if (!found || !area_permits(snap->flags, access)) {
		rcu_read_unlock();
		return found ? EINVAL : ENOENT;
	}
	/*
	 * The page's table before its record (unmap_range() skips regions
	 * without one); inside a validated area only, so junk addresses never
	 * allocate tables. The entry pointer is used only if area_seq is
	 * unchanged under the page-table lock below: then no prune can have
	 * freed its table.
	 */
	*entry = paging_walk(as->root_phys, page, &as->pt_pages);
	rcu_read_unlock();
	if (!*entry)
		return ENOMEM;
	irq_spinlock_lock(ptl, true);
	/*
	 * Relaxed: the lock orders it. A shrink or destroy that changed the
	 * count passes this lock (area_barrier()) before unmapping: if it
	 * passed already we see its count here; if not, it will see our
	 * record.
	 */
	if (__atomic_load_n(&as->area_seq, __ATOMIC_RELAXED) != seq) {
		irq_spinlock_unlock(ptl, true);
		return EOK;
	}
	*fast = true;
	return EOK;
}

/**
 * The locked area look-up of a fault's miss, when the lock-free one could
 * not decide: as fault_area_fast() under area_lock. as_area_destroy() and
 * a shrink change the area set under it before they unmap the range, so
 * either the caller's insert comes first and their unmap finds and removes
 * the record, or they come first and the area is gone (or shorter) here.
 * @return EOK with area_lock held and *@a snap, *@a entry valid, or ENOENT
 * / EINVAL / ENOMEM (nothing held).
 */
static int fault_area_locked(as_t *as, uintptr_t addr, uintptr_t page,
    pf_access_t access, area_snap_t *snap, uint64_t **entry)
{
	irq_spinlock_lock(&as->area_lock, true);
	as_area_t *a = area_find_locked(as, addr);
	if (!a || !area_permits(a->flags, access)) {
		irq_spinlock_unlock(&as->area_lock, true);
		return a ? EINVAL : ENOENT;
	}
	*entry = paging_walk(as->root_phys, page, &as->pt_pages);
	if (!*entry) {
		irq_spinlock_unlock(&as->area_lock, true);
		return ENOMEM;
	}
	snap->base = a->base;
	snap->pages = a->pages;
	snap->flags = a->flags;
	return EOK;
}

/**
 * The miss half of a fault at @a addr (page @a page): finds the area,
 * creates the page's table and inserts the page's record of @a frame (or
 * finds another CPU's: EEXIST). See the file comment, "Area look-up".
 * @param pte receives the record now in the table.
 * @param entry receives the page's last-level entry.
 * @param spare receives a frame the caller frees (after its locks), or 0.
 * @param ptl_held set when the page's page-table lock is held on return
 *        (the lock-free path inserts under it; the caller installs, then
 *        releases it).
 * @return EOK, or ENOENT / EINVAL / ENOMEM / another insert error (nothing
 * held, @a frame in *@a spare).
 */
static int fault_insert(as_t *as, uintptr_t addr, uintptr_t page,
    pf_access_t access, uintptr_t frame, pte_t *pte, uint64_t **entry,
    uintptr_t *spare, bool *ptl_held)
{
	as_cpu_stats_t *st = as_cpu_stats(as);
	irq_spinlock_t *ptl = as_pt_lock(as, page);
	area_snap_t snap;
	bool fast;
	*spare = frame;
	*ptl_held = false;
	int rc = fault_area_fast(as, addr, page, access, ptl, &snap, entry,
	    &fast);
	if (rc == EOK && !fast)
		rc = fault_area_locked(as, addr, page, access, &snap, entry);
	if (rc != EOK)
		return rc;
	*pte = area_page_pte(&snap, frame);
	pte_t existing;
	rc = page_mapping_insert(as->id, page, pte, &existing);
	if (!fast)
		irq_spinlock_unlock(&as->area_lock, true);
	if (rc == EEXIST) {
		/* Another CPU faulted the page first: use its frame. */
		__atomic_fetch_add(&st->faults_raced, 1, __ATOMIC_RELAXED);
		*pte = existing;
	} else if (rc != EOK) {
		if (fast)
			irq_spinlock_unlock(ptl, true);
		return rc;
	} else {
		*spare = 0;
		__atomic_fetch_add(&st->pages_mapped, 1, __ATOMIC_RELAXED);
	}
	*ptl_held = fast;
	return EOK;
}

/**
 * A fault of the current thread met its task's memory limit: a user
 * thread's system call in progress (a uaccess fix-up's EFAULT) returns
 * ELIMIT (syscall_dispatch()). Out of line: never on the common path.
 */
static __attribute__((noinline)) void fault_limit_reached(void)
{
	uthread_t *ut = uthread_current();
	if (ut)
		ut->mem_limited = true;
}

/**
 * Resolves a fault at @a addr in @a as. @return EOK when the access can be
 * retried; an error code for a fatal fault (the caller reports it).
 */
int as_page_fault(as_t *as, uintptr_t addr, pf_access_t access)
{
	uintptr_t page = ALIGN_DOWN(addr, PAGE_SIZE);
	as_cpu_stats_t *st = as_cpu_stats(as);
	__atomic_fetch_add(&st->faults, 1, __ATOMIC_RELAXED);

	pte_t pte;
	/* The page's last-level entry once a miss created its table. */
	uint64_t *entry = NULL;
	uintptr_t spare = 0;
	bool ptl_held = false;
	if (page_mapping_find(as->id, page, &pte)) {
		__atomic_fetch_add(&st->faults_minor, 1, __ATOMIC_RELAXED);
		if (access == PF_ACCESS_WRITE && !(pte.flags & PTE_REC_WRITABLE))
			return EINVAL;
		if (access == PF_ACCESS_EXEC && !(pte.flags & PTE_REC_EXEC))
			return EINVAL;
#ifdef CONFIG_DEBUG
		void (*hook)(as_t *, uintptr_t) = __atomic_load_n(
		    &as_fault_minor_hook, __ATOMIC_ACQUIRE);
		if (hook)
			hook(as, page);
#endif
	} else {
		/* Charged first: a task at its limit allocates nothing. */
		if (fault_charge(as, st) != EOK) {
			fault_limit_reached();
			return ELIMIT;
		}
		/*
		 * Allocated (and zeroed) before any lock is taken: it may
		 * sleep. A fault outside any area (a fatal one) wastes it.
		 */
		uintptr_t frame = frame_alloc(1, FRAME_ZERO | FRAME_USER);
		if (!frame) {
			fault_uncharge(st);
			return ENOMEM;
		}
#ifdef CONFIG_DEBUG
		void (*ihook)(as_t *, uintptr_t) = __atomic_load_n(
		    &as_fault_insert_hook, __ATOMIC_ACQUIRE);
		if (ihook)
			ihook(as, page);
#endif
		int irc = fault_insert(as, addr, page, access, frame, &pte, &entry,
		    &spare, &ptl_held);
		if (irc != EOK) {
			frame_free(spare, 1);
			fault_uncharge(st);
			return irc;
		}
	}

	irq_spinlock_t *ptl = as_pt_lock(as, page);
	if (!ptl_held)
		irq_spinlock_lock(ptl, true);
	pte_t check;
	int rc = EOK;
	if (page_mapping_find(as->id, page, &check) && check.frame == pte.frame) {
		uint64_t *e = entry ? entry :
		    paging_walk(as->root_phys, page, &as->pt_pages);
		if (e) {
			__atomic_store_n(e, pte.frame | hw_flags(&pte),
			    __ATOMIC_RELEASE);
			/* The retried access's walk sees it (arm64: DSB ISHST). */
			paging_entry_installed();
		} else
			rc = ENOMEM;
	} else {
		/* The page was unmapped meanwhile: the retry faults again. */
		__atomic_fetch_add(&st->faults_unmapped, 1, __ATOMIC_RELAXED);
	}
	irq_spinlock_unlock(ptl, true);
	if (spare) {
		frame_free(spare, 1);
		fault_uncharge(st);
	}
	return rc;
}
