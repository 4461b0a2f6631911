/** @file cht_env_posix.h
 * The userspace environment of the concurrent hash table (POSIX threads).
 *
 * The table's source is common/adt/cht.c (shared with the kernel and the
 * OS's libcht), compiled unchanged; it reaches RCU, deferred work, allocation
 * and assertions only through the names defined here (docs/ARCHITECTURE.md,
 * "One CHT, three environments"). <adt/cht.h> (common/include/adt/cht.h)
 * includes the header that CHT_ENV_HEADER names: uspace/Makefile names this
 * one, and so does <cht.h> for libcht's users.
 *
 *   RCU            libcht's own userspace RCU (cht_rcu.h, memb flavour)
 *   deferred work  one background worker thread of the library (resizes)
 *   allocation     malloc/free; an array of CHT_ENV_HUGE_MIN bytes or more
 *                  (the bucket arrays of big tables) advised for huge pages
 *   assertions     on unless CHT_NDEBUG; a failure prints and aborts (only
 *                  misuse of the raw kernel API can trigger one: the cht_u_*
 *                  API checks first and returns error codes)
 */
#ifndef USPACE_CHT_ENV_H_
#define USPACE_CHT_ENV_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cht_rcu.h>

typedef cht_rcu_head_t cht_env_rcu_item_t;

/** A deferred work item, run by the library's worker thread. */
typedef struct cht_env_work {
	struct cht_env_work *next;
	void (*func)(struct cht_env_work *work);
	/** When a delayed item is due (cht_env_now_ms()); delayed items only. */
	uint64_t due_ms;
} cht_env_work_t;

/** Registry link (doubly linked list under the registry lock). */
typedef struct cht_env_link {
	struct cht_env_link *prev, *next;
} cht_env_link_t;

/** Reports a failed assertion or misuse and aborts. */
void cht_env_fail(const char *what, const char *file, int line)
    __attribute__((noreturn, cold));

static inline void cht_env_rcu_lock_checked(const char *file, int line)
{
	if (__builtin_expect(cht_rcu_read_lock() != CHT_OK, 0))
		cht_env_fail("reader section in a thread not registered with "
		    "cht_rcu_register_thread()", file, line);
}

#define cht_env_rcu_read_lock()   cht_env_rcu_lock_checked(__FILE__, __LINE__)
#define cht_env_rcu_read_unlock() cht_rcu_read_unlock()
#define cht_env_rcu_read_locked() cht_rcu_read_locked()
#define cht_env_rcu_call(item, func)  cht_rcu_call((item), (func))
/* Called by the resize worker and cht_destroy(), never inside a section. */
#define cht_env_rcu_synchronize() ((void) cht_rcu_synchronize())
#define cht_env_rcu_barrier()     ((void) cht_rcu_barrier())
#define cht_env_rcu_item_of(ptr)  (ptr)

/*
 * cht_t.b, the table's one RCU-protected pointer, is declared `__rcu` for the
 * kernel's checker (kernel/generic/include/compiler.h, `make check`); here the
 * annotations are empty and the accessors plain (release store, acquire load,
 * plain load and store by the one updater).
 */
#ifndef __rcu
#define __rcu
#endif
#define cht_env_rcu_access(ptr)          cht_rcu_access(ptr)
#define cht_env_rcu_access_owned(ptr)    (ptr)
#define cht_env_rcu_assign(ptr, value)   cht_rcu_assign(ptr, value)
#define cht_env_rcu_init_ptr(ptr, value) ((void) ((ptr) = (value)))

/**
 * Queues @a w for the worker thread (started on first use). @a block is
 * irrelevant here: the enqueue takes a mutex for a few instructions, which a
 * userspace reader section may do (it never waits for a grace period).
 * @return false if the worker thread could not be started (nothing queued);
 *         the next call tries to start it again.
 */
bool cht_env_work_enqueue(cht_env_work_t *w,
    void (*func)(cht_env_work_t *work), bool block);

/**
 * Queues @a w for the worker thread to run no earlier than @a delay_ms
 * milliseconds from now (the managed map's idle decay, cht_alloc.c): until
 * then it waits on a list of delayed items, sorted by when they are due,
 * and the worker, when it has nothing else to run, sleeps until the first
 * is due (a timed wait on its condition; items queued meanwhile wake it as
 * usual). @a w must not be queued already. Any thread, never inside the
 * worker's own lock. @return false if the worker thread could not be
 * started (nothing queued); the next call tries to start it again.
 */
