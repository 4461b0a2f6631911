/** @file as.h
 * Address spaces and their areas.
 *
 * A user address space (as_t) owns the lower half of the virtual address space
 * (below USER_SPACE_END); the kernel half is shared by all. Mappings of user
 * pages live in the global page hash table (genarch/mm/page_ht.h), which is the
 * authoritative store; the hardware 4-level page tables of an address space are
 * a cache that the page fault handler fills from a page hash table lookup.
 *
 * Kernel threads may enter a user address space (as_enter) to touch its pages;
 * user mode itself is not implemented yet.
 */
#ifndef KERN_AS_H_
#define KERN_AS_H_

#include <typedefs.h>
#include <atomic.h>
#include <adt/list.h>
#include <adt/avl.h>
#include <synch/spinlock.h>
#include <synch/mutex.h>
#include <synch/rcu_types.h>

/** First address above the user half. */
#define USER_SPACE_END 0x0000800000000000UL

/** Area flags. */
#define AS_AREA_READ   (1 << 0)
#define AS_AREA_WRITE  (1 << 1)
#define AS_AREA_EXEC   (1 << 2)

struct as;

/**
 * Limits of every address space (abi/syscall.h: TASK_AREAS_MAX,
 * TASK_AREA_BYTES_MAX): at most AS_AREAS_MAX areas, together at most
 * AS_AREA_PAGES_MAX pages; as_area_create() and growing as_area_resize()
 * return ELIMIT beyond them.
 */
#define AS_AREAS_MAX      TASK_AREAS_MAX
#define AS_AREA_PAGES_MAX (TASK_AREA_BYTES_MAX / PAGE_SIZE)

typedef struct as_area {
	/**
	 * Node in as->areas, keyed by base; changed under as->area_lock (with
	 * as->area_seq odd), walked without it by the fault path's look-up
	 * (avl_find_le_rcu() in an RCU reader section, validated by area_seq).
	 */
	avl_node_t node;
	struct as *as;
	uintptr_t base;      /**< page aligned; set once */
	/**
	 * Size in pages; written under as->area_lock (area_seq odd) with
	 * __atomic stores, read by the lock-free look-up with __atomic loads.
	 */
	size_t pages;
	unsigned flags;      /**< set once */
	/** Frees a destroyed area after a grace period (lock-free readers). */
	rcu_item_t rcu;
} as_area_t;

/** Page-table locks per address space (a power of two), see as_t.pt_locks. */
#define AS_PT_LOCKS 16

/** Bytes of a cache line (64 on amd64 and arm64: CACHE_LINE_SIZE). */
#define AS_LINE 64

/**
 * One page-table lock alone in its cache line: the faults of two CPUs in two
 * regions must not share a line (two 32-byte locks per line were the hottest
 * line after the area lock in chtbench 22, docs/SHARING.md). The address
 * space is placed on a line boundary (as_create()), so the alignment holds.
 */
typedef struct {
	irq_spinlock_t lock;
} __attribute__((aligned(AS_LINE))) as_pt_lock_t;

/**
 * Fault and unmap statistics of an address space: one CPU's row
 * (as_cpu_stats_t), or the sums of every CPU's row (as_stats()).
 *
 * A row is a line of its own: the fault path counts every fault, and one
 * counter for all CPUs was a line written by every faulting CPU on every
 * fault. Rows are updated with relaxed __atomic adds (a thread preempted
 * between reading its CPU and the add counts in another CPU's row: still
 * exact); as_stats() sums them (pages_mapped wraps per row: the sum is exact).
 */
