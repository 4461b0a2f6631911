/** @file lockdep.c
 * Lock-dependency validator (see synch/lockdep.h and docs/LOCKING.md).
 *
 * Data and what protects it:
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
 *   graph_flag (report_start), which makes every other CPU leave the tables
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
#include <synch/lockdep.h>
#include <synch/spinlock.h>
#include <synch/rcu.h>
#include <proc/thread.h>
#include <debug/symtab.h>
#include <arch/asm.h>
#include <lib/str.h>
#include <cpu.h>
#include <print.h>
#include <panic.h>

bool lockdep_panic = true;

#ifdef CONFIG_LOCKDEP

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

#define HASH_SLOTS 1024

static ld_class_t classes[LOCKDEP_MAX_CLASSES];
static ld_edge_t edges[LOCKDEP_MAX_EDGES];
static uint16_t class_hash[HASH_SLOTS];
static uint16_t edge_of[LOCKDEP_MAX_CLASSES][LOCKDEP_MAX_CLASSES];
static size_t n_classes;
static size_t n_edges;
static ld_cpu_t ld_cpu[CONFIG_MAX_CPUS];
static bool active = true;
static size_t reports;
static int graph_flag;

/* BFS scratch; protected by graph_flag. */
static uint16_t bfs_queue[LOCKDEP_MAX_CLASSES];
static unsigned bfs_via[LOCKDEP_MAX_CLASSES];   /* edge index + 1 */
static bool bfs_seen[LOCKDEP_MAX_CLASSES];
/* Paths being printed; protected by graph_flag, then by the report's claim. */
static unsigned path_scratch[LOCKDEP_MAX_CLASSES];
static unsigned safe_path[LOCKDEP_MAX_CLASSES];

static void graph_lock(void)
{
	while (__atomic_exchange_n(&graph_flag, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&graph_flag, __ATOMIC_RELAXED))
			cpu_relax();
	}
}

static void graph_unlock(void)
{
	__atomic_store_n(&graph_flag, 0, __ATOMIC_RELEASE);
}

static bool is_active(void)
{
	return __atomic_load_n(&active, __ATOMIC_RELAXED);
}

/** Turns the validator off (graph_flag held or not). */
static void turn_off(const char *why)
{
	if (__atomic_exchange_n(&active, false, __ATOMIC_RELAXED))
		printf("lockdep: %s; validator turned off\n", why);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t) *s) * 16777619u;
	return h;
}

/**
 * Class index of @a name, or -1 (table full). A new class is a sleeping lock
 * class when @a sleeping. graph_flag not held.
 */
static int class_by_name_kind(const char *name, bool sleeping)
{
	graph_lock();
	uint32_t h = name_hash(name);
	int found = -1;
	for (unsigned i = 0; i < HASH_SLOTS; i++) {
		unsigned slot = (h + i) % HASH_SLOTS;
		unsigned v = class_hash[slot];
		if (v == 0) {
			size_t n = n_classes;
			if (n >= LOCKDEP_MAX_CLASSES)
				break;
			classes[n].name = name;
			classes[n].sleeping = sleeping;
			class_hash[slot] = (uint16_t) (n + 1);
			__atomic_store_n(&n_classes, n + 1, __ATOMIC_RELEASE);
			found = (int) n;
			break;
		}
		if (strcmp(classes[v - 1].name, name) == 0) {
			found = (int) v - 1;
			break;
		}
	}
	graph_unlock();
	if (found < 0)
		turn_off("class table full (LOCKDEP_MAX_CLASSES)");
	return found;
}

static int class_by_name(const char *name)
{
	return class_by_name_kind(name, false);
}

/** Class index of @a lock (cached in the lock), or -1. */
static int class_of(spinlock_t *lock)
{
	unsigned c = __atomic_load_n(&lock->lockdep_class, __ATOMIC_RELAXED);
	if (c)
		return (int) c - 1;
	int found = class_by_name(lock->name);
	if (found >= 0)
		__atomic_store_n(&lock->lockdep_class, (unsigned) found + 1,
		    __ATOMIC_RELAXED);
	return found;
}

static void print_stack(ld_held_t *held, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++) {
		ld_held_t *h = &held[i];
		printf("    #%u \"%s\"%s%s acquired at ", i, classes[h->cls].name,
		    h->ctx ? " (interrupt)" : "", h->trylock ? " (trylock)" : "");
		symtab_print_sym(h->ip, NULL);
		printf("\n");
	}
}

/** The current thread's validator state, or NULL (no thread yet). */
static lockdep_thread_t *ld_thread(void)
{
	thread_t *t = THREAD;
	return t ? &t->lockdep : NULL;
}

