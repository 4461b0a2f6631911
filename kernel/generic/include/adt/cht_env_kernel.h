/** @file cht_env_kernel.h
 * The kernel environment of the concurrent hash table (adt/cht.c).
 *
 * cht.c reaches RCU, deferred work, allocation, atomics, assertions and
 * printing only through the names defined here, so the same source compiles in
 * userspace over uspace/lib/cht/env/adt/cht_env_posix.h (Linux) and
 * uspace/lib/cht/osenv/adt/cht_env_os.h (the OS's user programs)
 * (docs/ARCHITECTURE.md, "One CHT, three environments"). The Makefile names
 * this header for <adt/cht.h> (-DCHT_ENV_HEADER).
 */
#ifndef KERN_CHT_ENV_H_
#define KERN_CHT_ENV_H_

#include <typedefs.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <synch/spinlock.h>
#include <adt/list.h>
#include <mm/malloc.h>
#include <print.h>
#include <debug.h>
#include <lib/str.h>
#include <cpu.h>
#include <debug/fault_inject.h>

typedef rcu_item_t cht_env_rcu_item_t;
typedef work_t cht_env_work_t;
typedef link_t cht_env_link_t;

#define cht_env_rcu_read_lock()       rcu_read_lock()
#define cht_env_rcu_read_unlock()     rcu_read_unlock()
#define cht_env_rcu_read_locked()     rcu_read_locked()
#define cht_env_rcu_call(item, func)  rcu_call((item), (func))
/* Unlinked items: unordered, one CAS per item (synch/rcu.h). */
#define cht_env_rcu_call_batched(item, func)  rcu_call_batched((item), (func))
#define cht_env_rcu_synchronize()     rcu_synchronize()
#define cht_env_rcu_barrier()         rcu_barrier()
#define cht_env_rcu_item_of(ptr)      (ptr)
/*
 * The accessors of the table's one RCU-protected pointer, cht_t.b (declared
 * `__rcu`, compiler.h): synch/rcu.h's, which sparse checks (`make check`).
 */
#define cht_env_rcu_access(ptr)        rcu_access(ptr)
#define cht_env_rcu_access_owned(ptr)  rcu_access_owned(ptr)
#define cht_env_rcu_assign(ptr, value) rcu_assign(ptr, value)
#define cht_env_rcu_init_ptr(ptr, value) rcu_init_ptr(ptr, value)

/**
 * Fault injection for tests: when non-NULL, cht_env_work_enqueue() calls it
 * instead of enqueuing and returns its result (test `chtcount` makes an
 * enqueue fail). Written by tests with release stores, read with acquire.
 */
extern bool (*cht_env_enqueue_hook)(cht_env_work_t *w);

#ifdef CONFIG_DEBUG
/**
 * Test hook (debug builds only): called by every insert right after the CAS
 * that linked its item, with the table and the item, inside the caller's
 * reader section. Test `chtcount` uses it to hold an inserter there until a
 * remover has taken the item out again. Written by tests with release
 * stores, read with acquire.
 */
extern void (*cht_env_linked_hook)(void *table, void *item);
#define cht_env_test_linked(table, item) do { \
		void (*f_)(void *, void *) = __atomic_load_n(&cht_env_linked_hook, \
		    __ATOMIC_ACQUIRE); \
		if (f_) \
			f_((table), (item)); \
	} while (0)
#endif

/**
 * Enqueues the resize work on the system work queue; @a block selects the
 * blocking variant. @return false if the work could not be queued.
 */
static inline bool cht_env_work_enqueue(cht_env_work_t *w,
    void (*func)(cht_env_work_t *), bool block)
{
	bool (*hook)(cht_env_work_t *) = __atomic_load_n(&cht_env_enqueue_hook,
	    __ATOMIC_ACQUIRE);
	if (hook)
		return hook(w);
	return block ? workq_global_enqueue(w, func) :
	    workq_global_enqueue_noblock(w, func);
}

/**
 * cht_ops_t.rcu_free: a table's items may go straight to rcu_call_batched()
 * with the user's own callback (no wrapper; the kernel has no ABI to keep).
 */
#define CHT_ENV_OPS_RCU_FREE 1

/**
 * The split item count has one slot per CPU (cht_t.cnt_slots): created
 * tables size it from cpu_count, which is final before the first table is
 * made (as_init() runs after the APs are up).
 */
#define CHT_ENV_CNT_SLOTS 1
#define cht_env_cnt_nslots()   ((size_t) cpu_count)
/** The slot of the current CPU (< @a n). */
#define cht_env_cnt_slot(n)    ((void) (n), (size_t) cpu_current_id())

#define cht_env_malloc(size)   malloc(size)
#define cht_env_free(ptr)      free(ptr)
#define cht_env_assert(expr)   assert(expr)
#define cht_env_printf         printf
#define cht_env_memset         memset
#define cht_env_cpu_relax()    cpu_relax()
/** Sleeps a little (waiting for a resize to finish). Thread context. */
void cht_env_sleep_ms(unsigned ms);
/** Milliseconds since boot (the resizer's shrink hold-off). Any context. */
uint64_t cht_env_now_ms(void);

/**
 * The sharedcount negative control (fault_inject(FI_CHT_SHAREDCOUNT), make
 * BROKEN=sharedcount, tests/test_sharing.py): every lookup increments this
 * one global counter, the shared write the CHT's read path must not have.
 * Relaxed atomic (a statistic, nothing is ordered by it). Defined in
 * adt/cht_env.c in builds with fault-injection points only.
 */
extern uint64_t cht_broken_lookups;
#define cht_env_fault_lookup() do { \
	if (fault_inject(FI_CHT_SHAREDCOUNT)) \
		__atomic_fetch_add(&cht_broken_lookups, 1, __ATOMIC_RELAXED); \
} while (0)

/** Registry of live tables, for statistics. */
void cht_env_registry_add(cht_env_link_t *link);
void cht_env_registry_remove(cht_env_link_t *link);
/** Calls fn on every registered table link. */
void cht_env_registry_foreach(void (*fn)(cht_env_link_t *link));

#endif