typedef struct {
	/** Faults handled. */
	uint64_t faults;
	/** Hit in the page hash table (cache refill). */
	uint64_t faults_minor;
	/** Missed, then lost the insert to another CPU's fault (EEXIST). */
	uint64_t faults_raced;
	/**
	 * The locked re-check found the record gone or mapping another frame
	 * (an unmap came between lookup and install): nothing installed.
	 */
	uint64_t faults_unmapped;
	/** Pages mapped now (inserted by faults and fills minus unmapped). */
	uint64_t pages_mapped;
	/** TLB shootdown cross-calls sent (0 where ARCH_TLB_BROADCAST). */
	uint64_t shootdowns;
	/**
	 * Broadcast TLB invalidations (one per shootdown where
	 * ARCH_TLB_BROADCAST, arm64; 0 elsewhere).
	 */
	uint64_t tlb_broadcasts;
	/**
	 * Bytes charged to the address space (as_t.mem_charged) ahead of the
	 * faults of this row's CPU: a fault takes its page from here (one
	 * relaxed atomic subtract) and refills AS_CHARGE_BATCH at a time from
	 * the shared count, so the fault path writes no shared line for its
	 * charge. May dip below 0 for an instant (a subtract that found it
	 * empty adds back). as_stats() sums it.
	 */
	int64_t charge_budget;
	/** Page-table pages freed by prunes (as_area_destroy, shrinks). */
	uint64_t pt_freed;
} __attribute__((aligned(AS_LINE))) as_stats_t;

/** Bytes a fault moves from as_t.mem_charged to its row's budget at once. */
#define AS_CHARGE_BATCH (16 * PAGE_SIZE)

/** One CPU's row of an address space's statistics (as_t.stats[]). */
typedef as_stats_t as_cpu_stats_t;

typedef struct as {
	/* Read by every fault, written (almost) never: */
	/** Unique id (also the page hash table key part). Set once. */
	uint64_t id;
	/** Top-level page table (physical and direct-map address). Set once. */
	uintptr_t root_phys;
	uint64_t *root;
	/**
	 * The TLB tag of the address space: arm64 (generation | ASID), 0
	 * before its first load (arch/arm64/include/arch/asid.h: written under the ASID lock,
	 * read without it by the switch's fast path and by the unmap's
	 * invalidation, relaxed atomics); unused on amd64.
	 */
	uint64_t tlb_ctx;
	/** What as_create() got from malloc() (as_t sits on a line boundary). */
	void *raw;
	/** Rows of stats[] (cpu_count when created). Set once. */
	unsigned nstats;
	/**
	 * Sequence count of the area set: odd while a writer (under area_lock)
	 * changes the tree or an area's size, bumped to the next even value
	 * when done. The fault path's lock-free look-up reads it before and
	 * after its walk (a seqlock read) and once more under the page's
	 * page-table lock before it inserts the page's record (mm/as_fault.c,
	 * "Area look-up"). Written with __atomic stores under area_lock only,
	 * read with __atomic loads; orders named where they are.
	 */
	uint64_t area_seq;
	/**
	 * The areas, ordered by base (an AVL tree: lookups O(log n)); changed
	 * under area_lock, walked without it by the fault path (see area_seq).
	 */
	avl_tree_t areas;
	/** Pages of all areas together (bounded by AS_AREA_PAGES_MAX); area_lock. */
	size_t area_pages;

	/*
	 * The memory the address space (its task) makes the kernel hold, and
	 * its limit (as_charge()). Its own line: written when a row's budget
	 * is refilled, a table allocated or freed, an object charged.
	 */
	/**
	 * Bytes charged but the page tables: the pages of the areas (with
	 * the rows' budgets, see as_cpu_stats_t.charge_budget) and the
	 * kernel objects of the task (thread records and kernel stacks, area
	 * records, futexes). Relaxed atomics; as_charge() adds with a CAS
	 * against mem_limit.
	 */
	uint64_t mem_charged __attribute__((aligned(AS_LINE)));
	/**
	 * Page-table pages below the root (paging_walk() adds the tables it
	 * installs, a prune's RCU callback subtracts the ones it frees).
	 * Relaxed atomics. Charged as PAGE_SIZE bytes each.
	 */
	uint64_t pt_pages;
	/** The limit of mem_charged + pt_pages pages, in bytes. Set once. */
	uint64_t mem_limit;

	/** References: creator, threads inside (as_enter). Atomics. */
	atomic_t refcount __attribute__((aligned(AS_LINE)));
	/** Link in the global list of address spaces; protected by as_list_lock. */
	link_t as_link;

	/**
	 * Bitmap of CPUs with this address space loaded in their MMU. Atomics. Its
	 * own line: written on every switch into or out of the address space.
	 */
	uint64_t cpus_running __attribute__((aligned(AS_LINE)));

	/**
	 * Serializes the changes of the area set (create, resize, destroy) with
	 * the unmap a shrink or destroy does after it: held from the change
	 * under area_lock until the released range is unmapped, so no area can
	 * be created in a range (and fault pages in) while the old mappings
	 * there are still being removed. Faults do not take it. Order:
	 * area_mtx, then area_lock.
	 */
	mutex_t area_mtx __attribute__((aligned(AS_LINE)));
	/**
	 * Protects the changes of areas, area_pages, area_seq and every
	 * area's pages. IRQ-safe. The fault path takes it only when its
	 * lock-free look-up keeps failing validation (a writer busy), and
	 * as_page_fill() and as_area_find() always.
	 */
	irq_spinlock_t area_lock __attribute__((aligned(AS_LINE)));
	/**
	 * Page-table locks, split by 2 MiB region (one leaf table) as Linux
	 * splits its page-table locks: the last-level entries of region r are
	 * written under pt_locks[r % AS_PT_LOCKS] (as_pt_lock()), so faults and
	 * unmaps in different regions take different locks. Intermediate tables
	 * need none (paging_walk() installs them by compare-and-swap). The
	 * fault path also re-validates its lock-free area look-up and inserts
	 * the page's record under its page's lock; a shrink or destroy takes
	 * and releases every one of them after changing the area set and
	 * before it unmaps (mm/as_fault.c, "Area look-up").
	 */
	as_pt_lock_t pt_locks[AS_PT_LOCKS];
	/**
	 * Statistics, one row per CPU (nstats rows): see as_cpu_stats_t;
	 * as_stats() sums them.
	 */
	as_cpu_stats_t stats[];
} as_t;