bool cht_env_work_enqueue_after(cht_env_work_t *w,
    void (*func)(cht_env_work_t *work), unsigned delay_ms);

/**
 * Grow limit of a table created with max_load 0: one item per bucket on
 * average, where cds_lfht keeps its tables too; with the kernel's default of
 * 4 the auto-resized table ran at 2-4 items per bucket and lost the lookup
 * points of the peer benchmark (bench/userspace) to cds_lfht. Shrinking
 * starts below a quarter of it, as everywhere.
 */
#define CHT_ENV_DEFAULT_MAX_LOAD 1

/** cht_create_load(), a fractional grow limit at creation (adt/cht.h). */
#define CHT_ENV_CREATE_LOAD 1

/**
 * cht_find_fast() stops at the next bucket's dummy by its address instead of
 * reading it (common/include/adt/cht.h): one compare per node visited, which
 * the kernel's page hash does not pay (its lookups are in the cache: chtbench
 * 12 and 21 count instructions), and about 0.1 last-level miss fewer per
 * unsuccessful lookup of a table larger than the cache (bench_us misses:
 * uspace/lib/cht/README.md, "The intrusive table's misses").
 */
#define CHT_ENV_LOOKUP_STOP_AT_NEXT_DUMMY 1

/**
 * The split item count (cht_t.cnt_slots) has one slot per stripe of threads:
 * the number of online CPUs rounded up to a power of two, and a registered
 * thread's stripe (handed out round robin) picks its slot, so the threads
 * that run at the same time mostly update different lines.
 */
#define CHT_ENV_CNT_SLOTS 1
/** Number of count slots for a new table: a power of two >= 1. */
size_t cht_env_cnt_nslots(void);
/** The calling (registered) thread's slot among @a n (a power of two). */
#define cht_env_cnt_slot(n)    ((size_t) cht_rcu_self.stripe & ((n) - 1))

/** Arrays from this many bytes up get the huge-page hint (cht_env_malloc). */
#define CHT_ENV_HUGE_MIN ((size_t) 4 << 20)
/**
 * The table's allocations (cht.c: its bucket arrays and count slots):
 * malloc(@a size), and for @a size >= CHT_ENV_HUGE_MIN the whole pages
 * inside the block advised for transparent huge pages before anything is
 * written to them (cht_plat_advise_huge(): MADV_HUGEPAGE on Linux, nothing
 * in the OS). At 1e8 keys a lookup's bucket is a random line of a 2-8 GiB
 * array: on 4 KiB pages nearly every lookup also misses the TLB and walks
 * page tables that do not fit the caches (uspace/lib/cht/README.md, "Huge
 * pages"). Any thread; may sleep (as malloc). @return the block, or NULL.
 */
void *cht_env_malloc(size_t size);
#define cht_env_free(ptr)      free(ptr)
#ifdef CHT_NDEBUG
#define cht_env_assert(expr)   ((void) 0)
#else
#define cht_env_assert(expr) \
	(__builtin_expect(!!(expr), 1) ? (void) 0 : \
	    cht_env_fail("assertion failed: " #expr, __FILE__, __LINE__))
#endif
#define cht_env_printf         printf
#define cht_env_memset         memset
#if defined(__x86_64__) || defined(__i386__)
#define cht_env_cpu_relax()    __builtin_ia32_pause()
#else
#define cht_env_cpu_relax()    __atomic_signal_fence(__ATOMIC_SEQ_CST)
#endif

/** Sleeps (waiting for a resize to finish). */
void cht_env_sleep_ms(unsigned ms);
/** Milliseconds of a monotonic clock (the resizer's shrink hold-off). */
uint64_t cht_env_now_ms(void);

/** Registry of live tables, for statistics (cht_print_tables()). */
void cht_env_registry_add(cht_env_link_t *link);
void cht_env_registry_remove(cht_env_link_t *link);
/** Calls fn on every registered table, inside a reader section. */
void cht_env_registry_foreach(void (*fn)(cht_env_link_t *link));

#endif