static void print_held(ld_cpu_t *c, unsigned cpu)
{
	lockdep_thread_t *t = ld_thread();
	if (t && t->depth > 0) {
		printf("  sleeping locks held by thread \"%s\" (oldest "
		    "first):\n", THREAD->name);
		print_stack(t->held, t->depth);
	}
	printf("  locks held on CPU %u (oldest first):%s\n", cpu,
	    c->depth ? "" : " none");
	print_stack(c->held, c->depth);
}

static void print_edge(unsigned e)
{
	ld_edge_t *d = &edges[e];
	printf("    \"%s\" -> \"%s\": \"%s\" acquired at ", classes[d->from].name,
	    classes[d->to].name, classes[d->from].name);
	symtab_print_sym(d->from_ip, NULL);
	printf(", then \"%s\" at ", classes[d->to].name);
	symtab_print_sym(d->to_ip, NULL);
	printf(" (CPU %u)\n", d->cpu);
}

/**
 * Starts a report: claims it by turning the validator off (no other CPU then
 * learns edges, marks classes or runs a search, so the tables and the search
 * scratch stay as they are while they are printed) and drops graph_flag, so
 * that printing (the console lock) never waits with graph_flag held. Called
 * with graph_flag held.
 */
static void report_start(void)
{
	__atomic_store_n(&active, false, __ATOMIC_RELAXED);
	graph_unlock();
}

/** Ends a report: counts it, panics unless lockdep_panic is false. */
static void report_end(const char *kind)
{
	printf("LOCKDEP REPORT end\n");
	__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&lockdep_panic, __ATOMIC_RELAXED))
		panic("lockdep: %s", kind);
	printf("lockdep: validator turned off after the report\n");
}

/**
 * Claims a report for a check made without graph_flag: false if the
 * validator is already off (another report).
 */
static bool report_claim(void)
{
	graph_lock();
	if (!is_active()) {
		graph_unlock();
		return false;
	}
	report_start();
	return true;
}

/**
 * Breadth-first search from @a start along out-edges (@a forward) or in-edges
 * for a class that satisfies @a goal; returns it (bfs_via holds the path) or
 * -1. graph_flag held.
 */
static int bfs(unsigned start, bool forward, bool (*goal)(unsigned, unsigned),
    unsigned target)
{
	size_t n = __atomic_load_n(&n_classes, __ATOMIC_RELAXED);
	for (size_t i = 0; i < n; i++)
		bfs_seen[i] = false;
	unsigned head = 0, tail = 0;
	bfs_queue[tail++] = (uint16_t) start;
	bfs_seen[start] = true;
	bfs_via[start] = 0;
	while (head < tail) {
		unsigned c = bfs_queue[head++];
		if (goal(c, target))
			return (int) c;
		unsigned e = forward ? classes[c].first_out : classes[c].first_in;
		while (e) {
			ld_edge_t *d = &edges[e - 1];
			unsigned nx = forward ? d->to : d->from;
			if (!bfs_seen[nx]) {
				bfs_seen[nx] = true;
				bfs_via[nx] = e;
				bfs_queue[tail++] = (uint16_t) nx;
			}
			e = forward ? d->next_out : d->next_in;
		}
	}
	return -1;
}

static bool goal_is(unsigned c, unsigned target)
{
	return c == target;
}

static bool goal_irq_on(unsigned c, unsigned target)
{
	(void) target;
	return classes[c].irq_on_ip != 0;
}

static bool goal_irq(unsigned c, unsigned target)
{
	(void) target;
	return classes[c].irq_ip != 0;
}

/** Prints the BFS path ending at @a c (forward search: edges in order). */
static void print_path_forward(unsigned c)
{
	unsigned *path = path_scratch;
	unsigned n = 0;
	while (bfs_via[c] && n < LOCKDEP_MAX_CLASSES) {
		path[n++] = bfs_via[c] - 1;
		c = edges[bfs_via[c] - 1].from;
	}
	while (n > 0)
		print_edge(path[--n]);
}

/** The sites and held locks of an interrupt inversion report. */
static void irq_inversion_report(unsigned safe, unsigned from, unsigned to,
    unsigned unsafe, ld_cpu_t *c, unsigned cpu)
{
	(void) from;
	(void) to;
	printf("  \"%s\" taken in an interrupt handler at ", classes[safe].name);
	symtab_print_sym(classes[safe].irq_ip, NULL);
	printf("\n  \"%s\" taken with interrupts enabled at ",
	    classes[unsafe].name);
	symtab_print_sym(classes[unsafe].irq_on_ip, NULL);
	printf("\n  an interrupt taking \"%s\" on a CPU holding \"%s\" waits "
	    "for a CPU that holds \"%s\" and waits for \"%s\"\n",
	    classes[safe].name, classes[unsafe].name, classes[safe].name,
	    classes[unsafe].name);
	print_held(c, cpu);
}

