/** @file cht_map.c
 * The managed map (cht_map.h): byte-string and 8-byte maps on the CHT, with
 * the library's own allocator (size classes, per-thread caches, a depot of
 * chains, wholly free slabs returned to the system by reclaim()) and
 * batched deferred frees of replaced values.
 */
#include <cht.h>
#include <cht_map.h>
#include "cht_map_int.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* --- the allocator ----------------------------------------------------------------- */

/*
 * Size classes (bytes). The ones from 64 up are multiples of 64 and carved
 * from 64-byte-aligned slabs, so an object of class 64 is one cache line.
 */
static const uint32_t cls_size[] = {
	16, 32, 48, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
	4096,
};
#define NCLS (sizeof(cls_size) / sizeof(cls_size[0]))
/** Class of a large object (malloc()). */
#define CLS_LARGE 0xff
#define SLAB_BYTES ((size_t) 64 * 1024)
/** Objects a thread keeps per class before it passes a chain to the depot. */
#define TC_MAX 256
/** Objects per chain between a thread cache and the depot. */
#define CHAIN 128

/** A free object: the first word links the chain, the second the chains. */
typedef struct fobj {
	struct fobj *next;
	struct fobj *next_chain;
} fobj_t;

/**
 * A slab's header (the slab's first 64 bytes). The links and the shape are
 * written before the slab is published under alloc_lock and then changed
 * only under alloc_lock (the links); `scratch` belongs to the reclaim (under
 * reclaim_lock).
 */
typedef struct slab {
	struct slab *next, *prev;
	/** Bytes of the slab (the header included). */
	size_t bytes;
	/** Objects the slab was carved into. */
	size_t nobj;
	/** Objects of this slab found in the depot by the running reclaim. */
	size_t scratch;
} slab_t;
_Static_assert(sizeof(slab_t) <= 64, "a slab's header is its first 64 bytes");

/**
 * Per-thread cache. Owner only, apart from the byte counters, which the
 * owner writes with relaxed atomics and cht_map_stats() reads under
 * alloc_lock (the list of caches).
 */
typedef struct tcache {
	fobj_t *head[NCLS];
	unsigned cnt[NCLS];
	/** Bytes handed out minus bytes taken back by this thread. */
	int64_t bytes;
	struct tcache *next, *prev;
} tcache_t;

/**
 * A reclaim (other than a destroy's) waits this many times its last run's
 * duration after it: at most 1/(RECLAIM_IDLE + 1) of one thread's time.
 */
#define RECLAIM_IDLE 9

/** The depot, the slab list, the caches' list and the folded counters. */
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static fobj_t *depot[NCLS];           /* chains of objects; alloc_lock */
static slab_t *slabs;                 /* doubly linked; alloc_lock */
static tcache_t *tcaches;             /* alloc_lock */
static int64_t bytes_exited;          /* counters of exited threads; alloc_lock */
static size_t reserved;               /* atomics */
/** Bytes pushed into the depot since the last reclaim started; alloc_lock. */
static size_t depot_pushed;
/** One reclaim at a time; taken before alloc_lock, never inside it. */
static pthread_mutex_t reclaim_lock = PTHREAD_MUTEX_INITIALIZER;
/** When the next background reclaim may start (CLOCK_MONOTONIC ns); reclaim_lock. */
static uint64_t reclaim_next_ns;
/** 1 while reclaim_head is posted (reclaim_soon()); atomics. */
static int reclaim_posted;
/** 1 while reclaim_work is queued (reclaim_cb()); atomics. */
static int reclaim_queued;
static cht_rcu_head_t reclaim_head;
static cht_env_work_t reclaim_work;

static __thread tcache_t *tc;
static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;

static void tc_exit(void *arg);
static void reclaim(bool force);

static void tc_key_init(void)
{
	if (pthread_key_create(&tc_key, tc_exit) != 0)
		abort();
}

static tcache_t *tc_get(void)
{
	if (likely(tc != NULL))
		return tc;
	pthread_once(&tc_once, tc_key_init);
	tcache_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_lock(&alloc_lock);
	c->next = tcaches;
	if (tcaches)
		tcaches->prev = c;
	tcaches = c;
	pthread_mutex_unlock(&alloc_lock);
	pthread_setspecific(tc_key, c);
	tc = c;
	return c;
}

/** Pushes chain @a ch of @a n objects of class @a k into the depot. alloc_lock. */
static void depot_push_locked(unsigned k, fobj_t *ch, size_t n)
{
	ch->next_chain = depot[k];
	depot[k] = ch;
	depot_pushed += n * cls_size[k];
}

static void tc_flush_self(void);

/** Worker thread: the reclaim; the next free may ask for another one. */
static void reclaim_work_fn(cht_env_work_t *w)
{
	(void) w;
	/*
	 * Release: the worker read the item's links before calling us; the
	 * thread that queues it again (acquire in reclaim_cb()) writes them
	 * after that.
	 */
	__atomic_store_n(&reclaim_queued, 0, __ATOMIC_RELEASE);
	reclaim(false);
}

/**
 * RCU reclaimer thread, after the callbacks whose frees asked for it: its
 * cache goes to the depot (cheap), then the reclaim itself goes to the
 * library's worker thread, so that it never holds up the callbacks.
 */
static void reclaim_cb(cht_rcu_head_t *h)
{
	(void) h;
	/*
	 * Cleared first (release, as in reclaim_work_fn()): a free after the
	 * flush below asks again, so none is left in this cache unasked.
	 */
	__atomic_store_n(&reclaim_posted, 0, __ATOMIC_RELEASE);
	tc_flush_self();
	if (__atomic_exchange_n(&reclaim_queued, 1, __ATOMIC_ACQUIRE))
		return;  /* queued, not started: it will see our flush */
	if (!cht_env_work_enqueue(&reclaim_work, reclaim_work_fn, false))
		__atomic_store_n(&reclaim_queued, 0, __ATOMIC_RELAXED);
}

/**
 * Asks for a reclaim: a callback on the RCU reclaimer thread, after the
 * callbacks already posted (the remove callbacks whose frees led here),
 * then a work item on the worker thread (reclaim_cb()). One request at a
 * time, so a free pays one relaxed load while one is pending.
 */
