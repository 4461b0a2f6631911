/** @file lockdep.c
 * Lock-dependency validator (see synch/lockdep.h and docs/LOCKING.md): the
 * dependency graph and the checks. The lock hooks learn classes and edges,
 * search the graph for cycles and interrupt-safe to interrupt-unsafe chains,
 * and mark the classes taken in interrupts, RCU callbacks, reader sections
 * and work items; a violation's report is printed by lockdep_report.c, and
 * the `lockdep` command reads the tables through lockdep_info.c. What
 * protects which data: lockdep_impl.h.
 */
#include <synch/lockdep.h>

bool lockdep_panic = true;

#ifdef CONFIG_LOCKDEP

#include "lockdep_impl.h"
#include <synch/rcu.h>
#include <lib/str.h>
#include <print.h>

#define HASH_SLOTS 1024

ld_class_t ld_classes[LOCKDEP_MAX_CLASSES];
ld_edge_t ld_edges[LOCKDEP_MAX_EDGES];
static uint16_t class_hash[HASH_SLOTS];
uint16_t ld_edge_of[LOCKDEP_MAX_CLASSES][LOCKDEP_MAX_CLASSES];
size_t ld_n_classes;
size_t ld_n_edges;
static ld_cpu_t ld_cpu[CONFIG_MAX_CPUS];
bool ld_active = true;
size_t ld_reports;
int ld_graph_flag;

/* BFS scratch; protected by graph_flag. */
static uint16_t bfs_queue[LOCKDEP_MAX_CLASSES];
unsigned ld_bfs_via[LOCKDEP_MAX_CLASSES];   /* edge index + 1 */
static bool bfs_seen[LOCKDEP_MAX_CLASSES];
/* The interrupt-safe half of a chain being checked; protected by graph_flag,
 * then by the report's claim. */
static unsigned safe_path[LOCKDEP_MAX_CLASSES];

static void might_sleep_at(const char *what, const spinlock_t *except,
    uintptr_t ip);