/** Sets up address spaces (BSP, boot): the page hash table, scheduler hook. */
void as_init(void);

/**
 * The memory limit of a new address space (its task), in bytes: a quarter
 * of the frames managed at boot, at least AS_MEM_LIMIT_MIN, at most what is
 * left above the kernel's reserve (frame_reserve()). Any context.
 */
uint64_t as_mem_limit_default(void);
/** The floor of as_mem_limit_default(): 16 MiB. */
#define AS_MEM_LIMIT_MIN (16UL << 20)

/**
 * Charges @a bytes the kernel holds for @a as's task (a kernel object made
 * on its behalf) to @a as. @return EOK, or ELIMIT when mem_charged plus the
 * page tables would exceed mem_limit (nothing charged). Any context; never
 * blocks (a CAS loop on mem_charged).
 */
int as_charge(as_t *as, size_t bytes);
/** Gives back @a bytes as_charge() charged. Any context. */
void as_uncharge(as_t *as, size_t bytes);
/**
 * Bytes charged to @a as now: mem_charged plus its page-table pages (the
 * rows' unused budgets included). Racy while it changes. Any context.
 */
uint64_t as_charged(as_t *as);

/** The kind of access that faulted (decoded by the architecture). */
typedef enum {
	PF_ACCESS_READ,
	PF_ACCESS_WRITE,
	PF_ACCESS_EXEC,
} pf_access_t;