static inline void reclaim_soon(void)
{
	if (likely(__atomic_load_n(&reclaim_posted, __ATOMIC_RELAXED)))
		return;
	if (__atomic_exchange_n(&reclaim_posted, 1, __ATOMIC_ACQUIRE))
		return;
	cht_rcu_call(&reclaim_head, reclaim_cb);
}

/** Every object of the calling thread's cache goes to the depot. */
static void tc_flush_self(void)
{
	tcache_t *c = tc;
	if (!c)
		return;
	pthread_mutex_lock(&alloc_lock);
	for (unsigned k = 0; k < NCLS; k++) {
		if (c->head[k])
			depot_push_locked(k, c->head[k], c->cnt[k]);
		c->head[k] = NULL;
		c->cnt[k] = 0;
	}
	pthread_mutex_unlock(&alloc_lock);
}

/** Thread exit: the cache's objects go to the depot, its count is folded. */
static void tc_exit(void *arg)
{
	tcache_t *c = arg;
	pthread_mutex_lock(&alloc_lock);
	for (unsigned k = 0; k < NCLS; k++)
		if (c->head[k])
			depot_push_locked(k, c->head[k], c->cnt[k]);
	bytes_exited += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	if (c->prev)
		c->prev->next = c->next;
	else
		tcaches = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&alloc_lock);
	tc = NULL;
	free(c);
}

static unsigned cls_of(size_t size)
{
	for (unsigned k = 0; k < NCLS; k++)
		if (size <= cls_size[k])
			return k;
	return CLS_LARGE;
}

/** Refills class @a k of @a c: a chain from the depot, else a new slab. */
static bool tc_refill(tcache_t *c, unsigned k)
{
	pthread_mutex_lock(&alloc_lock);
	fobj_t *ch = depot[k];
	if (ch) {
		depot[k] = ch->next_chain;
		pthread_mutex_unlock(&alloc_lock);
		unsigned n = 0;
		for (fobj_t *o = ch; o; o = o->next)
			n++;
		c->head[k] = ch;
		c->cnt[k] = n;
		return true;
	}
	pthread_mutex_unlock(&alloc_lock);
	size_t sz = cls_size[k];
	size_t bytes = SLAB_BYTES > 64 * sz ? SLAB_BYTES : 64 * sz;
	char *s = aligned_alloc(64, bytes);
	if (!s)
		return false;
	__atomic_fetch_add(&reserved, bytes, __ATOMIC_RELAXED);
	/* The first 64 bytes are the slab header; objects in address order. */
	unsigned n = (unsigned) ((bytes - 64) / sz);
	slab_t *sl = (slab_t *) s;
	sl->bytes = bytes;
	sl->nobj = n;
	sl->scratch = 0;
	sl->prev = NULL;
	pthread_mutex_lock(&alloc_lock);
	sl->next = slabs;
	if (slabs)
		slabs->prev = sl;
	slabs = sl;
	pthread_mutex_unlock(&alloc_lock);
	fobj_t *head = NULL;
	for (unsigned i = n; i-- > 0;) {
		fobj_t *o = (fobj_t *) (s + 64 + (size_t) i * sz);
		o->next = head;
		head = o;
	}
	c->head[k] = head;
	c->cnt[k] = n;
	return true;
}

/**
 * An object of at least @a size bytes; its class into *@a cls (CLS_LARGE:
 * from malloc). NULL when out of memory.
 */
static void *ma_alloc(size_t size, uint8_t *cls)
{
	tcache_t *c = tc_get();
	unsigned k = cls_of(size);
	if (k == CLS_LARGE || !c) {
		void *p = aligned_alloc(64, (size + 63) & ~(size_t) 63);
		if (!p)
			return NULL;
		*cls = CLS_LARGE;
		__atomic_fetch_add(&reserved, size, __ATOMIC_RELAXED);
		return p;
	}
	if (unlikely(!c->head[k]) && !tc_refill(c, k))
		return NULL;
	fobj_t *o = c->head[k];
	c->head[k] = o->next;
	c->cnt[k]--;
	__atomic_store_n(&c->bytes, c->bytes + (int64_t) cls_size[k],
	    __ATOMIC_RELAXED);
	*cls = (uint8_t) k;
	return o;
}

/** Frees object @a p of class @a cls (@a size: its requested size). */
static void ma_free(void *p, uint8_t cls, size_t size)
{
	if (cls == CLS_LARGE) {
		__atomic_fetch_sub(&reserved, size, __ATOMIC_RELAXED);
		free(p);
		return;
	}
	tcache_t *c = tc_get();
	reclaim_soon();
	if (!c) {
		/* No cache for this thread: straight into the depot. */
		fobj_t *o = p;
		o->next = NULL;
		pthread_mutex_lock(&alloc_lock);
		depot_push_locked(cls, o, 1);
		bytes_exited -= cls_size[cls];
		pthread_mutex_unlock(&alloc_lock);
		return;
	}
	fobj_t *o = p;
	o->next = c->head[cls];
	c->head[cls] = o;
	__atomic_store_n(&c->bytes, c->bytes - (int64_t) cls_size[cls],
	    __ATOMIC_RELAXED);
	if (++c->cnt[cls] >= TC_MAX) {
		/* Pass a chain of CHAIN objects to the depot. */
		fobj_t *ch = c->head[cls], *last = ch;
		for (unsigned i = 1; i < CHAIN; i++)
			last = last->next;
		c->head[cls] = last->next;
		c->cnt[cls] -= CHAIN;
		last->next = NULL;
		pthread_mutex_lock(&alloc_lock);
		depot_push_locked(cls, ch, CHAIN);
		pthread_mutex_unlock(&alloc_lock);
	}
}

static int slab_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) *(slab_t *const *) a;
	uintptr_t y = (uintptr_t) *(slab_t *const *) b;
	return x < y ? -1 : x > y;
}

