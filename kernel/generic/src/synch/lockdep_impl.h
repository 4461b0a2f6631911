/** @file lockdep_impl.h
 * Private to the lock-dependency validator: what its three files share.
 *
 * - lockdep.c: the dependency graph and the checks (the lock hooks, the
 *   class and edge tables, the searches, the interrupt, RCU and work marks);
 * - lockdep_report.c: the reports' printing (each report's evidence, the held
 *   locks, the report's claim and end);
 * - lockdep_info.c: the read-only snapshots behind the `lockdep` console
 *   command (synch/lockdep.h), and their stubs without CONFIG_LOCKDEP.
 *
 * Data (defined in lockdep.c; the names shared by the three files carry an
 * ld_ prefix, omitted below) and what protects it:
 * - classes[], edges[], class_hash[], the edge lists and the interrupt marks
 *   (irq_ip, irq_on_ip): written only under graph_flag (a raw test-and-set
 *   flag taken with interrupts disabled; not a spinlock_t, so not validated);
 *   the counts n_classes and n_edges are published with release stores after
 *   the entry is filled, so lock-free readers (the fast path, the `lockdep`
 *   command) read entries below an acquire-loaded count.
 * - edge_of[a][b]: edge index + 1, stored with release under graph_flag,
 *   loaded with acquire without it (the fast path for a known edge).
 * - counts (acquisitions, edge counts): relaxed atomics.
 * - spinlock_t.lockdep_class: class index + 1, a cache written with relaxed
 *   atomics by any CPU (every writer writes the same value).
 * - Reports: the CPU that finds a violation turns the validator off under
 *   graph_flag (ld_report_start()), which makes every other CPU leave the tables
 *   and the search scratch alone, then prints without graph_flag.
 * - ld_cpu[]: CPU-local, touched only by its CPU with interrupts disabled.
 * - thread_t.lockdep (held sleeping locks, RCU callback nesting):
 *   thread-local, touched only by the thread itself with interrupts disabled
 *   (interrupt handlers never touch it; a report prints the current thread's).
 * - lockdep_map_t.cls: like spinlock_t.lockdep_class.
 * - The RCU and work marks (rcu_cb_ip, rcu_read_ip, rcu_wait_ip, work_ip)
 *   like the interrupt
 *   marks: written under graph_flag, read relaxed without it.
 * - active, reports: atomics.
 */
#ifndef KERN_SYNCH_LOCKDEP_IMPL_H_
#define KERN_SYNCH_LOCKDEP_IMPL_H_

#include <synch/lockdep.h>
#include <synch/spinlock.h>
#include <proc/thread.h>
#include <arch/asm.h>
#include <cpu.h>

typedef struct {
	/** The class's name (the first lock's name pointer). */
	const char *name;
	/** Acquisitions; relaxed atomics. */
	uint64_t acquisitions;
	/** First site in a hardware interrupt / with interrupts enabled. */
	uintptr_t irq_ip;
	uintptr_t irq_on_ip;
	/** First site taken in an RCU callback / in a reader section (thread
	 *  context) / held across rcu_synchronize or rcu_barrier. */
	uintptr_t rcu_cb_ip;
	uintptr_t rcu_read_ip;
	uintptr_t rcu_wait_ip;
	/** First site taken in a work queue item's function. */
	uintptr_t work_ip;
	/** Where that rcu_synchronize or rcu_barrier was called. */
	uintptr_t rcu_wait_call_ip;
	/** A sleeping lock class (mutex, rwlock); set when created. */
	bool sleeping;
	/** Heads of the out- and in-edge lists (edge index + 1, 0: none). */
	unsigned first_out;
	unsigned first_in;
} ld_class_t;

typedef struct {
	uint16_t from;
	uint16_t to;
	/** Next edge of the same source / target (index + 1, 0: none). */
	unsigned next_out;
	unsigned next_in;
	/** Acquisitions of @c to with @c from the newest held; relaxed atomics. */
	uint64_t count;
	uintptr_t from_ip;
	uintptr_t to_ip;
	unsigned cpu;
} ld_edge_t;

typedef lockdep_held_t ld_held_t;

typedef struct {
	ld_held_t held[LOCKDEP_MAX_HELD];
	unsigned depth;
	/** Hardware interrupt nesting (vectors >= 32). */
	unsigned hardirq;
	/** Nonzero while this CPU is inside the validator (or printing a report). */
	unsigned recursion;
} __attribute__((aligned(64))) ld_cpu_t;


/** Which RCU mark mark_rcu() sets. */
typedef enum {
	RCU_MARK_CB,
	RCU_MARK_READ,
	RCU_MARK_WAIT,
	/** Not RCU: taken in a work item (checked by workq_stop). */
	RCU_MARK_WORK,
} rcu_mark_t;

/* The tables and the validator's state (lockdep.c); protection above. */
extern ld_class_t ld_classes[LOCKDEP_MAX_CLASSES];
extern ld_edge_t ld_edges[LOCKDEP_MAX_EDGES];
extern uint16_t ld_edge_of[LOCKDEP_MAX_CLASSES][LOCKDEP_MAX_CLASSES];
extern size_t ld_n_classes;
extern size_t ld_n_edges;
extern bool ld_active;
extern size_t ld_reports;
extern int ld_graph_flag;
/** The last search's path (edge index + 1 per class); under ld_graph_flag. */
extern unsigned ld_bfs_via[LOCKDEP_MAX_CLASSES];

static inline void graph_lock(void)
{
	while (__atomic_exchange_n(&ld_graph_flag, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&ld_graph_flag, __ATOMIC_RELAXED))
			cpu_relax();
	}
}

static inline void graph_unlock(void)
{
	__atomic_store_n(&ld_graph_flag, 0, __ATOMIC_RELEASE);
}

static inline bool is_active(void)
{
	return __atomic_load_n(&ld_active, __ATOMIC_RELAXED);
}

/** The current thread's validator state, or NULL (no thread yet). */
static inline lockdep_thread_t *ld_thread(void)
{
	thread_t *t = THREAD;
	return t ? &t->lockdep : NULL;
}

/* Reports (lockdep_report.c). Each is called by the CPU that claimed the
 * report (ld_report_start() or ld_report_claim()), without ld_graph_flag. */
void ld_report_start(void);
void ld_report_end(const char *kind);
bool ld_report_claim(void);
void ld_print_held(ld_cpu_t *c, unsigned cpu);
void ld_print_edge(unsigned e);
void ld_print_path_forward(unsigned c);
void ld_cycle_report(ld_cpu_t *c, unsigned cpu, ld_held_t *h, unsigned to,
    uintptr_t ip);
void ld_irq_state_report(ld_cpu_t *c, unsigned cpu, unsigned k);
void ld_irq_chain_report(unsigned safe, const unsigned *safe_path,
    unsigned ns, unsigned from, unsigned to, unsigned unsafe, ld_cpu_t *c,
    unsigned cpu);
void ld_rcu_wait_report(unsigned k, rcu_mark_t taker, uintptr_t held_ip,
    const char *what, uintptr_t call_ip, ld_cpu_t *c, unsigned cpu);
void ld_recursion_report(const void *lock, unsigned k, ld_held_t *h,
    uintptr_t ip, ld_cpu_t *c, unsigned cpu);
void ld_might_sleep_report(const char *what, uintptr_t ip, ld_cpu_t *c,
    unsigned cpu);

#endif