/**
 * Full interrupt-inversion check for the chain through from -> to: reports
 * and returns true on a violation. graph_flag held (dropped on report).
 */
static bool irq_chain_check(unsigned from, unsigned to, ld_cpu_t *c,
    unsigned cpu)
{
	int safe = bfs(from, false, goal_irq, 0);
	if (safe < 0)
		return false;
	unsigned ns = 0;
	for (unsigned x = (unsigned) safe; bfs_via[x] && ns < LOCKDEP_MAX_CLASSES;
	    x = edges[bfs_via[x] - 1].to)
		safe_path[ns++] = bfs_via[x] - 1;
	int unsafe = bfs(to, true, goal_irq_on, 0);
	if (unsafe < 0)
		return false;
	report_start();
	printf("LOCKDEP REPORT: interrupt-safe class \"%s\" -> class \"%s\" "
	    "taken with interrupts enabled (possible deadlock with an "
	    "interrupt)\n", classes[safe].name, classes[unsafe].name);
	printf("  chain (each edge where it was first seen):\n");
	for (unsigned i = 0; i < ns; i++)
		print_edge(safe_path[i]);
	if (from != to)
		print_edge(edge_of[from][to] - 1u);
	print_path_forward((unsigned) unsafe);
	irq_inversion_report((unsigned) safe, from, to, (unsigned) unsafe, c,
	    cpu);
	report_end("interrupt-safe to interrupt-unsafe dependency");
	return true;
}