/** The slab of @a sv[0..n) (sorted) that holds @a p, or NULL. */
static slab_t *slab_of(slab_t **sv, size_t n, const void *p)
{
	size_t lo = 0, hi = n;  /* the first slab above p is in [lo, hi] */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t) sv[mid] <= (uintptr_t) p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	slab_t *s = sv[lo - 1];
	return (uintptr_t) p < (uintptr_t) s + s->bytes ? s : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/**
 * Returns to the system every slab whose objects are all in the depot.
 *
 * The calling thread's cache goes to the depot first (no other thread's
 * cache is touched: it is its owner's alone; its objects keep their slabs
 * until the owner passes them on or exits). Under alloc_lock the depot's
 * chains are taken whole and the slab list is read; then, outside the lock,
 * the slabs are sorted by address, every free object is counted into its
 * slab's header, and the chains are rebuilt without the objects of the
 * slabs whose count is their object count (all free: no object of such a
 * slab is in use or in a cache, as the depot holds each free object once);
 * under alloc_lock again the rebuilt chains go back into the depot and the
 * free slabs leave the list, and they are freed. Meanwhile frees push into
 * the (now short) depot and a refill that finds it empty carves a slab.
 *
 * Cost: O((D + S) log S) for D free objects and S slabs, without the lock,
 * never on the caller of an alloc or a free: @a force runs it from
 * cht_map_*_destroy(); otherwise the worker thread runs it, asked for by a
 * free (reclaim_soon(), reclaim_cb()), and it starts only when
 * RECLAIM_IDLE times its last duration has passed since the last one ended
 * (else it asks again: about one request per RCU batch until then) and something
 * was pushed into the depot since.
 */
static void reclaim(bool force)
{
	if (force) {
		pthread_mutex_lock(&reclaim_lock);
	} else if (pthread_mutex_trylock(&reclaim_lock) != 0) {
		reclaim_soon();  /* the running one may have missed our frees */
		return;
	}
	uint64_t t0 = now_ns();
	if (!force && t0 < reclaim_next_ns) {
		pthread_mutex_unlock(&reclaim_lock);
		reclaim_soon();
		return;
	}
	tc_flush_self();
	pthread_mutex_lock(&alloc_lock);
	if (!force && depot_pushed == 0) {
		pthread_mutex_unlock(&alloc_lock);
		pthread_mutex_unlock(&reclaim_lock);
		return;
	}
	fobj_t *dk[NCLS];
	for (unsigned k = 0; k < NCLS; k++) {
		dk[k] = depot[k];
		depot[k] = NULL;
	}
	depot_pushed = 0;
	slab_t *first = slabs;
	pthread_mutex_unlock(&alloc_lock);
	/*
	 * The slabs from `first` on: only a reclaim unlinks a slab (we hold
	 * reclaim_lock) and a new slab only writes the prev of the head, so
	 * their next links are stable without alloc_lock.
	 */
	size_t ns = 0;
	for (slab_t *s = first; s; s = s->next)
		ns++;
	slab_t **sv = ns ? malloc(ns * sizeof(*sv)) : NULL;
	slab_t *dead = NULL;  /* the slabs to free, linked through next */
	fobj_t *kh[NCLS], *kt[NCLS];  /* the rebuilt chains, head and tail */
	if (sv) {
		size_t i = 0;
		for (slab_t *s = first; s; s = s->next) {
			s->scratch = 0;
			sv[i++] = s;
		}
		qsort(sv, ns, sizeof(*sv), slab_cmp);
		for (unsigned k = 0; k < NCLS; k++)
			for (fobj_t *ch = dk[k]; ch; ch = ch->next_chain)
				for (fobj_t *o = ch; o; o = o->next) {
					slab_t *s = slab_of(sv, ns, o);
					if (s)
						s->scratch++;
				}
	}
	for (unsigned k = 0; k < NCLS; k++) {
		kh[k] = kt[k] = NULL;
		fobj_t *cur = NULL, *cur_tail = NULL;
		unsigned n = 0;
		for (fobj_t *ch = dk[k], *nch; ch; ch = nch) {
			nch = ch->next_chain;
			for (fobj_t *o = ch, *no; o; o = no) {
				no = o->next;
				slab_t *s = sv ? slab_of(sv, ns, o) : NULL;
				if (s && s->scratch == s->nobj)
					continue;  /* its slab goes */
				o->next = NULL;
				if (cur_tail)
					cur_tail->next = o;
				else
					cur = o;
				cur_tail = o;
				if (++n == CHAIN) {
					cur->next_chain = NULL;
					if (kt[k])
						kt[k]->next_chain = cur;
					else
						kh[k] = cur;
					kt[k] = cur;
					cur = cur_tail = NULL;
					n = 0;
				}
			}
		}
		if (cur) {  /* the last, short chain */
			cur->next_chain = NULL;
			if (kt[k])
				kt[k]->next_chain = cur;
			else
				kh[k] = cur;
			kt[k] = cur;
		}
	}
	pthread_mutex_lock(&alloc_lock);
	for (unsigned k = 0; k < NCLS; k++) {
		if (kh[k]) {
			kt[k]->next_chain = depot[k];
			depot[k] = kh[k];
		}
	}
	for (size_t i = 0; i < ns && sv; i++) {
		slab_t *s = sv[i];
		if (s->scratch != s->nobj)
			continue;
		if (s->prev)
			s->prev->next = s->next;
		else
			slabs = s->next;
		if (s->next)
			s->next->prev = s->prev;
		s->next = dead;
		dead = s;
	}
	pthread_mutex_unlock(&alloc_lock);
	free(sv);
	/*
	 * Freed before reclaim_lock goes: a destroy's reclaim, which waits for
	 * a running one, then finds reserved final.
	 */
	while (dead) {
		slab_t *s = dead;
		dead = s->next;
		__atomic_fetch_sub(&reserved, s->bytes, __ATOMIC_RELAXED);
		free(s);
	}
	uint64_t t1 = now_ns();
	reclaim_next_ns = t1 + RECLAIM_IDLE * (t1 - t0);
	pthread_mutex_unlock(&reclaim_lock);
}

