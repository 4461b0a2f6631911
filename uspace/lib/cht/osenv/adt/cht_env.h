/** @file cht_env.h
 * The third environment of the concurrent hash table: the OS's own user
 * space (uspace/lib/c), for programs such as uspace/app/chtuser.
 *
 * The table's source is the kernel's kernel/generic/src/adt/cht.c, compiled
 * unchanged (docs/ARCHITECTURE.md, "One CHT, three environments"). This
 * directory comes before kernel/generic/include on the include path of the
 * OS's libcht (top-level Makefile, $(BUILD)/os/libcht.a), so <adt/cht_env.h>
 * resolves here and <adt/cht.h> to the kernel's header.
 *
 *   RCU            libcht's user RCU (uspace/lib/urcu, cht_rcu.h) built for
 *                  the OS: readers as on Linux (no fence, no RMW), writers'
 *                  barrier SYS_MEMBARRIER, blocking on lib/c futexes, the
 *                  reader record in the thread control block
 *   deferred work  one worker thread of the library (resizes): cht_env.c,
 *                  shared with the Linux environment
 *   allocation     lib/c malloc/free
 *   assertions     on unless CHT_NDEBUG; a failure prints and ends the task
 *                  with status 134
 */
#ifndef USPACE_OS_CHT_ENV_H_
#define USPACE_OS_CHT_ENV_H_

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
} cht_env_work_t;

/** Registry link (doubly linked list under the registry lock). */
typedef struct cht_env_link {
	struct cht_env_link *prev, *next;
} cht_env_link_t;

/** Reports a failed assertion or misuse and ends the task. */
void cht_env_fail(const char *what, const char *file, int line)
    __attribute__((noreturn, cold));

/*
 * A reader section of an unregistered thread is a bug of the program (the
 * OS has no cht_u_* API that would check first): fail loudly.
 */
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
#define cht_env_rcu_synchronize() ((void) cht_rcu_synchronize())
#define cht_env_rcu_barrier()     ((void) cht_rcu_barrier())
#define cht_env_rcu_item_of(ptr)  (ptr)

/**
 * Queues @a w for the worker thread (started on first use; @a block is
 * irrelevant, as on Linux). @return false if the worker could not be started.
 */
bool cht_env_work_enqueue(cht_env_work_t *w,
    void (*func)(cht_env_work_t *work), bool block);

/** Grow limit of max_load 0: as the Linux library (see its cht_env.h). */
#define CHT_ENV_DEFAULT_MAX_LOAD 1

#define cht_env_malloc(size)   malloc(size)
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
#define cht_env_cpu_relax()    __builtin_ia32_pause()

/** Sleeps (waiting for a resize to finish): a futex wait with a timeout. */
void cht_env_sleep_ms(unsigned ms);
/** Milliseconds of SYS_CLOCK_NS (the resizer's shrink hold-off). */
uint64_t cht_env_now_ms(void);

/** Registry of live tables, for statistics (cht_print_tables()). */
void cht_env_registry_add(cht_env_link_t *link);
void cht_env_registry_remove(cht_env_link_t *link);
/** Calls fn on every registered table, inside a reader section. */
void cht_env_registry_foreach(void (*fn)(cht_env_link_t *link));

#endif