/** Learns from -> to (newest held @a h, new lock at @a ip). Not under graph_flag. */
static void add_edge(ld_cpu_t *c, unsigned cpu, ld_held_t *h, unsigned to,
    uintptr_t ip)
{
	unsigned from = h->cls;
	unsigned e = __atomic_load_n(&edge_of[from][to], __ATOMIC_ACQUIRE);
	if (e) {
		__atomic_fetch_add(&edges[e - 1].count, 1, __ATOMIC_RELAXED);
		return;
	}
	graph_lock();
	e = edge_of[from][to];
	if (e) {
		graph_unlock();
		__atomic_fetch_add(&edges[e - 1].count, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!is_active()) {
		graph_unlock();
		return;
	}
	size_t n = n_edges;
	if (n >= LOCKDEP_MAX_EDGES) {
		graph_unlock();
		turn_off("edge table full (LOCKDEP_MAX_EDGES)");
		return;
	}
	ld_edge_t *d = &edges[n];
	d->from = (uint16_t) from;
	d->to = (uint16_t) to;
	d->count = 1;
	d->from_ip = h->ip;
	d->to_ip = ip;
	d->cpu = cpu;
	d->next_out = classes[from].first_out;
	classes[from].first_out = (unsigned) n + 1;
	d->next_in = classes[to].first_in;
	classes[to].first_in = (unsigned) n + 1;
	__atomic_store_n(&n_edges, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&edge_of[from][to], (uint16_t) (n + 1),
	    __ATOMIC_RELEASE);

	/*
	 * Two locks of one class nested (all CPUs' frame caches, in CPU order)
	 * are not ordered by the graph: the self-edge is recorded, not checked.
	 * Taking the same lock twice is caught in lockdep_acquire().
	 */
	if (from == to) {
		graph_unlock();
		return;
	}
	/* A path to -> ... -> from closes a cycle with the new edge. */
	if (bfs(to, true, goal_is, from) >= 0) {
		report_start();
		printf("LOCKDEP REPORT: possible circular locking dependency\n");
		printf("  new dependency on CPU %u: \"%s\" -> \"%s\"\n", cpu,
		    classes[from].name, classes[to].name);
		printf("    \"%s\" held, acquired at ", classes[from].name);
		symtab_print_sym(h->ip, NULL);
		printf("\n    \"%s\" acquired at ", classes[to].name);
		symtab_print_sym(ip, NULL);
		printf("\n  existing chain \"%s\" -> ... -> \"%s\" (each edge "
		    "where it was first seen):\n", classes[to].name,
		    classes[from].name);
		print_path_forward(from);
		print_held(c, cpu);
		report_end("circular locking dependency");
		return;
	}
	if (irq_chain_check(from, to, c, cpu))
		return;
	graph_unlock();
}

/** Marks class @a k taken in an interrupt (@a irq) or with interrupts on. */
static void mark_irq(ld_cpu_t *c, unsigned cpu, unsigned k, bool irq,
    uintptr_t ip)
{
	graph_lock();
	uintptr_t *slot = irq ? &classes[k].irq_ip : &classes[k].irq_on_ip;
	if (*slot || !is_active()) {
		graph_unlock();
		return;
	}
	*slot = ip;
	uintptr_t other = irq ? classes[k].irq_on_ip : classes[k].irq_ip;
	if (other) {
		report_start();
		printf("LOCKDEP REPORT: inconsistent interrupt state: class \"%s\" "
		    "taken in an interrupt handler and with interrupts enabled "
		    "(possible self-deadlock)\n", classes[k].name);
		printf("  taken in an interrupt handler at ");
		symtab_print_sym(classes[k].irq_ip, NULL);
		printf("\n  taken with interrupts enabled at ");
		symtab_print_sym(classes[k].irq_on_ip, NULL);
		printf("\n  an interrupt on a CPU holding it with interrupts "
		    "enabled spins on it forever\n");
		print_held(c, cpu);
		report_end("lock taken in an interrupt and with interrupts enabled");
		return;
	}
	/* The new mark may complete an interrupt-safe -> unsafe chain. */
	if (irq_chain_check(k, k, c, cpu))
		return;
	graph_unlock();
}

static void might_sleep_at(const char *what, const spinlock_t *except,
    uintptr_t ip);

/** Which RCU mark mark_rcu() sets. */
typedef enum {
	RCU_MARK_CB,
	RCU_MARK_READ,
	RCU_MARK_WAIT,
	/** Not RCU: taken in a work item (checked by workq_stop). */
	RCU_MARK_WORK,
} rcu_mark_t;

/** What takes the lock of a wait report (its words). */
static const char *const taker_what[] = {
	[RCU_MARK_CB] = "an RCU callback",
	[RCU_MARK_READ] = "an RCU reader section",
	[RCU_MARK_WORK] = "a work queue item",
};
static const char *const taker_where[] = {
	[RCU_MARK_CB] = "in an RCU callback",
	[RCU_MARK_READ] = "inside an RCU reader section",
	[RCU_MARK_WORK] = "in a work queue item",
};

/** The report of a lock held across a wait (@a what) for what takes it
 *  (@a taker: a callback, a reader, a work item). Called after
 *  report_start() or report_claim(). */
static void rcu_wait_report(unsigned k, rcu_mark_t taker, uintptr_t held_ip,
    const char *what, uintptr_t call_ip, ld_cpu_t *c, unsigned cpu)
{
	printf("LOCKDEP REPORT: %s while holding lock \"%s\", which %s takes "
	    "(%s waits for it: deadlock)\n", what, classes[k].name,
	    taker_what[taker], taker == RCU_MARK_WORK ? "the stop" :
	    "the grace period");
	printf("  \"%s\" taken %s at ", classes[k].name, taker_where[taker]);
	symtab_print_sym(taker == RCU_MARK_CB ? classes[k].rcu_cb_ip :
	    taker == RCU_MARK_READ ? classes[k].rcu_read_ip :
	    classes[k].work_ip, NULL);
	printf("\n  \"%s\" held, acquired at ", classes[k].name);
	symtab_print_sym(held_ip, NULL);
	printf("\n  %s called from ", what);
	symtab_print_sym(call_ip, NULL);
	printf("\n");
	print_held(c, cpu);
}

/**
 * Marks class @a k taken at @a ip in an RCU callback, in a reader section or
 * held across an RCU wait (@a call_ip: where the wait was called). A callback
 * mark on a class held across a wait earlier (or the other way round) is
 * reported. graph_flag not held.
 */
static void mark_rcu(ld_cpu_t *c, unsigned cpu, unsigned k, rcu_mark_t which,
    uintptr_t ip, uintptr_t call_ip)
{
	graph_lock();
	uintptr_t *slot = which == RCU_MARK_CB ? &classes[k].rcu_cb_ip :
	    which == RCU_MARK_READ ? &classes[k].rcu_read_ip :
	    which == RCU_MARK_WORK ? &classes[k].work_ip :
	    &classes[k].rcu_wait_ip;
	if (*slot || !is_active()) {
		graph_unlock();
		return;
	}
	__atomic_store_n(slot, ip, __ATOMIC_RELAXED);
	if (which == RCU_MARK_WAIT)
		classes[k].rcu_wait_call_ip = call_ip;
	if (which == RCU_MARK_CB && classes[k].rcu_wait_ip) {
		report_start();
		rcu_wait_report(k, RCU_MARK_CB, classes[k].rcu_wait_ip,
		    "rcu_synchronize or rcu_barrier",
		    classes[k].rcu_wait_call_ip, c, cpu);
		report_end("RCU wait while holding a lock an RCU callback takes");
		return;
	}
	graph_unlock();
}

/**
 * Marks class @a k as taken in an RCU callback or a work item when thread
 * @a t is in one (the first time for the class; @a ip where it was taken).
 */
static void mark_nest(ld_cpu_t *c, unsigned cpu, unsigned k,
    const lockdep_thread_t *t, uintptr_t ip)
{
	if (t->nest[LOCKDEP_NEST_RCU_CB] &&
	    !__atomic_load_n(&classes[k].rcu_cb_ip, __ATOMIC_RELAXED))
		mark_rcu(c, cpu, k, RCU_MARK_CB, ip, 0);
	if (t->nest[LOCKDEP_NEST_WORK] &&
	    !__atomic_load_n(&classes[k].work_ip, __ATOMIC_RELAXED))
		mark_rcu(c, cpu, k, RCU_MARK_WORK, ip, 0);
}

/**
 * Learns the edges to class @a k (acquired at @a ip) from the newest entry of
 * @a held (depth @a depth) in context @a ctx and the trylocks above it.
 * Returns true when a non-trylock entry of that context was found (no older
 * stack adds edges then).
 */
static bool edges_from(ld_held_t *held, unsigned depth, unsigned ctx,
    ld_cpu_t *c, unsigned cpu, unsigned k, uintptr_t ip)
{
	for (unsigned i = depth; i > 0; i--) {
		ld_held_t *h = &held[i - 1];
		if (h->ctx != ctx || !is_active())
			return true;
		add_edge(c, cpu, h, k, ip);
		if (!h->trylock)
			return true;
	}
	return false;
}

/** Reports taking @a lock (class @a k) again while holding it, at @a ip. */
static void recursion_report(const void *lock, unsigned k, ld_held_t *h,
    uintptr_t ip, ld_cpu_t *c, unsigned cpu)
{
	printf("LOCKDEP REPORT: recursive locking: lock \"%s\" (%p) "
	    "acquired on CPU %u while %s holds it (certain deadlock)\n",
	    classes[k].name, lock, cpu,
	    classes[k].sleeping ? "this thread" : "this CPU");
	printf("  held, acquired at ");
	symtab_print_sym(h->ip, NULL);
	printf("\n  acquired again at ");
	symtab_print_sym(ip, NULL);
	printf("\n");
	print_held(c, cpu);
	report_end("recursive locking");
}

void lockdep_acquire(spinlock_t *lock, uintptr_t ip, bool trylock)
{
	lockdep_acquire_as(lock, ip, trylock, NULL);
}

void lockdep_acquire_as(spinlock_t *lock, uintptr_t ip, bool trylock,
    const char *as)
{
	if (!is_active() || !lock->name)
		return;
	ipl_t ipl = interrupts_disable();
	unsigned cpu = CPU->id;
	ld_cpu_t *c = &ld_cpu[cpu];
	if (c->recursion) {
		interrupts_restore(ipl);
		return;
	}
	c->recursion++;
	int k = as ? class_by_name(as) : class_of(lock);
	if (k < 0)
		goto out;
	__atomic_fetch_add(&classes[k].acquisitions, 1, __ATOMIC_RELAXED);
	unsigned ctx = c->hardirq;
	lockdep_thread_t *t = ctx == 0 ? ld_thread() : NULL;
	if (ctx > 0) {
		if (!__atomic_load_n(&classes[k].irq_ip, __ATOMIC_RELAXED))
			mark_irq(c, cpu, (unsigned) k, true, ip);
	} else if (ipl_enabled(ipl) &&
	    !__atomic_load_n(&classes[k].irq_on_ip, __ATOMIC_RELAXED)) {
		mark_irq(c, cpu, (unsigned) k, false, ip);
	}
	if (t)
		mark_nest(c, cpu, (unsigned) k, t, ip);
	/* Thread context (preemption is off: the reader count is this
	 * thread's). */
	if (t && rcu_read_locked() &&
	    !__atomic_load_n(&classes[k].rcu_read_ip, __ATOMIC_RELAXED))
		mark_rcu(c, cpu, (unsigned) k, RCU_MARK_READ, ip, 0);
	for (unsigned i = 0; i < c->depth && !trylock; i++) {
		if (c->held[i].lock != lock)
			continue;
		if (!report_claim())
			goto out;
		recursion_report(lock, (unsigned) k, &c->held[i], ip, c, cpu);
		goto out;
	}
	if (!trylock && is_active()) {
		/*
		 * Edges from the newest held lock of this context (and the
		 * trylocks above it, which added no edges of their own); in
		 * thread context with no spinlock of it held, from the
		 * thread's newest sleeping lock (a spinlock is never held
		 * while a sleeping lock is taken, so the spinlocks of this
		 * context are the newer ones).
		 */
		if (!edges_from(c->held, c->depth, ctx, c, cpu, (unsigned) k,
		    ip) && t)
			(void) edges_from(t->held, t->depth, 0, c, cpu,
			    (unsigned) k, ip);
	}
	if (c->depth >= LOCKDEP_MAX_HELD) {
		turn_off("too many locks held (LOCKDEP_MAX_HELD)");
		goto out;
	}
	c->held[c->depth++] = (ld_held_t) { .lock = lock, .ip = ip,
	    .cls = (uint16_t) k, .ctx = (uint8_t) ctx, .trylock = trylock };
out:
	c->recursion--;
	interrupts_restore(ipl);
}

/** Removes @a lock from this CPU's held stack (newest match). */
static void pop_lock(spinlock_t *lock)
{
	ipl_t ipl = interrupts_disable();
	ld_cpu_t *c = &ld_cpu[CPU->id];
	for (unsigned i = c->depth; i > 0; i--) {
		if (c->held[i - 1].lock == lock) {
			for (unsigned j = i; j < c->depth; j++)
				c->held[j - 1] = c->held[j];
			c->depth--;
			break;
		}
	}
	/* Not found: taken while the validator was inside itself, or off. */
	interrupts_restore(ipl);
}

void lockdep_release(spinlock_t *lock)
{
	if (!lock->name)
		return;
	pop_lock(lock);
}

/** Class index of sleeping lock @a map (cached in it), or -1. */
static int class_of_map(lockdep_map_t *map)
{
	unsigned v = __atomic_load_n(&map->cls, __ATOMIC_RELAXED);
	if (v)
		return (int) v - 1;
	int found = class_by_name_kind(map->name, true);
	if (found >= 0)
		__atomic_store_n(&map->cls, (unsigned) found + 1,
		    __ATOMIC_RELAXED);
	return found;
}

/**
 * Common entry of the sleeping-lock hooks: interrupts disabled, the
 * recursion count taken, the class looked up. False (nothing entered) when
 * there is nothing to validate.
 */
static bool sleep_enter(lockdep_map_t *map, ipl_t *ipl, ld_cpu_t **c,
    unsigned *cpu, lockdep_thread_t **t, int *k)
{
	if (!is_active() || !map->name)
		return false;
	*ipl = interrupts_disable();
	*cpu = CPU->id;
	*c = &ld_cpu[*cpu];
	*t = ld_thread();
	if ((*c)->recursion || !*t) {
		interrupts_restore(*ipl);
		return false;
	}
	(*c)->recursion++;
	*k = class_of_map(map);
	if (*k < 0) {
		(*c)->recursion--;
		interrupts_restore(*ipl);
		return false;
	}
	return true;
}

void lockdep_sleep_acquire(const void *lock, lockdep_map_t *map, uintptr_t ip)
{
	ipl_t ipl;
	ld_cpu_t *c;
	unsigned cpu;
	lockdep_thread_t *t;
	int k;
	if (!sleep_enter(map, &ipl, &c, &cpu, &t, &k))
		return;
	for (unsigned i = 0; i < t->depth; i++) {
		/* The class too: a rwlock and its internal mutex share an
		 * address. */
		if (t->held[i].lock != lock || t->held[i].cls != (unsigned) k)
			continue;
		if (report_claim())
			recursion_report(lock, (unsigned) k, &t->held[i], ip, c,
			    cpu);
		goto out;
	}
	/* A spinlock held here is lockdep_might_sleep()'s report; edges
	 * from the thread's sleeping locks only. */
	(void) edges_from(t->held, t->depth, 0, c, cpu, (unsigned) k, ip);
out:
	c->recursion--;
	interrupts_restore(ipl);
}

void lockdep_sleep_acquired(const void *lock, lockdep_map_t *map, uintptr_t ip,
    bool trylock)
{
	ipl_t ipl;
	ld_cpu_t *c;
	unsigned cpu;
	lockdep_thread_t *t;
	int k;
	if (!sleep_enter(map, &ipl, &c, &cpu, &t, &k))
		return;
	__atomic_fetch_add(&classes[k].acquisitions, 1, __ATOMIC_RELAXED);
	mark_nest(c, cpu, (unsigned) k, t, ip);
	if (t->depth >= LOCKDEP_MAX_HELD_SLEEP) {
		turn_off("too many sleeping locks held (LOCKDEP_MAX_HELD_SLEEP)");
	} else {
		t->held[t->depth++] = (ld_held_t) { .lock = lock, .ip = ip,
		    .cls = (uint16_t) k, .ctx = 0, .trylock = trylock };
	}
	c->recursion--;
	interrupts_restore(ipl);
}

void lockdep_sleep_release(const void *lock, lockdep_map_t *map)
{
	unsigned cls = __atomic_load_n(&map->cls, __ATOMIC_RELAXED);
	/* No class yet: never pushed. */
	if (!map->name || !cls)
		return;
	ipl_t ipl = interrupts_disable();
	lockdep_thread_t *t = ld_thread();
	for (unsigned i = t ? t->depth : 0; i > 0; i--) {
		if (t->held[i - 1].lock == lock &&
		    t->held[i - 1].cls == cls - 1) {
			for (unsigned j = i; j < t->depth; j++)
				t->held[j - 1] = t->held[j];
			t->depth--;
			break;
		}
	}
	/* Not found: taken while the validator was off or inside itself. */
	interrupts_restore(ipl);
}

/** Counts this thread into (@a d 1) or out of (-1) context @a n. */
static void nest_add(lockdep_nest_t n, int d)
{
	lockdep_thread_t *t = ld_thread();
	if (t)
		t->nest[n] += d;
}

void lockdep_rcu_cb_enter(void)
{
	nest_add(LOCKDEP_NEST_RCU_CB, 1);
}

void lockdep_rcu_cb_exit(void)
{
	nest_add(LOCKDEP_NEST_RCU_CB, -1);
}

/** lockdep_rcu_wait() on one held entry: true when it reported. */
static bool rcu_wait_check(ld_held_t *h, const char *what, uintptr_t call_ip,
    ld_cpu_t *c, unsigned cpu)
{
	unsigned k = h->cls;
	bool cb = __atomic_load_n(&classes[k].rcu_cb_ip, __ATOMIC_RELAXED);
	bool rd = __atomic_load_n(&classes[k].rcu_read_ip, __ATOMIC_RELAXED);
	if (!cb && !rd) {
		if (!__atomic_load_n(&classes[k].rcu_wait_ip, __ATOMIC_RELAXED))
			mark_rcu(c, cpu, k, RCU_MARK_WAIT, h->ip, call_ip);
		return false;
	}
	if (!report_claim())
		return true;
	rcu_wait_report(k, cb ? RCU_MARK_CB : RCU_MARK_READ, h->ip, what,
	    call_ip, c, cpu);
	report_end(cb ? "RCU wait while holding a lock an RCU callback takes" :
	    "RCU wait while holding a lock an RCU reader takes");
	return true;
}

void lockdep_rcu_wait(const char *what, uintptr_t ip)
{
	if (!is_active())
		return;
	ipl_t ipl = interrupts_disable();
	unsigned cpu = CPU->id;
	ld_cpu_t *c = &ld_cpu[cpu];
	lockdep_thread_t *t = ld_thread();
	if (c->recursion) {
		interrupts_restore(ipl);
		return;
	}
	c->recursion++;
	bool reported = false;
	for (unsigned i = 0; t && i < t->depth && !reported; i++)
		reported = rcu_wait_check(&t->held[i], what, ip, c, cpu);
	for (unsigned i = 0; i < c->depth && !reported; i++) {
		if (c->held[i].ctx == 0)
			reported = rcu_wait_check(&c->held[i], what, ip, c, cpu);
	}
	c->recursion--;
	interrupts_restore(ipl);
	if (!reported)
		might_sleep_at(what, NULL, ip);
}

void lockdep_work_enter(void)
{
	nest_add(LOCKDEP_NEST_WORK, 1);
}

void lockdep_work_exit(void)
{
	nest_add(LOCKDEP_NEST_WORK, -1);
}

void lockdep_workq_stop(uintptr_t ip)
{
	if (!is_active())
		return;
	ipl_t ipl = interrupts_disable();
	unsigned cpu = CPU->id;
	ld_cpu_t *c = &ld_cpu[cpu];
	lockdep_thread_t *t = ld_thread();
	if (c->recursion || !t) {
		interrupts_restore(ipl);
		return;
	}
	c->recursion++;
	for (unsigned i = 0; i < t->depth; i++) {
		unsigned k = t->held[i].cls;
		if (!__atomic_load_n(&classes[k].work_ip, __ATOMIC_RELAXED))
			continue;
		if (report_claim()) {
			rcu_wait_report(k, RCU_MARK_WORK, t->held[i].ip,
			    "workq_stop", ip, c, cpu);
			report_end("workq_stop while holding a lock a work item "
			    "takes");
		}
		break;
	}
	c->recursion--;
	interrupts_restore(ipl);
}

void lockdep_might_sleep(const char *what, const spinlock_t *except)
{
	might_sleep_at(what, except, (uintptr_t) __builtin_return_address(0));
}

/** lockdep_might_sleep() called at @a ip. */
static void might_sleep_at(const char *what, const spinlock_t *except,
    uintptr_t ip)
{
	if (!is_active())
		return;
	ipl_t ipl = interrupts_disable();
	unsigned cpu = CPU->id;
	ld_cpu_t *c = &ld_cpu[cpu];
	bool bad = false;
	for (unsigned i = 0; i < c->depth; i++) {
		if (c->held[i].lock != except)
			bad = true;
	}
	if (!bad || c->recursion) {
		interrupts_restore(ipl);
		return;
	}
	c->recursion++;
	if (!report_claim()) {
		c->recursion--;
		interrupts_restore(ipl);
		return;
	}
	printf("LOCKDEP REPORT: %s may sleep, called on CPU %u while holding "
	    "spinlocks\n", what, cpu);
	printf("  called from ");
	symtab_print_sym(ip, NULL);
	printf("\n");
	print_held(c, cpu);
	c->recursion--;
	report_end("sleeping while holding a spinlock");
	interrupts_restore(ipl);
}

void lockdep_hardirq_enter(unsigned vector)
{
	if (vector >= 32)
		ld_cpu[CPU->id].hardirq++;
}

void lockdep_hardirq_exit(unsigned vector)
{
	if (vector >= 32)
		ld_cpu[CPU->id].hardirq--;
}

bool lockdep_enabled(void)
{
	return true;
}

bool lockdep_active(void)
{
	return is_active();
}

size_t lockdep_class_count(void)
{
	return __atomic_load_n(&n_classes, __ATOMIC_ACQUIRE);
}

size_t lockdep_edge_count(void)
{
	return __atomic_load_n(&n_edges, __ATOMIC_ACQUIRE);
}

bool lockdep_snapshot_class(size_t i, lockdep_class_info_t *out)
{
	if (i >= lockdep_class_count())
		return false;
	ld_class_t *k = &classes[i];
	out->name = k->name;
	out->acquisitions = __atomic_load_n(&k->acquisitions, __ATOMIC_RELAXED);
	out->irq_ip = __atomic_load_n(&k->irq_ip, __ATOMIC_RELAXED);
	out->irq_on_ip = __atomic_load_n(&k->irq_on_ip, __ATOMIC_RELAXED);
	out->sleeping = k->sleeping;
	out->rcu_cb_ip = __atomic_load_n(&k->rcu_cb_ip, __ATOMIC_RELAXED);
	out->rcu_read_ip = __atomic_load_n(&k->rcu_read_ip, __ATOMIC_RELAXED);
	return true;
}

bool lockdep_snapshot_edge(size_t i, lockdep_edge_info_t *out)
{
	if (i >= lockdep_edge_count())
		return false;
	ld_edge_t *d = &edges[i];
	out->from = d->from;
	out->to = d->to;
	out->count = __atomic_load_n(&d->count, __ATOMIC_RELAXED);
	out->from_ip = d->from_ip;
	out->to_ip = d->to_ip;
	return true;
}

size_t lockdep_report_count(void)
{
	return __atomic_load_n(&reports, __ATOMIC_RELAXED);
}

#else /* !CONFIG_LOCKDEP */

bool lockdep_enabled(void)
{
	return false;
}

bool lockdep_active(void)
{
	return false;
}

size_t lockdep_class_count(void)
{
	return 0;
}

size_t lockdep_edge_count(void)
{
	return 0;
}

bool lockdep_snapshot_class(size_t i, lockdep_class_info_t *out)
{
	(void) i;
	(void) out;
	return false;
}

bool lockdep_snapshot_edge(size_t i, lockdep_edge_info_t *out)
{
	(void) i;
	(void) out;
	return false;
}

size_t lockdep_report_count(void)
{
	return 0;
}

#endif