/** Bytes handed out by the allocator (every map of the process). */
static size_t ma_in_use(void)
{
	pthread_mutex_lock(&alloc_lock);
	int64_t b = bytes_exited;
	for (tcache_t *c = tcaches; c; c = c->next)
		b += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&alloc_lock);
	return b > 0 ? (size_t) b : 0;
}

/* --- deferred frees of replaced values, in batches ---------------------------------- */

typedef struct retire_batch {
	cht_rcu_head_t rcu;
	unsigned n;
	struct {
		void *p;
		uint8_t cls;
		size_t size;
	} o[CHT_MAP_RETIRE_BATCH];
} retire_batch_t;

static __thread retire_batch_t *rb;
static pthread_key_t rb_key;
static pthread_once_t rb_once = PTHREAD_ONCE_INIT;

static void rb_free_cb(cht_rcu_head_t *h)
{
	retire_batch_t *b = (retire_batch_t *) h;
	for (unsigned i = 0; i < b->n; i++)
		ma_free(b->o[i].p, b->o[i].cls, b->o[i].size);
	free(b);
}

/*
 * The thread's open batch is both in rb and in rb_key's value (for the
 * exit destructor); the two are kept equal: a flushed batch belongs to the
 * RCU (its callback frees it), so the key must not point to it any longer.
 */
static void rb_flush(void)
{
	if (rb && rb->n) {
		retire_batch_t *b = rb;
		rb = NULL;
		pthread_setspecific(rb_key, NULL);
		cht_rcu_call(&b->rcu, rb_free_cb);
	}
}

/** Thread exit: the open batch (@a arg, == rb) is flushed or freed. */
static void rb_exit(void *arg)
{
	retire_batch_t *b = arg;
	rb = NULL;
	if (b->n)
		cht_rcu_call(&b->rcu, rb_free_cb);
	else
		free(b);
}

static void rb_key_init(void)
{
	if (pthread_key_create(&rb_key, rb_exit) != 0)
		abort();
}

/**
 * Frees @a p after a grace period: into this thread's batch, which one
 * cht_rcu_call() frees when full. Falls back to a grace period of its own
 * (cht_rcu_synchronize() is not allowed in a section: then leaks nothing but
 * waits for the batch) when no batch can be allocated.
 */
static void retire(void *p, uint8_t cls, size_t size)
{
	if (!rb) {
		pthread_once(&rb_once, rb_key_init);
		rb = malloc(sizeof(*rb));
		if (!rb)
			abort();  /* 1.6 KiB; see cht_map.h (no error path here) */
		rb->n = 0;
		pthread_setspecific(rb_key, rb);
	}
	rb->o[rb->n].p = p;
	rb->o[rb->n].cls = cls;
	rb->o[rb->n].size = size;
	if (++rb->n == CHT_MAP_RETIRE_BATCH)
		rb_flush();
}

/* --- common --------------------------------------------------------------------- */

/**
 * The maps' grow limit: 1/CHT_MAP_LOAD_DEN items per bucket on average (the
 * table shrinks below a quarter of it). See create_table().
 */
#ifndef CHT_MAP_LOAD_DEN
#define CHT_MAP_LOAD_DEN 2
#endif

/**
 * Creates the table of a map: sized for @a expect_keys at the map's load
 * (never shrinking below that), growing above 1/CHT_MAP_LOAD_DEN items per
 * bucket. A lower load than libcht's default of 1 shortens the walk of a
 * lookup: at load L a hit reads about 1 + L/2 items of its bucket and a miss
 * finds its bucket empty with probability about e^-L, at 16 bytes of bucket
 * array per bucket (bench/userspace/README.md, "Cache misses").
 */
static int create_table(cht_t *h, const char *name, size_t expect_keys,
    const cht_ops_t *ops)
{
	size_t b = 1;
	while (b < expect_keys * CHT_MAP_LOAD_DEN && b < ((size_t) 1 << 40))
		b <<= 1;
	int rc = cht_create_named(h, name, b, b, 0, ops);
	if (rc != CHT_OK)
		return rc;
	if (CHT_MAP_LOAD_DEN > 1 &&
	    cht_set_max_load_frac(h, 1, CHT_MAP_LOAD_DEN) != CHT_OK)
		abort();
	return CHT_OK;
}

static inline int ensure_reg(void)
{
	if (likely(cht_rcu_registered()))
		return CHT_OK;
	return cht_rcu_register_thread();
}

int cht_map_read_lock(void)
{
	int rc = ensure_reg();
	if (rc != CHT_OK)
		return rc;
	return cht_rcu_read_lock();
}

void cht_map_read_unlock(void)
{
	cht_rcu_read_unlock();
}

static void fill_stats(cht_t *h, cht_map_stats_t *st, size_t item_bytes)
{
	cht_stats_t cs;
	cht_rcu_read_lock();
	cht_get_stats(h, &cs);
	cht_rcu_read_unlock();
	st->items = cs.items;
	st->buckets = cs.buckets;
	st->bucket_bytes = sizeof(cht_buckets_t) + cs.buckets * sizeof(cht_node_t);
	st->item_bytes = item_bytes;
	st->reserved_bytes = __atomic_load_n(&reserved, __ATOMIC_RELAXED);
	st->bytes_per_key = cs.items ? (double) (st->bucket_bytes + item_bytes) /
	    (double) cs.items : 0.0;
	st->resizing = cs.resizing ||
	    __atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0;
}

/** RCU callback: the reclaimer thread's cache goes to the depot. */
static void tc_flush_cb(cht_rcu_head_t *h)
{
	(void) h;
	tc_flush_self();
}

/**
 * Removes every item of @a h (no concurrent users), destroys it and returns
 * the wholly free slabs to the system (reclaim()).
 */
