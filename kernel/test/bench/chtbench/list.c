/** @file list.c
 * `chtbench`: ids 1-8, empty RCU readers and the seed's 5-element list read and
 * updated under RCU, a spinlock, a reader-writer lock or nothing (see
 * chtbench.h).
 */
#include "chtbench_parts.h"

/* ---------------------------------------------------------------------- */
/* The 5-element list of the seed's list benchmarks. */

#define LIST_LEN 5

typedef struct lnode {
	/** RCU-protected for the RCU benchmarks (synch/rcu.h's accessors). */
	struct lnode __rcu *next;
	uint64_t value;
	rcu_item_t rcu;
} lnode_t;

/**
 * The list; RCU readers follow it with rcu_access(), updaters hold list_lock.
 * The benchmarks without RCU read it with plain loads (rcu_access_owned():
 * under list_lock or list_rw, or unsynchronized in the "ideal" ones).
 */
static lnode_t __rcu *list_head;
static spinlock_t list_lock = SPINLOCK_INITIALIZER("chtbench.list");
static slab_cache_t *lnode_cache;

static rwspin_t list_rw;

static int list_setup(void)
{
	if (!lnode_cache) {
		lnode_cache = slab_cache_create("chtbench.lnode", sizeof(lnode_t), 0,
		    NULL, NULL, 0);
		if (!lnode_cache)
			return ENOMEM;
	}
	lnode_t *head = NULL;
	for (int i = LIST_LEN - 1; i >= 0; i--) {
		lnode_t *n = slab_alloc(lnode_cache, SLAB_KM_NONE);
		if (!n)
			return ENOMEM;
		n->value = (uint64_t) i + 1;
		rcu_init_ptr(n->next, head);
		head = n;
	}
	rcu_init_ptr(list_head, head);
	return EOK;
}

static void list_teardown(void)
{
	lnode_t *n = rcu_access_owned(list_head);
	rcu_init_ptr(list_head, NULL);
	while (n) {
		lnode_t *next = rcu_access_owned(n->next);
		slab_free(lnode_cache, n);
		n = next;
	}
}

static inline uint64_t list_walk_plain(void)
{
	uint64_t sum = 0;
	for (lnode_t *n = rcu_access_owned(list_head); n;
	    n = rcu_access_owned(n->next))
		sum += n->value;
	return sum;
}

static inline uint64_t list_walk_rcu(void)
{
	uint64_t sum = 0, v;
	lnode_t *n;
	/* The link and the value in one load where there is one (LDP). */
	rcu_for_each_pair(n, list_head, next, value, v)
		sum += v;
	return sum;
}

static void lnode_free_cb(rcu_item_t *item)
{
	slab_free(lnode_cache, container_of(item, lnode_t, rcu));
}

/** Replaces the element at @a pos by a copy; returns the old one. Locked. */
static lnode_t *list_replace_locked(unsigned pos, lnode_t *fresh, bool rcu)
{
	lnode_t __rcu **link = &list_head;
	for (unsigned i = 0; i < pos && rcu_access_owned(*link)->next; i++)
		link = &rcu_access_owned(*link)->next;
	lnode_t *old = rcu_access_owned(*link);
	fresh->value = old->value;
	rcu_init_ptr(fresh->next, rcu_access_owned(old->next));
	if (rcu)
		rcu_assign(*link, fresh);
	else
		rcu_init_ptr(*link, fresh);  /* no RCU readers: a plain store */
	return old;
}

void b_rcu_empty(bench_thread_t *t)
{
	uint64_t ops = 0;
	while (!stopped()) {
		for (int i = 0; i < 64; i++) {
			rcu_read_lock();
			rcu_read_unlock();
		}
		ops += 64;
	}
	t->ops = ops;
}

/** Results of the traversals go here so that they are not optimized away. */
uint64_t sink;

/**
 * The sum of the values of the list as list_setup() builds it: a read-only
 * walk that returned anything else (a node missed, a wrong word read with
 * the link) counts as an error, checked once after the loop.
 */
#define LIST_SUM ((uint64_t) LIST_LEN * (LIST_LEN + 1) / 2)

void b_list_ideal(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		s += list_walk_plain();
		ops++;
	}
	SINK(s);
	t->errors += s != ops * LIST_SUM;
	t->ops = ops;
}

void b_list_rcu(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		rcu_read_lock();
		s += list_walk_rcu();
		rcu_read_unlock();
		ops++;
	}
	SINK(s);
	t->errors += s != ops * LIST_SUM;
	t->ops = ops;
}

void b_list_spin(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		spinlock_lock(&list_lock);
		s += list_walk_plain();
		spinlock_unlock(&list_lock);
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

void b_list_rw(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		rw_read_lock(&list_rw);
		s += list_walk_plain();
		rw_read_unlock(&list_rw);
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

/**
 * The update mix without RCU: walk, or replace an element and free the old one
 * at once. @a locked: walks and replacements under list_lock (bench 8);
 * otherwise no synchronization at all (bench 6, the seed's single-CPU "ideal").
 */
static inline void list_upd_plain(bench_thread_t *t, bool locked)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		if (want_update(t)) {
			/* Allocation and free stay outside the lock, as with RCU. */
			lnode_t *fresh = slab_alloc(lnode_cache, SLAB_KM_NONE);
			if (fresh) {
				if (locked)
					spinlock_lock(&list_lock);
				lnode_t *old = list_replace_locked(rnd_next(t) % LIST_LEN,
				    fresh, false);
				if (locked)
					spinlock_unlock(&list_lock);
				slab_free(lnode_cache, old);
			}
		} else {
			if (locked)
				spinlock_lock(&list_lock);
			s += list_walk_plain();
			if (locked)
				spinlock_unlock(&list_lock);
		}
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

void b_list_upd_ideal(bench_thread_t *t)
{
	list_upd_plain(t, false);
}

void b_list_upd_rcu(bench_thread_t *t)
{
	uint64_t ops = 0, s = 0;
	while (!stopped()) {
		if (want_update(t)) {
			lnode_t *fresh = slab_alloc(lnode_cache, SLAB_KM_NONE);
			if (fresh) {
				spinlock_lock(&list_lock);
				lnode_t *old = list_replace_locked(rnd_next(t) % LIST_LEN,
				    fresh, true);
				spinlock_unlock(&list_lock);
				rcu_call(&old->rcu, lnode_free_cb);
			}
		} else {
			rcu_read_lock();
			s += list_walk_rcu();
			rcu_read_unlock();
		}
		ops++;
	}
	SINK(s);
	t->ops = ops;
}

void b_list_upd_spin(bench_thread_t *t)
{
	list_upd_plain(t, true);
}

int s_list(void)
{
	return list_setup();
}

void t_list(void)
{
	list_teardown();
}
