/** @file impl_rwlock.c
 * The floor: a chained hash table under one pthread_rwlock_t (writer
 * preferring). Lookups take the read lock (an atomic RMW on the shared lock
 * word per operation: it cannot scale), updates the write lock. Auto: grows
 * at load 2, shrinks below load 1/2, in the caller's operation under the
 * write lock; presized: 2^k >= keys buckets, never resizes.
 */
#define _GNU_SOURCE
#include "bench.h"
#include <pthread.h>
#include <stdlib.h>

typedef struct rnode {
	struct rnode *next;
	uint64_t key;
	uint64_t value;
} rnode_t;

typedef struct {
	pthread_rwlock_t lock;
	rnode_t **b;
	size_t mask;
	size_t n;
	bool autosize;
} rtable_t;

static void *r_create_common(size_t buckets, bool autosize)
{
	rtable_t *t = calloc(1, sizeof(*t));
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a,
	    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&t->lock, &a);
	pthread_rwlockattr_destroy(&a);
	buckets = bench_pow2(buckets);
	t->b = calloc(buckets, sizeof(rnode_t *));
	t->mask = buckets - 1;
	t->autosize = autosize;
	return t;
}

static void *r_create(size_t expect, size_t initial)
{
	(void) expect;
	return r_create_common(initial ? initial : 1, true);
}

static void *r_create_presized(size_t expect, size_t initial)
{
	(void) initial;
	return r_create_common(expect, false);
}

/** Rehash into @a buckets (power of two). Write lock held. */
static void rehash(rtable_t *t, size_t buckets)
{
	rnode_t **nb = calloc(buckets, sizeof(rnode_t *));
	if (!nb)
		return;
	for (size_t i = 0; i <= t->mask; i++) {
		rnode_t *n = t->b[i];
		while (n) {
			rnode_t *next = n->next;
			size_t j = (size_t) bench_mix(n->key) & (buckets - 1);
			n->next = nb[j];
			nb[j] = n;
			n = next;
		}
	}
	free(t->b);
	t->b = nb;
	t->mask = buckets - 1;
}

static int r_lookup(void *tp, uint64_t key, uint64_t *val)
{
	rtable_t *t = tp;
	int hit = 0;
	pthread_rwlock_rdlock(&t->lock);
	for (rnode_t *n = t->b[bench_mix(key) & t->mask]; n; n = n->next) {
		if (n->key == key) {
			*val = __atomic_load_n(&n->value, __ATOMIC_RELAXED);
			hit = 1;
			break;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	return hit;
}

static int r_insert(void *tp, uint64_t key, uint64_t val)
{
	rtable_t *t = tp;
	rnode_t *nn = malloc(sizeof(*nn));
	nn->key = key;
	nn->value = val;
	uint64_t h = bench_mix(key);
	pthread_rwlock_wrlock(&t->lock);
	rnode_t **head = &t->b[h & t->mask];
	for (rnode_t *n = *head; n; n = n->next) {
		if (n->key == key) {
			pthread_rwlock_unlock(&t->lock);
			free(nn);
			return 0;
		}
	}
	nn->next = *head;
	*head = nn;
	t->n++;
	if (t->autosize && t->n > 2 * (t->mask + 1))
		rehash(t, 2 * (t->mask + 1));
	pthread_rwlock_unlock(&t->lock);
	return 1;
}

static int r_remove(void *tp, uint64_t key)
{
	rtable_t *t = tp;
	uint64_t h = bench_mix(key);
	rnode_t *victim = NULL;
	pthread_rwlock_wrlock(&t->lock);
	for (rnode_t **p = &t->b[h & t->mask]; *p; p = &(*p)->next) {
		if ((*p)->key == key) {
			victim = *p;
			*p = victim->next;
			t->n--;
			break;
		}
	}
	if (victim && t->autosize && t->mask > 0 && t->n < (t->mask + 1) / 2)
		rehash(t, (t->mask + 1) / 2);
	pthread_rwlock_unlock(&t->lock);
	free(victim);
	return victim != NULL;
}

static int r_update(void *tp, uint64_t key, uint64_t val)
{
	rtable_t *t = tp;
	int hit = 0;
	pthread_rwlock_rdlock(&t->lock);
	for (rnode_t *n = t->b[bench_mix(key) & t->mask]; n; n = n->next) {
		if (n->key == key) {
			__atomic_store_n(&n->value, val, __ATOMIC_RELAXED);
			hit = 1;
			break;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	return hit;
}

static long r_buckets(void *tp)
{
	rtable_t *t = tp;
	pthread_rwlock_rdlock(&t->lock);
	long b = (long) (t->mask + 1);
	pthread_rwlock_unlock(&t->lock);
	return b;
}

static int r_resize(void *tp, size_t buckets)
{
	rtable_t *t = tp;
	pthread_rwlock_wrlock(&t->lock);
	rehash(t, bench_pow2(buckets));
	pthread_rwlock_unlock(&t->lock);
	return 0;
}

static void r_destroy(void *tp)
{
	rtable_t *t = tp;
	for (size_t i = 0; i <= t->mask; i++) {
		rnode_t *n = t->b[i];
		while (n) {
			rnode_t *next = n->next;
			free(n);
			n = next;
		}
	}
	free(t->b);
	pthread_rwlock_destroy(&t->lock);
	free(t);
}

static void nothing(void)
{
}

static void r_settle(void *t)
{
	(void) t;
}

#define RW_IMPL(var, nm, create_fn, pre) \
	const bench_impl_t var = { \
		.name = nm, .library = "pthread_rwlock chained table", \
		.layout = "node", .presized = pre, .create = create_fn, \
		.destroy = r_destroy, .thread_init = nothing, \
		.thread_fini = nothing, .lookup = r_lookup, .insert = r_insert, \
		.remove = r_remove, .update = r_update, .buckets = r_buckets, \
		.resize = r_resize, .settle = r_settle, \
		.est_bytes_per_key = 50, \
	}

RW_IMPL(impl_rwlock, "rwlock", r_create, false);
RW_IMPL(impl_rwlock_presized, "rwlock-presized", r_create_presized, true);