static int destroy_table(cht_t *h)
{
	if (cht_rcu_read_locked())
		return CHT_EDEADLK;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	cht_rcu_read_lock();
	uintptr_t nx = __atomic_load_n(&h->head.next, __ATOMIC_ACQUIRE);
	for (;;) {
		cht_node_t *n = (cht_node_t *) (nx & ~CHT_LINK_MARKS);
		if (!n)
			break;
		nx = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
		if ((n->hash & 1) && !(nx & CHT_LINK_DELETED))
			cht_remove_item(h, cht_link_of(n));
	}
	cht_rcu_read_unlock();
	rb_flush();
	while (__atomic_load_n(&h->resize_reqs, __ATOMIC_ACQUIRE) != 0)
		cht_env_sleep_ms(1);
	cht_rcu_barrier();
	/*
	 * The remove callbacks ran on the RCU reclaimer thread: its cache
	 * passes its objects to the depot (a callback of our own, run after
	 * theirs), then the slabs that are wholly free go back to the system.
	 */
	cht_rcu_head_t flush;
	cht_rcu_call(&flush, tc_flush_cb);
	cht_rcu_barrier();
	int rc = cht_destroy(h) == CHT_OK ? CHT_OK : CHT_EBUSY;
	reclaim(true);
	return rc;
}

/*
 * Hash of a byte string: 8 bytes at a time, each word xored in and
 * multiplied by an odd constant (the multiplicative step of cht_mix_hash(),
 * Knuth's hashing by multiplication), the length folded in first; the table
 * mixes the result again (cht_item_hash()), so this only has to be
 * injective-ish per word, not well spread.
 */
static uint64_t bytes_hash(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t) len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		len -= 8;
	}
	if (len) {
		uint64_t w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

/* --- byte-string map ---------------------------------------------------------------- */

/** A value block (immutable once published). */
typedef struct bval {
	uint32_t len;
	uint8_t cls;
	unsigned char data[];
} bval_t;

/** An item: the link, then what the lookup reads next (length, hash, key). */
typedef struct bitem {
	cht_link_t link;
	uint32_t klen;
	uint8_t cls;
	/** The current value; swapped by CAS (release), read with acquire. */
	bval_t *val;
	unsigned char key[];
} bitem_t;

struct cht_map {
	cht_t h;
};

typedef struct {
	const void *p;
	size_t len;
	uint64_t hash;
} bkey_t;

static size_t bm_hash(const cht_link_t *l)
{
	const bitem_t *it = cht_item_of(l, bitem_t, link);
	return bytes_hash(it->key, it->klen);
}

static size_t bm_key_hash(void *k)
{
	return ((bkey_t *) k)->hash;
}

static bool bm_equal(const cht_link_t *a, const cht_link_t *b)
{
	const bitem_t *x = cht_item_of(a, bitem_t, link);
	const bitem_t *y = cht_item_of(b, bitem_t, link);
	return x->klen == y->klen &&
	    (x->klen == 0 || memcmp(x->key, y->key, x->klen) == 0);
}

static bool bm_key_equal(void *k, const cht_link_t *l)
{
	const bkey_t *key = k;
	const bitem_t *it = cht_item_of(l, bitem_t, link);
	return it->klen == key->len &&
	    (key->len == 0 || memcmp(it->key, key->p, key->len) == 0);
}

static void bval_free(bval_t *v)
{
	ma_free(v, v->cls, sizeof(bval_t) + v->len);
}

static void bm_remove_cb(cht_link_t *l)
{
	bitem_t *it = cht_item_of(l, bitem_t, link);
	bval_free(__atomic_load_n(&it->val, __ATOMIC_ACQUIRE));
	ma_free(it, it->cls, sizeof(bitem_t) + it->klen);
}

static const cht_ops_t bm_ops = {
	.hash = bm_hash, .key_hash = bm_key_hash, .equal = bm_equal,
	.key_equal = bm_key_equal, .remove_callback = bm_remove_cb,
};

static bval_t *bval_new(const void *a, size_t alen, const void *b, size_t blen)
{
	uint8_t cls;
	bval_t *v = ma_alloc(sizeof(bval_t) + alen + blen, &cls);
	if (!v)
		return NULL;
	v->len = (uint32_t) (alen + blen);
	v->cls = cls;
	if (alen)
		memcpy(v->data, a, alen);
	if (blen)
		memcpy(v->data + alen, b, blen);
	return v;
}

static bitem_t *bitem_new(const void *key, size_t klen, bval_t *v)
{
	uint8_t cls;
	bitem_t *it = ma_alloc(sizeof(bitem_t) + klen, &cls);
	if (!it)
		return NULL;
	it->klen = (uint32_t) klen;
	it->cls = cls;
	it->val = v;
	if (klen)
		memcpy(it->key, key, klen);
	return it;
}

int cht_map_create(cht_map_t **out, size_t expect_keys)
{
	if (!out)
		return CHT_EINVAL;
	*out = NULL;
	cht_map_t *m = calloc(1, sizeof(*m));
	if (!m)
		return CHT_ENOMEM;
	int rc = create_table(&m->h, "cht_map", expect_keys, &bm_ops);
	if (rc != CHT_OK) {
		free(m);
		return rc;
	}
	*out = m;
	return CHT_OK;
}

int cht_map_destroy(cht_map_t *m)
{
	if (!m)
		return CHT_EINVAL;
	int rc = destroy_table(&m->h);
	if (rc == CHT_OK)
		free(m);
	return rc;
}

#define CHECK_ARGS(m, key, klen) do { \
		if (!(m) || ((klen) && !(key)) || (klen) > CHT_MAP_KEY_MAX) \
			return CHT_EINVAL; \
		int rc_ = ensure_reg(); \
		if (rc_ != CHT_OK) \
			return rc_; \
	} while (0)

static inline bitem_t *bm_find(cht_map_t *m, bkey_t *k)
{
	cht_link_t *l = cht_find_fast(&m->h, k, &bm_ops);
	return l ? cht_item_of(l, bitem_t, link) : NULL;
}

/**
 * Swaps in a value built from the current one by @a build until the CAS
 * succeeds; the replaced block is retired. Inside the caller's section.
 * @a build returns NULL for out of memory, or (bval_t *) 1 to give up with
 * CHT_ESTALE.
 */
typedef bval_t *(*build_fn)(const bval_t *cur, void *arg);