/**
 * Resolves a page fault at user address @a addr (< USER_SPACE_END) in
 * @a as for an access of kind @a access: maps a zeroed frame in the area
 * that covers it, or installs the hardware entry of a page mapped already.
 * Called by the architecture's fault handler with interrupts enabled
 * (thread context: it may allocate and sleep).
 * @return EOK when the access can be retried; ENOENT (no area), EINVAL (the
 * area forbids the access), ENOMEM (no frame above the kernel's reserve)
 * or ELIMIT (the page would take the task past its memory limit,
 * as_charge()): a fatal fault the caller reports (task_user_fault() for
 * user mode, a panic or a uaccess fix-up otherwise; a user thread's
 * uthread_t.mem_limited is set for ELIMIT, so that its system call returns
 * ELIMIT, not the fix-up's EFAULT).
 */
int as_page_fault(as_t *as, uintptr_t addr, pf_access_t access);

#ifdef CONFIG_DEBUG
/**
 * Test hook (debug builds only; NULL unless a test sets it): when non-NULL,
 * as_page_fault() calls it on a minor fault (the lookup found the page's
 * record) with @a as and the page's address, after the lookup and before
 * the page-table lock under which the fault re-checks the record, with
 * interrupts as the fault handler left them (enabled for a thread that
 * faulted with them enabled). Test `pagefault1` holds a fault there until
 * another CPU has unmapped the page, which makes the unmapped-before-install
 * path (faults_unmapped) certain instead of a race of a few dozen
 * instructions. The hook must return in bounded time and must ignore the
 * faults of address spaces it does not know (every fault of every CPU calls
 * it while it is set). Written by tests with release stores, read with
 * acquire.
 */
extern void (*as_fault_minor_hook)(as_t *as, uintptr_t page);
/**
 * Test hook (debug builds only; NULL unless a test sets it): when non-NULL,
 * as_page_fault() calls it on a fault whose lookup missed, with @a as and
 * the page's address, after the page's frame was allocated and before the
 * insert of its record (no lock held, interrupts as the fault handler left
 * them). Test `pagefault1` holds a fault there until another CPU's fault
 * of the same page has inserted its record, which makes the lost insert
 * (EEXIST, faults_raced) certain instead of a race of two vCPUs running at
 * the same instant. The same rules as as_fault_minor_hook: bounded time,
 * other address spaces ignored, release stores by tests, acquire here.
 */
extern void (*as_fault_insert_hook)(as_t *as, uintptr_t page);
#endif

/**
 * Creates an empty address space. @return it (one reference) or NULL on
 * ENOMEM. Thread context.
 */
as_t *as_create(void);
/** Adds a reference. */
void as_hold(as_t *as);
/**
 * Drops a reference; the last one destroys the address space: every area is
 * destroyed (pages unmapped, frames freed after a grace period), page tables
 * freed. Thread context, may sleep.
 */
void as_release(as_t *as);

/**
 * The one check of an area's range, for the kernel's callers and the system
 * calls alike: [@a base, @a base + @a size) is page aligned, 0 < @a size <=
 * AREA_SIZE_MAX, and lies in [USER_AREA_START, USER_AREA_END)
 * (abi/syscall.h). Any context.
 */
bool as_area_range_ok(uintptr_t base, size_t size);
/**
 * Creates an anonymous area [base, base + size). The range must pass
 * as_area_range_ok() (else EINVAL); the area may not overlap
 * another. Pages are allocated (zeroed) on first touch. O(log n) in the
 * number of areas; waits (as->area_mtx) for a shrink or destroy of this
 * address space still unmapping. Thread context (malloc), interrupts
 * enabled, may sleep.
 * @return EOK, EINVAL, EEXIST (overlap), ENOMEM, ELIMIT (AS_AREAS_MAX areas
 * or AS_AREA_PAGES_MAX pages in all would be exceeded).
 */