/** Turns the validator off (graph_flag held or not). */
static void turn_off(const char *why)
{
	if (__atomic_exchange_n(&ld_active, false, __ATOMIC_RELAXED))
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
			size_t n = ld_n_classes;
			if (n >= LOCKDEP_MAX_CLASSES)
				break;
			ld_classes[n].name = name;
			ld_classes[n].sleeping = sleeping;
			class_hash[slot] = (uint16_t) (n + 1);
			__atomic_store_n(&ld_n_classes, n + 1, __ATOMIC_RELEASE);
			found = (int) n;
			break;
		}
		if (strcmp(ld_classes[v - 1].name, name) == 0) {
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

/**
 * Breadth-first search from @a start along out-edges (@a forward) or in-edges
 * for a class that satisfies @a goal; returns it (bfs_via holds the path) or
 * -1. graph_flag held.
 */
static int bfs(unsigned start, bool forward, bool (*goal)(unsigned, unsigned),
    unsigned target)
{
	size_t n = __atomic_load_n(&ld_n_classes, __ATOMIC_RELAXED);
	for (size_t i = 0; i < n; i++)
		bfs_seen[i] = false;
	unsigned head = 0, tail = 0;
	bfs_queue[tail++] = (uint16_t) start;
	bfs_seen[start] = true;
	ld_bfs_via[start] = 0;
	while (head < tail) {
		unsigned c = bfs_queue[head++];
		if (goal(c, target))
			return (int) c;
		unsigned e = forward ? ld_classes[c].first_out : ld_classes[c].first_in;
		while (e) {
			ld_edge_t *d = &ld_edges[e - 1];
			unsigned nx = forward ? d->to : d->from;
			if (!bfs_seen[nx]) {
				bfs_seen[nx] = true;
				ld_bfs_via[nx] = e;
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
	return ld_classes[c].irq_on_ip != 0;
}

static bool goal_irq(unsigned c, unsigned target)
{
	(void) target;
	return ld_classes[c].irq_ip != 0;
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
	for (unsigned x = (unsigned) safe; ld_bfs_via[x] && ns < LOCKDEP_MAX_CLASSES;
	    x = ld_edges[ld_bfs_via[x] - 1].to)
		safe_path[ns++] = ld_bfs_via[x] - 1;
	int unsafe = bfs(to, true, goal_irq_on, 0);
	if (unsafe < 0)
		return false;
	ld_report_start();
	ld_irq_chain_report((unsigned) safe, safe_path, ns, from, to,
	    (unsigned) unsafe, c, cpu);
	return true;
}

/** Learns from -> to (newest held @a h, new lock at @a ip). Not under graph_flag. */
static void add_edge(ld_cpu_t *c, unsigned cpu, ld_held_t *h, unsigned to,
    uintptr_t ip)
{
	unsigned from = h->cls;
	unsigned e = __atomic_load_n(&ld_edge_of[from][to], __ATOMIC_ACQUIRE);
	if (e) {
		__atomic_fetch_add(&ld_edges[e - 1].count, 1, __ATOMIC_RELAXED);
		return;
	}
	graph_lock();
	e = ld_edge_of[from][to];
	if (e) {
		graph_unlock();
		__atomic_fetch_add(&ld_edges[e - 1].count, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!is_active()) {
		graph_unlock();
		return;
	}
	size_t n = ld_n_edges;
	if (n >= LOCKDEP_MAX_EDGES) {
		graph_unlock();
		turn_off("edge table full (LOCKDEP_MAX_EDGES)");
		return;
	}
	ld_edge_t *d = &ld_edges[n];
	d->from = (uint16_t) from;
	d->to = (uint16_t) to;
	d->count = 1;
	d->from_ip = h->ip;
	d->to_ip = ip;
	d->cpu = cpu;
	d->next_out = ld_classes[from].first_out;
	ld_classes[from].first_out = (unsigned) n + 1;
	d->next_in = ld_classes[to].first_in;
	ld_classes[to].first_in = (unsigned) n + 1;
	__atomic_store_n(&ld_n_edges, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ld_edge_of[from][to], (uint16_t) (n + 1),
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
		ld_report_start();
		ld_cycle_report(c, cpu, h, to, ip);
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
	uintptr_t *slot = irq ? &ld_classes[k].irq_ip : &ld_classes[k].irq_on_ip;
	if (*slot || !is_active()) {
		graph_unlock();
		return;
	}
	*slot = ip;
	uintptr_t other = irq ? ld_classes[k].irq_on_ip : ld_classes[k].irq_ip;
	if (other) {
		ld_report_start();
		ld_irq_state_report(c, cpu, k);
		return;
	}
	/* The new mark may complete an interrupt-safe -> unsafe chain. */
	if (irq_chain_check(k, k, c, cpu))
		return;
	graph_unlock();
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
	uintptr_t *slot = which == RCU_MARK_CB ? &ld_classes[k].rcu_cb_ip :
	    which == RCU_MARK_READ ? &ld_classes[k].rcu_read_ip :
	    which == RCU_MARK_WORK ? &ld_classes[k].work_ip :
	    &ld_classes[k].rcu_wait_ip;
	if (*slot || !is_active()) {
		graph_unlock();
		return;
	}
	__atomic_store_n(slot, ip, __ATOMIC_RELAXED);
	if (which == RCU_MARK_WAIT)
		ld_classes[k].rcu_wait_call_ip = call_ip;
	if (which == RCU_MARK_CB && ld_classes[k].rcu_wait_ip) {
		ld_report_start();
		ld_rcu_wait_report(k, RCU_MARK_CB, ld_classes[k].rcu_wait_ip,
		    "rcu_synchronize or rcu_barrier",
		    ld_classes[k].rcu_wait_call_ip, c, cpu);
		ld_report_end("RCU wait while holding a lock an RCU callback takes");
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
	    !__atomic_load_n(&ld_classes[k].rcu_cb_ip, __ATOMIC_RELAXED))
		mark_rcu(c, cpu, k, RCU_MARK_CB, ip, 0);
	if (t->nest[LOCKDEP_NEST_WORK] &&
	    !__atomic_load_n(&ld_classes[k].work_ip, __ATOMIC_RELAXED))
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
	__atomic_fetch_add(&ld_classes[k].acquisitions, 1, __ATOMIC_RELAXED);
	unsigned ctx = c->hardirq;
	lockdep_thread_t *t = ctx == 0 ? ld_thread() : NULL;
	if (ctx > 0) {
		if (!__atomic_load_n(&ld_classes[k].irq_ip, __ATOMIC_RELAXED))
			mark_irq(c, cpu, (unsigned) k, true, ip);
	} else if (ipl_enabled(ipl) &&
	    !__atomic_load_n(&ld_classes[k].irq_on_ip, __ATOMIC_RELAXED)) {
		mark_irq(c, cpu, (unsigned) k, false, ip);
	}
	if (t)
		mark_nest(c, cpu, (unsigned) k, t, ip);
	/* Thread context (preemption is off: the reader count is this
	 * thread's). */
	if (t && rcu_read_locked() &&
	    !__atomic_load_n(&ld_classes[k].rcu_read_ip, __ATOMIC_RELAXED))
		mark_rcu(c, cpu, (unsigned) k, RCU_MARK_READ, ip, 0);
	for (unsigned i = 0; i < c->depth && !trylock; i++) {
		if (c->held[i].lock != lock)
			continue;
		if (!ld_report_claim())
			goto out;
		ld_recursion_report(lock, (unsigned) k, &c->held[i], ip, c, cpu);
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
		if (ld_report_claim())
			ld_recursion_report(lock, (unsigned) k, &t->held[i], ip, c,
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
	__atomic_fetch_add(&ld_classes[k].acquisitions, 1, __ATOMIC_RELAXED);
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
	bool cb = __atomic_load_n(&ld_classes[k].rcu_cb_ip, __ATOMIC_RELAXED);
	bool rd = __atomic_load_n(&ld_classes[k].rcu_read_ip, __ATOMIC_RELAXED);
	if (!cb && !rd) {
		if (!__atomic_load_n(&ld_classes[k].rcu_wait_ip, __ATOMIC_RELAXED))
			mark_rcu(c, cpu, k, RCU_MARK_WAIT, h->ip, call_ip);
		return false;
	}
	if (!ld_report_claim())
		return true;
	ld_rcu_wait_report(k, cb ? RCU_MARK_CB : RCU_MARK_READ, h->ip, what,
	    call_ip, c, cpu);
	ld_report_end(cb ? "RCU wait while holding a lock an RCU callback takes" :
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
		if (!__atomic_load_n(&ld_classes[k].work_ip, __ATOMIC_RELAXED))
			continue;
		if (ld_report_claim()) {
			ld_rcu_wait_report(k, RCU_MARK_WORK, t->held[i].ip,
			    "workq_stop", ip, c, cpu);
			ld_report_end("workq_stop while holding a lock a work item "
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
	if (!ld_report_claim()) {
		c->recursion--;
		interrupts_restore(ipl);
		return;
	}
	ld_might_sleep_report(what, ip, c, cpu);
	c->recursion--;
	ld_report_end("sleeping while holding a spinlock");
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

#endif /* CONFIG_LOCKDEP */