static int bm_swap(bitem_t *it, build_fn build, void *arg)
{
	bval_t *cur = __atomic_load_n(&it->val, __ATOMIC_ACQUIRE);
	for (;;) {
		bval_t *nv = build(cur, arg);
		if (!nv)
			return CHT_ENOMEM;
		if (nv == (bval_t *) 1)
			return CHT_ESTALE;
		/* release: the new block's bytes before its pointer */
		if (__atomic_compare_exchange_n(&it->val, &cur, nv, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			retire(cur, cur->cls, sizeof(bval_t) + cur->len);
			return CHT_OK;
		}
		bval_free(nv);  /* never published */
	}
}

typedef struct {
	const void *p;
	size_t len;
	const void *exp;
	size_t elen;
} swap_arg_t;

static bval_t *build_put(const bval_t *cur, void *arg)
{
	(void) cur;
	swap_arg_t *a = arg;
	return bval_new(a->p, a->len, NULL, 0);
}

static bval_t *build_cas(const bval_t *cur, void *arg)
{
	swap_arg_t *a = arg;
	if (cur->len != a->elen ||
	    (a->elen && memcmp(cur->data, a->exp, a->elen) != 0))
		return (bval_t *) 1;
	return bval_new(a->p, a->len, NULL, 0);
}

static bval_t *build_append(const bval_t *cur, void *arg)
{
	swap_arg_t *a = arg;
	if ((size_t) cur->len + a->len > CHT_MAP_VAL_MAX)
		return (bval_t *) 1;
	return bval_new(cur->data, cur->len, a->p, a->len);
}

/**
 * Inserts a new item for @a key with the value built by @a build from an
 * empty value, or applies @a build to the present item's value.
 * @a insert_only: CHT_EEXIST when present.
 */
static int bm_upsert(cht_map_t *m, const void *key, size_t klen,
    build_fn build, swap_arg_t *a, bool insert_only)
{
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	static const bval_t empty = { 0, 0 };
	cht_rcu_read_lock();
	bitem_t *it = bm_find(m, &k);
	for (;;) {
		if (it) {
			int rc = insert_only ? CHT_EEXIST : bm_swap(it, build, a);
			cht_rcu_read_unlock();
			return rc;
		}
		bval_t *v = build(&empty, a);
		if (!v || v == (bval_t *) 1) {
			cht_rcu_read_unlock();
			return v ? CHT_EINVAL : CHT_ENOMEM;
		}
		bitem_t *n = bitem_new(key, klen, v);
		if (!n) {
			bval_free(v);
			cht_rcu_read_unlock();
			return CHT_ENOMEM;
		}
		cht_link_t *dup = NULL;
		if (cht_insert_unique_fast(&m->h, &n->link, &dup, &bm_ops)) {
			cht_rcu_read_unlock();
			return CHT_OK;
		}
		/* Lost a race with an insert of the same key: never published. */
		bval_free(v);
		ma_free(n, n->cls, sizeof(bitem_t) + klen);
		it = cht_item_of(dup, bitem_t, link);
	}
}

int cht_map_put(cht_map_t *m, const void *key, size_t klen, const void *val,
    size_t vlen)
{
	CHECK_ARGS(m, key, klen);
	if (vlen > CHT_MAP_VAL_MAX || (vlen && !val))
		return CHT_EINVAL;
	swap_arg_t a = { val, vlen, NULL, 0 };
	return bm_upsert(m, key, klen, build_put, &a, false);
}

int cht_map_insert(cht_map_t *m, const void *key, size_t klen,
    const void *val, size_t vlen)
{
	CHECK_ARGS(m, key, klen);
	if (vlen > CHT_MAP_VAL_MAX || (vlen && !val))
		return CHT_EINVAL;
	swap_arg_t a = { val, vlen, NULL, 0 };
	return bm_upsert(m, key, klen, build_put, &a, true);
}

int cht_map_append(cht_map_t *m, const void *key, size_t klen,
    const void *data, size_t dlen)
{
	CHECK_ARGS(m, key, klen);
	if (dlen > CHT_MAP_VAL_MAX || (dlen && !data))
		return CHT_EINVAL;
	swap_arg_t a = { data, dlen, NULL, 0 };
	int rc = bm_upsert(m, key, klen, build_append, &a, false);
	return rc == CHT_ESTALE ? CHT_EINVAL : rc;
}

int cht_map_cas(cht_map_t *m, const void *key, size_t klen,
    const void *expect, size_t elen, const void *val, size_t vlen)
{
	CHECK_ARGS(m, key, klen);
	if (vlen > CHT_MAP_VAL_MAX || (vlen && !val) || (elen && !expect))
		return CHT_EINVAL;
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	swap_arg_t a = { val, vlen, expect, elen };
	cht_rcu_read_lock();
	bitem_t *it = bm_find(m, &k);
	int rc = it ? bm_swap(it, build_cas, &a) : CHT_ENOENT;
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_get(cht_map_t *m, const void *key, size_t klen, void *buf,
    size_t cap, size_t *vlen)
{
	CHECK_ARGS(m, key, klen);
	if (cap && !buf)
		return CHT_EINVAL;
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	cht_rcu_read_lock();
	bitem_t *it = bm_find(m, &k);
	int rc = CHT_ENOENT;
	if (it) {
		const bval_t *v = __atomic_load_n(&it->val, __ATOMIC_ACQUIRE);
		size_t n = v->len < cap ? v->len : cap;
		if (n)
			memcpy(buf, v->data, n);
		if (vlen)
			*vlen = v->len;
		rc = v->len <= cap ? CHT_OK : CHT_ERANGE;
	}
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_get_ref(cht_map_t *m, const void *key, size_t klen,
    const void **val, size_t *vlen)
{
	if (!m || ((klen) && !(key)) || klen > CHT_MAP_KEY_MAX || !val)
		return CHT_EINVAL;
	if (!cht_rcu_read_locked())
		return CHT_ENOSECT;
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	bitem_t *it = bm_find(m, &k);
	if (!it)
		return CHT_ENOENT;
	const bval_t *v = __atomic_load_n(&it->val, __ATOMIC_ACQUIRE);
	*val = v->data;
	if (vlen)
		*vlen = v->len;
	return CHT_OK;
}

int cht_map_delete(cht_map_t *m, const void *key, size_t klen)
{
	CHECK_ARGS(m, key, klen);
	bkey_t k = { key, klen, bytes_hash(key, klen) };
	cht_rcu_read_lock();
	size_t n = cht_remove_key_fast(&m->h, &k, &bm_ops);
	cht_rcu_read_unlock();
	return n ? CHT_OK : CHT_ENOENT;
}

int cht_map_stats(cht_map_t *m, cht_map_stats_t *st)
{
	if (!m || !st)
		return CHT_EINVAL;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	fill_stats(&m->h, st, 0);
	st->item_bytes = ma_in_use();
	if (st->items)
		st->bytes_per_key = (double) (st->bucket_bytes + st->item_bytes) /
		    (double) st->items;
	return CHT_OK;
}

/* --- 8-byte map ----------------------------------------------------------------------- */

/**
 * One cache line: the link's node (next, hash) at bytes 24-39, the key at
 * 40, the value at 48. From class 64, 64-byte aligned: a lookup that
 * reaches the node has the key and the value in the same line.
 */
typedef struct uitem {
	cht_link_t link;
	uint64_t key;
	/** Atomics (relaxed: nothing else is published through it). */
	uint64_t value;
} uitem_t;
_Static_assert(sizeof(uitem_t) <= 64, "an 8-byte item is one cache line");

struct cht_map_u64 {
	/** The inline backend (cht_imap.c), or NULL: the chained one below. */
	cht_imap_t *im;
	cht_t h;
};

CHT_DEFINE_U64_KEY(um, uitem_t, link, key, cht_u64_identity)

/** The class of every uitem_t (64 bytes; checked by cht_map_u64_create()). */
#define UM_CLS 3

static void um_remove_cb(cht_link_t *l)
{
	ma_free(cht_item_of(l, uitem_t, link), UM_CLS, sizeof(uitem_t));
}

static const cht_ops_t um_ops = {
	CHT_U64_KEY_OPS(um), .remove_callback = um_remove_cb,
};

int cht_map_u64_create(cht_map_u64_t **out, size_t expect_keys)
{
	return cht_map_u64_create_opts(out, expect_keys, CHT_MAP_U64_INLINE);
}

int cht_map_u64_create_opts(cht_map_u64_t **out, size_t expect_keys,
    unsigned flags)
{
	if (!out || (flags & ~(unsigned) CHT_MAP_U64_CHAINED))
		return CHT_EINVAL;
	*out = NULL;
	if (cls_of(sizeof(uitem_t)) != UM_CLS || cls_size[UM_CLS] != 64)
		abort();  /* the class table changed: fix UM_CLS */
	cht_map_u64_t *m = calloc(1, sizeof(*m));
	if (!m)
		return CHT_ENOMEM;
	if (!(flags & CHT_MAP_U64_CHAINED)) {
		int rc = cht__im_create(&m->im, expect_keys);
		if (rc != CHT_OK) {
			free(m);
			return rc;
		}
		*out = m;
		return CHT_OK;
	}
	int rc = create_table(&m->h, "cht_map_u64", expect_keys, &um_ops);
	if (rc != CHT_OK) {
		free(m);
		return rc;
	}
	*out = m;
	return CHT_OK;
}

int cht_map_u64_destroy(cht_map_u64_t *m)
{
	if (!m)
		return CHT_EINVAL;
	if (m->im) {
		if (cht_rcu_read_locked())
			return CHT_EDEADLK;
		if (ensure_reg() != CHT_OK)
			return CHT_EPERM;
		cht__im_destroy(m->im);
		free(m);
		return CHT_OK;
	}
	int rc = destroy_table(&m->h);
	if (rc == CHT_OK)
		free(m);
	return rc;
}

#define CHECK_U(m) do { \
		if (!(m)) \
			return CHT_EINVAL; \
		int rc_ = ensure_reg(); \
		if (rc_ != CHT_OK) \
			return rc_; \
	} while (0)

static inline uitem_t *um_find(cht_map_u64_t *m, uint64_t *key)
{
	cht_link_t *l = cht_find_fast(&m->h, key, &um_ops);
	return l ? cht_item_of(l, uitem_t, link) : NULL;
}

int cht_map_u64_get(cht_map_u64_t *m, uint64_t key, uint64_t *val)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_get(m->im, key, val);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	if (it && val)
		*val = __atomic_load_n(&it->value, __ATOMIC_RELAXED);
	cht_rcu_read_unlock();
	return it ? CHT_OK : CHT_ENOENT;
}

/** Inserts key -> val, or returns the present item (in the caller's section). */
static int um_insert(cht_map_u64_t *m, uint64_t key, uint64_t val,
    uitem_t **present)
{
	uint8_t cls;
	uitem_t *n = ma_alloc(sizeof(uitem_t), &cls);
	if (!n)
		return CHT_ENOMEM;
	n->key = key;
	n->value = val;
	cht_link_t *dup = NULL;
	if (cht_insert_unique_fast(&m->h, &n->link, &dup, &um_ops))
		return CHT_OK;
	ma_free(n, cls, sizeof(uitem_t));  /* never published */
	*present = cht_item_of(dup, uitem_t, link);
	return CHT_EEXIST;
}

int cht_map_u64_insert(cht_map_u64_t *m, uint64_t key, uint64_t val)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_upsert(m->im, key, val, CHT__IM_INSERT, NULL);
	uitem_t *it;
	cht_rcu_read_lock();
	int rc = um_insert(m, key, val, &it);
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_u64_put(cht_map_u64_t *m, uint64_t key, uint64_t val)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_upsert(m->im, key, val, CHT__IM_PUT, NULL);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	int rc = CHT_OK;
	if (!it)
		rc = um_insert(m, key, val, &it);
	if (rc == CHT_EEXIST || (it && rc == CHT_OK)) {
		__atomic_store_n(&it->value, val, __ATOMIC_RELAXED);
		rc = CHT_OK;
	}
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_u64_delete(cht_map_u64_t *m, uint64_t key)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_delete(m->im, key);
	cht_rcu_read_lock();
	size_t n = cht_remove_key_fast(&m->h, &key, &um_ops);
	cht_rcu_read_unlock();
	return n ? CHT_OK : CHT_ENOENT;
}