int as_area_create(as_t *as, uintptr_t base, size_t size, unsigned flags);
/**
 * Changes the size of the area starting at @a base (pages beyond the new end
 * are unmapped: work proportional to the 2 MiB regions with page tables,
 * see as_unmap_range()). @return EOK, ENOENT, EINVAL, EEXIST (growing into
 * another area), ELIMIT (growing past AS_AREA_PAGES_MAX pages in all).
 * The released range stays reserved (as->area_mtx held) until its unmap is
 * done. Thread context, interrupts enabled, may sleep.
 */
int as_area_resize(as_t *as, uintptr_t base, size_t size);
/**
 * Destroys the area starting at @a base (O(log n) to find it; the unmap as
 * as_unmap_range()); its range stays reserved (as->area_mtx held) until
 * the unmap is done, so no area created meanwhile loses pages to it.
 * @return EOK or ENOENT. Thread context, interrupts enabled, may sleep.
 */
int as_area_destroy(as_t *as, uintptr_t base);
/**
 * Finds the area containing @a addr and copies it to @a out.
 * @return true if found.
 */
bool as_area_find(as_t *as, uintptr_t addr, as_area_t *out);

/**
 * Unmaps the page at @a page: removes the mapping from the page hash table,
 * clears the hardware entry, shoots down the TLBs of the CPUs running the
 * address space (smp_call; one broadcast invalidation where
 * ARCH_TLB_BROADCAST), frees the frame after a grace period. The next
 * access faults again. @return EOK, or ENOENT if the page was not mapped.
 * Thread context, interrupts enabled.
 */
int as_unmap_page(as_t *as, uintptr_t page);

/**
 * Unmaps the mapped pages of [@a base, @a base + @a pages * PAGE_SIZE) as
 * as_unmap_page() does each, but with one TLB shootdown for the whole range:
 * one cross-call per CPU running the address space (the architecture's
 * tlb_invalidate_pages_local() of the span), or one broadcast invalidation
 * where ARCH_TLB_BROADCAST, not one per page. Pages that are
 * not mapped are skipped, and so is every 2 MiB region without a last-level
 * page table (no page of it can have a record: a fault or as_page_fill()
 * creates the table before it inserts the record): the work is proportional
 * to the regions that have tables (512 look-ups each), not to the range's
 * size. The look-ups run in reader sections of at most UNMAP_BATCH pages
 * each (as.c), each with its own shootdown, so a huge range never holds up
 * a grace period.
 * @param removed if not NULL, receives the number of pages unmapped.
 * @return EOK; EINVAL if @a base is not page aligned or the range leaves the
 *         user half (nothing is unmapped then).
 * Thread context, interrupts enabled.
 */
int as_unmap_range(as_t *as, uintptr_t base, size_t pages, size_t *removed);

/**
 * Maps the page @a page of an area (if it is not mapped yet: a zeroed frame
 * with the area's permissions, like a fault) and copies @a len bytes from
 * kernel @a src to offset @a off in it, through the direct map: the program
 * loader fills read-only pages this way. Nobody may run in @a as yet (no
 * concurrent fault of the page). @return EOK, EINVAL, ENOENT (no area),
 * ENOMEM. Thread context.
 */
int as_page_fill(as_t *as, uintptr_t page, const void *src, size_t off,
    size_t len);

/**
 * Makes the current (kernel) thread run in @a as (takes a reference) until
 * as_leave(). Thread context.
 */
void as_enter(as_t *as);
/** Returns the current thread to the kernel address space (drops the reference). */
void as_leave(void);

/**
 * The statistics of @a as summed over every CPU's row (as_cpu_stats_t). Racy
 * while faults and unmaps run (each row is read atomically, relaxed); exact
 * once the threads that faulted or unmapped have synchronized with the
 * caller. Any context, never blocks; O(CPUs).
 */
as_stats_t as_stats(as_t *as);

/** Number of address spaces that exist. */
size_t as_count(void);
/**
 * Prints every address space and its first 32 areas (AS_PRINT_AREAS), with
 * a count of the rest (`as` command). Thread context.
 */
void as_print(void);

#endif