int cht_map_u64_cas(cht_map_u64_t *m, uint64_t key, uint64_t *expect,
    uint64_t val)
{
	CHECK_U(m);
	if (!expect)
		return CHT_EINVAL;
	if (m->im)
		return cht__im_cas(m->im, key, expect, val);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	int rc = CHT_ENOENT;
	if (it)
		rc = __atomic_compare_exchange_n(&it->value, expect, val, false,
		    __ATOMIC_RELAXED, __ATOMIC_RELAXED) ? CHT_OK : CHT_ESTALE;
	cht_rcu_read_unlock();
	return rc;
}

int cht_map_u64_add(cht_map_u64_t *m, uint64_t key, uint64_t delta,
    uint64_t *out)
{
	CHECK_U(m);
	if (m->im)
		return cht__im_upsert(m->im, key, delta, CHT__IM_ADD, out);
	cht_rcu_read_lock();
	uitem_t *it = um_find(m, &key);
	int rc = CHT_OK;
	uint64_t after = delta;
	if (!it)
		rc = um_insert(m, key, delta, &it);
	if (rc == CHT_EEXIST || (rc == CHT_OK && it)) {
		/*
		 * GCC 12.2 -O2 compiled both __atomic_add_fetch(p, delta) and
		 * __atomic_fetch_add(p, delta) + delta here into lock xadd
		 * followed by doubling the old value (test_map caught it: 3 +
		 * 4 returned 6); the empty asm makes the old value opaque, so
		 * that delta is added to it as written.
		 */
		uint64_t old = __atomic_fetch_add(&it->value, delta,
		    __ATOMIC_RELAXED);
		__asm__("" : "+r"(old));
		after = old + delta;
		rc = CHT_OK;
	}
	cht_rcu_read_unlock();
	if (rc == CHT_OK && out)
		*out = after;
	return rc;
}

/** Keys whose bucket entries are prefetched ahead of the walk. */
#define GET_MANY_AHEAD 8

long cht_map_u64_get_many(cht_map_u64_t *m, const uint64_t *keys, size_t n,
    uint64_t *vals, unsigned char *found)
{
	CHECK_U(m);
	if (n && (!keys || !vals))
		return CHT_EINVAL;
	if (m->im)
		return cht__im_get_many(m->im, keys, n, vals, found);
	long hits = 0;
	cht_rcu_read_lock();
	cht_buckets_t *b = cht_env_rcu_access(m->h.b);
	/*
	 * A pipeline of three stages (DRAMHiT, EuroSys'23, section 4): 2A keys
	 * ahead, prefetch the key's bucket entry; A keys ahead, read the entry
	 * (in the cache by then) and prefetch the first node it points to; at
	 * the key itself, walk with cht_find_fast() (the entry and the node
	 * now cached). The prefetches are hints: a resize that replaces the
	 * array meanwhile, or an insert ahead of the node, costs a miss, never
	 * a wrong result (the walk is the ordinary one).
	 */
	const size_t a = GET_MANY_AHEAD;
	for (size_t i = 0; i < n && i < 2 * a; i++)
		__builtin_prefetch(&b->d[cht_item_hash(keys[i]) >> b->shift], 0, 0);
	for (size_t i = 0; i < n; i++) {
		if (i + 2 * a < n)
			__builtin_prefetch(&b->d[cht_item_hash(keys[i + 2 * a]) >>
			    b->shift], 0, 0);
		if (i + a < n) {
			uintptr_t nx = __atomic_load_n(&b->d[cht_item_hash(
			    keys[i + a]) >> b->shift].next, __ATOMIC_RELAXED);
			__builtin_prefetch((void *) (nx & ~CHT_LINK_MARKS), 0, 0);
		}
		uint64_t k = keys[i];
		uitem_t *it = um_find(m, &k);
		if (it) {
			vals[i] = __atomic_load_n(&it->value, __ATOMIC_RELAXED);
			hits++;
		}
		if (found)
			found[i] = it != NULL;
	}
	cht_rcu_read_unlock();
	return hits;
}

int cht_map_u64_stats(cht_map_u64_t *m, cht_map_stats_t *st)
{
	if (!m || !st)
		return CHT_EINVAL;
	if (ensure_reg() != CHT_OK)
		return CHT_EPERM;
	if (m->im) {
		cht__im_stats(m->im, &st->items, &st->buckets,
		    &st->bucket_bytes, &st->item_bytes, &st->resizing);
		st->reserved_bytes = cht__ma_reserved();
		st->bytes_per_key = st->items ? (double) (st->bucket_bytes +
		    st->item_bytes) / (double) st->items : 0.0;
		return CHT_OK;
	}
	cht_stats_t cs;
	cht_rcu_read_lock();
	cht_get_stats(&m->h, &cs);
	cht_rcu_read_unlock();
	fill_stats(&m->h, st, cs.items * 64);
	return CHT_OK;
}

/* --- the allocator for the inline backend (cht_map_int.h) -------------------------- */

void *cht__ma_alloc64(void)
{
	uint8_t cls;
	void *p = ma_alloc(64, &cls);
	if (p && cls != UM_CLS) {
		/* No thread cache (out of memory): not a class-64 object. */
		ma_free(p, cls, 64);
		return NULL;
	}
	return p;
}

void cht__ma_free64(void *p)
{
	ma_free(p, UM_CLS, 64);
}

void cht__ma_retire64(void *p)
{
	retire(p, UM_CLS, 64);
}

void cht__ma_settle(void)
{
	rb_flush();
	cht_rcu_barrier();
	cht_rcu_head_t flush;
	cht_rcu_call(&flush, tc_flush_cb);
	cht_rcu_barrier();
	reclaim(true);
}

size_t cht__ma_reserved(void)
{
	return __atomic_load_n(&reserved, __ATOMIC_RELAXED);
}

int cht__ma_ensure_reg(void)
{
	return ensure_reg();
}
